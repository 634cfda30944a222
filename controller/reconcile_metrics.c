/* controller-runtime's and client-go's figures (see reconcile_metrics.h). */
#include "controller/reconcile_metrics.h"
#include "base/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kp_reconcile_stats {
    kp_reconcile_metrics *rm;
    char name[64];
    kp_workqueue *queue;
    pthread_mutex_t mu;
    int workers;
    int64_t *started; /* per worker slot: monotonic ns of the reconcile under way, 0 when idle */
    kp_metric_series *results[4], *errors, *time, *active, *max, *retries;
    kp_metric_series *depth, *adds, *queued, *work, *unfinished, *longest; /* NULL without a queue */
    kp_reconcile_stats *next;
};

/* A scheduling simulation under way. */
typedef struct solving {
    char controller[64], id[40];
    int64_t since; /* monotonic ns; 0: the slot is free */
} solving;

struct kp_reconcile_metrics {
    kp_ctrl_metrics *m;
    kp_metrics *registry;
    pthread_mutex_t mu;
    kp_reconcile_stats *stats;
    solving solvers[KP_RECONCILE_SOLVERS];
    bool synced;
    int64_t unsynced_since; /* monotonic ns */
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *const result_names[4] = {"success", "error", "requeue", "requeue_after"};

/* --------------------------------------------------------- the queue side */

static void queue_added(void *ctx)
{
    kp_reconcile_stats *s = ctx;
    kp_counter_inc(s->adds);
    kp_gauge_add(s->depth, 1);
}

static void queue_taken(void *ctx, int64_t waited_ns)
{
    kp_reconcile_stats *s = ctx;
    kp_gauge_add(s->depth, -1);
    kp_histogram_observe(s->queued, (double)waited_ns / 1e9);
}

static void queue_series(kp_reconcile_stats *s)
{
    const kp_ctrl_metrics *m = s->rm->m;
    const char *const nc[] = {s->name, s->name}, *const ncp[] = {s->name, s->name, ""};
    s->depth = kp_metric_with(m->wq_depth, ncp);
    s->adds = kp_metric_with(m->wq_adds, nc);
    s->queued = kp_metric_with(m->wq_queue_duration, nc);
    s->work = kp_metric_with(m->wq_work_duration, nc);
    s->unfinished = kp_metric_with(m->wq_unfinished, nc);
    s->longest = kp_metric_with(m->wq_longest, nc);
    s->retries = kp_metric_with(m->wq_retries, nc);
    kp_counter_add(s->adds, 0);
    kp_counter_add(s->retries, 0);
}

/* ------------------------------------------------------------- the stats */

static kp_reconcile_stats *stats_new(kp_reconcile_metrics *rm, const char *name, int workers)
{
    const kp_ctrl_metrics *m = rm->m;
    kp_reconcile_stats *s = kp_xcalloc(1, sizeof(*s));
    s->rm = rm;
    snprintf(s->name, sizeof(s->name), "%s", name);
    pthread_mutex_init(&s->mu, NULL);
    s->workers = workers > 0 ? workers : 1;
    s->started = kp_xcalloc((size_t)s->workers, sizeof(int64_t));
    const char *const c[] = {s->name};
    for (int r = 0; r < 4; r++)
        s->results[r] = kp_metric_with(m->reconcile_total, (const char *const[]){s->name, result_names[r]});
    s->errors = kp_metric_with(m->reconcile_errors, c);
    s->time = kp_metric_with(m->reconcile_time, c);
    s->active = kp_metric_with(m->active_workers, c);
    s->max = kp_metric_with(m->max_concurrent, c);
    kp_counter_add(s->errors, 0);
    /* controller-runtime starts these at 0 for every controller; they stay there (see their help). */
    kp_counter_add(kp_metric_with(m->terminal_errors, c), 0);
    kp_counter_add(kp_metric_with(m->reconcile_panics, c), 0);
    kp_counter_add(kp_metric_with(m->reconcile_timeouts, c), 0);
    kp_gauge_set(s->active, 0);
    kp_gauge_set(s->max, s->workers);
    return s;
}

kp_reconcile_stats *kp_reconcile_metrics_controller(kp_reconcile_metrics *rm, const char *name, kp_workqueue *queue,
                                                    int workers)
{
    if (!rm)
        return NULL;
    pthread_mutex_lock(&rm->mu);
    kp_reconcile_stats *s = rm->stats;
    while (s && strcmp(s->name, name) != 0)
        s = s->next;
    if (!s) {
        s = stats_new(rm, name, workers);
        s->next = rm->stats, rm->stats = s;
    }
    pthread_mutex_unlock(&rm->mu);
    if (queue) {
        pthread_mutex_lock(&s->mu);
        if (!s->depth)
            queue_series(s);
        s->queue = queue;
        pthread_mutex_unlock(&s->mu);
        kp_workqueue_observe(queue, &(kp_workqueue_observer){queue_added, queue_taken, s});
        /* Keys queued before anyone measured (a replica waiting for the lease). */
        kp_gauge_set(s->depth, (double)kp_workqueue_len(queue));
    }
    return s;
}

void kp_reconcile_stats_detach(kp_reconcile_stats *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    kp_workqueue *q = s->queue;
    s->queue = NULL;
    pthread_mutex_unlock(&s->mu);
    if (q)
        kp_workqueue_observe(q, NULL);
    kp_gauge_set(s->depth, 0);
}

int kp_reconcile_begin(kp_reconcile_stats *s)
{
    if (!s)
        return -1;
    int slot = -1;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->workers && slot < 0; i++)
        if (!s->started[i])
            slot = i, s->started[i] = mono_ns();
    pthread_mutex_unlock(&s->mu);
    kp_gauge_add(s->active, 1);
    return slot;
}

