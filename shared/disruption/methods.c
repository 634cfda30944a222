/*
 * The disruption methods before consolidation, in Karpenter's order:
 * expiration (forceful), emptiness, drift. Each adds its commands to the
 * loop (plan_add) and records, for the nodes it looked at and left alone, why.
 */
#include "disruption/disruption_internal.h"

#include <stdlib.h>

int ranked_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

int ranked_asc(const void *a, const void *b)
{
    return -ranked_desc(a, b);
}

static bool consolidate_after_never(const planner *p, uint32_t node)
{
    const kp_nodepool *np = p->snap->templates[p->snap->nodes[node].template_index].src;
    return np && np->disruption.has_consolidate_after && np->disruption.consolidate_after.never;
}

/* ---------- expiration ---------- */

/* Karpenter v1 deletes an expired NodeClaim at once, whatever the budgets and
 * whether or not its pods have somewhere to go (they wait pending): one
 * forceful command for every expired node. */
int method_expiration(planner *p)
{
    uint32_t *nodes = KP_ARENA_NEW(p->scratch, uint32_t, p->snap->n_nodes ? p->snap->n_nodes : 1), n = 0;
    for (uint32_t i = 0; i < p->snap->n_nodes; i++)
        if (available(p, i) && p->facts[i].managed && p->facts[i].expired && !p->snap->nodes[i].deleting)
            nodes[n++] = i;
    if (n == 0)
        return 0;
    kp_plan *sim;
    const kp_disrupt_blocked *why;
    int err = simulate_move(p, nodes, n, false, &sim, &why);
    if (err < 0)
        return err;
    plan_add(p, KP_DISRUPT_EXPIRATION, nodes, n, sim, NULL, 0);
    return 1;
}

/* ---------- emptiness ---------- */

int method_emptiness(planner *p)
{
    const kp_snapshot *snap = p->snap;
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, snap->n_nodes ? snap->n_nodes : 1);
    uint32_t n = 0, *take = KP_ARENA_NEW(p->scratch, uint32_t, snap->n_nodes ? snap->n_nodes : 1), k = 0;
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (!available(p, i) || !f->managed || f->blocked || !f->empty)
            continue;
        if (consolidate_after_never(p, i) || !f->consolidatable) {
            note_why(p, i, f->not_consolidatable);
            continue;
        }
        if (p->buffer_pods && p->buffer_pods[i]) { /* room a CapacityBuffer keeps: deleting it relaunches it */
            const char *name = snap->nodes[i].name;
            note_why(p, i, why_new(p, KP_BLOCK_BUFFER_PODS, name,
                                   kp_arena_printf(p->plan->arena, "it hosts %u CapacityBuffer virtual pod(s)",
                                                   p->buffer_pods[i]),
                                   NULL));
            continue;
        }
        c[n++] = (ranked){i, f->price / f->cost};
    }
    qsort(c, n, sizeof(*c), ranked_desc);
    int64_t *left = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    for (uint32_t t = 0; t < snap->n_templates; t++)
        left[t] = budget_left(p, (int32_t)t, REASON_EMPTY);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = snap->nodes[c[i].node].template_index;
        if (left[t] <= 0) {
            note_why(p, c[i].node, why_budget(p, c[i].node, REASON_EMPTY));
            continue;
        }
        left[t]--;
        take[k++] = c[i].node;
    }
    if (k == 0)
        return 0;
    plan_add(p, KP_DISRUPT_EMPTINESS, take, k, NULL, NULL, 0);
    return 1;
}

/* ---------- drift ---------- */

/* Drifted candidates: empty ones first, then the longest drifted. */
static uint32_t drift_candidates(planner *p, ranked *c)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (!available(p, i) || !f->managed || !f->drifted || !f->eligible_forced || p->snap->nodes[i].deleting ||
            p->snap->templates[p->snap->nodes[i].template_index].is_static) /* static_drift.c */
            continue;
        c[n++] = (ranked){i, (double)f->drifted_ns + (f->n_pods ? 1e30 : 0)};
    }
    qsort(c, n, sizeof(*c), ranked_asc);
    return n;
}

/* One command per drifted node (Karpenter's drift takes one at a time); a
 * loop takes as many as the Drifted budgets allow. */
int method_drift(planner *p)
{
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, p->snap->n_nodes ? p->snap->n_nodes : 1);
    uint32_t n = drift_candidates(p, c), found = 0;
    for (uint32_t i = 0; i < n && !loop_full(p); i++) {
        uint32_t node = c[i].node;
        if (!available(p, node))
            continue;
        if (budget_left(p, p->snap->nodes[node].template_index, REASON_DRIFTED) <= 0) {
            note_why_drift(p, node, why_budget(p, node, REASON_DRIFTED));
            continue;
        }
        kp_plan *sim;
        const kp_disrupt_blocked *why;
        int err = simulate_move(p, &node, 1, false, &sim, &why);
        if (err < 0)
            return err;
        if (why) {
            note_why_drift(p, node, why_drift(p, node, why));
            kp_plan_free(sim);
            continue;
        }
        found++;
        if (!plan_add(p, KP_DISRUPT_DRIFT, &node, 1, sim, NULL, 0))
            break;
    }
    return (int)found;
}
