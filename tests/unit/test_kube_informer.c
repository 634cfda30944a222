/* Informers (shared/kube/informer.h) against the fake API server. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "helpers/fake_apiserver.h"
#include "kube/informer.h"
#include "kube/ops.h"

static fake_api *fa;
static kp_kube_client *client;

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
}

static void teardown(void)
{
    kp_kube_client_free(client);
    fake_api_stop(fa);
}

TestSuite(informer, .init = setup, .fini = teardown, .timeout = 60);

static kp_informer_opts quick(void)
{
    kp_informer_opts o = KP_INFORMER_OPTS_INIT;
    o.backoff_initial_ms = 20;
    o.backoff_max_ms = 100;
    o.page_size = 2;
    return o;
}

static void put_pod(const char *ns, const char *name, const char *node)
{
    char coll[128], json[256];
    snprintf(coll, sizeof(coll), "/api/v1/namespaces/%s/pods", ns);
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"nodeName\":\"%s\"}}",
             name, node);
    cr_assert_gt(fake_api_put(fa, coll, json), 0);
}

/* A handler that writes what it saw as "add a/p", "update a/p", "delete a/p". */
typedef struct journal {
    pthread_mutex_t lock;
    char lines[64][80];
    int n;
} journal;

static void note(journal *j, const char *what, const cJSON *obj)
{
    char key[64];
    kp_kube_object_key(obj, key, sizeof(key));
    pthread_mutex_lock(&j->lock);
    if (j->n < 64) snprintf(j->lines[j->n++], 80, "%s %s", what, key);
    pthread_mutex_unlock(&j->lock);
}

static void on_add(void *ctx, const cJSON *obj)
{
    note(ctx, "add", obj);
}

static void on_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    cr_assert_str_neq(kp_kube_meta(old_obj, "resourceVersion"),
                      kp_kube_meta(new_obj, "resourceVersion"));
    note(ctx, "update", new_obj);
}

static void on_delete(void *ctx, const cJSON *obj)
{
    note(ctx, "delete", obj);
}

static int journal_count(journal *j)
{
    pthread_mutex_lock(&j->lock);
    int n = j->n;
    pthread_mutex_unlock(&j->lock);
    return n;
}

static bool wait_journal(journal *j, int n)
{
    for (int i = 0; i < 1000 && journal_count(j) < n; i++)
        usleep(5000);
    return journal_count(j) >= n;
}

static bool journal_has(journal *j, const char *line)
{
    pthread_mutex_lock(&j->lock);
    bool found = false;
    for (int i = 0; i < j->n && !found; i++)
        found = strcmp(j->lines[i], line) == 0;
    pthread_mutex_unlock(&j->lock);
    return found;
}

typedef struct fixture {
    kp_informer *inf;
    kp_workqueue *q;
    journal j;
} fixture;

static void start(fixture *f, enum kp_kube_res res, const kp_informer_opts *o)
{
    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->j.lock, NULL);
    f->inf = kp_informer_new(client, res, o);
    f->q = kp_workqueue_new(NULL);
    kp_informer_handler h = {on_add, on_update, on_delete, &f->j};
    cr_assert_eq(kp_informer_add_handler(f->inf, &h), 0);
    cr_assert_eq(kp_informer_add_queue(f->inf, f->q), 0);
    cr_assert_eq(kp_informer_add_index(f->inf, "node", kp_informer_index_pod_node), 0);
    cr_assert_eq(kp_informer_add_index(f->inf, "node", kp_informer_index_pod_node), KP_EINVALID);
    cr_assert_eq(kp_informer_start(f->inf), 0);
}

static void finish(fixture *f)
{
    kp_informer_free(f->inf);
    kp_workqueue_free(f->q);
    pthread_mutex_destroy(&f->j.lock);
}

static void count_visit(void *ctx, const char *key, const cJSON *obj)
{
    (void)key, (void)obj;
    (*(int *)ctx)++;
}

