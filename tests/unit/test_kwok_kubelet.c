/*
 * The kwok kubelet (shared/cloud/kwok/kwok_kubelet.h) against the fake API
 * server, with real informers and a fake clock: the clock decides what is
 * due, kp_kwok_kubelet_resync() makes the kubelet look again after a test
 * moves it. Waits are bounded polls, not timing assertions.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "cloud/kwok/kwok_kubelet.h"
#include "helpers/fake_apiserver.h"
#include "kube/informer.h"

#define NOW_NS (INT64_C(1767225600) * KP_NS_PER_SEC) /* 2026-01-01T00:00:00Z */
#define NODES  "/api/v1/nodes"
#define PODS   "/api/v1/namespaces/app/pods"
#define LEASES "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"

static fake_api *fa;
static kp_kube_client *client;
static kp_informer *nodes, *pods;
static kp_kwok_kubelet *kubelet;
static kp_fake_clock clk;

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
    nodes = kp_informer_new(client, KP_RES_NODE, NULL);
    pods = kp_informer_new(client, KP_RES_POD, NULL);
    kp_fake_clock_init(&clk, NOW_NS);
}

static void teardown(void)
{
    kp_informer_stop(nodes);
    kp_informer_stop(pods);
    kp_kwok_kubelet_free(kubelet);
    kubelet = NULL;
    kp_informer_free(nodes);
    kp_informer_free(pods);
    kp_kube_client_free(client);
    fake_api_stop(fa);
}

TestSuite(kwok_kubelet, .init = setup, .fini = teardown);

static void start_with(kp_kwok_kubelet_opts o)
{
    o.clock = &clk.base;
    cr_assert_eq(kp_kwok_kubelet_new(client, nodes, pods, &o, &kubelet), 0, "%s", kp_error_last());
    cr_assert_eq(kp_kwok_kubelet_start(kubelet), 0);
    cr_assert_eq(kp_informer_start(nodes), 0);
    cr_assert_eq(kp_informer_start(pods), 0);
    cr_assert_eq(kp_informer_wait_synced(nodes, 10000), 0);
    cr_assert_eq(kp_informer_wait_synced(pods, 10000), 0);
}

static void start(bool finish_immediately)
{
    kp_kwok_kubelet_opts o = KP_KWOK_KUBELET_OPTS_INIT;
    o.finish_immediately = finish_immediately;
    start_with(o);
}

static void advance(int64_t seconds)
{
    clk.ns += seconds * KP_NS_PER_SEC;
    kp_kwok_kubelet_resync(kubelet);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Poll `pred` for up to 10 s. */
static bool eventually(bool (*pred)(const char *), const char *arg)
{
    for (int i = 0; i < 1000; i++) {
        if (pred(arg)) return true;
        sleep_ms(10);
    }
    return false;
}

static const char *str_at(const cJSON *obj, const char *path)
{
    char field[128];
    while (obj && *path) {
        size_t len = strcspn(path, ".");
        snprintf(field, sizeof(field), "%.*s", (int)len, path);
        obj = cJSON_GetObjectItemCaseSensitive(obj, field);
        path += len + (path[len] == '.');
    }
    return cJSON_GetStringValue(obj);
}

static cJSON *get_obj(const char *collection, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", collection, name);
    return fake_api_get(fa, path);
}

static const cJSON *condition(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "conditions"))
    {
        if (strcmp(str_at(c, "type"), type) == 0) return c;
    }
    return NULL;
}

static const char *const TAINTS_ADMISSION =
    "[{\"key\":\"karpenter.sh/unregistered\",\"effect\":\"NoExecute\"},"
    "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"},"
    "{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]";

/* A node as kwok's create() makes it (Ready at NOW) or, with ready false,
 * as someone might make it by hand: no conditions, no addresses. */
