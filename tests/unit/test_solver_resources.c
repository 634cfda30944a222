/*
 * Solver scenarios: resource fit. Requests of every kind
 * (containers, init containers, restartable sidecars, pod overhead, pod-level
 * resources, extended resources) decide which instance types stay options,
 * the cheapest launches, and pods that fit nowhere say why. Cases follow
 * Karpenter's scheduling and provisioning suites.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

/* ---------- binpacking onto the cheapest type that holds the pods ---------- */

static void one_pool(yb *y)
{
    pool(y, "default", "{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}", NULL, NULL,
         NULL);
}

Test(solver_basic_fit, small_pod_gets_the_smallest_type)
{
    static const char *const memories[] = {"100M", "2000M"};
    for (size_t i = 0; i < 2; i++) {
        yb y = {0};
        kp_scenario s;
        char req[64];
        snprintf(req, sizeof(req), "memory: %s", memories[i]);
        one_pool(&y);
        pod(&y, "p", req, NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(kp_scenario_claim_of(&s, "p"), 0, "%s", memories[i]);
        cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "small-instance-type", "%s", memories[i]);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_fit, pod_overhead_counts_towards_the_fit)
{
    /* What a RuntimeClass with 2 CPUs of overhead leaves in spec.overhead:
     * 1 + 2 cores no longer fit the 2-core type. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "p", "cpu: '1'", "overhead: {cpu: '2'}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "p")), "default-instance-type");
    cr_assert_eq(claim_request(&s, 0, "cpu"), 3000);
    kp_scenario_free(&s);
}

Test(solver_basic_fit, several_small_pods_share_the_smallest_type)
{
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    deploy(&y, "small", 5, "memory: 10M", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_eq(kp_scenario_claim_pods(&s, 0), 5);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "small-instance-type");
    kp_scenario_free(&s);
}

Test(solver_basic_fit, new_nodeclaims_when_one_is_full)
{
    /* Two 1.8G pods fill a 4Gi type (the 2Gi one holds one): forty pods, twenty claims. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    deploy(&y, "big", 40, "memory: 1.8G", "nodeSelector: {kubernetes.io/arch: amd64}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 20);
    cr_assert_eq(s.plan->n_scheduled, 40);
    for (int c = 0; c < 20; c++) {
        cr_assert_eq(kp_scenario_claim_pods(&s, c), 2);
        cr_assert_str_eq(kp_scenario_claim_type(&s, c), "default-instance-type");
    }
    kp_scenario_free(&s);
}

Test(solver_basic_fit, small_pods_fill_the_gaps_left_by_large_ones)
{
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    deploy(&y, "big", 40, "memory: 1.8G", "nodeSelector: {kubernetes.io/arch: amd64}");
    deploy(&y, "little", 20, "memory: 400M", "nodeSelector: {kubernetes.io/arch: amd64}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_scheduled, 60);
    cr_assert_eq(s.plan->n_claims, 20);
    for (int c = 0; c < 20; c++)
        cr_assert_str_eq(kp_scenario_claim_type(&s, c), "default-instance-type");
    kp_scenario_free(&s);
}

Test(solver_basic_fit, pack_tightly_big_then_small)
{
    /* 4.5 cores need the 5-core type and leave no room for one more core. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "big", "cpu: 4.5", NULL);
    pod(&y, "small", "cpu: '1'", NULL);
    run(&s, &y, "synthetic:5");
    int a = kp_scenario_claim_of(&s, "big"), b = kp_scenario_claim_of(&s, "small");
    cr_assert(a >= 0 && b >= 0 && a != b);
    cr_assert_str_eq(kp_scenario_claim_type(&s, a), "fake-it-4");
    cr_assert_str_eq(kp_scenario_claim_type(&s, b), "fake-it-1");
    kp_scenario_free(&s);
}

Test(solver_basic_fit, zero_request_of_an_unknown_resource_fits)
{
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "p", "foo.com/weird-resources: '0'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_geq(kp_scenario_claim_of(&s, "p"), 0, "%s", kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_fit, pod_limit_per_node_opens_new_nodeclaims)
{
    /* Every type takes five pods: 25 tiny pods need five of the cheapest type. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    deploy(&y, "tiny", 25, "cpu: 1m, memory: 1m", "nodeSelector: {kubernetes.io/arch: amd64}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 5);
    for (int c = 0; c < 5; c++) {
        cr_assert_eq(kp_scenario_claim_pods(&s, c), 5);
        cr_assert_str_eq(kp_scenario_claim_type(&s, c), "small-instance-type");
        cr_assert_eq(claim_request(&s, c, "pods"), 5000);
    }
    kp_scenario_free(&s);
}

Test(solver_basic_fit, cheapest_valid_type_whatever_its_size)
{
    /* Sizes and prices do not correlate: every type is an option, the cheapest launches. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "p", "cpu: 1m, memory: 1Mi", NULL);
    run(&s, &y,
        "json:[{\"name\":\"medium\",\"capacity\":{\"cpu\":\"2\",\"memory\":\"2Gi\",\"pods\":\"5\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":3}]},"
        "{\"name\":\"small\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"5\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":2}]},"
        "{\"name\":\"large\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"5\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":1}]}]");
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "large");
    cr_assert_eq(claim_n_its(&s, 0), 3);
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, "node.kubernetes.io/instance-type"), "In [large medium small]");
    cr_assert_float_eq(s.plan->claims[0].price, 1.0, 1e-9);
    kp_scenario_free(&s);
}

/* ---------- init containers, sidecars, pod-level resources ---------- */

Test(solver_basic_fit, init_container_requests_count)
{
    /* 1 core for the app but 2 for the init container: more than the 2-core type holds. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {initContainers: [{name: i, resources: {requests: {cpu: '2', memory: 1Gi}}}],"
               " containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "p")), "default-instance-type");
    cr_assert_eq(claim_request(&s, 0, "cpu"), 2000);
    kp_scenario_free(&s);
}

Test(solver_basic_fit, init_container_too_big_for_every_type)
{
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {initContainers: [{name: i, resources: {requests: {cpu: '2', memory: 1Ti}}}],"
               " containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    expect_error(&s, "p", "no instance type has enough resources");
    expect_error(&s, "p", "memory: 1Ti");
    kp_scenario_free(&s);
}

/* Three types around the right size (10/4Gi, 11/5Gi, 12/6Gi): a mistake in
 * the effective requests picks the wrong one. */
#define EXAMPLE_TYPE(name, cpu, mem, price)                                                                   \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\",\"pods\":\"5\"},"        \
    FAKE_OVERHEAD ",\"labels\":{\"kubernetes.io/arch\":\"arch\"},"                                              \
    "\"offerings\":[{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":" price "}]}"
