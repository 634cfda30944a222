/*
 * Drift: when is a NodeClaim drifted (Karpenter's Drifted
 * condition, pkg/controllers/nodeclaim/disruption/drift_test.go): the
 * NodePool hash against the NodeClaim's when their hash versions agree, the
 * NodePool's requirements against the NodeClaim's labels, then a Drifted
 * condition the cloud provider set.
 *
 * Each case puts one pod on the subject node "a" and leaves room for it on
 * node "b" (a Node without a NodeClaim, so never drifted itself); with
 * consolidateAfter: Never nothing but drift moves it. A drifted node goes in a
 * drift command; one that is not stays, held by consolidateAfter: Never.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

#define ON_DEMAND "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}"
#define HASH(h, v)                                                                                 \
    "annotations: {karpenter.sh/nodepool-hash: '" h "', karpenter.sh/nodepool-hash-version: " v "}"

typedef struct drift_case {
    const char *name;
    const char *pool_meta;    /* extra NodePool metadata, e.g. HASH(...) */
    const char *requirements; /* the NodePool's requirements (a YAML flow list's items) */
    const char *claim_meta;   /* extra NodeClaim metadata */
    const char *claim_labels; /* NodeClaim labels besides its NodePool */
    const char *conditions;   /* extra NodeClaim conditions */
    const char *reason; /* the reason Karpenter records on the condition, or NULL: not drifted */
} drift_case;

#define STD_LABELS                                                                                 \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/arch: amd64, kubernetes.io/os: linux, "  \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a"

static const drift_case drift_cases[] = {
    /* the NodePool hash */
    {"hashes differ, same version", HASH("1111", "v3"), ON_DEMAND, HASH("2222", "v3"), STD_LABELS,
     "", "NodePoolDrifted"},
    {"hashes equal", HASH("1111", "v3"), ON_DEMAND, HASH("1111", "v3"), STD_LABELS, "", NULL},
    {"hashes differ, versions differ", HASH("1111", "v3"), ON_DEMAND, HASH("2222", "v2"),
     STD_LABELS, "", NULL},
    {"NodeClaim without hash version", HASH("1111", "v3"), ON_DEMAND,
     "annotations: {karpenter.sh/nodepool-hash: '2222'}", STD_LABELS, "", NULL},
    {"NodeClaim without hash", HASH("1111", "v3"), ON_DEMAND,
     "annotations: {karpenter.sh/nodepool-hash-version: v3}", STD_LABELS, "", NULL},
    {"NodePool without hash", "annotations: {karpenter.sh/nodepool-hash-version: v3}", ON_DEMAND,
     HASH("2222", "v3"), STD_LABELS, "", NULL},
    /* the NodePool's requirements against the NodeClaim's labels */
    {"capacity type changed", "", "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}",
     "", STD_LABELS, "", "RequirementsDrifted"},
    {"requirement added on a label the NodeClaim lacks", "",
     ON_DEMAND ", {key: kubernetes.io/arch, operator: In, values: [amd64]}", "",
     "karpenter.sh/capacity-type: on-demand, kubernetes.io/os: linux", "", "RequirementsDrifted"},
    {"requirement expanded", "",
     ON_DEMAND ", {key: kubernetes.io/os, operator: In, values: [linux, windows]}", "", STD_LABELS,
     "", NULL},
    {"requirement reduced", "",
     ON_DEMAND ", {key: kubernetes.io/os, operator: In, values: [windows]}", "", STD_LABELS, "",
     "RequirementsDrifted"},
    {"requirement set to Exists", "", ON_DEMAND ", {key: kubernetes.io/os, operator: Exists}", "",
     STD_LABELS, "", NULL},
    {"requirement set to DoesNotExist", "",
     ON_DEMAND ", {key: kubernetes.io/os, operator: DoesNotExist}", "", STD_LABELS, "",
     "RequirementsDrifted"},
    {"Gt no longer satisfied", "",
     ON_DEMAND ", {key: example.com/tier, operator: Gt, values: ['10']}", "",
     STD_LABELS ", example.com/tier: '5'", "", "RequirementsDrifted"},
    {"Lt no longer satisfied", "",
     ON_DEMAND ", {key: example.com/tier, operator: Lt, values: ['1']}", "",
     STD_LABELS ", example.com/tier: '2'", "", "RequirementsDrifted"},
    {"Gt still satisfied", "", ON_DEMAND ", {key: example.com/tier, operator: Gt, values: ['2']}",
     "", STD_LABELS ", example.com/tier: '5'", "", NULL},
    {"NotIn on a label the NodeClaim lacks", "",
     ON_DEMAND ", {key: example.com/team, operator: NotIn, values: [x]}", "", STD_LABELS, "", NULL},
    {"instance type no longer allowed", "",
     ON_DEMAND ", {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}", "",
     STD_LABELS, "", "RequirementsDrifted"},
    /* the Drifted condition (the cloud provider's verdict) */
    {"Drifted condition true", "", ON_DEMAND, "", STD_LABELS,
     ", {type: Drifted, status: 'True', reason: AMIDrifted}", "AMIDrifted"},
    {"Drifted condition false", "", ON_DEMAND, "", STD_LABELS,
     ", {type: Drifted, status: 'False', reason: NotDrifted}", NULL},
    /* the order of the checks */
    {"hash before requirements", HASH("1111", "v3"),
     "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}", HASH("2222", "v3"),
     STD_LABELS, "", "NodePoolDrifted"},
    {"requirements before the condition", "",
     "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}", "", STD_LABELS,
     ", {type: Drifted, status: 'True', reason: AMIDrifted}", "RequirementsDrifted"},
};

