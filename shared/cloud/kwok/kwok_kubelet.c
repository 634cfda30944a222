/*
 * The kwok kubelet's frame (see kwok_kubelet.h): informer handlers that feed
 * two work queues, the worker threads, the set of kwok nodes it knows and
 * their per-node timers. The reconcilers are in kwok_node.c and kwok_pod.c.
 */
#include "cloud/kwok/kwok_internal.h"

#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A kubelet retries failed calls quickly; client-go's 1000 s cap is for controllers. */
static const kp_workqueue_opts retry_opts = {50, 30000};

/* ------------------------------------------------------------ node set */

bool kwok_kubelet_know(kp_kwok_kubelet *k, const char *name, const char *ip)
{
    pthread_mutex_lock(&k->lock);
    kwok_node_state *st = kp_strmap_get(&k->node_state, name);
    bool fresh = st == NULL;
    if (fresh) kp_strmap_put(&k->node_state, name, st = kp_xcalloc(1, sizeof(*st)));
    if (ip) snprintf(st->ip, sizeof(st->ip), "%s", ip);
    pthread_mutex_unlock(&k->lock);
    return fresh;
}

bool kwok_kubelet_forget(kp_kwok_kubelet *k, const char *name)
{
    pthread_mutex_lock(&k->lock);
    kwok_node_state *st = kp_strmap_remove(&k->node_state, name);
    pthread_mutex_unlock(&k->lock);
    free(st);
    return st != NULL;
}

bool kwok_kubelet_has_node(kp_kwok_kubelet *k, const char *name)
{
    pthread_mutex_lock(&k->lock);
    bool has = kp_strmap_has(&k->node_state, name);
    pthread_mutex_unlock(&k->lock);
    return has;
}

bool kwok_kubelet_node_state(kp_kwok_kubelet *k, const char *name, kwok_node_state *out)
{
    pthread_mutex_lock(&k->lock);
    const kwok_node_state *st = kp_strmap_get(&k->node_state, name);
    if (st) *out = *st;
    pthread_mutex_unlock(&k->lock);
    return st != NULL;
}

void kwok_kubelet_note(kp_kwok_kubelet *k, const char *name, int64_t status_ns, int64_t lease_ns,
                       const char *ip)
{
    pthread_mutex_lock(&k->lock);
    kwok_node_state *st = kp_strmap_get(&k->node_state, name);
    if (st && status_ns) st->status_ns = status_ns;
    if (st && lease_ns) st->lease_ns = lease_ns;
    if (st && ip) snprintf(st->ip, sizeof(st->ip), "%s", ip);
    pthread_mutex_unlock(&k->lock);
}

/* ------------------------------------------------------------ handlers */

static void enqueue_pod(kp_kwok_kubelet *k, const cJSON *pod)
{
    const char *node = kp_obj_str(pod, "spec.nodeName");
    char key[512];
    if (node && *node && kwok_kubelet_has_node(k, node) &&
        kp_kube_object_key(pod, key, sizeof(key)) == 0)
        kp_workqueue_add(k->pod_queue, key);
}

typedef struct pods_of {
    kp_kwok_kubelet *k;
    const char *node; /* NULL: pods of any kwok node */
} pods_of;

static void visit_pod(void *ctx, const char *key, const cJSON *pod)
{
    pods_of *p = ctx;
    const char *node = kp_obj_str(pod, "spec.nodeName");
    (void)key;
    if (!p->node || (node && strcmp(node, p->node) == 0)) enqueue_pod(p->k, pod);
}

/* A pod the pod informer delivered before we knew its node was dropped:
 * look again once the node is known. */
static void enqueue_pods_of(kp_kwok_kubelet *k, const char *node)
{
    pods_of p = {k, node};
    kp_informer_foreach(k->pods, visit_pod, &p);
}

static void on_node(kp_kwok_kubelet *k, const cJSON *node)
{
    const char *name = kp_kube_meta(node, "name");
    if (!name || !kwok_is_kwok_node(node)) return;
    bool fresh = kwok_kubelet_know(k, name, kwok_node_internal_ip(node));
    kp_workqueue_add(k->node_queue, name);
    if (fresh) enqueue_pods_of(k, name);
}

static void node_added(void *ctx, const cJSON *obj)
{
    on_node(ctx, obj);
}

static void node_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    (void)old_obj;
    on_node(ctx, new_obj);
}

/* The node reconciler finds it gone and cleans up after it. */
static void node_deleted(void *ctx, const cJSON *obj)
{
    kp_kwok_kubelet *k = ctx;
    const char *name = kp_kube_meta(obj, "name");
    if (name && kwok_kubelet_has_node(k, name)) kp_workqueue_add(k->node_queue, name);
}

static void pod_added(void *ctx, const cJSON *obj)
{
    enqueue_pod(ctx, obj);
}

static void pod_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    (void)old_obj;
    enqueue_pod(ctx, new_obj);
}

/* ------------------------------------------------------------ workers */

static void work_on(kwok_worker *w, char *key)
{
    int64_t requeue_ms = 0;
    kp_error_clear();
    int err = w->fn(w->k, key, &requeue_ms);
    if (err < 0) {
        atomic_fetch_add(&w->k->failures, 1);
        KP_LOG(KP_LOG_DEBUG, "kwok-kubelet", "retrying", "key", key, "error", kp_error_last());
        kp_workqueue_add_rate_limited(w->queue, key);
    } else {
        kp_workqueue_forget(w->queue, key);
        if (requeue_ms > 0) kp_workqueue_add_after(w->queue, key, requeue_ms);
    }
}

