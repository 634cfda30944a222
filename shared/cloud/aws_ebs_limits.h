/*
 * How many EBS volumes the EBS CSI driver will let pods attach to a node of
 * an instance type: the allocatable.count its CSINode reports once the node
 * runs, estimated before the node exists so the scheduler does not plan more
 * volumes onto a new NodeClaim than its instance type can take.
 */
#ifndef KP_CLOUD_AWS_EBS_LIMITS_H
#define KP_CLOUD_AWS_EBS_LIMITS_H

#include "cloud/aws_catalog.h"

#include <stdint.h>

/* The CSI driver the estimate is for. */
#define KP_EBS_CSI_DRIVER "ebs.csi.aws.com"

/* The estimate for `t` (>= 1), on a node launched with only its root volume
 * and one network interface, as Karpenter's default EC2NodeClass launches. */
int32_t kp_aws_ebs_volume_limit(const kp_aws_type_info *t);

#endif
