/* The REST layer (shared/kube/rest.h, resources.h, ratelimit.h) against the fake API server. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "helpers/fake_apiserver.h"
#include "kube/ops.h"
#include "kube/ratelimit.h"
#include "kube/rest.h"
#include "helpers/assert.h"

static fake_api *fa;

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
}

static void teardown(void)
{
    fake_api_stop(fa);
}

static kp_kube_client *client_with(const char *token, const char *token_file,
                                   const kp_kube_client_opts *opts)
{
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    cfg.token = (char *)token;
    cfg.token_file = (char *)token_file;
    kp_kube_client *c = NULL;
    KP_ASSERT_OK(kp_kube_client_new(&c, &cfg, opts));
    return c;
}

TestSuite(kube_rest, .init = setup, .fini = teardown);

/* ------------------------------------------------------ status mapping */

typedef struct status_case {
    int http;
    int code;
} status_case;

static const status_case statuses[] = {
    {400, KP_EINVALID}, {401, KP_EUNAUTHORIZED}, {403, KP_EFORBIDDEN}, {404, KP_ENOTFOUND},
    {405, KP_ERROR},    {408, KP_ERETRY},        {409, KP_ECONFLICT},  {410, KP_EGONE},
    {422, KP_EINVALID}, {429, KP_ERETRY},        {500, KP_ERETRY},     {503, KP_ERETRY},
    {504, KP_ERETRY},   {418, KP_ERROR},
};

static void answer_with_status(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)req;
    int code = *(int *)ctx;
    char body[256];
    snprintf(body, sizeof(body),
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
             "\"message\":\"thing %d happened\",\"code\":%d}",
             code, code);
    resp->status = code;
    resp->body = kp_xstrdup(body);
}

Test(kube_rest, http_status_maps_to_codes_with_the_status_message)
{
    kp_kube_client *c = client_with(NULL, NULL, NULL);
    int http;
    fake_api_set_hook(fa, answer_with_status, &http);
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
        http = statuses[i].http;
        cJSON *out = NULL;
        kp_kube_request req = {"GET", "/api/v1/namespaces/a/pods/b", NULL, NULL, NULL};
        int err = kp_kube_do(c, &req, &out);
        cr_expect_eq(err, statuses[i].code, "HTTP %d -> %d (%s)", http, err, kp_error_last());
        cr_expect_null(out);
        char want[128];
        snprintf(want, sizeof(want), "GET /api/v1/namespaces/a/pods/b: %d: thing %d happened", http,
                 http);
        cr_expect_str_eq(kp_error_last(), want);
    }
    kp_kube_client_free(c);
}

Test(kube_rest, status_error_without_a_status_body)
{
    cr_assert_eq(kp_kube_status_error(502, "<html>Bad\ngateway</html>", "GET /x"), KP_ERETRY);
    cr_assert_str_eq(kp_error_last(), "GET /x: 502: <html>Bad gateway</html>");
    cr_assert_eq(kp_kube_status_error(404, "", "GET /y"), KP_ENOTFOUND);
    cr_assert_str_eq(kp_error_last(), "GET /y: HTTP status 404");
    cr_assert_eq(kp_kube_status_error(409, "{\"kind\":\"Status\"}", "PUT /z"), KP_ECONFLICT);
    cr_assert_str_eq(kp_error_last(), "PUT /z: 409: {\"kind\":\"Status\"}");
}

Test(kube_rest, real_not_found_from_the_store)
{
    kp_kube_client *c = client_with(NULL, NULL, NULL);
    cJSON *out = NULL;
    cr_assert_eq(kp_kube_get(c, KP_RES_POD, "default", "ghost", &out), KP_ENOTFOUND);
    cr_assert_str_eq(kp_error_last(),
                     "GET /api/v1/namespaces/default/pods/ghost: 404: pods \"ghost\" not found");
    cr_assert_eq(kp_kube_get(c, KP_RES_LEASE, "kube-system", "x", &out), KP_ENOTFOUND);
    cr_assert(strstr(kp_error_last(), "leases.coordination.k8s.io \"x\" not found"), "%s",
              kp_error_last());
    kp_kube_client_free(c);
}

static void answer_raw(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)req;
    resp->status = 200;
    resp->body = kp_xstrdup(ctx);
}

