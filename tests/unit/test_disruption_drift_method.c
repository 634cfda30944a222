/*
 * Drift: what the drift method does with drifted nodes (Karpenter's
 * Drift method, pkg/controllers/disruption/drift_test.go): one node per
 * command, replaced when its pods need new capacity, empty nodes first then
 * the longest drifted, skipping a node whose pods cannot move; protected by
 * do-not-disrupt and PDBs unless the NodeClaim has a terminationGracePeriod;
 * held by the Drifted budgets, not by consolidateAfter or the policy.
 *
 * Drift is the claim's Drifted condition here (the cloud provider's verdict);
 * test_disruption_drift_detection.c covers how drift is detected.
 *
 * Where a scenario's last node would be empty while every pod is bound, a
 * node with a pod is declared after it or the nodes are ordered so: the
 * solver reads past its pod list in that case (test_disruption_candidates_bugs.c).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

#define NEVER                                                                                      \
    "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never, budgets: [{nodes: "   \
    "'100%'}]"

static void add_pool(kp_yaml *b, const char *name, const char *requirements, const char *disruption)
{
    char spec[256];
    snprintf(spec, sizeof(spec), "disruption: {%s}", disruption);
    kp_yaml_nodepool(b, &(kp_yaml_pool){.name = name, .requirements = requirements ? requirements : "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
                                        .spec = spec});
}

typedef struct node_opts {
    const char *pool;        /* "default" when NULL */
    const char *drifted_at;  /* Drifted condition's time; NULL: not drifted */
    const char *node_meta;   /* extra Node metadata */
    const char *claim_spec;  /* extra NodeClaim spec */
    const char *initialized; /* the claim's Initialized time (OLD when NULL) */
    bool deleting;
} node_opts;

/* A Node and its NodeClaim. */
static void add_node(kp_yaml *b, const char *name, node_opts o)
{
    const char *pool = o.pool ? o.pool : "default";
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, creationTimestamp: '" OLD
        "'%s%s, labels: {"
        "karpenter.sh/nodepool: %s, karpenter.sh/registered: 'true', karpenter.sh/initialized: "
        "'true', "
        "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: %s, kubernetes.io/arch: "
        "amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-%s'}\n"
        "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: Ready, "
        "status: 'True'}]}\n",
        name, o.node_meta ? o.node_meta : "",
        o.deleting
            ? ", deletionTimestamp: '2026-11-21T11:58:00Z', finalizers: [karpenter.sh/termination]"
            : "",
        pool, name, name);
    kp_yaml_add(b,
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: %s-claim, "
        "creationTimestamp: '" OLD "', "
        "labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: m5.xlarge, "
        "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand, "
        "kubernetes.io/arch: amd64, "
        "kubernetes.io/os: linux}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}%s}\n"
        "status: {providerID: 'aws:///us-east-1a/i-%s', nodeName: %s, conditions: [{type: "
        "Launched, status: 'True'}, "
        "{type: Initialized, status: 'True', lastTransitionTime: '%s'}",
        name, pool, o.claim_spec ? o.claim_spec : "", name, name,
        o.initialized ? o.initialized : OLD);
    if (o.drifted_at)
        kp_yaml_add(b, ", {type: Drifted, status: 'True', reason: AMIDrifted, lastTransitionTime: '%s'}",
            o.drifted_at);
    kp_yaml_add(b, "]}\n");
}

#define RS "{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}"

/* A running pod on `node` asking for `cpu`; `meta` adds metadata, `spec` adds spec fields. */
static void add_pod(kp_yaml *b, const char *name, const char *node, const char *cpu,
                    const char *meta, const char *spec, const char *status)
{
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default%s, "
        "ownerReferences: [" RS "]}\n"
        "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {cpu: '%s', memory: "
        "1Gi}}}]%s}\n"
        "status: {phase: Running%s}\n",
        name, meta, node, cpu, spec, status);
}

static void simple_pod(kp_yaml *b, const char *name, const char *node)
{
    add_pod(b, name, node, "1", "", "", "");
}

static void plan(kp_scenario *s, const kp_yaml *b, uint32_t max_loops)
{
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.max_loops = max_loops;
    KP_ASSERT_OK(kp_scenario_run(s, kp_yaml_text(b), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, &opts));
}

