/*
 * A budget rule the planner once got wrong against Karpenter (claims whose
 * instance is terminating do not count), kept as a regression test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

#define POOL                                                                                       \
    "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"                \
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: " \
    "default}, "                                                                                   \
    "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}}, "     \
    "disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: "        \
    "'50%'}]}}\n"

/* A Node and its NodeClaim; `conditions` adds NodeClaim conditions. */
#define NODE(name, conditions)                                                                     \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", creationTimestamp: '" OLD         \
    "', labels: {"                                                                                 \
    "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: "  \
    "'true', "                                                                                     \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "       \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: " name "}}\n"                  \
    "spec: {providerID: 'aws:///us-east-1a/i-" name "'}\n"                                         \
    "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: Ready, "      \
    "status: 'True'}]}\n"                                                                          \
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: " name                    \
    "-claim, creationTimestamp: '" OLD "', "                                                       \
    "labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand}}\n"           \
    "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"        \
    "status: {providerID: 'aws:///us-east-1a/i-" name "', nodeName: " name                         \
    ", conditions: [{type: Launched, "                                                             \
    "status: 'True'}, {type: Initialized, status: 'True', lastTransitionTime: '" OLD               \
    "'}" conditions "]}\n"

#define TERMINATING ", {type: InstanceTerminating, status: 'True'}"

/*
 * A NodeClaim whose instance is already terminating is neither counted in its
 * NodePool's total nor charged to the budget (Karpenter:
 * pkg/controllers/disruption/helpers.go:278-283 skips it in
 * BuildDisruptionBudgetMapping; suite_test.go:755), and it is no candidate
 * (statenode.go:447). With 50% of the two live nodes, one may go. Before the fix:
 * budgets_compute (shared/disruption/budgets.c) counts all four, allowing
 * two, and the terminating nodes are candidates too (snapshot_build.c sets
 * `deleting` from deletion timestamps only).
 */
Test(disruption_budgets_2_regressions, terminating_nodeclaims_are_not_counted)
{
    kp_scenario s;
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.max_loops = 1;
    KP_ASSERT_OK(kp_scenario_run(&s, POOL NODE("t1", TERMINATING) NODE("t2", TERMINATING) NODE("n1", "") NODE("n2", ""), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(&s, NOW, &opts));
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    const char *nodes = kp_scenario_command_nodes(&s, 0);
    cr_expect(strcmp(nodes, "n1") == 0 || strcmp(nodes, "n2") == 0, "emptiness took %s", nodes);
    kp_scenario_free(&s);
}
