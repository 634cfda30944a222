/*
 * Scale-down of static NodePools (Karpenter's static deprovisioning): when a
 * NodePool has more NodeClaims than spec.replicas, which ones go. Budgets do
 * not apply (the user asked for fewer nodes); the order spares what costs
 * most to disrupt: claims that never launched go first, then nodes running
 * only DaemonSet pods, then the others by Karpenter's disruption cost.
 */
#include "disruption/disruption.h"
#include "api/pod_rules.h"
#include "base/xalloc.h"

#include <stdlib.h>

typedef struct scored {
    uint32_t node;
    int group;   /* 0 unlaunched, 1 empty, 2 without do-not-disrupt, 3 with one */
    double cost; /* rescheduling cost x lifetime remaining (groups 2 and 3) */
} scored;

/* Neither being deleted nor taken by a disruption (Karpenter's
 * MarkedForDeletion), nor a NodeClaim already on its way out. */
static bool choosable(const kp_snode *n)
{
    const kp_nodeclaim *nc = n->src_claim;
    if (!nc || n->deleting || nc->meta.deletion_timestamp.set || (n->src_node && n->src_node->meta.deletion_timestamp.set))
        return false;
    return !kp_conditions_is_true(&nc->conditions, "DisruptionReason") &&
           !kp_conditions_is_true(&nc->conditions, "InstanceTerminating");
}

/* Karpenter's LifetimeRemaining: the share of expireAfter still ahead, 1
 * without one. */
static double lifetime_remaining(const kp_nodeclaim *nc, int64_t now_ns)
{
    if (!nc->spec.has_expire_after || nc->spec.expire_after.never || nc->spec.expire_after.ns <= 0 ||
        !nc->meta.creation_timestamp.set)
        return 1.0;
    double total = (double)nc->spec.expire_after.ns, left = total - (double)(now_ns - nc->meta.creation_timestamp.ns);
    double r = left / total;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

/* Each chosen node's pods: a DaemonSet-only node without do-not-disrupt is
 * empty; otherwise its cost and whether a pod protects it. */
static void score_pods(const kp_snapshot *snap, scored *s, const int32_t *slot, int64_t now_ns)
{
    bool *busy = kp_xcalloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(bool));
    bool *dnd = kp_xcalloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(bool));
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *p = &snap->pods[i];
        if (p->node < 0 || slot[p->node] < 0 || p->terminal)
            continue;
        scored *e = &s[slot[p->node]];
        e->cost += kp_disrupt_eviction_cost(p->src);
        busy[p->node] |= !p->daemon;
        dnd[p->node] |= p->src && kp_pod_do_not_disrupt_active(p->src, now_ns);
    }
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        if (slot[i] < 0 || s[slot[i]].group == 0)
            continue;
        scored *e = &s[slot[i]];
        e->group = dnd[i] ? 3 : busy[i] ? 2 : 1;
        e->cost *= lifetime_remaining(snap->nodes[i].src_claim, now_ns);
    }
    free(busy);
    free(dnd);
}

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->group != y->group)
        return x->group - y->group;
    if (x->group >= 2 && x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

uint32_t kp_static_scale_down(const kp_snapshot *snap, uint32_t t, uint32_t count, int64_t now_ns, uint32_t *out)
{
    int32_t *slot = kp_xcalloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(int32_t));
    scored *s = kp_xcalloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(scored));
    uint32_t n = 0;
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const kp_snode *node = &snap->nodes[i];
        slot[i] = -1;
        if (node->template_index != (int32_t)t || !node->managed || !choosable(node))
            continue;
        bool launched = node->src_claim->provider_id && *node->src_claim->provider_id;
        slot[i] = (int32_t)n;
        s[n++] = (scored){i, launched ? 2 : 0, 0};
    }
    score_pods(snap, s, slot, now_ns);
    qsort(s, n, sizeof(*s), cmp_scored);
    uint32_t k = 0;
    for (; k < n && k < count; k++)
        out[k] = s[k].node;
    free(slot);
    free(s);
    return k;
}
