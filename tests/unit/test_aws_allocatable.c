#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws_allocatable.h"
#include "cloud/aws_catalog.h"

#define MI ((int64_t)1 << 20)
#define GI ((int64_t)1 << 30)

static const kp_aws_type_info *must_find(const char *name)
{
    const kp_aws_type_info *t = kp_aws_catalog_find(name);
    cr_assert_not_null(t, "%s is not in the catalog", name);
    return t;
}

static kp_aws_allocatable must_compute(const kp_aws_type_info *t, const kp_aws_alloc_opts *o)
{
    kp_aws_allocatable a;
    int err = kp_aws_allocatable_compute(&a, t, o);
    cr_assert_eq(err, 0, "%s: %s", t->name, kp_error_last());
    return a;
}

/*
 * Allocatable resources Karpenter publishes for these types (AL2023, default
 * settings: VM overhead 0.075, no reserved ENIs, 20Gi root volume).
 */
static const struct published {
    const char *name;
    int64_t cpu_milli, memory_mi, pods, ephemeral_gi;
    int64_t nvidia_gpu, amd_gpu, neuron, neuron_core, efa, pod_eni;
} published[] = {
    {"m5.large", 1930, 6903, 29, 17, 0, 0, 0, 0, 0, 9},
    {"m5.24xlarge", 95690, 355262, 737, 17, 0, 0, 0, 0, 0, 107},
    {"m6i.xlarge", 3920, 14162, 58, 17, 0, 0, 0, 0, 0, 18},
    {"m7i.metal-24xl", 95690, 355262, 737, 17, 0, 0, 0, 0, 0, 107},
    {"m6a.48xlarge", 191450, 718987, 737, 17, 0, 0, 0, 0, 1, 107},
    {"m7a.medium", 940, 3345, 8, 17, 0, 0, 0, 0, 0, 4},
    {"c5.large", 1930, 3114, 29, 17, 0, 0, 0, 0, 0, 9},
    {"c5n.18xlarge", 71750, 173400, 737, 17, 0, 0, 0, 0, 1, 107},
    {"c6i.32xlarge", 127610, 234021, 737, 17, 0, 0, 0, 0, 1, 107},
    {"c7i-flex.large", 1930, 3114, 29, 17, 0, 0, 0, 0, 0, 3},
    {"r5.2xlarge", 7910, 59627, 58, 17, 0, 0, 0, 0, 0, 38},
    {"r6i.16xlarge", 63770, 476504, 737, 17, 0, 0, 0, 0, 0, 107},
    {"r7i.large", 1930, 14481, 29, 17, 0, 0, 0, 0, 0, 9},
    {"t3.micro", 1930, 548, 4, 17, 0, 0, 0, 0, 0, 0},
    {"t3.nano", 1930, 74, 4, 17, 0, 0, 0, 0, 0, 0},
    {"t3a.small", 1930, 1451, 8, 17, 0, 0, 0, 0, 0, 0},
    {"t4g.nano", 1930, 15, 4, 17, 0, 0, 0, 0, 0, 0},
    {"t4g.2xlarge", 7910, 29258, 58, 17, 0, 0, 0, 0, 0, 0},
    {"m6g.medium", 940, 3286, 8, 17, 0, 0, 0, 0, 0, 4},
    {"m7g.metal", 63770, 233962, 737, 17, 0, 0, 0, 0, 1, 107},
    {"c6g.large", 1930, 3055, 29, 17, 0, 0, 0, 0, 0, 9},
    {"c7g.16xlarge", 63770, 112720, 737, 17, 0, 0, 0, 0, 1, 107},
    {"r6g.xlarge", 3920, 29258, 58, 17, 0, 0, 0, 0, 0, 18},
    {"r8g.48xlarge", 191450, 1446378, 737, 17, 0, 0, 0, 0, 1, 107},
    {"m8g.metal-24xl", 95690, 355203, 737, 17, 0, 0, 0, 0, 1, 107},
    {"g5.xlarge", 3920, 14162, 58, 17, 1, 0, 0, 0, 0, 4},
    {"g5.48xlarge", 191450, 723299, 345, 17, 8, 0, 0, 0, 1, 115},
    {"g6.2xlarge", 7910, 29317, 58, 17, 1, 0, 0, 0, 0, 38},
    {"g6f.large", 1930, 7002, 20, 17, 0, 0, 0, 0, 0, 10},
    {"g4dn.12xlarge", 47810, 178933, 234, 17, 4, 0, 0, 0, 1, 54},
    {"g4ad.xlarge", 3920, 14712, 8, 17, 0, 1, 0, 0, 0, 12},
    {"g5g.xlarge", 3920, 6525, 58, 17, 1, 0, 0, 0, 0, 18},
    {"p4d.24xlarge", 95690, 1082712, 737, 17, 8, 0, 0, 0, 4, 62},
    {"p5.48xlarge", 191450, 1938410, 100, 17, 8, 0, 0, 0, 32, 120},
    {"p5en.48xlarge", 191450, 1937332, 198, 17, 8, 0, 0, 0, 16, 120},
    {"inf2.xlarge", 3920, 14162, 58, 17, 0, 0, 1, 2, 0, 18},
    {"inf2.48xlarge", 191450, 718987, 737, 17, 0, 0, 12, 24, 0, 107},
    {"trn1.32xlarge", 127610, 481894, 247, 17, 0, 0, 16, 32, 8, 82},
    {"c6in.32xlarge", 127610, 237794, 394, 17, 0, 0, 0, 0, 2, 106},
    {"m5zn.metal", 47810, 173400, 737, 17, 0, 0, 0, 0, 1, 107},
};

