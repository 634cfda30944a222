/* Typed helpers (shared/kube/ops.h) and events (events.h) against the fake API server. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "helpers/fake_apiserver.h"
#include "kube/events.h"
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

TestSuite(kube_ops, .init = setup, .fini = teardown);

static const char *str(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(obj, a);
    if (b) v = cJSON_GetObjectItem(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void add_pod(const char *ns, const char *name)
{
    char coll[128], json[256];
    snprintf(coll, sizeof(coll), "/api/v1/namespaces/%s/pods", ns);
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\"},\"spec\":{}}",
             name, name);
    cr_assert_gt(fake_api_put(fa, coll, json), 0);
}

Test(kube_ops, get_returns_the_object)
{
    add_pod("a", "web");
    cJSON *pod = NULL;
    cr_assert_eq(kp_kube_get(client, KP_RES_POD, "a", "web", &pod), 0, "%s", kp_error_last());
    cr_assert_str_eq(str(pod, "metadata", "name"), "web");
    cr_assert_str_eq(str(pod, "metadata", "namespace"), "a");
    cJSON_Delete(pod);
    cr_assert_eq(kp_kube_get(client, KP_RES_POD, NULL, "web", &pod), KP_EINVALID,
                 "namespaced kinds need a namespace");
}

Test(kube_ops, list_follows_continue_tokens)
{
    char name[16];
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        add_pod(i % 2 ? "a" : "b", name);
    }
    add_pod("c", "other");
    kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
    lo.limit = 3;
    cJSON *list = NULL;
    cr_assert_eq(kp_kube_list(client, KP_RES_POD, &lo, &list), 0, "%s", kp_error_last());
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 8);
    cr_assert_str_eq(str(list, "kind", NULL), "PodList");
    cr_assert_str_eq(str(list, "apiVersion", NULL), "v1");
    char rv[32];
    snprintf(rv, sizeof(rv), "%ld", fake_api_rv(fa));
    cr_assert_str_eq(str(list, "metadata", "resourceVersion"), rv);
    cr_assert_eq(fake_api_count(fa, "GET", "/api/v1/pods?limit=3"), 3, "three pages");
    fake_logged l;
    cr_assert(fake_api_find(fa, "GET", "/api/v1/pods", 1, &l));
    cr_assert(strstr(l.target, "&continue="), "%s", l.target);
    cJSON_Delete(list);

    lo.namespace = "a";
    lo.label_selector = "app in (web,db),tier!=x";
    cr_assert_eq(kp_kube_list(client, KP_RES_POD, &lo, &list), 0, "%s", kp_error_last());
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 3);
    cr_assert(fake_api_find(fa, "GET", "/api/v1/namespaces/a/pods", 0, &l));
    cr_assert_str_eq(l.target, "/api/v1/namespaces/a/pods?labelSelector=app%20in%20%28web%2Cdb%29"
                               "%2Ctier%21%3Dx&limit=3");
    cJSON_Delete(list);
}

static void compact_after_first_page(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)resp;
    int *pages = ctx;
    if (strcmp(req->path, "/api/v1/pods") == 0 && ++*pages == 2) {
        /* History moves on and is compacted: page 1's token is now stale. */
        fake_api_put(fa, "/api/v1/namespaces/z/configmaps", "{\"metadata\":{\"name\":\"c\"}}");
        fake_api_compact(fa);
    }
}

Test(kube_ops, expired_continue_token_restarts_with_a_full_list)
{
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        add_pod("a", name);
    }
    int pages = 0;
    fake_api_set_hook(fa, compact_after_first_page, &pages);
    kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
    lo.limit = 2;
    cJSON *list = NULL;
    cr_assert_eq(kp_kube_list(client, KP_RES_POD, &lo, &list), 0, "%s", kp_error_last());
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 5, "no duplicates");
    fake_logged l;
    cr_assert(fake_api_find(fa, "GET", "/api/v1/pods", -1, &l));
    cr_assert_str_eq(l.target, "/api/v1/pods", "the retry is one unpaginated list");
    cJSON_Delete(list);
}

/* A server whose list pages never end: the same token back (a bug seen in
 * aggregated API servers), or ever new tokens with ever more items. */
