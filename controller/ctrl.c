/* Reconcilers, loops and helpers shared by the controllers (see ctrl.h). */
#include "controller/ctrl.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/reconcile_metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kp_ctrl_opts_init(kp_ctrl_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->instance_types = "builtin";
    o->cluster_name = "kwok";
    o->batch_idle_ms = 1000;
    o->batch_max_ms = 10000;
    o->disruption_poll_ms = 10000;
    o->consolidation_split_max = 3; /* as simulate plans */
    o->caps = (kp_caps)KP_CAPS_INIT;
    o->registration_ttl_ms = 15 * 60 * 1000;
    o->consolidation_validation_ms = 15000;
    o->gc_interval_ms = 120000;
    o->vm_memory_overhead_percent = 0.075;
    o->metrics_port = 8080;
    o->health_port = 8081;
    o->bind_address = "0.0.0.0";
    o->leader_elect = true;
    o->lease_namespace = "kube-system";
    o->lease_name = "karpenter-leader-election";
    o->kube_qps = 200;
    o->kube_burst = 300;
    o->cpu_requests = 1000;
    o->reserved_capacity = true;
    o->node_repair_threshold = "20%";
    o->preference_policy = "Respect";
    o->min_values_policy = "Strict";
    o->ignore_dra_requests = true;
    o->ami_refresh_ms = 60000;
    o->subnet_refresh_ms = 60000;
    o->log_level = "info";
    o->log_output_paths = "stdout";
    o->log_error_output_paths = "stderr";
}

bool kp_ctrl_stopping(const kp_ctrl *c)
{
    return c->stop && kp_kube_cancel_fired(c->stop);
}

void kp_ctrl_free_json(void *obj)
{
    cJSON_Delete(obj);
}

enum kp_kube_res kp_ctrl_kind_res(enum kp_ctrl_kind kind)
{
    static const enum kp_kube_res res[KP_CK_COUNT] = {
        [KP_CK_POD] = KP_RES_POD,
        [KP_CK_NODE] = KP_RES_NODE,
        [KP_CK_NODECLAIM] = KP_RES_NODECLAIM,
        [KP_CK_NODEPOOL] = KP_RES_NODEPOOL,
        [KP_CK_DAEMONSET] = KP_RES_DAEMONSET,
        [KP_CK_PDB] = KP_RES_PDB,
        [KP_CK_PVC] = KP_RES_PVC,
        [KP_CK_PV] = KP_RES_PV,
        [KP_CK_STORAGECLASS] = KP_RES_STORAGECLASS,
        [KP_CK_NAMESPACE] = KP_RES_NAMESPACE,
        [KP_CK_VOLUMEATTACHMENT] = KP_RES_VOLUMEATTACHMENT,
        [KP_CK_CSINODE] = KP_RES_CSINODE,
        [KP_CK_NODECLASS] = KP_RES_COUNT, /* the provider's node class: node_class_informer() in runtime.c */
        [KP_CK_CAPACITYBUFFER] = KP_RES_CAPACITYBUFFER, /* with its gate only */
        [KP_CK_NODEOVERLAY] = KP_RES_NODEOVERLAY, /* with the NodeOverlay gate only */
    };
    return (unsigned)kind < KP_CK_COUNT ? res[kind] : KP_RES_COUNT;
}

cJSON *kp_ctrl_get(const kp_ctrl *c, enum kp_ctrl_kind kind, const char *key)
{
    kp_informer *inf = c->informers[kind];
    return inf ? kp_informer_get(inf, key) : NULL;
}

void kp_ctrl_log_error(const char *logger, const char *what, const char *key, int err)
{
    KP_LOG(KP_LOG_ERROR, logger, what, "key", key ? key : "", "error", kp_error_last(), "code",
           kp_error_name(err));
}

/* ------------------------------------------------------------ reconcilers */

struct kp_reconciler {
    kp_ctrl *c;
    const char *name;
    kp_workqueue *queue;
    kp_reconcile_fn fn;
    void *state;
    pthread_t *threads;
    int n_threads;
    kp_reconcile_stats *stats; /* controller_runtime_* and workqueue_* */
};

static void reconcile_one(kp_reconciler *r, char *key)
{
    int64_t requeue_ms = 0;
    kp_error_clear();
    int slot = kp_reconcile_begin(r->stats);
    int err = r->fn(r->c, r->state, key, &requeue_ms);
    kp_reconcile_end(r->stats, slot,
                     err < 0 ? KP_RECONCILE_ERROR : requeue_ms > 0 ? KP_RECONCILE_REQUEUE_AFTER : KP_RECONCILE_SUCCESS,
                     err < 0);
    if (err < 0) {
        kp_ctrl_log_error(r->name, "reconcile failed", key, err);
        kp_workqueue_add_rate_limited(r->queue, key);
    } else {
        kp_workqueue_forget(r->queue, key);
        if (requeue_ms > 0)
            kp_workqueue_add_after(r->queue, key, requeue_ms);
    }
    kp_workqueue_done(r->queue, key);
    free(key);
}

