/*
 * Metrics about the cluster as it is, recomputed from the informer caches
 * on every pass (Karpenter's node, pod, NodePool, cloud-provider and
 * status-condition metrics controllers): per Node its allocatable, pod and
 * DaemonSet requests and limits, system overhead and age; cluster
 * utilization; per pod its state and waits (pod_metrics.h); per object its
 * status conditions (status_metrics.h); the NodePools' cost; the offerings'
 * availability and price; the node count. A pass replaces each family's
 * series as a whole (mark and sweep), so objects that left disappear from
 * /metrics and a scrape never sees a family half rebuilt.
 *
 * kp_state_metrics_watch adds the informer handlers that count changes as
 * they happen (pods bound and started, conditions changed, objects gone);
 * it must run before the informers start.
 */
#ifndef KP_CONTROLLER_STATE_METRICS_H
#define KP_CONTROLLER_STATE_METRICS_H

#include "controller/ctrl.h"

/* A kp_loop_fn (`state` unused). */
int kp_state_metrics_pass(kp_ctrl *c, void *state);

/* Wire the change handlers into c's informers (not yet started). */
int kp_state_metrics_watch(kp_ctrl *c);

#endif
