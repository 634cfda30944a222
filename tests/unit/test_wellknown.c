/*
 * Tests for shared/api/wellknown.c: Karpenter's well-known label set (core and
 * the AWS provider's additions), restricted labels, domains and aliases.
 */
#include "api/wellknown.h"

#include "api/crd_tables.h"

#include <criterion/criterion.h>
#include <string.h>

Test(wellknown, list_is_sorted_unique_and_complete)
{
    const char *const *labels = kp_well_known_labels();
    size_t n = 0;
    for (; labels[n]; n++) {
        if (n > 0)
            cr_expect_lt(strcmp(labels[n - 1], labels[n]), 0, "%s before %s", labels[n - 1],
                         labels[n]);
        cr_expect(kp_label_is_well_known(labels[n]), "%s", labels[n]);
    }
    /* 8 from core Karpenter, 29 more from the AWS provider (windows-build is in both). */
    cr_expect_eq(n, 37);
}

static const char *const well_known_keys[] = {
    KP_LABEL_NODEPOOL,
    KP_LABEL_ZONE,
    KP_LABEL_REGION,
    KP_LABEL_INSTANCE_TYPE,
    KP_LABEL_ARCH,
    KP_LABEL_OS,
    KP_LABEL_CAPACITY_TYPE,
    KP_LABEL_WINDOWS_BUILD,
    KP_LABEL_ZONE_ID,
    KP_LABEL_INSTANCE_CATEGORY,
    KP_LABEL_INSTANCE_FAMILY,
    KP_LABEL_INSTANCE_GENERATION,
    KP_LABEL_INSTANCE_SIZE,
    KP_LABEL_INSTANCE_CPU,
    KP_LABEL_INSTANCE_MEMORY,
    KP_LABEL_INSTANCE_HYPERVISOR,
    KP_LABEL_INSTANCE_GPU_NAME,
    KP_LABEL_INSTANCE_GPU_MANUFACTURER,
    KP_LABEL_INSTANCE_GPU_COUNT,
    KP_LABEL_INSTANCE_GPU_MEMORY,
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
};

Test(wellknown, karpenter_and_aws_labels_are_well_known)
{
    for (size_t i = 0; i < sizeof(well_known_keys) / sizeof(well_known_keys[0]); i++)
        cr_expect(kp_label_is_well_known(well_known_keys[i]), "%s", well_known_keys[i]);
}

/* The CRDs' CEL rules allow exactly the well-known karpenter.k8s.aws labels,
 * and the EC2NodeClass label, in NodePools, NodeClaims and NodeOverlays. */
Test(wellknown, the_crds_allow_the_well_known_aws_labels)
{
    size_t allowed = 0, aws = 0;
    for (const char *const *k = kp_crd_aws_label_names; *k; k++, allowed++)
        cr_expect(kp_label_is_well_known(*k) || strcmp(*k, KP_LABEL_EC2NODECLASS) == 0, "%s", *k);
    for (const char *const *k = kp_well_known_labels(); *k; k++)
        aws += strncmp(*k, "karpenter.k8s.aws/", 18) == 0;
    cr_expect_eq(allowed, aws + 1);
}

Test(wellknown, other_labels_are_not_well_known)
{
    static const char *const keys[] = {
        KP_LABEL_HOSTNAME,
        KP_LABEL_INITIALIZED,
        KP_LABEL_REGISTERED,
        KP_LABEL_EC2NODECLASS,
        "failure-domain.beta.kubernetes.io/zone",
        "beta.kubernetes.io/arch",
        "topology.kubernetes.io/zon",
        "topology.kubernetes.io/zone ",
        "TOPOLOGY.KUBERNETES.IO/ZONE",
        "zone",
        "",
        "app",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cr_expect_not(kp_label_is_well_known(keys[i]), "%s", keys[i]);
    cr_expect_not(kp_label_is_well_known(NULL));
}

Test(wellknown, domain)
{
    static const struct {
        const char *key, *domain;
    } cases[] = {
        {"karpenter.sh/nodepool", "karpenter.sh"},
        {"kubernetes.io/arch", "kubernetes.io"},
        {"app", ""},
        {"", ""},
        {"/x", ""},
        {"a/b/c", "a"},
        {"example.com/", "example.com"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[64];
        memset(out, 'x', sizeof(out));
        kp_label_domain(cases[i].key, out, sizeof(out));
        cr_expect_str_eq(out, cases[i].domain, "domain of %s", cases[i].key);
    }
}

Test(wellknown, domain_truncates_to_the_buffer)
{
    char out[5];
    kp_label_domain("karpenter.sh/nodepool", out, sizeof(out));
    cr_expect_str_eq(out, "karp");
    char one[1] = {'x'};
    kp_label_domain("karpenter.sh/nodepool", one, sizeof(one));
    cr_expect_eq(one[0], '\0');
    kp_label_domain("karpenter.sh/nodepool", NULL, 0); /* must not crash */
}

Test(wellknown, restricted)
{
    static const struct {
        const char *key;
        bool restricted;
    } cases[] = {
        {"karpenter.sh/custom", true},
        {"karpenter.sh/initialized", true},
        {"karpenter.sh/registered", true},
        {"karpenter.sh/do-not-sync-taints", true},
        {"sub.karpenter.sh/anything", true},
        {"a.b.karpenter.sh/anything", true},
        {"karpenter.k8s.aws/ec2nodeclass", true},
        {"karpenter.k8s.aws/custom", true},
        {"x.karpenter.k8s.aws/custom", true},
        {"kubernetes.io/hostname", true},
        /* well known keys are never restricted, even in a restricted domain */
        {"karpenter.sh/nodepool", false},
        {"karpenter.sh/capacity-type", false},
        {"karpenter.k8s.aws/instance-family", false},
        {"topology.kubernetes.io/zone", false},
        {"notkarpenter.sh/x", false},
        {"karpenter.sh.example.com/x", false},
        {"karpenter.sh", false},
        {"example.com/karpenter.sh", false},
        {"kubernetes.io/os", false},
        {"node.kubernetes.io/hostname", false},
        {"app", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(kp_label_is_restricted(cases[i].key), cases[i].restricted, "%s", cases[i].key);
}

Test(wellknown, normalize)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"},
        {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
        {"beta.kubernetes.io/arch", "kubernetes.io/arch"},
        {"beta.kubernetes.io/os", "kubernetes.io/os"},
        {"beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type"},
        {"topology.kubernetes.io/zone", "topology.kubernetes.io/zone"},
        {"beta.kubernetes.io/arch2", "beta.kubernetes.io/arch2"},
        {"app", "app"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_str_eq(kp_label_normalize(cases[i].in), cases[i].out, "%s", cases[i].in);
    const char *key = "custom/key";
    cr_expect_eq(kp_label_normalize(key), key, "no alias: the same pointer");
    cr_expect_null(kp_label_normalize(NULL));
}
