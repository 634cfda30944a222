/* Karpenter's pod metrics (see pod_metrics.h). */
#include "controller/pod_metrics.h"
#include "base/clock.h"
#include "base/xalloc.h"
#include "kube/objutil.h"
#include "kube/strmap.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What is remembered of one pod between events. */
typedef struct pod_entry {
    int64_t ack_ns;     /* the provisioner first saw it */
    int64_t decided_ns; /* ... first decided about it */
    int64_t placed_ns;  /* ... first found it a place */
    bool seen_pending;  /* seen Pending and not yet ready (nor finished) */
    bool seen_unbound;  /* seen Pending and not yet bound and running */
} pod_entry;

struct kp_pod_metrics {
    kp_ctrl_metrics *m;
    pthread_mutex_t mu;
    kp_strmap pods; /* "namespace/name" -> pod_entry* */
};

kp_pod_metrics *kp_pod_metrics_new(kp_ctrl_metrics *m)
{
    kp_pod_metrics *pm = kp_xcalloc(1, sizeof(*pm));
    pm->m = m;
    pthread_mutex_init(&pm->mu, NULL);
    return pm;
}

kp_pod_metrics *kp_pod_metrics_free(kp_pod_metrics *pm)
{
    if (!pm)
        return NULL;
    kp_strmap_clear(&pm->pods, free);
    pthread_mutex_destroy(&pm->mu);
    free(pm);
    return NULL;
}

/* The entry of `key`, created when `create` and the cap allows. Under mu. */
static pod_entry *entry(kp_pod_metrics *pm, const char *key, bool create)
{
    pod_entry *e = kp_strmap_get(&pm->pods, key);
    if (!e && create && pm->pods.count < KP_POD_METRICS_MAX) {
        e = kp_xcalloc(1, sizeof(*e));
        kp_strmap_put(&pm->pods, key, e);
    }
    return e;
}

static double seconds(int64_t ns)
{
    return (double)ns / 1e9;
}

void kp_pod_metrics_seen(kp_pod_metrics *pm, const char *key, int64_t now_ns)
{
    if (!pm || !key)
        return;
    pthread_mutex_lock(&pm->mu);
    pod_entry *e = entry(pm, key, true);
    if (e && !e->ack_ns)
        e->ack_ns = now_ns;
    pthread_mutex_unlock(&pm->mu);
}

void kp_pod_metrics_decided(kp_pod_metrics *pm, const char *key, bool placed, int64_t now_ns)
{
    if (!pm || !key)
        return;
    double decision = -1;
    pthread_mutex_lock(&pm->mu);
    pod_entry *e = entry(pm, key, true);
    if (e && !e->decided_ns) {
        e->decided_ns = now_ns;
        if (e->ack_ns)
            decision = seconds(now_ns - e->ack_ns);
    }
    if (e && placed && !e->placed_ns)
        e->placed_ns = now_ns;
    pthread_mutex_unlock(&pm->mu);
    if (decision >= 0)
        kp_ctrl_observe(pm->m->pods_scheduling_decision_duration, NULL, decision);
}

/* ------------------------------------------------------------ the pod */

typedef struct pod_facts {
    char key[512];
    const char *phase;
    bool pending, terminal, scheduled, ready;
    int64_t created_ns, scheduled_at, ready_at; /* lastTransitionTime of PodScheduled / Ready */
} pod_facts;