static void *reconcile_worker(void *arg)
{
    kp_reconciler *r = arg;
    for (;;) {
        char *key = NULL;
        int err = kp_workqueue_get(r->queue, -1, &key);
        if (err == KP_EGONE)
            break;
        if (err == 0)
            reconcile_one(r, key);
    }
    return NULL;
}

kp_reconciler *kp_reconciler_start(kp_ctrl *c, const char *name, kp_workqueue *queue, int workers,
                                   kp_reconcile_fn fn, void *state)
{
    kp_reconciler *r = kp_xcalloc(1, sizeof(*r));
    *r = (kp_reconciler){c, name, queue, fn, state, NULL, 0, NULL};
    r->stats = kp_reconcile_metrics_controller(c->m ? c->m->reconciles : NULL, name, queue, workers > 0 ? workers : 1);
    r->threads = kp_xcalloc((size_t)(workers > 0 ? workers : 1), sizeof(pthread_t));
    for (int i = 0; i < (workers > 0 ? workers : 1); i++) {
        if (pthread_create(&r->threads[i], NULL, reconcile_worker, r) != 0)
            break;
        r->n_threads++;
    }
    KP_LOG(KP_LOG_INFO, name, "starting workers");
    return r;
}

kp_reconciler *kp_reconciler_stop(kp_reconciler *r)
{
    if (!r)
        return NULL;
    kp_workqueue_shutdown(r->queue);
    for (int i = 0; i < r->n_threads; i++)
        pthread_join(r->threads[i], NULL);
    kp_reconcile_stats_detach(r->stats);
    free(r->threads);
    free(r);
    return NULL;
}

/* ------------------------------------------------------------------ loops */

struct kp_loop {
    kp_ctrl *c;
    const char *name;
    int64_t period_ms;
    kp_loop_fn fn;
    void *state;
    kp_kube_cancel *wake; /* fired to run early or to stop */
    pthread_mutex_t mu;
    bool stopping;
    pthread_t thread;
    kp_reconcile_stats *stats; /* a pass counts as one reconcile */
};

static bool loop_stopping(kp_loop *l)
{
    pthread_mutex_lock(&l->mu);
    bool s = l->stopping;
    pthread_mutex_unlock(&l->mu);
    return s || kp_ctrl_stopping(l->c);
}

static void *loop_main(void *arg)
{
    kp_loop *l = arg;
    while (!loop_stopping(l)) {
        kp_error_clear();
        int slot = kp_reconcile_begin(l->stats);
        int err = l->fn(l->c, l->state);
        kp_reconcile_end(l->stats, slot, err < 0 ? KP_RECONCILE_ERROR : KP_RECONCILE_REQUEUE_AFTER, false);
        if (err < 0)
            kp_ctrl_log_error(l->name, "pass failed", NULL, err);
        if (loop_stopping(l))
            break;
        kp_kube_cancel_sleep(l->wake, l->period_ms);
        kp_kube_cancel_reset(l->wake);
    }
    return NULL;
}

kp_loop *kp_loop_start(kp_ctrl *c, const char *name, int64_t period_ms, kp_loop_fn fn, void *state)
{
    kp_loop *l = kp_xcalloc(1, sizeof(*l));
    l->c = c, l->name = name, l->period_ms = period_ms, l->fn = fn, l->state = state;
    l->wake = kp_kube_cancel_new();
    l->stats = kp_reconcile_metrics_controller(c->m ? c->m->reconciles : NULL, name, NULL, 1);
    pthread_mutex_init(&l->mu, NULL);
    if (pthread_create(&l->thread, NULL, loop_main, l) != 0) {
        kp_kube_cancel_free(l->wake);
        pthread_mutex_destroy(&l->mu);
        free(l);
        return NULL;
    }
    return l;
}

void kp_loop_wake(kp_loop *l)
{
    if (l)
        kp_kube_cancel_fire(l->wake);
}

kp_loop *kp_loop_stop(kp_loop *l)
{
    if (!l)
        return NULL;
    pthread_mutex_lock(&l->mu);
    l->stopping = true;
    pthread_mutex_unlock(&l->mu);
    kp_kube_cancel_fire(l->wake);
    pthread_join(l->thread, NULL);
    kp_kube_cancel_free(l->wake);
    pthread_mutex_destroy(&l->mu);
    free(l);
    return NULL;
}
