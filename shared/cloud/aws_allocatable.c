/*
 * Capacity, overhead and allocatable of an AWS instance type (see the header).
 * The rules follow Karpenter's AWS provider; where it computes in floating
 * point (VM memory overhead, percentage eviction thresholds) the same double
 * expression is evaluated here so results agree to the byte.
 */
#include "cloud/aws_allocatable.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/error.h"

#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)

/* Graviton kernels set aside this much for the contiguous memory allocator. */
#define ARM64_CMA_MIB 64
/* Upper end (millicores) of the last kube-reserved CPU band. */
#define CPU_BAND_END ((int64_t)1 << 31)
/* Density when the AMI family does not follow the VPC CNI ENI limits. */
#define DEFAULT_MAX_PODS 110
#define DEFAULT_EVICTION_MEMORY (100 * MIB)
#define DEFAULT_EVICTION_NODEFS_PERCENT 10.0
#define KUBE_RESERVED_EPHEMERAL GIB

void kp_aws_alloc_opts_init(kp_aws_alloc_opts *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->vm_memory_overhead_percent = KP_AWS_VM_MEMORY_OVERHEAD_DEFAULT;
}

int64_t kp_aws_memory_capacity(const kp_aws_type_info *t, double vm_overhead)
{
    int64_t mib = t->memory_mib;
    if (t->arch == KP_AWS_ARCH_ARM64)
        mib -= ARM64_CMA_MIB;
    double bytes = (double)(mib * MIB);
    int64_t overhead_mib = (int64_t)ceil(bytes * vm_overhead / 1024 / 1024);
    return (mib - overhead_mib) * MIB;
}

int64_t kp_aws_eni_limited_pods(const kp_aws_type_info *t, int32_t reserved_enis,
                                int32_t efa_only_card0)
{
    int64_t usable = (int64_t)t->default_card_max_enis - reserved_enis - efa_only_card0;
    if (usable <= 0)
        return 0;
    return usable * ((int64_t)t->ipv4_per_eni - 1) + 2;
}

int64_t kp_aws_kube_reserved_cpu(int64_t cpu_milli)
{
    /* Bands of capacity and the share of each kept for the kubelet, as a
     * fraction num/den so the result is exact: 6%, 1%, 0.5%, 0.25%. */
    static const struct {
        int64_t start, end, num, den;
    } bands[] = {
        {0, 1000, 6, 100},
        {1000, 2000, 1, 100},
        {2000, 4000, 5, 1000},
        {4000, CPU_BAND_END, 25, 10000},
    };
    int64_t total = 0;
    for (size_t i = 0; i < sizeof(bands) / sizeof(bands[0]); i++) {
        if (cpu_milli < bands[i].start)
            break;
        int64_t top = cpu_milli < bands[i].end ? cpu_milli : bands[i].end;
        total += (top - bands[i].start) * bands[i].num / bands[i].den;
    }
    return total;
}

int64_t kp_aws_kube_reserved_memory(int64_t pods)
{
    return (11 * pods + 255) * MIB;
}

static bool uses_eni_limited_density(enum kp_aws_ami_family family)
{
    return family != KP_AWS_AMI_WINDOWS;
}

static bool pods_per_core_enabled(enum kp_aws_ami_family family)
{
    return family != KP_AWS_AMI_BOTTLEROCKET;
}

/* Bottlerocket and Windows size kube-reserved memory from the final pod
 * count; the others from the ENI limit alone. */
static bool uses_eni_limited_memory_overhead(enum kp_aws_ami_family family)
{
    return family != KP_AWS_AMI_BOTTLEROCKET && family != KP_AWS_AMI_WINDOWS;
}

static int32_t efa_only_card0(const kp_aws_alloc_opts *o)
{
    return o->has_network_interfaces ? o->efa_only_interfaces_card0 : 0;
}

static int64_t pod_capacity(const kp_aws_type_info *t, const kp_aws_alloc_opts *o)
{
    int64_t pods;
    if (o->kubelet.has_max_pods)
        pods = o->kubelet.max_pods;
    else if (uses_eni_limited_density(o->ami_family))
        pods = kp_aws_eni_limited_pods(t, o->reserved_enis, efa_only_card0(o));
    else
        pods = DEFAULT_MAX_PODS;
    if (o->kubelet.pods_per_core > 0 && pods_per_core_enabled(o->ami_family)) {
        int64_t per_core = (int64_t)o->kubelet.pods_per_core * t->vcpu;
        if (per_core < pods)
            pods = per_core;
    }
    return pods;
}

static int64_t default_volume_bytes(enum kp_aws_ami_family family)
{
    return family == KP_AWS_AMI_WINDOWS ? 50 * GIB : 20 * GIB;
}

static int64_t ephemeral_capacity(const kp_aws_type_info *t, const kp_aws_alloc_opts *o)
{
    if (o->instance_store_raid0 && t->local_nvme_gb > 0)
        return t->local_nvme_gb * 1000000000;
    if (o->ephemeral_volume_bytes > 0)
        return o->ephemeral_volume_bytes;
    return default_volume_bytes(o->ami_family);
}

