/* Watch streams (shared/kube/watch.h): the line decoder on its own, then against the fake API
 * server. */
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
#include "kube/watch.h"
#include "helpers/assert.h"

typedef struct seen {
    int n;
    enum kp_watch_type types[32];
    char names[32][32];
    char rvs[32][16];
    int stop_after; /* return 99 after this many events; 0: never */
    cJSON *kept;
} seen;

static int record(void *ctx, enum kp_watch_type type, cJSON **object)
{
    seen *s = ctx;
    if (s->n < 32) {
        const char *name = kp_kube_meta(*object, "name");
        const char *rv = kp_kube_meta(*object, "resourceVersion");
        s->types[s->n] = type;
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name ? name : "");
        snprintf(s->rvs[s->n], sizeof(s->rvs[0]), "%s", rv ? rv : "");
    }
    s->n++;
    return s->stop_after && s->n >= s->stop_after ? 99 : 0;
}

static const char three[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"6\"}}}"
    "\r\n"
    "\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"7\"}}}\n";

static void check_three(const seen *s)
{
    cr_assert_eq(s->n, 3);
    cr_assert_eq(s->types[0], KP_WATCH_ADDED);
    cr_assert_eq(s->types[1], KP_WATCH_MODIFIED);
    cr_assert_eq(s->types[2], KP_WATCH_DELETED);
    cr_assert_str_eq(s->names[1], "b");
    cr_assert_str_eq(s->rvs[2], "7");
}

Test(watch_stream, events_split_anywhere_are_joined)
{
    size_t len = strlen(three);
    for (size_t step = 1; step <= len; step += (step < 8 ? 1 : 13)) {
        seen s = {0};
        kp_watch_stream ws;
        kp_watch_stream_init(&ws, 4096, record, &s);
        for (size_t off = 0; off < len; off += step) {
            size_t n = len - off < step ? len - off : step;
            KP_ASSERT_OK(kp_watch_stream_feed(&ws, three + off, n));
        }
        check_three(&s);
        cr_assert_eq(ws.events, 3);
        kp_watch_stream_free(&ws);
    }
}

Test(watch_stream, a_partial_line_waits_for_its_end)
{
    seen s = {0};
    kp_watch_stream ws;
    kp_watch_stream_init(&ws, 4096, record, &s);
    cr_assert_eq(kp_watch_stream_feed(&ws, three, 30), 0);
    cr_assert_eq(s.n, 0);
    cr_assert_eq(kp_watch_stream_feed(&ws, three + 30, strlen(three) - 30), 0);
    check_three(&s);
    kp_watch_stream_free(&ws);
}

Test(watch_stream, an_endless_line_hits_the_cap)
{
    seen s = {0};
    kp_watch_stream ws;
    kp_watch_stream_init(&ws, 64, record, &s);
    char big[200];
    memset(big, 'x', sizeof(big));
    cr_assert_eq(kp_watch_stream_feed(&ws, "{\"type\":\"ADDED\",\"object\":{}}\n", 30), 0);
    cr_assert_eq(kp_watch_stream_feed(&ws, big, 50), 0);
    cr_assert_eq(kp_watch_stream_feed(&ws, big, 50), KP_ETOOLARGE);
    cr_assert(strstr(kp_error_last(), "exceeds 64 bytes"), "%s", kp_error_last());
    cr_assert_eq(s.n, 1);
    kp_watch_stream_free(&ws);
}

Test(watch_stream, malformed_events)
{
    const char *bad[] = {
        "not json\n",
        "{\"type\":\"ADDED\"}\n",
        "{\"object\":{}}\n",
        "{\"type\":\"EXPLODED\",\"object\":{}}\n",
        "{\"type\":7,\"object\":{}}\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        seen s = {0};
        kp_watch_stream ws;
        kp_watch_stream_init(&ws, 4096, record, &s);
        cr_assert_eq(kp_watch_stream_feed(&ws, bad[i], strlen(bad[i])), KP_EINVALID, "%s", bad[i]);
        cr_assert_eq(s.n, 0);
        kp_watch_stream_free(&ws);
    }
}

Test(watch_stream, error_events_map_their_status)
{
    static const char gone[] =
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
        "\"message\":\"too old resource version: 5 (9)\",\"reason\":\"Expired\",\"code\":410}}\n";
    static const char internal[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
                                   "\"message\":\"etcd is sad\",\"code\":500}}\n";
    seen s = {0};
    kp_watch_stream ws;
    kp_watch_stream_init(&ws, 4096, record, &s);
    cr_assert_eq(kp_watch_stream_feed(&ws, gone, strlen(gone)), KP_EGONE);
    cr_assert_str_eq(kp_error_last(), "watch: 410: too old resource version: 5 (9)");
    kp_watch_stream_free(&ws);
    kp_watch_stream_init(&ws, 4096, record, &s);
    cr_assert_eq(kp_watch_stream_feed(&ws, internal, strlen(internal)), KP_ERETRY);
    kp_watch_stream_free(&ws);
    cr_assert_eq(s.n, 0);
}

static int keep_second(void *ctx, enum kp_watch_type type, cJSON **object)
{
    seen *s = ctx;
    (void)type;
    if (++s->n == 2) {
        s->kept = *object;
        *object = NULL;
    }
    return 0;
}

Test(watch_stream, callbacks_may_stop_or_take_the_object)
{
    seen s = {.stop_after = 2};
    kp_watch_stream ws;
    kp_watch_stream_init(&ws, 4096, record, &s);
    cr_assert_eq(kp_watch_stream_feed(&ws, three, strlen(three)), 99);
    cr_assert_eq(s.n, 2);
    kp_watch_stream_free(&ws);

    seen k = {0};
    kp_watch_stream_init(&ws, 4096, keep_second, &k);
    cr_assert_eq(kp_watch_stream_feed(&ws, three, strlen(three)), 0);
    kp_watch_stream_free(&ws);
    cr_assert_str_eq(kp_kube_meta(k.kept, "name"), "b");
    cJSON_Delete(k.kept);
}

/* ------------------------------------------------ against the server */

static fake_api *fa;
static kp_kube_client *client;

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    cr_assert_eq(kp_kube_client_new(&client, &cfg, NULL), 0);
}

static void teardown(void)
{
    kp_kube_client_free(client);
    fake_api_stop(fa);
}

TestSuite(kube_watch, .init = setup, .fini = teardown);

typedef struct watcher {
    kp_kube_watch_opts opts;
    enum kp_kube_res res;
    seen s;
    int err;
    pthread_t thread;
} watcher;

static void *watch_main(void *arg)
{
    watcher *w = arg;
    w->err = kp_kube_watch(client, w->res, &w->opts, record, &w->s);
    return NULL;
}

static void start_watch(watcher *w)
{
    pthread_create(&w->thread, NULL, watch_main, w);
}

#define POD(name) "{\"metadata\":{\"name\":\"" name "\"}}"

Test(kube_watch, store_changes_arrive_in_order)
{
    char rv[16];
    snprintf(rv, sizeof(rv), "%ld", fake_api_rv(fa));
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_POD, .s = {.stop_after = 3}};
    w.opts.namespace = "a";
    w.opts.resource_version = rv;
    start_watch(&w);
    cr_assert(fake_api_wait_watches(fa, 1, 5000));
    fake_api_put(fa, "/api/v1/namespaces/b/pods", POD("elsewhere"));
    fake_api_put(fa, "/api/v1/namespaces/a/pods", POD("p"));
    fake_api_put(fa, "/api/v1/namespaces/a/pods", POD("p"));
    fake_api_remove(fa, "/api/v1/namespaces/a/pods/p");
    pthread_join(w.thread, NULL);
    cr_assert_eq(w.err, 99, "%s", kp_error_last());
    cr_assert_eq(w.s.types[0], KP_WATCH_ADDED);
    cr_assert_eq(w.s.types[1], KP_WATCH_MODIFIED);
    cr_assert_eq(w.s.types[2], KP_WATCH_DELETED);
    cr_assert_str_eq(w.s.names[0], "p");
    fake_logged l;
    cr_assert(fake_api_find(fa, "GET", "/api/v1/namespaces/a/pods?watch=1", 0, &l));
    cr_assert(strstr(l.target, "allowWatchBookmarks=true"), "%s", l.target);
    cr_assert(strstr(l.target, "timeoutSeconds=300"), "%s", l.target);
    char want[48];
    snprintf(want, sizeof(want), "resourceVersion=%s", rv);
    cr_assert(strstr(l.target, want), "%s", l.target);
}

