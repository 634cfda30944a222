/* NodePool upkeep (controller/nodepool_ctrl.c) against the fake API server and
 * the fake cloud provider: the template hash annotation and the NodeClaims
 * restamped with it, status.resources and status.nodes from our nodes and
 * in-flight claims, the ValidationSucceeded, NodeClassReady and Ready
 * conditions, and another provider's NodePool and NodeClaims left alone. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/nodepool_hash.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "controller/nodepool_ctrl.h"
#include "kube/objutil.h"
#include "helpers/ctrl_harness.h"
#include "helpers/assert.h"

#define POOLS   HARNESS_POOLS
#define CLAIMS  HARNESS_CLAIMS
#define CLASSES HARNESS_CLASSES

HARNESS_SUITE(nodepool_ctrl);

/* NodePool `name` of class `class_ref` with requirement `req` (a JSON object). */
static void put_pool_req(const char *name, const char *class_ref, const char *req)
{
    char tmpl[512];
    snprintf(tmpl, sizeof(tmpl), ",\"requirements\":[%s]", req);
    harness_put_pool(&h, (harness_obj){.name = name,
                                       .class_ref = class_ref,
                                       .template = tmpl,
                                       .spec = ",\"limits\":{\"cpu\":\"100\"}"});
}

static void put_pool(const char *name, const char *class_ref)
{
    put_pool_req(
        name, class_ref,
        "{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"on-demand\"]}");
}

static void put_node(const char *name, const char *pid, const char *cpu, const char *memory)
{
    char status[256];
    snprintf(status, sizeof(status), ",\"capacity\":{\"cpu\":\"%s\",\"memory\":\"%s\"}", cpu,
             memory);
    harness_put_node(&h, (harness_obj){.name = name, .provider_id = pid, .status = status});
}

/* A claim of pool default: class `class_ref`, provider ID `pid`, capacity
 * `cpu`, annotations as JSON members. */
static void put_claim(const char *name, const char *class_ref, const char *pid, const char *cpu,
                      const char *annotations)
{
    char status[128];
    snprintf(status, sizeof(status), ",\"capacity\":{\"cpu\":\"%s\"}", cpu);
    harness_put_claim(&h, (harness_obj){.name = name,
                                        .class_ref = class_ref,
                                        .provider_id = pid,
                                        .annotations = annotations,
                                        .status = status});
}

static int64_t reconcile(const char *pool)
{
    int64_t requeue = 0;
    KP_ASSERT_OK(kp_nodepool_reconcile(&h.c, NULL, pool, &requeue));
    return requeue;
}

/* The object as the server has it now (cJSON_Delete it). */
static cJSON *stored(const char *collection, const char *name)
{
    cJSON *o = harness_stored(&h, collection, name);
    cr_assert_not_null(o, "%s/%s is on the server", collection, name);
    return o;
}

static void expect_condition(const cJSON *obj, const char *type, const char *status,
                             const char *reason)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions"))
    {
        if (strcmp(kp_obj_str(c, "type"), type) != 0) continue;
        cr_expect_str_eq(kp_obj_str(c, "status"), status, "%s", type);
        cr_expect_str_eq(kp_obj_str(c, "reason"), reason, "%s", type);
        return;
    }
    cr_expect_fail("no condition %s", type);
}

static const char *condition_message(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(obj, "status"),
                              "conditions")) if (!strcmp(kp_obj_str(c, "type"),
                                                         type)) return kp_obj_str(c, "message");
    return "";
}

Test(nodepool_ctrl, hash_status_and_conditions_of_a_valid_pool)
{
    put_pool("default", NULL);
    put_node("n1", "fake://n1", "2", "8Gi");
    put_node("theirs", HARNESS_AWS_ID, "64", "256Gi");       /* not our node */
    put_claim("c-n1", NULL, "fake://n1", "2", "");           /* its node counts instead */
    put_claim("c-flight", NULL, "fake://c-flight", "4", ""); /* no node yet: counts itself */
    cr_expect_eq(reconcile("default"), 0);
    cJSON *pool = stored(POOLS, "default");
    char want[KP_NODEPOOL_HASH_LEN];
    kp_nodepool_hash(pool, want, sizeof(want));
    cr_expect_str_eq(kp_obj_annotation(pool, KP_ANNOTATION_NODEPOOL_HASH), want);
    cr_expect_str_eq(kp_obj_annotation(pool, KP_ANNOTATION_NODEPOOL_HASH_VERSION),
                     KP_NODEPOOL_HASH_VERSION);
    cr_expect_str_eq(kp_obj_str(pool, "status.resources.cpu"), "6");
    cr_expect_str_eq(kp_obj_str(pool, "status.resources.memory"), "8Gi");
    const cJSON *nodes =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pool, "status"), "nodes");
    cr_expect_eq(cJSON_GetNumberValue(nodes), 2, "n1 and the claim in flight");
    expect_condition(pool, "ValidationSucceeded", "True", "ValidationSucceeded");
    expect_condition(pool, "NodeClassReady", "True", "NodeClassReady");
    expect_condition(pool, "Ready", "True", "Ready");
    cJSON_Delete(pool);
}

