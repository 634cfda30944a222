/* Drives shared/kube against a real API server; prints one line per check. */
#include "base/error.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/leader.h"
#include "kube/ops.h"
#include "kube/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kp_kube_client *c;
static const char *ns;
static int failed;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("FAIL %s:%d: ", __func__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf(" (last error: %s)\n", kp_error_last());                          \
      failed++;                                                                \
      return;                                                                  \
    }                                                                          \
  } while (0)

static const char *meta(const cJSON *o, const char *f) {
  const char *v = kp_kube_meta(o, f);
  return v ? v : "";
}

static const char *data(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "data"), key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static kp_kube_client *client_for(const char *kubeconfig) {
  kp_kube_config *cfg = NULL;
  kp_kube_client *cl = NULL;
  if (kp_kube_config_load(&cfg, kubeconfig, NULL) == 0)
    kp_kube_client_new(&cl, cfg, NULL);
  kp_kube_config_free(cfg);
  return cl;
}

static void discovery(void) {
  bool v1 = true;
  const kp_kube_resource *r;
  CHECK(kp_kube_client_has_policy_v1(c, &v1) == 0, "discovery");
  CHECK(v1, "the server has policy/v1");
  CHECK(kp_kube_client_resource(c, KP_RES_PDB, &r) == 0 &&
            strcmp(r->version, "v1") == 0,
        "PDBs are v1");
  printf("ok   discovery: policy/v1 served, PDBs and evictions use it\n");
}

static void in_cluster(void) {
  char dir[] = "/tmp/kp-it-sa-XXXXXX", path[256], cmd[600];
  CHECK(mkdtemp(dir), "mkdtemp");
  snprintf(path, sizeof(path), "%s/token", dir);
  FILE *f = fopen(path, "w");
  CHECK(f, "token file");
  fprintf(f, "%s\n", getenv("KP_E2E_ADMIN_TOKEN"));
  fclose(f);
  snprintf(cmd, sizeof(cmd), "cp '%s' '%s/ca.crt'", getenv("KP_E2E_CA_FILE"),
           dir);
  CHECK(system(cmd) == 0, "copy ca");
  kp_kube_incluster_opts o = {dir, "127.0.0.1", getenv("KP_E2E_API_PORT")};
  kp_kube_config *cfg = NULL;
  kp_kube_client *ic = NULL;
  cJSON *obj = NULL;
  CHECK(kp_kube_config_in_cluster(&cfg, &o) == 0, "in-cluster config");
  CHECK(kp_kube_client_new(&ic, cfg, NULL) == 0, "client");
  int err = kp_kube_get(ic, KP_RES_NAMESPACE, NULL, "default", &obj);
  cJSON_Delete(obj);
  kp_kube_client_free(ic);
  kp_kube_config_free(cfg);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "cleanup");
  CHECK(err == 0, "GET namespace over TLS with the service-account layout");
  printf("ok   in-cluster configuration (token file, ca.crt, host and port)\n");
}

static void other_credentials(void) {
  const char *cert = getenv("KP_IT_CERT_KUBECONFIG"),
             *sa = getenv("KP_IT_SA_KUBECONFIG");
  kp_kube_client *cc = client_for(cert), *sc = client_for(sa);
  cJSON *obj = NULL;
  CHECK(cc && sc, "clients for the extra kubeconfigs");
  int err = kp_kube_get(cc, KP_RES_NAMESPACE, NULL, "kube-system", &obj);
  cJSON_Delete(obj);
  obj = NULL;
  CHECK(err == 0, "client certificate accepted");
  err = kp_kube_get(sc, KP_RES_NODE, NULL, "anything", &obj);
  CHECK(err == KP_EFORBIDDEN && strstr(kp_error_last(), "forbidden"),
        "service account: %d", err);
  kp_kube_client_free(cc);
  kp_kube_client_free(sc);
  printf("ok   client certificate auth; 403 is KP_EFORBIDDEN with the server's "
         "message\n");
}

