/*
 * Disruption candidates: which nodes the planner may take at all
 * (Karpenter's NewCandidate and ValidateNodeDisruptable, suite_test.go
 * "Candidate Filtering"). Node-level rules: managed or not, initialised,
 * deleting, the node's do-not-disrupt annotation, a NodePool that exists,
 * NodeClaims without a Node; and that every node kept has a readable reason.
 *
 * The scenario for each case: a subject node "a" (empty unless the case puts
 * pods on it) and, where a move needs room, a second node "b". With
 * consolidateAfter 0s and a 100% budget, a node the planner may take is taken.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

#define POOL_NAMED(name)                                                                           \
    "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: " name "}\n"               \
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: " \
    "default}, "                                                                                   \
    "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}}, "     \
    "disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: "  \
    "[{nodes: '100%'}]}}\n"
#define POOL POOL_NAMED("default")

/* A Node of NodePool `pool`; `meta` adds metadata fields (", annotations: {...}"),
 * `labels` adds labels (", key: value"), `ready` is its Ready condition. */
#define NODE_FULL(name, pool, meta, labels, ready)                                                 \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", creationTimestamp: '" OLD         \
    "'" meta ", labels: {karpenter.sh/nodepool: " pool ", karpenter.sh/registered: 'true', "       \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "       \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: " name                         \
    ", kubernetes.io/arch: amd64, "                                                                \
    "kubernetes.io/os: linux" labels "}}\nspec: {providerID: 'aws:///us-east-1a/i-" name "'}\n"    \
    "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: "    \
    "16Gi, pods: '58'}, "                                                                          \
    "conditions: [{type: Ready, status: '" ready "'}]}\n"
#define INIT       ", karpenter.sh/initialized: 'true'"
#define NODE(name) NODE_FULL(name, "default", "", INIT, "True")

#define UNMANAGED(name)                                                                            \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", creationTimestamp: '" OLD         \
    "', labels: {"                                                                                 \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "       \
    "kubernetes.io/hostname: " name ", kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n"     \
    "spec: {providerID: 'aws:///us-east-1a/i-" name "'}\n"                                         \
    "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: "    \
    "16Gi, pods: '58'}, "                                                                          \
    "conditions: [{type: Ready, status: 'True'}]}\n"

/* The NodeClaim of node `node` (or of no node, when none has that name). */
#define CLAIM_FULL(name, node, meta)                                                               \
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: " name                    \
    ", creationTimestamp: '" OLD "'" meta                                                          \
    ", labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m5.xlarge, "     \
    "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand, "             \
    "kubernetes.io/arch: amd64, "                                                                  \
    "kubernetes.io/os: linux}}\n"                                                                  \
    "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"        \
    "status: {providerID: 'aws:///us-east-1a/i-" node "', nodeName: " node ", "                    \
    "capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: 16Gi, pods: " \
    "'58'}, "                                                                                      \
    "conditions: [{type: Launched, status: 'True'}, {type: Initialized, status: 'True', "          \
    "lastTransitionTime: '" OLD "'}]}\n"

#define RS "{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}"

/* A running pod bound to `node`, asking for one CPU. */
#define POD(name, node, meta)                                                                      \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default" meta           \
    ", ownerReferences: [" RS "]}\n"                                                               \
    "spec: {nodeName: " node                                                                       \
    ", containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n"                 \
    "status: {phase: Running}\n"