static int indexed(kp_informer *inf, const char *node)
{
    int n = 0;
    kp_informer_foreach_indexed(inf, "node", node, count_visit, &n);
    return n;
}

Test(informer, initial_list_fills_the_cache_and_notifies)
{
    put_pod("a", "p1", "n1");
    put_pod("a", "p2", "n1");
    put_pod("b", "p3", "n2");
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0, "%s", kp_error_last());
    cr_assert(kp_informer_synced(f.inf));
    cr_assert_eq(kp_informer_len(f.inf), 3);
    cr_assert_eq(fake_api_count(fa, "GET", "/api/v1/pods?limit=2"), 2, "paginated list");
    cr_assert(journal_has(&f.j, "add a/p1"));
    cr_assert(journal_has(&f.j, "add b/p3"));
    cr_assert_eq(kp_workqueue_len(f.q), 3, "every key queued");
    cJSON *p = kp_informer_get(f.inf, "a/p2");
    cr_assert_not_null(p);
    cr_assert_str_eq(kp_kube_meta(p, "name"), "p2");
    cJSON_Delete(p);
    cr_assert_null(kp_informer_get(f.inf, "a/nope"));
    int n = 0;
    kp_informer_foreach(f.inf, count_visit, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(indexed(f.inf, "n1"), 2);
    cr_assert_eq(indexed(f.inf, "n2"), 1);
    n = 0;
    kp_informer_foreach_indexed(f.inf, "no-such-index", "n1", count_visit, &n);
    cr_assert_eq(n, 0);
    cr_assert_eq(kp_informer_add_index(f.inf, "late", kp_informer_index_pod_node), KP_EINVALID);
    finish(&f);
}

Test(informer, watch_events_update_cache_indexes_and_queues)
{
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0);
    cr_assert(fake_api_wait_watches(fa, 1, 10000));
    put_pod("a", "p", "n1");
    cr_assert(wait_journal(&f.j, 1));
    cr_assert_eq(indexed(f.inf, "n1"), 1);
    put_pod("a", "p", "n2"); /* rescheduled onto another node */
    cr_assert(wait_journal(&f.j, 2));
    cr_assert(journal_has(&f.j, "update a/p"));
    cr_assert_eq(indexed(f.inf, "n1"), 0);
    cr_assert_eq(indexed(f.inf, "n2"), 1);
    fake_api_remove(fa, "/api/v1/namespaces/a/pods/p");
    cr_assert(wait_journal(&f.j, 3));
    cr_assert(journal_has(&f.j, "delete a/p"));
    cr_assert_eq(kp_informer_len(f.inf), 0);
    cr_assert_eq(indexed(f.inf, "n2"), 0);
    cr_assert_eq(kp_workqueue_len(f.q), 1, "three changes to one key: one queued key");
    char *k = NULL;
    cr_assert_eq(kp_workqueue_get(f.q, 0, &k), 0);
    cr_assert_str_eq(k, "a/p");
    kp_workqueue_done(f.q, k);
    free(k);
    finish(&f);
}

/* While set, watch requests are refused: the informer is cut off. */
static atomic_bool refuse_watches;

static void watch_gate(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (atomic_load(&refuse_watches) && strstr(req->query, "watch=1")) resp->status = 503;
}

static char *current_rv(void)
{
    char *rv = malloc(24);
    snprintf(rv, 24, "%ld", fake_api_rv(fa));
    return rv;
}

