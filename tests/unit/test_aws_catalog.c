#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws_catalog.h"
#include "helpers/assert.h"

static const kp_aws_type_info *must_find(const char *name)
{
    const kp_aws_type_info *t = kp_aws_catalog_find(name);
    cr_assert_not_null(t, "%s is not in the catalog", name);
    return t;
}

Test(aws_catalog, table_is_sorted_unique_and_consistent)
{
    size_t n = kp_aws_catalog_count();
    cr_assert_geq(n, 300);
    bool arch_seen[2] = {false, false};
    for (size_t i = 0; i < n; i++) {
        const kp_aws_type_info *t = kp_aws_catalog_at(i);
        if (i > 0)
            cr_assert_lt(strcmp(kp_aws_catalog_at(i - 1)->name, t->name), 0, "order at %s",
                         t->name);
        char joined[64];
        snprintf(joined, sizeof(joined), "%s.%s", t->family, t->size);
        cr_expect_str_eq(joined, t->name);
        /* Category letters then generation digits start the family name. */
        size_t cl = strlen(t->category);
        cr_expect_gt(cl, 0, "%s category", t->name);
        cr_expect_eq(strncmp(t->family, t->category, cl), 0, "%s category", t->name);
        cr_expect_eq(t->generation, (int32_t)strtol(t->family + cl, NULL, 10), "%s generation",
                     t->name);
        cr_expect_gt(t->vcpu, 0, "%s", t->name);
        cr_expect_gt(t->memory_mib, 0, "%s", t->name);
        cr_expect_gt(t->default_card_max_enis, 0, "%s", t->name);
        cr_expect_gt(t->ipv4_per_eni, 1, "%s", t->name);
        cr_expect_gt(t->price_micro_usd, 0, "%s", t->name);
        cr_expect_eq((t->flags & KP_AWS_TYPE_BAREMETAL) != 0, strstr(t->size, "metal") != NULL,
                     "%s metal flag", t->name);
        cr_expect_eq((t->flags & KP_AWS_TYPE_BAREMETAL) != 0, t->hypervisor == KP_AWS_HV_NONE,
                     "%s hypervisor", t->name);
        arch_seen[t->arch] = true;
    }
    cr_assert_null(kp_aws_catalog_at(n));
    cr_assert(arch_seen[KP_AWS_ARCH_AMD64] && arch_seen[KP_AWS_ARCH_ARM64]);
    size_t table_n = 0;
    cr_assert_eq(kp_aws_catalog_table(&table_n), kp_aws_catalog_at(0));
    cr_assert_eq(table_n, n);
}

Test(aws_catalog, required_families_have_their_sizes)
{
    static const char *const families[] = {
        "m5", "m6i", "m7i", "m6a", "m7a", "c5", "c6i", "c7i", "r5", "r6i", "r7i",
        "m6g", "m7g", "c6g", "c7g", "r6g", "r7g",
    };
    static const char *const sizes[] = {"large",   "xlarge",   "2xlarge", "4xlarge",
                                        "8xlarge", "12xlarge", "16xlarge"};
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            char name[64];
            /* c5 goes 4xlarge, 9xlarge, 12xlarge, 18xlarge: no 8x or 16x. */
            if (strcmp(families[f], "c5") == 0 &&
                (strcmp(sizes[s], "8xlarge") == 0 || strcmp(sizes[s], "16xlarge") == 0))
                continue;
            snprintf(name, sizeof(name), "%s.%s", families[f], sizes[s]);
            cr_expect_not_null(kp_aws_catalog_find(name), "%s missing", name);
        }
    }
    static const char *const others[] = {
        "t3.micro", "t3.2xlarge", "t3a.large", "t4g.medium", "g5.xlarge", "g5.48xlarge",
        "g6.xlarge", "p4d.24xlarge", "p5.48xlarge", "m5a.large", "c5a.large", "r5a.large",
        "m5n.large", "c5n.large", "m8g.large", "c8g.large", "r8g.large", "g4dn.xlarge",
        "inf2.xlarge", "c5.9xlarge", "c5.18xlarge",
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        cr_expect_not_null(kp_aws_catalog_find(others[i]), "%s missing", others[i]);
}

