/*
 * Gauges about the cluster as it is, recomputed from the informer caches on
 * every pass (Karpenter's node and pod metrics controllers): allocatable per
 * managed node and resource, and one series per pod with its phase. Each
 * pass starts the families afresh, so nodes and pods that left disappear
 * from /metrics.
 */
#ifndef KP_CONTROLLER_STATE_METRICS_H
#define KP_CONTROLLER_STATE_METRICS_H

#include "controller/ctrl.h"

/* A kp_loop_fn (`state` unused). */
int kp_state_metrics_pass(kp_ctrl *c, void *state);

#endif
