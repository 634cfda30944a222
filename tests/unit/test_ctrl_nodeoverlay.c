/* The NodeOverlay controller (controller/nodeoverlay_ctrl.c) against the fake
 * API server: the conditions it writes (Ready, ValidationSucceeded with
 * Conflict or RuntimeValidation, as Karpenter's controller), the store it
 * publishes, and NodePools whose instance types cannot be had. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "controller/nodeoverlay_ctrl.h"
#include "helpers/ctrl_harness.h"
#include "kube/ops.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define POOLS "/apis/karpenter.sh/v1/nodepools"
#define OVERLAYS "/apis/karpenter.sh/v1alpha1/nodeoverlays"

static harness h;
static kp_overlay_state *state;

static void setup(void)
{
    harness_start(&h, T0);
    state = kp_overlay_state_new();
    h.c.overlays = state;
}

static void teardown(void)
{
    h.c.overlays = NULL;
    kp_overlay_state_free(state);
    harness_stop(&h);
}

TestSuite(nodeoverlay_ctrl, .init = setup, .fini = teardown, .timeout = 60);

static void put_pool(const char *name, const char *group)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"p-%s\",\"generation\":1},\"spec\":{\"template\":{\"spec\":{\"requirements\":[],\"nodeClassRef\":"
             "{\"group\":\"%s\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}}}}}",
             name, name, group);
    harness_put(&h, KP_CK_NODEPOOL, POOLS, name, json);
}

/* `spec` as JSON object members. */
static void put_overlay(const char *name, const char *spec)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1alpha1\",\"kind\":\"NodeOverlay\",\"metadata\":{\"name\":\"%s\","
             "\"generation\":1},\"spec\":{%s}}",
             name, spec);
    harness_put(&h, KP_CK_NODEOVERLAY, OVERLAYS, name, json);
}

/* Field `field` of condition `type` as the server has it ("" when absent). */
static const char *server_condition(const char *name, const char *type, const char *field, char *buf, size_t n)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", OVERLAYS, name);
    cJSON *o = fake_api_get(h.fa, path);
    const cJSON *c;
    buf[0] = '\0';
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions"))
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), type))
            snprintf(buf, n, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(c, field)));
    cJSON_Delete(o);
    return buf;
}

#define EXPECT_CONDITION(name, type, field, want)                                                                     \
    do {                                                                                                              \
        char b_[1024];                                                                                                \
        cr_expect(strstr(server_condition(name, type, field, b_, sizeof(b_)), want) != NULL, "%s %s.%s: %s", name,   \
                  type, field, b_);                                                                                   \
    } while (0)

static double m5_price(const char *pool)
{
    kp_overlay_store *store = kp_overlay_state_get(state);
    cr_assert_not_null(store);
    const kp_catalog *base = NULL;
    cr_assert_eq(h.c.cloud->ops->instance_types(h.c.cloud, NULL, &base), 0);
    kp_catalog *c = NULL;
    int err = kp_overlay_store_apply(store, pool, base, &c);
    kp_overlay_store_unref(store);
    cr_assert_eq(err, 0, "%s", kp_error_last());
    const kp_instance_type *it = kp_catalog_find(c ? c : base, "m5.large");
    cr_assert_not_null(it);
    double price = it->offerings[0].price;
    kp_catalog_free(c);
    return price;
}

static int reconcile(int64_t *requeue)
{
    *requeue = 0;
    return kp_nodeoverlay_reconcile(&h.c, state, KP_NODEOVERLAY_KEY, requeue);
}