#define SIDECAR_CATALOG                                                                                       \
    "json:[" EXAMPLE_TYPE("example-10", "10", "4Gi", "1.43") "," EXAMPLE_TYPE("example-11", "11", "5Gi", "1.64") \
    "," EXAMPLE_TYPE("example-12", "12", "6Gi", "1.84") "]"

static const struct sidecar_case {
    const char *name;
    const char *init; /* initContainers list inside [] */
    const char *app;  /* the app container's requests */
    const char *want;
} sidecar_cases[] = {
    /* init 10/4Gi runs alone; then sidecar 4.9/2.9Gi + app 6/2Gi = 10.9/4.9Gi */
    {"init first", "{name: i, resources: {requests: {cpu: '10', memory: 4Gi}}},"
                   " {name: s, restartPolicy: Always, resources: {requests: {cpu: 4.9, memory: 2.9Gi}}}",
     "cpu: '6', memory: 2Gi", "example-11"},
    /* sidecar 4.9/2.9Gi, then init 5/1Gi beside it (9.9/3.9Gi); app phase 10.9/4.9Gi */
    {"sidecar first, small init", "{name: s, restartPolicy: Always, resources: {requests: {cpu: 4.9, memory: 2.9Gi}}},"
                                  " {name: i, resources: {requests: {cpu: '5', memory: 1Gi}}}",
     "cpu: '6', memory: 2Gi", "example-11"},
    /* sidecar 4.9/2.9Gi, then init 6/2Gi beside it (10.9/4.9Gi) beats the app phase (9.9/3.9Gi) */
    {"sidecar first, big init", "{name: s, restartPolicy: Always, resources: {requests: {cpu: 4.9, memory: 2.9Gi}}},"
                                " {name: i, resources: {requests: {cpu: '6', memory: 2Gi}}}",
     "cpu: '5', memory: 1Gi", "example-11"},
};

