/*
 * Lookup, labels and offerings over the generated instance-type table (see
 * aws_catalog.h). The table itself lives in aws_catalog_data.c.
 */
#include "cloud/aws_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define AWS_DOMAIN "karpenter.k8s.aws/"

size_t kp_aws_catalog_count(void)
{
    size_t n;
    kp_aws_catalog_table(&n);
    return n;
}

const kp_aws_type_info *kp_aws_catalog_at(size_t index)
{
    size_t n;
    const kp_aws_type_info *rows = kp_aws_catalog_table(&n);
    return index < n ? &rows[index] : NULL;
}

static int compare_name(const void *key, const void *row)
{
    return strcmp((const char *)key, ((const kp_aws_type_info *)row)->name);
}

const kp_aws_type_info *kp_aws_catalog_find(const char *name)
{
    size_t n;
    const kp_aws_type_info *rows = kp_aws_catalog_table(&n);
    if (name == NULL)
        return NULL;
    return bsearch(name, rows, n, sizeof(rows[0]), compare_name);
}

int kp_aws_catalog_lookup(const kp_aws_type_info **out, const char *name)
{
    if (name == NULL || name[0] == '\0')
        return kp_error_set(KP_EINVALID, "instance type name is empty");
    const kp_aws_type_info *t = kp_aws_catalog_find(name);
    if (t == NULL)
        return kp_error_set(KP_ENOTFOUND, "instance type \"%s\" is not in the built-in catalog",
                            name);
    *out = t;
    return 0;
}

const char *kp_aws_arch_name(enum kp_aws_arch arch)
{
    return arch == KP_AWS_ARCH_ARM64 ? "arm64" : "amd64";
}

const char *kp_aws_hypervisor_name(enum kp_aws_hypervisor hv)
{
    switch (hv) {
    case KP_AWS_HV_NITRO:
        return "nitro";
    case KP_AWS_HV_XEN:
        return "xen";
    case KP_AWS_HV_NONE:
    default:
        return "";
    }
}

/* ---- labels ------------------------------------------------------------- */

typedef struct label_set {
    kp_aws_label items[KP_AWS_MAX_LABELS];
    size_t n;
} label_set;

static void put_str(label_set *s, const char *key, const char *value)
{
    /* KP_AWS_MAX_LABELS is above the number of keys below, so this never drops. */
    if (s->n >= KP_AWS_MAX_LABELS)
        return;
    kp_aws_label *l = &s->items[s->n++];
    l->key = key;
    snprintf(l->value, sizeof(l->value), "%s", value);
}

static void put_int(label_set *s, const char *key, long long value)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%lld", value);
    put_str(s, key, buf);
}

static void put_bool(label_set *s, const char *key, bool value)
{
    put_str(s, key, value ? "true" : "false");
}

static void name_labels(label_set *s, const kp_aws_type_info *t)
{
    put_str(s, "node.kubernetes.io/instance-type", t->name);
    put_str(s, AWS_DOMAIN "instance-family", t->family);
    put_str(s, AWS_DOMAIN "instance-size", t->size);
    put_bool(s, AWS_DOMAIN "instance-capability-flex", strstr(t->family, "-flex") != NULL);
    if (t->category[0] != '\0') {
        put_str(s, AWS_DOMAIN "instance-category", t->category);
        put_int(s, AWS_DOMAIN "instance-generation", t->generation);
    }
}

static void hardware_labels(label_set *s, const kp_aws_type_info *t)
{
    put_int(s, AWS_DOMAIN "instance-cpu", t->vcpu);
    put_int(s, AWS_DOMAIN "instance-memory", t->memory_mib);
    put_str(s, AWS_DOMAIN "instance-hypervisor", kp_aws_hypervisor_name(t->hypervisor));
    put_bool(s, AWS_DOMAIN "instance-encryption-in-transit-supported",
             (t->flags & KP_AWS_TYPE_ENCRYPTION_IN_TRANSIT) != 0);
    if (t->cpu_manufacturer != NULL && t->cpu_manufacturer[0] != '\0')
        put_str(s, AWS_DOMAIN "instance-cpu-manufacturer", t->cpu_manufacturer);
    if (t->cpu_clock_mhz > 0)
        put_int(s, AWS_DOMAIN "instance-cpu-sustained-clock-speed-mhz", t->cpu_clock_mhz);
    if (t->network_mbps > 0)
        put_int(s, AWS_DOMAIN "instance-network-bandwidth", t->network_mbps);
    if (t->ebs_mbps > 0)
        put_int(s, AWS_DOMAIN "instance-ebs-bandwidth", t->ebs_mbps);
    if (t->local_nvme_gb > 0)
        put_int(s, AWS_DOMAIN "instance-local-nvme", t->local_nvme_gb);
}