Test(nodeoverlay_ctrl, conditions_say_what_was_applied)
{
    put_pool("default", "karpenter.test");
    put_overlay("pricey", "\"weight\":10,\"price\":\"9\",\"requirements\":[{\"key\":"
                          "\"node.kubernetes.io/instance-type\",\"operator\":\"In\",\"values\":[\"m5.large\"]}]");
    put_overlay("cheap", "\"weight\":10,\"price\":\"0.001\",\"requirements\":[{\"key\":\"kubernetes.io/arch\","
                         "\"operator\":\"In\",\"values\":[\"amd64\"]}]");
    put_overlay("bad", "\"capacity\":{\"cpu\":\"1\"},\"requirements\":[]");
    cr_expect_null(kp_overlay_state_get(state), "nothing published before the first evaluation");
    int64_t requeue;
    cr_assert_eq(reconcile(&requeue), 0, "%s", kp_error_last());
    cr_expect_eq(requeue, KP_NODEOVERLAY_RESYNC_MS);
    EXPECT_CONDITION("pricey", "Ready", "status", "True");
    EXPECT_CONDITION("pricey", "ValidationSucceeded", "reason", "ValidationSucceeded");
    EXPECT_CONDITION("cheap", "ValidationSucceeded", "status", "False");
    EXPECT_CONDITION("cheap", "ValidationSucceeded", "reason", "Conflict");
    EXPECT_CONDITION("cheap", "ValidationSucceeded", "message", "conflict with another overlay: pricey");
    EXPECT_CONDITION("cheap", "Ready", "status", "False");
    EXPECT_CONDITION("cheap", "Ready", "reason", "UnhealthyDependents");
    EXPECT_CONDITION("cheap", "Ready", "message", "ValidationSucceeded=False");
    EXPECT_CONDITION("bad", "ValidationSucceeded", "reason", "RuntimeValidation");
    EXPECT_CONDITION("bad", "ValidationSucceeded", "message", "invalid resource restricted");
    cr_expect_float_eq(m5_price("default"), 9.0, 1e-12, "pricey is published, cheap is not");
}

Test(nodeoverlay_ctrl, nothing_changed_writes_nothing)
{
    put_pool("default", "karpenter.test");
    put_overlay("o", "\"priceAdjustment\":\"+100%\",\"requirements\":[]");
    int64_t requeue;
    cr_assert_eq(reconcile(&requeue), 0, "%s", kp_error_last());
    cr_assert(harness_wait(&h, KP_CK_NODEOVERLAY, "o", true));
    char b[64];
    for (int i = 0; i < 100 && !harness_condition(&h, KP_CK_NODEOVERLAY, "o", "Ready", b, sizeof(b)); i++)
        usleep(20000);
    size_t writes = fake_api_count(h.fa, "PATCH", OVERLAYS "/o/status");
    cr_expect_gt(writes, 0);
    cr_assert_eq(reconcile(&requeue), 0, "%s", kp_error_last());
    cr_expect_eq(fake_api_count(h.fa, "PATCH", OVERLAYS "/o/status"), writes);
}

Test(nodeoverlay_ctrl, other_providers_pools_and_failing_pools_are_not_evaluated)
{
    put_pool("default", "karpenter.test");
    put_pool("foreign", "example.com");
    put_overlay("o", "\"price\":\"3\",\"requirements\":[]");
    int64_t requeue;
    cr_assert_eq(reconcile(&requeue), 0, "%s", kp_error_last());
    kp_overlay_store *store = kp_overlay_state_get(state);
    const kp_catalog *base = NULL;
    cr_assert_eq(h.c.cloud->ops->instance_types(h.c.cloud, NULL, &base), 0);
    kp_catalog *c = NULL;
    cr_expect_eq(kp_overlay_store_apply(store, "foreign", base, &c), KP_ENOTREADY, "not ours to evaluate");
    kp_overlay_store_unref(store);

    h.cloud.types_err = KP_ERETRY;
    cr_expect_eq(reconcile(&requeue), KP_ERETRY, "the provider's failure is retried");
    cr_expect(strstr(kp_error_last(), "nodepool default"), "%s", kp_error_last());
    store = kp_overlay_state_get(state);
    cr_expect_eq(kp_overlay_store_apply(store, "default", base, &c), KP_ENOTREADY, "awaiting evaluation");
    kp_overlay_store_unref(store);
}
