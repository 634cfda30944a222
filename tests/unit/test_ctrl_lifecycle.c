/* NodeClaim lifecycle (controller/lifecycle*.c) against the fake API server
 * and the fake cloud provider: what a launch writes, and in which order. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/lifecycle.h"
#include "kube/objutil.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
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

TestSuite(lifecycle, .init = setup, .fini = teardown, .timeout = 60);

static void put_new_claim(const char *name)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"c-%s\",\"labels\":{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"nodeClassRef\":"
             "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"},\"requirements\":[]}}",
             name, name);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, json);
}

/* Reconcile until the claim is Launched in the cache (a few passes: the
 * finalizer is written first). */
static void launch(const char *name)
{
    char buf[32];
    for (int i = 0; i < 10; i++) {
        int64_t requeue = 0;
        cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, name, &requeue), 0);
        const char *st = harness_condition(&h, KP_CK_NODECLAIM, name, "Launched", buf, sizeof(buf));
        if (st && !strcmp(st, "True"))
            return;
        harness_wait(&h, KP_CK_NODECLAIM, name, true);
    }
    cr_assert_fail("the claim never launched");
}

/* A reader between the two writes of a launch must never see Launched
 * without the instance's labels: the drift check would call the claim
 * RequirementsDrifted and replace a node that was just made. */
Test(lifecycle, a_launch_writes_labels_before_the_launched_condition)
{
    put_new_claim("c1");
    launch("c1");
    cr_expect_eq(h.cloud.creates, 1);
    long labels_at = -1, launched_at = -1;
    size_t n = fake_api_count(h.fa, "PATCH", CLAIMS "/c1");
    for (size_t i = 0; i < n; i++) {
        fake_logged req;
        cr_assert(fake_api_find(h.fa, "PATCH", CLAIMS "/c1", (long)i, &req));
        if (labels_at < 0 && strstr(req.body, "node.kubernetes.io/instance-type"))
            labels_at = (long)i;
        if (launched_at < 0 && strstr(req.body, "\"Launched\""))
            launched_at = (long)i;
    }
    cr_assert_geq(labels_at, 0, "the instance's label was written");
    cr_assert_geq(launched_at, 0, "Launched was written");
    cr_expect_lt(labels_at, launched_at, "labels (patch %ld) before Launched (patch %ld)", labels_at, launched_at);
    cJSON *obj = harness_get(&h, KP_CK_NODECLAIM, "c1");
    cr_assert(obj);
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "labels");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, "node.kubernetes.io/instance-type")),
                     "fake.large");
    cJSON_Delete(obj);
}

/* Ready as Karpenter's status library computes it: Unknown with
 * ReconcilingDependents while no step is False, naming every step not True. */
Test(lifecycle, ready_is_reconciling_its_dependents_until_they_are_true)
{
    put_new_claim("c1");
    launch("c1");
    cJSON *obj = harness_get(&h, KP_CK_NODECLAIM, "c1");
    cr_assert(obj);
    const cJSON *c, *ready = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"),
                                                          "conditions"))
        if (!strcmp(kp_obj_str(c, "type"), "Ready"))
            ready = c;
    cr_assert_not_null(ready);
    cr_expect_str_eq(kp_obj_str(ready, "status"), "Unknown");
    cr_expect_str_eq(kp_obj_str(ready, "reason"), "ReconcilingDependents");
    cr_expect_str_eq(kp_obj_str(ready, "message"), "Registered=Unknown, Initialized=Unknown");
    cJSON_Delete(obj);
}

/* Node `name` for claim c1's instance (fake://c1), with `taints` (JSON). */
static void put_joining_node(const char *name, const char *taints)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\"},"
             "\"spec\":{\"providerID\":\"fake://c1\",\"taints\":%s}}",
             name, name, taints);
    harness_put(&h, KP_CK_NODE, "/api/v1/nodes", name, json);
}

static void register_c1(void)
{
    int64_t requeue = 0;
    cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, "c1", &requeue), 0);
}

/* Karpenter registers a node that joined without karpenter.sh/unregistered,
 * and warns on the NodeClaim (UnregisteredTaintMissing). */
Test(lifecycle, a_node_joining_without_the_unregistered_taint_is_warned_about)
{
    put_new_claim("c1");
    launch("c1");
    put_joining_node("n1", "[]");
    register_c1();
    cr_expect_eq(harness_events(&h, "UnregisteredTaintMissing",
                                "Missing karpenter.sh/unregistered taint which prevents registration related race "
                                "conditions on Karpenter-managed nodes"),
                 1);
    char buf[32];
    harness_sync(&h, KP_CK_NODECLAIM, CLAIMS "/c1", "c1");
    cr_expect_str_eq(harness_condition(&h, KP_CK_NODECLAIM, "c1", "Registered", buf, sizeof(buf)), "True",
                     "registered all the same");
}

Test(lifecycle, a_node_joining_with_the_unregistered_taint_is_not)
{
    put_new_claim("c1");
    launch("c1");
    put_joining_node("n1", "[{\"key\":\"karpenter.sh/unregistered\",\"effect\":\"NoExecute\"}]");
    register_c1();
    cr_expect_eq(harness_events(&h, "UnregisteredTaintMissing", NULL), 0);
}

/* A reconcile that reads the claim as it was before the launch (a stale
 * cache, or a status write that was lost) must not create a second instance:
 * the launch is remembered by UID and written again. */
Test(lifecycle, a_claim_read_stale_after_its_launch_is_not_launched_twice)
{
    const char *json = "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"c3\","
                       "\"uid\":\"c-c3\",\"finalizers\":[\"karpenter.sh/termination\"],\"labels\":{\"karpenter.sh/"
                       "nodepool\":\"default\"}},\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.test\",\"kind\":"
                       "\"FakeNodeClass\",\"name\":\"d\"},\"requirements\":[]}}";
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, "c3", json);
    int64_t requeue = 0;
    cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, "c3", &requeue), 0);
    cr_assert_eq(h.cloud.creates, 1);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, "c3", json); /* the launch is lost from the server's copy */
    char buf[32];
    cr_assert_null(harness_condition(&h, KP_CK_NODECLAIM, "c3", "Launched", buf, sizeof(buf)));
    cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, "c3", &requeue), 0);
    cr_expect_eq(h.cloud.creates, 1, "the remembered launch is written again, not made again");
    cJSON *obj = fake_api_get(h.fa, CLAIMS "/c3");
    cr_assert(obj);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "providerID")), "fake://c3");
    cJSON_Delete(obj);
}

/* The second write is locked to the version the first one made, so it does
 * not conflict with our own write. */
Test(lifecycle, a_launch_is_not_requeued_by_its_own_label_write)
{
    put_new_claim("c2");
    launch("c2");
    cr_expect_eq(h.cloud.creates, 1, "one instance, not a second launch after a conflict");
}