static void endless_pages(void *ctx, const fake_req *req, fake_resp *resp)
{
    int *mode = ctx; /* 0: the same token again, 1: a new token each time */
    static _Atomic int n;
    if (strcmp(req->path, "/api/v1/pods") != 0) return;
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    int page = atomic_fetch_add(&n, 1);
    fprintf(f, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"%s%d\"},"
               "\"items\":[",
            *mode ? "tok" : "same", *mode ? page : 0);
    for (int i = 0; i < 20; i++)
        fprintf(f, "%s{\"metadata\":{\"name\":\"p%d-%d\",\"namespace\":\"a\"},"
                   "\"spec\":{\"padding\":\"%0200d\"}}",
                i ? "," : "", page, i, 0);
    fputs("]}", f);
    fclose(f);
    resp->status = 200;
    resp->body = body;
}

Test(kube_ops, a_repeated_continue_token_ends_the_list_with_an_error, .timeout = 30)
{
    int mode = 0;
    fake_api_set_hook(fa, endless_pages, &mode);
    kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
    lo.limit = 20;
    cJSON *list = NULL;
    cr_assert_eq(kp_kube_list(client, KP_RES_POD, &lo, &list), KP_EINVALID);
    cr_assert_null(list);
    cr_expect(strstr(kp_error_last(), "continue token") != NULL, "%s", kp_error_last());
    cr_expect_leq(fake_api_count(fa, "GET", "/api/v1/pods"), 3);
}

Test(kube_ops, pages_past_the_body_cap_end_the_list_with_an_error, .timeout = 30)
{
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    o.max_body = 256 * 1024;
    kp_kube_client *small = NULL;
    cr_assert_eq(kp_kube_client_new(&small, &cfg, &o), 0);
    int mode = 1;
    fake_api_set_hook(fa, endless_pages, &mode);
    kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
    lo.limit = 20;
    cJSON *list = NULL;
    cr_assert_eq(kp_kube_list(small, KP_RES_POD, &lo, &list), KP_ETOOLARGE);
    cr_assert_null(list);
    cr_expect(strstr(kp_error_last(), "larger than") != NULL, "%s", kp_error_last());
    /* ~5 KiB pages: the cap stops it within a few dozen, not never. */
    cr_expect_leq(fake_api_count(fa, "GET", "/api/v1/pods"), 60);
    kp_kube_client_free(small);
}

Test(kube_ops, create_with_generate_name)
{
    cJSON *claim = cJSON_Parse("{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\","
                               "\"metadata\":{\"generateName\":\"default-\"},\"spec\":{}}");
    cJSON *out = NULL;
    cr_assert_eq(kp_kube_create(client, KP_RES_NODECLAIM, NULL, claim, &out), 0, "%s",
                 kp_error_last());
    const char *name = str(out, "metadata", "name");
    cr_assert_eq(strlen(name), strlen("default-") + 5, "%s", name);
    cr_assert_eq(strncmp(name, "default-", 8), 0);
    fake_logged l;
    cr_assert(fake_api_find(fa, "POST", "/apis/karpenter.sh/v1/nodeclaims", 0, &l));
    cr_assert_str_eq(l.content_type, "application/json");
    cr_assert_str_eq(l.target, "/apis/karpenter.sh/v1/nodeclaims");
    cJSON_Delete(out);
    cJSON_Delete(claim);
}

Test(kube_ops, create_twice_is_conflict_and_namespace_comes_from_the_object)
{
    cJSON *cm = cJSON_Parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"x\"}}");
    cr_assert_eq(kp_kube_create(client, KP_RES_CONFIGMAP, NULL, cm, NULL), 0, "%s",
                 kp_error_last());
    cr_assert_eq(kp_kube_create(client, KP_RES_CONFIGMAP, NULL, cm, NULL), KP_ECONFLICT);
    cr_assert(strstr(kp_error_last(), "configmaps \"c\" already exists"), "%s", kp_error_last());
    cJSON *orphan = cJSON_Parse("{\"metadata\":{\"name\":\"c\"}}");
    cr_assert_eq(kp_kube_create(client, KP_RES_CONFIGMAP, NULL, orphan, NULL), KP_EINVALID);
    cJSON_Delete(orphan);
    cJSON_Delete(cm);
}

