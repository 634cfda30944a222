/* The static NodePool controller (controller/static_ctrl.c) against the fake
 * API server: replicas created whatever the pods do, limits.nodes, surplus
 * removed unlaunched-first and empty-first, a pool whose node a disruption is
 * replacing left alone, and nothing at all with the gate off. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "controller/static_ctrl.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define NODES "/api/v1/nodes"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define POOLS "/apis/karpenter.sh/v1/nodepools"
#define PODS "/api/v1/namespaces/default/pods"

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
    h.c.opts.static_capacity = true;
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(static_ctrl, .init = setup, .fini = teardown, .timeout = 90);

static void put_pool(int replicas, const char *limits)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"fixed\",\"uid\":\"p1\"},"
             "\"spec\":{\"replicas\":%d%s,\"template\":{\"metadata\":{\"labels\":{\"team\":\"a\"}},\"spec\":"
             "{\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\",\"values\":"
             "[\"m5.large\",\"m5.xlarge\"]},{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":"
             "[\"on-demand\"]}],\"nodeClassRef\":{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":"
             "\"d\"}}}},\"status\":{" HARNESS_POOL_READY "}}",
             replicas, limits ? limits : "");
    harness_put(&h, KP_CK_NODEPOOL, POOLS, "fixed", json);
}

/* A claim of pool "fixed": launched with a Node when `launched`, extra
 * conditions in `conditions` (",{...}"). */
static void put_claim(const char *name, bool launched, const char *conditions)
{
    char claim[2048], node[1024];
    const char *labels = "\"karpenter.sh/nodepool\":\"fixed\",\"node.kubernetes.io/instance-type\":\"m5.large\","
                         "\"topology.kubernetes.io/zone\":\"us-east-1a\",\"karpenter.sh/capacity-type\":\"on-demand\"";
    snprintf(claim, sizeof(claim),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"c-%s\",\"labels\":{%s},\"creationTimestamp\":\"2025-12-01T00:00:00Z\"},\"spec\":{\"nodeClassRef\":"
             "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},\"status\":{%s%s%s"
             "\"conditions\":[{\"type\":\"Launched\",\"status\":\"%s\"}%s]}}",
             name, name, labels, launched ? "\"providerID\":\"fake://" : "", launched ? name : "",
             launched ? "\"," : "", launched ? "True" : "Unknown", conditions ? conditions : "");
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, claim);
    if (!launched)
        return;
    snprintf(node, sizeof(node),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{%s,"
             "\"karpenter.sh/registered\":\"true\",\"karpenter.sh/initialized\":\"true\"}},\"spec\":{\"providerID\":"
             "\"fake://%s\"},\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"29\"}}}",
             name, labels, name);
    harness_put(&h, KP_CK_NODE, NODES, name, node);
}

static void put_pod(const char *name, const char *node)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
             "\"100m\"}}}]},\"status\":{\"phase\":\"Running\"}}",
             name, node);
    char key[128];
    snprintf(key, sizeof(key), "default/%s", name);
    harness_put(&h, KP_CK_POD, PODS, key, json);
}

static void count_one(void *ctx, const char *key, const cJSON *obj)
{
    (void)key, (void)obj;
    ++*(int *)ctx;
}

static int claims(void)
{
    int n = 0;
    kp_informer_foreach_indexed(h.c.informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, "fixed", count_one, &n);
    return n;
}

static bool has_claim(const char *name)
{
    cJSON *o = harness_get(&h, KP_CK_NODECLAIM, name);
    cJSON_Delete(o);
    return o != NULL;
}

static int64_t reconcile(void)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_static_reconcile(&h.c, NULL, "fixed", &requeue), 0, "%s", kp_error_last());
    return requeue;
}

typedef struct first_claim {
    cJSON *obj;
} first_claim;