Test(aws_allocatable, matches_published_figures)
{
    size_t n = sizeof(published) / sizeof(published[0]);
    cr_assert_geq(n, 25);
    for (size_t i = 0; i < n; i++) {
        const struct published *p = &published[i];
        kp_aws_allocatable a = must_compute(must_find(p->name), NULL);
        const kp_aws_resources *r = &a.allocatable;
        cr_expect_eq(r->cpu_milli, p->cpu_milli, "%s cpu %lld", p->name, (long long)r->cpu_milli);
        cr_expect_eq(r->memory_bytes, p->memory_mi * MI, "%s memory %lld", p->name,
                     (long long)r->memory_bytes);
        cr_expect_eq(r->pods, p->pods, "%s pods %lld", p->name, (long long)r->pods);
        cr_expect_eq(r->ephemeral_bytes, p->ephemeral_gi * GI, "%s ephemeral", p->name);
        cr_expect_eq(r->nvidia_gpu, p->nvidia_gpu, "%s nvidia.com/gpu", p->name);
        cr_expect_eq(r->amd_gpu, p->amd_gpu, "%s amd.com/gpu", p->name);
        cr_expect_eq(r->neuron, p->neuron, "%s neuron", p->name);
        cr_expect_eq(r->neuron_core, p->neuron_core, "%s neuroncore", p->name);
        cr_expect_eq(r->efa, p->efa, "%s efa", p->name);
        cr_expect_eq(r->pod_eni, p->pod_eni, "%s pod-eni", p->name);
        cr_expect_eq(r->private_ipv4, 0, "%s PrivateIPv4Address on Linux", p->name);
    }
}

/* The worked example: a1.medium is not in the catalog, so give its raw specs. */
static kp_aws_type_info a1_medium(void)
{
    kp_aws_type_info t;
    memset(&t, 0, sizeof(t));
    t.name = "a1.medium";
    t.vcpu = 1;
    t.memory_mib = 2048;
    t.arch = KP_AWS_ARCH_ARM64;
    t.default_card_max_enis = 2;
    t.ipv4_per_eni = 4;
    return t;
}

Test(aws_allocatable, a1_medium_worked_example)
{
    kp_aws_type_info t = a1_medium();
    kp_aws_allocatable a = must_compute(&t, NULL);
    cr_assert_eq(a.capacity.cpu_milli, 1000);
    cr_assert_eq(a.capacity.memory_bytes, 1835 * MI); /* 2048 - 64 - ceil(1984 x 0.075) */
    cr_assert_eq(a.capacity.pods, 8);
    cr_assert_eq(a.capacity.ephemeral_bytes, 20 * GI);
    cr_assert_eq(a.kube_reserved.cpu_milli, 60);
    cr_assert_eq(a.kube_reserved.memory_bytes, 343 * MI);
    cr_assert_eq(a.kube_reserved.ephemeral_bytes, GI);
    cr_assert_eq(a.eviction_threshold.memory_bytes, 100 * MI);
    cr_assert_eq(a.eviction_threshold.ephemeral_bytes, 2 * GI);
    cr_assert_eq(a.allocatable.memory_bytes, 1392 * MI);
    cr_assert_eq(a.allocatable.cpu_milli, 940);
    cr_assert_eq(a.allocatable.ephemeral_bytes, 17 * GI);
    cr_assert_eq(a.allocatable.pods, 8);
}

