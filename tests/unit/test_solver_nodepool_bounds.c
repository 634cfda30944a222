/*
 * Solver scenarios: NodePools against each other and their
 * bounds. Taints pods must tolerate (startup taints they need not), weights
 * (heaviest first, lighter ones as fallback), limits on cpu, memory, nodes and
 * custom resources (counting what the NodePool already has), and minValues.
 * Cases follow Karpenter's provisioning suite and instance selection tests.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

/* ---------- taints ---------- */

#define GPU_TAINT "taints: [{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]"

static const struct toleration_case {
    const char *tolerations;
    bool tolerated;
} toleration_cases[] = {
    {"[{key: nvidia.com/gpu, operator: Equal, value: 'true', effect: NoSchedule}]", true},
    {"[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", true},
    {"[{key: nvidia.com/gpu, operator: Exists}]", true},
    {"[{operator: Exists}]", true},
    {"[]", false},
    {"[{key: nvidia.com/gpu, operator: Equal, value: 'false', effect: NoSchedule}]", false},
    {"[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]", false},
    {"[{key: other, operator: Exists}]", false},
};

Test(solver_basic_pools, pods_must_tolerate_nodepool_taints)
{
    for (size_t i = 0; i < sizeof(toleration_cases) / sizeof(toleration_cases[0]); i++) {
        yb y = {0};
        kp_scenario s;
        char spec[256];
        pool(&y, "gpu", NULL, GPU_TAINT, NULL, NULL);
        snprintf(spec, sizeof(spec), "tolerations: %s", toleration_cases[i].tolerations);
        pod(&y, "p", NULL, spec);
        run(&s, &y, FAKE_CATALOG);
        int c = kp_scenario_claim_of(&s, "p");
        cr_assert_eq(c >= 0, toleration_cases[i].tolerated, "%s", toleration_cases[i].tolerations);
        if (!toleration_cases[i].tolerated) {
            expect_error(&s, "p", "nodepool \"gpu\"");
            expect_error(&s, "p", "did not tolerate taint nvidia.com/gpu=true:NoSchedule");
        } else {
            /* The NodeClaim carries the taint. */
            const cJSON *taints = cJSON_GetObjectItemCaseSensitive(json_claim(&s, c), "taints");
            cr_assert_eq(cJSON_GetArraySize(taints), 1);
            cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(taints, 0), "key")->valuestring,
                             "nvidia.com/gpu");
        }
        kp_scenario_free(&s);
    }
}

Test(solver_basic_pools, startup_taints_do_not_need_tolerations)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, "startupTaints: [{key: foo.com/taint, value: tainted, effect: NoSchedule}]", NULL, NULL);
    pod(&y, "p", "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_geq(kp_scenario_claim_of(&s, "p"), 0, "%s", kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_pools, prefer_no_schedule_is_a_last_resort)
{
    /* Alone, a PreferNoSchedule NodePool takes the pod; beside an untainted
     * NodePool (even a lighter one) it loses. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "soft", NULL, "taints: [{key: foo, value: bar, effect: PreferNoSchedule}]", NULL, "weight: 50");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "p")), "soft");
    kp_scenario_free(&s);

    pool(&y, "soft", NULL, "taints: [{key: foo, value: bar, effect: PreferNoSchedule}]", NULL, "weight: 50");
    pool(&y, "plain", NULL, NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "p")), "plain");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, two_nodepools_with_different_taints)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "pool-a", NULL, "taints: [{key: team, value: a, effect: NoSchedule}]", NULL, NULL);
    pool(&y, "pool-b", NULL, "taints: [{key: team, value: b, effect: NoSchedule}]", NULL, NULL);
    pod(&y, "a", NULL, "tolerations: [{key: team, operator: Equal, value: a}]");
    pod(&y, "b", NULL, "tolerations: [{key: team, operator: Equal, value: b}]");
    pod(&y, "none", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "a")), "pool-a");
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "b")), "pool-b");
    cr_assert_eq(s.plan->n_claims, 2);
    expect_error(&s, "none", "team=a:NoSchedule");
    expect_error(&s, "none", "team=b:NoSchedule");
    expect_error(&s, "none", "\"pool-a\"");
    expect_error(&s, "none", "\"pool-b\"");
    kp_scenario_free(&s);
}

/* ---------- weights and several NodePools ---------- */

Test(solver_basic_pools, heaviest_nodepool_first)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "unweighted", NULL, NULL, NULL, NULL);
    pool(&y, "weight-20", NULL, NULL, NULL, "weight: 20");
    pool(&y, "weight-100", NULL, NULL, NULL, "weight: 100");
    deploy(&y, "app", 3, NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    for (int p = 0; p < 3; p++) {
        char name[32];
        snprintf(name, sizeof(name), "app-%d", p);
        cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, name)), "weight-100");
    }
    kp_scenario_free(&s);
}

