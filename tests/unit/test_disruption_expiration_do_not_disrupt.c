/*
 * An expiration rule the planner once got wrong against Karpenter (the node
 * do-not-disrupt annotation does not hold expiration), kept as a regression test.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

/*
 * Expiration is forceful: the karpenter.sh/do-not-disrupt annotation on a
 * Node does not exclude it (Karpenter's documentation, concepts/disruption.md,
 * "Pod-Level Controls": the annotation "does not exclude nodes from the
 * forceful disruption methods: Expiration, ..."; the expiration controller,
 * pkg/controllers/nodeclaim/expiration/controller.go:58-84, looks only at
 * deletion and expireAfter). Before the fix: facts_for (shared/disruption/facts.c)
 * returns as soon as node_not_disruptable finds the annotation, before
 * expiry() runs, so the node is never marked expired.
 */
Test(disruption_expiration_2_regressions, node_do_not_disrupt_does_not_hold_expiration)
{
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(
        &s,
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"
        "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, "
        "name: default}, "
        "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: "
        "[on-demand]}]}}, "
        "disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: "
        "Never}}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD "', "
        "annotations: {karpenter.sh/do-not-disrupt: 'true'}, labels: {"
        "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
        "karpenter.sh/initialized: 'true', "
        "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: a}}\n"
        "spec: {providerID: 'aws:///us-east-1a/i-a'}\n"
        "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: "
        "Ready, status: 'True'}]}\n"
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a-claim, "
        "creationTimestamp: '2026-11-19T12:00:00Z', labels: {karpenter.sh/nodepool: default, "
        "karpenter.sh/capacity-type: on-demand}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "expireAfter: 24h}\n"
        "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, conditions: [{type: "
        "Launched, status: 'True'}, "
        "{type: Initialized, status: 'True', lastTransitionTime: '" OLD "'}]}\n",
        "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(&s, NOW, NULL));
    cr_assert_eq(kp_scenario_n_commands(&s), 1, "the expired node stayed: %s",
                 kp_scenario_blocked_reason(&s, "a") ? kp_scenario_blocked_reason(&s, "a") : "-");
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "expiration");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}