Test(solver_basic_fit, sidecar_init_containers)
{
    for (size_t i = 0; i < sizeof(sidecar_cases) / sizeof(sidecar_cases[0]); i++) {
        const struct sidecar_case *tc = &sidecar_cases[i];
        yb y = {0};
        kp_scenario s;
        one_pool(&y);
        yb_add(&y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {initContainers: [%s], containers: [{name: c, resources: {requests: {%s}}}]}\n",
               tc->init, tc->app);
        run(&s, &y, SIDECAR_CATALOG);
        int c = kp_scenario_claim_of(&s, "p");
        cr_assert_geq(c, 0, "%s: %s", tc->name, kp_scenario_error_of(&s, "p"));
        cr_assert_str_eq(kp_scenario_claim_type(&s, c), tc->want, "%s", tc->name);
        cr_assert_eq(claim_request(&s, c, "cpu"), 10900, "%s", tc->name);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_fit, pod_level_resources_win_over_containers)
{
    /* spec.resources asks 9.9 cores / 3.9Gi, more than the containers would. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {resources: {requests: {cpu: 9.9, memory: 3.9Gi}, limits: {cpu: '10', memory: 4Gi}},"
               " initContainers: [{name: i, resources: {requests: {cpu: '6', memory: 2Gi}}},"
               " {name: s, restartPolicy: Always, resources: {requests: {cpu: '4', memory: 2Gi}}}],"
               " containers: [{name: c, resources: {requests: {cpu: '5', memory: 1Gi}}}]}\n");
    run(&s, &y, SIDECAR_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "p")), "example-10");
    kp_scenario_free(&s);
}

/* ---------- extended resources ---------- */

Test(solver_basic_fit, gpu_request_keeps_only_gpu_types)
{
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "nv", "cpu: '1', memory: 1Mi, nvidia.com/gpu: '1'", NULL);
    pod(&y, "amd", "amd.com/gpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    int nv = kp_scenario_claim_of(&s, "nv"), amd = kp_scenario_claim_of(&s, "amd");
    cr_assert(nv >= 0 && amd >= 0 && nv != amd);
    cr_assert_eq(claim_n_its(&s, nv), 1);
    cr_assert_str_eq(kp_scenario_claim_type(&s, nv), "gpu-vendor-instance-type");
    cr_assert_eq(claim_n_its(&s, amd), 1);
    cr_assert_str_eq(kp_scenario_claim_type(&s, amd), "gpu-vendor-b-instance-type");
    /* The claim asks for what its pod asks, plus one pod slot. */
    cr_assert_eq(claim_request(&s, nv, "cpu"), 1000);
    cr_assert_eq(claim_request(&s, nv, "memory"), INT64_C(1024) * 1024 * 1000);
    cr_assert_eq(claim_request(&s, nv, "nvidia.com/gpu"), 1000);
    cr_assert_eq(claim_request(&s, nv, "pods"), 1000);
    kp_scenario_free(&s);
}

Test(solver_basic_fit, pod_without_gpu_prefers_cheaper_types_but_may_use_gpu_ones)
{
    /* Karpenter does not steer GPU-less pods away from GPU types: they stay
     * options, only price ranks them last. */
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "p", "cpu: '3'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "default-instance-type");
    cr_assert(claim_has_it(&s, 0, "gpu-vendor-instance-type"));
    cr_assert(!claim_has_it(&s, 0, "small-instance-type"));
    kp_scenario_free(&s);
}

Test(solver_basic_fit, resources_on_different_types_need_different_nodeclaims)
{
    /* Only fake-it-0 has the first resource and only fake-it-1 the second. */
#define GPU_TYPE(name, cpu, extra, price)                                                                     \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"" cpu "\",\"memory\":\"8Gi\",\"pods\":\"10\"" extra "},"   \
    "\"offerings\":[{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":" price "}]}"
    static const char *catalog = "json:[" GPU_TYPE("fake-it-0", "1", ",\"example.com/gpu-a\":\"25\"", "0.1") ","
        GPU_TYPE("fake-it-1", "2", ",\"example.com/gpu-b\":\"25\"", "0.2") "," GPU_TYPE("fake-it-2", "3", "", "0.3") "]";
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "a", "example.com/gpu-a: '1'", NULL);
    pod(&y, "b", "example.com/gpu-b: '1'", NULL);
    pod(&y, "both", "example.com/gpu-a: '1', example.com/gpu-b: '1'", NULL);
    run(&s, &y, catalog);
    int a = kp_scenario_claim_of(&s, "a"), b = kp_scenario_claim_of(&s, "b");
    cr_assert(a >= 0 && b >= 0 && a != b);
    cr_assert_str_eq(kp_scenario_claim_type(&s, a), "fake-it-0");
    cr_assert_str_eq(kp_scenario_claim_type(&s, b), "fake-it-1");
    cr_assert_eq(kp_scenario_claim_of(&s, "both"), -1);
    expect_error(&s, "both", "no instance type has enough resources");
    cr_assert_eq(s.plan->n_claims, 2);
    kp_scenario_free(&s);
}

