/*
 * Drift rules the planner once got wrong against Karpenter (no capacity for
 * pods that will not be evicted; a drifted node names what holds its drift),
 * kept as regression tests.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

#define POOL(disruption)                                                                           \
    "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"                \
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: " \
    "default}, "                                                                                   \
    "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}}, "     \
    "disruption: {" disruption "}}\n"

/* Node a and its drifted NodeClaim; `spec` adds NodeClaim spec fields. */
#define DRIFTED_A(spec)                                                                            \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD "', labels: {" \
    "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: "  \
    "'true', "                                                                                     \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "       \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: a, kubernetes.io/arch: "       \
    "amd64, "                                                                                      \
    "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-a'}\n"                     \
    "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: Ready, "      \
    "status: 'True'}]}\n"                                                                          \
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a-claim, "                \
    "creationTimestamp: '" OLD "', "                                                               \
    "labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand}}\n"           \
    "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}" spec      \
    "}\n"                                                                                          \
    "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, conditions: [{type: Launched, "    \
    "status: 'True'}, "                                                                            \
    "{type: Initialized, status: 'True', lastTransitionTime: '" OLD "'}, "                         \
    "{type: Drifted, status: 'True', reason: AMIDrifted, lastTransitionTime: "                     \
    "'2026-11-21T09:00:00Z'}]}\n"

#define POD(name, meta, spec)                                                                      \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default" meta           \
    ", ownerReferences: "                                                                          \
    "[{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}\n"            \
    "spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: '1', memory: "         \
    "1Gi}}}]" spec "}\n"                                                                           \
    "status: {phase: Running}\n"

static void run(kp_scenario *s, const char *yaml)
{
    KP_ASSERT_OK(kp_scenario_run(s, yaml, "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, NULL));
}

/*
 * With a terminationGracePeriod a drifted node is disrupted even though a pod
 * blocks eviction, but no capacity is launched for that pod: it will not be
 * evicted until the grace period forces it, so a replacement would sit idle
 * (Karpenter: pkg/controllers/disruption/helpers.go:78-94 keeps only
 * IsCurrentlyReschedulable pods — not do-not-disrupt, not under a fully
 * blocking PDB; drift_test.go:543). Before the fix: simulate_move
 * (shared/disruption/simulate.c, collect) moves every reschedulable pod of
 * the candidate, so the drift command launches a replacement for the
 * protected pod.
 */
Test(disruption_drift_3_regressions, no_replacement_for_a_do_not_disrupt_pod)
{
    kp_scenario s;
    run(&s, POOL("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never")
                DRIFTED_A(", terminationGracePeriod: 5m")
                    POD("p", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", ""));
    cr_assert_geq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "drift");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0,
                 "launched capacity for a pod that will not leave");
    kp_scenario_free(&s);
}

Test(disruption_drift_3_regressions, no_replacement_for_a_pod_under_a_fully_blocking_pdb)
{
    kp_scenario s;
    run(&s, POOL("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never")
                DRIFTED_A(", terminationGracePeriod: 5m")
                    POD("p", ", labels: {app: web}",
                        "") "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: "
                            "{name: web, namespace: default}\n"
                            "spec: {maxUnavailable: 0, selector: {matchLabels: {app: "
                            "web}}}\nstatus: {disruptionsAllowed: 0}\n");
    cr_assert_geq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "drift");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0,
                 "launched capacity for a pod that will not leave");
    kp_scenario_free(&s);
}

/*
 * A drifted node whose pods cannot be rescheduled is reported as blocked with
 * the scheduling errors (Karpenter: pkg/controllers/disruption/drift.go:92-95
 * publishes a Blocked event naming them). Before the fix: method_drift notes "drifted
 * (...), but pod ... would have nowhere to go", but note_why keeps only the
 * latest reason and the consolidation methods, which run after drift,
 * overwrite it (consolidation_candidates in shared/disruption/methods.c), so
 * the node is explained by consolidateAfter and the pod is never named.
 */
Test(disruption_drift_3_regressions, drifted_node_whose_pod_cannot_move_names_the_pod)
{
    kp_scenario s;
    run(&s, POOL("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never")
                DRIFTED_A("") POD("pinned", "", ", nodeSelector: {kubernetes.io/hostname: a}"));
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "drifted") && strstr(why, "default/pinned"), "%s", why);
    kp_scenario_free(&s);
}

/*
 * The same overwrite hides the budget that holds a drifted node: the node is
 * explained by the consolidation policy, not by the Drifted budget that
 * stopped the drift (the brief's rule that every kept node names what holds
 * it; Karpenter reports the budget through its NodePool event,
 * helpers.go:308-310).
 */
Test(disruption_drift_3_regressions, drifted_node_held_by_the_budget_names_the_budget)
{
    kp_scenario s;
    run(&s, POOL("consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '0', "
                 "reasons: [Drifted]}]") DRIFTED_A("") POD("p", "", ""));
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "budget") && strstr(why, "Drifted"), "%s", why);
    kp_scenario_free(&s);
}