Test(kube_ops, update_with_a_stale_resource_version_conflicts)
{
    add_pod("a", "p");
    cJSON *pod = NULL;
    cr_assert_eq(kp_kube_get(client, KP_RES_POD, "a", "p", &pod), 0);
    add_pod("a", "p"); /* someone else writes it */
    cJSON_AddStringToObject(cJSON_GetObjectItem(pod, "metadata"), "generation", "x");
    cr_assert_eq(kp_kube_update(client, KP_RES_POD, pod, 0, NULL), KP_ECONFLICT);
    cr_assert(strstr(kp_error_last(), "the object has been modified"), "%s", kp_error_last());
    cJSON_Delete(pod);
}

typedef struct mutation {
    int calls;
    int interfere; /* calls during which another writer changes the object first */
} mutation;

static int add_label(void *ctx, cJSON *obj)
{
    mutation *m = ctx;
    if (++m->calls <= m->interfere) add_pod("a", "p");
    cJSON *meta = cJSON_GetObjectItem(obj, "metadata");
    cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
    cJSON_AddStringToObject(labels, "done", "yes");
    return 0;
}

Test(kube_ops, modify_retries_conflicts_on_a_fresh_object)
{
    add_pod("a", "p");
    mutation m = {0, 2};
    cJSON *out = NULL;
    cr_assert_eq(kp_kube_modify(client, KP_RES_POD, "a", "p", 0, 0, add_label, &m, &out), 0, "%s",
                 kp_error_last());
    cr_assert_eq(m.calls, 3, "two conflicts, then success");
    cr_assert_eq(fake_api_count(fa, "PUT", "/api/v1/namespaces/a/pods/p"), 3);
    cr_assert_eq(fake_api_count(fa, "GET", "/api/v1/namespaces/a/pods/p"), 3);
    cr_assert_str_eq(str(cJSON_GetObjectItem(out, "metadata"), "labels", "done"), "yes");
    cJSON_Delete(out);

    m = (mutation){0, 100};
    cr_assert_eq(kp_kube_modify(client, KP_RES_POD, "a", "p", 0, 3, add_label, &m, NULL),
                 KP_ECONFLICT, "gives up after the attempts");
    cr_assert_eq(m.calls, 3);
}

static int unchanged(void *ctx, cJSON *obj)
{
    (void)ctx, (void)obj;
    return KP_KUBE_UNCHANGED;
}

static int refuse(void *ctx, cJSON *obj)
{
    (void)ctx, (void)obj;
    return kp_error_set(KP_EINVALID, "no thanks");
}

Test(kube_ops, modify_can_skip_or_abort)
{
    add_pod("a", "p");
    cJSON *out = NULL;
    cr_assert_eq(kp_kube_modify(client, KP_RES_POD, "a", "p", 0, 0, unchanged, NULL, &out), 0);
    cr_assert_str_eq(str(out, "metadata", "name"), "p");
    cJSON_Delete(out);
    cr_assert_eq(kp_kube_modify(client, KP_RES_POD, "a", "p", 0, 0, refuse, NULL, NULL),
                 KP_EINVALID);
    cr_assert_eq(fake_api_count(fa, "PUT", NULL), 0);
    cr_assert_eq(kp_kube_modify(client, KP_RES_POD, "a", "gone", 0, 0, unchanged, NULL, NULL),
                 KP_ENOTFOUND);
}

