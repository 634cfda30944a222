/* NodePool registration health (controller/registration_health.c):
 * NodeRegistrationHealthy from launch and registration outcomes, as
 * Karpenter's nodepoolhealth tracker and liveness/registration steps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/lifecycle.h"
#include "controller/nodepool_ctrl.h"
#include "controller/registration_health.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define POOLS "/apis/karpenter.sh/v1/nodepools"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(reghealth, .init = setup, .fini = teardown, .timeout = 60);

static void put_pool(int generation, const char *conditions)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"default\",\"uid\":"
             "\"p1\",\"generation\":%d},\"spec\":{\"template\":{\"spec\":{\"requirements\":[],\"nodeClassRef\":"
             "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}}}},\"status\":{\"conditions\":"
             "[%s]}}",
             generation, conditions);
    harness_put(&h, KP_CK_NODEPOOL, POOLS, "default", json);
}

/* A claim of pool p1 whose launch ended as `launched` ("True" or a failed
 * reason) long ago. */
static cJSON *claim(const char *name, const char *launched)
{
    char json[1536];
    bool ok = !strcmp(launched, "True");
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":\"c-%s\","
             "\"labels\":{\"karpenter.sh/nodepool\":\"default\"},\"ownerReferences\":[{\"apiVersion\":"
             "\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"name\":\"default\",\"uid\":\"p1\"}]},\"spec\":"
             "{\"nodeClassRef\":{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},"
             "\"status\":{%s\"conditions\":[{\"type\":\"Launched\",\"status\":\"%s\",\"reason\":\"%s\",\"message\":"
             "\"%s\",\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"}%s]}}",
             name, name, ok ? "\"providerID\":\"fake://x\"," : "", ok ? "True" : "Unknown", ok ? "Launched" : launched,
             ok ? "" : "the image is not available",
             ok ? ",{\"type\":\"Registered\",\"status\":\"Unknown\",\"reason\":\"NodeNotFound\",\"message\":\"\","
                  "\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"}"
                : "");
    return cJSON_Parse(json);
}

static const char *pool_condition(char *buf, size_t size)
{
    return harness_condition(&h, KP_CK_NODEPOOL, "default", "NodeRegistrationHealthy", buf, size);
}

/* The pool's condition once the cache shows `want` (NULL: absent), waiting
 * up to 5 s for the write to arrive; what it is otherwise. */
static const char *wait_condition(const char *want, char *buf, size_t size)
{
    const char *got = NULL;
    for (int i = 0; i < 100; i++) {
        got = pool_condition(buf, size);
        if (want ? got && !strcmp(got, want) : !got)
            break;
        usleep(50000);
    }
    return got;
}

static void record(const char *launched, bool success)
{
    cJSON *c = claim("c", launched);
    cr_assert_geq(kp_reghealth_record(&h.c, c, success, T0), 0);
    cJSON_Delete(c);
}

Test(reghealth, half_of_the_last_four_failing_is_unhealthy)
{
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_UNKNOWN);
    kp_reghealth_update(&h.c, "p", false);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_HEALTHY, "one failure of four is not half");
    cr_expect_eq(kp_reghealth_dry_run(&h.c, "p", false), KP_REGHEALTH_UNHEALTHY);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_HEALTHY, "a dry run changes nothing");
    kp_reghealth_update(&h.c, "p", false);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_UNHEALTHY);
    kp_reghealth_update(&h.c, "p", true), kp_reghealth_update(&h.c, "p", true);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_UNHEALTHY, "two of the last four still failed");
    kp_reghealth_update(&h.c, "p", true);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_HEALTHY, "the oldest failure left the window");
    kp_reghealth_set(&h.c, "p", KP_REGHEALTH_UNHEALTHY);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_UNHEALTHY);
    kp_reghealth_set(&h.c, "p", KP_REGHEALTH_UNKNOWN);
    cr_expect_eq(kp_reghealth_status(&h.c, "p"), KP_REGHEALTH_UNKNOWN);
}