Test(kube_watch, resumes_after_a_resource_version)
{
    fake_api_put(fa, "/api/v1/nodes", POD("n1"));
    long after = fake_api_put(fa, "/api/v1/nodes", POD("n2"));
    fake_api_put(fa, "/api/v1/nodes", POD("n3"));
    char rv[16];
    snprintf(rv, sizeof(rv), "%ld", after);
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_NODE, .s = {.stop_after = 1}};
    w.opts.resource_version = rv;
    watch_main(&w);
    cr_assert_eq(w.err, 99);
    cr_assert_str_eq(w.s.names[0], "n3", "only what came after %s", rv);
}

Test(kube_watch, compacted_resource_version_is_gone)
{
    long rv0 = fake_api_put(fa, "/api/v1/nodes", POD("n1"));
    fake_api_put(fa, "/api/v1/nodes", POD("n2"));
    fake_api_compact(fa);
    char rv[16];
    snprintf(rv, sizeof(rv), "%ld", rv0);
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_NODE};
    w.opts.resource_version = rv;
    watch_main(&w);
    cr_assert_eq(w.err, KP_EGONE, "%d %s", w.err, kp_error_last());
    cr_assert(strstr(kp_error_last(), "too old resource version"), "%s", kp_error_last());
    cr_assert_eq(w.s.n, 0);
}