static cJSON *new_cm(const char *name, const char *generate) {
  cJSON *o = cJSON_CreateObject();
  cJSON *m = cJSON_AddObjectToObject(o, "metadata");
  if (name)
    cJSON_AddStringToObject(m, "name", name);
  if (generate)
    cJSON_AddStringToObject(m, "generateName", generate);
  cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "labels"), "kp-it", "1");
  cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "data"), "k", "v");
  return o;
}

static int count_items(const cJSON *list) {
  return cJSON_GetArraySize(cJSON_GetObjectItem(list, "items"));
}

static void create_and_list(void) {
  for (int i = 0; i < 3; i++) {
    cJSON *o = new_cm(NULL, "gen-"), *out = NULL;
    int err = kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, &out);
    bool named = out && strncmp(meta(out, "name"), "gen-", 4) == 0 &&
                 strlen(meta(out, "name")) > 4;
    cJSON_Delete(o);
    cJSON_Delete(out);
    CHECK(err == 0 && named, "create with generateName");
  }
  cJSON *o = new_cm("fixed", NULL);
  CHECK(kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, NULL) == 0, "create fixed");
  int err = kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, NULL);
  cJSON_Delete(o);
  CHECK(err == KP_ECONFLICT && strstr(kp_error_last(), "already exists"),
        "create twice: %d", err);
  kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
  lo.namespace = ns;
  lo.label_selector = "kp-it=1";
  lo.limit = 1;
  cJSON *list = NULL;
  CHECK(kp_kube_list(c, KP_RES_CONFIGMAP, &lo, &list) == 0, "list");
  int n = count_items(list);
  bool rv = *meta(list, "resourceVersion") != '\0';
  cJSON_Delete(list);
  CHECK(n == 4 && rv, "4 configmaps over 4 pages, got %d", n);
  printf("ok   create (generateName, AlreadyExists) and paginated list with a "
         "label selector\n");
}

static int add_key(void *ctx, cJSON *obj) {
  (*(int *)ctx)++;
  cJSON_AddStringToObject(cJSON_GetObjectItem(obj, "data"), "added", "yes");
  return 0;
}

static void update_and_patch(void) {
  cJSON *stale = NULL, *out = NULL;
  int calls = 0;
  CHECK(kp_kube_get(c, KP_RES_CONFIGMAP, ns, "fixed", &stale) == 0, "get");
  CHECK(kp_kube_modify(c, KP_RES_CONFIGMAP, ns, "fixed", 0, 0, add_key, &calls,
                       NULL) == 0,
        "modify");
  int err = kp_kube_update(c, KP_RES_CONFIGMAP, stale, 0, NULL);
  cJSON_Delete(stale);
  CHECK(err == KP_ECONFLICT &&
            strstr(kp_error_last(), "the object has been modified"),
        "stale update: %d", err);
  CHECK(kp_kube_patch(c, KP_RES_CONFIGMAP, ns, "fixed", KP_PATCH_MERGE,
                      "{\"data\":{\"k\":null,\"m\":\"merge\"}}", 0, NULL) == 0,
        "merge patch");
  CHECK(kp_kube_patch(
            c, KP_RES_CONFIGMAP, ns, "fixed", KP_PATCH_JSON,
            "[{\"op\":\"add\",\"path\":\"/data/j\",\"value\":\"json\"}]", 0,
            NULL) == 0,
        "json patch");
  CHECK(kp_kube_patch(c, KP_RES_CONFIGMAP, ns, "fixed", KP_PATCH_STRATEGIC,
                      "{\"data\":{\"s\":\"strategic\"}}", 0, &out) == 0,
        "strategic patch");
  bool ok = strcmp(data(out, "added"), "yes") == 0 && !*data(out, "k") &&
            strcmp(data(out, "m"), "merge") == 0 &&
            strcmp(data(out, "j"), "json") == 0 &&
            strcmp(data(out, "s"), "strategic") == 0;
  cJSON_Delete(out);
  CHECK(ok && calls == 1, "all changes applied");
  err = kp_kube_patch(
      c, KP_RES_CONFIGMAP, ns, "fixed", KP_PATCH_JSON,
      "[{\"op\":\"test\",\"path\":\"/data/j\",\"value\":\"nope\"}]", 0, NULL);
  CHECK(err == KP_EINVALID, "failed JSON patch test: %d", err);
  printf("ok   modify, stale update conflicts, merge/JSON/strategic patches\n");
}

