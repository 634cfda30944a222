/*
 * The built-in AWS instance-type catalog: a static table of EC2 instance types
 * (hardware facts and the us-east-1 Linux on-demand price), used offline by
 * `simulate --instance-types builtin` and as the fallback the AWS provider
 * starts from before its first DescribeInstanceTypes / pricing refresh.
 *
 * This module owns the generated table (aws_catalog_data.c, written by
 * `scripts/gen-aws-catalog.py INSTANCE_TYPES_JSON PRICING_JSON`, which also
 * checks every row against Karpenter's published allocatable figures; do not
 * edit it by hand) and the rules that turn a row into what Karpenter derives
 * from it: the well-known node labels of the type and its offerings (zone x
 * capacity type, with prices). Rows are
 * immutable and live for the whole program; every pointer returned here points
 * into static storage and is never freed.
 *
 * Self-contained on purpose: it depends on shared/base only, so the generic
 * instance-type model can be layered on top without a cycle.
 */
#ifndef KP_CLOUD_AWS_CATALOG_H
#define KP_CLOUD_AWS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kp_aws_arch {
    KP_AWS_ARCH_AMD64 = 0, /* EC2 "x86_64" */
    KP_AWS_ARCH_ARM64,
};

enum kp_aws_hypervisor {
    KP_AWS_HV_NONE = 0, /* bare metal: the hypervisor label is present with value "" */
    KP_AWS_HV_NITRO,
    KP_AWS_HV_XEN,
};

/* Bits of kp_aws_type_info.flags. */
enum {
    KP_AWS_TYPE_BURSTABLE = 1u << 0,             /* CPU credits (t2/t3/t3a/t4g ...) */
    KP_AWS_TYPE_BAREMETAL = 1u << 1,             /* a .metal size */
    KP_AWS_TYPE_ENCRYPTION_IN_TRANSIT = 1u << 2, /* NetworkInfo.EncryptionInTransitSupported */
};

/*
 * One instance type. Strings are label-form (lower case, spaces as '-').
 * Zero / NULL means "absent": no GPU, no accelerator, no local NVMe, no
 * published network or EBS bandwidth (the matching label is then not set).
 */
typedef struct kp_aws_type_info {
    const char *name;     /* "m5.large" */
    const char *family;   /* "m5" (name before '.') */
    const char *size;     /* "large" (name after '.') */
    const char *category; /* "m"; "" when the name does not follow the usual pattern */
    int32_t generation;   /* 5; 0 with an empty category */
    int32_t vcpu;         /* VCpuInfo.DefaultVCpus */
    int64_t memory_mib;   /* MemoryInfo.SizeInMiB, raw (before any overhead) */
    enum kp_aws_arch arch;
    enum kp_aws_hypervisor hypervisor;
    const char *cpu_manufacturer; /* "intel", "amd", "aws" */
    int32_t cpu_clock_mhz;        /* sustained clock speed; 0 unknown */
    /* GPU: only for types with exactly one GpuInfo entry (all current ones). */
    const char *gpu_name;         /* "a10g"; NULL without GPUs */
    const char *gpu_manufacturer; /* "nvidia", "amd", "habana" */
    int32_t gpu_count;            /* 0 for fractional-GPU types such as g6f */
    int64_t gpu_memory_mib;       /* per GPU */
    /* Accelerator: one Neuron device entry (Inferentia, Trainium) or one
     * InferenceAccelerator entry. */
    const char *accel_name; /* "inferentia2"; NULL without accelerators */
    const char *accel_manufacturer;
    int32_t accel_count;
    int32_t neuron_cores_per_device; /* > 0 marks a Neuron device */
    /* Networking (VPC CNI limits). */
    int32_t default_card_max_enis; /* MaximumNetworkInterfaces of the default network card */
    int32_t ipv4_per_eni;
    int32_t pod_enis; /* branch ENIs for security groups for pods; 0 when not trunking */
    int32_t max_efa;  /* EfaInfo.MaximumEfaInterfaces */
    int64_t network_mbps;
    int64_t ebs_mbps;
    int64_t local_nvme_gb; /* InstanceStorageInfo.TotalSizeInGB when NVMe, decimal GB */
    uint32_t flags;        /* KP_AWS_TYPE_* */
    /* us-east-1 Linux on-demand price in micro-dollars per hour (USD x 1e6),
     * so prices add and compare exactly: 0.096 $/h is 96000. */
    int64_t price_micro_usd;
} kp_aws_type_info;

/* ---- the table ---------------------------------------------------------- */