static void accelerator_labels(label_set *s, const kp_aws_type_info *t)
{
    if (t->gpu_name != NULL) {
        put_str(s, AWS_DOMAIN "instance-gpu-name", t->gpu_name);
        put_str(s, AWS_DOMAIN "instance-gpu-manufacturer",
                t->gpu_manufacturer ? t->gpu_manufacturer : "");
        put_int(s, AWS_DOMAIN "instance-gpu-count", t->gpu_count);
        put_int(s, AWS_DOMAIN "instance-gpu-memory", t->gpu_memory_mib);
    }
    if (t->accel_name != NULL) {
        put_str(s, AWS_DOMAIN "instance-accelerator-name", t->accel_name);
        put_str(s, AWS_DOMAIN "instance-accelerator-manufacturer",
                t->accel_manufacturer ? t->accel_manufacturer : "");
        put_int(s, AWS_DOMAIN "instance-accelerator-count", t->accel_count);
    }
}

static void platform_labels(label_set *s, const kp_aws_type_info *t,
                            enum kp_aws_ami_family ami_family)
{
    put_str(s, "kubernetes.io/arch", kp_aws_arch_name(t->arch));
    put_str(s, "topology.kubernetes.io/region", KP_AWS_REGION);
    /* Windows AMIs exist for x86 only: an arm64 type gets no OS at all. */
    if (ami_family != KP_AWS_AMI_WINDOWS)
        put_str(s, "kubernetes.io/os", "linux");
    else if (t->arch == KP_AWS_ARCH_AMD64)
        put_str(s, "kubernetes.io/os", "windows");
}

static int compare_key(const void *a, const void *b)
{
    return strcmp(((const kp_aws_label *)a)->key, ((const kp_aws_label *)b)->key);
}

int kp_aws_catalog_labels(kp_aws_label *out, size_t cap, size_t *count, const kp_aws_type_info *t,
                          enum kp_aws_ami_family ami_family)
{
    label_set s;
    s.n = 0;
    name_labels(&s, t);
    hardware_labels(&s, t);
    accelerator_labels(&s, t);
    platform_labels(&s, t, ami_family);
    if (s.n > cap)
        return kp_error_set(KP_ETOOLARGE, "instance type %s has %zu labels, room for %zu",
                            t->name, s.n, cap);
    qsort(s.items, s.n, sizeof(s.items[0]), compare_key);
    memcpy(out, s.items, s.n * sizeof(s.items[0]));
    *count = s.n;
    return 0;
}

const char *kp_aws_label_get(const kp_aws_label *labels, size_t count, const char *key)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(labels[i].key, key) == 0)
            return labels[i].value;
    return NULL;
}

/* ---- offerings ---------------------------------------------------------- */

/* Zone names and the zone IDs we pair them with. Real name-to-ID mappings
 * differ per AWS account; these are a fixed, plausible choice for offline use. */
static const char *const zones[KP_AWS_ZONE_COUNT] = {"us-east-1a", "us-east-1b", "us-east-1c"};
static const char *const zone_ids[KP_AWS_ZONE_COUNT] = {"use1-az1", "use1-az2", "use1-az4"};

const char *kp_aws_catalog_zone(size_t index)
{
    return index < KP_AWS_ZONE_COUNT ? zones[index] : NULL;
}

const char *kp_aws_capacity_type_name(enum kp_aws_capacity_type ct)
{
    return ct == KP_AWS_CAPACITY_SPOT ? "spot" : "on-demand";
}