static void node_status_and_delete(void) {
  char name[64];
  snprintf(name, sizeof(name), "kp-it-node-%d", (int)getpid());
  cJSON *node = cJSON_Parse("{\"metadata\":{\"labels\":{\"kp-it\":\"1\"}}}"),
        *out = NULL;
  cJSON_AddStringToObject(cJSON_GetObjectItem(node, "metadata"), "name", name);
  int err = kp_kube_create(c, KP_RES_NODE, NULL, node, &out);
  cJSON_Delete(node);
  CHECK(err == 0, "create node");
  char *uid = strdup(meta(out, "uid"));
  cJSON_Delete(out);
  out = NULL;
  err = kp_kube_patch(
      c, KP_RES_NODE, NULL, name, KP_PATCH_MERGE,
      "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
      "\"reason\":\"KubeletReady\",\"message\":\"kp-it\"}]}}",
      KP_KUBE_STATUS, &out);
  const cJSON *cond = cJSON_GetArrayItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(out, "status"), "conditions"), 0);
  bool ready = cond && strcmp(cJSON_GetObjectItem(cond, "type")->valuestring,
                              "Ready") == 0;
  cJSON_Delete(out);
  CHECK(err == 0 && ready, "status patch");
  kp_kube_delete_opts d = KP_KUBE_DELETE_OPTS_INIT;
  d.uid = "00000000-0000-0000-0000-000000000000";
  err = kp_kube_delete(c, KP_RES_NODE, NULL, name, &d);
  CHECK(err == KP_ECONFLICT, "wrong uid precondition: %d", err);
  d.uid = uid;
  d.propagation = "Background";
  err = kp_kube_delete(c, KP_RES_NODE, NULL, name, &d);
  free(uid);
  CHECK(err == 0, "delete");
  CHECK(kp_kube_get(c, KP_RES_NODE, NULL, name, NULL) == KP_ENOTFOUND, "gone");
  printf(
      "ok   status subresource, delete with preconditions and propagation\n");
}

static int count_added(void *ctx, enum kp_watch_type type, cJSON **obj) {
  if (type == KP_WATCH_ADDED && strcmp(meta(*obj, "name"), "late") == 0)
    (*(int *)ctx)++;
  return 0;
}

/* Resume from a list's resourceVersion: what was created after it arrives,
 * and the server's timeoutSeconds ends the watch cleanly. */
static void watch_resume(void) {
  cJSON *list = NULL;
  kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
  lo.namespace = ns;
  CHECK(kp_kube_list(c, KP_RES_CONFIGMAP, &lo, &list) == 0, "list");
  char *rv = strdup(meta(list, "resourceVersion"));
  cJSON_Delete(list);
  cJSON *o = new_cm("late", NULL);
  int err = kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, NULL);
  cJSON_Delete(o);
  CHECK(err == 0, "create");
  kp_kube_watch_opts wo = KP_KUBE_WATCH_OPTS_INIT;
  wo.namespace = ns;
  wo.resource_version = rv;
  wo.timeout_seconds = 2;
  int seen = 0;
  err = kp_kube_watch(c, KP_RES_CONFIGMAP, &wo, count_added, &seen);
  free(rv);
  CHECK(err == 0 && seen == 1, "watch: %d, %d events", err, seen);
  CHECK(kp_kube_delete(c, KP_RES_CONFIGMAP, ns, "late", NULL) == 0, "delete");
  printf("ok   watch resumed from a list's resourceVersion, ended by "
         "timeoutSeconds\n");
}

typedef struct bookmarks {
  int count;
  char rv[64];
  int late; /* ADDED events of "after-bookmark" */
} bookmarks;

static int on_bookmark(void *ctx, enum kp_watch_type type, cJSON **obj) {
  bookmarks *b = ctx;
  if (type == KP_WATCH_BOOKMARK && *meta(*obj, "resourceVersion")) {
    b->count++;
    snprintf(b->rv, sizeof(b->rv), "%s", meta(*obj, "resourceVersion"));
  }
  if (type == KP_WATCH_ADDED && strcmp(meta(*obj, "name"), "after-bookmark") == 0)
    b->late++;
  return 0;
}