static void expect_drift(kp_scenario *s, uint32_t i, const char *node, uint32_t replacements)
{
    cr_assert_gt(kp_scenario_n_commands(s), i, "no command %u", i);
    cr_expect_str_eq(kp_scenario_command_method(s, i), "drift");
    cr_expect_str_eq(kp_scenario_command_nodes(s, i), node);
    cr_expect_eq(kp_scenario_command_replacements(s, i), replacements,
                 "command %u: %u replacements", i, kp_scenario_command_replacements(s, i));
}

static void expect_kept(const kp_scenario *s, const char *node, const char *needle)
{
    cr_expect_eq(kp_scenario_disrupted_by(s, node), -1, "%s was disrupted", node);
    const char *why = kp_scenario_blocked_reason(s, node);
    cr_assert_not_null(why, "%s has no reason", node);
    cr_expect(strstr(why, needle) != NULL, "reason for %s lacks \"%s\": %s", node, needle, why);
}

#define DRIFTED(t) ((node_opts){.drifted_at = (t)})
#define T1         "2026-11-21T09:00:00Z"
#define T2         "2026-11-21T10:00:00Z"

/* ---------- replace or delete ---------- */

Test(disruption_drift_method, replaces_a_drifted_node_whose_pods_need_room)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", DRIFTED(T1));
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 1);
    /* One CPU needs less than the m5.xlarge it leaves. */
    cr_expect_not_null(kp_scenario_command_replacement_type(&s, 0, 0));
    cr_expect_str_neq(kp_scenario_command_replacement_type(&s, 0, 0), "m5.xlarge");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, deletes_a_drifted_node_whose_pods_fit_elsewhere)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "b", (node_opts){0});
    add_node(&b, "a", DRIFTED(T1));
    simple_pod(&b, "p", "a");
    simple_pod(&b, "q", "b");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 0);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, replacement_meets_the_new_requirements)
{
    static kp_yaml b;
    /* The NodePool now allows only m5.large: the m5.xlarge node has drifted. */
    add_pool(&b, "default",
             "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}, "
             "{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}",
             NEVER);
    add_node(&b, "a", (node_opts){0});
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(&s, 0, 0), "m5.large");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, deletes_an_empty_drifted_node_when_consolidation_is_off)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", DRIFTED(T1));
    kp_scenario s;
    plan(&s, &b, 0);
    /* consolidateAfter: Never keeps emptiness away; drift still takes it. */
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 0);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, one_node_per_command)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", DRIFTED(T1));
    add_node(&b, "b", DRIFTED(T1));
    add_node(&b, "c", DRIFTED(T1));
    simple_pod(&b, "p", "a");
    simple_pod(&b, "q", "b");
    simple_pod(&b, "r", "c");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 3);
    for (uint32_t i = 0; i < 3; i++) {
        cr_expect_str_eq(kp_scenario_command_method(&s, i), "drift");
        cr_expect_null(strchr(kp_scenario_command_nodes(&s, i), ','), "%s",
                       kp_scenario_command_nodes(&s, i));
    }
    kp_scenario_free(&s);
}

/* ---------- order ---------- */

Test(disruption_drift_method, empty_drifted_nodes_first)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    /* a drifted earlier, but e is empty. */
    add_node(&b, "a", DRIFTED(T1));
    add_node(&b, "e", DRIFTED(T2));
    /* A node with a pod last: see the note at the top. */
    add_node(&b, "z", (node_opts){0});
    simple_pod(&b, "p", "a");
    simple_pod(&b, "zp", "z");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 2);
    expect_drift(&s, 0, "e", 0);
    expect_drift(&s, 1, "a", 0); /* its pod fits on z */
    kp_scenario_free(&s);
}

Test(disruption_drift_method, earliest_drift_first)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "late", DRIFTED(T2));
    add_node(&b, "early", DRIFTED(T1));
    simple_pod(&b, "p", "late");
    simple_pod(&b, "q", "early");
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "early", 0);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, skips_a_node_whose_pods_cannot_move)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    /* stuck drifted first, but its pod is pinned to it by hostname. */
    add_node(&b, "stuck", DRIFTED(T1));
    add_node(&b, "free", DRIFTED(T2));
    add_pod(&b, "pinned", "stuck", "1", "", ", nodeSelector: {kubernetes.io/hostname: stuck}", "");
    simple_pod(&b, "p", "free");
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "free", 0);
    kp_scenario_free(&s);
}