static void put_node(const char *name, const char *provider_id, bool ready, const char *taints)
{
    char json[2048];
    const char *status =
        ready ? "{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
                "\"KubeletReady\","
                "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\",\"lastTransitionTime\":"
                "\"2026-01-01T00:00:00Z\"}],\"addresses\":[{\"type\":\"InternalIP\",\"address\":"
                "\"10.1.2.3\"}]}"
              : "{}";
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"providerID\":\"%s\","
             "\"taints\":%s},\"status\":%s}",
             name, name, provider_id, taints, status);
    cr_assert_gt(fake_api_put(fa, NODES, json), 0);
}

static void put_pod(const char *name, const char *node, const char *extra_meta, const char *phase)
{
    char json[2048];
    snprintf(
        json, sizeof(json),
        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"app\",\"uid\":\"uid-%s\"%s},"
        "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"web\",\"image\":\"nginx\"},"
        "{\"name\":\"log\",\"image\":\"busybox\"}],\"initContainers\":[{\"name\":\"setup\","
        "\"image\":\"busybox\"},{\"name\":\"proxy\",\"image\":\"envoy\",\"restartPolicy\":"
        "\"Always\"}]},\"status\":{\"phase\":\"%s\",\"conditions\":[{\"type\":"
        "\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"2025-12-31T23:00:00Z\"}]}}",
        name, name, extra_meta, node, phase);
    cr_assert_gt(fake_api_put(fa, PODS, json), 0);
}

static int taint_count(const char *node)
{
    cJSON *n = get_obj(NODES, node);
    int count = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "spec"), "taints"));
    cJSON_Delete(n);
    return count;
}

static bool only_unregistered_taint(const char *node)
{
    cJSON *n = get_obj(NODES, node);
    const cJSON *taints = cJSON_GetObjectItem(cJSON_GetObjectItem(n, "spec"), "taints");
    bool ok =
        cJSON_GetArraySize(taints) == 1 &&
        strcmp(str_at(cJSON_GetArrayItem(taints, 0), "key"), "karpenter.sh/unregistered") == 0;
    cJSON_Delete(n);
    return ok;
}

static bool has_lease(const char *node)
{
    cJSON *l = get_obj(LEASES, node);
    cJSON_Delete(l);
    return l != NULL;
}

static bool no_lease(const char *node)
{
    return !has_lease(node);
}

static bool pod_running(const char *name)
{
    cJSON *p = get_obj(PODS, name);
    const char *phase = str_at(p, "status.phase");
    bool ok = phase && strcmp(phase, "Running") == 0;
    cJSON_Delete(p);
    return ok;
}

static bool pod_gone(const char *name)
{
    cJSON *p = get_obj(PODS, name);
    cJSON_Delete(p);
    return p == NULL;
}

static bool in_pod_cache(const char *key)
{
    cJSON *p = kp_informer_get(pods, key);
    cJSON_Delete(p);
    return p != NULL;
}

static char heartbeat_wanted[32];
static bool heartbeat_is(const char *node)
{
    cJSON *n = get_obj(NODES, node);
    const char *hb = str_at(condition(n, "Ready"), "lastHeartbeatTime");
    bool ok = hb && strcmp(hb, heartbeat_wanted) == 0;
    cJSON_Delete(n);
    return ok;
}

static char renew_seen[64];
static bool lease_renewed(const char *node)
{
    cJSON *l = get_obj(LEASES, node);
    const char *t = str_at(l, "spec.renewTime");
    bool ok = t && strcmp(t, renew_seen) != 0;
    cJSON_Delete(l);
    return ok;
}

/* "field=N": the kubelet's stats count at least N (they move just after the
 * API call; a stale cache may repeat a call). */