/* The server sends a bookmark shortly before a watch's timeout (and every
 * minute): it carries only a resourceVersion, and resuming from it works. */
static void watch_bookmarks(void) {
  kp_kube_watch_opts wo = KP_KUBE_WATCH_OPTS_INIT;
  wo.namespace = ns;
  wo.bookmarks = true;
  wo.timeout_seconds = 5;
  bookmarks b = {0};
  int err = kp_kube_watch(c, KP_RES_CONFIGMAP, &wo, on_bookmark, &b);
  CHECK(err == 0 && b.count >= 1, "bookmarks before the timeout: %d, %d", err,
        b.count);
  char rv[64];
  snprintf(rv, sizeof(rv), "%s", b.rv);
  cJSON *o = new_cm("after-bookmark", NULL);
  err = kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, NULL);
  cJSON_Delete(o);
  CHECK(err == 0, "create");
  wo.resource_version = rv;
  wo.timeout_seconds = 3;
  err = kp_kube_watch(c, KP_RES_CONFIGMAP, &wo, on_bookmark, &b);
  CHECK(err == 0 && b.late == 1, "resumed from bookmark %s: %d, %d", rv, err,
        b.late);
  CHECK(kp_kube_delete(c, KP_RES_CONFIGMAP, ns, "after-bookmark", NULL) == 0,
        "delete");
  printf("ok   watch bookmarks before the timeout (%d); resuming from one (%s) "
         "sees what came after\n", b.count, rv);
}

typedef struct watch_list {
  int added, end_bookmarks, other;
} watch_list;

static int on_watch_list(void *ctx, enum kp_watch_type type, cJSON **obj) {
  watch_list *w = ctx;
  const cJSON *ann =
      cJSON_GetObjectItem(cJSON_GetObjectItem(*obj, "metadata"), "annotations");
  const cJSON *end = cJSON_GetObjectItem(ann, "k8s.io/initial-events-end");
  if (type == KP_WATCH_ADDED)
    w->added++;
  else if (type == KP_WATCH_BOOKMARK && cJSON_IsString(end) &&
           strcmp(end->valuestring, "true") == 0)
    w->end_bookmarks++;
  else if (type != KP_WATCH_BOOKMARK)
    w->other++;
  return 0;
}

/* A watch-list stream (sendInitialEvents=true) the real server wrote, fetched
 * by the test with curl: the initial state as ADDED events, then a bookmark
 * annotated k8s.io/initial-events-end. Our decoder takes it as it comes. */
static void watch_list_stream(void) {
  const char *path = getenv("KP_IT_WATCHLIST_FILE");
  const char *objects = getenv("KP_IT_WATCHLIST_OBJECTS");
  int want = objects ? (int)strtol(objects, NULL, 10) : -1;
  CHECK(path && want >= 0, "KP_IT_WATCHLIST_FILE and _OBJECTS");
  FILE *f = fopen(path, "rb");
  CHECK(f, "open %s", path);
  watch_list w = {0};
  kp_watch_stream st;
  kp_watch_stream_init(&st, 1 << 20, on_watch_list, &w);
  char buf[333]; /* odd-sized reads: events split across feeds */
  size_t n;
  int err = 0;
  while (!err && (n = fread(buf, 1, sizeof(buf), f)) > 0)
    err = kp_watch_stream_feed(&st, buf, n);
  fclose(f);
  kp_watch_stream_free(&st);
  CHECK(err == 0 && w.added == want && w.end_bookmarks == 1 && w.other == 0,
        "watch-list: err %d, %d added (want %d), %d end bookmarks, %d other",
        err, w.added, want, w.end_bookmarks, w.other);
  printf("ok   a watch-list stream (sendInitialEvents): %d ADDED, then the "
         "initial-events-end bookmark\n", w.added);
}

/* Field validation Warn (the server's default): a write with a field the
 * schema lacks succeeds without it, and the server says so in a Warning header,
 * which the client logs (the test finds the line in this program's output). */
