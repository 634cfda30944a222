/*
 * The scheduling simulation behind every disruption decision (Karpenter's
 * SimulateScheduling): take `nodes` away, and place their pods — together with
 * the pods already pending and those on nodes being deleted — on the rest of
 * the cluster or on new NodeClaims. The move is possible only if every pod
 * that is running now finds a place, and none lands on a node that has not
 * initialised yet.
 */
#include "disruption/disruption_internal.h"

#include <string.h>

static bool pod_pending(const kp_spod *s)
{
    return !s->scheduled && !s->terminal && !s->terminating && !s->daemon;
}

static uint32_t collect(planner *p, const bool *leaving, uint32_t *pending, bool *moved)
{
    const kp_snapshot *snap = p->snap;
    uint32_t n = 0;
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *s = &snap->pods[i];
        if (pod_pending(s)) {
            pending[n++] = i;
            continue;
        }
        if (s->node < 0 || p->gone[s->node])
            continue;
        bool from_candidate = leaving[s->node];
        if (!from_candidate && !snap->nodes[s->node].deleting)
            continue;
        /* No capacity for pods that will not be evicted any time soon. */
        if (!facts_pod_reschedulable_now(p, s))
            continue;
        const node_facts *f = &p->facts[s->node];
        for (uint32_t k = 0; k < f->n_pods; k++) {
            if (f->pods[k] != i)
                continue;
            pending[n++] = i;
            moved[i] = from_candidate;
        }
    }
    return n;
}

/* A running pod that found no place, or one sent to an uninitialised node. */
static const char *check(planner *p, const kp_plan *plan, const bool *moved)
{
    const kp_snapshot *snap = p->snap;
    for (uint32_t i = 0; i < plan->n_errors; i++) {
        const kp_spod *s = &snap->pods[plan->errors[i].pod];
        if (s->scheduled)
            return kp_arena_printf(p->plan->arena, "pod %s would have nowhere to go: %s", s->ns_name,
                                   plan->errors[i].reason);
    }
    for (uint32_t i = 0; i < plan->n_nodes; i++) {
        const kp_snode *n = &snap->nodes[plan->nodes[i].node];
        for (uint32_t k = 0; k < plan->nodes[i].n_pods && !n->initialized; k++)
            if (moved[plan->nodes[i].pods[k]])
                return kp_arena_printf(p->plan->arena, "pods would move to %s, which is not initialized yet", n->name);
    }
    return NULL;
}

int simulate_move(planner *p, const uint32_t *nodes, uint32_t n, bool consolidation, kp_plan **out, const char **why)
{
    kp_snapshot *snap = p->snap;
    kp_arena_mark m = kp_arena_mark_get(p->scratch);
    bool *exclude = KP_ARENA_NEW(p->scratch, bool, snap->n_nodes ? snap->n_nodes : 1);
    bool *leaving = KP_ARENA_NEW(p->scratch, bool, snap->n_nodes ? snap->n_nodes : 1);
    bool *closed = KP_ARENA_NEW(p->scratch, bool, snap->n_nodes ? snap->n_nodes : 1);
    bool *moved = KP_ARENA_NEW(p->scratch, bool, snap->n_pods ? snap->n_pods : 1);
    uint32_t *pending = KP_ARENA_NEW(p->scratch, uint32_t, snap->n_pods ? snap->n_pods : 1);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        exclude[i] = p->gone[i];
        closed[i] = consolidation && p->facts[i].closed_to_moves;
    }
    for (uint32_t i = 0; i < n; i++)
        exclude[nodes[i]] = leaving[nodes[i]] = true;
    uint32_t n_pending = collect(p, leaving, pending, moved);
    kp_solve_opts so = KP_SOLVE_OPTS_INIT;
    so.improve = false; /* a replacement must be one NodeClaim, as Karpenter plans it */
    so.skip_lower_bound = true;
    so.ignore_preferences = p->opts->ignore_preferences;
    so.exclude_nodes = exclude;
    so.closed_to_moves = closed;
    so.moved = moved;
    kp_plan *plan = NULL;
    int err = kp_solve(snap, &so, pending, n_pending, &plan);
    *out = NULL;
    *why = NULL;
    if (err == 0) {
        *why = check(p, plan, moved);
        *out = plan; /* the caller frees it when it rejects the move */
    }
    kp_arena_rewind(p->scratch, m);
    return err;
}

double plan_claims_price(const kp_plan *plan)
{
    double sum = 0;
    for (uint32_t i = 0; plan && i < plan->n_claims; i++)
        sum += plan->claims[i].price;
    return sum;
}

/* The first reason a loop finds is kept, except that drift's replaces any
 * other: a drifted node waits on its drift (a budget, a pod that cannot
 * move), whatever consolidation would have said. */
void note_why(planner *p, uint32_t node, const char *reason)
{
    if (!p->why[node])
        p->why[node] = reason;
}

void note_why_drift(planner *p, uint32_t node, const char *reason)
{
    p->why[node] = reason;
}