Test(kube_ops, status_subresource)
{
    fake_api_put(fa, "/apis/karpenter.sh/v1/nodeclaims",
                 "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"a\":1}}");
    cJSON *claim = NULL;
    cr_assert_eq(kp_kube_get(client, KP_RES_NODECLAIM, NULL, "c", &claim), 0);
    cJSON_AddItemToObject(claim, "status", cJSON_Parse("{\"providerID\":\"kwok://c\"}"));
    cJSON_ReplaceItemInObject(claim, "spec", cJSON_Parse("{\"a\":2}"));
    cr_assert_eq(kp_kube_update(client, KP_RES_NODECLAIM, claim, KP_KUBE_STATUS, NULL), 0, "%s",
                 kp_error_last());
    cr_assert_eq(fake_api_count(fa, "PUT", "/apis/karpenter.sh/v1/nodeclaims/c/status"), 1);
    cJSON *stored = fake_api_get(fa, "/apis/karpenter.sh/v1/nodeclaims/c");
    cr_assert_str_eq(str(stored, "status", "providerID"), "kwok://c");
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(stored, "spec"), "a")->valueint, 1,
                 "the status subresource leaves the spec alone");
    cJSON_Delete(stored);
    cJSON_Delete(claim);
    cr_assert_eq(kp_kube_patch(client, KP_RES_NODECLAIM, NULL, "c", KP_PATCH_MERGE,
                               "{\"status\":{\"phase\":\"x\"}}", KP_KUBE_STATUS, NULL),
                 0);
    cr_assert_eq(fake_api_count(fa, "PATCH", "/apis/karpenter.sh/v1/nodeclaims/c/status"), 1);
}

Test(kube_ops, merge_json_and_strategic_patches)
{
    fake_api_put(fa, "/api/v1/nodes",
                 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},"
                 "\"spec\":{\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"}]}}");
    cJSON *out = NULL;
    cr_assert_eq(kp_kube_patch(client, KP_RES_NODE, NULL, "n", KP_PATCH_MERGE,
                               "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"}}}", 0, &out),
                 0, "%s", kp_error_last());
    cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(out, "metadata"), "labels");
    cr_assert_null(cJSON_GetObjectItem(labels, "a"));
    cr_assert_str_eq(cJSON_GetObjectItem(labels, "c")->valuestring, "3");
    cJSON_Delete(out);
    fake_logged l;
    cr_assert(fake_api_find(fa, "PATCH", "/api/v1/nodes/n", -1, &l));
    cr_assert_str_eq(l.content_type, "application/merge-patch+json");

    cr_assert_eq(kp_kube_patch(client, KP_RES_NODE, NULL, "n", KP_PATCH_JSON,
                               "[{\"op\":\"test\",\"path\":\"/spec/taints/0/key\",\"value\":\"x\"},"
                               "{\"op\":\"remove\",\"path\":\"/spec/taints/0\"}]",
                               0, &out),
                 0, "%s", kp_error_last());
    cr_assert_eq(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "taints")), 0);
    cJSON_Delete(out);
    cr_assert(fake_api_find(fa, "PATCH", "/api/v1/nodes/n", -1, &l));
    cr_assert_str_eq(l.content_type, "application/json-patch+json");
    cr_assert_eq(
        kp_kube_patch(client, KP_RES_NODE, NULL, "n", KP_PATCH_JSON,
                      "[{\"op\":\"test\",\"path\":\"/spec/taints/0/key\",\"value\":\"x\"}]", 0,
                      NULL),
        KP_EINVALID, "a failed test op is 422");

    cr_assert_eq(kp_kube_patch(client, KP_RES_NODE, NULL, "n", KP_PATCH_STRATEGIC, "{}", 0, NULL),
                 0);
    cr_assert(fake_api_find(fa, "PATCH", "/api/v1/nodes/n", -1, &l));
    cr_assert_str_eq(l.content_type, "application/strategic-merge-patch+json");
    cr_assert_eq(
        kp_kube_patch(client, KP_RES_NODE, NULL, "n", (enum kp_kube_patch_type)9, "{}", 0, NULL),
        KP_EINVALID);
}