static void unknown_field_warning(void) {
  cJSON *o = new_cm("warned", NULL), *out = NULL;
  cJSON_AddStringToObject(o, "bogusField", "dropped");
  int err = kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, &out);
  cJSON_Delete(o);
  bool dropped = out && !cJSON_GetObjectItem(out, "bogusField");
  cJSON_Delete(out);
  CHECK(err == 0 && dropped, "create with an unknown field: %d", err);
  CHECK(kp_kube_delete(c, KP_RES_CONFIGMAP, ns, "warned", NULL) == 0, "delete");
  printf("ok   an unknown field is dropped by the server (its warning is logged)\n");
}

static bool next_key(kp_workqueue *q, const char *want) {
  char *k = NULL;
  if (kp_workqueue_get(q, 20000, &k) < 0)
    return false;
  bool ok = strstr(k, want) != NULL;
  kp_workqueue_done(q, k);
  free(k);
  return ok;
}

static void informer(void) {
  kp_informer_opts io = KP_INFORMER_OPTS_INIT;
  io.namespace = ns;
  io.label_selector = "kp-it=1";
  io.page_size = 2;
  kp_informer *inf = kp_informer_new(c, KP_RES_CONFIGMAP, &io);
  kp_workqueue *q = kp_workqueue_new(NULL);
  kp_informer_add_queue(inf, q);
  kp_informer_start(inf);
  int synced = kp_informer_wait_synced(inf, 20000);
  size_t initial = kp_informer_len(inf);
  while (kp_workqueue_len(q)) {
    char *k;
    kp_workqueue_get(q, 0, &k);
    kp_workqueue_done(q, k);
    free(k);
  }
  cJSON *o = new_cm("watched", NULL);
  kp_kube_create(c, KP_RES_CONFIGMAP, ns, o, NULL);
  cJSON_Delete(o);
  bool added = next_key(q, "/watched");
  kp_kube_patch(c, KP_RES_CONFIGMAP, ns, "watched", KP_PATCH_MERGE,
                "{\"data\":{\"x\":\"1\"}}", 0, NULL);
  bool updated = next_key(q, "/watched");
  char key[128];
  snprintf(key, sizeof(key), "%s/watched", ns);
  cJSON *cached = kp_informer_get(inf, key);
  bool fresh = cached && strcmp(data(cached, "x"), "1") == 0;
  cJSON_Delete(cached);
  kp_kube_delete(c, KP_RES_CONFIGMAP, ns, "watched", NULL);
  bool deleted = next_key(q, "/watched") && !kp_informer_get(inf, key);
  kp_informer_free(inf);
  kp_workqueue_free(q);
  CHECK(synced == 0 && initial == 4, "synced with the 4 configmaps: %d %zu",
        synced, initial);
  CHECK(added && updated && fresh && deleted, "events: %d %d %d %d", added,
        updated, fresh, deleted);
  printf("ok   informer: list, watch add/update/delete into a work queue and "
         "the cache\n");
}

static void eviction(void) {
  cJSON *pod = cJSON_Parse(
      "{\"metadata\":{\"name\":\"victim\",\"labels\":{\"app\":\"victim\"}},"
      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}}");
  cJSON *pdb = cJSON_Parse(
      "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
      "\"metadata\":{\"name\":\"guard\"},\"spec\":{\"minAvailable\":1,"
      "\"selector\":{\"matchLabels\":{\"app\":\"victim\"}}}}");
  int e1 = kp_kube_create(c, KP_RES_POD, ns, pod, NULL);
  int e2 = kp_kube_create(c, KP_RES_PDB, ns, pdb, NULL);
  cJSON_Delete(pod);
  cJSON_Delete(pdb);
  CHECK(e1 == 0 && e2 == 0, "pod and pdb: %d %d", e1, e2);
  /* Pending pods are evicted whatever the budgets say: play the kubelet. */
  e1 = kp_kube_patch(
      c, KP_RES_POD, ns, "victim", KP_PATCH_MERGE,
      "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
      "\"status\":\"True\"}]}}",
      KP_KUBE_STATUS, NULL);
  CHECK(e1 == 0, "pod status");
  int err = kp_kube_evict(c, ns, "victim", NULL);
  CHECK(err == KP_ERETRY, "a budget blocks the eviction: %d", err);
  printf("ok   eviction blocked by a policy/v1 budget is KP_ERETRY (%s)\n",
         kp_error_last());
  CHECK(kp_kube_delete(c, KP_RES_PDB, ns, "guard", NULL) == 0, "delete pdb");
  CHECK(kp_kube_evict(c, ns, "victim", NULL) == 0, "evict");
  err = KP_ERROR;
  for (int i = 0; i < 100 && err != KP_ENOTFOUND; i++, usleep(100000))
    err = kp_kube_get(c, KP_RES_POD, ns, "victim", NULL);
  CHECK(err == KP_ENOTFOUND, "the pod is gone");
  CHECK(kp_kube_evict(c, ns, "victim", NULL) == KP_ENOTFOUND,
        "evicting it again");
  printf("ok   eviction (policy/v1) deletes the pod\n");
}

