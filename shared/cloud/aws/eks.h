/*
 * EKS DescribeCluster (REST-JSON: GET /clusters/<name>), for what Karpenter
 * reads from the control plane when EKS_CONTROL_PLANE is on: the API server
 * endpoint nodes join, its CA bundle (base64 PEM, as the kubelet wants it),
 * the service CIDR (IPv4, else IPv6) AL2023 nodes need, and the Kubernetes
 * version AMI aliases resolve against.
 *
 * The answer lives in the caller's arena. Errors as the client classifies
 * them: ResourceNotFoundException is KP_ENOTFOUND, AccessDeniedException
 * KP_EFORBIDDEN, ServerException / ServiceUnavailableException and
 * throttling KP_ERETRY (after the client's retries), InvalidParameterException
 * and ClientException KP_EINVALID; an answer without cluster.endpoint or that
 * is not JSON is KP_EINVALID. A cluster name EKS cannot have is refused
 * before any request (KP_EINVALID).
 */
#ifndef KP_CLOUD_AWS_EKS_H
#define KP_CLOUD_AWS_EKS_H

#include "base/arena.h"
#include "cloud/aws/aws_http.h"

typedef struct kp_eks_cluster {
    const char *name;
    const char *arn;
    const char *status;   /* "ACTIVE", "CREATING" ... */
    const char *version;  /* "1.33" */
    const char *endpoint; /* "https://ABC.gr7.us-west-2.eks.amazonaws.com" */
    const char *ca_data;  /* certificateAuthority.data: base64 of the CA PEM; NULL when absent */
    const char *service_ipv4_cidr; /* kubernetesNetworkConfig; NULL when absent */
    const char *service_ipv6_cidr;
    const char *ip_family; /* "ipv4", "ipv6" */
} kp_eks_cluster;

int kp_eks_describe_cluster(kp_aws_client *client, kp_arena *arena, const char *name,
                            kp_eks_cluster *out);

/* A DescribeCluster answer body, as kp_eks_describe_cluster reads it (no I/O). */
int kp_eks_cluster_parse(kp_arena *arena, const char *body, size_t len, kp_eks_cluster *out);

/* The service CIDR nodes use: IPv4 when EKS has one, else IPv6; NULL: neither. */
const char *kp_eks_service_cidr(const kp_eks_cluster *c);

#endif
