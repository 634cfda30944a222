/*
 * NodePool disruption budgets (Karpenter's GetAllowedDisruptionsByReason,
 * Budget.IsActive and BuildDisruptionBudgetMapping; nodepool_budgets_test.go,
 * the BuildDisruptionBudgetMapping suite and emptiness_test.go "Budgets").
 *
 * Most cases count the nodes of the first emptiness command over N empty
 * nodes: emptiness takes every empty node the budget allows in one command,
 * so that count is the allowance. The clock is Saturday 2026-11-21 12:00 UTC.
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

/* ---------- building manifests ---------- */

/* `budgets` is the YAML flow list, or NULL for none (the NodePool's default). */
static void add_pool(kp_yaml *b, const char *name, const char *budgets)
{
    char spec[256];
    snprintf(spec, sizeof(spec), "disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s%s%s}",
             budgets ? ", budgets: " : "", budgets ? budgets : "");
    kp_yaml_nodepool(b, &(kp_yaml_pool){.name = name, .requirements = "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}", .spec = spec});
}

typedef struct node_opts {
    const char *pool; /* "default" when NULL */
    bool uninitialized;
    bool not_ready;
    bool deleting;
    bool unmanaged;
} node_opts;

static void add_node(kp_yaml *b, const char *name, node_opts o)
{
    const char *pool = o.pool ? o.pool : "default";
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, creationTimestamp: '" OLD
        "'%s, labels: {",
        name,
        o.deleting
            ? ", deletionTimestamp: '2026-11-21T11:58:00Z', finalizers: [karpenter.sh/termination]"
            : "");
    if (!o.unmanaged)
        kp_yaml_add(b, "karpenter.sh/nodepool: %s, karpenter.sh/registered: 'true', %s", pool,
            o.uninitialized ? "" : "karpenter.sh/initialized: 'true', ");
    kp_yaml_add(b,
        "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "
        "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: %s, kubernetes.io/arch: "
        "amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-%s'}\n"
        "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: "
        "16Gi, pods: '58'}, "
        "conditions: [{type: Ready, status: '%s'}]}\n",
        name, name, o.not_ready ? "False" : "True");
}

static void add_nodes(kp_yaml *b, const char *prefix, int n, node_opts o)
{
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s%02d", prefix, i);
        add_node(b, name, o);
    }
}

static void add_pod(kp_yaml *b, const char *name, const char *node)
{
    kp_yaml_add(b,
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, ownerReferences: "
        "[{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}\n"
        "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {cpu: '1', memory: "
        "1Gi}}}]}\n"
        "status: {phase: Running}\n",
        name, node);
}

