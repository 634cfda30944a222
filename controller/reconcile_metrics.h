/*
 * controller-runtime's figures for the controllers here: per controller
 * (reconciler or loop, by its name), the reconciles and their results and
 * durations, the workers configured and busy; per work queue (named after
 * its controller, as controller-runtime names them), client-go's
 * workqueue_* families. Work in progress (unfinished seconds, the longest
 * running worker) and the cluster-state unsynced time are computed when
 * /metrics is read, by a collect hook.
 *
 * ctrl.c reports through a kp_reconcile_stats per controller; the stats are
 * owned by the kp_reconcile_metrics and live as long as it does.
 */
#ifndef KP_CONTROLLER_RECONCILE_METRICS_H
#define KP_CONTROLLER_RECONCILE_METRICS_H

#include "controller/metrics_ctrl.h"
#include "kube/workqueue.h"

#include <stdint.h>

typedef struct kp_reconcile_metrics kp_reconcile_metrics;
typedef struct kp_reconcile_stats kp_reconcile_stats;

/* controller-runtime's result label. */
enum kp_reconcile_result {
    KP_RECONCILE_SUCCESS,
    KP_RECONCILE_ERROR,
    KP_RECONCILE_REQUEUE,       /* asked to run again at once */
    KP_RECONCILE_REQUEUE_AFTER, /* asked to run again after a delay */
};

/* NULL when the registry has no room for the collect hook. */
kp_reconcile_metrics *kp_reconcile_metrics_new(kp_ctrl_metrics *m, kp_metrics *registry);
kp_reconcile_metrics *kp_reconcile_metrics_free(kp_reconcile_metrics *rm);

/* The stats of controller `name` with `workers` workers, observing `queue`
 * (NULL for a loop). NULL-safe on `rm` (returns NULL). Calling it again for
 * the same name (a replica that leads again) gives the same stats. */
kp_reconcile_stats *kp_reconcile_metrics_controller(kp_reconcile_metrics *rm, const char *name, kp_workqueue *queue,
                                                    int workers);
/* The controller stopped: its queue is no longer observed. */
void kp_reconcile_stats_detach(kp_reconcile_stats *s);

/* A worker starts a reconcile: returns its slot for kp_reconcile_end. */
int kp_reconcile_begin(kp_reconcile_stats *s);
/* ... and ends it (the slot from begin; `retried`: the key went back with
 * back-off). NULL-safe on `s`. */
void kp_reconcile_end(kp_reconcile_stats *s, int slot, enum kp_reconcile_result result, bool retried);

/* A scheduling simulation `id` of `controller` is under way / done:
 * karpenter_scheduler_unfinished_work_seconds while it runs (one at a time
 * per controller; at most KP_RECONCILE_SOLVERS controllers). */
#define KP_RECONCILE_SOLVERS 4
void kp_reconcile_metrics_solving(kp_reconcile_metrics *rm, const char *controller, const char *id);
void kp_reconcile_metrics_solved(kp_reconcile_metrics *rm, const char *controller);

/* Whether the caches are in step with the API server, for
 * karpenter_cluster_state_synced and ..._unsynced_time_seconds. */
void kp_reconcile_metrics_synced(kp_reconcile_metrics *rm, bool synced);

#endif
