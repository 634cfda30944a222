/*
 * kp_solve_base (solver.h) only saves work: a solve given the base that
 * disruption's simulations share must give exactly the plan of a solve that
 * counts every pod itself. Here a cluster of nodes running pods — some with
 * required anti-affinity on hostname and zone, some DaemonSet pods — is
 * solved again and again with a random set of nodes taken away and their
 * pods placed elsewhere (as a consolidation simulation does; a few pods of
 * the nodes that stay are placed again too), with and
 * without the base, and the plans, printed as `simulate -o json` prints
 * them, must be equal. A base built for another count of nodes is ignored.
 */
#include "base/error.h"
#include "scheduling/plan_output.h"

#include "solver_scenarios.h"

static const char *const zones[] = {"test-zone-1", "test-zone-2", "test-zone-3"};
static const char *const cpus[] = {"100m", "250m", "500m", "1"};

#define DS_OWNER "ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-1, controller: true}]"

/* One running pod: plain, repelling its own kind by hostname or zone, or a DaemonSet's. */
static void running(yb *y, rng *r, const char *name, const char *node_name)
{
    char meta[256], req[64];
    uint32_t kind = rnd(r, 8);
    snprintf(req, sizeof(req), "cpu: %s, memory: 256Mi", cpus[rnd(r, 4)]);
    if (kind == 0) {
        bound(y, name, node_name, "labels: {ds: agent}, " DS_OWNER, "cpu: 100m, memory: 64Mi");
        return;
    }
    if (kind == 1 || kind == 2) {
        uint32_t g = rnd(r, 4);
        yb_add(y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {app: solo%u}}\n"
               "spec: {nodeName: %s, affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
               "[{topologyKey: %s, labelSelector: {matchLabels: {app: solo%u}}}]}}, "
               "containers: [{name: c, resources: {requests: {%s}}}]}\nstatus: {phase: Running}\n",
               name, g, node_name, kind == 1 ? "kubernetes.io/hostname" : "topology.kubernetes.io/zone", g, req);
        return;
    }
    snprintf(meta, sizeof(meta), "labels: {app: g%u}", rnd(r, 5));
    bound(y, name, node_name, meta, req);
}

static void cluster(yb *y, rng *r, uint32_t n_nodes)
{
    pool(y, "general", NULL, NULL, NULL, NULL);
    daemonset(y, "agent", "cpu: 100m, memory: 64Mi", NULL);
    for (uint32_t i = 0; i < n_nodes; i++) {
        char name[32], labels[256];
        snprintf(name, sizeof(name), "node-%03u", i);
        snprintf(labels, sizeof(labels),
                 "kubernetes.io/hostname: %s, topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: "
                 "on-demand, kubernetes.io/arch: amd64",
                 name, zones[i % 3]);
        node(y, name, labels, NULL,
             i % 3 ? "cpu: \"4\", memory: 8Gi, pods: \"20\"" : "cpu: \"8\", memory: 16Gi, pods: \"40\"");
        for (uint32_t k = 0, n = 1 + rnd(r, 5); k < n; k++) {
            char pod_name[48];
            snprintf(pod_name, sizeof(pod_name), "run-%03u-%u", i, k);
            running(y, r, pod_name, name);
        }
    }
    for (uint32_t i = 0; i < 12; i++) { /* pending pods, placed in every simulation too */
        char name[32];
        snprintf(name, sizeof(name), "pending-%02u", i);
        podm(y, name, "labels: {app: g1}", "cpu: 250m, memory: 128Mi", NULL);
    }
}

typedef struct simulation {
    bool *exclude, *moved;
    uint32_t *pending, n_pending;
} simulation;

/* Take a few random nodes away: their pods and the pending ones are placed. */
static void take_away(const kp_snapshot *snap, rng *r, simulation *sim)
{
    memset(sim->exclude, 0, snap->n_nodes * sizeof(bool));
    memset(sim->moved, 0, snap->n_pods * sizeof(bool));
    for (uint32_t k = 0, n = 1 + rnd(r, 6); k < n; k++)
        sim->exclude[rnd(r, snap->n_nodes)] = true;
    sim->n_pending = 0;
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *p = &snap->pods[i];
        bool leaving = p->node >= 0 && sim->exclude[p->node] && !p->daemon;
        /* now and then a pod of a node that stays is placed again too (a
         * DaemonSet pod among them): the room it holds there is free */
        bool again = p->node >= 0 && !sim->exclude[p->node] && rnd(r, 25) == 0;
        if (leaving || again || (!p->scheduled && !p->daemon))
            sim->pending[sim->n_pending++] = i;
        sim->moved[i] = leaving;
    }
}