Test(aws_catalog, row_facts)
{
    const kp_aws_type_info *m5 = must_find("m5.large");
    cr_assert_eq(m5->vcpu, 2);
    cr_assert_eq(m5->memory_mib, 8192);
    cr_assert_eq(m5->arch, KP_AWS_ARCH_AMD64);
    cr_assert_eq(m5->price_micro_usd, 96000); /* 0.096 $/h */
    cr_assert_eq(m5->flags & KP_AWS_TYPE_BURSTABLE, 0);

    const kp_aws_type_info *t4g = must_find("t4g.micro");
    cr_assert_eq(t4g->arch, KP_AWS_ARCH_ARM64);
    cr_assert_neq(t4g->flags & KP_AWS_TYPE_BURSTABLE, 0);

    const kp_aws_type_info *g5 = must_find("g5.48xlarge");
    cr_assert_str_eq(g5->gpu_name, "a10g");
    cr_assert_str_eq(g5->gpu_manufacturer, "nvidia");
    cr_assert_eq(g5->gpu_count, 8);
    cr_assert_gt(g5->gpu_memory_mib, 20000);
    cr_assert_null(must_find("c6i.large")->gpu_name);
}

Test(aws_catalog, lookup_hits_and_misses)
{
    const kp_aws_type_info *t = NULL;
    cr_assert_eq(kp_aws_catalog_lookup(&t, "c7g.xlarge"), 0);
    cr_assert_str_eq(t->name, "c7g.xlarge");
    cr_assert_eq(t, kp_aws_catalog_find("c7g.xlarge"));

    static const char *const misses[] = {"m5.huge", "M5.LARGE", "m5", "m5.large ", "zz.large",
                                         "a.large", "~"};
    for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++) {
        static const kp_aws_type_info sentinel;
        const kp_aws_type_info *untouched = &sentinel;
        const kp_aws_type_info *out = untouched;
        cr_expect_null(kp_aws_catalog_find(misses[i]), "%s", misses[i]);
        cr_expect_eq(kp_aws_catalog_lookup(&out, misses[i]), KP_ENOTFOUND, "%s", misses[i]);
        cr_expect_eq(out, untouched);
        cr_expect(strstr(kp_error_last(), misses[i]) != NULL, "%s", kp_error_last());
    }
    cr_assert_eq(kp_aws_catalog_lookup(&t, ""), KP_EINVALID);
    cr_assert_eq(kp_aws_catalog_lookup(&t, NULL), KP_EINVALID);
    cr_assert_null(kp_aws_catalog_find(NULL));
    /* First and last rows are reachable (bsearch edges). */
    size_t n = kp_aws_catalog_count();
    cr_assert_eq(kp_aws_catalog_find(kp_aws_catalog_at(0)->name), kp_aws_catalog_at(0));
    cr_assert_eq(kp_aws_catalog_find(kp_aws_catalog_at(n - 1)->name), kp_aws_catalog_at(n - 1));
}

typedef struct expected_label {
    const char *key;
    const char *value; /* NULL: must be absent */
} expected_label;

static void check_labels(const char *name, enum kp_aws_ami_family fam, const expected_label *exp,
                         size_t n_exp)
{
    kp_aws_label labels[KP_AWS_MAX_LABELS];
    size_t n = 0;
    KP_ASSERT_OK(kp_aws_catalog_labels(labels, KP_AWS_MAX_LABELS, &n, must_find(name), fam));
    for (size_t i = 1; i < n; i++)
        cr_assert_lt(strcmp(labels[i - 1].key, labels[i].key), 0, "%s: labels unsorted", name);
    for (size_t i = 0; i < n_exp; i++) {
        const char *v = kp_aws_label_get(labels, n, exp[i].key);
        if (exp[i].value == NULL)
            cr_expect_null(v, "%s: %s should be absent, is %s", name, exp[i].key, v);
        else if (v == NULL)
            cr_expect_fail("%s: %s missing", name, exp[i].key);
        else
            cr_expect_str_eq(v, exp[i].value, "%s: %s", name, exp[i].key);
    }
}

#define CHECK_LABELS(name, fam, ...)                                                               \
    do {                                                                                           \
        static const expected_label exp_[] = {__VA_ARGS__};                                        \
        check_labels(name, fam, exp_, sizeof(exp_) / sizeof(exp_[0]));                            \
    } while (0)

