/*
 * Emptiness (Karpenter's Emptiness method, emptiness_test.go): empty nodes go
 * together in one command, without replacements, within the Empty budgets,
 * once consolidateAfter has passed. What "empty" means: no pod that would need
 * a new home — DaemonSet, mirror, terminal and terminating pods do not count
 * (a terminating StatefulSet pod does), nor pods whose eviction cost is zero.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"
/* us-east-1 on-demand price of m5.xlarge in the built-in catalog */
#define M5_XLARGE_PRICE 0.192

static void add_pool(kp_yaml *b, const char *name, const char *disruption)
{
    char spec[256];
    snprintf(spec, sizeof(spec), "disruption: {%s}", disruption);
    kp_yaml_nodepool(b, &(kp_yaml_pool){.name = name, .requirements = "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}", .spec = spec});
}

#define WHEN_EMPTY                                                                                 \
    "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '100%'}]"

static void add_node_typed(kp_yaml *b, const char *name, const char *pool, const char *type)
{
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, creationTimestamp: '" OLD
        "', labels: {"
        "karpenter.sh/nodepool: %s, karpenter.sh/registered: 'true', karpenter.sh/initialized: "
        "'true', "
        "node.kubernetes.io/instance-type: %s, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: %s, kubernetes.io/arch: "
        "amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-%s'}\n"
        "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: "
        "16Gi, pods: '58'}, "
        "conditions: [{type: Ready, status: 'True'}]}\n",
        name, pool, type, name, name);
}

static void add_node(kp_yaml *b, const char *name)
{
    add_node_typed(b, name, "default", "m5.xlarge");
}

/* The NodeClaim of `node`, initialised at `init`. */
static void add_claim(kp_yaml *b, const char *node, const char *init)
{
    kp_yaml_add(b,
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: %s-claim, "
        "creationTimestamp: '" OLD "', "
        "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m5.xlarge, "
        "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
        "status: {providerID: 'aws:///us-east-1a/i-%s', nodeName: %s, conditions: [{type: "
        "Launched, status: 'True'}, "
        "{type: Initialized, status: 'True', lastTransitionTime: '%s'}]}\n",
        node, node, node, init);
}

#define RS "{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}"
#define SS "{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u4, controller: true}"
#define DS "{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u2, controller: true}"

/* A pod on `node`: `meta` adds metadata, `owner` is its controller, `spec`
 * adds spec fields, `phase` its phase. */
static void add_pod(kp_yaml *b, const char *name, const char *node, const char *meta,
                    const char *owner, const char *spec, const char *phase)
{
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default%s, "
        "ownerReferences: [%s]}\n"
        "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {cpu: '1', memory: "
        "1Gi}}}]%s}\n"
        "status: {phase: %s}\n",
        name, meta, owner, node, spec, phase);
}

static void plan(kp_scenario *s, const kp_yaml *b, uint32_t max_loops)
{
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.max_loops = max_loops;
    KP_ASSERT_OK(kp_scenario_run(s, kp_yaml_text(b), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, &opts));
}

static double command_savings(const kp_scenario *s, int i)
{
    const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(s->disruption_json, "disruption");
    const cJSON *cmd = cJSON_GetArrayItem(cmds, i);
    cr_assert_not_null(cmd);
    return cJSON_GetObjectItemCaseSensitive(cmd, "savingsHourly")->valuedouble;
}

/* ---------- empty nodes go together ---------- */

Test(disruption_emptiness, empty_nodes_go_in_one_command)
{
    static kp_yaml b;
    add_pool(&b, "default", WHEN_EMPTY);
    add_node(&b, "a");
    add_node(&b, "b");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a,b");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0);
    cr_expect_float_eq(command_savings(&s, 0), 2 * M5_XLARGE_PRICE, 1e-6);
    const cJSON *cmd =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s.disruption_json, "disruption"), 0);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(cmd, "reason")->valuestring, "Empty");
    kp_scenario_free(&s);
}

Test(disruption_emptiness, empty_nodes_of_several_nodepools_go_together)
{
    static kp_yaml b;
    static const char *const pools[] = {"alpha", "beta", "gamma"};
    for (int p = 0; p < 3; p++) {
        add_pool(&b, pools[p], WHEN_EMPTY);
        for (int i = 0; i < 3; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s-%d", pools[p], i);
            add_node_typed(&b, name, pools[p], "m5.xlarge");
        }
    }
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0),
                     "alpha-0,alpha-1,alpha-2,beta-0,beta-1,beta-2,gamma-0,gamma-1,gamma-2");
    kp_scenario_free(&s);
}

