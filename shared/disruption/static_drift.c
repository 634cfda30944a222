/*
 * Drift of static NodePools' nodes (Karpenter's StaticDrift): a drifted node
 * of a static NodePool is replaced by one NodeClaim of its NodePool, made
 * from the template and not from its pods, as many at a time as the
 * NodePool's Drifted budget allows. Nothing is replaced while the NodePool
 * has more nodes than replicas (the static controller is scaling it down),
 * nor beyond limits.nodes. The pods of the node go to the replacement when
 * they fit it; kube-scheduler places them wherever they fit in truth.
 */
#include "disruption/disruption_internal.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "scheduling/static_pools.h"

#include <stdlib.h>

static bool is_static_node(const planner *p, uint32_t i)
{
    int32_t t = p->snap->nodes[i].template_index;
    return t >= 0 && p->snap->templates[t].is_static;
}

/* Drifted static nodes: empty ones first, then the longest drifted (drift's order). */
static uint32_t candidates(planner *p, ranked *c)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (!available(p, i) || !f->managed || !f->drifted || !f->eligible_forced || p->snap->nodes[i].deleting ||
            !is_static_node(p, i))
            continue;
        c[n++] = (ranked){i, (double)f->drifted_ns + (f->n_pods ? 1e30 : 0)};
    }
    qsort(c, n, sizeof(*c), ranked_asc);
    return n;
}

/* Why a drifted static node waits on its NodePool (no event: Karpenter
 * passes over it in silence), or NULL when a replacement may start. The
 * replacements of commands already in the plan are nodes of the snapshot by
 * now, their candidates gone. */
static const kp_disrupt_blocked *pool_waits(planner *p, uint32_t node)
{
    uint32_t t = (uint32_t)p->snap->nodes[node].template_index;
    const kp_template *tp = &p->snap->templates[t];
    kp_static_count n;
    kp_static_count_nodes(p->snap, t, p->gone, &n);
    const char *why = NULL;
    if ((int64_t)n.active + (int64_t)n.pending > tp->replicas)
        why = kp_arena_printf(p->plan->arena, "NodePool %s has %u nodes for %lld replicas: drift waits for the "
                              "scale-down", tp->name, n.active + n.pending, (long long)tp->replicas);
    else if (kp_static_room(p->snap, t, &n, 1) < 1)
        why = kp_arena_printf(p->plan->arena, "NodePool %s is at its limit of %lld nodes: no room for a "
                              "replacement", tp->name, (long long)tp->node_limit);
    return why ? why_new(p, KP_BLOCK_STATIC_NODEPOOL, tp->name, why, NULL) : NULL;
}

/* The replacement: one NodeClaim of the node's NodePool; its pods on it
 * when they fit the launch, else pending. */
static int replacement(planner *p, uint32_t node, kp_plan **out)
{
    const node_facts *f = &p->facts[node];
    kp_plan *sim = kp_xcalloc(1, sizeof(*sim));
    sim->arena = kp_arena_new();
    kp_plan_claim *c = KP_ARENA_NEW(sim->arena, kp_plan_claim, 1);
    int err = kp_static_claim(p->snap, (uint32_t)p->snap->nodes[node].template_index, sim->arena, c);
    if (err < 0) {
        kp_plan_free(sim);
        return err;
    }
    kp_resvec want;
    kp_resvec_zero(&want);
    for (uint32_t k = 0; k < f->n_pods; k++)
        kp_resvec_add(&want, &p->snap->pods[f->pods[k]].requests, p->snap->restab.count);
    bool fits = kp_resvec_fits(&want, &p->snap->its[c->its[0]].allocatable, p->snap->restab.count);
    sim->claims = c, sim->n_claims = 1, sim->hourly_cost = c->price;
    if (fits) {
        c->pods = kp_arena_memdup(sim->arena, f->pods, f->n_pods * sizeof(uint32_t));
        c->n_pods = sim->n_scheduled = f->n_pods;
        c->requests = want;
    } else {
        sim->errors = KP_ARENA_NEW(sim->arena, kp_plan_error, f->n_pods ? f->n_pods : 1);
        for (uint32_t k = 0; k < f->n_pods; k++)
            sim->errors[sim->n_errors++] = (kp_plan_error){f->pods[k], "does not fit the static replacement"};
    }
    *out = sim;
    return 0;
}

int method_static_drift(planner *p)
{
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, p->snap->n_nodes ? p->snap->n_nodes : 1);
    uint32_t n = candidates(p, c), found = 0;
    for (uint32_t i = 0; i < n && !loop_full(p); i++) {
        uint32_t node = c[i].node;
        int32_t t = p->snap->nodes[node].template_index;
        if (!available(p, node))
            continue;
        const kp_disrupt_blocked *why = pool_waits(p, node);
        if (!why && budget_left(p, t, REASON_DRIFTED) <= 0)
            why = why_budget(p, node, REASON_DRIFTED);
        if (why) {
            note_why_drift(p, node, why_drift(p, node, why));
            continue;
        }
        kp_plan *sim;
        int err = replacement(p, node, &sim);
        if (err == KP_ENOTFOUND) {
            note_why_drift(p, node, why_drift(p, node, why_new(p, KP_BLOCK_STATIC_NODEPOOL, NULL,
                                                                 kp_arena_strdup(p->plan->arena, kp_error_last()),
                                                                 NULL)));
            continue;
        }
        if (err < 0)
            return err;
        found++;
        if (!plan_add(p, KP_DISRUPT_DRIFT, &node, 1, sim, NULL, 0))
            break;
    }
    return (int)found;
}