static void plan(kp_scenario *s, const kp_yaml *b, uint32_t max_loops)
{
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.max_loops = max_loops;
    KP_ASSERT_OK(kp_scenario_run(s, kp_yaml_text(b), "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, &opts));
}

/* Nodes taken by the first loop's emptiness command (0 when there is none). */
static uint32_t first_emptiness(kp_scenario *s)
{
    if (kp_scenario_n_commands(s) == 0) return 0;
    cr_assert_str_eq(kp_scenario_command_method(s, 0), "emptiness");
    const char *nodes = kp_scenario_command_nodes(s, 0);
    uint32_t n = 1;
    for (const char *p = nodes; *p; p++)
        n += *p == ',';
    return n;
}

/* ---------- the allowance: counts, percentages, several budgets, reasons, schedules ---------- */

typedef struct allowance_case {
    const char *name;
    int nodes;
    const char *budgets; /* NULL: none given */
    uint32_t allowed;
} allowance_case;

static const allowance_case allowance_cases[] = {
    {"default budget is 10% of 10", 10, NULL, 1},
    {"default budget rounds up (10% of 25)", 25, NULL, 3},
    {"30% of 10", 10, "[{nodes: '30%'}]", 3},
    {"0%", 10, "[{nodes: '0%'}]", 0},
    {"count 0", 10, "[{nodes: '0'}]", 0},
    {"count 3", 10, "[{nodes: '3'}]", 3},
    {"50% of 3 rounds up to 2", 3, "[{nodes: '50%'}]", 2},
    {"20% of 19 rounds up to 4", 19, "[{nodes: '20%'}]", 4},
    {"5% of 10 rounds up to 1", 10, "[{nodes: '5%'}]", 1},
    {"100%", 10, "[{nodes: '100%'}]", 10},
    {"a count above the nodes", 4, "[{nodes: '15'}]", 4},
    {"no budgets at all", 10, "[]", 10},
    {"smallest of two: count", 10, "[{nodes: '50%'}, {nodes: '2'}]", 2},
    {"smallest of two: percentage", 10, "[{nodes: '2'}, {nodes: '10%'}]", 1},
    {"Empty budget applies", 10, "[{nodes: '1', reasons: [Empty]}, {nodes: '100%'}]", 1},
    {"Drifted-only budget does not apply", 10, "[{nodes: '0', reasons: [Drifted]}]", 10},
    {"other reasons' budgets do not apply", 10,
     "[{nodes: '0', reasons: [Underutilized, Drifted]}, {nodes: '40%'}]", 4},
    {"all three reasons listed", 10,
     "[{nodes: '0', reasons: [Underutilized, Drifted, Empty]}, {nodes: '40%'}]", 0},
    {"window opening now is active", 10, "[{nodes: '0', schedule: '0 12 * * *', duration: 1h}]", 0},
    {"window earlier today is over", 10, "[{nodes: '0', schedule: '0 9 * * *', duration: 1h}]", 10},
    {"window ending exactly now is over", 10,
     "[{nodes: '0', schedule: '0 11 * * *', duration: 1h}]", 10},
    {"window ending in a minute is active", 10,
     "[{nodes: '0', schedule: '1 11 * * *', duration: 1h}]", 0},
    {"duration longer than the recurrence", 10, "[{nodes: '0', schedule: '@daily', duration: 48h}]",
     0},
    {"weekday window (Saturday 07:00 + 6h)", 10,
     "[{nodes: '2', schedule: '0 7 * * SAT', duration: 6h}]", 2},
    {"weekday window of another day", 10, "[{nodes: '2', schedule: '0 7 * * SUN', duration: 6h}]",
     10},
    {"inactive weekly window next to an active budget", 10,
     "[{nodes: '0', schedule: '@weekly', duration: 1h}, {nodes: '30%'}]", 3},
    {"active window for another reason", 10,
     "[{nodes: '0', schedule: '0 12 * * *', duration: 1h, reasons: [Underutilized]}, {nodes: '2'}]",
     2},
    {"an invalid schedule allows nothing", 10,
     "[{nodes: '10', schedule: '@wrongly', duration: 1h}]", 0},
    {"an invalid nodes value allows nothing", 10, "[{nodes: '1000a%'}]", 0},
};

static size_t *indices(size_t n)
{
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return idx;
}

ParameterizedTestParameters(disruption_budgets, allowance)
{
    size_t n = sizeof(allowance_cases) / sizeof(allowance_cases[0]);
    return cr_make_param_array(size_t, indices(n), n, NULL);
}

ParameterizedTest(size_t *i, disruption_budgets, allowance)
{
    const allowance_case *c = &allowance_cases[*i];
    static kp_yaml b;
    kp_yaml_reset(&b);
    add_pool(&b, "default", c->budgets);
    add_nodes(&b, "n", c->nodes, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 1);
    cr_expect_eq(first_emptiness(&s), c->allowed, "%s: %u nodes", c->name, first_emptiness(&s));
    /* Every empty node left over is held by the budget, and says so. */
    for (int k = 0; k < c->nodes; k++) {
        char name[16];
        snprintf(name, sizeof(name), "n%02d", k);
        if (kp_scenario_disrupted_by(&s, name) >= 0) continue;
        const char *why = kp_scenario_blocked_reason(&s, name);
        cr_assert_not_null(why, "%s: %s", c->name, name);
        cr_expect(strstr(why, "budget") && strstr(why, "Empty") && strstr(why, "default"),
                  "%s: %s: %s", c->name, name, why);
    }
    kp_scenario_free(&s);
}

/* ---------- which nodes count, and which consume the budget ---------- */

Test(disruption_budgets, unmanaged_nodes_do_not_count)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '50%'}]");
    add_nodes(&b, "u", 2, (node_opts){.unmanaged = true});
    add_nodes(&b, "n", 2, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 1);
    /* 50% of the 2 managed nodes, not of 4. */
    cr_expect_eq(first_emptiness(&s), 1);
    kp_scenario_free(&s);
}

Test(disruption_budgets, uninitialized_nodes_do_not_count)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '50%'}]");
    add_nodes(&b, "x", 2, (node_opts){.uninitialized = true});
    add_nodes(&b, "n", 2, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 1);
    cr_expect_eq(first_emptiness(&s), 1);
    cr_expect_eq(kp_scenario_disrupted_by(&s, "x00"), -1);
    kp_scenario_free(&s);
}

Test(disruption_budgets, nodeclaims_without_nodes_do_not_count)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '50%'}]");
    add_nodes(&b, "n", 2, (node_opts){0});
    for (int i = 0; i < 2; i++)
        kp_yaml_add(&b,
            "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: launching-%d, "
            "creationTimestamp: '" OLD "', labels: {karpenter.sh/nodepool: default}}\n"
            "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
            "status: {providerID: 'aws:///us-east-1a/i-launching-%d', conditions: [{type: "
            "Launched, status: 'True'}]}\n",
            i, i);
    kp_scenario s;
    plan(&s, &b, 1);
    cr_expect_eq(first_emptiness(&s), 1);
    kp_scenario_free(&s);
}

