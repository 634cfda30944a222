/*
 * SSM Parameter Store over JSON 1.1 (X-Amz-Target: AmazonSSM.GetParameter):
 * how EKS-optimised AMI ids are found
 * (/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/x86_64/standard/recommended/image_id).
 * moto has no such public parameters, so tests use recorded answers.
 */
#ifndef KP_CLOUD_AWS_SSM_H
#define KP_CLOUD_AWS_SSM_H

#include <stdint.h>

#include "base/arena.h"
#include "cloud/aws/aws_http.h"

typedef struct kp_ssm_parameter {
    const char *name;
    const char *type; /* "String", "StringList", "SecureString" */
    const char *value;
    int64_t version;
    const char *arn;
} kp_ssm_parameter;

/* KP_ENOTFOUND (AWS code ParameterNotFound) when the parameter does not exist. */
int kp_ssm_get_parameter(kp_aws_client *client, kp_arena *arena, const char *name,
                         kp_ssm_parameter *out);

#endif