static void events(void) {
  kp_kube_recorder *r = kp_kube_recorder_new(c, "kp-it", NULL);
  cJSON *cm = NULL;
  CHECK(kp_kube_get(c, KP_RES_CONFIGMAP, ns, "fixed", &cm) == 0, "get");
  int e1 = kp_kube_record(r, KP_RES_CONFIGMAP, cm, KP_EVENT_WARNING, "KpIt",
                          "twice");
  int e2 = kp_kube_record(r, KP_RES_CONFIGMAP, cm, KP_EVENT_WARNING, "KpIt",
                          "twice");
  cJSON_Delete(cm);
  kp_kube_recorder_free(r);
  CHECK(e1 == 0 && e2 == 0, "record");
  kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
  lo.namespace = ns;
  lo.field_selector = "involvedObject.name=fixed,reason=KpIt";
  cJSON *list = NULL;
  CHECK(kp_kube_list(c, KP_RES_EVENT, &lo, &list) == 0, "list events");
  const cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
  bool ok =
      count_items(list) == 1 && cJSON_GetObjectItem(ev, "count")->valueint == 2;
  cJSON_Delete(list);
  CHECK(ok, "one event, count 2");
  printf("ok   events recorded and de-duplicated (count 2)\n");
}

static kp_leader_elector *elector(const char *id) {
  kp_leader_opts o = KP_LEADER_OPTS_INIT;
  o.namespace = ns;
  o.name = "kp-it-leader";
  o.identity = id;
  o.lease_duration_ms = 4000;
  o.renew_deadline_ms = 3000;
  o.retry_period_ms = 500;
  kp_leader_elector *le = NULL;
  kp_leader_elector_new(&le, c, &o);
  kp_leader_elector_start(le);
  return le;
}

static bool wait_leader(kp_leader_elector *le) {
  for (int i = 0; i < 200 && !kp_leader_elector_is_leader(le); i++)
    usleep(100000);
  return kp_leader_elector_is_leader(le);
}

static void leader(void) {
  kp_leader_elector *a = elector("replica-a");
  bool a_leads = wait_leader(a);
  kp_leader_elector *b = elector("replica-b");
  usleep(2000000);
  bool b_waits = !kp_leader_elector_is_leader(b);
  kp_leader_elector_free(a);
  bool b_leads = wait_leader(b);
  kp_leader_elector_free(b);
  CHECK(a_leads && b_waits && b_leads, "%d %d %d", a_leads, b_waits, b_leads);
  printf("ok   leader election on a coordination.k8s.io/v1 Lease: hand-over on "
         "release\n");
}

int main(void) {
  ns = getenv("KP_IT_NAMESPACE");
  c = client_for(NULL);
  if (!c || !ns) {
    printf("FAIL set-up: %s\n", kp_error_last());
    return 1;
  }
  discovery();
  in_cluster();
  other_credentials();
  create_and_list();
  update_and_patch();
  node_status_and_delete();
  watch_resume();
  watch_bookmarks();
  watch_list_stream();
  unknown_field_warning();
  informer();
  eviction();
  events();
  leader();
  kp_kube_client_free(c);
  printf("%s: %d failed\n", failed ? "FAIL" : "ok", failed);
  return failed ? 1 : 0;
}