Test(kube_rest, success_bodies_must_be_json_and_fit_the_cap)
{
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.max_body = 64;
    kp_kube_client *c = client_with(NULL, NULL, &o);
    kp_kube_request req = {"GET", "/api/v1/nodes", NULL, NULL, NULL};
    cJSON *out = NULL;
    fake_api_set_hook(fa, answer_raw, "not json");
    cr_assert_eq(kp_kube_do(c, &req, &out), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "not JSON"));
    fake_api_set_hook(
        fa, answer_raw,
        "{\"items\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}");
    cr_assert_eq(kp_kube_do(c, &req, &out), KP_ETOOLARGE);
    cr_assert(strstr(kp_error_last(), "larger than 64 bytes"), "%s", kp_error_last());
    fake_api_set_hook(fa, answer_raw, "");
    cr_assert_eq(kp_kube_do(c, &req, &out), 0);
    cr_assert_null(out, "an empty body is no object");
    fake_api_set_hook(fa, answer_raw, "{\"a\":1}");
    cr_assert_eq(kp_kube_do(c, &req, &out), 0, "the connection is still usable");
    cr_assert_eq(cJSON_GetObjectItem(out, "a")->valueint, 1);
    cJSON_Delete(out);
    kp_kube_client_free(c);
}

Test(kube_rest, connection_refused_is_retry)
{
    kp_kube_config cfg = {0};
    cfg.server = "http://127.0.0.1:1";
    kp_kube_client *c = NULL;
    cr_assert_eq(kp_kube_client_new(&c, &cfg, NULL), 0);
    kp_kube_request req = {"GET", "/api/v1/nodes", NULL, NULL, NULL};
    cr_assert_eq(kp_kube_do(c, &req, NULL), KP_ERETRY);
    cr_assert(strstr(kp_error_last(), "GET /api/v1/nodes: "), "%s", kp_error_last());
    kp_kube_client_free(c);
}

static void slow(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx, (void)req;
    usleep(1500 * 1000);
    resp->status = 200;
    resp->body = kp_xstrdup("{}");
}

Test(kube_rest, request_timeout)
{
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.timeout_ms = 200;
    kp_kube_client *c = client_with(NULL, NULL, &o);
    fake_api_set_hook(fa, slow, NULL);
    kp_kube_request req = {"GET", "/api/v1/nodes", NULL, NULL, NULL};
    cr_assert_eq(kp_kube_do(c, &req, NULL), KP_ETIMEOUT, "%s", kp_error_last());
    kp_kube_client_free(c);
}

Test(kube_rest, missing_server_is_refused)
{
    kp_kube_config cfg = {0};
    kp_kube_client *c = NULL;
    cr_assert_eq(kp_kube_client_new(&c, &cfg, NULL), KP_EINVALID);
    cr_assert_null(c);
}

/* ---------------------------------------------------------------- auth */

Test(kube_rest, bearer_token_is_sent_and_never_in_messages)
{
    fake_api_require_token(fa, "sekrit-token");
    kp_kube_client *good = client_with("sekrit-token", NULL, NULL);
    kp_kube_client *bad = client_with("wrong-token", NULL, NULL);
    kp_kube_request req = {"GET", "/api/v1/namespaces", NULL, NULL, NULL};
    KP_ASSERT_OK(kp_kube_do(good, &req, NULL));
    fake_logged l;
    cr_assert(fake_api_find(fa, "GET", "/api/v1/namespaces", 0, &l));
    cr_assert_str_eq(l.authorization, "Bearer sekrit-token");
    cr_assert_str_eq(l.content_type, "", "no body, no content type");
    cr_assert_eq(kp_kube_do(bad, &req, NULL), KP_EUNAUTHORIZED);
    cr_assert_null(strstr(kp_error_last(), "wrong-token"), "%s", kp_error_last());
    cr_assert_null(strstr(kp_error_last(), "Bearer"), "%s", kp_error_last());
    kp_kube_client_free(good);
    kp_kube_client_free(bad);
}

static void write_token(const char *path, const char *token)
{
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s\n", token);
    fclose(f);
    cr_assert_eq(rename(tmp, path), 0); /* atomically, as the kubelet does */
}