static int64_t sum_gpus(const kp_aws_type_info *t, const char *manufacturer)
{
    if (t->gpu_manufacturer == NULL || strcmp(t->gpu_manufacturer, manufacturer) != 0)
        return 0;
    return t->gpu_count;
}

static void extended_capacity(kp_aws_resources *cap, const kp_aws_type_info *t,
                              const kp_aws_alloc_opts *o)
{
    cap->nvidia_gpu = sum_gpus(t, "nvidia");
    cap->amd_gpu = sum_gpus(t, "amd");
    cap->habana_gaudi = sum_gpus(t, "habana");
    if (t->accel_name != NULL && t->neuron_cores_per_device > 0) {
        cap->neuron = t->accel_count;
        cap->neuron_core = (int64_t)t->accel_count * t->neuron_cores_per_device;
    }
    cap->efa = o->has_network_interfaces ? o->efa_only_interfaces : t->max_efa;
    cap->pod_eni = t->pod_enis;
    /* Windows nodes get secondary IPs from the VPC resource controller. */
    if (o->ami_family == KP_AWS_AMI_WINDOWS && t->arch == KP_AWS_ARCH_AMD64)
        cap->private_ipv4 = t->ipv4_per_eni > 0 ? t->ipv4_per_eni - 1 : 0;
}

static void apply_reserved(kp_aws_resources *r, const kp_aws_reserved *user)
{
    if (user->has_cpu)
        r->cpu_milli = user->cpu_milli;
    if (user->has_memory)
        r->memory_bytes = user->memory_bytes;
    if (user->has_ephemeral)
        r->ephemeral_bytes = user->ephemeral_bytes;
}

static void kube_reserved(kp_aws_resources *out, const kp_aws_type_info *t,
                          const kp_aws_alloc_opts *o, int64_t final_pods)
{
    int64_t pods = final_pods;
    if (uses_eni_limited_memory_overhead(o->ami_family))
        pods = kp_aws_eni_limited_pods(t, 0, efa_only_card0(o));
    memset(out, 0, sizeof(*out));
    out->cpu_milli = kp_aws_kube_reserved_cpu((int64_t)t->vcpu * 1000);
    out->memory_bytes = kp_aws_kube_reserved_memory(pods);
    out->ephemeral_bytes = KUBE_RESERVED_EPHEMERAL;
    apply_reserved(out, &o->kubelet.kube_reserved);
}

/* A percentage of `capacity`, rounded up; "100%" disables the threshold. */
static int64_t percent_of(int64_t capacity, double percent)
{
    if (percent == 100.0)
        return 0;
    return (int64_t)ceil((double)capacity / 100 * percent);
}

static int64_t threshold(const kp_aws_threshold *th, int64_t capacity, int64_t fallback)
{
    switch (th->kind) {
    case KP_AWS_THRESHOLD_QUANTITY:
        return th->bytes;
    case KP_AWS_THRESHOLD_PERCENT:
        return percent_of(capacity, th->percent);
    case KP_AWS_THRESHOLD_DEFAULT:
    default:
        return fallback;
    }
}

static void eviction_threshold(kp_aws_resources *out, const kp_aws_resources *cap,
                               const kp_aws_kubelet_opts *k)
{
    memset(out, 0, sizeof(*out));
    out->memory_bytes =
        threshold(&k->eviction_memory, cap->memory_bytes, DEFAULT_EVICTION_MEMORY);
    out->ephemeral_bytes =
        threshold(&k->eviction_nodefs, cap->ephemeral_bytes,
                  percent_of(cap->ephemeral_bytes, DEFAULT_EVICTION_NODEFS_PERCENT));
}

static int check_reserved(const kp_aws_reserved *r, const char *which)
{
    if ((r->has_cpu && r->cpu_milli < 0) || (r->has_memory && r->memory_bytes < 0) ||
        (r->has_ephemeral && r->ephemeral_bytes < 0))
        return kp_error_set(KP_EINVALID, "%s: reserved amounts must not be negative", which);
    return 0;
}

static int check_threshold(const kp_aws_threshold *th, const char *signal)
{
    if (th->kind == KP_AWS_THRESHOLD_QUANTITY && th->bytes < 0)
        return kp_error_set(KP_EINVALID, "evictionHard %s: must not be negative", signal);
    if (th->kind == KP_AWS_THRESHOLD_PERCENT && !(th->percent >= 0 && th->percent <= 100))
        return kp_error_set(KP_EINVALID, "evictionHard %s: percentage must be within [0, 100]",
                            signal);
    return 0;
}