Test(aws_catalog, labels_general_purpose)
{
    CHECK_LABELS("m5.large", KP_AWS_AMI_AL2023,
                 {"node.kubernetes.io/instance-type", "m5.large"},
                 {"kubernetes.io/arch", "amd64"}, {"kubernetes.io/os", "linux"},
                 {"topology.kubernetes.io/region", "us-east-1"},
                 {"karpenter.k8s.aws/instance-category", "m"},
                 {"karpenter.k8s.aws/instance-family", "m5"},
                 {"karpenter.k8s.aws/instance-generation", "5"},
                 {"karpenter.k8s.aws/instance-size", "large"},
                 {"karpenter.k8s.aws/instance-cpu", "2"},
                 {"karpenter.k8s.aws/instance-memory", "8192"},
                 {"karpenter.k8s.aws/instance-hypervisor", "nitro"},
                 {"karpenter.k8s.aws/instance-network-bandwidth", "750"},
                 {"karpenter.k8s.aws/instance-cpu-manufacturer", "intel"},
                 {"karpenter.k8s.aws/instance-capability-flex", "false"},
                 {"karpenter.k8s.aws/instance-encryption-in-transit-supported", "false"},
                 {"karpenter.k8s.aws/instance-local-nvme", NULL},
                 {"karpenter.k8s.aws/instance-gpu-name", NULL},
                 {"karpenter.k8s.aws/instance-accelerator-name", NULL});
}

Test(aws_catalog, labels_metal_graviton_and_flex)
{
    CHECK_LABELS("m7g.metal", KP_AWS_AMI_AL2023, {"kubernetes.io/arch", "arm64"},
                 {"karpenter.k8s.aws/instance-hypervisor", ""},
                 {"karpenter.k8s.aws/instance-cpu", "64"},
                 {"karpenter.k8s.aws/instance-memory", "262144"},
                 {"karpenter.k8s.aws/instance-cpu-manufacturer", "aws"});
    CHECK_LABELS("c7i-flex.large", KP_AWS_AMI_AL2023,
                 {"karpenter.k8s.aws/instance-family", "c7i-flex"},
                 {"karpenter.k8s.aws/instance-category", "c"},
                 {"karpenter.k8s.aws/instance-generation", "7"},
                 {"karpenter.k8s.aws/instance-capability-flex", "true"});
}

Test(aws_catalog, labels_gpu_and_accelerator)
{
    CHECK_LABELS("g5.xlarge", KP_AWS_AMI_AL2023, {"karpenter.k8s.aws/instance-gpu-name", "a10g"},
                 {"karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"},
                 {"karpenter.k8s.aws/instance-gpu-count", "1"},
                 {"karpenter.k8s.aws/instance-gpu-memory", "22888"},
                 {"karpenter.k8s.aws/instance-local-nvme", "250"},
                 {"karpenter.k8s.aws/instance-encryption-in-transit-supported", "true"});
    CHECK_LABELS("inf2.xlarge", KP_AWS_AMI_AL2023,
                 {"karpenter.k8s.aws/instance-category", "inf"},
                 {"karpenter.k8s.aws/instance-generation", "2"},
                 {"karpenter.k8s.aws/instance-accelerator-name", "inferentia2"},
                 {"karpenter.k8s.aws/instance-accelerator-manufacturer", "aws"},
                 {"karpenter.k8s.aws/instance-accelerator-count", "1"},
                 {"karpenter.k8s.aws/instance-network-bandwidth", "2083"},
                 {"karpenter.k8s.aws/instance-gpu-count", NULL});
}

Test(aws_catalog, labels_windows_os)
{
    CHECK_LABELS("m5.large", KP_AWS_AMI_WINDOWS, {"kubernetes.io/os", "windows"});
    CHECK_LABELS("m6g.large", KP_AWS_AMI_WINDOWS, {"kubernetes.io/os", NULL},
                 {"kubernetes.io/arch", "arm64"});
    CHECK_LABELS("m6g.large", KP_AWS_AMI_BOTTLEROCKET, {"kubernetes.io/os", "linux"});
}

Test(aws_catalog, labels_need_room)
{
    kp_aws_label labels[4];
    size_t n = 99;
    cr_assert_eq(kp_aws_catalog_labels(labels, 4, &n, must_find("p5.48xlarge"), 0),
                 KP_ETOOLARGE);
    cr_assert_eq(n, 99);
    /* Every row fits in KP_AWS_MAX_LABELS and the values were not truncated. */
    for (size_t i = 0; i < kp_aws_catalog_count(); i++) {
        const kp_aws_type_info *t = kp_aws_catalog_at(i);
        kp_aws_label all[KP_AWS_MAX_LABELS];
        cr_assert_eq(kp_aws_catalog_labels(all, KP_AWS_MAX_LABELS, &n, t, 0), 0);
        cr_assert_str_eq(kp_aws_label_get(all, n, "node.kubernetes.io/instance-type"), t->name);
    }
}

