/*
 * The interruption controller: receives the cloud's warnings from the
 * interruption source (kp_ctrl.interruption; SQS for AWS, a directory for
 * kwok and tests) and acts before the cloud does, as Karpenter's does:
 *   spot interruption, scheduled change, stopping, terminating, capacity
 *   reservation reclaimed -> events on the NodeClaim and its Node, then the
 *   NodeClaim is deleted, so termination taints and drains the node and the
 *   provisioner finds the evicted pods new places;
 *   rebalance recommendation -> an event only;
 *   anything else -> acknowledged and forgotten.
 * A notice is acknowledged once handled; one that could not be (the API
 * server refused the delete) stays in the source and comes back.
 */
#ifndef KP_CONTROLLER_INTERRUPTION_CTRL_H
#define KP_CONTROLLER_INTERRUPTION_CTRL_H

#include "controller/ctrl.h"

/* One receive-and-handle pass, a kp_loop_fn (`state` unused). Waits up to
 * a couple of seconds for notices. */
int kp_interruption_pass(kp_ctrl *c, void *state);

/* The NodeClaim keys whose status.providerID ends in "/" + `instance_id`
 * (AWS "aws:///zone/i-abc") or is "kwok://" + `instance_id`; NULL-terminated,
 * free() the array and each key. */
char **kp_interruption_claims(kp_ctrl *c, const char *instance_id);

#endif