static int check_opts(const kp_aws_alloc_opts *o)
{
    int err;
    if (!(o->vm_memory_overhead_percent >= 0 && o->vm_memory_overhead_percent < 1))
        return kp_error_set(KP_EINVALID, "VM memory overhead %g is outside [0, 1)",
                            o->vm_memory_overhead_percent);
    if (o->reserved_enis < 0 || o->ephemeral_volume_bytes < 0 || o->efa_only_interfaces < 0 ||
        o->efa_only_interfaces_card0 < 0)
        return kp_error_set(KP_EINVALID, "reserved ENIs, volume size and EFA counts must not "
                                         "be negative");
    if ((o->kubelet.has_max_pods && o->kubelet.max_pods < 0) || o->kubelet.pods_per_core < 0)
        return kp_error_set(KP_EINVALID, "maxPods and podsPerCore must not be negative");
    if ((err = check_reserved(&o->kubelet.kube_reserved, "kubeReserved")) < 0 ||
        (err = check_reserved(&o->kubelet.system_reserved, "systemReserved")) < 0 ||
        (err = check_threshold(&o->kubelet.eviction_memory, "memory.available")) < 0 ||
        (err = check_threshold(&o->kubelet.eviction_nodefs, "nodefs.available")) < 0)
        return err;
    return 0;
}

static int check_type(const kp_aws_type_info *t)
{
    if (t == NULL)
        return kp_error_set(KP_EINVALID, "no instance type given");
    if (t->vcpu <= 0 || t->memory_mib <= 0)
        return kp_error_set(KP_EINVALID, "instance type %s: vCPUs and memory must be positive",
                            t->name ? t->name : "(unnamed)");
    return 0;
}

static void subtract(kp_aws_resources *out, const kp_aws_resources *cap,
                     const kp_aws_resources *const overheads[], size_t n)
{
    *out = *cap;
    for (size_t i = 0; i < n; i++) {
        out->cpu_milli -= overheads[i]->cpu_milli;
        out->memory_bytes -= overheads[i]->memory_bytes;
        out->ephemeral_bytes -= overheads[i]->ephemeral_bytes;
    }
}

int kp_aws_allocatable_compute(kp_aws_allocatable *out, const kp_aws_type_info *t,
                               const kp_aws_alloc_opts *opts)
{
    kp_aws_alloc_opts defaults = KP_AWS_ALLOC_OPTS_INIT;
    const kp_aws_alloc_opts *o = opts ? opts : &defaults;
    kp_aws_allocatable r;
    int err;

    if ((err = check_type(t)) < 0 || (err = check_opts(o)) < 0)
        return err;
    memset(&r, 0, sizeof(r));
    r.capacity.cpu_milli = (int64_t)t->vcpu * 1000;
    r.capacity.memory_bytes = kp_aws_memory_capacity(t, o->vm_memory_overhead_percent);
    r.capacity.pods = pod_capacity(t, o);
    r.capacity.ephemeral_bytes = ephemeral_capacity(t, o);
    extended_capacity(&r.capacity, t, o);

    kube_reserved(&r.kube_reserved, t, o, r.capacity.pods);
    apply_reserved(&r.system_reserved, &o->kubelet.system_reserved);
    eviction_threshold(&r.eviction_threshold, &r.capacity, &o->kubelet);

    const kp_aws_resources *const overheads[] = {&r.kube_reserved, &r.system_reserved,
                                                 &r.eviction_threshold};
    subtract(&r.allocatable, &r.capacity, overheads, 3);
    *out = r;
    return 0;
}

void kp_aws_allocatable_to_catalog(kp_catalog *cat, kp_instance_type *it, const kp_aws_allocatable *a)
{
    static const struct {
        const char *name;
        size_t offset;
        int64_t unit; /* milli-units per unit of the field */
    } fields[] = {
        {"cpu", offsetof(kp_aws_resources, cpu_milli), 1},
        {"memory", offsetof(kp_aws_resources, memory_bytes), 1000},
        {"pods", offsetof(kp_aws_resources, pods), 1000},
        {"ephemeral-storage", offsetof(kp_aws_resources, ephemeral_bytes), 1000},
        {"nvidia.com/gpu", offsetof(kp_aws_resources, nvidia_gpu), 1000},
        {"amd.com/gpu", offsetof(kp_aws_resources, amd_gpu), 1000},
        {"habana.ai/gaudi", offsetof(kp_aws_resources, habana_gaudi), 1000},
        {"aws.amazon.com/neuron", offsetof(kp_aws_resources, neuron), 1000},
        {"aws.amazon.com/neuroncore", offsetof(kp_aws_resources, neuron_core), 1000},
        {"vpc.amazonaws.com/efa", offsetof(kp_aws_resources, efa), 1000},
        {"vpc.amazonaws.com/pod-eni", offsetof(kp_aws_resources, pod_eni), 1000},
        {"vpc.amazonaws.com/PrivateIPv4Address", offsetof(kp_aws_resources, private_ipv4), 1000},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        int64_t cap = *(const int64_t *)((const char *)&a->capacity + fields[i].offset);
        int64_t alloc = *(const int64_t *)((const char *)&a->allocatable + fields[i].offset);
        if (cap == 0) continue; /* Karpenter drops zero-valued resources */
        kp_it_set_capacity(cat, it, fields[i].name, cap * fields[i].unit);
        if (cap != alloc)
            kp_it_set_overhead(cat, it, fields[i].name, (cap - alloc) * fields[i].unit);
    }
}