Test(reghealth, failed_launches_set_false_with_the_launch_reason_and_successes_set_true)
{
    put_pool(1, "");
    char buf[64];
    record("LaunchFailed", false);
    cr_expect_null(pool_condition(buf, sizeof(buf)), "one failure: still healthy, nothing written");
    record("LaunchFailed", false);
    cr_assert_str_eq(wait_condition("False", buf, sizeof(buf)), "False");
    cJSON *pool = harness_get(&h, KP_CK_NODEPOOL, "default");
    char *text = cJSON_PrintUnformatted(pool);
    cr_expect(strstr(text, "\"reason\":\"LaunchFailed\",\"message\":\"the image is not available\""), "%s", text);
    free(text);
    cJSON_Delete(pool);
    record("True", true), record("True", true);
    cr_expect_str_eq(pool_condition(buf, sizeof(buf)), "False");
    record("True", true);
    cr_expect_str_eq(wait_condition("True", buf, sizeof(buf)), "True");
}

Test(reghealth, a_claim_of_another_pool_incarnation_is_not_counted)
{
    put_pool(1, "");
    cJSON *c = claim("c", "LaunchFailed");
    cJSON *ref = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "metadata"), "ownerReferences"), 0);
    cJSON_ReplaceItemInObject(ref, "uid", cJSON_CreateString("old-uid"));
    kp_reghealth_record(&h.c, c, false, T0), kp_reghealth_record(&h.c, c, false, T0);
    cJSON_Delete(c);
    cr_expect_eq(kp_reghealth_status(&h.c, "p1"), KP_REGHEALTH_UNKNOWN);
}

/* The lifecycle's registration timeout tells the pool before the claim goes. */
Test(reghealth, registration_timeouts_make_the_pool_unhealthy)
{
    put_pool(1, "");
    char buf[64];
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "r%d", i);
        cJSON *c = claim(name, "True");
        cJSON *fin = cJSON_AddArrayToObject(cJSON_GetObjectItem(c, "metadata"), "finalizers");
        cJSON_AddItemToArray(fin, cJSON_CreateString("karpenter.sh/termination"));
        char *json = cJSON_PrintUnformatted(c);
        harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, json);
        free(json);
        cJSON_Delete(c);
        int64_t requeue = 0;
        cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, name, &requeue), 0);
    }
    cr_assert_str_eq(wait_condition("False", buf, sizeof(buf)), "False");
    cJSON *pool = harness_get(&h, KP_CK_NODEPOOL, "default");
    char *text = cJSON_PrintUnformatted(pool);
    cr_expect(strstr(text, "\"reason\":\"RegistrationFailed\",\"message\":\"Failed to register node\""), "%s", text);
    free(text);
    cJSON_Delete(pool);
}

/* The NodePool reconciler: Unknown at first, the history taken from the
 * condition after a restart, and reset when the pool changes. */
Test(reghealth, the_pool_reconciler_resets_on_a_new_generation)
{
    put_pool(1, "");
    int64_t requeue = 0;
    char buf[64];
    cr_assert_geq(kp_nodepool_reconcile(&h.c, NULL, "default", &requeue), 0);
    cr_expect_str_eq(wait_condition("Unknown", buf, sizeof(buf)), "Unknown");

    put_pool(1, "{\"type\":\"NodeRegistrationHealthy\",\"status\":\"False\",\"reason\":\"LaunchFailed\",\"message\":"
                "\"x\",\"observedGeneration\":1,\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"}");
    kp_reghealth_set(&h.c, "p1", KP_REGHEALTH_UNKNOWN); /* a restarted controller */
    cr_assert_geq(kp_nodepool_reconcile(&h.c, NULL, "default", &requeue), 0);
    cr_expect_eq(kp_reghealth_status(&h.c, "p1"), KP_REGHEALTH_UNHEALTHY, "the condition is the history");

    put_pool(2, "{\"type\":\"NodeRegistrationHealthy\",\"status\":\"False\",\"reason\":\"LaunchFailed\",\"message\":"
                "\"x\",\"observedGeneration\":1,\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"}");
    cr_assert_geq(kp_nodepool_reconcile(&h.c, NULL, "default", &requeue), 0);
    cr_expect_str_eq(wait_condition("Unknown", buf, sizeof(buf)), "Unknown", "a changed NodePool is given another chance");
    cr_expect_eq(kp_reghealth_status(&h.c, "p1"), KP_REGHEALTH_UNKNOWN);
}
