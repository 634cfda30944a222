/*
 * Karpenter's pod metrics: karpenter_pods_state (one series per pod), how
 * long pods wait to be bound and to start (histograms observed once, when a
 * pod seen pending is bound or becomes ready; gauges per pod while it
 * waits), and the provisioner's view of each pod: when it first saw the pod,
 * when it first decided about it, and when it first found it a place (the
 * karpenter_pods_provisioning_* families and the scheduling decision
 * duration).
 *
 * Observations are keyed on the pod changing (the informer's old and new
 * objects), never on how often anyone looks, so each pod's bind and start
 * are counted once. Only the leader counts (kp_ctrl_metrics_leading). The
 * remembered pods are capped (KP_POD_METRICS_MAX); past it new pods are not
 * timed.
 */
#ifndef KP_CONTROLLER_POD_METRICS_H
#define KP_CONTROLLER_POD_METRICS_H

#include "controller/metrics_ctrl.h"
#include "kube/informer.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#define KP_POD_METRICS_MAX 200000

typedef struct kp_pod_metrics kp_pod_metrics;

kp_pod_metrics *kp_pod_metrics_new(kp_ctrl_metrics *m);
kp_pod_metrics *kp_pod_metrics_free(kp_pod_metrics *pm);

/* The provisioner looked at pod `key` ("namespace/name"): the first time is
 * its acknowledgement. */
void kp_pod_metrics_seen(kp_pod_metrics *pm, const char *key, int64_t now_ns);
/* The provisioner decided about the pod: `placed` when it found it a place
 * (an existing node or a new NodeClaim). The first decision observes
 * karpenter_pods_scheduling_decision_duration_seconds; the first placement
 * starts the provisioning clocks. */
void kp_pod_metrics_decided(kp_pod_metrics *pm, const char *key, bool placed, int64_t now_ns);

/* The informer saw the pod as it is now (added or changed). */
void kp_pod_metrics_update(kp_pod_metrics *pm, const cJSON *pod);
/* The pod is gone. */
void kp_pod_metrics_delete(kp_pod_metrics *pm, const cJSON *pod);

/* What the state pass knows of a Node, for the pod's labels. */
typedef struct kp_pod_node_info {
    const char *nodepool, *zone, *arch, *capacity_type, *instance_type;
} kp_pod_node_info;
typedef const kp_pod_node_info *(*kp_pod_node_lookup)(void *ctx, const char *node);

/* Recompute the per-pod gauges from the pods cached now (`pods` is the pod
 * informer); `lookup` finds a bound pod's node. */
void kp_pod_metrics_pass(kp_pod_metrics *pm, kp_informer *pods, kp_pod_node_lookup lookup, void *ctx,
                         int64_t now_ns);

#endif
