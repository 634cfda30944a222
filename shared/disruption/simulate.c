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

#include <stdlib.h>
#include <string.h>

static bool pod_pending(const kp_spod *s)
{
    return !s->scheduled && !s->terminal && !s->terminating && !s->daemon;
}

/* The base, the pending pods and the nodes being deleted as the cluster
 * stands now: rebuilt only after a command moved pods, not per simulation. */
static void refresh(planner *p)
{
    const kp_snapshot *snap = p->snap;
    if (!p->base_stale)
        return;
    kp_arena_free(p->base_arena);
    p->base_arena = kp_arena_new();
    kp_solve_base_build(snap, p->base_arena, &p->base);
    p->pending_pods = KP_ARENA_NEW(p->base_arena, uint32_t, snap->n_pods ? snap->n_pods : 1);
    p->n_pending_pods = 0;
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (pod_pending(&snap->pods[i]))
            p->pending_pods[p->n_pending_pods++] = i;
    p->deleting = KP_ARENA_NEW(p->base_arena, uint32_t, snap->n_nodes ? snap->n_nodes : 1);
    p->n_deleting = 0;
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        if (snap->nodes[i].deleting)
            p->deleting[p->n_deleting++] = i;
    p->base_stale = false;
}

/* The pods of `node` that need a new home: those of its facts still there,
 * unless they will not be evicted any time soon (no capacity for them). */
static uint32_t add_pods_of(planner *p, uint32_t node, bool from_candidate, uint32_t *pending, uint32_t n)
{
    const node_facts *f = &p->facts[node];
    for (uint32_t k = 0; k < f->n_pods; k++) {
        const kp_spod *s = &p->snap->pods[f->pods[k]];
        if (pod_pending(s) || s->node != (int32_t)node || !facts_pod_reschedulable_now(p, s))
            continue;
        pending[n++] = f->pods[k];
        p->moved[f->pods[k]] = from_candidate;
    }
    return n;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* What the simulation places, in pod order: the pending pods, and the pods
 * of the candidates and of the nodes being deleted. */
static uint32_t collect(planner *p, const uint32_t *nodes, uint32_t n_nodes, const bool *leaving,
                        uint32_t **out)
{
    uint32_t cap = p->n_pending_pods, n = p->n_pending_pods;
    for (uint32_t i = 0; i < n_nodes; i++)
        cap += p->facts[nodes[i]].n_pods;
    for (uint32_t i = 0; i < p->n_deleting; i++)
        cap += p->facts[p->deleting[i]].n_pods;
    uint32_t *pending = KP_ARENA_NEW(p->scratch, uint32_t, cap ? cap : 1);
    memcpy(pending, p->pending_pods, n * sizeof(uint32_t));
    for (uint32_t i = 0; i < n_nodes; i++)
        if (!p->gone[nodes[i]])
            n = add_pods_of(p, nodes[i], true, pending, n);
    for (uint32_t i = 0; i < p->n_deleting; i++)
        if (!p->gone[p->deleting[i]] && !leaving[p->deleting[i]])
            n = add_pods_of(p, p->deleting[i], false, pending, n);
    qsort(pending, n, sizeof(uint32_t), cmp_u32);
    *out = pending;
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
    refresh(p);
    bool *exclude = KP_ARENA_NEW(p->scratch, bool, snap->n_nodes ? snap->n_nodes : 1);
    bool *leaving = KP_ARENA_NEW(p->scratch, bool, snap->n_nodes ? snap->n_nodes : 1);
    bool *closed = KP_ARENA_NEW(p->scratch, bool, snap->n_nodes ? snap->n_nodes : 1);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        exclude[i] = p->gone[i];
        closed[i] = p->fresh[i] || (consolidation && p->facts[i].closed_to_moves);
    }
    for (uint32_t i = 0; i < n; i++)
        exclude[nodes[i]] = leaving[nodes[i]] = true;
    uint32_t *pending;
    uint32_t n_pending = collect(p, nodes, n, leaving, &pending);
    if (p->simple && n_pending)
        hide_full(p, pending, n_pending, exclude);
    kp_solve_opts so = KP_SOLVE_OPTS_INIT;
    so.improve = false; /* a replacement must be one NodeClaim, as Karpenter plans it */
    so.skip_lower_bound = true;
    so.ignore_preferences = p->opts->ignore_preferences;
    so.exclude_nodes = exclude;
    so.caps = p->opts->caps;
    so.closed_to_moves = closed;
    so.moved = p->moved;
    so.base = &p->base;
    kp_plan *plan = NULL;
    int err = kp_solve(snap, &so, pending, n_pending, &plan);
    p->plan->simulations++;
    *out = NULL;
    *why = NULL;
    if (err == 0) {
        *why = check(p, plan, p->moved);
        *out = plan; /* the caller frees it when it rejects the move */
    }
    for (uint32_t i = 0; i < n_pending; i++)
        p->moved[pending[i]] = false;
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