Test(kube_watch, bookmarks_carry_the_resource_version)
{
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_NODE, .s = {.stop_after = 1}};
    char rv[16];
    snprintf(rv, sizeof(rv), "%ld", fake_api_rv(fa));
    w.opts.resource_version = rv;
    start_watch(&w);
    cr_assert(fake_api_wait_watches(fa, 1, 5000));
    fake_api_put(fa, "/api/v1/namespaces/x/pods", POD("not-a-node"));
    fake_api_bookmark(fa);
    pthread_join(w.thread, NULL);
    cr_assert_eq(w.err, 99);
    cr_assert_eq(w.s.types[0], KP_WATCH_BOOKMARK);
    snprintf(rv, sizeof(rv), "%ld", fake_api_rv(fa));
    cr_assert_str_eq(w.s.rvs[0], rv, "the bookmark moves past changes we did not see");
}

static void chopped_stream(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strstr(req->query, "watch=1")) return;
    /* Three events cut in the middle of lines, across network writes. */
    const char *cuts[] = {"{\"type\":\"ADDED\",\"obj", "ect\":{\"metadata\":{\"name\":\"a\"}}}\n{",
                          "\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
                          "\n{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"};
    resp->nchunks = 4;
    resp->chunks = kp_xcalloc(4, sizeof(char *));
    for (int i = 0; i < 4; i++)
        resp->chunks[i] = kp_xstrdup(cuts[i]);
}

Test(kube_watch, events_cut_across_network_writes)
{
    fake_api_set_hook(fa, chopped_stream, NULL);
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_POD};
    watch_main(&w);
    cr_assert_eq(w.err, 0, "the server ended the stream: %s", kp_error_last());
    cr_assert_eq(w.s.n, 3);
    cr_assert_eq(w.s.types[2], KP_WATCH_DELETED);
}

static void forbidden(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx, (void)req;
    resp->status = 403;
    resp->body =
        kp_xstrdup("{\"kind\":\"Status\",\"message\":\"pods is forbidden: User "
                   "\\\"system:serviceaccount:x:y\\\" cannot watch resource\",\"code\":403}");
}

Test(kube_watch, refused_watch_maps_the_status)
{
    fake_api_set_hook(fa, forbidden, NULL);
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_POD};
    watch_main(&w);
    cr_assert_eq(w.err, KP_EFORBIDDEN);
    cr_assert(strstr(kp_error_last(), "403: pods is forbidden"), "%s", kp_error_last());
}

Test(kube_watch, cancel_wakes_a_quiet_watch)
{
    kp_kube_cancel *cancel = kp_kube_cancel_new();
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_NODE};
    w.opts.cancel = cancel;
    w.opts.resource_version = "100";
    start_watch(&w);
    cr_assert(fake_api_wait_watches(fa, 1, 5000));
    kp_kube_cancel_fire(cancel);
    pthread_join(w.thread, NULL);
    cr_assert_eq(w.err, 0);
    cr_assert(kp_kube_cancel_fired(cancel));
    /* A fired token stops the next watch before it starts. */
    watch_main(&w);
    cr_assert_eq(w.err, 0);
    cr_assert_eq(fake_api_count(fa, "GET", "/api/v1/nodes?watch=1"), 1);
    kp_kube_cancel_reset(cancel);
    cr_assert_not(kp_kube_cancel_fired(cancel));
    cr_assert_not(kp_kube_cancel_sleep(cancel, 1));
    kp_kube_cancel_free(cancel);
}

Test(kube_watch, server_closing_the_stream_ends_the_watch)
{
    watcher w = {.opts = KP_KUBE_WATCH_OPTS_INIT, .res = KP_RES_NODE};
    start_watch(&w);
    cr_assert(fake_api_wait_watches(fa, 1, 5000));
    fake_api_put(fa, "/api/v1/nodes", POD("n1"));
    fake_api_close_watches(fa); /* what was stored before still goes out */
    pthread_join(w.thread, NULL);
    KP_ASSERT_OK(w.err);
    cr_assert_eq(w.s.n, 1);
}

/* A callback that calls the client on the watch's own thread gets a handle of its own. */
static int reenter(void *ctx, enum kp_watch_type type, cJSON **object)
{
    (void)type;
    cJSON *node = NULL;
    int err = kp_kube_get(client, KP_RES_NODE, NULL, kp_kube_meta(*object, "name"), &node);
    *(int *)ctx = err == 0 && strcmp(kp_kube_meta(node, "name"), "n1") == 0 ? 1 : -1;
    cJSON_Delete(node);
    return 1;
}

Test(kube_watch, callbacks_may_call_the_client)
{
    fake_api_put(fa, "/api/v1/nodes", POD("n1"));
    kp_kube_watch_opts wo = KP_KUBE_WATCH_OPTS_INIT;
    int result = 0;
    cr_assert_eq(kp_kube_watch(client, KP_RES_NODE, &wo, reenter, &result), 1);
    cr_assert_eq(result, 1, "%s", kp_error_last());
}