Test(nodepool_ctrl, an_invalid_pool_is_not_ready)
{
    put_pool_req("default", NULL,
                 "{\"key\":\"karpenter.sh/nodepool\",\"operator\":\"In\",\"values\":[\"other\"]}");
    reconcile("default");
    cJSON *pool = stored(POOLS, "default");
    expect_condition(pool, "ValidationSucceeded", "False", "NodePoolValidationFailed");
    expect_condition(pool, "Ready", "False", "UnhealthyDependents");
    cJSON_Delete(pool);
}

Test(nodepool_ctrl, the_node_class_must_exist_and_be_ready)
{
    harness_add_informer(&h, KP_CK_NODECLASS, KP_RES_EC2NODECLASS);
    put_pool("default", NULL);
    reconcile("default");
    cJSON *pool = stored(POOLS, "default");
    expect_condition(pool, "NodeClassReady", "False", "NodeClassNotFound");
    expect_condition(pool, "Ready", "False", "UnhealthyDependents");
    cr_expect_str_eq(condition_message(pool, "Ready"), "NodeClassReady=False",
                     "Karpenter's status library's words");
    cJSON_Delete(pool);
    harness_put(&h, KP_CK_NODECLASS, CLASSES, "d",
                "{\"apiVersion\":\"karpenter.k8s.aws/"
                "v1\",\"kind\":\"EC2NodeClass\",\"metadata\":{\"name\":\"d\"},"
                "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    harness_sync(&h, KP_CK_NODEPOOL, POOLS "/default", "default");
    reconcile("default");
    pool = stored(POOLS, "default");
    expect_condition(pool, "NodeClassReady", "False", "NodeClassNotReady");
    cJSON_Delete(pool);
    harness_put(&h, KP_CK_NODECLASS, CLASSES, "d",
                "{\"apiVersion\":\"karpenter.k8s.aws/"
                "v1\",\"kind\":\"EC2NodeClass\",\"metadata\":{\"name\":\"d\"},"
                "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    harness_sync(&h, KP_CK_NODEPOOL, POOLS "/default", "default");
    reconcile("default");
    pool = stored(POOLS, "default");
    expect_condition(pool, "NodeClassReady", "True", "NodeClassReady");
    expect_condition(pool, "Ready", "True", "Ready");
    cJSON_Delete(pool);
}

Test(nodepool_ctrl, claims_of_another_hash_version_are_restamped_ours_only)
{
    put_pool("default", NULL);
    const char *old =
        "\"karpenter.sh/nodepool-hash\":\"1\",\"karpenter.sh/nodepool-hash-version\":\"v1\"";
    put_claim("adopted", NULL, "fake://adopted", "2", old);
    put_claim("foreign", HARNESS_AWS_CLASS, HARNESS_AWS_ID, "2", old);
    reconcile("default");
    cJSON *pool = stored(POOLS, "default");
    const char *hash = kp_obj_annotation(pool, KP_ANNOTATION_NODEPOOL_HASH);
    cr_assert_not_null(hash);
    cJSON *adopted = stored(CLAIMS, "adopted"), *foreign = stored(CLAIMS, "foreign");
    cr_expect_str_eq(kp_obj_annotation(adopted, KP_ANNOTATION_NODEPOOL_HASH), hash);
    cr_expect_str_eq(kp_obj_annotation(adopted, KP_ANNOTATION_NODEPOOL_HASH_VERSION),
                     KP_NODEPOOL_HASH_VERSION);
    cr_expect_str_eq(kp_obj_annotation(foreign, KP_ANNOTATION_NODEPOOL_HASH), "1",
                     "another provider's claim");
    cr_expect_str_eq(kp_obj_annotation(foreign, KP_ANNOTATION_NODEPOOL_HASH_VERSION), "v1");
    cr_expect_eq(fake_api_count(h.fa, "PATCH", CLAIMS "/foreign"), 0);
    cJSON_Delete(adopted);
    cJSON_Delete(foreign);
    cJSON_Delete(pool);
}

Test(nodepool_ctrl, another_providers_pool_is_not_written)
{
    put_pool("theirs", HARNESS_AWS_CLASS);
    size_t before = fake_api_count(h.fa, NULL, NULL);
    reconcile("theirs");
    cr_expect_eq(fake_api_count(h.fa, NULL, NULL), before, "no request about it");
    cJSON *pool = stored(POOLS, "theirs");
    cr_expect_null(kp_obj_annotation(pool, KP_ANNOTATION_NODEPOOL_HASH));
    cr_expect_null(kp_obj_condition(pool, "ValidationSucceeded"), "its status is not written");
    cJSON_Delete(pool);
}

static void conflict_on_status(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->method, "PATCH") != 0 || !strstr(req->path, "/status")) return;
    resp->status = 409;
    resp->body = strdup(
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Conflict\","
        "\"message\":\"the object has been modified\",\"code\":409}");
}

Test(nodepool_ctrl, a_status_conflict_is_tried_again_soon)
{
    put_pool("default", NULL);
    reconcile("default"); /* the hash annotation first */
    harness_sync(&h, KP_CK_NODEPOOL, POOLS "/default", "default");
    fake_api_set_hook(h.fa, conflict_on_status, NULL);
    int64_t requeue = 0;
    put_node("n1", "fake://n1", "2", "8Gi"); /* the status has something new to say */
    cr_expect_eq(kp_nodepool_reconcile(&h.c, NULL, "default", &requeue), 0,
                 "a conflict is not a failure");
    fake_api_set_hook(h.fa, NULL, NULL);
    cr_expect_eq(requeue, 100, "read again and retried in 100 ms");
}
