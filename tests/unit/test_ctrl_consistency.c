/* NodeClaim consistency (controller/consistency_ctrl.c) against the fake API
 * server: Karpenter's node-shape check, its event, condition and period. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/consistency_ctrl.h"
#include "helpers/ctrl_harness.h"

HARNESS_SUITE(consistency);

#define INITIALIZED                                                                                \
    "{\"type\":\"Initialized\",\"status\":\"True\",\"reason\":\"Initialized\",\"message\":\"\","   \
    "\"lastTransitionTime\":\"2025-12-31T00:00:00Z\"}"

static void put_node(const char *name, const char *capacity)
{
    char pid[64], status[256];
    snprintf(pid, sizeof(pid), "fake://%s", name);
    snprintf(status, sizeof(status), ",\"capacity\":{%s}", capacity);
    harness_put_node(&h, (harness_obj){.name = name, .provider_id = pid, .status = status});
}

/* A claim that requested cpu and memory and expected 4 cpu / 16Gi; its Node
 * reports `node_capacity` (members of status.capacity). */
static void put_pair(const char *name, const char *node_capacity, const char *claim_meta,
                     const char *conditions)
{
    char pid[64], spec[256], status[512];
    snprintf(pid, sizeof(pid), "fake://%s", name);
    snprintf(spec, sizeof(spec),
             ",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"0\"}}");
    snprintf(status, sizeof(status),
             ",\"capacity\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\",\"ephemeral-"
             "storage\":\"20Gi\"},"
             "\"conditions\":[%s]",
             conditions);
    harness_put_claim(&h, (harness_obj){.name = name,
                                        .provider_id = pid,
                                        .node_name = name,
                                        .spec = spec,
                                        .status = status,
                                        .meta = claim_meta});
    put_node(name, node_capacity);
}

static kp_consistency *state;

static int64_t reconcile(const char *name)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_consistency_reconcile(&h.c, state, name, &requeue), 0);
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", HARNESS_CLAIMS, name);
    harness_sync(&h, KP_CK_NODECLAIM, path, name);
    return requeue;
}

static const char *condition_of(const char *name, const char *member, char *buf, size_t size)
{
    cJSON *claim = harness_stored(&h, HARNESS_CLAIMS, name);
    cr_assert_not_null(claim);
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(claim, "status"), "conditions");
    const cJSON *c;
    buf[0] = '\0';
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, member);
        if (cJSON_IsString(t) && !strcmp(t->valuestring, "ConsistentStateFound") &&
            cJSON_IsString(v))
            snprintf(buf, size, "%s", v->valuestring);
    }
    cJSON_Delete(claim);
    return buf;
}

Test(consistency, a_node_short_of_memory_fails_the_check)
{
    state = kp_consistency_new();
    put_pair("short", "\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"", NULL, INITIALIZED);
    cr_expect_eq(reconcile("short"), KP_CONSISTENCY_SCAN_MS,
                 "checked again after Karpenter's 10 minutes");
    cr_expect_eq(
        harness_events(&h, "FailedConsistencyCheck",
                       "expected 16Gi of resource memory, but found 8Gi (50.0% of expected)"),
        1);
    cr_expect_eq(harness_events(&h, "FailedConsistencyCheck", "resource cpu"), 0,
                 "4 of 4 cpu is fine");
    cr_expect_eq(harness_events(&h, "FailedConsistencyCheck", "ephemeral-storage"), 0,
                 "not requested: not checked");
    char buf[128];
    cr_expect_str_eq(condition_of("short", "status", buf, sizeof(buf)), "False");
    cr_expect_str_eq(condition_of("short", "reason", buf, sizeof(buf)), "ConsistencyCheckFailed");
    cr_expect_str_eq(condition_of("short", "message", buf, sizeof(buf)),
                     "Consistency Check Failed");
    state = kp_consistency_free(state);
}

Test(consistency, a_node_of_the_expected_shape_is_consistent)
{
    state = kp_consistency_new();
    /* 90% exactly passes: 3.6 of 4 cpu; memory in another unit. */
    put_pair("fine", "\"cpu\":\"3600m\",\"memory\":\"16384Mi\"", NULL, INITIALIZED);
    reconcile("fine");
    char buf[128];
    cr_expect_str_eq(condition_of("fine", "status", buf, sizeof(buf)), "True");
    cr_expect_str_eq(condition_of("fine", "reason", buf, sizeof(buf)), "ConsistentStateFound");
    cr_expect_eq(harness_events(&h, "FailedConsistencyCheck", NULL), 0);
    state = kp_consistency_free(state);
}

Test(consistency, checks_at_most_every_ten_minutes)
{
    state = kp_consistency_new();
    put_pair("later", "\"cpu\":\"1\",\"memory\":\"16Gi\"", NULL, INITIALIZED);
    reconcile("later");
    cr_expect_eq(harness_events(&h, "FailedConsistencyCheck", "resource cpu"), 1);
    h.clock.ns += 4 * 60 * KP_NS_PER_SEC;
    /* The Node is fixed, but the claim was checked 4 minutes ago. */
    put_node("later", "\"cpu\":\"4\",\"memory\":\"16Gi\"");
    cr_expect_eq(reconcile("later"), 6 * 60 * 1000 + 1,
                 "put off until 10 minutes after the last check");
    char buf[128];
    cr_expect_str_eq(condition_of("later", "status", buf, sizeof(buf)), "False");
    h.clock.ns += 6 * 60 * KP_NS_PER_SEC;
    reconcile("later");
    cr_expect_str_eq(condition_of("later", "status", buf, sizeof(buf)), "True");
    state = kp_consistency_free(state);
}

Test(consistency, uninitialized_or_deleting_claims_are_not_checked)
{
    state = kp_consistency_new();
    put_pair("young", "\"cpu\":\"1\",\"memory\":\"1Gi\"", NULL, "");
    reconcile("young");
    put_pair("going", "\"cpu\":\"1\",\"memory\":\"1Gi\"",
             ",\"deletionTimestamp\":\"2025-12-31T00:00:00Z\",\"finalizers\":[\"karpenter.sh/"
             "termination\"]",
             INITIALIZED);
    reconcile("going");
    cr_expect_eq(harness_events(&h, "FailedConsistencyCheck", NULL), 0);
    char buf[128];
    cr_expect_str_eq(condition_of("young", "status", buf, sizeof(buf)), "True",
                     "no issue found: consistent");
    cr_expect_str_eq(condition_of("going", "status", buf, sizeof(buf)), "",
                     "a claim being deleted is not written (Karpenter returns before any check)");
    state = kp_consistency_free(state);
}

Test(consistency, claims_without_a_node_or_of_another_provider_are_left_alone)
{
    state = kp_consistency_new();
    harness_put_claim(&h, (harness_obj){.name = "alone", .provider_id = "fake://alone"});
    reconcile("alone");
    harness_put_claim(&h, (harness_obj){.name = "aws",
                                        .provider_id = HARNESS_AWS_ID,
                                        .class_ref = HARNESS_AWS_CLASS});
    harness_put_node(&h, (harness_obj){.name = "aws", .provider_id = HARNESS_AWS_ID});
    reconcile("aws");
    char buf[128];
    cr_expect_str_eq(condition_of("alone", "status", buf, sizeof(buf)), "");
    cr_expect_str_eq(condition_of("aws", "status", buf, sizeof(buf)), "");
    state = kp_consistency_free(state);
}