Test(disruption_budgets, deleting_nodes_count_and_consume)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '50%'}]");
    add_node(&b, "gone", (node_opts){.deleting = true});
    add_nodes(&b, "n", 3, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 1);
    /* 50% of 4 is 2; the node being deleted already uses one. */
    cr_expect_eq(first_emptiness(&s), 1);
    cr_expect_eq(kp_scenario_disrupted_by(&s, "gone"), -1);
    kp_scenario_free(&s);
}

Test(disruption_budgets, not_ready_nodes_consume)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '50%'}]");
    add_node(&b, "sick", (node_opts){.not_ready = true});
    add_nodes(&b, "n", 3, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 1);
    cr_expect_eq(first_emptiness(&s), 1);
    kp_scenario_free(&s);
}

Test(disruption_budgets, never_negative)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '10%'}]");
    add_nodes(&b, "gone", 3, (node_opts){.deleting = true});
    add_nodes(&b, "n", 2, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 0);
    /* 10% of 5 is 1, three are being deleted: nothing more, and no error. */
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    const char *why = kp_scenario_blocked_reason(&s, "n00");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "budget") != NULL, "%s", why);
    kp_scenario_free(&s);
}

Test(disruption_budgets, deleting_nodes_of_another_pool_do_not_consume)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '50%'}]");
    add_pool(&b, "other", "[{nodes: '50%'}]");
    add_nodes(&b, "o", 2, (node_opts){.pool = "other", .deleting = true});
    add_nodes(&b, "n", 2, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 1);
    cr_expect_eq(first_emptiness(&s), 1);
    kp_scenario_free(&s);
}

Test(disruption_budgets, each_nodepool_has_its_own)
{
    static kp_yaml b;
    static const char *const pools[] = {"alpha", "beta", "gamma"};
    for (int p = 0; p < 3; p++) {
        char prefix[16];
        add_pool(&b, pools[p], "[{nodes: '50%'}]");
        snprintf(prefix, sizeof(prefix), "%s-", pools[p]);
        add_nodes(&b, prefix, 3, (node_opts){.pool = pools[p]});
    }
    kp_scenario s;
    plan(&s, &b, 1);
    /* 50% of 3 rounds up to 2, in each of the three: one command of six. */
    cr_assert_eq(first_emptiness(&s), 6);
    const char *nodes = kp_scenario_command_nodes(&s, 0);
    for (int p = 0; p < 3; p++) {
        int taken = 0;
        for (const char *q = strstr(nodes, pools[p]); q; q = strstr(q + 1, pools[p]))
            taken++;
        cr_expect_eq(taken, 2, "%s in %s", pools[p], nodes);
    }
    kp_scenario_free(&s);
}

Test(disruption_budgets, zero_blocks_every_node_with_its_reason)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '0'}]");
    add_nodes(&b, "n", 3, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 0);
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%02d", i);
        const char *why = kp_scenario_blocked_reason(&s, name);
        cr_assert_not_null(why, "%s", name);
        cr_expect(strstr(why, "NodePool default") && strstr(why, "Empty"), "%s: %s", name, why);
    }
    kp_scenario_free(&s);
}

Test(disruption_budgets, underutilized_budget_holds_consolidation_not_emptiness)
{
    static kp_yaml b;
    add_pool(&b, "default", "[{nodes: '0', reasons: [Underutilized]}]");
    add_node(&b, "idle", (node_opts){0});
    add_node(&b, "a", (node_opts){0});
    add_node(&b, "b", (node_opts){0});
    add_pod(&b, "p", "a");
    add_pod(&b, "q", "b");
    kp_scenario s;
    plan(&s, &b, 0);
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "idle");
    /* a and b could share one node, but not now. */
    for (int i = 0; i < 2; i++) {
        const char *node = i ? "b" : "a";
        const char *why = kp_scenario_blocked_reason(&s, node);
        cr_assert_not_null(why, "%s", node);
        cr_expect(strstr(why, "budget") && strstr(why, "Underutilized"), "%s: %s", node, why);
    }
    kp_scenario_free(&s);
}

Test(disruption_budgets, each_loop_recounts_after_the_last_command)
{
    static kp_yaml b;
    add_pool(&b, "default", NULL);
    add_nodes(&b, "n", 10, (node_opts){0});
    kp_scenario s;
    plan(&s, &b, 0);
    /* 10% of what is left, rounded up, is one node each time: the plan
     * empties the pool one node per loop. */
    cr_assert_eq(kp_scenario_n_commands(&s), 10);
    for (uint32_t i = 0; i < 10; i++) {
        cr_expect_str_eq(kp_scenario_command_method(&s, i), "emptiness");
        cr_expect_null(strchr(kp_scenario_command_nodes(&s, i), ','), "command %u: %s", i,
                       kp_scenario_command_nodes(&s, i));
    }
    kp_scenario_free(&s);
}
