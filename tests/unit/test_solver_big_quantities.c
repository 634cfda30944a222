/*
 * Quantities past the int64 milli-unit range, which Kubernetes accepts
 * (resource.Quantity switches to arbitrary precision; BinarySI is capped at
 * 2^63-1): Karpenter's own scheduling benchmark gives its NodePool a memory
 * limit of 10000000Gi. Such a NodePool must pass admission, load into
 * simulate and the controller's snapshot, and its limits must hold exactly.
 */
#include "api/admission.h"
#include "base/error.h"

#include "solver_scenarios.h"

#define BIG_LIMITS "limits: {cpu: \"10000000\", memory: 10000000Gi, ephemeral-storage: 100Pi, nvidia.com/gpu: 8Ei}"

Test(big_quantities, admission_accepts_limits_kubernetes_accepts)
{
    const char *text = "{\"apiVersion\": \"karpenter.sh/v1\", \"kind\": \"NodePool\", \"metadata\": {\"name\": \"big\"},"
                       " \"spec\": {\"template\": {\"spec\": {\"nodeClassRef\": {\"group\": \"karpenter.k8s.aws\","
                       " \"kind\": \"EC2NodeClass\", \"name\": \"default\"}, \"requirements\": []}},"
                       " \"limits\": {\"cpu\": \"10000000\", \"memory\": \"10000000Gi\","
                       " \"ephemeral-storage\": \"100Pi\", \"nvidia.com/gpu\": \"8Ei\"}}}";
    cJSON *obj = cJSON_Parse(text);
    cr_assert_not_null(obj);
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cr_assert_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, obj, NULL, &res), 0, "%s",
                 kp_error_last());
    for (size_t i = 0; i < res.errors.count; i++)
        cr_log_error("%s: %s", res.errors.items[i].path, res.errors.items[i].detail ? res.errors.items[i].detail : "");
    cr_expect_eq(res.errors.count, 0, "a NodePool the API server accepts is refused");
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    cJSON_Delete(obj);
}

/* Karpenter's benchmark NodePool, through the same path as simulate. */
Test(big_quantities, simulate_plans_with_the_benchmark_limits)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, BIG_LIMITS);
    deploy(&y, "web", 20, "cpu: \"1\", memory: 1Gi", NULL);
    run(&s, &y, "synthetic:50");
    cr_expect_eq(s.plan->n_errors, 0, "%s", s.plan->n_errors ? s.plan->errors[0].reason : "");
    cr_expect_gt(s.plan->n_claims, 0);
    kp_scenario_free(&s);
}

/* Two managed nodes of 4250000Gi (together 8500000Gi, more than the int64
 * milli-unit range holds) under a 10000000Gi limit: 1500000Gi are left, so
 * a new node fits. A saturated limit would say nothing is left. */
static void two_big_nodes(yb *y, const char *memory_limit)
{
    char spec[160];
    snprintf(spec, sizeof(spec), "limits: {memory: %s}", memory_limit);
    pool(y, "default", NULL, NULL, NULL, spec);
    for (int i = 0; i < 2; i++) {
        char name[16], labels[256];
        snprintf(name, sizeof(name), "huge-%d", i);
        snprintf(labels, sizeof(labels),
                 "karpenter.sh/nodepool: default, kubernetes.io/hostname: %s, topology.kubernetes.io/zone: test-zone-1",
                 name);
        node(y, name, labels, "taints: [{key: full, effect: NoSchedule}]",
             "cpu: \"64\", memory: 4250000Gi, pods: \"110\"");
    }
    pod(y, "p", "cpu: \"1\", memory: 1Gi", NULL);
}

Test(big_quantities, limits_past_int64_milli_are_exact)
{
    yb y = {0};
    kp_scenario s;
    two_big_nodes(&y, "10000000Gi");
    run(&s, &y, "synthetic:50");
    cr_expect_eq(s.plan->n_errors, 0, "%s", s.plan->n_errors ? s.plan->errors[0].reason : "");
    cr_expect_eq(s.plan->n_claims, 1);
    kp_scenario_free(&s);
}

Test(big_quantities, limits_past_int64_milli_still_bind)
{
    yb y = {0};
    kp_scenario s;
    two_big_nodes(&y, "8500000Gi");
    run(&s, &y, "synthetic:50");
    cr_assert_eq(s.plan->n_errors, 1);
    const char *why = kp_scenario_error_of(&s, "p");
    cr_assert_not_null(why);
    cr_expect(strstr(why, "exceed nodepool \"default\" limits: memory 8500000Gi"), "%s", why);
    kp_scenario_free(&s);
}
