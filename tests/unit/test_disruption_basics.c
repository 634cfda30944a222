/*
 * Disruption planning through the scenario harness: the smallest cases of
 * each rule (an empty node goes, a young one waits for consolidateAfter, a
 * do-not-disrupt pod keeps its node). The wider suites are test_disruption_*.c.
 */
#include <criterion/criterion.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define POOL                                                                                                   \
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"                                 \
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "   \
    "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}}, "                  \
    "disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m}}\n"

#define NODE(name, created)                                                                                    \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", creationTimestamp: '" created "', labels: {"   \
    "karpenter.sh/nodepool: default, karpenter.sh/initialized: 'true', karpenter.sh/registered: 'true', "       \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "                    \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: " name ", kubernetes.io/arch: amd64, "      \
    "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-" name "'}\n"                           \
    "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, " \
    "conditions: [{type: Ready, status: 'True'}]}\n"

#define BOUND(name, node, annotations)                                                                         \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", annotations: {" annotations "}, "              \
    "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}\n"       \
    "spec: {nodeName: " node ", containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n"    \
    "status: {phase: Running}\n"

#define NOW "2026-11-21T12:00:00Z"

Test(disruption_basics, empty_node_is_removed)
{
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(&s, POOL NODE("a", "2026-11-20T08:00:00Z") NODE("b", "2026-11-20T08:00:00Z") BOUND("p", "b", ""), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(&s, NOW, NULL));
    cr_assert_geq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0);
    /* Then b's one small pod moves to a cheaper type than m5.xlarge. */
    cr_assert_eq(kp_scenario_n_commands(&s), 2);
    cr_expect_str_eq(kp_scenario_command_method(&s, 1), "single-node consolidation");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 1), "b");
    cr_expect_eq(kp_scenario_command_replacements(&s, 1), 1);
    cr_expect_null(kp_scenario_blocked_reason(&s, "b"));
    kp_scenario_free(&s);
}

Test(disruption_basics, consolidate_after_not_elapsed_keeps_an_empty_node)
{
    kp_scenario s;
    /* Created two minutes before NOW and never held a pod: consolidateAfter 5m
     * counts from then. */
    KP_ASSERT_OK(kp_scenario_run(&s, POOL NODE("a", "2026-11-21T11:58:00Z"), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(&s, NOW, NULL));
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "consolidateAfter") != NULL, "reason: %s", why);
    kp_scenario_free(&s);
}

Test(disruption_basics, do_not_disrupt_pod_keeps_its_node)
{
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(&s, POOL NODE("a", "2026-11-20T08:00:00Z") NODE("b", "2026-11-20T08:00:00Z") BOUND("p", "a", "karpenter.sh/do-not-disrupt: 'true'") BOUND("q", "b", ""), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(&s, NOW, NULL));
    cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), -1);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "do-not-disrupt") != NULL, "reason: %s", why);
    /* b's one pod fits on a, so b goes. */
    cr_expect_geq(kp_scenario_disrupted_by(&s, "b"), 0);
    kp_scenario_free(&s);
}
