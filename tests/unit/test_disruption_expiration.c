/*
 * Expiration (Karpenter v1's NodeClaim expiration controller,
 * pkg/controllers/nodeclaim/expiration): a NodeClaim whose spec.expireAfter
 * has elapsed since its creation is deleted, forcefully — disruption budgets,
 * consolidateAfter, do-not-disrupt pods and PodDisruptionBudgets do not hold
 * it (they only slow the drain), and it does not wait for replacements. The
 * planner puts it first in each loop and still simulates where the pods go,
 * so the plan shows the capacity provisioning will launch for them.
 *
 * For a Node without a NodeClaim (manifests written by hand) the NodePool's
 * template expireAfter counts from the Node's creation; unset, the CRD's
 * default of 720h applies.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

/* `template` adds NodeClaim template fields (", expireAfter: 1h"). */
static void add_pool(kp_yaml *b, const char *template, const char *disruption)
{
    char spec[256];
    snprintf(spec, sizeof(spec), "disruption: {%s}", disruption);
    kp_yaml_nodepool(b, &(kp_yaml_pool){.name = "default", .requirements = "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
                                        .template_spec = template + strspn(template, ", "), .spec = spec});
}

#define NEVER "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never"

static void add_node(kp_yaml *b, const char *name, const char *created, const char *meta)
{
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, creationTimestamp: '%s'%s, labels: {"
        "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
        "karpenter.sh/initialized: 'true', "
        "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: %s, kubernetes.io/arch: "
        "amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-%s'}\n"
        "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: Ready, "
        "status: 'True'}]}\n",
        name, created, meta, name, name);
}

/* The NodeClaim of `node`, created at `created`; `spec` adds spec fields. */
static void add_claim(kp_yaml *b, const char *node, const char *created, const char *spec)
{
    kp_yaml_add(b,
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: %s-claim, "
        "creationTimestamp: '%s', "
        "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m5.xlarge, "
        "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}%s}\n"
        "status: {providerID: 'aws:///us-east-1a/i-%s', nodeName: %s, conditions: [{type: "
        "Launched, status: 'True'}, "
        "{type: Initialized, status: 'True', lastTransitionTime: '%s'}]}\n",
        node, created, spec, node, node, created);
}

#define RS "{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}"

static void add_pod(kp_yaml *b, const char *name, const char *node, const char *meta,
                    const char *spec)
{
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default%s, "
        "ownerReferences: [" RS "]}\n"
        "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {cpu: '1', memory: "
        "1Gi}}}]%s}\n"
        "status: {phase: Running}\n",
        name, meta, node, spec);
}

static void plan(kp_scenario *s, const kp_yaml *b, uint32_t max_loops)
{
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.max_loops = max_loops;
    KP_ASSERT_OK(kp_scenario_run(s, kp_yaml_text(b), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, &opts));
}

static void expect_expired(kp_scenario *s, const char *nodes)
{
    cr_assert_geq(kp_scenario_n_commands(s), 1, "nothing expired");
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "expiration");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), nodes);
    const cJSON *cmd =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s->disruption_json, "disruption"), 0);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(cmd, "reason")->valuestring, "Expired");
}

/* ---------- when a node has expired ---------- */

typedef struct expiry_case {
    const char *name;
    const char *pool_template; /* NodePool template fields */
    const char *node_created;
    const char *claim_created; /* NULL: no NodeClaim */
    const char *claim_spec;
    bool expired;
} expiry_case;

static const expiry_case expiry_cases[] = {
    {"24h elapsed twice over", "", OLD, "2026-11-19T12:00:00Z", ", expireAfter: 24h", true},
    {"24h not yet elapsed", "", OLD, "2026-11-21T11:00:00Z", ", expireAfter: 24h", false},
    {"exactly at expiry", "", OLD, "2026-11-20T12:00:00Z", ", expireAfter: 24h", true},
    {"a minute before expiry", "", OLD, "2026-11-20T12:01:00Z", ", expireAfter: 24h", false},
    {"expireAfter Never", "", OLD, "2025-01-01T00:00:00Z", ", expireAfter: Never", false},
    {"counted from the NodeClaim, not the Node", "", "2026-11-21T11:00:00Z", "2026-11-18T12:00:00Z",
     ", expireAfter: 48h", true},
    {"a young NodeClaim on an old Node", "", "2026-11-01T00:00:00Z", "2026-11-21T11:00:00Z",
     ", expireAfter: 48h", false},
    {"the NodeClaim's value, not the NodePool's (Never)", ", expireAfter: 1h", OLD,
     "2026-11-01T00:00:00Z", ", expireAfter: Never", false},
    {"the NodeClaim's value, not the NodePool's (1h)", ", expireAfter: Never", OLD,
     "2026-11-21T10:00:00Z", ", expireAfter: 1h", true},
    {"no NodeClaim: the NodePool's expireAfter from the Node", ", expireAfter: 1h",
     "2026-11-21T10:00:00Z", NULL, "", true},
    {"no NodeClaim, not yet", ", expireAfter: 3h", "2026-11-21T10:00:00Z", NULL, "", false},
    {"no NodeClaim, NodePool Never", ", expireAfter: Never", "2025-01-01T00:00:00Z", NULL, "",
     false},
    {"no NodeClaim, default 720h passed", "", "2026-10-21T11:00:00Z", NULL, "", true},
    {"no NodeClaim, default 720h not passed", "", "2026-10-23T12:00:00Z", NULL, "", false},
};