static void keep_first(void *ctx, const char *key, const cJSON *obj)
{
    first_claim *f = ctx;
    (void)key;
    if (!f->obj)
        f->obj = cJSON_Duplicate(obj, 1);
}

Test(static_ctrl, creates_the_replicas_from_the_template_with_no_pods_pending)
{
    put_pool(3, NULL);
    cr_expect_eq(reconcile(), 60000, "looked at again in a minute");
    cr_expect_eq(claims(), 3);
    first_claim f = {NULL};
    kp_informer_foreach_indexed(h.c.informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, "fixed", keep_first, &f);
    char *text = cJSON_PrintUnformatted(f.obj);
    cr_expect(strstr(text, "\"team\":\"a\""), "the template's labels: %s", text);
    cr_expect(strstr(text, "\"values\":[\"m5.large\",\"m5.xlarge\"]"), "the template's types, as written: %s", text);
    cr_expect(strstr(text, "\"karpenter.sh/nodepool-hash\""), "%s", text);
    cJSON_free(text);
    cJSON_Delete(f.obj);
    reconcile();
    cr_expect_eq(claims(), 3, "nothing more once the replicas exist");
    kp_buf out = KP_BUF_INIT(1 << 20);
    kp_metrics_write(h.c.metrics, &out);
    cr_expect(strstr(kp_buf_cstr(&out), "karpenter_nodeclaims_created_total{reason=\"provisioned\",nodepool=\"fixed\","
                                        "min_values_relaxed=\"false\"} 3"),
              "%s", kp_buf_cstr(&out));
    kp_buf_free(&out);
}

Test(static_ctrl, limits_nodes_holds_and_the_controller_looks_again_sooner)
{
    put_pool(3, ",\"limits\":{\"nodes\":\"2\"}");
    reconcile();
    cr_expect_eq(claims(), 2);
    cr_expect_eq(reconcile(), 30000, "at the limit: again in 30 s");
    cr_expect_eq(claims(), 2);
}

Test(static_ctrl, a_deleted_replica_is_replaced)
{
    put_pool(2, NULL);
    put_claim("r1", true, NULL);
    put_claim("r2", true, NULL);
    reconcile();
    cr_expect_eq(claims(), 2);
    cr_assert(fake_api_remove(h.fa, CLAIMS "/r2"));
    cr_assert(harness_wait(&h, KP_CK_NODECLAIM, "r2", false));
    reconcile();
    cr_expect_eq(claims(), 2, "a new claim takes its place");
}

Test(static_ctrl, surplus_goes_unlaunched_first_then_empty)
{
    put_pool(1, NULL);
    put_claim("busy", true, NULL);
    put_pod("p", "busy");
    put_claim("idle", true, NULL);
    put_claim("fresh", false, NULL);
    reconcile();
    cr_expect_eq(claims(), 1);
    cr_expect(has_claim("busy"), "the node running a pod stays");
    cr_expect(!has_claim("fresh") && !has_claim("idle"));
}

Test(static_ctrl, a_replica_being_replaced_by_a_disruption_is_not_surplus)
{
    put_pool(2, NULL);
    put_claim("old", true, ",{\"type\":\"DisruptionReason\",\"status\":\"True\",\"reason\":\"Drifted\"}");
    put_claim("keep", true, NULL);
    put_claim("replacement", false, NULL);
    reconcile();
    cr_expect_eq(claims(), 3, "two active and one pending: neither more nor fewer");
}

Test(static_ctrl, the_gate_off_leaves_static_pools_alone)
{
    h.c.opts.static_capacity = false;
    put_pool(3, NULL);
    reconcile();
    cr_expect_eq(claims(), 0);
}

Test(static_ctrl, dynamic_and_unknown_pools_are_not_its_business)
{
    int64_t requeue = 0;
    cr_expect_eq(kp_static_reconcile(&h.c, NULL, "nothing", &requeue), 0);
    cr_expect_eq(requeue, 0);
    cr_expect_eq(claims(), 0);
}
