/*
 * Candidate rules the planner once got wrong against Karpenter (nominated
 * nodes, InstanceTerminating claims, AlwaysAllow budgets for unready pods)
 * and a solver fault on an empty last node, kept as regression tests; each
 * comment says where Karpenter decides it.
 */
#include <criterion/criterion.h>
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
    "disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: "  \
    "[{nodes: '100%'}]}}\n"

#define NODE(name)                                                                                 \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", creationTimestamp: '" OLD         \
    "', labels: {"                                                                                 \
    "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: "  \
    "'true', "                                                                                     \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "       \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: " name                         \
    ", kubernetes.io/arch: amd64, "                                                                \
    "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-" name "'}\n"              \
    "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: "    \
    "16Gi, pods: '58'}, "                                                                          \
    "conditions: [{type: Ready, status: 'True'}]}\n"

#define POD(name, node, meta, status)                                                              \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default" meta           \
    ", ownerReferences: "                                                                          \
    "[{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}\n"            \
    "spec: {nodeName: " node                                                                       \
    ", containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n"                 \
    "status: {phase: Running" status "}\n"

#define PENDING(name)                                                                              \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                       \
    ", namespace: default, ownerReferences: "                                                      \
    "[{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}\n"            \
    "spec: {containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\nstatus: "    \
    "{phase: Pending}\n"

static void run(kp_scenario *s, const char *yaml)
{
    KP_ASSERT_OK(kp_scenario_run(s, yaml, "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, NULL));
}

/*
 * The solver reads past the end of its pod list when the snapshot's last node
 * holds no pod and every pod is bound: enodes_init (shared/scheduling/
 * existing.c) passes `pods + first[i]` with a count of 0 for that node, and
 * init_enode copies max(n, 1) entries from it, one past the array. ASan
 * reports a heap-buffer-overflow in kp_solve, already in kp_scenario_run.
 * The other suites order their nodes to stay clear of it.
 */
Test(disruption_candidates_3_regressions, last_node_empty_while_every_pod_is_bound)
{
    kp_scenario s;
    run(&s, POOL NODE("b") NODE("a") POD("q", "b", "", ""));
    cr_assert_eq(kp_scenario_n_commands(&s), 2);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}

/*
 * A node the provisioner has just picked for a pending pod is nominated, and
 * a nominated node is no candidate for any method (Karpenter:
 * pkg/controllers/provisioning/scheduling/scheduler.go:316 nominates every
 * existing node that receives pods; pkg/controllers/state/statenode.go:226
 * refuses it, "node is nominated for a pending pod"; suite_test.go:1678).
 * Before the fix: the scenario's plan puts the pending pod on "a", yet emptiness takes
 * "a" (method_emptiness in shared/disruption/methods.c never runs a
 * simulation and facts.c has no notion of nomination), and the pod is left
 * to a new node.
 */
Test(disruption_candidates_3_regressions, empty_node_nominated_for_a_pending_pod)
{
    kp_scenario s;
    run(&s, POOL NODE("a") PENDING("waiting"));
    cr_assert_str_eq(kp_scenario_node_of(&s, "waiting"), "a");
    cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), -1,
                 "the node the pending pod is headed for was disrupted");
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "nominated") || strstr(why, "pending"), "%s", why);
    kp_scenario_free(&s);
}

Test(disruption_candidates_3_regressions, busy_node_nominated_for_a_pending_pod)
{
    kp_scenario s;
    /* a holds one pod and is the home planned for another: both would fit a
     * cheaper node, but Karpenter leaves a nominated node alone. */
    run(&s, POOL NODE("a") POD("p", "a", "", "") PENDING("waiting"));
    cr_assert_str_eq(kp_scenario_node_of(&s, "waiting"), "a");
    cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), -1, "the nominated node was disrupted");
    kp_scenario_free(&s);
}

/*
 * A NodeClaim whose InstanceTerminating condition is True is being deleted
 * (Karpenter: pkg/controllers/state/statenode.go:447 Deleted(), so
 * MarkedForDeletion() and ValidateNodeDisruptable refuses it, "node is
 * deleting or marked for deletion"). Before the fix: snapshot_build.c sets `deleting`
 * only from deletion timestamps, so the node is an ordinary candidate and
 * emptiness takes it.
 */
Test(disruption_candidates_3_regressions, nodeclaim_with_instance_terminating_condition)
{
    kp_scenario s;
    run(&s, POOL NODE("a") "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: "
                           "a-claim, creationTimestamp: '" OLD "', "
                           "labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: "
                           "on-demand}}\n"
                           "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, "
                           "name: default}}\n"
                           "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, conditions: "
                           "[{type: Launched, status: 'True'}, "
                           "{type: Initialized, status: 'True', lastTransitionTime: '" OLD "'}, "
                           "{type: InstanceTerminating, status: 'True'}]}\n");
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why, "a terminating node was disrupted");
    cr_expect(strstr(why, "delet") != NULL, "%s", why);
    kp_scenario_free(&s);
}

/*
 * A PodDisruptionBudget with unhealthyPodEvictionPolicy: AlwaysAllow never
 * protects a pod whose Ready condition is False (Karpenter:
 * pkg/utils/pdb/pdb.go:110-115, as the eviction API does). Before the fix: the PDB
 * decoder (shared/api/decode_workloads.c) does not read the policy and
 * pods_protected (shared/disruption/facts.c) blocks on disruptionsAllowed
 * alone, so the node stays.
 */
Test(disruption_candidates_3_regressions, unhealthy_pod_under_an_always_allow_pdb)
{
    kp_scenario s;
    run(&s,
        POOL NODE("b") NODE("a") POD("q", "b", "", "") POD(
            "p", "a", ", labels: {app: web}",
            ", conditions: [{type: Ready, status: 'False'}]") "---\napiVersion: policy/v1\nkind: "
                                                              "PodDisruptionBudget\nmetadata: "
                                                              "{name: web, namespace: default}\n"
                                                              "spec: {maxUnavailable: 0, "
                                                              "unhealthyPodEvictionPolicy: "
                                                              "AlwaysAllow, "
                                                              "selector: {matchLabels: {app: "
                                                              "web}}}\nstatus: "
                                                              "{disruptionsAllowed: 0}\n");
    cr_expect_geq(kp_scenario_disrupted_by(&s, "a"), 0, "a kept: %s",
                  kp_scenario_blocked_reason(&s, "a") ? kp_scenario_blocked_reason(&s, "a") : "-");
    kp_scenario_free(&s);
}