/*
 * Spot prices here are an OFFLINE ESTIMATE, not market data: the live provider
 * reads DescribeSpotPriceHistory instead. Each estimate is the on-demand price
 * times a factor for the kind of instance, in per mille, chosen from the
 * typical long-run discount of that kind in us-east-1 (AWS advertises "up to
 * 90%"; common families usually trade at 55-70% off):
 *   general purpose (a, m, t, mac)         350  (about 65% off)
 *   compute optimised (c)                  400
 *   memory optimised (r, u, x, z)          300  (large, plentiful pools)
 *   storage optimised (d, h, i, im, is)    320
 *   graphics and inference (dl, f, g, gr, inf, vt)  400
 *   training accelerators (p, trn)         550  (scarce, in high demand)
 *   anything else                          400
 * So that spreading over zones has a price signal, each (type, zone) pair then
 * moves by a fixed amount between -5% and +5%, derived from a hash of the type
 * name and the zone index: deterministic, different per type, and the same on
 * every run. Every estimate stays below the on-demand price.
 */
static const struct {
    const char *category;
    int64_t per_mille;
} spot_factors[] = {
    {"a", 350},  {"m", 350},   {"t", 350},  {"mac", 350}, {"c", 400},  {"r", 300},
    {"u", 300},  {"x", 300},   {"z", 300},  {"d", 320},   {"h", 320},  {"i", 320},
    {"im", 320}, {"is", 320},  {"dl", 400}, {"f", 400},   {"g", 400},  {"gr", 400},
    {"inf", 400}, {"vt", 400}, {"p", 550},  {"trn", 550},
};
#define SPOT_FACTOR_OTHER 400
#define SPOT_ZONE_SPREAD 50 /* per mille, each way */

static int64_t spot_factor(const char *category)
{
    for (size_t i = 0; i < sizeof(spot_factors) / sizeof(spot_factors[0]); i++)
        if (strcmp(spot_factors[i].category, category) == 0)
            return spot_factors[i].per_mille;
    return SPOT_FACTOR_OTHER;
}

/* FNV-1a: a small, stable hash so zone adjustments do not change between runs. */
static uint32_t fnv1a(const char *s, uint32_t h)
{
    for (; *s != '\0'; s++) {
        h ^= (uint8_t)*s;
        h *= 16777619u;
    }
    return h;
}

static int64_t zone_adjustment(const char *type_name, size_t zone_index)
{
    uint32_t h = fnv1a(type_name, 2166136261u);
    h ^= (uint32_t)zone_index + 1;
    h *= 16777619u;
    return (int64_t)(h % (2 * SPOT_ZONE_SPREAD + 1)) - SPOT_ZONE_SPREAD;
}

int64_t kp_aws_catalog_spot_price(const kp_aws_type_info *t, size_t zone_index)
{
    if (zone_index >= KP_AWS_ZONE_COUNT || t->price_micro_usd <= 0)
        return 0;
    int64_t factor = spot_factor(t->category ? t->category : "");
    int64_t adjust = 1000 + zone_adjustment(t->name, zone_index);
    int64_t price = t->price_micro_usd * factor * adjust / 1000000;
    return price > 0 ? price : 1;
}

size_t kp_aws_catalog_offerings(kp_aws_offering out[KP_AWS_MAX_OFFERINGS],
                                const kp_aws_type_info *t)
{
    size_t n = 0;
    for (size_t z = 0; z < KP_AWS_ZONE_COUNT; z++) {
        for (int ct = KP_AWS_CAPACITY_ON_DEMAND; ct <= KP_AWS_CAPACITY_SPOT; ct++) {
            kp_aws_offering *o = &out[n++];
            o->zone = zones[z];
            o->zone_id = zone_ids[z];
            o->capacity_type = (enum kp_aws_capacity_type)ct;
            o->price_micro_usd = ct == KP_AWS_CAPACITY_SPOT ? kp_aws_catalog_spot_price(t, z)
                                                            : t->price_micro_usd;
            o->available = o->price_micro_usd > 0;
        }
    }
    return n;
}
