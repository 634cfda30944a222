/*
 * NodeClaim consistency, Karpenter's nodeclaim.consistency controller: once
 * a NodeClaim has a provider ID, it is checked against its Node at most once
 * every 10 minutes (per NodeClaim uid; a reconcile sooner is put off until
 * then). The one check, as in Karpenter v1.14, is the node's shape: for every
 * resource the NodeClaim requested (spec.resources.requests, non-zero) whose
 * expected capacity (status.capacity) is non-zero, an initialized Node that
 * is not being deleted must report at least 90% of it in status.capacity.
 *
 * Each shortfall is a Warning event FailedConsistencyCheck on the NodeClaim,
 * "expected 16Gi of resource memory, but found 8Gi (50.0% of expected)"
 * (deduplicated for 2 minutes by NodeClaim and message), and the condition
 * ConsistentStateFound turns False (ConsistencyCheckFailed, "Consistency
 * Check Failed"); a check without one sets it True. The condition is not one
 * of the NodeClaim's Ready dependents (Launched, Registered, Initialized).
 * A NodeClaim without its Node yet, or with several, is left alone.
 */
#ifndef KP_CONTROLLER_CONSISTENCY_CTRL_H
#define KP_CONTROLLER_CONSISTENCY_CTRL_H

#include "controller/ctrl.h"

/* Karpenter's scanPeriod. */
#define KP_CONSISTENCY_SCAN_MS (10 * 60 * 1000)

typedef struct kp_consistency kp_consistency;

kp_consistency *kp_consistency_new(void);
kp_consistency *kp_consistency_free(kp_consistency *s);

/* The reconcile function for NodeClaim keys; `state` is the kp_consistency. */
int kp_consistency_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

#endif
