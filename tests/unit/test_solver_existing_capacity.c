/*
 * Solver scenarios: existing capacity. Pods go to existing
 * nodes with room before new NodeClaims: node taints and labels, pods already
 * bound and DaemonSet pods still to come use up room, deleting nodes are not
 * used, NodeClaims in flight take pods, and nodes that have not initialized
 * yet ignore their startup and ephemeral taints. Cases follow Karpenter's
 * scheduling suite (existing and in-flight nodes).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"
#include "helpers/assert.h"

/* ---------- existing nodes and NodeClaims in flight ---------- */

#define BIG "cpu: '10', memory: 10Gi, pods: '110'"

/* A node Karpenter launched: its NodeClaim (nc-NAME) and, unless `in_flight`,
 * its registered Node (initialized or not). `taints` and `startup` are taint
 * lists for the Node (or the in-flight NodeClaim) and the NodeClaim's startupTaints. */
typedef struct managed_node {
    const char *name;
    bool in_flight, initialized, deleting;
    const char *labels; /* more Node / NodeClaim labels */
    const char *taints;
    const char *startup;
    const char *alloc;
    const char *node_alloc; /* what the Node reports, when it differs from the NodeClaim */
    const char *claim_reqs; /* the NodeClaim's requirements */
} managed_node;

static void managed(yb *y, const managed_node *m)
{
    const char *labels = m->labels ? m->labels : "";
    yb_add(y,
           "apiVersion: karpenter.sh/v1\nkind: NodeClaim\n"
           "metadata: {name: nc-%s, labels: {karpenter.sh/nodepool: default%s%s}%s}\n"
           "spec: {" NODECLASS ", requirements: [%s], taints: %s, startupTaints: %s}\n"
           "status: {providerID: 'fake://%s', %s%s%s capacity: {%s}, allocatable: {%s}}\n",
           m->name, *labels ? ", " : "", labels,
           m->deleting && m->in_flight ? ", deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [x]" : "",
           m->claim_reqs ? m->claim_reqs : "", m->in_flight && m->taints ? m->taints : "[]",
           m->startup ? m->startup : "[]", m->name, m->in_flight ? "" : "nodeName: ", m->in_flight ? "" : m->name,
           m->in_flight ? "" : ",", m->alloc, m->alloc);
    if (m->in_flight)
        return;
    yb_add(y,
           "apiVersion: v1\nkind: Node\n"
           "metadata: {name: %s, labels: {karpenter.sh/nodepool: default, karpenter.sh/registered: 'true',"
           " kubernetes.io/hostname: %s%s%s%s}%s}\n"
           "spec: {providerID: 'fake://%s', taints: %s}\n"
           "status: {capacity: {%s}, allocatable: {%s}}\n",
           m->name, m->name, m->initialized ? ", karpenter.sh/initialized: 'true'" : "", *labels ? ", " : "", labels,
           m->deleting ? ", deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [x]" : "", m->name,
           m->taints ? m->taints : "[]", m->node_alloc ? m->node_alloc : m->alloc,
           m->node_alloc ? m->node_alloc : m->alloc);
}

static void default_pool(yb *y)
{
    pool(y, "default", "{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}", NULL, NULL,
         NULL);
}

