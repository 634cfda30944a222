/*
 * Solver scenarios: behaviours the solver once got wrong
 * against Karpenter, kept as regression tests (each names the place in
 * Karpenter's sources that decides the behaviour).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

Test(solver_basic_regressions, daemonset_without_host_ports)
{
    /* Most DaemonSets declare no host port. Grouping their overhead must not
     * copy from a NULL port list (undefined behaviour the sanitizers abort on;
     * the DaemonSets in the other files have no host ports either). */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {"
               "containers: [{name: c, resources: {requests: {cpu: '2', memory: 2Gi}}}]}}}\n");
    pod(&y, "p", "cpu: '1', memory: 1Gi", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "p")), "default-instance-type");
    kp_scenario_free(&s);
}

Test(solver_basic_regressions, daemon_overhead_from_the_daemonsets_own_pod)
{
    /* Karpenter sizes a DaemonSet by its newest pod when one exists (a
     * LimitRange may have changed the requests), not by the template
     * (Provisioner.getDaemonSetPods, Cluster.GetDaemonSetPod): 2 cores beside
     * the 1-core pod fit the 4-core type; the template's 4 would not. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, uid: ds-uid}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {"
               "containers: [{name: c, resources: {requests: {cpu: '4', memory: 4Gi}}" DS_PORT "}]}}}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\n"
               "metadata: {name: ds-abcde, labels: {ds: ds}, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet,"
               " name: ds, uid: ds-uid, controller: true}]}\n"
               "spec: {containers: [{name: c, resources: {requests: {cpu: '2', memory: 2Gi}}" DS_PORT "}]}\n");
    pod(&y, "p", "cpu: '1', memory: 1Gi", "nodeSelector: {karpenter.sh/nodepool: default}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "p")), "default-instance-type");
    kp_scenario_free(&s);
}

Test(solver_basic_regressions, static_nodepool_launches_nothing)
{
    /* A NodePool with spec.replicas is static: the provisioner leaves it out
     * (Provisioner.NewScheduler filters nodepoolutils.IsStatic). */
    yb y = {0};
    kp_scenario s;
    pool(&y, "static", NULL, NULL, NULL, "replicas: 2");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);

    pool(&y, "dynamic", NULL, NULL, NULL, NULL);
    pool(&y, "static", NULL, NULL, NULL, "replicas: 1, weight: 100");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "p")), "dynamic");
    kp_scenario_free(&s);
}

Test(solver_basic_regressions, equal_weights_order_by_name_descending)
{
    /* Karpenter's OrderByWeight (utils/nodepool) breaks ties by name, last name first. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "alpha", NULL, NULL, NULL, NULL);
    pool(&y, "beta", NULL, NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "p")), "beta");
    kp_scenario_free(&s);
}

Test(solver_basic_regressions, nodepool_not_ready_is_ignored)
{
    /* Karpenter only provisions from NodePools whose Ready condition is True
     * (Provisioner.NewScheduler).
     * Manifests often carry no status at all; this asks only that an explicit
     * Ready=False keeps the NodePool out. */
    yb y = {0};
    kp_scenario s;
    yb_add(&y, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: broken}\n"
               "spec: {template: {spec: {" NODECLASS ", requirements: []}}}\n"
               "status: {conditions: [{type: Ready, status: 'False', reason: NodeClassNotReady, message: not ready,"
               " lastTransitionTime: '2024-01-01T00:00:00Z'}]}\n");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_regressions, deleting_nodes_do_not_count_against_limits)
{
    /* A node marked for deletion no longer counts towards its NodePool's
     * limits (Karpenter's updateNodePoolResources), so its replacement fits. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, "limits: {nodes: '1', cpu: '4'}");
    yb_add(&y, "apiVersion: v1\nkind: Node\n"
               "metadata: {name: old, deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [x],"
               " labels: {karpenter.sh/nodepool: default, karpenter.sh/initialized: 'true'}}\n"
               "status: {capacity: {cpu: '4', memory: 4Gi, pods: '5'}}\n");
    pod(&y, "p", "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_geq(kp_scenario_claim_of(&s, "p"), 0, "%s", kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}