Test(informer, reconnects_from_the_last_resource_version)
{
    fake_api_set_hook(fa, watch_gate, NULL);
    put_pod("a", "p1", "n1");
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0);
    cr_assert(fake_api_wait_watches(fa, 1, 10000));
    char *seen = current_rv();
    atomic_store(&refuse_watches, true);
    fake_api_close_watches(fa);
    while (fake_api_count(fa, "GET", "/api/v1/pods?watch=1") < 3)
        usleep(5000);         /* refused and retried with back-off */
    put_pod("a", "p2", "n1"); /* happens while the informer is cut off */
    atomic_store(&refuse_watches, false);
    cr_assert(wait_journal(&f.j, 2), "the missed change is replayed");
    cr_assert(journal_has(&f.j, "add a/p2"));
    fake_logged l;
    cr_assert(fake_api_find(fa, "GET", "/api/v1/pods?watch=1", -1, &l));
    char want[48];
    snprintf(want, sizeof(want), "resourceVersion=%s", seen);
    cr_assert(strstr(l.target, want), "resumed from %s: %s", seen, l.target);
    kp_informer_stats st;
    kp_informer_get_stats(f.inf, &st);
    cr_assert_eq(st.lists, 1, "no relist needed");
    cr_assert_geq(st.failures, 2);
    free(seen);
    finish(&f);
}

Test(informer, gone_relists_and_reports_what_changed)
{
    fake_api_set_hook(fa, watch_gate, NULL);
    put_pod("a", "stays", "n1");
    put_pod("a", "goes", "n1");
    put_pod("a", "changes", "n1");
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0);
    cr_assert(fake_api_wait_watches(fa, 1, 10000));
    cr_assert_eq(journal_count(&f.j), 3);
    atomic_store(&refuse_watches, true);
    fake_api_close_watches(fa);
    while (fake_api_count(fa, "GET", "/api/v1/pods?watch=1") < 2)
        usleep(5000);
    fake_api_remove(fa, "/api/v1/namespaces/a/pods/goes");
    put_pod("a", "changes", "n2");
    put_pod("a", "new", "n2");
    fake_api_compact(fa); /* the informer's resourceVersion is now too old */
    atomic_store(&refuse_watches, false);
    cr_assert(wait_journal(&f.j, 6));
    cr_assert(journal_has(&f.j, "delete a/goes"));
    cr_assert(journal_has(&f.j, "update a/changes"));
    cr_assert(journal_has(&f.j, "add a/new"));
    cr_assert_not(journal_has(&f.j, "update a/stays"), "unchanged objects are not re-reported");
    kp_informer_stats st;
    kp_informer_get_stats(f.inf, &st);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(st.lists, 2);
    cr_assert_eq(kp_informer_len(f.inf), 3);
    cr_assert_eq(indexed(f.inf, "n2"), 2);
    cr_assert_eq(indexed(f.inf, "n1"), 1);
    finish(&f);
}

Test(informer, bookmarks_advance_the_resource_version)
{
    kp_informer_opts o = quick();
    o.namespace = "mine";
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0);
    cr_assert(fake_api_wait_watches(fa, 1, 10000));
    put_pod("theirs", "x", "n1"); /* not ours: the informer does not see it */
    fake_api_bookmark(fa);
    char *want = current_rv();
    char *rv = NULL;
    for (int i = 0; i < 1000; i++) {
        free(rv);
        rv = kp_informer_resource_version(f.inf);
        if (rv && strcmp(rv, want) == 0) break;
        usleep(5000);
    }
    cr_assert_str_eq(rv, want);
    cr_assert_eq(journal_count(&f.j), 0);
    fake_logged l;
    cr_assert(fake_api_find(fa, "GET", "/api/v1/namespaces/mine/pods?watch=1", 0, &l));
    cr_assert(strstr(l.target, "allowWatchBookmarks=true"));
    free(rv);
    free(want);
    finish(&f);
}

static atomic_int list_failures;

static void failing_lists(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strstr(req->query, "watch=1") && atomic_fetch_sub(&list_failures, 1) > 0)
        resp->status = 500;
}

Test(informer, failed_lists_are_retried)
{
    atomic_store(&list_failures, 3);
    fake_api_set_hook(fa, failing_lists, NULL);
    put_pod("a", "p", "n1");
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0, "%s", kp_error_last());
    cr_assert_eq(kp_informer_len(f.inf), 1);
    kp_informer_stats st;
    kp_informer_get_stats(f.inf, &st);
    cr_assert_eq(st.failures, 3);
    finish(&f);
}