Test(kube_ops, delete_with_preconditions_and_propagation)
{
    add_pod("a", "p");
    kp_kube_delete_opts d = KP_KUBE_DELETE_OPTS_INIT;
    d.uid = "someone-else";
    cr_assert_eq(kp_kube_delete(client, KP_RES_POD, "a", "p", &d), KP_ECONFLICT);
    d.uid = "u-p";
    d.propagation = "Foreground";
    d.grace_period_seconds = 0;
    cr_assert_eq(kp_kube_delete(client, KP_RES_POD, "a", "p", &d), 0, "%s", kp_error_last());
    fake_logged l;
    cr_assert(fake_api_find(fa, "DELETE", "/api/v1/namespaces/a/pods/p", -1, &l));
    cJSON *body = cJSON_Parse(l.body);
    cr_assert_str_eq(str(body, "preconditions", "uid"), "u-p");
    cr_assert_str_eq(str(body, "propagationPolicy", NULL), "Foreground");
    cr_assert_eq(cJSON_GetObjectItem(body, "gracePeriodSeconds")->valueint, 0);
    cr_assert_str_eq(str(body, "kind", NULL), "DeleteOptions");
    cJSON_Delete(body);
    cr_assert_eq(kp_kube_delete(client, KP_RES_POD, "a", "p", NULL), KP_ENOTFOUND);
    cr_assert(fake_api_find(fa, "DELETE", "/api/v1/namespaces/a/pods/p", -1, &l));
    cr_assert_str_eq(l.body, "", "no options, no body");
}

Test(kube_ops, eviction_uses_policy_v1_when_served)
{
    add_pod("a", "p");
    cr_assert_eq(kp_kube_evict(client, "a", "p", NULL), 0, "%s", kp_error_last());
    fake_logged l;
    cr_assert(fake_api_find(fa, "POST", "/api/v1/namespaces/a/pods/p/eviction", 0, &l));
    cJSON *body = cJSON_Parse(l.body);
    cr_assert_str_eq(str(body, "apiVersion", NULL), "policy/v1");
    cr_assert_str_eq(str(body, "kind", NULL), "Eviction");
    cr_assert_str_eq(str(body, "metadata", "name"), "p");
    cr_assert_str_eq(str(body, "metadata", "namespace"), "a");
    cJSON_Delete(body);
    cr_assert_null(fake_api_get(fa, "/api/v1/namespaces/a/pods/p"));
    cr_assert_eq(kp_kube_evict(client, "a", "p", NULL), KP_ENOTFOUND, "already gone");
}

Test(kube_ops, eviction_falls_back_to_v1beta1)
{
    fake_api_set_policy_v1(fa, false);
    add_pod("a", "p");
    kp_kube_delete_opts d = KP_KUBE_DELETE_OPTS_INIT;
    d.grace_period_seconds = 30;
    cr_assert_eq(kp_kube_evict(client, "a", "p", &d), 0, "%s", kp_error_last());
    fake_logged l;
    cr_assert(fake_api_find(fa, "POST", "/api/v1/namespaces/a/pods/p/eviction", 0, &l));
    cJSON *body = cJSON_Parse(l.body);
    cr_assert_str_eq(str(body, "apiVersion", NULL), "policy/v1beta1");
    cr_assert_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "deleteOptions"), "gracePeriodSeconds")
            ->valueint,
        30);
    cJSON_Delete(body);
    cr_assert_eq(fake_api_count(fa, "GET", "/apis/policy/v1"), 1);
}

static void pdb_says_no(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strstr(req->path, "/eviction")) {
        resp->status = 429;
        resp->body = kp_xstrdup("{\"kind\":\"Status\",\"message\":\"Cannot evict pod as it would "
                                "violate the pod's disruption budget.\",\"code\":429}");
    }
}

Test(kube_ops, eviction_blocked_by_a_budget_is_retry)
{
    add_pod("a", "p");
    fake_api_set_hook(fa, pdb_says_no, NULL);
    cr_assert_eq(kp_kube_evict(client, "a", "p", NULL), KP_ERETRY);
    cr_assert(strstr(kp_error_last(), "violate the pod's disruption budget"), "%s",
              kp_error_last());
    cr_assert_eq(kp_kube_evict(client, NULL, "p", NULL), KP_EINVALID);
}

Test(kube_ops, object_keys)
{
    char key[16];
    cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"n\",\"namespace\":\"ns\"}}");
    cr_assert_eq(kp_kube_object_key(o, key, sizeof(key)), 0);
    cr_assert_str_eq(key, "ns/n");
    cJSON_Delete(o);
    o = cJSON_Parse("{\"metadata\":{\"name\":\"node-1\"}}");
    cr_assert_eq(kp_kube_object_key(o, key, sizeof(key)), 0);
    cr_assert_str_eq(key, "node-1");
    cr_assert_eq(kp_kube_object_key(o, key, 4), KP_ETOOLARGE);
    cJSON_Delete(o);
    o = cJSON_Parse("{\"metadata\":{}}");
    cr_assert_eq(kp_kube_object_key(o, key, sizeof(key)), KP_EINVALID);
    cJSON_Delete(o);
}