static size_t *indices(size_t n)
{
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return idx;
}

ParameterizedTestParameters(disruption_drift, detection)
{
    size_t n = sizeof(drift_cases) / sizeof(drift_cases[0]);
    return cr_make_param_array(size_t, indices(n), n, NULL);
}

ParameterizedTest(size_t *i, disruption_drift, detection)
{
    const drift_case *c = &drift_cases[*i];
    static char yaml[1 << 14];
    int n = snprintf(
        yaml, sizeof(yaml),
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default%s%s}\n"
        "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, "
        "name: default}, "
        "requirements: [%s]}}, disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, "
        "consolidateAfter: Never, "
        "budgets: [{nodes: '100%%'}]}}\n"
        /* b (empty) before a: the solver reads past its pod list when the last
         * node is empty and every pod is bound (test_disruption_candidates_bugs.c). */
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: b, creationTimestamp: '" OLD
        "', labels: {"
        "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
        "karpenter.sh/initialized: 'true', "
        "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: b, kubernetes.io/arch: "
        "amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-b'}\n"
        "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: Ready, "
        "status: 'True'}]}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD
        "', labels: {"
        "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
        "karpenter.sh/initialized: 'true', "
        "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: a, kubernetes.io/arch: "
        "amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-a'}\n"
        "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: Ready, "
        "status: 'True'}]}\n"
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a-claim, "
        "creationTimestamp: '" OLD "'%s%s, "
        "labels: {karpenter.sh/nodepool: default, %s}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
        "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, conditions: [{type: Launched, "
        "status: 'True'}, "
        "{type: Initialized, status: 'True', lastTransitionTime: '" OLD "'}%s]}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, ownerReferences: "
        "[{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}\n"
        "spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: '1', memory: "
        "1Gi}}}]}\n"
        "status: {phase: Running}\n",
        *c->pool_meta ? ", " : "", c->pool_meta, c->requirements, *c->claim_meta ? ", " : "",
        c->claim_meta, c->claim_labels, c->conditions);
    cr_assert(n > 0 && (size_t)n < sizeof(yaml));
    kp_scenario s;
    cr_assert_eq(kp_scenario_run(&s, yaml, "builtin", NULL), 0, "%s: %s", c->name, kp_error_last());
    cr_assert_eq(kp_scenario_disrupt(&s, NOW, NULL), 0, "%s: %s", c->name, kp_error_last());
    if (c->reason) {
        cr_assert_eq(kp_scenario_n_commands(&s), 1, "%s: %s", c->name,
                     kp_scenario_blocked_reason(&s, "a") ? kp_scenario_blocked_reason(&s, "a")
                                                         : "-");
        cr_expect_str_eq(kp_scenario_command_method(&s, 0), "drift", "%s", c->name);
        cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a", "%s", c->name);
        /* The pod moves to b: nothing to launch. */
        cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0, "%s", c->name);
    } else {
        cr_expect_eq(kp_scenario_n_commands(&s), 0, "%s", c->name);
        const char *why = kp_scenario_blocked_reason(&s, "a");
        cr_assert_not_null(why, "%s", c->name);
        cr_expect(strstr(why, "Never") != NULL, "%s: %s", c->name, why);
    }
    kp_scenario_free(&s);
}

Test(disruption_drift, a_node_without_a_nodeclaim_is_not_drifted)
{
    kp_scenario s;
    /* The NodePool now wants spot; the on-demand Node has no NodeClaim to
     * compare, so there is nothing to call drifted. */
    KP_ASSERT_OK(kp_scenario_run( &s, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n" "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, " "name: default}, " "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]}}, " "disruption: {consolidateAfter: Never, budgets: [{nodes: '100%'}]}}\n" "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD "', labels: {" "karpenter.sh/nodepool: default, karpenter.sh/initialized: 'true', " "node.kubernetes.io/instance-type: m5.xlarge, " "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand, " "kubernetes.io/hostname: a}}\n" "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: " "Ready, status: 'True'}]}\n" "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n" "spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: " "'1'}}}]}\nstatus: {phase: Running}\n", "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(&s, NOW, NULL));
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "drift") == NULL, "%s", why);
    kp_scenario_free(&s);
}
