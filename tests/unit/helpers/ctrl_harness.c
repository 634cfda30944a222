/* The controllers' test harness (see ctrl_harness.h). */
#include "helpers/ctrl_harness.h"
#include "base/error.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/nodepool_ctrl.h"
#include "kube/ops.h"
#include "kube/resources.h"
#include "helpers/assert.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ fake cloud */

static const char *fc_name(const kp_cloud_provider *cp)
{
    (void)cp;
    return "fake";
}

static bool exists(const fake_cloud *f, const char *pid)
{
    for (int i = 0; i < f->n_instances; i++)
        if (pid && !strcmp(f->instances[i], pid))
            return true;
    return false;
}

static int fc_create(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *a, kp_cloud_instance *out)
{
    fake_cloud *f = (fake_cloud *)cp;
    f->creates++;
    if (f->create_err)
        return kp_error_set(f->create_err, "fake: create forced to fail");
    memset(out, 0, sizeof(*out));
    out->provider_id = kp_arena_printf(a, "fake://%s", claim->meta.name);
    /* One provider label, as a real instance carries its type. */
    out->labels.items = kp_arena_alloc(a, sizeof(kp_label));
    out->labels.items[0] = (kp_label){"node.kubernetes.io/instance-type", "fake.large"};
    out->labels.count = 1;
    if (f->n_instances < 16)
        snprintf(f->instances[f->n_instances++], sizeof(f->instances[0]), "%s", out->provider_id);
    return 0;
}

static int fc_delete(kp_cloud_provider *cp, const kp_nodeclaim *claim)
{
    fake_cloud *f = (fake_cloud *)cp;
    f->deletes++;
    snprintf(f->last_deleted, sizeof(f->last_deleted), "%s", claim->provider_id ? claim->provider_id : "");
    if (f->delete_err)
        return kp_error_set(f->delete_err, "fake: delete forced to fail");
    for (int i = 0; i < f->n_instances; i++)
        if (claim->provider_id && !strcmp(f->instances[i], claim->provider_id)) {
            memmove(f->instances[i], f->instances[i + 1], sizeof(f->instances[0]) * (size_t)(f->n_instances - i - 1));
            memmove(&f->created_ns[i], &f->created_ns[i + 1], sizeof(f->created_ns[0]) * (size_t)(f->n_instances - i - 1));
            f->n_instances--;
            return 0;
        }
    return kp_error_set(KP_ENOTFOUND, "fake: no instance %s", claim->provider_id ? claim->provider_id : "");
}

static int fc_get(kp_cloud_provider *cp, const char *pid, kp_arena *a, kp_cloud_instance *out)
{
    fake_cloud *f = (fake_cloud *)cp;
    f->gets++;
    (void)a;
    if (f->get_err)
        return kp_error_set(f->get_err, "fake: get forced to fail");
    if (!exists(f, pid))
        return kp_error_set(KP_ENOTFOUND, "fake: no instance %s", pid ? pid : "");
    memset(out, 0, sizeof(*out));
    out->provider_id = pid;
    return 0;
}

static int fc_list(kp_cloud_provider *cp, kp_arena *a, kp_cloud_instance **out, uint32_t *n)
{
    fake_cloud *f = (fake_cloud *)cp;
    f->lists++;
    if (f->list_err)
        return kp_error_set(f->list_err, "fake: list forced to fail");
    kp_cloud_instance *v = KP_ARENA_NEW(a, kp_cloud_instance, 16);
    for (int i = 0; i < f->n_instances; i++)
        v[i] = (kp_cloud_instance){.provider_id = kp_arena_strdup(a, f->instances[i]), .created_ns = f->created_ns[i]};
    *out = v, *n = (uint32_t)f->n_instances;
    return 0;
}

static int fc_types(kp_cloud_provider *cp, const kp_nodepool *np, const kp_catalog **out)
{
    fake_cloud *f = (fake_cloud *)cp;
    (void)np;
    if (f->types_err)
        return kp_error_set(f->types_err, "fake: instance types unavailable");
    if (!f->catalog && kp_catalog_builtin_aws(NULL, &f->catalog) < 0)
        return -1;
    *out = f->catalog;
    return 0;
}

static int fc_drift(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *a, const char **reason)
{
    fake_cloud *f = (fake_cloud *)cp;
    (void)claim, (void)a;
    f->drift_checks++;
    *reason = f->drift_reason;
    return 0;
}