/* -------------------------------------------------------------- events */

Test(kube_ops, events_are_recorded_and_deduplicated)
{
    kp_fake_clock clock;
    kp_fake_clock_init(&clock, (int64_t)1767225600 * KP_NS_PER_SEC);
    kp_kube_recorder *r = kp_kube_recorder_new(client, "karpenter", &clock.base);
    cJSON *node = cJSON_Parse("{\"metadata\":{\"name\":\"n1\",\"uid\":\"u1\"}}");
    cr_assert_eq(kp_kube_record(r, KP_RES_NODE, node, KP_EVENT_NORMAL, "DisruptionBlocked",
                                "pdb prevents it"),
                 0, "%s", kp_error_last());
    fake_logged l;
    cr_assert(fake_api_find(fa, "POST", "/api/v1/namespaces/default/events", 0, &l));
    cJSON *ev = cJSON_Parse(l.body);
    cr_assert_str_eq(str(ev, "involvedObject", "kind"), "Node");
    cr_assert_str_eq(str(ev, "involvedObject", "name"), "n1");
    cr_assert_str_eq(str(ev, "involvedObject", "uid"), "u1");
    cr_assert_str_eq(str(ev, "reason", NULL), "DisruptionBlocked");
    cr_assert_str_eq(str(ev, "type", NULL), "Normal");
    cr_assert_str_eq(str(ev, "source", "component"), "karpenter");
    cr_assert_str_eq(str(ev, "firstTimestamp", NULL), "2026-01-01T00:00:00Z");
    const char *name = str(ev, "metadata", "name");
    cr_assert_eq(strncmp(name, "n1.", 3), 0, "%s", name);
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/events/%s", name);
    cJSON_Delete(ev);

    clock.ns += 5 * KP_NS_PER_SEC;
    cr_assert_eq(kp_kube_record(r, KP_RES_NODE, node, KP_EVENT_NORMAL, "DisruptionBlocked",
                                "pdb prevents it"),
                 0, "%s", kp_error_last());
    cr_assert_eq(fake_api_count(fa, "POST", "/api/v1/namespaces/default/events"), 1);
    cJSON *stored = fake_api_get(fa, path);
    cr_assert_eq(cJSON_GetObjectItem(stored, "count")->valueint, 2);
    cr_assert_str_eq(str(stored, "lastTimestamp", NULL), "2026-01-01T00:00:05Z");
    cJSON_Delete(stored);

    /* The API server dropped it (events expire): a new one is written. */
    cr_assert(fake_api_remove(fa, path));
    cr_assert_eq(kp_kube_record(r, KP_RES_NODE, node, KP_EVENT_NORMAL, "DisruptionBlocked",
                                "pdb prevents it"),
                 0, "%s", kp_error_last());
    cr_assert_eq(fake_api_count(fa, "POST", "/api/v1/namespaces/default/events"), 2);

    /* Different message: a different event. */
    cr_assert_eq(kp_kube_record(r, KP_RES_NODE, node, KP_EVENT_WARNING, "X", "other"), 0);
    cr_assert_eq(fake_api_count(fa, "POST", "/api/v1/namespaces/default/events"), 3);
    cJSON_Delete(node);

    cJSON *pod = cJSON_Parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"web\"}}");
    cr_assert_eq(kp_kube_record(r, KP_RES_POD, pod, KP_EVENT_WARNING, "FailedScheduling", "m"), 0);
    cr_assert_eq(fake_api_count(fa, "POST", "/api/v1/namespaces/web/events"), 1,
                 "namespaced objects' events stay in their namespace");
    cJSON_Delete(pod);
    cJSON *nameless = cJSON_Parse("{}");
    cr_assert_eq(kp_kube_record(r, KP_RES_POD, nameless, NULL, "R", "m"), KP_EINVALID);
    cJSON_Delete(nameless);
    kp_kube_recorder_free(r);
}
