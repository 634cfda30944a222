/*
 * The label rules built on Karpenter's well-known names (core and the AWS
 * provider): which keys are well known, which are restricted, and the legacy
 * aliases folded into their current names. Everything here is constant data.
 */
#include "api/wellknown.h"

#include <string.h>

/* Core Karpenter's WellKnownLabels plus the keys the AWS provider adds at
 * start-up, kept sorted (bytewise) so lookups can bisect. The unit tests check
 * the order and the count. */
static const char *const well_known[] = {
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
    "karpenter.sh/capacity-type",
    "karpenter.sh/nodepool",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    "node.kubernetes.io/windows-build",
    "topology.k8s.aws/zone-id",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    NULL,
};

enum { WELL_KNOWN_COUNT = sizeof(well_known) / sizeof(well_known[0]) - 1 };

/* Domains Karpenter keeps for itself (core's group and the AWS provider's). */
static const char *const restricted_domains[] = {KP_GROUP, KP_AWS_GROUP};

/* Keys that are restricted although their domain is not. */
static const char *const restricted_labels[] = {KP_LABEL_HOSTNAME};

static const struct {
    const char *alias;
    const char *key;
} aliases[] = {
    {"failure-domain.beta.kubernetes.io/zone", KP_LABEL_ZONE},
    {"failure-domain.beta.kubernetes.io/region", KP_LABEL_REGION},
    {"beta.kubernetes.io/arch", KP_LABEL_ARCH},
    {"beta.kubernetes.io/os", KP_LABEL_OS},
    {"beta.kubernetes.io/instance-type", KP_LABEL_INSTANCE_TYPE},
};

bool kp_label_is_well_known(const char *key)
{
    if (!key) return false;
    size_t lo = 0, hi = WELL_KNOWN_COUNT;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(key, well_known[mid]);
        if (cmp == 0) return true;
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

const char *const *kp_well_known_labels(void)
{
    return well_known;
}

void kp_label_domain(const char *key, char *out, size_t size)
{
    if (!out || size == 0) return;
    const char *slash = key ? strchr(key, '/') : NULL;
    size_t len = slash ? (size_t)(slash - key) : 0;
    if (len > size - 1) len = size - 1;
    if (len) memcpy(out, key, len);
    out[len] = '\0';
}

/* Is `domain` (of `len` bytes) equal to `parent` or one of its subdomains? */
static bool domain_within(const char *domain, size_t len, const char *parent)
{
    size_t plen = strlen(parent);
    if (len == plen) return memcmp(domain, parent, len) == 0;
    return len > plen && domain[len - plen - 1] == '.' &&
           memcmp(domain + len - plen, parent, plen) == 0;
}

bool kp_label_is_restricted(const char *key)
{
    if (!key || kp_label_is_well_known(key)) return false;
    const char *slash = strchr(key, '/');
    size_t len = slash ? (size_t)(slash - key) : 0;
    for (size_t i = 0; i < sizeof(restricted_domains) / sizeof(restricted_domains[0]); i++) {
        if (domain_within(key, len, restricted_domains[i])) return true;
    }
    for (size_t i = 0; i < sizeof(restricted_labels) / sizeof(restricted_labels[0]); i++) {
        if (strcmp(key, restricted_labels[i]) == 0) return true;
    }
    return false;
}

const char *kp_label_normalize(const char *key)
{
    if (!key) return key;
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
        if (strcmp(key, aliases[i].alias) == 0) return aliases[i].key;
    }
    return key;
}