static void fc_free(kp_cloud_provider *cp)
{
    (void)cp;
}

static const kp_repair_policy fake_policies[] = {
    {"Ready", "False", 10LL * 60 * KP_NS_PER_SEC},
    {"Ready", "Unknown", 10LL * 60 * KP_NS_PER_SEC},
};

static const kp_cloud_provider_ops fake_ops = {
    fc_name, fc_create, fc_delete, fc_get, fc_list, fc_types, fc_drift, fc_free,
    "karpenter.test", "FakeNodeClass", "fake", fake_policies, 2,
};

/* --------------------------------------------------------------- harness */

/* An informer is synced once it has listed; its watch request follows on its
 * own thread. Tests that count the requests a reconcile makes need every
 * watch open before they start counting, or a late watch counts as theirs. */
static void await_watches(harness *h)
{
    int n = 0;
    for (int k = 0; k < KP_CK_COUNT; k++)
        n += h->c.informers[k] != NULL;
    cr_assert(fake_api_wait_watches(h->fa, n, 10000), "the %d informers watch", n);
}

static void informers(harness *h)
{
    kp_ctrl *c = &h->c;
    for (int k = 0; k < KP_CK_COUNT; k++)
        if (kp_ctrl_kind_res(k) != KP_RES_COUNT)
            c->informers[k] = kp_informer_new(c->kube, kp_ctrl_kind_res(k), NULL);
    cr_assert_eq(kp_informer_add_index(c->informers[KP_CK_POD], KP_INDEX_POD_NODE, kp_informer_index_pod_node), 0);
    cr_assert_eq(kp_informer_add_index(c->informers[KP_CK_NODE], KP_INDEX_PROVIDER_ID, kp_index_node_provider_id), 0);
    cr_assert_eq(kp_informer_add_index(c->informers[KP_CK_NODE], KP_INDEX_NODEPOOL, kp_index_nodepool_label), 0);
    cr_assert_eq(
        kp_informer_add_index(c->informers[KP_CK_NODECLAIM], KP_INDEX_PROVIDER_ID, kp_index_claim_provider_id), 0);
    cr_assert_eq(kp_informer_add_index(c->informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, kp_index_nodepool_label), 0);
    for (int k = 0; k < KP_CK_COUNT; k++)
        if (c->informers[k]) {
            KP_ASSERT_OK(kp_informer_start(c->informers[k]));
            KP_ASSERT_OK(kp_informer_wait_synced(c->informers[k], 10000));
        }
    await_watches(h);
}

void harness_add_informer(harness *h, enum kp_ctrl_kind kind, enum kp_kube_res res)
{
    kp_ctrl *c = &h->c;
    cr_assert_null(c->informers[kind], "already watched");
    c->informers[kind] = kp_informer_new(c->kube, res, NULL);
    KP_ASSERT_OK(kp_informer_start(c->informers[kind]));
    KP_ASSERT_OK(kp_informer_wait_synced(c->informers[kind], 10000));
    await_watches(h);
}

void harness_start(harness *h, int64_t now_ns)
{
    memset(h, 0, sizeof(*h));
    h->fa = fake_api_start();
    cr_assert_not_null(h->fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(h->fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&h->c.kube, &cfg, &o), 0);
    kp_ctrl_opts_init(&h->c.opts);
    h->c.opts.cloud_provider = "fake";
    kp_fake_clock_init(&h->clock, now_ns);
    h->c.clock = &h->clock.base;
    h->c.stop = kp_kube_cancel_new();
    h->c.metrics = kp_metrics_new();
    cr_assert_eq(kp_ctrl_metrics_init(&h->m, h->c.metrics), 0);
    cr_assert_eq(kp_ctrl_metrics_init_status(&h->m, h->c.metrics, "karpenter.test", "FakeNodeClass"), 0);
    h->c.m = &h->m;
    h->cloud.base.ops = &fake_ops;
    h->c.cloud = &h->cloud.base;
    pthread_mutex_init(&h->c.foreign_mu, NULL);
    pthread_mutex_init(&h->c.launch_mu, NULL);
    pthread_mutex_init(&h->c.reghealth_mu, NULL);
    h->c.events = kp_eventq_start(h->c.kube, "karpenter", 256);
    informers(h);
}