static bool stat_is(const char *spec)
{
    kp_kwok_kubelet_stats st;
    kp_kwok_kubelet_get_stats(kubelet, &st);
    const char *eq = strchr(spec, '=');
    unsigned long want = strtoul(eq + 1, NULL, 10), have = 0;
    if (strncmp(spec, "taints_removed", (size_t)(eq - spec)) == 0)
        have = st.taints_removed;
    else if (strncmp(spec, "pods_finished", (size_t)(eq - spec)) == 0)
        have = st.pods_finished;
    else if (strncmp(spec, "pods_running", (size_t)(eq - spec)) == 0)
        have = st.pods_running;
    return have >= want;
}

/* ------------------------------------------------------------ nodes */

Test(kwok_kubelet, ready_node_loses_the_admission_taints)
{
    put_node("n1", "kwok://n1", true, TAINTS_ADMISSION);
    start(false);
    cr_assert(eventually(only_unregistered_taint, "n1"),
              "not-ready and unreachable go; unregistered stays");
    fake_logged patch;
    cr_assert(fake_api_find(fa, "PATCH", "/api/v1/nodes/n1", -1, &patch));
    cr_expect(strstr(patch.content_type, "merge-patch") != NULL, "%s", patch.content_type);
    cr_expect(strstr(patch.body, "\"resourceVersion\"") != NULL, "the patch is conditional: %s",
              patch.body);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/n1/status"), 0,
                 "the heartbeat is fresh");
    cr_expect(eventually(stat_is, "taints_removed=2"), "the stats count both taints");
}

Test(kwok_kubelet, other_nodes_are_left_alone)
{
    put_node("real", "aws:///zone-a/i-0abc", true, TAINTS_ADMISSION);
    put_node("bare", "", false, TAINTS_ADMISSION);
    put_node("n1", "kwok://n1", true, TAINTS_ADMISSION);
    put_pod("on-real", "real", "", "Pending");
    start(false);
    cr_assert(eventually(only_unregistered_taint, "n1"));
    cr_assert(eventually(has_lease, "n1"));
    sleep_ms(200);
    cr_expect_eq(taint_count("real"), 3);
    cr_expect_eq(taint_count("bare"), 3);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/real"), 0);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/bare"), 0);
    cr_expect_eq(fake_api_count(fa, "PATCH", PODS), 0);
    cr_expect_not(has_lease("real"));
}

Test(kwok_kubelet, node_without_status_is_made_ready_then_untainted)
{
    put_node("hand", "kwok://hand", false, TAINTS_ADMISSION);
    start(false);
    cr_assert(eventually(only_unregistered_taint, "hand"));
    cJSON *n = get_obj(NODES, "hand");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "status"), "True");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "reason"), "KubeletReady");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "lastHeartbeatTime"), "2026-01-01T00:00:00Z");
    cr_expect_str_eq(str_at(condition(n, "DiskPressure"), "status"), "False");
    const char *ip = str_at(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "status"), "addresses"), 0),
        "address");
    cr_expect(ip && strncmp(ip, "10.", 3) == 0, "an InternalIP is made up: %s", ip ? ip : "(none)");
    cJSON_Delete(n);
    fake_logged patch;
    cr_assert(fake_api_find(fa, "PATCH", "/api/v1/nodes/hand/status", 0, &patch));
    cr_expect(strstr(patch.content_type, "strategic-merge-patch") != NULL, "%s",
              patch.content_type);
}

Test(kwok_kubelet, heartbeat_follows_the_clock)
{
    put_node("n1", "kwok://n1", true, "[]");
    start(false);
    cr_assert(eventually(has_lease, "n1"));
    sleep_ms(100);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/n1/status"), 0, "fresh at NOW");
    advance(30);
    sleep_ms(200);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/n1/status"), 0, "30 s is not a minute");
    advance(31);
    snprintf(heartbeat_wanted, sizeof(heartbeat_wanted), "2026-01-01T00:01:01Z");
    cr_assert(eventually(heartbeat_is, "n1"), "the heartbeat moves once a minute has passed");
    cJSON *n = get_obj(NODES, "n1");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "lastTransitionTime"), "2026-01-01T00:00:00Z",
                     "no transition: Ready was True already");
    cJSON_Delete(n);
}