Test(aws_catalog, offerings_zones_and_prices)
{
    const kp_aws_type_info *t = must_find("m5.large");
    kp_aws_offering off[KP_AWS_MAX_OFFERINGS];
    cr_assert_eq(kp_aws_catalog_offerings(off, t), 6);
    for (size_t i = 0; i < 6; i++) {
        cr_assert_str_eq(off[i].zone, kp_aws_catalog_zone(i / 2));
        cr_assert(off[i].available);
        if (off[i].capacity_type == KP_AWS_CAPACITY_ON_DEMAND) {
            cr_assert_eq(off[i].price_micro_usd, 96000);
        } else {
            cr_assert_eq(off[i].capacity_type, KP_AWS_CAPACITY_SPOT);
            cr_assert_eq(off[i].price_micro_usd, kp_aws_catalog_spot_price(t, i / 2));
        }
    }
    cr_assert_str_eq(off[0].zone, "us-east-1a");
    cr_assert_str_eq(off[5].zone, "us-east-1c");
    cr_assert_str_eq(kp_aws_capacity_type_name(off[1].capacity_type), "spot");
    cr_assert_str_eq(kp_aws_capacity_type_name(off[0].capacity_type), "on-demand");
    cr_assert_null(kp_aws_catalog_zone(3));
    cr_assert_eq(kp_aws_catalog_spot_price(t, 3), 0);
}

Test(aws_catalog, spot_estimates_are_discounted_and_vary_by_zone)
{
    size_t zone_varies = 0;
    for (size_t i = 0; i < kp_aws_catalog_count(); i++) {
        const kp_aws_type_info *t = kp_aws_catalog_at(i);
        int64_t first = kp_aws_catalog_spot_price(t, 0);
        for (size_t z = 0; z < KP_AWS_ZONE_COUNT; z++) {
            int64_t spot = kp_aws_catalog_spot_price(t, z);
            cr_assert_gt(spot, 0, "%s", t->name);
            /* Between 30% x 0.95 and 55% x 1.05 of on-demand. */
            cr_assert_geq(spot * 1000, t->price_micro_usd * 284, "%s", t->name);
            cr_assert_leq(spot * 1000, t->price_micro_usd * 578 + 1000, "%s", t->name);
            cr_assert_eq(spot, kp_aws_catalog_spot_price(t, z), "deterministic");
            if (spot != first)
                zone_varies++;
        }
    }
    cr_assert_gt(zone_varies, kp_aws_catalog_count() / 2);
    /* General purpose is cheaper relative to on-demand than training GPUs. */
    const kp_aws_type_info *m5 = must_find("m5.24xlarge");
    const kp_aws_type_info *p5 = must_find("p5.48xlarge");
    cr_assert_lt(kp_aws_catalog_spot_price(m5, 0) * 1000 / m5->price_micro_usd,
                 kp_aws_catalog_spot_price(p5, 0) * 1000 / p5->price_micro_usd);
}

Test(aws_catalog, unpriced_type_has_no_available_offering)
{
    kp_aws_type_info t = *must_find("m5.large");
    t.price_micro_usd = 0;
    kp_aws_offering off[KP_AWS_MAX_OFFERINGS];
    size_t n = kp_aws_catalog_offerings(off, &t);
    for (size_t i = 0; i < n; i++) {
        cr_assert_not(off[i].available);
        cr_assert_eq(off[i].price_micro_usd, 0);
    }
}

Test(aws_catalog, names)
{
    cr_assert_str_eq(kp_aws_arch_name(KP_AWS_ARCH_AMD64), "amd64");
    cr_assert_str_eq(kp_aws_arch_name(KP_AWS_ARCH_ARM64), "arm64");
    cr_assert_str_eq(kp_aws_hypervisor_name(KP_AWS_HV_NITRO), "nitro");
    cr_assert_str_eq(kp_aws_hypervisor_name(KP_AWS_HV_XEN), "xen");
    cr_assert_str_eq(kp_aws_hypervisor_name(KP_AWS_HV_NONE), "");
    for (size_t i = 0; i < kp_aws_catalog_count(); i++) {
        const char *name = kp_aws_catalog_at(i)->name;
        for (const char *p = name; *p; p++)
            cr_assert(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '.' ||
                          *p == '-',
                      "%s", name);
    }
}
