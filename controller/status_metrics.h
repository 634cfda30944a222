/*
 * operatorpkg's status metrics, which Karpenter serves for NodeClaims,
 * Nodes, NodePools and its node class: per object and condition, a gauge
 * that it is there (operator_<kind>_status_condition_count) and for how long
 * (..._current_status_seconds); per condition change, a counter
 * (..._transitions_total) and how long the old status lasted
 * (..._transition_seconds); while an object is being deleted, for how long
 * (operator_<kind>_termination_current_time_seconds), and once it is gone,
 * how long that took (..._termination_duration_seconds). NodeClaims,
 * NodePools and the node class also feed the deprecated operator_status_*
 * and operator_termination_* families, with group and kind labels.
 *
 * Changes are counted from the informer's old and new object: a condition
 * whose status differs, or that is new, is one transition however often
 * anything reconciles. Only the leader counts.
 */
#ifndef KP_CONTROLLER_STATUS_METRICS_H
#define KP_CONTROLLER_STATUS_METRICS_H

#include "controller/metrics_ctrl.h"
#include "kube/informer.h"

#include <cjson/cJSON.h>
#include <stdint.h>

typedef struct kp_status_metrics kp_status_metrics;

kp_status_metrics *kp_status_metrics_free(kp_status_metrics *sm);

/* An object of `kind` appeared (`old` NULL) or changed. */
void kp_status_metrics_update(kp_ctrl_metrics *m, enum kp_status_kind kind, const cJSON *old, const cJSON *obj);
/* An object of `kind` is gone, at `now_ns` (wall clock). */
void kp_status_metrics_delete(kp_ctrl_metrics *m, enum kp_status_kind kind, const cJSON *obj, int64_t now_ns);
/* Recompute the per-object gauges from the informers of each kind (NULL:
 * that kind is not watched). */
void kp_status_metrics_pass(kp_ctrl_metrics *m, kp_informer *const informers[KP_STATUS_KINDS], int64_t now_ns);

#endif
