/*
 * The NodeClaim lifecycle counters under a stale cache: a reconcile that
 * reads a claim from before its own registration write runs registration
 * again, and its status write loses on the resourceVersion lock. Each
 * transition must be counted once (issue: launched 2, registered 3,
 * nodes_created 3 for 2 nodes).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/lifecycle.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define NODES "/api/v1/nodes"

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
    fake_api_set_patch_locks(h.fa, true); /* the lock that decides which write wins */
}

static void teardown(void)
{
    fake_api_set_hook(h.fa, NULL, NULL);
    harness_stop(&h);
}

TestSuite(metrics_lifecycle, .init = setup, .fini = teardown, .timeout = 60);

static void put_claim(const char *name)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"u-%s\",\"finalizers\":[\"karpenter.sh/termination\"],\"labels\":{\"karpenter.sh/nodepool\":"
             "\"default\",\"topology.kubernetes.io/zone\":\"test-zone-a\"}},\"spec\":{\"nodeClassRef\":{\"group\":"
             "\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"},\"requirements\":[]}}",
             name, name);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, json);
}

static void put_node(const char *name, const char *claim)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"providerID\":\"fake://%s\"},\"status\":{"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, claim);
    harness_put(&h, KP_CK_NODE, NODES, name, json);
}

static const char *condition(const char *claim, const char *type)
{
    static char buf[32];
    return harness_condition(&h, KP_CK_NODECLAIM, claim, type, buf, sizeof(buf));
}

/* Reconcile until the cache shows `type` True on the claim. */
static void reconcile_until(const char *claim, const char *type)
{
    for (int i = 0; i < 20; i++) {
        int64_t requeue = 0;
        cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, claim, &requeue), 0);
        for (int w = 0; w < 40; w++) { /* the cache catches up with the write */
            const char *st = condition(claim, type);
            if (st && !strcmp(st, "True"))
                return;
            usleep(5000);
        }
    }
    cr_assert_fail("%s never became %s", claim, type);
}

/* Watches of NodeClaims get a stream that says nothing: the claim cache
 * stays as it is while the server moves on. */
static void silent_claim_watch(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->method, "GET") != 0 || strcmp(req->path, CLAIMS) != 0 || !strstr(req->query, "watch="))
        return;
    resp->nchunks = 25; /* half a second of blank lines, then the stream ends and is asked for again */
    resp->chunks = calloc(resp->nchunks, sizeof(char *));
    for (size_t i = 0; i < resp->nchunks; i++)
        resp->chunks[i] = strdup("\n");
}

static double count(kp_metric *metric, const char *const *labels)
{
    return kp_metric_series_value(kp_metric_with(metric, labels));
}

Test(metrics_lifecycle, registration_on_a_stale_cache_is_counted_once)
{
    put_claim("r1");
    put_claim("r2");
    reconcile_until("r1", "Launched");
    reconcile_until("r2", "Launched");
    put_node("n1", "r1");
    put_node("n2", "r2");

    size_t watches = fake_api_count(h.fa, "GET", CLAIMS);
    fake_api_set_hook(h.fa, silent_claim_watch, NULL);
    fake_api_close_watches(h.fa); /* the claim informer reconnects to the silent stream */
    for (int i = 0; i < 400 && fake_api_count(h.fa, "GET", CLAIMS) == watches; i++)
        usleep(5000);
    cr_assert_gt(fake_api_count(h.fa, "GET", CLAIMS), watches, "the claim informer watched again");
    const char *claims[] = {"r1", "r2"};
    for (int i = 0; i < 2; i++)
        for (int pass = 0; pass < 2; pass++) { /* the second pass reads the claim from before the first's write */
            int64_t requeue = 0;
            cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, claims[i], &requeue), 0);
            cr_assert_null(condition(claims[i], "Registered"), "the cache is still stale");
        }
    fake_api_set_hook(h.fa, NULL, NULL);

    for (int i = 0; i < 2; i++) {
        char path[128];
        snprintf(path, sizeof(path), CLAIMS "/%s", claims[i]);
        cJSON *obj = fake_api_get(h.fa, path);
        cr_assert(obj);
        char *status = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(obj, "status"));
        cr_expect(strstr(status, "\"type\":\"Registered\",\"status\":\"True\""), "%s is registered: %s",
                  claims[i], status);
        free(status);
        cJSON_Delete(obj);
    }
    const char *pool[] = {"default"}, *pool_zone[] = {"default", "test-zone-a"};
    cr_expect_eq(count(h.m.nodeclaims_launched, pool), 2);
    cr_expect_eq(count(h.m.nodeclaims_registered, pool), 2, "registered %g times for 2 claims",
                 count(h.m.nodeclaims_registered, pool));
    cr_expect_eq(count(h.m.nodes_created, pool_zone), 2, "nodes_created %g for 2 nodes",
                 count(h.m.nodes_created, pool_zone));
}

/* Initialization is counted when its write lands, not per reconcile. */
Test(metrics_lifecycle, initialization_is_counted_once_per_claim)
{
    put_claim("i1");
    reconcile_until("i1", "Launched");
    put_node("n3", "i1");
    reconcile_until("i1", "Initialized");
    for (int i = 0; i < 3; i++) {
        int64_t requeue = 0;
        cr_assert_geq(kp_lifecycle_reconcile(&h.c, NULL, "i1", &requeue), 0);
    }
    const char *pool[] = {"default"};
    cr_expect_eq(count(h.m.nodeclaims_launched, pool), 1);
    cr_expect_eq(count(h.m.nodeclaims_registered, pool), 1);
    cr_expect_eq(count(h.m.nodeclaims_initialized, pool), 1);
}
