/*
 * The AWS provider in the controller: built from the flags (with
 * EKS_CONTROL_PLANE, what nodes join is read from EKS first), given the
 * EC2NodeClass cache as its lookup, its interruption source (EC2 instance
 * health, with the SQS queue when one is set), and kept fresh by a loop that
 * also runs Karpenter's AWS-side controllers over this provider's NodeClaims:
 *
 *   every minute   instance types and prices (when due: 12 hours, 5 minutes
 *                  after a failure), unused launch templates swept,
 *                  nodeclaim.tagging, capacityreservation.expiration,
 *                  capacityreservation.capacitytype,
 *                  providers.instancetype.capacity
 *   every 30 min   instanceprofile.garbagecollection (not in an isolated
 *                  VPC), providers.ssm.invalidation
 *   every 5 min    EKS discovery, with EKS_CONTROL_PLANE
 */
#ifndef KP_CONTROLLER_CLOUD_AWS_H
#define KP_CONTROLLER_CLOUD_AWS_H

#include "cloud/aws/provider.h"
#include "cloud/interruption.h"
#include "controller/ctrl.h"

/* The provider's options from the controller's flags and environment: every
 * AWS setting Karpenter documents maps here (lookup and clock are the
 * caller's). Strings point into `o`. */
void kp_cloud_aws_opts(const kp_ctrl_opts *o, kp_aws_provider_opts *out);

/* Sets c->cloud, and *src when --interruption-queue is set (else NULL).
 * Instance types and prices are fetched once before returning. */
int kp_cloud_aws_new(kp_ctrl *c, kp_interruption_source **src);

/* Whether c->cloud is the AWS provider. */
bool kp_cloud_is_aws(const kp_ctrl *c);

/* A kp_loop_fn run every minute by the leader; `state` is an int64_t
 * holding when types and prices are next fetched (ns, 0: now; after a
 * success 12 hours on, after a failure 5 minutes on). The rest runs on every
 * call or on its own period (above); the first error is returned, the other
 * parts still run. */
int kp_cloud_aws_upkeep(kp_ctrl *c, void *state);

#endif