static void run(kp_scenario *s, const char *yaml, const kp_disrupt_opts *opts)
{
    KP_ASSERT_OK(kp_scenario_run(s, yaml, "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, opts));
}

/* `node` stays, and its reason contains every one of `needles` (NULL-terminated). */
static void expect_kept(const kp_scenario *s, const char *node, const char *const *needles)
{
    cr_expect_eq(kp_scenario_disrupted_by(s, node), -1, "%s was disrupted", node);
    const char *why = kp_scenario_blocked_reason(s, node);
    cr_assert_not_null(why, "%s has no reason", node);
    for (size_t i = 0; needles[i]; i++)
        cr_expect(strstr(why, needles[i]) != NULL, "reason for %s lacks \"%s\": %s", node,
                  needles[i], why);
}

#define KEPT(s, node, ...) expect_kept((s), (node), (const char *const[]){__VA_ARGS__, NULL})

Test(disruption_candidates, unmanaged_node_is_never_a_candidate)
{
    kp_scenario s;
    /* Empty, old and in a cluster whose only NodePool would take it if it were
     * Karpenter's: without the nodepool label and a NodeClaim it is not. */
    run(&s, POOL UNMANAGED("u"), NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    cr_expect_eq(kp_scenario_disrupted_by(&s, "u"), -1);
    /* Only managed nodes are explained. */
    cr_expect_null(kp_scenario_blocked_reason(&s, "u"));
    kp_scenario_free(&s);
}

Test(disruption_candidates, managed_empty_node_next_to_unmanaged_one_goes)
{
    kp_scenario s;
    run(&s, POOL UNMANAGED("u") NODE("a"), NULL);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    cr_expect_eq(kp_scenario_disrupted_by(&s, "u"), -1);
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_of_a_nodepool_that_does_not_exist)
{
    kp_scenario s;
    run(&s, POOL NODE_FULL("a", "ghost", "", INIT, "True"), NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "NodePool", "ghost");
    kp_scenario_free(&s);
}

Test(disruption_candidates, uninitialized_node)
{
    kp_scenario s;
    /* Registered but without karpenter.sh/initialized. */
    run(&s, POOL NODE_FULL("a", "default", "", "", "True"), NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "not initialized");
    kp_scenario_free(&s);
}

Test(disruption_candidates, initialized_label_other_than_true)
{
    kp_scenario s;
    run(&s, POOL NODE_FULL("a", "default", "", ", karpenter.sh/initialized: 'false'", "True"),
        NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "not initialized");
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_being_deleted)
{
    kp_scenario s;
    run(&s,
        POOL NODE_FULL(
            "a", "default",
            ", deletionTimestamp: '2026-11-21T11:59:00Z', finalizers: [karpenter.sh/termination]",
            INIT, "True"),
        NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "deleted");
    kp_scenario_free(&s);
}

Test(disruption_candidates, nodeclaim_being_deleted)
{
    kp_scenario s;
    run(&s,
        POOL NODE("a") CLAIM_FULL("a-claim", "a", ", deletionTimestamp: '2026-11-21T11:59:00Z'"),
        NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "deleted");
    kp_scenario_free(&s);
}

Test(disruption_candidates, nodeclaim_without_a_node)
{
    kp_scenario s;
    /* Launched, never registered: nothing for disruption to act on yet. */
    run(&s, POOL CLAIM_FULL("pending-claim", "nowhere", ""), NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "pending-claim", "NodeClaim", "no node");
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_with_its_nodeclaim_is_a_candidate)
{
    kp_scenario s;
    run(&s, POOL NODE("a") CLAIM_FULL("a-claim", "a", ""), NULL);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}

/* ---------- the node's karpenter.sh/do-not-disrupt annotation ---------- */

Test(disruption_candidates, node_do_not_disrupt_true)
{
    kp_scenario s;
    run(&s,
        POOL NODE_FULL("a", "default", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", INIT,
                       "True"),
        NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "karpenter.sh/do-not-disrupt", "node");
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_do_not_disrupt_false_does_not_protect)
{
    kp_scenario s;
    run(&s,
        POOL NODE_FULL("a", "default", ", annotations: {karpenter.sh/do-not-disrupt: 'false'}",
                       INIT, "True"),
        NULL);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_do_not_disrupt_protects_a_node_with_pods_too)
{
    kp_scenario s;
    /* a's pod would fit on b, and b's on a: only b may go. */
    run(&s,
        POOL NODE_FULL("a", "default", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", INIT,
                       "True") NODE("b") POD("p", "a", "") POD("q", "b", ""),
        NULL);
    KEPT(&s, "a", "do-not-disrupt");
    cr_expect_geq(kp_scenario_disrupted_by(&s, "b"), 0);
    kp_scenario_free(&s);
}

/* ---------- pods that do not stop a node from being a candidate ---------- */

Test(disruption_candidates, pod_without_a_controller_does_not_block)
{
    kp_scenario s;
    /* Karpenter v1 moves bare pods like any other. */
    run(&s,
        POOL NODE("a")
            NODE("b") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: default}\n"
                      "spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: '1', "
                      "memory: 1Gi}}}]}\n"
                      "status: {phase: Running}\n" POD("q", "b", ""),
        NULL);
    cr_expect_geq(kp_scenario_disrupted_by(&s, "a"), 0);
    cr_expect_null(kp_scenario_blocked_reason(&s, "a"));
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_not_ready_is_still_a_candidate)
{
    kp_scenario s;
    /* NotReady only counts against the budget (the budgets suite); with 100%
     * of two nodes there is room for one more. */
    run(&s, POOL NODE_FULL("a", "default", "", INIT, "False") NODE("b") POD("q", "b", ""), NULL);
    cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), 0);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_without_zone_or_capacity_type_label_can_still_be_emptied)
{
    kp_scenario s;
    run(&s,
        POOL "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD
             "', labels: {"
             "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
             "karpenter.sh/initialized: 'true', "
             "node.kubernetes.io/instance-type: m5.xlarge, kubernetes.io/hostname: a}}\n"
             "spec: {providerID: 'aws:///us-east-1a/i-a'}\n"
             "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: "
             "Ready, status: 'True'}]}\n",
        NULL);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    kp_scenario_free(&s);
}