Test(informer, not_synced_while_the_server_refuses)
{
    atomic_store(&list_failures, 1000000);
    fake_api_set_hook(fa, failing_lists, NULL);
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_NODE, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 100), KP_ETIMEOUT);
    cr_assert_not(kp_informer_synced(f.inf));
    kp_informer_stop(f.inf); /* stops promptly while backing off */
    kp_informer_stop(f.inf);
    finish(&f);
}

/* Every watch is answered 410 Gone at once, as by a server whose cache keeps
 * less history than it takes to start a watch. */
static void gone_watches(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strstr(req->query, "watch=1")) return;
    resp->status = 410;
    resp->body = strdup("{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                        "\"message\":\"too old resource version\"}");
}

/* client-go waits between ListAndWatch rounds; without that, this server
 * gets a list and a watch as fast as the loop turns (about 200 a second
 * against a real API server, its whole QPS budget). */
Test(informer, relists_after_gone_are_backed_off)
{
    put_pod("a", "p", "n1");
    fake_api_set_hook(fa, gone_watches, NULL);
    kp_informer_opts o = quick(); /* 20 ms doubling to 100 ms */
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0, "%s", kp_error_last());
    usleep(1500 * 1000);
    kp_informer_stats st;
    kp_informer_get_stats(f.inf, &st);
    finish(&f);
    cr_expect_geq(st.relists, 2, "410 Gone still relists");
    /* Backed off: one list per 100 ms at most, so at most ~16 in 1.5 s. */
    cr_expect_leq(st.lists, 20, "%lu lists in 1.5 s: relists are not backed off", st.lists);
}

/* Failures in a row show up at warn (with the resource and the count), not
 * only in debug output nobody reads. */
Test(informer, repeated_failures_are_logged_at_warn)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    kp_log_set_output(out);
    kp_log_set_level(KP_LOG_INFO);
    atomic_store(&list_failures, 6);
    fake_api_set_hook(fa, failing_lists, NULL);
    put_pod("a", "p", "n1");
    kp_informer_opts o = quick();
    fixture f;
    start(&f, KP_RES_POD, &o);
    cr_assert_eq(kp_informer_wait_synced(f.inf, 10000), 0, "%s", kp_error_last());
    finish(&f);
    kp_log_set_output(stderr);
    fclose(out);
    cr_expect(strstr(text, "\"level\":\"WARN\"") != NULL, "no warning in: %s", text);
    cr_expect(strstr(text, "\"failures\":\"5\"") != NULL, "%s", text);
    cr_expect(strstr(text, "\"resource\":\"pods\"") != NULL, "%s", text);
    cr_expect(strstr(text, "list/watch recovered") != NULL, "%s", text);
    cr_expect(strstr(text, "\"failures\":\"4\"") == NULL, "the first failures stay at debug");
    free(text);
}

Test(informer, cluster_scoped_keys_and_stop_while_watching)
{
    fake_api_put(fa, "/apis/karpenter.sh/v1/nodepools", "{\"metadata\":{\"name\":\"default\"}}");
    kp_informer *inf = kp_informer_new(client, KP_RES_NODEPOOL, NULL);
    cr_assert_eq(kp_informer_start(inf), 0);
    cr_assert_eq(kp_informer_start(inf), KP_EINVALID);
    cr_assert_eq(kp_informer_wait_synced(inf, 10000), 0);
    cJSON *np = kp_informer_get(inf, "default");
    cr_assert_not_null(np);
    cJSON_Delete(np);
    cr_assert(fake_api_wait_watches(fa, 1, 10000));
    kp_informer_free(inf); /* wakes the blocked watch */
    cr_assert_null(kp_informer_free(NULL));
}