static char *solve_text(kp_snapshot *snap, const simulation *sim, const kp_solve_base *base, uint32_t *placed)
{
    kp_solve_opts o = KP_SOLVE_OPTS_INIT;
    o.improve = false;
    o.skip_lower_bound = true;
    o.exclude_nodes = sim->exclude;
    o.moved = sim->moved;
    o.base = base;
    kp_plan *plan = NULL;
    cr_assert_eq(kp_solve(snap, &o, sim->pending, sim->n_pending, &plan), 0, "%s", kp_error_last());
    *placed = 0;
    for (uint32_t i = 0; i < plan->n_nodes; i++)
        *placed += plan->nodes[i].n_pods;
    cJSON *json = kp_plan_to_json(plan, snap, sim->n_pending);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(json, "summary"), "solveMillis");
    char *text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    kp_plan_free(plan);
    return text;
}

/* Solve the simulation with and without `base`: the plans must be equal.
 * Returns how many pods went to existing nodes. */
static uint32_t compare(kp_snapshot *snap, const simulation *sim, const kp_solve_base *base, uint32_t round)
{
    uint32_t placed, placed_base;
    char *plain = solve_text(snap, sim, NULL, &placed);
    char *with_base = solve_text(snap, sim, base, &placed_base);
    size_t at = 0;
    while (plain[at] && plain[at] == with_base[at])
        at++;
    cr_assert(plain[at] == with_base[at], "round %u: plans differ at byte %zu:\nwithout: %.160s\nwith:    %.160s",
              round, at, plain + (at > 40 ? at - 40 : 0), with_base + (at > 40 ? at - 40 : 0));
    free(plain);
    free(with_base);
    return placed;
}

/* A cluster of `nodes` nodes, solved once (its pending pods placed), its base built. */
typedef struct fixture {
    kp_scenario s;
    kp_arena *arena;
    kp_solve_base base;
    simulation sim;
    rng r;
} fixture;

static void setup(fixture *f, uint64_t seed, uint32_t nodes)
{
    yb y = {0};
    f->r = (rng){seed};
    cluster(&y, &f->r, nodes);
    run_opts(&f->s, &y, "synthetic:40", NULL);
    f->arena = kp_arena_new();
    kp_solve_base_build(f->s.snap, f->arena, &f->base);
}

/* The simulation's arrays, sized for the snapshot as it is now. */
static void sim_alloc(fixture *f)
{
    const kp_snapshot *snap = f->s.snap;
    f->sim = (simulation){calloc(snap->n_nodes, sizeof(bool)), calloc(snap->n_pods, sizeof(bool)),
                          calloc(snap->n_pods, sizeof(uint32_t)), 0};
}

static void teardown(fixture *f)
{
    free(f->sim.exclude), free(f->sim.moved), free(f->sim.pending);
    kp_arena_free(f->arena);
    kp_scenario_free(&f->s);
}

Test(solver_base, same_plans_with_and_without_the_base)
{
    fixture f;
    setup(&f, 11, 60);
    cr_assert_gt(f.base.n_anti, 5, "the cluster should have pods with required anti-affinity");
    sim_alloc(&f);
    uint32_t on_nodes = 0;
    for (uint32_t round = 0; round < 40; round++) {
        take_away(f.s.snap, &f.r, &f.sim);
        on_nodes += compare(f.s.snap, &f.sim, &f.base, round);
    }
    cr_assert_gt(on_nodes, 100, "moved pods should land on the nodes left, where the base's counts matter");
    teardown(&f);
}

Test(solver_base, a_base_for_other_nodes_is_ignored)
{
    fixture f;
    setup(&f, 5, 12);
    /* A node joins after the base was built: used as is, it would be read past its end. */
    kp_snapshot *snap = f.s.snap;
    kp_snode *extra = kp_snapshot_add_node(snap);
    *extra = snap->nodes[0];
    extra->name = "node-extra";
    extra->hostname = kp_sym_intern(snap->symtab, "node-extra");
    sim_alloc(&f);
    take_away(snap, &f.r, &f.sim);
    compare(snap, &f.sim, &f.base, 0);
    teardown(&f);
}