Test(kwok_kubelet, lease_is_created_and_renewed)
{
    put_node("n1", "kwok://n1", true, "[]");
    start(false);
    cr_assert(eventually(has_lease, "n1"));
    cJSON *l = get_obj(LEASES, "n1");
    cr_expect_str_eq(str_at(l, "spec.holderIdentity"), "n1");
    cr_expect_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(l, "spec"), "leaseDurationSeconds")->valueint, 40);
    const cJSON *owner = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(l, "metadata"), "ownerReferences"), 0);
    cr_expect_str_eq(str_at(owner, "kind"), "Node");
    cr_expect_str_eq(str_at(owner, "uid"), "uid-n1");
    const char *renew = str_at(l, "spec.renewTime");
    cr_assert_not_null(renew);
    regex_t re;
    cr_assert_eq(regcomp(&re, "^2026-01-01T00:00:00\\.[0-9]{6}Z$", REG_EXTENDED), 0);
    cr_expect_eq(regexec(&re, renew, 0, NULL, 0), 0, "a MicroTime: %s", renew);
    regfree(&re);
    snprintf(renew_seen, sizeof(renew_seen), "%s", renew);
    cJSON_Delete(l);
    advance(11);
    cr_assert(eventually(lease_renewed, "n1"));
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/n1/status"), 0,
                 "renewing the lease is not a heartbeat");
}

Test(kwok_kubelet, lease_goes_with_the_node)
{
    put_node("n1", "kwok://n1", true, "[]");
    start(false);
    cr_assert(eventually(has_lease, "n1"));
    cr_assert(fake_api_remove(fa, NODES "/n1"));
    cr_assert(eventually(no_lease, "n1"));
}

Test(kwok_kubelet, no_intervals_no_heartbeats)
{
    kp_kwok_kubelet_opts o = KP_KWOK_KUBELET_OPTS_INIT;
    o.status_interval_ms = 0;
    o.lease_interval_ms = 0;
    put_node("n1", "kwok://n1", true, TAINTS_ADMISSION);
    put_node("hand", "kwok://hand", false, "[]");
    start_with(o);
    cr_assert(eventually(only_unregistered_taint, "n1"));
    snprintf(heartbeat_wanted, sizeof(heartbeat_wanted), "2026-01-01T00:00:00Z");
    cr_assert(eventually(heartbeat_is, "hand"), "a node that is not Ready is still made Ready");
    advance(3600);
    sleep_ms(300);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/n1/status"), 0, "an hour later, still none");
    cr_expect_eq(fake_api_count(fa, NULL, "/apis/coordination.k8s.io"), 0, "no Leases");
}

/* A node NotReady since 23:49 whose status a test holds (held: the annotation). */
static void put_unhealthy_node(const char *name, bool held)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"annotations\":{%s}},"
             "\"spec\":{\"providerID\":\"kwok://%s\",\"taints\":[]},\"status\":{\"conditions\":["
             "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"KubeletNotReady\","
             "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\","
             "\"lastTransitionTime\":\"2025-12-31T23:49:00Z\"}],"
             "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.1.2.3\"}]}}",
             name, name, held ? "\"karpenter.kwok.sh/hold-node-status\":\"true\"" : "", name);
    cr_assert_gt(fake_api_put(fa, NODES, json), 0);
}

static bool ready_is_true(const char *node)
{
    cJSON *n = get_obj(NODES, node);
    const char *s = str_at(condition(n, "Ready"), "status");
    bool ok = s && strcmp(s, "True") == 0;
    cJSON_Delete(n);
    return ok;
}