Test(aws_allocatable, arm64_loses_cma_memory_before_overhead)
{
    kp_aws_type_info t = a1_medium();
    cr_assert_eq(kp_aws_memory_capacity(&t, 0.075), 1835 * MI);
    t.arch = KP_AWS_ARCH_AMD64;
    cr_assert_eq(kp_aws_memory_capacity(&t, 0.075), (2048 - 154) * MI); /* ceil(153.6) */
    cr_assert_eq(kp_aws_memory_capacity(&t, 0.0), 2048 * MI);
}

Test(aws_allocatable, kube_reserved_cpu_bands)
{
    static const int64_t cases[][2] = {
        {1, 60}, {2, 70}, {4, 80}, {8, 90}, {16, 110}, {96, 310}, {192, 550}, {0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(kp_aws_kube_reserved_cpu(cases[i][0] * 1000), cases[i][1], "%lld vCPU",
                     (long long)cases[i][0]);
    cr_assert_eq(kp_aws_kube_reserved_cpu(500), 30);
    cr_assert_eq(kp_aws_kube_reserved_cpu(4999), 82); /* 60+10+10+2 (2.4975 truncated) */
}

/* Karpenter truncates each band's float product; our exact integer fractions
 * must agree with that for every millicore count a node can have. */
Test(aws_allocatable, kube_reserved_cpu_agrees_with_float_bands)
{
    static const double pct[] = {0.06, 0.01, 0.005, 0.0025};
    static const int64_t start[] = {0, 1000, 2000, 4000};
    static const int64_t end[] = {1000, 2000, 4000, (int64_t)1 << 31};
    for (int64_t cpu = 0; cpu <= 1000000; cpu += (cpu < 20000 ? 1 : 7)) {
        int64_t want = 0;
        for (int b = 0; b < 4 && cpu >= start[b]; b++) {
            double r = (double)((cpu < end[b] ? cpu : end[b]) - start[b]);
            want += (int64_t)(r * pct[b]);
        }
        cr_assert_eq(kp_aws_kube_reserved_cpu(cpu), want, "cpu %lldm", (long long)cpu);
    }
}

Test(aws_allocatable, eni_limited_pods)
{
    const kp_aws_type_info *m5 = must_find("m5.large"); /* 3 ENIs x 10 IPs */
    cr_assert_eq(kp_aws_eni_limited_pods(m5, 0, 0), 29);
    cr_assert_eq(kp_aws_eni_limited_pods(m5, 1, 0), 20);
    cr_assert_eq(kp_aws_eni_limited_pods(m5, 1, 1), 11);
    cr_assert_eq(kp_aws_eni_limited_pods(m5, 3, 0), 0);
    cr_assert_eq(kp_aws_eni_limited_pods(m5, 7, 0), 0);
    /* p5.48xlarge has 64 ENIs over 32 cards but only 2 on the default card. */
    cr_assert_eq(kp_aws_eni_limited_pods(must_find("p5.48xlarge"), 0, 0), 100);
}

Test(aws_allocatable, max_pods_keeps_eni_memory_overhead_on_al2023)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.has_max_pods = true;
    o.kubelet.max_pods = 20;
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.capacity.pods, 20);
    cr_assert_eq(a.kube_reserved.memory_bytes, (11 * 29 + 255) * MI);
    cr_assert_eq(a.allocatable.memory_bytes, 6903 * MI);

    o.ami_family = KP_AWS_AMI_AL2;
    cr_assert_eq(must_compute(must_find("m5.large"), &o).allocatable.memory_bytes, 6903 * MI);
}

Test(aws_allocatable, bottlerocket_uses_final_pods_and_ignores_pods_per_core)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.ami_family = KP_AWS_AMI_BOTTLEROCKET;
    o.kubelet.has_max_pods = true;
    o.kubelet.max_pods = 20;
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.capacity.pods, 20);
    cr_assert_eq(a.kube_reserved.memory_bytes, (11 * 20 + 255) * MI);
    cr_assert_eq(a.allocatable.memory_bytes, (7577 - 475 - 100) * MI);

    o.kubelet.has_max_pods = false;
    o.kubelet.pods_per_core = 2;
    a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.capacity.pods, 29);
}

Test(aws_allocatable, pods_per_core_caps_density)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.pods_per_core = 4;
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o); /* 2 vCPU */
    cr_assert_eq(a.capacity.pods, 8);
    /* Still the ENI-limited 29 for kube-reserved memory on AL2023. */
    cr_assert_eq(a.kube_reserved.memory_bytes, (11 * 29 + 255) * MI);

    o.kubelet.pods_per_core = 100; /* above the ENI limit: no effect */
    cr_assert_eq(must_compute(must_find("m5.large"), &o).capacity.pods, 29);

    o.kubelet.pods_per_core = 4;
    o.kubelet.has_max_pods = true;
    o.kubelet.max_pods = 5; /* the smaller of the two wins */
    cr_assert_eq(must_compute(must_find("m5.large"), &o).capacity.pods, 5);
}