static bool facts_of(const cJSON *pod, pod_facts *f)
{
    const char *ns = kp_obj_str(pod, "metadata.namespace"), *name = kp_obj_str(pod, "metadata.name");
    if (!ns || !name)
        return false;
    memset(f, 0, sizeof(*f));
    snprintf(f->key, sizeof(f->key), "%s/%s", ns, name);
    f->phase = kp_obj_str(pod, "status.phase");
    f->pending = f->phase && !strcmp(f->phase, "Pending");
    f->terminal = f->phase && (!strcmp(f->phase, "Succeeded") || !strcmp(f->phase, "Failed"));
    f->scheduled = kp_obj_condition_is_true(pod, "PodScheduled");
    f->ready = kp_obj_condition_is_true(pod, "Ready");
    f->scheduled_at = kp_obj_condition_since(pod, "PodScheduled");
    f->ready_at = kp_obj_condition_since(pod, "Ready");
    const char *created = kp_obj_str(pod, "metadata.creationTimestamp");
    if (!created || kp_time_parse_rfc3339(created, &f->created_ns) < 0)
        f->created_ns = 0;
    return true;
}

/* What the change means; the observations to make after the lock. */
typedef struct observed {
    double bound, prov_bound, startup, prov_startup; /* < 0: none */
} observed;

static void transition(pod_entry *e, const pod_facts *f, observed *o)
{
    if (f->pending) {
        e->seen_pending = e->seen_unbound = true;
        return;
    }
    if (e->seen_unbound && f->scheduled && f->scheduled_at) {
        o->bound = seconds(f->scheduled_at - f->created_ns);
        if (e->placed_ns)
            o->prov_bound = seconds(f->scheduled_at - e->placed_ns);
        e->seen_unbound = false;
    }
    if (e->seen_pending && f->ready && f->ready_at) {
        o->startup = seconds(f->ready_at - f->created_ns);
        if (e->placed_ns)
            o->prov_startup = seconds(f->ready_at - e->placed_ns);
        e->seen_pending = false;
    } else if (e->seen_pending && f->terminal) {
        e->seen_pending = false;
    }
}

void kp_pod_metrics_update(kp_pod_metrics *pm, const cJSON *pod)
{
    pod_facts f;
    if (!pm || !kp_ctrl_metrics_leading(pm->m) || !facts_of(pod, &f))
        return;
    observed o = {-1, -1, -1, -1};
    pthread_mutex_lock(&pm->mu);
    pod_entry *e = entry(pm, f.key, f.pending);
    if (e) {
        transition(e, &f, &o);
        /* Started or finished, and no longer waited on: forget it. */
        if (!f.pending && !e->seen_pending && !e->seen_unbound)
            free(kp_strmap_remove(&pm->pods, f.key));
    }
    pthread_mutex_unlock(&pm->mu);
    kp_ctrl_metrics *m = pm->m;
    if (o.bound >= 0)
        kp_ctrl_observe(m->pods_bound_duration, NULL, o.bound);
    if (o.prov_bound >= 0)
        kp_ctrl_observe(m->pods_prov_bound_duration, NULL, o.prov_bound);
    if (o.startup >= 0)
        kp_ctrl_observe(m->pods_startup_duration, NULL, o.startup);
    if (o.prov_startup >= 0)
        kp_ctrl_observe(m->pods_prov_startup_duration, NULL, o.prov_startup);
}

void kp_pod_metrics_delete(kp_pod_metrics *pm, const cJSON *pod)
{
    pod_facts f;
    if (!pm || !facts_of(pod, &f))
        return;
    pthread_mutex_lock(&pm->mu);
    free(kp_strmap_remove(&pm->pods, f.key));
    pthread_mutex_unlock(&pm->mu);
}

/* ------------------------------------------------------------- the pass */

typedef struct pass {
    kp_pod_metrics *pm;
    kp_pod_node_lookup lookup;
    void *ctx;
    int64_t now;
} pass;

/* Karpenter's owner label: a self link built from the first owner reference. */
static void owner_link(const cJSON *pod, const char *ns, char *buf, size_t size)
{
    const cJSON *ref = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "ownerReferences"), 0);
    buf[0] = '\0';
    const char *api = kp_obj_str(ref, "apiVersion"), *kind = kp_obj_str(ref, "kind"), *name = kp_obj_str(ref, "name");
    if (!api || !kind || !name)
        return;
    char lower[128];
    snprintf(lower, sizeof(lower), "%s", kind);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    snprintf(buf, size, "/apis/%s/namespaces/%s/%ss/%s", api, ns, lower, name);
}