static size_t *indices(size_t n)
{
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return idx;
}

ParameterizedTestParameters(disruption_expiration, when)
{
    size_t n = sizeof(expiry_cases) / sizeof(expiry_cases[0]);
    return cr_make_param_array(size_t, indices(n), n, NULL);
}

ParameterizedTest(size_t *i, disruption_expiration, when)
{
    const expiry_case *c = &expiry_cases[*i];
    static kp_yaml b;
    kp_yaml_reset(&b);
    add_pool(&b, c->pool_template, NEVER);
    add_node(&b, "a", c->node_created, "");
    if (c->claim_created) add_claim(&b, "a", c->claim_created, c->claim_spec);
    add_pod(&b, "p", "a", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    if (c->expired) {
        expect_expired(&s, "a");
    } else {
        cr_expect_eq(kp_scenario_n_commands(&s), 0, "%s", c->name);
        cr_expect_not_null(kp_scenario_blocked_reason(&s, "a"), "%s", c->name);
    }
    kp_scenario_free(&s);
}

/* ---------- forceful: what does not hold it ---------- */

#define EXPIRED_CLAIM(b, node) add_claim((b), (node), "2026-11-19T12:00:00Z", ", expireAfter: 24h")

Test(disruption_expiration, budget_zero_does_not_hold_it)
{
    static kp_yaml b;
    add_pool(&b, "",
             "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: "
             "[{nodes: '0'}]");
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    add_pod(&b, "p", "a", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    kp_scenario_free(&s);
}

Test(disruption_expiration, do_not_disrupt_pod_does_not_hold_it)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    add_pod(&b, "p", "a", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", "");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    kp_scenario_free(&s);
}

Test(disruption_expiration, blocking_pdb_does_not_hold_it)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    add_pod(&b, "p", "a", ", labels: {app: web}", "");
    kp_yaml_add(&b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, "
            "namespace: default}\n"
            "spec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\nstatus: "
            "{disruptionsAllowed: 0}\n");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    kp_scenario_free(&s);
}

Test(disruption_expiration, consolidate_after_does_not_hold_it)
{
    static kp_yaml b;
    add_pool(&b, "", "consolidationPolicy: WhenEmpty, consolidateAfter: 720h");
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    add_pod(&b, "p", "a", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    kp_scenario_free(&s);
}

Test(disruption_expiration, pods_with_nowhere_to_go_do_not_hold_it)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    /* Pinned to a by hostname: no other node can take it. */
    add_pod(&b, "pinned", "a", "", ", nodeSelector: {kubernetes.io/hostname: a}");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0);
    kp_scenario_free(&s);
}

/* ---------- what it does ---------- */

Test(disruption_expiration, the_pods_get_capacity_planned)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    add_pod(&b, "p", "a", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 1);
    cr_expect_not_null(kp_scenario_command_replacement_type(&s, 0, 0));
    kp_scenario_free(&s);
}

Test(disruption_expiration, the_pods_move_to_room_that_exists)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    add_node(&b, "b", OLD, "");
    add_pod(&b, "p", "a", "", "");
    add_pod(&b, "q", "b", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    cr_expect_eq(kp_scenario_command_replacements(&s, 0), 0);
    cr_expect_eq(kp_scenario_disrupted_by(&s, "b"), -1);
    kp_scenario_free(&s);
}

Test(disruption_expiration, expired_nodes_go_together)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    static const char *const names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        add_node(&b, names[i], OLD, "");
        EXPIRED_CLAIM(&b, names[i]);
    }
    add_node(&b, "young", OLD, "");
    add_claim(&b, "young", "2026-11-21T11:00:00Z", ", expireAfter: 24h");
    for (int i = 0; i < 3; i++) {
        char pod[8];
        snprintf(pod, sizeof(pod), "p%d", i);
        add_pod(&b, pod, names[i], "", "");
    }
    add_pod(&b, "q", "young", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a,b,c");
    cr_expect_eq(kp_scenario_disrupted_by(&s, "young"), -1);
    kp_scenario_free(&s);
}

Test(disruption_expiration, comes_before_the_graceful_methods)
{
    static kp_yaml b;
    add_pool(&b, "",
             "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: "
             "[{nodes: '100%'}]");
    /* Both empty: a would go with idle by emptiness, but expiration takes it first. */
    add_node(&b, "idle", OLD, "");
    add_node(&b, "a", OLD, "");
    EXPIRED_CLAIM(&b, "a");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_expired(&s, "a");
    cr_assert_geq(kp_scenario_n_commands(&s), 2);
    cr_expect_str_eq(kp_scenario_command_method(&s, 1), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 1), "idle");
    kp_scenario_free(&s);
}

Test(disruption_expiration, a_node_already_being_deleted_is_left_alone)
{
    static kp_yaml b;
    add_pool(&b, "", NEVER);
    add_node(&b, "a", OLD,
             ", deletionTimestamp: '2026-11-21T11:58:00Z', finalizers: [karpenter.sh/termination]");
    EXPIRED_CLAIM(&b, "a");
    add_node(&b, "b", OLD, "");
    add_pod(&b, "p", "a", "", "");
    add_pod(&b, "q", "b", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "a");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "deleted") != NULL, "%s", why);
    kp_scenario_free(&s);
}