/* ---------- protections ---------- */

Test(disruption_drift_method, node_do_not_disrupt_holds_it)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a",
             (node_opts){.drifted_at = T1,
                         .node_meta = ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"});
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_kept(&s, "a", "do-not-disrupt");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, node_do_not_disrupt_false_does_not)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a",
             (node_opts){.drifted_at = T1,
                         .node_meta = ", annotations: {karpenter.sh/do-not-disrupt: 'false'}"});
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 1);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, do_not_disrupt_pod_holds_it_without_a_grace_period)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", DRIFTED(T1));
    add_pod(&b, "p", "a", "1", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", "", "");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_kept(&s, "a", "default/p");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, blocking_pdb_holds_it_without_a_grace_period)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", DRIFTED(T1));
    add_pod(&b, "p", "a", "1", ", labels: {app: web}", "", "");
    kp_yaml_add(&b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, "
            "namespace: default}\n"
            "spec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\nstatus: "
            "{disruptionsAllowed: 0}\n");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_kept(&s, "a", "default/web");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, grace_period_lets_drift_past_a_do_not_disrupt_pod)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", (node_opts){.drifted_at = T1, .claim_spec = ", terminationGracePeriod: 5m"});
    add_pod(&b, "p", "a", "1", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", "", "");
    kp_scenario s;
    plan(&s, &b, 1);
    /* Drift is eventual: the grace period bounds how long the pod holds it. */
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "drift");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, grace_period_lets_drift_past_a_blocking_pdb)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", (node_opts){.drifted_at = T1, .claim_spec = ", terminationGracePeriod: 5m"});
    add_pod(&b, "p", "a", "1", ", labels: {app: web}", "", "");
    kp_yaml_add(&b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, "
            "namespace: default}\n"
            "spec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\nstatus: "
            "{disruptionsAllowed: 0}\n");
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "drift");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, grace_period_does_not_open_consolidation)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL,
             "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s");
    /* Not drifted, a grace period, a do-not-disrupt pod: consolidation is
     * graceful, so the pod holds the node. */
    add_node(&b, "b", (node_opts){0});
    add_node(&b, "a", (node_opts){.claim_spec = ", terminationGracePeriod: 5m"});
    add_pod(&b, "p", "a", "1", ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", "", "");
    simple_pod(&b, "q", "b");
    kp_scenario s;
    plan(&s, &b, 0);
    expect_kept(&s, "a", "do-not-disrupt");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, do_not_disrupt_duration_active_then_elapsed)
{
    for (int elapsed = 0; elapsed < 2; elapsed++) {
        static kp_yaml b;
        kp_yaml_reset(&b);
        add_pool(&b, "default", NULL, NEVER);
        add_node(&b, "a", DRIFTED(T1));
        add_pod(&b, "p", "a", "1", ", annotations: {karpenter.sh/do-not-disrupt: 2m}", "",
                elapsed ? ", startTime: '2026-11-21T11:57:00Z'"
                        : ", startTime: '2026-11-21T11:59:00Z'");
        kp_scenario s;
        plan(&s, &b, 0);
        if (elapsed) {
            cr_expect_eq(kp_scenario_n_commands(&s), 1);
            cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), 0);
        } else {
            cr_expect_eq(kp_scenario_n_commands(&s), 0);
            expect_kept(&s, "a", "default/p");
        }
        kp_scenario_free(&s);
    }
}

Test(disruption_drift_method, invalid_do_not_disrupt_does_not_hold_it)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    add_node(&b, "a", DRIFTED(T1));
    add_pod(&b, "p", "a", "1", ", annotations: {karpenter.sh/do-not-disrupt: invalid-format}", "",
            "");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 1);
    kp_scenario_free(&s);
}

/* ---------- what does not hold drift ---------- */