static void state(pass *p, const cJSON *pod, const pod_facts *f)
{
    static const kp_pod_node_info none = {"", "", "", "", ""};
    const char *ns = kp_obj_str(pod, "metadata.namespace"), *name = kp_obj_str(pod, "metadata.name");
    const char *node = kp_obj_str(pod, "spec.nodeName");
    const kp_pod_node_info *n = node && *node ? p->lookup(p->ctx, node) : NULL;
    if (!n)
        n = &none;
    char owner[768];
    owner_link(pod, ns, owner, sizeof(owner));
    const char *labels[] = {name,
                            ns,
                            owner,
                            node ? node : "",
                            node && *node ? "true" : "false",
                            n->nodepool,
                            n->zone,
                            n->arch,
                            n->capacity_type,
                            n->instance_type,
                            f->phase ? f->phase : "",
                            f->ready ? "true" : "false",
                            *n->nodepool ? "true" : "false"};
    kp_ctrl_set(p->pm->m->pods_state, labels, 1);
}

/* The waiting gauges of one pod. Under mu. */
static void waiting(pass *p, const pod_facts *f, const char *const *nn)
{
    kp_ctrl_metrics *m = p->pm->m;
    const pod_entry *e = kp_strmap_get(&p->pm->pods, f->key);
    bool unstarted = f->pending || (e && e->seen_pending && !f->ready && !f->terminal);
    if (unstarted && f->created_ns)
        kp_ctrl_set(m->pods_unstarted_time, nn, seconds(p->now - f->created_ns));
    if (unstarted && e && e->placed_ns)
        kp_ctrl_set(m->pods_prov_unstarted_time, nn, seconds(p->now - e->placed_ns));
    bool unbound = f->pending && !f->scheduled;
    if (unbound && f->created_ns)
        kp_ctrl_set(m->pods_unbound_time, nn, seconds(p->now - f->created_ns));
    if (unbound && e && e->placed_ns)
        kp_ctrl_set(m->pods_prov_unbound_time, nn, seconds(p->now - e->placed_ns));
    if (e && e->ack_ns && !e->decided_ns && !f->scheduled)
        kp_ctrl_set(m->pods_prov_undecided_time, nn, seconds(p->now - e->ack_ns));
}

static void visit(void *ctx, const char *key, const cJSON *pod)
{
    pass *p = ctx;
    pod_facts f;
    (void)key;
    if (!facts_of(pod, &f))
        return;
    state(p, pod, &f);
    const char *nn[] = {kp_obj_str(pod, "metadata.name"), kp_obj_str(pod, "metadata.namespace")};
    pthread_mutex_lock(&p->pm->mu);
    /* Pending when this replica began to lead: waited on from now, as from
     * an event. */
    pod_entry *e = f.pending ? entry(p->pm, f.key, true) : NULL;
    if (e)
        e->seen_pending = e->seen_unbound = true;
    waiting(p, &f, nn);
    pthread_mutex_unlock(&p->pm->mu);
}

void kp_pod_metrics_pass(kp_pod_metrics *pm, kp_informer *pods, kp_pod_node_lookup lookup, void *ctx, int64_t now_ns)
{
    if (!pm || !pods)
        return;
    kp_ctrl_metrics *m = pm->m;
    kp_metric *gauges[] = {m->pods_state,          m->pods_unstarted_time,     m->pods_prov_unstarted_time,
                           m->pods_unbound_time,   m->pods_prov_unbound_time,  m->pods_prov_undecided_time};
    for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
        kp_metric_mark(gauges[i]);
    pass p = {pm, lookup, ctx, now_ns};
    kp_informer_foreach(pods, visit, &p);
    for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
        kp_metric_sweep(gauges[i]);
}
