/*
 * Label, annotation, taint and resource names that carry meaning for
 * Karpenter (core and the AWS provider), and the label rules built on them:
 * which labels are well known (may be left undefined by a NodePool), which are
 * restricted, and the legacy aliases that are normalised.
 */
#ifndef KP_API_WELLKNOWN_H
#define KP_API_WELLKNOWN_H

#include <stdbool.h>
#include <stddef.h>

#define KP_GROUP "karpenter.sh"
#define KP_AWS_GROUP "karpenter.k8s.aws"

#define KP_LABEL_NODEPOOL "karpenter.sh/nodepool"
#define KP_LABEL_CAPACITY_TYPE "karpenter.sh/capacity-type"
#define KP_LABEL_INITIALIZED "karpenter.sh/initialized"
#define KP_LABEL_REGISTERED "karpenter.sh/registered"
#define KP_LABEL_DO_NOT_SYNC_TAINTS "karpenter.sh/do-not-sync-taints"
#define KP_LABEL_ZONE "topology.kubernetes.io/zone"
#define KP_LABEL_REGION "topology.kubernetes.io/region"
#define KP_LABEL_INSTANCE_TYPE "node.kubernetes.io/instance-type"
#define KP_LABEL_ARCH "kubernetes.io/arch"
#define KP_LABEL_OS "kubernetes.io/os"
#define KP_LABEL_HOSTNAME "kubernetes.io/hostname"
#define KP_LABEL_WINDOWS_BUILD "node.kubernetes.io/windows-build"
#define KP_LABEL_ZONE_ID "topology.k8s.aws/zone-id"
#define KP_LABEL_INSTANCE_CATEGORY "karpenter.k8s.aws/instance-category"
#define KP_LABEL_INSTANCE_FAMILY "karpenter.k8s.aws/instance-family"
#define KP_LABEL_INSTANCE_GENERATION "karpenter.k8s.aws/instance-generation"
#define KP_LABEL_INSTANCE_SIZE "karpenter.k8s.aws/instance-size"
#define KP_LABEL_INSTANCE_CPU "karpenter.k8s.aws/instance-cpu"
#define KP_LABEL_INSTANCE_MEMORY "karpenter.k8s.aws/instance-memory"
#define KP_LABEL_INSTANCE_HYPERVISOR "karpenter.k8s.aws/instance-hypervisor"
#define KP_LABEL_INSTANCE_GPU_NAME "karpenter.k8s.aws/instance-gpu-name"
#define KP_LABEL_INSTANCE_GPU_MANUFACTURER "karpenter.k8s.aws/instance-gpu-manufacturer"
#define KP_LABEL_INSTANCE_GPU_COUNT "karpenter.k8s.aws/instance-gpu-count"
#define KP_LABEL_INSTANCE_GPU_MEMORY "karpenter.k8s.aws/instance-gpu-memory"
#define KP_LABEL_EC2NODECLASS "karpenter.k8s.aws/ec2nodeclass"

#define KP_CAPACITY_SPOT "spot"
#define KP_CAPACITY_ON_DEMAND "on-demand"
#define KP_CAPACITY_RESERVED "reserved"

#define KP_ANNOTATION_DO_NOT_DISRUPT "karpenter.sh/do-not-disrupt"
#define KP_ANNOTATION_NODEPOOL_HASH "karpenter.sh/nodepool-hash"
#define KP_ANNOTATION_NODEPOOL_HASH_VERSION "karpenter.sh/nodepool-hash-version"
#define KP_ANNOTATION_TERMINATION_TIMESTAMP "karpenter.sh/nodeclaim-termination-timestamp"
#define KP_FINALIZER_TERMINATION "karpenter.sh/termination"
#define KP_TAINT_DISRUPTED "karpenter.sh/disrupted"
#define KP_TAINT_UNREGISTERED "karpenter.sh/unregistered"

#define KP_RESOURCE_CPU "cpu"
#define KP_RESOURCE_MEMORY "memory"
#define KP_RESOURCE_PODS "pods"
#define KP_RESOURCE_EPHEMERAL_STORAGE "ephemeral-storage"
#define KP_RESOURCE_NVIDIA_GPU "nvidia.com/gpu"

/* Karpenter's WellKnownLabels (core plus the AWS provider's): a NodePool need
 * not define them for a pod's requirement on them to be satisfiable. */
bool kp_label_is_well_known(const char *key);
/* All of them, for messages; NULL-terminated, sorted. */
const char *const *kp_well_known_labels(void);

/* The part before '/' ("" when there is none). Writes at most size-1 bytes. */
void kp_label_domain(const char *key, char *out, size_t size);

/* Karpenter's IsRestrictedLabel: a key in the karpenter.sh or
 * karpenter.k8s.aws domains (or their subdomains) that is not well known, or
 * kubernetes.io/hostname. */
bool kp_label_is_restricted(const char *key);

/* Legacy aliases mapped to their well-known key (failure-domain.beta.kubernetes.io/zone,
 * beta.kubernetes.io/arch, ...); returns `key` itself when it is no alias. */
const char *kp_label_normalize(const char *key);

#endif