void kp_reconcile_end(kp_reconcile_stats *s, int slot, enum kp_reconcile_result result, bool retried)
{
    if (!s)
        return;
    int64_t took = 0;
    pthread_mutex_lock(&s->mu);
    if (slot >= 0 && slot < s->workers) {
        took = mono_ns() - s->started[slot];
        s->started[slot] = 0;
    }
    pthread_mutex_unlock(&s->mu);
    kp_gauge_add(s->active, -1);
    kp_histogram_observe(s->time, (double)took / 1e9);
    kp_histogram_observe(s->work, (double)took / 1e9);
    kp_counter_inc(s->results[result]);
    if (result == KP_RECONCILE_ERROR)
        kp_counter_inc(s->errors);
    if (retried)
        kp_counter_inc(s->retries);
}

/* ------------------------------------------------------- at scrape time */

static void in_progress(kp_reconcile_stats *s, int64_t now)
{
    double total = 0, longest = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->workers; i++) {
        if (!s->started[i])
            continue;
        double secs = (double)(now - s->started[i]) / 1e9;
        total += secs;
        longest = secs > longest ? secs : longest;
    }
    pthread_mutex_unlock(&s->mu);
    kp_gauge_set(s->unfinished, total);
    kp_gauge_set(s->longest, longest);
}

static void collect(void *ctx)
{
    kp_reconcile_metrics *rm = ctx;
    int64_t now = mono_ns();
    pthread_mutex_lock(&rm->mu);
    for (kp_reconcile_stats *s = rm->stats; s; s = s->next)
        in_progress(s, now);
    for (int i = 0; i < KP_RECONCILE_SOLVERS; i++)
        if (rm->solvers[i].since)
            kp_ctrl_set(rm->m->unfinished_work, (const char *const[]){rm->solvers[i].controller, rm->solvers[i].id},
                        (double)(now - rm->solvers[i].since) / 1e9);
    double unsynced = rm->synced ? 0 : (double)(now - rm->unsynced_since) / 1e9;
    bool synced = rm->synced;
    pthread_mutex_unlock(&rm->mu);
    kp_ctrl_set(rm->m->cluster_synced, NULL, synced ? 1 : 0);
    kp_ctrl_set(rm->m->cluster_unsynced, NULL, unsynced);
}

void kp_reconcile_metrics_solving(kp_reconcile_metrics *rm, const char *controller, const char *id)
{
    if (!rm)
        return;
    pthread_mutex_lock(&rm->mu);
    solving *free_slot = NULL;
    for (int i = 0; i < KP_RECONCILE_SOLVERS; i++) {
        solving *s = &rm->solvers[i];
        if (!s->since && !free_slot)
            free_slot = s;
        if (s->since && !strcmp(s->controller, controller))
            free_slot = s; /* a run that never ended is replaced */
    }
    if (free_slot) {
        snprintf(free_slot->controller, sizeof(free_slot->controller), "%s", controller);
        snprintf(free_slot->id, sizeof(free_slot->id), "%s", id);
        free_slot->since = mono_ns();
    }
    pthread_mutex_unlock(&rm->mu);
    kp_ctrl_set(rm->m->unfinished_work, (const char *const[]){controller, id}, 0);
}

void kp_reconcile_metrics_solved(kp_reconcile_metrics *rm, const char *controller)
{
    if (!rm)
        return;
    pthread_mutex_lock(&rm->mu);
    for (int i = 0; i < KP_RECONCILE_SOLVERS; i++) {
        solving *s = &rm->solvers[i];
        if (s->since && !strcmp(s->controller, controller)) {
            kp_metric_remove(rm->m->unfinished_work, (const char *const[]){s->controller, s->id});
            s->since = 0;
        }
    }
    pthread_mutex_unlock(&rm->mu);
}

void kp_reconcile_metrics_synced(kp_reconcile_metrics *rm, bool synced)
{
    if (!rm)
        return;
    pthread_mutex_lock(&rm->mu);
    if (rm->synced && !synced)
        rm->unsynced_since = mono_ns();
    rm->synced = synced;
    pthread_mutex_unlock(&rm->mu);
}

kp_reconcile_metrics *kp_reconcile_metrics_new(kp_ctrl_metrics *m, kp_metrics *registry)
{
    kp_reconcile_metrics *rm = kp_xcalloc(1, sizeof(*rm));
    rm->m = m, rm->registry = registry;
    pthread_mutex_init(&rm->mu, NULL);
    rm->unsynced_since = mono_ns();
    if (kp_metrics_on_collect(registry, collect, rm) < 0) {
        pthread_mutex_destroy(&rm->mu);
        free(rm);
        return NULL;
    }
    collect(rm);
    return rm;
}

kp_reconcile_metrics *kp_reconcile_metrics_free(kp_reconcile_metrics *rm)
{
    if (!rm)
        return NULL;
    kp_metrics_remove_collect(rm->registry, collect, rm);
    for (kp_reconcile_stats *s = rm->stats, *next; s; s = next) {
        next = s->next; /* queues were detached when their reconcilers stopped */
        pthread_mutex_destroy(&s->mu);
        free(s->started);
        free(s);
    }
    pthread_mutex_destroy(&rm->mu);
    free(rm);
    return NULL;
}