Test(disruption_candidates, node_of_an_unknown_instance_type_can_still_be_emptied)
{
    kp_scenario s;
    run(&s,
        POOL "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD
             "', labels: {"
             "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
             "karpenter.sh/initialized: 'true', "
             "node.kubernetes.io/instance-type: no-such-type.9xlarge, topology.kubernetes.io/zone: "
             "us-east-1a, "
             "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: a}}\n"
             "spec: {providerID: 'aws:///us-east-1a/i-a'}\n"
             "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: "
             "Ready, status: 'True'}]}\n",
        NULL);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}

Test(disruption_candidates, unknown_instance_type_blocks_consolidation_with_a_reason)
{
    kp_scenario s;
    /* Not empty: consolidation needs the node's price, which it cannot know. */
    run(&s,
        POOL "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD
             "', labels: {"
             "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
             "karpenter.sh/initialized: 'true', "
             "node.kubernetes.io/instance-type: no-such-type.9xlarge, topology.kubernetes.io/zone: "
             "us-east-1a, "
             "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: a, "
             "kubernetes.io/arch: amd64, "
             "kubernetes.io/os: linux}}\n"
             "spec: {providerID: 'aws:///us-east-1a/i-a'}\n"
             "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: "
             "Ready, status: 'True'}]}\n" POD("p", "a", ""),
        NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    KEPT(&s, "a", "no-such-type.9xlarge");
    kp_scenario_free(&s);
}

/* ---------- every kept node is explained ---------- */

Test(disruption_candidates, every_kept_managed_node_has_a_reason)
{
    kp_scenario s;
    /* The empty unmanaged node comes first: the solver reads past its pod list
     * when the last node is empty and every pod is bound
     * (test_disruption_candidates_bugs.c). */
    run(&s,
        POOL UNMANAGED("u")
            NODE_FULL("dnd", "default", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}",
                      INIT, "True") NODE_FULL("young", "default", "", "", "True")
                NODE_FULL("orphan", "ghost", "", INIT, "True") NODE("busy")
                    POD("p", "busy", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"),
        NULL);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    static const char *const kept[] = {"dnd", "young", "orphan", "busy"};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        const char *why = kp_scenario_blocked_reason(&s, kept[i]);
        cr_assert_not_null(why, "%s", kept[i]);
        cr_expect_gt(strlen(why), 10, "%s: %s", kept[i], why);
    }
    /* Each reason is its own: they name different things. */
    cr_expect_str_neq(kp_scenario_blocked_reason(&s, "dnd"),
                      kp_scenario_blocked_reason(&s, "young"));
    cr_expect(strstr(kp_scenario_blocked_reason(&s, "busy"), "default/p") != NULL, "%s",
              kp_scenario_blocked_reason(&s, "busy"));
    cr_expect_null(kp_scenario_blocked_reason(&s, "u"));
    kp_scenario_free(&s);
}

Test(disruption_candidates, blocked_nodes_appear_in_the_json_output)
{
    kp_scenario s;
    run(&s,
        POOL NODE_FULL("a", "default", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", INIT,
                       "True"),
        NULL);
    const cJSON *blocked = cJSON_GetObjectItemCaseSensitive(s.disruption_json, "blocked");
    cr_assert(cJSON_IsArray(blocked));
    cr_assert_eq(cJSON_GetArraySize(blocked), 1);
    const cJSON *row = cJSON_GetArrayItem(blocked, 0);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(row, "node")->valuestring, "a");
    cr_expect(strstr(cJSON_GetObjectItemCaseSensitive(row, "reason")->valuestring,
                     "do-not-disrupt") != NULL);
    kp_scenario_free(&s);
}