Test(aws_allocatable, windows_defaults)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.ami_family = KP_AWS_AMI_WINDOWS;
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.capacity.pods, 110);
    cr_assert_eq(a.kube_reserved.memory_bytes, (11 * 110 + 255) * MI);
    cr_assert_eq(a.capacity.ephemeral_bytes, 50 * GI);
    cr_assert_eq(a.allocatable.ephemeral_bytes, 44 * GI); /* 50 - 1 - 5 */
    cr_assert_eq(a.capacity.private_ipv4, 9);
}

Test(aws_allocatable, reserved_enis_reduce_pods_not_memory_overhead)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.reserved_enis = 1;
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.capacity.pods, 20);
    cr_assert_eq(a.allocatable.memory_bytes, 6903 * MI);

    o.reserved_enis = 2;
    cr_assert_eq(must_compute(must_find("t3.micro"), &o).capacity.pods, 0);
}

Test(aws_allocatable, kube_and_system_reserved_overrides)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.kube_reserved.has_cpu = true;
    o.kubelet.kube_reserved.cpu_milli = 500;
    o.kubelet.kube_reserved.has_memory = true;
    o.kubelet.kube_reserved.memory_bytes = GI;
    o.kubelet.system_reserved.has_cpu = true;
    o.kubelet.system_reserved.cpu_milli = 100;
    o.kubelet.system_reserved.has_ephemeral = true;
    o.kubelet.system_reserved.ephemeral_bytes = 3 * GI;
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.kube_reserved.cpu_milli, 500);
    cr_assert_eq(a.kube_reserved.ephemeral_bytes, GI); /* not overridden: default stays */
    cr_assert_eq(a.system_reserved.memory_bytes, 0);
    cr_assert_eq(a.allocatable.cpu_milli, 2000 - 500 - 100);
    cr_assert_eq(a.allocatable.memory_bytes, 7577 * MI - GI - 100 * MI);
    cr_assert_eq(a.allocatable.ephemeral_bytes, 20 * GI - GI - 3 * GI - 2 * GI);

    /* An explicit zero is an override too. */
    memset(&o.kubelet, 0, sizeof(o.kubelet));
    o.kubelet.kube_reserved.has_memory = true;
    a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.allocatable.memory_bytes, (7577 - 100) * MI);
}

Test(aws_allocatable, eviction_hard_percent_and_quantity)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.eviction_memory.kind = KP_AWS_THRESHOLD_PERCENT;
    o.kubelet.eviction_memory.percent = 5;
    o.kubelet.eviction_nodefs.kind = KP_AWS_THRESHOLD_PERCENT;
    o.kubelet.eviction_nodefs.percent = 100; /* "100%" disables the signal */
    kp_aws_allocatable a = must_compute(must_find("m5.large"), &o);
    /* 5% of 7577Mi is 397253017.6 bytes, rounded up. */
    cr_assert_eq(a.eviction_threshold.memory_bytes, 397253018);
    cr_assert_eq(a.allocatable.memory_bytes, 7577 * MI - 574 * MI - 397253018);
    cr_assert_eq(a.eviction_threshold.ephemeral_bytes, 0);
    cr_assert_eq(a.allocatable.ephemeral_bytes, 19 * GI);

    o.kubelet.eviction_memory.kind = KP_AWS_THRESHOLD_QUANTITY;
    o.kubelet.eviction_memory.bytes = 500 * MI;
    o.kubelet.eviction_nodefs.kind = KP_AWS_THRESHOLD_QUANTITY;
    o.kubelet.eviction_nodefs.bytes = GI;
    a = must_compute(must_find("m5.large"), &o);
    cr_assert_eq(a.allocatable.memory_bytes, (7577 - 574 - 500) * MI);
    cr_assert_eq(a.allocatable.ephemeral_bytes, 18 * GI);
}