Test(solver_basic_existing, pod_goes_to_an_unmanaged_node_with_room)
{
    yb y = {0};
    kp_scenario s;
    node(&y, "byo", NULL, NULL, BIG);
    default_pool(&y);
    pod(&y, "p", "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "byo");
    cr_assert_eq(s.plan->n_claims, 0);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, many_pods_to_one_existing_node)
{
    yb y = {0};
    kp_scenario s;
    node(&y, "byo", NULL, NULL, "cpu: '10', memory: 100Gi, pods: '110'");
    default_pool(&y);
    deploy(&y, "app", 100, "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_eq(s.plan->n_nodes, 1);
    cr_assert_eq(s.plan->nodes[0].n_pods, 100);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, pods_already_bound_use_up_room)
{
    /* 2 cores, 1.5 used: a 1-core pod needs a new NodeClaim, a 0.5-core one fits. */
    yb y = {0};
    kp_scenario s;
    node(&y, "small", NULL, NULL, "cpu: '2', memory: 4Gi, pods: '10'");
    bound(&y, "running", "small", NULL, "cpu: 1.5");
    default_pool(&y);
    pod(&y, "big", "cpu: '1'", NULL);
    pod(&y, "little", "cpu: 500m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_null(kp_scenario_node_of(&s, "big"));
    cr_assert_geq(kp_scenario_claim_of(&s, "big"), 0);
    cr_assert_str_eq(kp_scenario_node_of(&s, "little"), "small");
    kp_scenario_free(&s);
}

Test(solver_basic_existing, pod_slots_run_out)
{
    yb y = {0};
    kp_scenario s;
    node(&y, "tiny", NULL, NULL, "cpu: '10', memory: 10Gi, pods: '2'");
    bound(&y, "running", "tiny", NULL, "cpu: 10m");
    default_pool(&y);
    deploy(&y, "app", 2, "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_nodes, 1);
    cr_assert_eq(s.plan->nodes[0].n_pods, 1);
    cr_assert_eq(s.plan->n_claims, 1);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, node_taints_and_labels)
{
    static const struct {
        const char *name;
        const char *node_labels;
        const char *node_spec;
        const char *pod_spec;
        bool on_node;
    } cases[] = {
        {"tainted, intolerant pod", NULL, "taints: [{key: dedicated, value: x, effect: NoSchedule}]", NULL, false},
        {"tainted, tolerant pod", NULL, "taints: [{key: dedicated, value: x, effect: NoSchedule}]",
         "tolerations: [{key: dedicated, operator: Exists}]", true},
        {"NoExecute taint", NULL, "taints: [{key: dedicated, effect: NoExecute}]", NULL, false},
        /* Karpenter only tolerates PreferNoSchedule as a relaxation when a NodePool has such a taint. */
        {"PreferNoSchedule taint, no NodePool has one", NULL, "taints: [{key: dedicated, effect: PreferNoSchedule}]",
         NULL, false},
        {"label the pod selects", "team: a", NULL, "nodeSelector: {team: a}", true},
        {"label with another value", "team: b", NULL, "nodeSelector: {kubernetes.io/arch: amd64, team: a}", false},
        {"zone the node lacks", NULL, NULL, "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}", false},
        {"zone the node has", "topology.kubernetes.io/zone: test-zone-1", NULL,
         "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        yb y = {0};
        kp_scenario s;
        node(&y, "worker", cases[i].node_labels, cases[i].node_spec, BIG);
        default_pool(&y);
        pool(&y, "teams", NULL, NULL, "labels: {team: a}", NULL);
        pod(&y, "p", "cpu: 10m", cases[i].pod_spec);
        run(&s, &y, FAKE_CATALOG);
        const char *where = kp_scenario_node_of(&s, "p");
        cr_assert_eq(where != NULL, cases[i].on_node, "%s", cases[i].name);
        if (!cases[i].on_node) /* the NodePools still take it */
            cr_assert_geq(kp_scenario_claim_of(&s, "p"), 0, "%s: %s", cases[i].name, kp_scenario_error_of(&s, "p"));
        kp_scenario_free(&s);
    }
}

Test(solver_basic_existing, prefer_no_schedule_node_after_relaxation)
{
    /* A NodePool with a PreferNoSchedule taint makes tolerating such taints a
     * relaxation step; the relaxed pod then prefers the existing node. */
    yb y = {0};
    kp_scenario s;
    node(&y, "worker", NULL, "taints: [{key: dedicated, effect: PreferNoSchedule}]", BIG);
    pool(&y, "soft", NULL, "taints: [{key: soft, effect: PreferNoSchedule}]", NULL, NULL);
    pod(&y, "p", "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "worker");
    cr_assert_eq(s.plan->n_claims, 0);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, incompatible_with_the_node_and_no_nodepool)
{
    yb y = {0};
    kp_scenario s;
    node(&y, "worker", NULL, NULL, BIG);
    pod(&y, "p", NULL, "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_null(kp_scenario_node_of(&s, "p"));
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_existing, deleting_nodes_are_not_used)
{
    yb y = {0};
    kp_scenario s;
    yb_add(&y, "apiVersion: v1\nkind: Node\n"
               "metadata: {name: going, deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [x]}\n"
               "status: {capacity: {" BIG "}, allocatable: {" BIG "}}\n");
    managed_node m = {.name = "retiring", .initialized = true, .deleting = true, .alloc = BIG};
    managed(&y, &m);
    default_pool(&y);
    pod(&y, "p", "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_null(kp_scenario_node_of(&s, "p"));
    cr_assert_eq(kp_scenario_claim_of(&s, "p"), 0);
    kp_scenario_free(&s);
}

/* ---------- DaemonSet pods that will still arrive ---------- */

Test(solver_basic_existing, missing_daemon_pods_reduce_room)
{
    /* 4 cores; a 2-core daemon targets the node but has no pod there yet. */
    yb y = {0};
    kp_scenario s;
    node(&y, "worker", NULL, NULL, "cpu: '4', memory: 8Gi, pods: '20'");
    daemonset(&y, "ds", "cpu: '2'", NULL);
    default_pool(&y);
    pod(&y, "fits", "cpu: 1.5", NULL);
    pod(&y, "too-big", "cpu: 2.5", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "fits"), "worker");
    cr_assert_null(kp_scenario_node_of(&s, "too-big"));
    kp_scenario_free(&s);
}

Test(solver_basic_existing, daemon_pod_already_there_is_not_counted_twice)
{
    yb y = {0};
    kp_scenario s;
    node(&y, "worker", NULL, NULL, "cpu: '4', memory: 8Gi, pods: '20'");
    daemonset(&y, "ds", "cpu: '2'", NULL);
    bound(&y, "ds-abcde", "worker", "ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u1, controller: true}]",
          "cpu: '2'");
    default_pool(&y);
    pod(&y, "p", "cpu: 1.5", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "worker");
    kp_scenario_free(&s);
}

Test(solver_basic_existing, daemonset_that_does_not_target_the_node_is_ignored)
{
    /* The daemon needs test-zone-1, which the node does not have: its 100
     * cores are not reserved there. On any new NodeClaim it would run (the
     * zone is the instance types' to choose) and leave no room: the second
     * pod stays pending. */
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "worker", .initialized = true, .alloc = "cpu: '1', memory: 1Gi, pods: '110'"};
    managed(&y, &m);
    daemonset(&y, "ds", "cpu: '100', memory: 100Gi",
              "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}");
    default_pool(&y);
    pod(&y, "first", "cpu: '1', memory: 1Gi", NULL);
    pod(&y, "second", "cpu: '1', memory: 1Gi", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "first"), "worker");
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "second"));
    kp_scenario_free(&s);
}

/* ---------- NodeClaims in flight ---------- */

Test(solver_basic_existing, in_flight_nodeclaim_takes_pods)
{
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "fresh", .in_flight = true, .alloc = "cpu: 1900m, memory: 1Gi, pods: '5'",
                      .claim_reqs = "{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-2]},"
                                    " {key: node.kubernetes.io/instance-type, operator: In, values: [small-instance-type]}"};
    managed(&y, &m);
    default_pool(&y);
    pod(&y, "first", "cpu: 1001m", NULL);
    pod(&y, "zone12", "cpu: 10m", "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}");
    pod(&y, "zone13", "cpu: 10m",
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{"
        "matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-1, test-zone-3]}]}]}}}");
    pod(&y, "second", "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "first"), "nc-fresh");
    cr_assert_str_eq(kp_scenario_node_of(&s, "zone12"), "nc-fresh");
    cr_assert_null(kp_scenario_node_of(&s, "zone13")); /* the in-flight node is in test-zone-2 */
    cr_assert_null(kp_scenario_node_of(&s, "second")); /* 1.001 + 1 cores exceed 1.9 */
    cr_assert_geq(kp_scenario_claim_of(&s, "second"), 0);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, deleting_in_flight_nodeclaim_is_not_used)
{
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "fresh", .in_flight = true, .deleting = true, .alloc = BIG};
    managed(&y, &m);
    default_pool(&y);
    pod(&y, "p", "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_null(kp_scenario_node_of(&s, "p"));
    cr_assert_eq(kp_scenario_claim_of(&s, "p"), 0);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, uninitialized_room_comes_from_the_nodeclaim)
{
    /* The Node registered but reports nothing yet: until it initializes, the
     * NodeClaim's allocatable stands in. */
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "booting", .initialized = false, .alloc = "cpu: '4', memory: 4Gi, pods: '10'",
                      .node_alloc = "pods: '10'"};
    managed(&y, &m);
    default_pool(&y);
    pod(&y, "p", "cpu: '3'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "booting");
    kp_scenario_free(&s);
}

Test(solver_basic_existing, initialized_nodes_are_preferred)
{
    yb y = {0};
    kp_scenario s;
    static const char *const names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        managed_node m = {.name = names[i], .initialized = i == 2, .alloc = BIG};
        managed(&y, &m);
    }
    default_pool(&y);
    pod(&y, "p", "cpu: 10m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "c");
    kp_scenario_free(&s);
}

/* ---------- taints of nodes that are still starting ---------- */

#define NOT_READY "[{key: node.kubernetes.io/not-ready, effect: NoExecute}]"
#define STARTUP "[{key: foo.com/taint, value: tainted, effect: NoSchedule}]"

static const struct starting_case {
    const char *name;
    bool initialized;
    const char *taints;
    const char *startup;
    bool on_node;
} starting_cases[] = {
    {"no taints", true, NULL, NULL, true},
    {"not-ready on an uninitialized node", false, NOT_READY, NULL, true},
    {"not-ready on an initialized node", true, NOT_READY, NULL, false},
    {"startup taint before initialization", false, STARTUP, STARTUP, true},
    {"startup taint back after initialization", true, STARTUP, STARTUP, false},
    {"other taint before initialization", false, "[{key: other.com/taint, effect: NoSchedule}]", STARTUP, false},
    {"initialized node with a taint", true, "[{key: foo.com/taint, value: tainted, effect: NoSchedule}]", NULL, false},
};

Test(solver_basic_existing, startup_and_ephemeral_taints_until_initialized)
{
    for (size_t i = 0; i < sizeof(starting_cases) / sizeof(starting_cases[0]); i++) {
        const struct starting_case *tc = &starting_cases[i];
        yb y = {0};
        kp_scenario s;
        managed_node m = {.name = "worker", .initialized = tc->initialized, .taints = tc->taints, .startup = tc->startup,
                          .alloc = "cpu: '16', memory: 32Gi, pods: '20'"};
        managed(&y, &m);
        default_pool(&y);
        pod(&y, "p", "cpu: '8'", NULL);
        run(&s, &y, FAKE_CATALOG);
        const char *where = kp_scenario_node_of(&s, "p");
        cr_assert_eq(where != NULL, tc->on_node, "%s", tc->name);
        if (!tc->on_node)
            cr_assert_geq(kp_scenario_claim_of(&s, "p"), 0, "%s: %s", tc->name, kp_scenario_error_of(&s, "p"));
        kp_scenario_free(&s);
    }
}

Test(solver_basic_existing, in_flight_nodeclaim_ignores_its_startup_taints)
{
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "fresh", .in_flight = true, .taints = STARTUP, .startup = STARTUP,
                      .alloc = "cpu: '4', memory: 4Gi, pods: '5'"};
    managed(&y, &m);
    default_pool(&y);
    pod(&y, "p", "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "nc-fresh");
    kp_scenario_free(&s);
}

/* ---------- existing capacity before new capacity ---------- */

Test(solver_basic_existing, fill_existing_then_launch)
{
    /* Room for two of five 1-core pods on the node; the rest go to one new NodeClaim. */
    yb y = {0};
    kp_scenario s;
    node(&y, "worker", NULL, NULL, "cpu: '2', memory: 8Gi, pods: '20'");
    default_pool(&y);
    deploy(&y, "app", 5, "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_nodes, 1);
    cr_assert_eq(s.plan->nodes[0].n_pods, 2);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_eq(kp_scenario_claim_pods(&s, 0), 3);
    cr_assert_eq(s.plan->n_scheduled, 5);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, kubelet_zeroed_extended_resource_before_initialization)
{
    /* The kubelet reports 0 GPUs until its device plugin starts; until the node
     * initializes, the NodeClaim's 2 GPUs stand in and the pod waits for it. */
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "gpu-node", .initialized = false,
                      .alloc = "cpu: '4', memory: 4Gi, pods: '5', nvidia.com/gpu: '2'",
                      .node_alloc = "cpu: '4', memory: 4Gi, pods: '5', nvidia.com/gpu: '0'"};
    managed(&y, &m);
    default_pool(&y);
    pod(&y, "p", "cpu: 10m, nvidia.com/gpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_node_of(&s, "p"), "gpu-node");
    cr_assert_eq(s.plan->n_claims, 0);
    kp_scenario_free(&s);
}

Test(solver_basic_existing, pods_of_a_deleting_node_get_a_new_home)
{
    /* What the provisioner asks when a node is marked for deletion: its pods
     * are pending again, and the node itself is no option. */
    yb y = {0};
    kp_scenario s;
    managed_node m = {.name = "retiring", .initialized = true, .deleting = true,
                      .alloc = "cpu: 1900m, memory: 2038Mi, pods: '5'"};
    managed(&y, &m);
    bound(&y, "evicted", "retiring", NULL, "memory: 100M");
    default_pool(&y);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.n_pending, 0);
    uint32_t pending[1];
    int idx = -1;
    for (uint32_t i = 0; i < s.snap->n_pods; i++)
        if (strcmp(s.snap->pods[i].ns_name, "default/evicted") == 0)
            idx = (int)i;
    cr_assert_geq(idx, 0);
    pending[0] = (uint32_t)idx;
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    kp_plan *plan = NULL;
    KP_ASSERT_OK(kp_solve(s.snap, &opts, pending, 1, &plan));
    cr_assert_eq(plan->n_nodes, 0);
    cr_assert_eq(plan->n_claims, 1);
    cr_assert_str_eq(sym(&s, s.snap->its[plan->claims[0].its[0]].name), "small-instance-type");
    kp_plan_free(plan);
    kp_scenario_free(&s);
}