static void *worker_main(void *arg)
{
    kwok_worker *w = arg;
    for (;;) {
        char *key = NULL;
        int err = kp_workqueue_get(w->queue, -1, &key);
        if (err == KP_EGONE) break;
        if (err < 0) continue;
        if (!atomic_load(&w->k->stopping)) work_on(w, key);
        kp_workqueue_done(w->queue, key);
        free(key);
    }
    return NULL;
}

/* ------------------------------------------------------------ life cycle */

int kp_kwok_kubelet_new(kp_kube_client *client, kp_informer *nodes, kp_informer *pods,
                        const kp_kwok_kubelet_opts *opts, kp_kwok_kubelet **out)
{
    kp_kwok_kubelet *k = kp_xcalloc(1, sizeof(*k));
    kp_kwok_kubelet_opts defaults = KP_KWOK_KUBELET_OPTS_INIT;
    k->client = client, k->nodes = nodes, k->pods = pods;
    k->opts = opts ? *opts : defaults;
    k->clock = k->opts.clock ? k->opts.clock : kp_clock_system();
    k->node_queue = kp_workqueue_new(&retry_opts);
    k->pod_queue = kp_workqueue_new(&retry_opts);
    k->node_worker = (kwok_worker){k, k->node_queue, kwok_reconcile_node};
    k->pod_worker = (kwok_worker){k, k->pod_queue, kwok_reconcile_pod};
    pthread_mutex_init(&k->lock, NULL);
    kp_informer_handler nh = {node_added, node_updated, node_deleted, k};
    kp_informer_handler ph = {pod_added, pod_updated, NULL, k};
    int err = kp_informer_add_handler(nodes, &nh);
    if (err < 0) {
        kp_kwok_kubelet_free(k);
        return kp_error_wrap(err, "kwok kubelet: the node informer");
    }
    if ((err = kp_informer_add_handler(pods, &ph)) < 0) {
        /* The node informer holds our handler and cannot drop it: the kubelet
         * stays allocated, inert (its queues are shut), for that handler. */
        kp_workqueue_shutdown(k->node_queue);
        kp_workqueue_shutdown(k->pod_queue);
        return kp_error_wrap(err, "kwok kubelet: the pod informer");
    }
    *out = k;
    return 0;
}

int kp_kwok_kubelet_start(kp_kwok_kubelet *k)
{
    if (k->started) return kp_error_set(KP_EINVALID, "kwok kubelet: started already");
    k->started = true;
    int nn = k->opts.node_workers > 0 ? k->opts.node_workers : 1;
    int np = k->opts.pod_workers > 0 ? k->opts.pod_workers : 1;
    k->threads = kp_xcalloc((size_t)(nn + np), sizeof(pthread_t));
    for (int i = 0; i < nn + np; i++) {
        kwok_worker *w = i < nn ? &k->node_worker : &k->pod_worker;
        if (pthread_create(&k->threads[i], NULL, worker_main, w) != 0) {
            kp_kwok_kubelet_stop(k);
            return kp_error_set(KP_ERROR, "kwok kubelet: cannot start a worker thread");
        }
        k->n_threads++;
    }
    return 0;
}

void kp_kwok_kubelet_stop(kp_kwok_kubelet *k)
{
    if (!k || k->stopped) return;
    k->stopped = true;
    atomic_store(&k->stopping, true);
    kp_workqueue_shutdown(k->node_queue);
    kp_workqueue_shutdown(k->pod_queue);
    for (int i = 0; i < k->n_threads; i++)
        pthread_join(k->threads[i], NULL);
    k->n_threads = 0;
}

kp_kwok_kubelet *kp_kwok_kubelet_free(kp_kwok_kubelet *k)
{
    if (!k) return NULL;
    kp_kwok_kubelet_stop(k);
    kp_workqueue_free(k->node_queue);
    kp_workqueue_free(k->pod_queue);
    kp_strmap_clear(&k->node_state, free);
    pthread_mutex_destroy(&k->lock);
    free(k->threads);
    free(k);
    return NULL;
}

static void visit_node(void *ctx, const char *key, const cJSON *node)
{
    kp_kwok_kubelet *k = ctx;
    if (kwok_is_kwok_node(node)) {
        kwok_kubelet_know(k, key, kwok_node_internal_ip(node));
        kp_workqueue_add(k->node_queue, key);
    }
}

void kp_kwok_kubelet_resync(kp_kwok_kubelet *k)
{
    kp_informer_foreach(k->nodes, visit_node, k);
    enqueue_pods_of(k, NULL);
}

void kp_kwok_kubelet_get_stats(kp_kwok_kubelet *k, kp_kwok_kubelet_stats *out)
{
    out->node_status = atomic_load(&k->node_status);
    out->leases = atomic_load(&k->leases);
    out->taints_removed = atomic_load(&k->taints_removed);
    out->pods_running = atomic_load(&k->pods_running);
    out->pods_finished = atomic_load(&k->pods_finished);
    out->failures = atomic_load(&k->failures);
}