Test(disruption_emptiness, only_the_empty_nodes)
{
    static kp_yaml b;
    add_pool(&b, "default", WHEN_EMPTY);
    add_node(&b, "empty");
    add_node(&b, "busy");
    add_pod(&b, "p", "busy", "", RS, "", "Running");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "empty");
    const char *why = kp_scenario_blocked_reason(&s, "busy");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "WhenEmpty") != NULL, "%s", why);
    kp_scenario_free(&s);
}

Test(disruption_emptiness, the_dearest_empty_nodes_go_first_under_a_budget)
{
    static kp_yaml b;
    add_pool(&b, "default",
             "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '1'}]");
    add_node_typed(&b, "small", "default", "m5.large");
    add_node_typed(&b, "large", "default", "m5.2xlarge");
    add_node_typed(&b, "medium", "default", "m5.xlarge");
    kp_scenario s;
    plan(&s, &b, 0);
    /* Savings per unit of disruption, highest first: all cost the same to
     * disrupt, so by price. */
    cr_assert_eq(kp_scenario_n_commands(&s), 3);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "large");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 1), "medium");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 2), "small");
    cr_expect_gt(command_savings(&s, 0), command_savings(&s, 1));
    cr_expect_gt(command_savings(&s, 1), command_savings(&s, 2));
    kp_scenario_free(&s);
}

Test(disruption_emptiness, budget_holds_the_rest_with_its_reason)
{
    static kp_yaml b;
    add_pool(&b, "default",
             "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '2'}]");
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i);
        add_node(&b, name);
    }
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    int kept = 0;
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i);
        if (kp_scenario_disrupted_by(&s, name) >= 0) continue;
        kept++;
        const char *why = kp_scenario_blocked_reason(&s, name);
        cr_assert_not_null(why, "%s", name);
        cr_expect(strstr(why, "budgets of NodePool default") && strstr(why, "Empty"), "%s: %s",
                  name, why);
    }
    cr_expect_eq(kept, 3);
    kp_scenario_free(&s);
}

/* ---------- what empty means ---------- */

typedef struct empty_case {
    const char *name;
    const char *meta, *owner, *spec, *phase; /* the one pod on node a */
    bool empty;
} empty_case;

static const empty_case empty_cases[] = {
    {"a DaemonSet pod", "", DS, "", "Running", true},
    {"a mirror pod", ", annotations: {kubernetes.io/config.mirror: abc}",
     "{apiVersion: v1, kind: Node, name: a, uid: n1, controller: true}", "", "Running", true},
    {"a pod that succeeded", "", RS, "", "Succeeded", true},
    {"a pod that failed", "", RS, "", "Failed", true},
    {"a terminating Deployment pod", ", deletionTimestamp: '2026-11-21T11:59:30Z'", RS, "",
     "Running", true},
    {"a terminating StatefulSet pod", ", deletionTimestamp: '2026-11-21T11:59:30Z'", SS, "",
     "Running", false},
    {"a running StatefulSet pod", "", SS, "", "Running", false},
    {"a running Deployment pod", "", RS, "", "Running", false},
    {"a pod without a controller", "", "", "", "Running", false},
    {"a pod of the lowest priority", "", RS, ", priority: -2147483648", "Running", true},
    {"a pod of the lowest deletion cost",
     ", annotations: {controller.kubernetes.io/pod-deletion-cost: '-2147483647'}", RS, "",
     "Running", true},
    {"a pod of a slightly negative deletion cost",
     ", annotations: {controller.kubernetes.io/pod-deletion-cost: '-1000'}", RS, "", "Running",
     false},
};

static size_t *indices(size_t n)
{
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return idx;
}

ParameterizedTestParameters(disruption_emptiness, what_is_empty)
{
    size_t n = sizeof(empty_cases) / sizeof(empty_cases[0]);
    return cr_make_param_array(size_t, indices(n), n, NULL);
}

ParameterizedTest(size_t *i, disruption_emptiness, what_is_empty)
{
    const empty_case *c = &empty_cases[*i];
    static kp_yaml b;
    kp_yaml_reset(&b);
    /* WhenEmpty: a node that is not empty stays, whatever its pods' fit. */
    add_pool(&b, "default", WHEN_EMPTY);
    add_node(&b, "a");
    add_pod(&b, "p", "a", c->meta, c->owner, c->spec, c->phase);
    kp_scenario s;
    plan(&s, &b, 0);
    if (c->empty) {
        cr_assert_eq(kp_scenario_n_commands(&s), 1, "%s", c->name);
        cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness", "%s", c->name);
        cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a", "%s", c->name);
    } else {
        cr_expect_eq(kp_scenario_n_commands(&s), 0, "%s", c->name);
        const char *why = kp_scenario_blocked_reason(&s, "a");
        cr_assert_not_null(why, "%s", c->name);
        cr_expect(strstr(why, "WhenEmpty") != NULL, "%s: %s", c->name, why);
    }
    kp_scenario_free(&s);
}