void harness_stop(harness *h)
{
    kp_kube_cancel_fire(h->c.stop);
    for (int k = 0; k < KP_CK_COUNT; k++)
        if (h->c.informers[k])
            kp_informer_stop(h->c.informers[k]);
    for (int k = 0; k < KP_CK_COUNT; k++)
        h->c.informers[k] = kp_informer_free(h->c.informers[k]);
    h->c.events = kp_eventq_stop(h->c.events);
    h->c.kube = kp_kube_client_free(h->c.kube);
    kp_ctrl_metrics_fini(&h->m);
    h->c.metrics = kp_metrics_free(h->c.metrics);
    h->c.stop = kp_kube_cancel_free(h->c.stop);
    kp_strmap_clear(&h->c.foreign_seen, NULL);
    h->cloud.catalog = kp_catalog_free(h->cloud.catalog);
    pthread_mutex_destroy(&h->c.foreign_mu);
    kp_strmap_clear(&h->c.launched, kp_ctrl_free_json);
    pthread_mutex_destroy(&h->c.launch_mu);
    kp_strmap_clear(&h->c.reghealth, free);
    pthread_mutex_destroy(&h->c.reghealth_mu);
    fake_api_stop(h->fa);
}

bool harness_wait(harness *h, enum kp_ctrl_kind kind, const char *key, bool present)
{
    for (int i = 0; i < 400; i++) {
        cJSON *o = kp_ctrl_get(&h->c, kind, key);
        bool have = o != NULL;
        cJSON_Delete(o);
        if (have == present)
            return true;
        usleep(5000);
    }
    return false;
}

/* Wait until the cache holds `key` at resourceVersion `rv`. */
static bool wait_rv(harness *h, enum kp_ctrl_kind kind, const char *key, long rv)
{
    char want[32];
    snprintf(want, sizeof(want), "%ld", rv);
    for (int i = 0; i < 400; i++) {
        cJSON *o = kp_ctrl_get(&h->c, kind, key);
        const char *have = o ? kp_kube_meta(o, "resourceVersion") : NULL;
        bool same = have && !strcmp(have, want);
        cJSON_Delete(o);
        if (same)
            return true;
        usleep(5000);
    }
    return false;
}

void harness_put(harness *h, enum kp_ctrl_kind kind, const char *collection, const char *key, const char *json)
{
    long rv = fake_api_put(h->fa, collection, json);
    cr_assert_gt(rv, 0, "put %s", json);
    cr_assert(wait_rv(h, kind, key, rv), "the cache never saw %s at %ld", key, rv);
}

void harness_sync(harness *h, enum kp_ctrl_kind kind, const char *path, const char *key)
{
    cJSON *o = fake_api_get(h->fa, path);
    cr_assert_not_null(o, "%s is on the server", path);
    const char *rv = kp_kube_meta(o, "resourceVersion");
    long want = rv ? strtol(rv, NULL, 10) : 0;
    cJSON_Delete(o);
    cr_assert(wait_rv(h, kind, key, want), "the cache never saw %s at %ld", key, want);
}

cJSON *harness_get(harness *h, enum kp_ctrl_kind kind, const char *key)
{
    return kp_ctrl_get(&h->c, kind, key);
}

const char *harness_condition(harness *h, enum kp_ctrl_kind kind, const char *key, const char *type, char *buf,
                              size_t size)
{
    cJSON *o = harness_get(h, kind, key);
    const cJSON *c;
    const char *out = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
        if (t && !strcmp(t, type)) {
            snprintf(buf, size, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(c, "status")));
            out = buf;
        }
    }
    cJSON_Delete(o);
    return out;
}

int harness_events(harness *h, const char *reason, const char *message_part)
{
    /* Restart the writer so what was queued is on the server. */
    h->c.events = kp_eventq_stop(h->c.events);
    h->c.events = kp_eventq_start(h->c.kube, "karpenter", 256);
    cJSON *list = NULL;
    kp_kube_request req = {"GET", "/api/v1/events", NULL, NULL, NULL};
    KP_ASSERT_OK(kp_kube_do(h->c.kube, &req, &list));
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "items"))
    {
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(e, "reason"));
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
        if (r && !strcmp(r, reason) && (!message_part || (m && strstr(m, message_part))))
            n++;
    }
    cJSON_Delete(list);
    return n;
}