Test(kube_rest, rotated_token_file_is_re_read)
{
    char path[] = "/tmp/kp-token-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_token(path, "first");
    kp_fake_clock clock;
    kp_fake_clock_init(&clock, 1000 * KP_NS_PER_SEC);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.clock = &clock.base;
    kp_kube_client *c = client_with(NULL, path, &o);
    kp_kube_request req = {"GET", "/api/v1/nodes", NULL, NULL, NULL};
    fake_api_require_token(fa, "first");
    KP_ASSERT_OK(kp_kube_do(c, &req, NULL));
    write_token(path, "second-token");
    fake_api_require_token(fa, "second-token");
    cr_assert_eq(kp_kube_do(c, &req, NULL), 0, "a changed file is re-read: %s", kp_error_last());
    unlink(path);
    cr_assert_eq(kp_kube_do(c, &req, NULL), 0, "a vanished file keeps the last token");
    kp_kube_client_free(c);
}

Test(kube_rest, unreadable_token_file_fails_the_client)
{
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    cfg.token_file = "/nonexistent/token";
    kp_kube_client *c = NULL;
    cr_assert_eq(kp_kube_client_new(&c, &cfg, NULL), KP_EIO);
    cr_assert(strstr(kp_error_last(), "/nonexistent/token"), "%s", kp_error_last());
}

/* ------------------------------------------------------------ threads */

typedef struct worker {
    kp_kube_client *c;
    int ok;
} worker;

static void *hammer(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 25; i++) {
        cJSON *out = NULL;
        if (kp_kube_get(w->c, KP_RES_NODE, NULL, "n1", &out) == 0 &&
            strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "metadata"), "name")->valuestring,
                   "n1") == 0)
            w->ok++;
        cJSON_Delete(out);
    }
    return NULL;
}

Test(kube_rest, threads_each_use_their_own_handle)
{
    fake_api_put(fa, "/api/v1/nodes", "{\"metadata\":{\"name\":\"n1\"}}");
    kp_kube_client *c = client_with(NULL, NULL, NULL);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){c, 0};
        pthread_create(&t[i], NULL, hammer, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(w[i].ok, 25);
    }
    /* Threads have exited: their handles went back to the pool and are reused. */
    pthread_create(&t[0], NULL, hammer, &w[0]);
    pthread_join(t[0], NULL);
    cr_assert_eq(w[0].ok, 50);
    cr_assert_eq(fake_api_count(fa, "GET", "/api/v1/nodes/n1"), 125);
    /* Keep-alive: one connection per handle, not per request. */
    cr_assert_leq(fake_api_connections(fa), 4, "%zu connections", fake_api_connections(fa));
    kp_kube_client_free(c);
}

/* --------------------------------------------------- resources, paths */

Test(kube_rest, resource_paths)
{
    kp_buf b = KP_BUF_INIT(1024);
    kp_kube_resource_path(&b, kp_kube_resource_get(KP_RES_POD), "ns", "p", "eviction");
    cr_assert_str_eq(kp_buf_cstr(&b), "/api/v1/namespaces/ns/pods/p/eviction");
    kp_buf_reset(&b);
    kp_kube_resource_path(&b, kp_kube_resource_get(KP_RES_POD), NULL, NULL, NULL);
    cr_assert_str_eq(kp_buf_cstr(&b), "/api/v1/pods");
    kp_buf_reset(&b);
    kp_kube_resource_path(&b, kp_kube_resource_get(KP_RES_NODECLAIM), "ignored", "c-1", "status");
    cr_assert_str_eq(kp_buf_cstr(&b), "/apis/karpenter.sh/v1/nodeclaims/c-1/status");
    kp_buf_reset(&b);
    kp_kube_resource_path(&b, kp_kube_resource_get(KP_RES_LEASE), "kube-system", "a b/c", NULL);
    cr_assert_str_eq(kp_buf_cstr(&b),
                     "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/a%20b%2Fc");
    kp_buf_free(&b);
    cr_assert_eq(kp_kube_resource_find("nodepools"), KP_RES_NODEPOOL);
    cr_assert_eq(kp_kube_resource_find("EC2NodeClass"), KP_RES_EC2NODECLASS);
    cr_assert_eq(kp_kube_resource_find("widgets"), KP_RES_COUNT);
    cr_assert_null(kp_kube_resource_get(KP_RES_COUNT));
    for (int i = 0; i < KP_RES_COUNT; i++)
        cr_assert_not_null(kp_kube_resource_get((enum kp_kube_res)i)->plural, "entry %d", i);
}

