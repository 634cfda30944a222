/*
 * The scheduling simulation behind every disruption decision (Karpenter's
 * SimulateScheduling): take `nodes` away, and place their pods — together with
 * the pods already pending and those on nodes being deleted — on the rest of
 * the cluster or on new NodeClaims. The move is possible only if every pod
 * that is running now finds a place, and none lands on a node that has not
 * initialised yet: neither one the snapshot says is not initialised, nor a
 * replacement launched by another command of the same loop.
 */
#include "disruption/disruption_internal.h"
#include "base/xalloc.h"

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

/* Karpenter's UninitializedNodeError, for a moved pod. */
static const kp_disrupt_blocked *uninitialized(planner *p, const kp_snode *n, uint32_t pod)
{
    const char *target = n->nodeclaim ? kp_arena_printf(p->plan->arena, "nodeclaim/%s, node/%s", n->nodeclaim, n->name)
                                      : kp_arena_printf(p->plan->arena, "node/%s", n->name);
    return why_new(p, KP_BLOCK_UNINITIALIZED_TARGET, n->name,
                   kp_arena_printf(p->plan->arena, "pods would move to %s, which is not initialized yet", n->name),
                   kp_arena_printf(p->plan->arena,
                                   "Not all pods would schedule, %s => would schedule against uninitialized %s ",
                                   p->snap->pods[pod].ns_name, target));
}

/* A running pod that found no place, or one sent to an uninitialised node. */
static const kp_disrupt_blocked *check(planner *p, const kp_plan *plan, const bool *moved)
{
    const kp_snapshot *snap = p->snap;
    for (uint32_t i = 0; i < plan->n_errors; i++)
        if (snap->pods[plan->errors[i].pod].scheduled)
            return why_unschedulable(p, plan, i);
    for (uint32_t i = 0; i < plan->n_nodes; i++) {
        const kp_snode *n = &snap->nodes[plan->nodes[i].node];
        for (uint32_t k = 0; k < plan->nodes[i].n_pods && !n->initialized; k++)
            if (moved[plan->nodes[i].pods[k]])
                return uninitialized(p, n, plan->nodes[i].pods[k]);
    }
    return NULL;
}

/* Nodes that cannot take even the smallest pod being placed change nothing
 * in a simulation without topology, affinity or limits: leave them out. */
static void hide_full(planner *p, const uint32_t *pending, uint32_t n, bool *exclude)
{
    const kp_snapshot *snap = p->snap;
    int64_t least[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
    for (uint32_t i = 0; i < n; i++)
        if (pod_constrained(&snap->pods[pending[i]], false))
            return;
    for (uint32_t i = 0; i < n; i++)
        for (int r = 0; r < 3; r++)
            if (snap->pods[pending[i]].requests.v[r] < least[r])
                least[r] = snap->pods[pending[i]].requests.v[r];
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        bool room = true;
        for (int r = 0; r < 3 && room; r++)
            room = snap->nodes[i].allocatable.v[r] - p->used[i].v[r] >= least[r];
        exclude[i] |= !room;
    }
}

int simulate_move(planner *p, const uint32_t *nodes, uint32_t n, bool consolidation, kp_plan **out,
                  const kp_disrupt_blocked **why)
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
        closed[i] = p->fresh[i] || (consolidation && p->facts[i].closed_to_moves);
    }
    for (uint32_t i = 0; i < n; i++)
        exclude[nodes[i]] = leaving[nodes[i]] = true;
    uint32_t n_pending = collect(p, leaving, pending, moved);
    if (p->simple && n_pending)
        hide_full(p, pending, n_pending, exclude);
    kp_solve_opts so = KP_SOLVE_OPTS_INIT;
    so.improve = false; /* a replacement must be one NodeClaim, as Karpenter plans it */
    so.skip_lower_bound = true;
    so.ignore_preferences = p->opts->ignore_preferences;
    so.exclude_nodes = exclude;
    so.closed_to_moves = closed;
    so.moved = moved;
    kp_plan *plan = NULL;
    int err = kp_solve(snap, &so, pending, n_pending, &plan);
    p->plan->simulations++;
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

static void reqs_copy_deep(kp_arena *a, kp_requirements *dst, const kp_requirements *src)
{
    kp_requirements_copy(dst, a, src);
    for (uint32_t i = 0; i < dst->count; i++)
        if (dst->items[i].n_values)
            dst->items[i].values = kp_arena_memdup(a, dst->items[i].values, dst->items[i].n_values * sizeof(kp_sym));
}

static void *dup_array(kp_arena *a, const void *src, size_t n, size_t size)
{
    return n ? kp_arena_memdup(a, src, n * size) : NULL;
}

/* A command keeps its simulation as long as the plan lives, but a solve's
 * arena holds its working copy of the whole cluster: keep only what a plan
 * is read for (the claims, where pods go, what found no place). */
kp_plan *simulation_keep(kp_plan *sim)
{
    if (!sim)
        return NULL;
    kp_plan *k = kp_xcalloc(1, sizeof(*k));
    kp_arena *a = k->arena = kp_arena_new();
    k->n_scheduled = sim->n_scheduled, k->hourly_cost = sim->hourly_cost;
    k->lower_bound_cost = sim->lower_bound_cost, k->solve_ns = sim->solve_ns;
    k->claims = dup_array(a, sim->claims, sim->n_claims, sizeof(kp_plan_claim));
    k->n_claims = sim->n_claims;
    for (uint32_t i = 0; i < k->n_claims; i++) {
        kp_plan_claim *c = &k->claims[i];
        reqs_copy_deep(a, &c->reqs, &sim->claims[i].reqs);
        c->its = dup_array(a, c->its, c->n_its, sizeof(uint32_t));
        c->pods = dup_array(a, c->pods, c->n_pods, sizeof(uint32_t));
    }
    k->nodes = KP_ARENA_NEW(a, kp_plan_node, sim->n_nodes ? sim->n_nodes : 1);
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (sim->nodes[i].n_pods)
            k->nodes[k->n_nodes++] = (kp_plan_node){sim->nodes[i].node,
                                                    dup_array(a, sim->nodes[i].pods, sim->nodes[i].n_pods,
                                                              sizeof(uint32_t)),
                                                    sim->nodes[i].n_pods};
    k->errors = dup_array(a, sim->errors, sim->n_errors, sizeof(kp_plan_error));
    k->n_errors = sim->n_errors;
    for (uint32_t i = 0; i < k->n_errors; i++)
        k->errors[i].reason = kp_arena_strdup(a, k->errors[i].reason ? k->errors[i].reason : "");
    kp_plan_free(sim);
    return k;
}