Test(aws_allocatable, volume_size_and_instance_store)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.ephemeral_volume_bytes = 100 * GI;
    cr_assert_eq(must_compute(must_find("m5.large"), &o).allocatable.ephemeral_bytes, 89 * GI);

    o.instance_store_raid0 = true;
    kp_aws_allocatable a = must_compute(must_find("g5.xlarge"), &o); /* 250 GB NVMe */
    cr_assert_eq(a.capacity.ephemeral_bytes, 250000000000);
    cr_assert_eq(a.allocatable.ephemeral_bytes, 250000000000 - GI - 25000000000);
    /* Without instance storage RAID0 falls back to the volume. */
    cr_assert_eq(must_compute(must_find("m5.large"), &o).capacity.ephemeral_bytes, 100 * GI);
}

Test(aws_allocatable, efa_only_interfaces)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.has_network_interfaces = true;
    o.efa_only_interfaces = 2;
    o.efa_only_interfaces_card0 = 1;
    kp_aws_allocatable a = must_compute(must_find("p5.48xlarge"), &o);
    cr_assert_eq(a.capacity.efa, 2);
    cr_assert_eq(a.capacity.pods, 51); /* 1 usable ENI x 49 + 2 */
    cr_assert_eq(a.kube_reserved.memory_bytes, (11 * 51 + 255) * MI);

    o.efa_only_interfaces = 0;
    o.efa_only_interfaces_card0 = 0;
    cr_assert_eq(must_compute(must_find("p5.48xlarge"), &o).capacity.efa, 0);
}

Test(aws_allocatable, vm_overhead_option)
{
    kp_aws_alloc_opts o;
    kp_aws_alloc_opts_init(&o);
    cr_assert_eq(o.vm_memory_overhead_percent, 0.075);
    o.vm_memory_overhead_percent = 0;
    cr_assert_eq(must_compute(must_find("m5.large"), &o).capacity.memory_bytes, 8192 * MI);
    o.vm_memory_overhead_percent = 0.1;
    cr_assert_eq(must_compute(must_find("m5.large"), &o).capacity.memory_bytes,
                 (8192 - 820) * MI);
}

Test(aws_allocatable, tiny_type_can_go_negative)
{
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.kube_reserved.has_memory = true;
    o.kubelet.kube_reserved.memory_bytes = 4 * GI;
    kp_aws_allocatable a = must_compute(must_find("t3.nano"), &o);
    cr_assert_lt(a.allocatable.memory_bytes, 0);
}

Test(aws_allocatable, rejects_bad_input)
{
    kp_aws_allocatable a;
    kp_aws_type_info t = a1_medium();
    static const double bad_overheads[] = {-0.1, 1.0, 7.5, NAN};
    for (size_t i = 0; i < sizeof(bad_overheads) / sizeof(bad_overheads[0]); i++) {
        kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
        o.vm_memory_overhead_percent = bad_overheads[i];
        cr_expect_eq(kp_aws_allocatable_compute(&a, &t, &o), KP_EINVALID);
    }
    kp_aws_alloc_opts o = KP_AWS_ALLOC_OPTS_INIT;
    o.reserved_enis = -1;
    cr_assert_eq(kp_aws_allocatable_compute(&a, &t, &o), KP_EINVALID);

    o = (kp_aws_alloc_opts)KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.has_max_pods = true;
    o.kubelet.max_pods = -3;
    cr_assert_eq(kp_aws_allocatable_compute(&a, &t, &o), KP_EINVALID);

    o = (kp_aws_alloc_opts)KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.eviction_nodefs.kind = KP_AWS_THRESHOLD_PERCENT;
    o.kubelet.eviction_nodefs.percent = 150;
    cr_assert_eq(kp_aws_allocatable_compute(&a, &t, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "nodefs.available") != NULL, "%s", kp_error_last());

    o = (kp_aws_alloc_opts)KP_AWS_ALLOC_OPTS_INIT;
    o.kubelet.system_reserved.has_cpu = true;
    o.kubelet.system_reserved.cpu_milli = -1;
    cr_assert_eq(kp_aws_allocatable_compute(&a, &t, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "systemReserved") != NULL, "%s", kp_error_last());

    cr_assert_eq(kp_aws_allocatable_compute(&a, NULL, NULL), KP_EINVALID);
    t.vcpu = 0;
    cr_assert_eq(kp_aws_allocatable_compute(&a, &t, NULL), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "a1.medium") != NULL, "%s", kp_error_last());
}

Test(aws_allocatable, output_untouched_on_error)
{
    kp_aws_allocatable a;
    memset(&a, 0x5a, sizeof(a));
    kp_aws_type_info t = a1_medium();
    t.memory_mib = 0;
    cr_assert_eq(kp_aws_allocatable_compute(&a, &t, NULL), KP_EINVALID);
    cr_assert_eq(a.capacity.cpu_milli, 0x5a5a5a5a5a5a5a5a);
}
