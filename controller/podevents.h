/*
 * Karpenter's nodeclaim.podevents: a NodeClaim remembers when a pod last
 * arrived on or left its node (status.lastPodEventTime), because
 * consolidateAfter counts from then: a node is not consolidated while its
 * pods are still coming and going. Updates are at most one per 10 seconds
 * per NodeClaim.
 */
#ifndef KP_CONTROLLER_PODEVENTS_H
#define KP_CONTROLLER_PODEVENTS_H

#include "controller/ctrl.h"

/* Whether the change from `old_pod` to `new_pod` is an event for its node
 * (bound, finished, or began terminating); DaemonSet pods are not. */
bool kp_podevent_is_event(const cJSON *old_pod, const cJSON *new_pod);

/* The reconcile function for Node keys: stamp the node's NodeClaim. */
int kp_podevents_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

#endif