/* ---------- pods that fit nowhere ---------- */

static const struct too_big_case {
    const char *requests;
    const char *named; /* the part of the reason that names the request */
} too_big_cases[] = {
    {"cpu: '512'", "cpu: 512"},
    {"memory: 2Ti", "memory: 2Ti"},
    {"cpu: '1', nvidia.com/gpu: '3'", "nvidia.com/gpu: 3"},
};

Test(solver_basic_fit, too_big_for_every_type_is_explained)
{
    for (size_t i = 0; i < sizeof(too_big_cases) / sizeof(too_big_cases[0]); i++) {
        yb y = {0};
        kp_scenario s;
        one_pool(&y);
        pod(&y, "huge", too_big_cases[i].requests, NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(s.plan->n_claims, 0, "%s", too_big_cases[i].requests);
        cr_assert_eq(s.plan->n_scheduled, 0);
        expect_error(&s, "huge", "no instance type has enough resources");
        expect_error(&s, "huge", too_big_cases[i].named);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_fit, limits_stand_in_for_missing_requests)
{
    /* Only limits: Kubernetes copies them into requests. 14 cores exceed every amd64 type. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: kubernetes.io/arch, operator: In, values: [amd64]}", NULL, NULL, NULL);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {containers: [{name: c, resources: {limits: {cpu: '14'}}}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    expect_error(&s, "p", "cpu: 14");
    kp_scenario_free(&s);
}

Test(solver_basic_fit, one_too_big_pod_does_not_block_the_others)
{
    yb y = {0};
    kp_scenario s;
    one_pool(&y);
    pod(&y, "huge", "cpu: '512'", NULL);
    deploy(&y, "ok", 3, "cpu: 100m", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_scheduled, 3);
    cr_assert_eq(s.plan->n_errors, 1);
    cr_assert_not_null(kp_scenario_error_of(&s, "huge"));
    cr_assert_null(kp_scenario_error_of(&s, "ok-0"));
    cr_assert_eq(s.plan->n_claims, 1);
    kp_scenario_free(&s);
}