Test(solver_basic_pools, explicitly_selected_nodepool_wins_over_weight)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "target", NULL, NULL, NULL, NULL);
    pool(&y, "weight-20", NULL, NULL, NULL, "weight: 20");
    pool(&y, "weight-100", NULL, NULL, NULL, "weight: 100");
    pod(&y, "p", NULL, "nodeSelector: {karpenter.sh/nodepool: target}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "p")), "target");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, nodepool_chosen_by_template_labels)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "labelled", NULL, NULL, "labels: {foo: bar}", NULL);
    pool(&y, "plain", NULL, NULL, NULL, "weight: 10");
    pod(&y, "p", NULL, "nodeSelector: {foo: bar}");
    run(&s, &y, FAKE_CATALOG);
    int p = kp_scenario_claim_of(&s, "p");
    cr_assert_str_eq(kp_scenario_claim_pool(&s, p), "labelled");
    cr_assert_str_eq(json_claim_label(&s, p, "foo"), "bar");
    cr_assert_str_eq(json_claim_label(&s, p, "karpenter.sh/nodepool"), "labelled");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, lighter_nodepool_when_the_heavier_is_incompatible)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "arm", "{key: kubernetes.io/arch, operator: In, values: [arm64]}", NULL, NULL, "weight: 100");
    pool(&y, "fallback", NULL, NULL, NULL, "weight: 1");
    /* "any" asks for more CPU, so it is placed first and opens an arm64 claim
     * "amd" cannot join. */
    pod(&y, "any", "cpu: 100m", NULL);
    pod(&y, "amd", NULL, "nodeSelector: {kubernetes.io/arch: amd64}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "amd")), "fallback");
    cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, "any")), "arm");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, lighter_nodepool_when_the_heavier_is_full)
{
    /* Both NodePools only launch 4-core types and the heavy one may launch one node. */
#define ONLY_DEFAULT "{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}"
    yb y = {0};
    kp_scenario s;
    pool(&y, "heavy", ONLY_DEFAULT, NULL, NULL, "weight: 100, limits: {nodes: '1'}");
    pool(&y, "light", ONLY_DEFAULT, NULL, NULL, NULL);
    deploy(&y, "app", 2, "cpu: '3'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_str_eq(kp_scenario_claim_pool(&s, 0), "heavy");
    cr_assert_str_eq(kp_scenario_claim_pool(&s, 1), "light");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, deleting_nodepool_is_ignored)
{
    yb y = {0};
    kp_scenario s;
    yb_add(&y, "apiVersion: karpenter.sh/v1\nkind: NodePool\n"
               "metadata: {name: going, deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [karpenter.sh/termination]}\n"
               "spec: {template: {spec: {" NODECLASS ", requirements: []}}}\n");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    expect_error(&s, "p", "no nodepool");
    kp_scenario_free(&s);
}

/* ---------- limits ---------- */

static const struct limit_case {
    const char *name;
    const char *limits;
    const char *requests;
    bool schedulable;
    const char *reason;
} limit_cases[] = {
    {"2 cores allow a 2-core type", "cpu: '2'", "cpu: 1.75", true, NULL},
    {"2 cores forbid a 4-core type", "cpu: '2'", "cpu: 2.1", false, NULL},
    /* single-pod-instance-type is within the limit but has no GPU */
    {"a pod slot limit below every GPU type's", "pods: '1'", "nvidia.com/gpu: '1'", false, NULL},
    {"memory within the limit", "memory: 3Gi", "cpu: '1'", true, NULL},
    {"memory beyond the limit", "memory: 3Gi", "cpu: '3'", false, NULL},
    {"a custom resource below the type's", "nvidia.com/gpu: '1'", "nvidia.com/gpu: '1'", false,
     "nvidia.com/gpu"},
    {"a custom resource at the type's", "nvidia.com/gpu: '2'", "nvidia.com/gpu: '1'", true, NULL},
    {"no node allowed", "nodes: '0'", NULL, false, "node limit"},
};

Test(solver_basic_pools, limits_rule_out_instance_types)
{
    for (size_t i = 0; i < sizeof(limit_cases) / sizeof(limit_cases[0]); i++) {
        const struct limit_case *tc = &limit_cases[i];
        yb y = {0};
        kp_scenario s;
        char spec[128];
        snprintf(spec, sizeof(spec), "limits: {%s}", tc->limits);
        pool(&y, "default", NULL, NULL, NULL, spec);
        pod(&y, "p", tc->requests, NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(kp_scenario_claim_of(&s, "p") >= 0, tc->schedulable, "%s: %s", tc->name,
                     kp_scenario_error_of(&s, "p"));
        if (tc->reason)
            expect_error(&s, "p", tc->reason);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_pools, limits_count_the_nodepools_nodeclaims)
{
    /* A NodeClaim of the NodePool already holds 100 cores of a 20-core limit. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, "limits: {cpu: '20'}");
    yb_add(&y, "apiVersion: karpenter.sh/v1\nkind: NodeClaim\n"
               "metadata: {name: big, labels: {karpenter.sh/nodepool: default}}\n"
               "spec: {" NODECLASS ", requirements: []}\n"
               "status: {capacity: {cpu: '100'}}\n");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    expect_error(&s, "p", "all compatible instance types exceed nodepool \"default\" limits");
    expect_error(&s, "p", "cpu");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, limits_count_existing_nodes_of_the_pool_only)
{
    /* 4 of 6 cores used by the pool's node: only 2-core types remain. The
     * other pool's node does not count. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, "limits: {cpu: '6'}");
    node(&y, "mine", "karpenter.sh/nodepool: default, karpenter.sh/initialized: 'true'",
         "taints: [{key: full, effect: NoSchedule}]", "cpu: '4', memory: 4Gi, pods: '5'");
    node(&y, "theirs", "karpenter.sh/nodepool: other, karpenter.sh/initialized: 'true'",
         "taints: [{key: full, effect: NoSchedule}]", "cpu: '64', memory: 64Gi, pods: '50'");
    pod(&y, "fits", "cpu: 1.5", NULL);
    pod(&y, "too-big", "cpu: '3'", NULL);
    run(&s, &y, FAKE_CATALOG);
    int c = kp_scenario_claim_of(&s, "fits");
    cr_assert_geq(c, 0, "%s", kp_scenario_error_of(&s, "fits"));
    cr_assert_str_eq(kp_scenario_claim_type(&s, c), "small-instance-type");
    cr_assert_eq(claim_n_its(&s, c), 1);
    cr_assert_eq(kp_scenario_claim_of(&s, "too-big"), -1);
    kp_scenario_free(&s);
}

#define ANTI_AFFINITY                                                                                         \
    "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname," \
    " labelSelector: {matchLabels: {app: spread}}}]}}"

static void spread_pods(yb *y, int n, const char *requests)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "spread-%d", i);
        podm(y, name, "labels: {app: spread}", requests, ANTI_AFFINITY);
    }
}

Test(solver_basic_pools, cpu_limit_lets_only_some_pods_schedule)
{
    /* Each pod needs its own 2-core node (1.5 cores + overhead); 3 cores allow one. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, "limits: {cpu: '3'}");
    spread_pods(&y, 2, "cpu: 1.5");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_scheduled, 1);
    cr_assert_eq(s.plan->n_errors, 1);
    kp_scenario_free(&s);
}

Test(solver_basic_pools, node_limit_caps_new_nodeclaims)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, "limits: {nodes: '2'}");
    spread_pods(&y, 3, "cpu: 1.5");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_eq(s.plan->n_scheduled, 2);
    cr_assert_eq(s.plan->n_errors, 1);
    cr_assert(strstr(s.plan->errors[0].reason, "nodepool \"default\" node limit of 2 is reached"), "%s",
              s.plan->errors[0].reason);
    kp_scenario_free(&s);
}

Test(solver_basic_pools, limit_reserves_the_largest_option)
{
    /* The first claim may still become a 4-core type, so of 6 cores only 2
     * remain for the second: it may only use the 2-core type. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, "limits: {cpu: '6'}");
    spread_pods(&y, 2, "cpu: '1'");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_eq(claim_n_its(&s, 1), 1);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 1), "small-instance-type");
    cr_assert(!claim_has_it(&s, 0, "arm-instance-type")); /* 16 cores exceed the limit outright */
    kp_scenario_free(&s);
}

/* ---------- minValues ---------- */

#define MV_OFFER "\"offerings\":[{\"zone\":\"test-zone-1-spot\",\"capacityType\":\"spot\",\"price\":"
#define MV_TYPE(name, cpu, mem, arch, extra, price)                                                           \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\",\"pods\":\"5\"},"        \
    FAKE_OVERHEAD ",\"labels\":{\"kubernetes.io/arch\":\"" arch "\"" extra "}," MV_OFFER price "}]}"
#define NUM(v) ",\"karpenter/numerical-value\":\"" v "\""
/* Two pods of 0.9 cores / 0.9Gi fit together only on the 4-core types. */
#define MV_CATALOG                                                                                            \
    "json:[" MV_TYPE("instance-type-1", "1", "1Gi", "arm64", "", "0.52") ","                                  \
    MV_TYPE("instance-type-2", "4", "4Gi", "arm64", "", "1.0") ","                                            \
    MV_TYPE("instance-type-3", "4", "4Gi", "arm64", "", "1.2") "]"
#define MV_CATALOG_MIXED_ARCH                                                                                 \
    "json:[" MV_TYPE("instance-type-1", "1", "1Gi", "arm64", "", "0.52") ","                                  \
    MV_TYPE("instance-type-2", "4", "4Gi", "amd64", "", "1.0") "]"
/* A numeric custom label; the pods fit together only on the largest type in range. */
#define GT_CATALOG                                                                                            \
    "json:[" MV_TYPE("instance-type-1", "1", "1Gi", "arm64", NUM("2"), "0.52") ","                            \
    MV_TYPE("instance-type-2", "1", "1Gi", "arm64", NUM("3"), "1.0") ","                                      \
    MV_TYPE("instance-type-3", "4", "4Gi", "arm64", NUM("4"), "1.2") "]"
#define LT_CATALOG                                                                                            \
    "json:[" MV_TYPE("instance-type-1", "1", "1Gi", "arm64", NUM("2"), "0.52") ","                            \
    MV_TYPE("instance-type-2", "2", "2Gi", "arm64", NUM("3"), "1.0") ","                                      \
    MV_TYPE("instance-type-3", "4", "4Gi", "arm64", NUM("4"), "1.2") "]"
#define GT_LT_CATALOG                                                                                         \
    "json:[" MV_TYPE("instance-type-1", "1", "1Gi", "arm64", NUM("2"), "0.52") ","                            \
    MV_TYPE("instance-type-2", "1", "1Gi", "arm64", NUM("3"), "1.0") ","                                      \
    MV_TYPE("instance-type-3", "4", "4Gi", "arm64", NUM("4"), "1.2") ","                                      \
    MV_TYPE("instance-type-4", "4", "4Gi", "arm64", NUM("5"), "1.2") "]"
#define MV_PODS "cpu: 0.9, memory: 0.9Gi"
#define IT_KEY "node.kubernetes.io/instance-type"
#define NUM_KEY "karpenter/numerical-value"

static const struct min_values_case {
    const char *name;
    const char *reqs;
    const char *catalog;
    const char *pod_spec;
    bool schedulable;
} min_values_cases[] = {
    {"instance types In, minValues 2",
     "{key: " IT_KEY ", operator: In, values: [instance-type-1, instance-type-2], minValues: 2}", MV_CATALOG, NULL,
     true},
    {"custom key Gt, minValues 2", "{key: " NUM_KEY ", operator: Gt, values: ['2'], minValues: 2}", GT_CATALOG, NULL,
     true},
    {"custom key Lt, minValues 2", "{key: " NUM_KEY ", operator: Lt, values: ['4'], minValues: 2}", LT_CATALOG, NULL,
     true},
    {"Gt minValues 1 and Lt minValues 2 on one key",
     "{key: " NUM_KEY ", operator: Gt, values: ['2'], minValues: 1},"
     " {key: " NUM_KEY ", operator: Lt, values: ['5'], minValues: 2}",
     GT_LT_CATALOG, NULL, true},
    {"In minValues 1 and NotIn minValues 2 on one key",
     "{key: " IT_KEY ", operator: In, values: [instance-type-1, instance-type-2, instance-type-3], minValues: 1},"
     " {key: " IT_KEY ", operator: NotIn, values: [instance-type-3], minValues: 2}",
     MV_CATALOG, NULL, true},
    {"Exists minValues 1 and In minValues 2 on one key",
     "{key: " IT_KEY ", operator: Exists, minValues: 1},"
     " {key: " IT_KEY ", operator: In, values: [instance-type-1, instance-type-2], minValues: 2}",
     MV_CATALOG, NULL, true},
    {"two keys with minValues",
     "{key: kubernetes.io/arch, operator: Exists, minValues: 2},"
     " {key: " IT_KEY ", operator: In, values: [instance-type-1, instance-type-2], minValues: 1}",
     MV_CATALOG_MIXED_ARCH, NULL, true},
    {"pod narrows below minValues", "{key: " NUM_KEY ", operator: Exists, minValues: 2}", GT_CATALOG,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{"
     "matchExpressions: [{key: " NUM_KEY ", operator: Gt, values: ['3']}]}]}}}",
     false},
};

/* The two pods cannot share a claim: sharing leaves one type, fewer than minValues. */
Test(solver_basic_pools, min_values_keep_enough_distinct_values)
{
    for (size_t i = 0; i < sizeof(min_values_cases) / sizeof(min_values_cases[0]); i++) {
        const struct min_values_case *tc = &min_values_cases[i];
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", tc->reqs, NULL, NULL, NULL);
        pod(&y, "p1", MV_PODS, tc->pod_spec);
        pod(&y, "p2", MV_PODS, tc->pod_spec);
        run(&s, &y, tc->catalog);
        int a = kp_scenario_claim_of(&s, "p1"), b = kp_scenario_claim_of(&s, "p2");
        if (!tc->schedulable) {
            cr_assert(a < 0 && b < 0, "%s: placed", tc->name);
            expect_error(&s, "p1", "minValues");
            expect_error(&s, "p1", "karpenter/numerical-value");
            kp_scenario_free(&s);
            continue;
        }
        cr_assert(a >= 0 && b >= 0, "%s: %s", tc->name, kp_scenario_error_of(&s, a < 0 ? "p1" : "p2"));
        cr_assert_neq(a, b, "%s: the pods share a claim", tc->name);
        cr_assert_geq(claim_n_its(&s, a), 2, "%s", tc->name);
        cr_assert_geq(claim_n_its(&s, b), 2, "%s", tc->name);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_pools, min_values_above_the_number_of_types)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: " IT_KEY ", operator: Exists, minValues: 11}", NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, "synthetic:10");
    cr_assert_eq(s.plan->n_claims, 0);
    expect_error(&s, "p", "minValues");
    kp_scenario_free(&s);
}

Test(solver_basic_pools, min_values_best_effort_relaxes)
{
    yb y = {0};
    kp_scenario s;
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.min_values_best_effort = true;
    pool(&y, "default", "{key: " IT_KEY ", operator: Exists, minValues: 11}", NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run_opts(&s, &y, "synthetic:10", &opts);
    cr_assert_eq(kp_scenario_claim_of(&s, "p"), 0, "%s", kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_pools, min_values_survive_truncation)
{
    /* Keeping only the cheapest type per claim would break minValues 2. */
    yb y = {0};
    kp_scenario s;
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.max_instance_types = 1;
    pool(&y, "default", "{key: " IT_KEY ", operator: In, values: [instance-type-1, instance-type-2], minValues: 2}",
         NULL, NULL, NULL);
    pod(&y, "p1", MV_PODS, NULL);
    pod(&y, "p2", MV_PODS, NULL);
    run_opts(&s, &y, MV_CATALOG, &opts);
    cr_assert_eq(kp_scenario_claim_of(&s, "p1"), -1);
    cr_assert_eq(kp_scenario_claim_of(&s, "p2"), -1);
    kp_scenario_free(&s);
}

Test(solver_basic_pools, min_values_on_instance_families_builtin)
{
    /* Three families from the built-in AWS catalog; the claim keeps types of all three. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default",
         "{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5, r5], minValues: 3},"
         " {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
         NULL, NULL, NULL);
    pod(&y, "p", "cpu: '1', memory: 1Gi", NULL);
    run(&s, &y, "builtin");
    cr_assert_eq(kp_scenario_claim_of(&s, "p"), 0, "%s", kp_scenario_error_of(&s, "p"));
    bool seen[3] = {false, false, false};
    static const char *const fams[] = {"m5", "c5", "r5"};
    for (uint32_t i = 0; i < claim_n_its(&s, 0); i++)
        for (int f = 0; f < 3; f++)
            seen[f] |= it_has_label(&s, s.plan->claims[0].its[i], "karpenter.k8s.aws/instance-family", fams[f]);
    cr_assert(seen[0] && seen[1] && seen[2]);
    kp_scenario_free(&s);
}