Test(kube_rest, pdb_version_comes_from_discovery_once)
{
    const kp_kube_resource *r;
    kp_kube_client *c = client_with(NULL, NULL, NULL);
    cr_assert_eq(kp_kube_client_resource(c, KP_RES_PDB, &r), 0);
    cr_assert_str_eq(r->api_version, "policy/v1");
    cr_assert_eq(kp_kube_client_resource(c, KP_RES_PDB, &r), 0);
    cr_assert_eq(fake_api_count(fa, "GET", "/apis/policy/v1"), 1, "cached");
    kp_kube_client_free(c);

    fake_api_set_policy_v1(fa, false);
    c = client_with(NULL, NULL, NULL);
    cr_assert_eq(kp_kube_client_resource(c, KP_RES_PDB, &r), 0);
    cr_assert_str_eq(r->api_version, "policy/v1beta1");
    cJSON *list = NULL;
    cr_assert_eq(kp_kube_list(c, KP_RES_PDB, NULL, &list), 0);
    cr_assert_str_eq(cJSON_GetObjectItem(list, "apiVersion")->valuestring, "policy/v1beta1");
    cr_assert_str_eq(cJSON_GetObjectItem(list, "kind")->valuestring, "PodDisruptionBudgetList");
    cJSON_Delete(list);
    cr_assert_eq(fake_api_count(fa, "GET", "/apis/policy/v1beta1/poddisruptionbudgets"), 1);
    kp_kube_client_free(c);
}

static void discovery_fails(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->path, "/apis/policy/v1") == 0) resp->status = 503;
}

Test(kube_rest, failed_discovery_is_not_cached)
{
    const kp_kube_resource *r;
    kp_kube_client *c = client_with(NULL, NULL, NULL);
    fake_api_set_hook(fa, discovery_fails, NULL);
    cr_assert_eq(kp_kube_client_resource(c, KP_RES_PDB, &r), KP_ERETRY);
    cr_assert(strstr(kp_error_last(), "discovering policy/v1"), "%s", kp_error_last());
    fake_api_set_hook(fa, NULL, NULL);
    cr_assert_eq(kp_kube_client_resource(c, KP_RES_PDB, &r), 0);
    cr_assert_str_eq(r->version, "v1");
    kp_kube_client_free(c);
}

/* ---------------------------------------------------------- rate limit */

Test(ratelimit, burst_then_qps)
{
    kp_ratelimit rl;
    int64_t t = 50 * KP_NS_PER_SEC;
    kp_ratelimit_init(&rl, 10.0, 3, t);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(kp_ratelimit_reserve(&rl, t), 0, "burst token %d", i);
    cr_assert_eq(kp_ratelimit_reserve(&rl, t), 100 * KP_NS_PER_MS, "one token per 100 ms");
    cr_assert_eq(kp_ratelimit_reserve(&rl, t), 200 * KP_NS_PER_MS, "reservations queue up");
    /* 300 ms later the two reservations are paid and one token has refilled. */
    cr_assert_eq(kp_ratelimit_reserve(&rl, t + 300 * KP_NS_PER_MS), 0);
    cr_assert_eq(kp_ratelimit_reserve(&rl, t + 300 * KP_NS_PER_MS), 100 * KP_NS_PER_MS);
    /* A long pause refills to the burst, not beyond. */
    int64_t later = t + 100 * KP_NS_PER_SEC;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(kp_ratelimit_reserve(&rl, later), 0);
    cr_assert_gt(kp_ratelimit_reserve(&rl, later), 0);
    /* A clock that steps back refills nothing. */
    cr_assert_gt(kp_ratelimit_reserve(&rl, t), 0);
    kp_ratelimit_destroy(&rl);
}

Test(ratelimit, zero_qps_is_unlimited)
{
    kp_ratelimit rl;
    kp_ratelimit_init(&rl, 0, 0, 0);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(kp_ratelimit_reserve(&rl, 0), 0);
    kp_ratelimit_destroy(&rl);
}

Test(kube_rest, client_waits_for_the_rate_limiter)
{
    kp_fake_clock clock;
    kp_fake_clock_init(&clock, 0);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 20;
    o.burst = 1;
    o.clock = &clock.base;
    kp_kube_client *c = client_with(NULL, NULL, &o);
    kp_kube_request req = {"GET", "/api/v1/nodes", NULL, NULL, NULL};
    /* The clock stands still, so every request after the first owes 50 ms more:
     * 5 requests take at least 50+100+150+200 ms of real sleeping. */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(kp_kube_do(c, &req, NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    cr_assert_geq(ms, 500.0, "slept %.0f ms", ms);
    kp_kube_client_free(c);
}
