/*
 * Garbage collection between the cluster and the cloud, as Karpenter's:
 *   - a launched NodeClaim whose instance the provider no longer lists (and
 *     a Get confirms gone) is deleted, so its Node and finalizers go too;
 *   - an instance the provider launched that no NodeClaim owns any more
 *     (a crash between launch and the status write, a claim force-deleted)
 *     is terminated once it is older than a grace period, and its Node, if
 *     one registered, is deleted.
 * Young claims and instances are left alone: a launch in flight is listed
 * before its NodeClaim's status says so.
 */
#ifndef KP_CONTROLLER_GC_H
#define KP_CONTROLLER_GC_H

#include "controller/ctrl.h"

/* Karpenter's grace periods: a claim launched 10 s ago, an instance 30 s. */
#define KP_GC_CLAIM_GRACE_MS 10000
#define KP_GC_INSTANCE_GRACE_MS 30000

/* One pass, a kp_loop_fn (`state` unused). */
int kp_gc_pass(kp_ctrl *c, void *state);

#endif
