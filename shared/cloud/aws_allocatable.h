/*
 * Capacity, overhead and allocatable of an AWS instance type, computed the way
 * Karpenter's AWS provider does before a node of that type has registered:
 *
 *   allocatable = capacity - (kube-reserved + system-reserved + eviction threshold)
 *
 * Pure functions over a kp_aws_type_info row (from the built-in catalog or
 * built from DescribeInstanceTypes) and a small options struct carrying the
 * operator flags (VM memory overhead, reserved ENIs) and the EC2NodeClass
 * settings that matter (AMI family, kubelet block, root volume size, instance
 * store policy, EFA-only network interfaces). Everything is integer: CPU in
 * millicores, memory and storage in bytes. Quantities in the kubelet block are
 * parsed by the caller; this module does no parsing and owns no memory.
 */
#ifndef KP_CLOUD_AWS_ALLOCATABLE_H
#define KP_CLOUD_AWS_ALLOCATABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "cloud/aws_catalog.h"
#include "cloud/instance_types.h"

/* Amounts of every resource an AWS node advertises. In overhead structs only
 * cpu_milli, memory_bytes and ephemeral_bytes are used (the rest stay 0). */
typedef struct kp_aws_resources {
    int64_t cpu_milli;
    int64_t memory_bytes;
    int64_t pods;
    int64_t ephemeral_bytes;
    int64_t nvidia_gpu;     /* nvidia.com/gpu */
    int64_t amd_gpu;        /* amd.com/gpu */
    int64_t habana_gaudi;   /* habana.ai/gaudi */
    int64_t neuron;         /* aws.amazon.com/neuron (devices) */
    int64_t neuron_core;    /* aws.amazon.com/neuroncore */
    int64_t efa;            /* vpc.amazonaws.com/efa */
    int64_t pod_eni;        /* vpc.amazonaws.com/pod-eni */
    int64_t private_ipv4;   /* vpc.amazonaws.com/PrivateIPv4Address (Windows only) */
} kp_aws_resources;

/* A kubeReserved / systemReserved map, restricted to the keys that change
 * allocatable. A `has_*` flag set means the user gave that key (its value
 * replaces the computed default, even when it is 0). */
typedef struct kp_aws_reserved {
    bool has_cpu;
    bool has_memory;
    bool has_ephemeral;
    int64_t cpu_milli;
    int64_t memory_bytes;
    int64_t ephemeral_bytes;
} kp_aws_reserved;

/* One evictionHard signal (memory.available or nodefs.available). */
enum kp_aws_threshold_kind {
    KP_AWS_THRESHOLD_DEFAULT = 0, /* not given: 100Mi for memory, 10% for nodefs */
    KP_AWS_THRESHOLD_QUANTITY,    /* an absolute amount, in `bytes` */
    KP_AWS_THRESHOLD_PERCENT,     /* `percent` of capacity, rounded up; 100 means 0 */
};

typedef struct kp_aws_threshold {
    enum kp_aws_threshold_kind kind;
    int64_t bytes;
    double percent; /* 0..100, as written without the '%' ("5%" is 5.0) */
} kp_aws_threshold;

/* The parts of EC2NodeClass spec.kubelet that change capacity or overhead.
 * evictionSoft is deliberately absent: it never changes allocatable. */
typedef struct kp_aws_kubelet_opts {
    bool has_max_pods;
    int32_t max_pods;
    int32_t pods_per_core; /* 0 = unset */
    kp_aws_reserved kube_reserved;
    kp_aws_reserved system_reserved;
    kp_aws_threshold eviction_memory; /* evictionHard["memory.available"] */
    kp_aws_threshold eviction_nodefs; /* evictionHard["nodefs.available"] */
} kp_aws_kubelet_opts;

typedef struct kp_aws_alloc_opts {
    /* --vm-memory-overhead-percent: fraction of memory the hypervisor keeps,
     * in [0, 1). Karpenter's default is 0.075. */
    double vm_memory_overhead_percent;
    /* --reserved-enis: ENIs kept back from pod networking (>= 0). */
    int32_t reserved_enis;
    enum kp_aws_ami_family ami_family;
    /* Size of the volume pods write to (root or family ephemeral device from
     * blockDeviceMappings); 0 = the AMI family default (20Gi, Windows 50Gi). */
    int64_t ephemeral_volume_bytes;
    /* instanceStorePolicy: RAID0 — local NVMe becomes ephemeral storage. */
    bool instance_store_raid0;
    /* spec.networkInterfaces: when set, EFA-only entries replace the type's EFA
     * count and the ones on card 0 take ENIs away from pods. */
    bool has_network_interfaces;
    int32_t efa_only_interfaces;       /* all cards */
    int32_t efa_only_interfaces_card0; /* on network card 0 */
    kp_aws_kubelet_opts kubelet;
} kp_aws_alloc_opts;

#define KP_AWS_VM_MEMORY_OVERHEAD_DEFAULT 0.075
#define KP_AWS_ALLOC_OPTS_INIT {.vm_memory_overhead_percent = KP_AWS_VM_MEMORY_OVERHEAD_DEFAULT}

void kp_aws_alloc_opts_init(kp_aws_alloc_opts *opts);

typedef struct kp_aws_allocatable {
    kp_aws_resources capacity;
    kp_aws_resources kube_reserved;
    kp_aws_resources system_reserved;
    kp_aws_resources eviction_threshold;
    /* capacity minus the three overheads (cpu, memory, ephemeral storage);
     * the other resources equal capacity. May be negative for tiny types with
     * large reservations: such a type fits nothing. */
    kp_aws_resources allocatable;
} kp_aws_allocatable;

/*
 * Compute capacity, overhead and allocatable of `t` under `opts` (NULL = the
 * defaults). KP_EINVALID for options out of range (negative counts or sizes,
 * overhead fraction outside [0, 1), percent outside [0, 100]) or a row with
 * non-positive vCPUs or memory.
 */
int kp_aws_allocatable_compute(kp_aws_allocatable *out, const kp_aws_type_info *t,
                               const kp_aws_alloc_opts *opts);

/* The pieces, exposed for the provider and for tests. */

/* Memory capacity in bytes: raw MiB, minus 64 MiB on arm64, minus
 * ceil(MiB x overhead) MiB. */
int64_t kp_aws_memory_capacity(const kp_aws_type_info *t, double vm_overhead);

/* VPC CNI pod density: usable ENIs x (IPv4 per ENI - 1) + 2, 0 without usable
 * ENIs; usable = default card ENIs - reserved - EFA-only on card 0. */
int64_t kp_aws_eni_limited_pods(const kp_aws_type_info *t, int32_t reserved_enis,
                                int32_t efa_only_card0);

/* Default kube-reserved CPU for `cpu_milli` of capacity: 6% of the first core,
 * 1% of the second, 0.5% of the next two, 0.25% of the rest (each band
 * truncated to whole millicores). */
int64_t kp_aws_kube_reserved_cpu(int64_t cpu_milli);

/* Default kube-reserved memory for `pods`: (11 x pods + 255) MiB. */
int64_t kp_aws_kube_reserved_memory(int64_t pods);

/* Put `a` on catalog type `it`: capacity per resource and, where allocatable
 * is less, the difference as overhead. Zero-valued resources are left out,
 * as Karpenter does. Shared by the built-in catalog and the EC2 one. */
void kp_aws_allocatable_to_catalog(kp_catalog *cat, kp_instance_type *it, const kp_aws_allocatable *a);

#endif