Test(kwok_kubelet, held_status_stays_not_ready_until_released)
{
    put_unhealthy_node("sick", true);
    start(false);
    cr_assert(eventually(has_lease, "sick"), "the lease is still kept");
    cJSON *l = get_obj(LEASES, "sick");
    snprintf(renew_seen, sizeof(renew_seen), "%s", str_at(l, "spec.renewTime"));
    cJSON_Delete(l);
    advance(120);
    cr_assert(eventually(lease_renewed, "sick"), "and renewed");
    sleep_ms(200);
    cr_expect_eq(fake_api_count(fa, "PATCH", "/api/v1/nodes/sick/status"), 0,
                 "no status is reported for a held node, even two minutes on");
    cJSON *n = get_obj(NODES, "sick");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "status"), "False");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "lastTransitionTime"), "2025-12-31T23:49:00Z",
                     "the transition a test set is kept");
    cJSON_Delete(n);
    put_unhealthy_node("sick", false);
    cr_assert(eventually(ready_is_true, "sick"), "released, the node is made Ready again");
    n = get_obj(NODES, "sick");
    cr_expect_str_eq(str_at(condition(n, "Ready"), "lastTransitionTime"), "2026-01-01T00:02:00Z");
    cJSON_Delete(n);
}

/* ------------------------------------------------------------ pods */

Test(kwok_kubelet, bound_pod_runs)
{
    put_node("n1", "kwok://n1", true, "[]");
    put_pod("web", "n1", "", "Pending");
    start(false);
    cr_assert(eventually(pod_running, "web"));
    cJSON *p = get_obj(PODS, "web");
    static const char *const types[] = {"Initialized", "Ready", "ContainersReady", "PodScheduled"};
    for (size_t i = 0; i < 4; i++)
        cr_expect_str_eq(str_at(condition(p, types[i]), "status"), "True", "%s", types[i]);
    cr_expect_str_eq(str_at(condition(p, "PodScheduled"), "lastTransitionTime"),
                     "2025-12-31T23:00:00Z");
    cr_expect_str_eq(str_at(condition(p, "Ready"), "lastTransitionTime"), "2026-01-01T00:00:00Z");
    cr_expect_str_eq(str_at(p, "status.startTime"), "2026-01-01T00:00:00Z");
    cr_expect_str_eq(str_at(p, "status.hostIP"), "10.1.2.3", "the node's InternalIP");
    const char *ip = str_at(p, "status.podIP");
    cr_assert_not_null(ip);
    cr_expect(strncmp(ip, "10.", 3) == 0 && strcmp(ip, "10.1.2.3") != 0, "%s", ip);
    const cJSON *st = cJSON_GetObjectItem(p, "status");
    const cJSON *cs = cJSON_GetObjectItem(st, "containerStatuses");
    cr_assert_eq(cJSON_GetArraySize(cs), 2);
    cr_expect_str_eq(str_at(cJSON_GetArrayItem(cs, 1), "name"), "log");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(cs, 0), "ready")));
    cr_expect_not_null(str_at(cJSON_GetArrayItem(cs, 0), "state.running.startedAt"));
    const cJSON *ics = cJSON_GetObjectItem(st, "initContainerStatuses");
    cr_assert_eq(cJSON_GetArraySize(ics), 2);
    cr_expect_str_eq(str_at(cJSON_GetArrayItem(ics, 0), "state.terminated.reason"), "Completed");
    cr_expect_not_null(str_at(cJSON_GetArrayItem(ics, 1), "state.running.startedAt"),
                       "a sidecar runs");
    cJSON_Delete(p);
    fake_logged patch;
    cr_assert(fake_api_find(fa, "PATCH", PODS "/web/status", 0, &patch));
    cr_expect(strstr(patch.content_type, "strategic-merge-patch") != NULL, "%s",
              patch.content_type);
    cr_expect(strstr(patch.body, "\"uid\":\"uid-web\"") != NULL, "a uid precondition: %s",
              patch.body);
}

