/*
 * Node auto-repair, Karpenter's node.health controller (feature gate
 * NodeRepair): a Node of ours whose condition matches one of the cloud
 * provider's repair policies (kwok: Ready False or Unknown for 10 minutes;
 * AWS: Ready for 30 minutes and the node monitoring agent's conditions) for
 * the policy's toleration is replaced: its NodeClaim gets a termination
 * timestamp of now (the drain is forceful) and is deleted, counted in
 * karpenter_nodeclaims_disrupted_total{reason="unhealthy"} and
 * karpenter_nodeclaims_unhealthy_disrupted_total.
 *
 * Repair stops while more than the threshold of a NodePool's nodes are
 * unhealthy (Karpenter: 20%, rounded up, so one of three may go; here the
 * NODE_REPAIR_UNHEALTHY_THRESHOLD setting, which users asked Karpenter for):
 * a NodeRepairBlocked event says so, and the node is looked at again in 5
 * minutes. An outage of a whole zone must not turn into deleting every node.
 */
#ifndef KP_CONTROLLER_NODE_HEALTH_H
#define KP_CONTROLLER_NODE_HEALTH_H

#include "controller/ctrl.h"

/* The reconcile function for Node keys (state unused: NULL). */
int kp_node_health_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* How many of `total` nodes may be unhealthy under `threshold` ("20%": of the
 * total, rounded up; "3": at most three). -1 when it does not parse. */
int64_t kp_node_health_allowed(const char *threshold, int64_t total);

#endif