Test(disruption_drift_method, not_held_by_consolidate_after)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL,
             "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1h");
    add_node(
        &b, "a",
        (node_opts){.drifted_at = "2026-11-21T11:58:00Z", .initialized = "2026-11-21T11:55:00Z"});
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 1);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, not_held_by_when_empty)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, "consolidationPolicy: WhenEmpty, consolidateAfter: 0s");
    add_node(&b, "a", DRIFTED(T1));
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 1);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "a", 1);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, uninitialized_drifted_node_waits)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL, NEVER);
    kp_yaml_add(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD
            "', labels: {"
            "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
            "node.kubernetes.io/instance-type: m5.xlarge, "
            "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand, "
            "kubernetes.io/hostname: a}}\n"
            "spec: {providerID: 'aws:///us-east-1a/i-a'}\n"
            "status: {allocatable: {cpu: '4', memory: 16Gi, pods: '58'}, conditions: [{type: "
            "Ready, status: 'True'}]}\n"
            "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a-claim, "
            "creationTimestamp: '" OLD "', "
            "labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: on-demand}}\n"
            "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
            "status: {providerID: 'aws:///us-east-1a/i-a', nodeName: a, conditions: [{type: "
            "Launched, status: 'True'}, "
            "{type: Drifted, status: 'True', reason: AMIDrifted}]}\n");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_kept(&s, "a", "not initialized");
    kp_scenario_free(&s);
}

/* ---------- budgets ---------- */

Test(disruption_drift_method, drifted_budget_zero_holds_drift)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL,
             "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never, "
             "budgets: [{nodes: '0', reasons: [Drifted]}]");
    add_node(&b, "a", DRIFTED(T1));
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_kept(&s, "a", "Drifted");
    expect_kept(&s, "a", "budgets of NodePool default");
    kp_scenario_free(&s);
}

Test(disruption_drift_method, drifted_budget_zero_does_not_hold_emptiness)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL,
             "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '0', "
             "reasons: [Drifted]}]");
    add_node(&b, "idle", (node_opts){0});
    add_node(&b, "a", DRIFTED(T1));
    simple_pod(&b, "p", "a");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "idle");
    cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), -1);
    kp_scenario_free(&s);
}

Test(disruption_drift_method, nodes_already_deleting_use_the_drift_budget)
{
    for (int deleting = 1; deleting <= 2; deleting++) {
        static kp_yaml b;
        kp_yaml_reset(&b);
        /* 50% of 4 nodes is 2. */
        add_pool(
            &b, "default", NULL,
            "consolidationPolicy: WhenEmpty, consolidateAfter: Never, budgets: [{nodes: '50%'}]");
        add_node(&b, "d1", (node_opts){.deleting = true});
        add_node(&b, "d2", (node_opts){.deleting = deleting == 2});
        add_node(&b, "a", DRIFTED(T1));
        add_node(&b, "b", (node_opts){0});
        simple_pod(&b, "p", "a");
        simple_pod(&b, "q", "b");
        simple_pod(&b, "r", "d2");
        kp_scenario s;
        plan(&s, &b, 1);
        if (deleting == 1) {
            cr_expect_eq(kp_scenario_n_commands(&s), 1);
            cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), 0);
        } else {
            cr_expect_eq(kp_scenario_n_commands(&s), 0);
            cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), -1);
        }
        kp_scenario_free(&s);
    }
}

Test(disruption_drift_method, budgets_per_nodepool)
{
    static kp_yaml b;
    add_pool(&b, "held", NULL,
             "consolidationPolicy: WhenEmpty, consolidateAfter: Never, budgets: [{nodes: '0'}]");
    add_pool(&b, "open", NULL,
             "consolidationPolicy: WhenEmpty, consolidateAfter: Never, budgets: [{nodes: '1'}]");
    add_node(&b, "h1", (node_opts){.pool = "held", .drifted_at = T1});
    add_node(&b, "o1", (node_opts){.pool = "open", .drifted_at = T2});
    simple_pod(&b, "p", "h1");
    simple_pod(&b, "q", "o1");
    kp_scenario s;
    plan(&s, &b, 0);
    /* h1 drifted first, but its NodePool allows nothing; o1's pod moves to h1. */
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    expect_drift(&s, 0, "o1", 0);
    expect_kept(&s, "h1", "NodePool held");
    kp_scenario_free(&s);
}