Test(kwok_kubelet, pods_elsewhere_are_left_alone)
{
    put_node("n1", "kwok://n1", true, "[]");
    put_node("real", "aws:///zone-a/i-0abc", true, "[]");
    put_pod("pending", "", "", "Pending");
    put_pod("on-real", "real", "", "Pending");
    put_pod("done", "n1", "", "Succeeded");
    put_pod("marker", "n1", "", "Pending");
    start(false);
    cr_assert(eventually(pod_running, "marker"));
    sleep_ms(200);
    cr_expect_eq(fake_api_count(fa, "PATCH", PODS "/pending"), 0);
    cr_expect_eq(fake_api_count(fa, "PATCH", PODS "/on-real"), 0);
    cr_expect_eq(fake_api_count(fa, "PATCH", PODS "/done"), 0, "a finished pod stays finished");
    cr_expect_not(pod_running("done"));
}

Test(kwok_kubelet, pod_seen_before_its_node_runs_once_the_node_comes)
{
    start(false);
    put_pod("early", "late", "", "Pending");
    cr_assert(eventually(in_pod_cache, "app/early"));
    put_node("late", "kwok://late", true, "[]");
    cr_assert(eventually(pod_running, "early"));
}

Test(kwok_kubelet, terminating_pod_is_finished_after_its_grace)
{
    put_node("n1", "kwok://n1", true, "[]");
    put_pod("leaving", "n1",
            ",\"deletionTimestamp\":\"2026-01-01T00:00:30Z\",\"deletionGracePeriodSeconds\":30",
            "Pending");
    put_pod("marker", "n1", "", "Pending");
    start(false);
    cr_assert(eventually(pod_running, "marker"));
    sleep_ms(200);
    cr_expect_not(pod_gone("leaving"), "its grace period runs until 00:00:30");
    cr_expect_not(pod_running("leaving"), "a terminating pod is not started");
    advance(31);
    cr_assert(eventually(pod_gone, "leaving"));
    fake_logged del;
    cr_assert(fake_api_find(fa, "DELETE", PODS "/leaving", 0, &del));
    cr_expect(strstr(del.body, "\"gracePeriodSeconds\":0") != NULL, "%s", del.body);
    cr_expect(strstr(del.body, "uid-leaving") != NULL, "a uid precondition: %s", del.body);
    cr_expect(eventually(stat_is, "pods_finished=1"));
}

Test(kwok_kubelet, finish_immediately_does_not_wait)
{
    put_node("n1", "kwok://n1", true, "[]");
    put_pod("leaving", "n1", ",\"deletionTimestamp\":\"2026-01-01T00:10:00Z\"", "Pending");
    start(true);
    cr_assert(eventually(pod_gone, "leaving"));
}

static bool all_running(const char *count)
{
    long n = strtol(count, NULL, 10);
    char name[32];
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "p%ld", i);
        if (!pod_running(name)) return false;
    }
    return true;
}

Test(kwok_kubelet, many_pods_all_run)
{
    put_node("n1", "kwok://n1", true, "[]");
    put_node("n2", "kwok://n2", true, "[]");
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        put_pod(name, i % 2 ? "n1" : "n2", "", "Pending");
    }
    start(false);
    cr_assert(eventually(all_running, "200"));
    cr_expect(eventually(stat_is, "pods_running=200"));
}

Test(kwok_kubelet, handlers_must_come_before_the_informers_start)
{
    cr_assert_eq(kp_informer_start(nodes), 0);
    kp_kwok_kubelet *k = NULL;
    cr_expect_eq(kp_kwok_kubelet_new(client, nodes, pods, NULL, &k), KP_EINVALID);
    cr_expect_null(k);
}

Test(kwok_kubelet, free_without_start)
{
    kp_kwok_kubelet *k = NULL;
    cr_assert_eq(kp_kwok_kubelet_new(client, nodes, pods, NULL, &k), 0);
    cr_expect_null(kp_kwok_kubelet_free(k));
    cr_expect_null(kp_kwok_kubelet_free(NULL));
}
