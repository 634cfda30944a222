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

/* The EC2NodeClass `name` from the informer cache, decoded into `arena`
 * (kp_aws_nodeclass_lookup's shape; `ctx` is the kp_ctrl). */
int kp_nodeclass_lookup(void *ctx, const char *name, kp_arena *arena, const kp_ec2nodeclass **out);

#endif