/* The generated rows, sorted by name (strcmp order); `*count` gets their number.
 * Defined in aws_catalog_data.c. */
const kp_aws_type_info *kp_aws_catalog_table(size_t *count);

size_t kp_aws_catalog_count(void);
/* Row `index` (< kp_aws_catalog_count()), NULL past the end: for iteration. */
const kp_aws_type_info *kp_aws_catalog_at(size_t index);

/* The row named `name`, NULL when the catalog has none (no error message). */
const kp_aws_type_info *kp_aws_catalog_find(const char *name);

/* As kp_aws_catalog_find, but a miss is KP_ENOTFOUND with a message naming the
 * type; NULL or "" is KP_EINVALID. */
int kp_aws_catalog_lookup(const kp_aws_type_info **out, const char *name);

/* "amd64" / "arm64". */
const char *kp_aws_arch_name(enum kp_aws_arch arch);
/* "nitro" / "xen" / "" (bare metal). */
const char *kp_aws_hypervisor_name(enum kp_aws_hypervisor hv);

/* ---- labels ------------------------------------------------------------- */

enum kp_aws_ami_family {
    KP_AWS_AMI_AL2023 = 0, /* the default */
    KP_AWS_AMI_AL2,
    KP_AWS_AMI_BOTTLEROCKET,
    KP_AWS_AMI_WINDOWS,
    KP_AWS_AMI_CUSTOM,
};

#define KP_AWS_REGION "us-east-1"

/* Longest label value we produce, NUL included (names and decimal numbers). */
enum { KP_AWS_LABEL_VALUE_MAX = 48 };
/* Upper bound on the labels one type can get. */
enum { KP_AWS_MAX_LABELS = 32 };

typedef struct kp_aws_label {
    const char *key; /* static string */
    char value[KP_AWS_LABEL_VALUE_MAX];
} kp_aws_label;

/*
 * The labels Karpenter puts on a node of type `t` that do not depend on the
 * offering (zone and capacity type are per offering, see below): instance-type,
 * arch, os, region and the karpenter.k8s.aws/instance-* family. Labels whose
 * requirement would be DoesNotExist are left out; the hypervisor label of a
 * bare-metal type is present with an empty value. Windows on arm64 has no
 * operating system, so `kubernetes.io/os` is then absent.
 *
 * Writes at most `cap` labels into `out` (sorted by key) and their number into
 * `*count`; KP_ETOOLARGE if `cap` is too small (KP_AWS_MAX_LABELS always is enough).
 */
int kp_aws_catalog_labels(kp_aws_label *out, size_t cap, size_t *count, const kp_aws_type_info *t,
                          enum kp_aws_ami_family ami_family);

/* The value of label `key` in `labels`, NULL when absent. */
const char *kp_aws_label_get(const kp_aws_label *labels, size_t count, const char *key);

/* ---- offerings ---------------------------------------------------------- */

enum kp_aws_capacity_type {
    KP_AWS_CAPACITY_ON_DEMAND = 0,
    KP_AWS_CAPACITY_SPOT,
};

enum { KP_AWS_ZONE_COUNT = 3 };
enum { KP_AWS_MAX_OFFERINGS = KP_AWS_ZONE_COUNT * 2 };

typedef struct kp_aws_offering {
    const char *zone;    /* "us-east-1a" */
    const char *zone_id; /* "use1-az1" */
    enum kp_aws_capacity_type capacity_type;
    int64_t price_micro_usd; /* per hour */
    bool available;          /* false when the type has no price */
} kp_aws_offering;

/* Zone `index` (< KP_AWS_ZONE_COUNT) of the built-in region, NULL past the end. */
const char *kp_aws_catalog_zone(size_t index);

/* "on-demand" / "spot" (the karpenter.sh/capacity-type values). */
const char *kp_aws_capacity_type_name(enum kp_aws_capacity_type ct);

/*
 * Estimated spot price of `t` in zone `zone_index`, micro-dollars per hour.
 * An offline estimate, not a market price: see aws_catalog.c for the factors.
 * 0 when the type has no on-demand price or the zone index is out of range.
 */
int64_t kp_aws_catalog_spot_price(const kp_aws_type_info *t, size_t zone_index);

/*
 * Every offering of `t`: each zone x {on-demand, spot}, zone-major, on-demand
 * first. Writes KP_AWS_MAX_OFFERINGS entries into `out` (which must hold that
 * many) and returns their number.
 */
size_t kp_aws_catalog_offerings(kp_aws_offering out[KP_AWS_MAX_OFFERINGS],
                                const kp_aws_type_info *t);

#endif
