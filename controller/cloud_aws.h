/*
 * The AWS provider in the controller: built from the flags, given the
 * EC2NodeClass cache as its lookup, and kept fresh by a loop (instance types
 * and prices every 12 hours, unused launch templates swept every minute).
 */
#ifndef KP_CONTROLLER_CLOUD_AWS_H
#define KP_CONTROLLER_CLOUD_AWS_H

#include "cloud/interruption.h"
#include "controller/ctrl.h"

/* Sets c->cloud, and *src when --interruption-queue is set (else NULL).
 * Instance types and prices are fetched once before returning. */
int kp_cloud_aws_new(kp_ctrl *c, kp_interruption_source **src);

/* Whether c->cloud is the AWS provider. */
bool kp_cloud_is_aws(const kp_ctrl *c);

/* A kp_loop_fn run every minute by the leader; `state` is an int64_t
 * holding when types and prices are next fetched (ns, 0: now; after a
 * success 12 hours on, after a failure 5 minutes on). Unused launch
 * templates are swept on every call. */
int kp_cloud_aws_upkeep(kp_ctrl *c, void *state);

#endif
