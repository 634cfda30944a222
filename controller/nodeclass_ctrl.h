/*
 * The EC2NodeClass controller (AWS provider only), as Karpenter's: resolves
 * the class's selectors through the provider and writes the status (subnets,
 * security groups, AMIs, instance profile, conditions with Ready), stamps the
 * class hash annotations drift compares, keeps the finalizer
 * karpenter.k8s.aws/termination and, when the class is deleted, waits for
 * the NodeClaims that use it to go before deleting what the provider made
 * for it (launch templates) and releasing the finalizer. Classes are
 * resolved again every minute, so a subnet or AMI that appears or goes is
 * seen without an edit.
 */
#ifndef KP_CONTROLLER_NODECLASS_CTRL_H
#define KP_CONTROLLER_NODECLASS_CTRL_H

#include "controller/ctrl.h"

#define KP_NODECLASS_FINALIZER "karpenter.k8s.aws/termination"

/* A kp_reconcile_fn for EC2NodeClass keys. */
int kp_nodeclass_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* Karpenter's rule for a class-hash version change, applied to the NodeClaims
 * of EC2NodeClass `name` that carry a karpenter.k8s.aws/ec2nodeclass-hash-version
 * other than ours (Karpenter's, on adopted claims): a hash of another version
 * says nothing about drift, so they take the class's current `hash` and our
 * version; one already marked Drifted keeps its hash. Claims without the
 * annotation (ours: drift reads the instance's tags) are left alone. */
int kp_nodeclass_restamp_claims(kp_ctrl *c, const char *name, const char *hash);

/* The EC2NodeClass `name` from the informer cache, decoded into `arena`
 * (kp_aws_nodeclass_lookup's shape; `ctx` is the kp_ctrl). */
int kp_nodeclass_lookup(void *ctx, const char *name, kp_arena *arena, const kp_ec2nodeclass **out);

#endif