Test(disruption_emptiness, daemonset_pods_with_their_daemonset_still_empty)
{
    static kp_yaml b;
    add_pool(&b, "default", WHEN_EMPTY);
    kp_yaml_add(&b,
        "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: default}\n"
        "spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: "
        "agent}}, "
        "spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 128Mi}}}]}}}\n");
    add_node(&b, "a");
    add_node(&b, "b");
    add_pod(&b, "agent-a", "a", ", labels: {app: agent}", DS, "", "Running");
    add_pod(&b, "agent-b", "b", ", labels: {app: agent}", DS, "", "Running");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a,b");
    kp_scenario_free(&s);
}

/* ---------- consolidateAfter ---------- */

Test(disruption_emptiness, waits_for_consolidate_after_per_node)
{
    static kp_yaml b;
    add_pool(&b, "default",
             "consolidationPolicy: WhenEmpty, consolidateAfter: 30m, budgets: [{nodes: '100%'}]");
    add_node(&b, "settled");
    add_claim(&b, "settled", "2026-11-21T10:00:00Z");
    add_node(&b, "fresh");
    add_claim(&b, "fresh", "2026-11-21T11:45:00Z");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "settled");
    const char *why = kp_scenario_blocked_reason(&s, "fresh");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "consolidateAfter") && strstr(why, "2026-11-21T12:15:00Z"), "%s", why);
    kp_scenario_free(&s);
}

Test(disruption_emptiness, a_recent_pod_event_restarts_the_wait)
{
    static kp_yaml b;
    add_pool(&b, "default",
             "consolidationPolicy: WhenEmpty, consolidateAfter: 30m, budgets: [{nodes: '100%'}]");
    add_node(&b, "a");
    /* Initialised long ago, but its last pod left five minutes ago. */
    kp_yaml_add(&b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a-claim, "
            "creationTimestamp: '" OLD "', "
            "labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand}}\n"
            "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
            "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, lastPodEventTime: "
            "'2026-11-21T11:55:00Z', "
            "conditions: [{type: Initialized, status: 'True', lastTransitionTime: '" OLD "'}]}\n");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "2026-11-21T12:25:00Z") != NULL, "%s", why);
    kp_scenario_free(&s);
}

Test(disruption_emptiness, consolidate_after_never_disables_it)
{
    static kp_yaml b;
    add_pool(&b, "default", "consolidationPolicy: WhenEmpty, consolidateAfter: Never");
    add_node(&b, "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "Never") != NULL, "%s", why);
    kp_scenario_free(&s);
}

Test(disruption_emptiness, runs_for_when_empty_or_underutilized_too)
{
    static kp_yaml b;
    add_pool(&b, "default", "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s");
    add_node(&b, "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    kp_scenario_free(&s);
}

/* ---------- emptiness before the other methods ---------- */

Test(disruption_emptiness, an_empty_drifted_node_goes_as_empty)
{
    static kp_yaml b;
    add_pool(&b, "default", WHEN_EMPTY);
    add_node(&b, "a");
    kp_yaml_add(&b,
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a-claim, "
        "creationTimestamp: '" OLD "', "
        "labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
        "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, conditions: [{type: "
        "Initialized, status: 'True', "
        "lastTransitionTime: '" OLD "'}, {type: Drifted, status: 'True', reason: AMIDrifted}]}\n");
    kp_scenario s;
    plan(&s, &b, 0);
    /* Karpenter's methods: emptiness is tried before drift. */
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0);
    kp_scenario_free(&s);
}

Test(disruption_emptiness, empty_nodes_go_before_consolidating_the_rest)
{
    static kp_yaml b;
    add_pool(&b, "default",
             "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, "
             "budgets: [{nodes: '100%'}]");
    add_node(&b, "e1");
    add_node(&b, "e2");
    add_node(&b, "a");
    add_node(&b, "b");
    add_pod(&b, "p", "a", "", RS, "", "Running");
    add_pod(&b, "q", "b", "", RS, "", "Running");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_geq(kp_scenario_n_commands(&s), 2);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "e1,e2");
    cr_expect_str_neq(kp_scenario_command_method(&s, 1), "emptiness");
    kp_scenario_free(&s);
}