/* ------------------------------------------------------------ objects */

#define OR(x, d) ((x) ? (x) : (d))
#define DEFAULT_LABELS "\"karpenter.sh/nodepool\":\"default\""

/* ,"key":{"k1":"v1",...,more}: string members from NULL-terminated key,
 * value pairs (a NULL value leaves its key out), then `more` (members
 * starting with a comma, or NULL). */
static void map(kp_buf *b, const char *key, const char *more, ...)
{
    const char *sep = "";
    va_list ap;
    KP_ASSERT_OK(kp_buf_printf(b, ",\"%s\":{", key));
    va_start(ap, more);
    for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
        const char *v = va_arg(ap, const char *);
        if (!v)
            continue;
        KP_ASSERT_OK(kp_buf_printf(b, "%s\"%s\":\"%s\"", sep, k, v));
        sep = ",";
    }
    va_end(ap);
    if (more && *more)
        KP_ASSERT_OK(kp_buf_printf(b, "%s%s", sep, more + (more[0] == ',')));
    KP_ASSERT_OK(kp_buf_puts(b, "}"));
}

/* {"apiVersion":…,"kind":…,"metadata":{…} — the object left open. */
static void head(kp_buf *b, const char *api_version, const char *kind, const harness_obj *o, const char *uid_prefix,
                 bool labels)
{
    KP_ASSERT_OK(kp_buf_printf(b, "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\",\"uid\":\"%s%s\"",
                  api_version, kind, o->name, uid_prefix, o->name));
    if (labels)
        KP_ASSERT_OK(kp_buf_printf(b, ",\"labels\":{%s}", OR(o->labels, DEFAULT_LABELS)));
    KP_ASSERT_OK(kp_buf_printf(b, ",\"annotations\":{%s}%s}", OR(o->annotations, ""), OR(o->meta, "")));
}

static void put(harness *h, enum kp_ctrl_kind kind, const char *collection, const char *name, kp_buf *b)
{
    cr_assert_eq(kp_buf_puts(b, "}"), 0, "%s too large", name);
    harness_put(h, kind, collection, name, kp_buf_cstr(b));
    kp_buf_free(b);
}

void harness_put_claim(harness *h, harness_obj o)
{
    kp_buf b = KP_BUF_INIT(1 << 16);
    head(&b, "karpenter.sh/v1", "NodeClaim", &o, "c-", true);
    KP_ASSERT_OK(kp_buf_printf(&b, ",\"spec\":{\"nodeClassRef\":%s%s}", OR(o.class_ref, HARNESS_OUR_CLASS), OR(o.spec, "")));
    map(&b, "status", o.status, "providerID", o.provider_id, "nodeName", o.node_name, NULL);
    put(h, KP_CK_NODECLAIM, HARNESS_CLAIMS, o.name, &b);
}

void harness_put_node(harness *h, harness_obj o)
{
    kp_buf b = KP_BUF_INIT(1 << 16);
    head(&b, "v1", "Node", &o, "n-", true);
    map(&b, "spec", o.spec, "providerID", o.provider_id, NULL);
    map(&b, "status", o.status, NULL);
    put(h, KP_CK_NODE, HARNESS_NODES, o.name, &b);
}

void harness_put_pool(harness *h, harness_obj o)
{
    kp_buf b = KP_BUF_INIT(1 << 16);
    head(&b, "karpenter.sh/v1", "NodePool", &o, "np-", false);
    KP_ASSERT_OK(kp_buf_printf(&b, ",\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":%s%s}}%s}",
                  OR(o.class_ref, HARNESS_OUR_CLASS), OR(o.template, ""), OR(o.spec, "")));
    /* Ready unless the test says otherwise: the provisioner plans only for
     * Ready NodePools. */
    map(&b, "status", OR(o.status, HARNESS_POOL_READY), NULL);
    put(h, KP_CK_NODEPOOL, HARNESS_POOLS, o.name, &b);
}

cJSON *harness_stored(harness *h, const char *collection, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", collection, name);
    return fake_api_get(h->fa, path);
}

bool harness_exists(harness *h, const char *collection, const char *name)
{
    cJSON *o = harness_stored(h, collection, name);
    cJSON_Delete(o);
    return o != NULL;
}
