/*
 * The synthetic catalog of Karpenter's scheduling benchmark (its fake cloud
 * provider's InstanceTypes(n)), rebuilt from the published description so our
 * benchmark solves the same problem: type i has i+1 cores, 2(i+1) GiB and
 * 10(i+1) pods, a 100m/10Mi overhead, and five equally priced offerings
 * (spot in zones 1-2, on-demand in zones 1-3).
 */
#include "cloud/instance_types.h"
#include "base/error.h"

#include <stdio.h>

static const char *const synthetic_zones[] = {"test-zone-1", "test-zone-2", "test-zone-3"};
static const char *const synthetic_os[] = {"darwin", "linux", "windows"};
static const char *const synthetic_capacity_types[] = {"spot", "on-demand"};

#define GIB (INT64_C(1024) * 1024 * 1024)

/* Karpenter's PriceFromResources: 0.1 per core plus 0.1 per 10^9 bytes. */
static double synthetic_price(int64_t cores, int64_t memory_bytes)
{
    return 0.1 * (double)cores + 0.1 * (double)memory_bytes / 1e9;
}

static void add_synthetic_type(kp_catalog *catalog, size_t i)
{
    char name[32], cores_text[24];
    int64_t cores = (int64_t)i + 1;
    int64_t memory = 2 * cores * GIB;
    bool large = cores > 4 && memory > 8 * GIB;

    snprintf(name, sizeof(name), "fake-it-%zu", i);
    snprintf(cores_text, sizeof(cores_text), "%lld", (long long)cores);
    kp_instance_type *it = kp_catalog_add_type(catalog, name);
    kp_it_add_label(catalog, it, "node.kubernetes.io/instance-type", name);
    kp_it_add_label(catalog, it, "kubernetes.io/arch", "amd64");
    kp_it_add_req(catalog, it, "kubernetes.io/os", KP_OP_IN, synthetic_os, 3);
    kp_it_add_req(catalog, it, "topology.kubernetes.io/zone", KP_OP_IN, synthetic_zones, 3);
    kp_it_add_req(catalog, it, "karpenter.sh/capacity-type", KP_OP_IN, synthetic_capacity_types, 2);
    kp_it_add_label(catalog, it, "size", large ? "large" : "small");
    if (large)
        kp_it_add_label(catalog, it, "special", "optional");
    else
        kp_it_add_req(catalog, it, "special", KP_OP_DOES_NOT_EXIST, NULL, 0);
    kp_it_add_label(catalog, it, "integer", cores_text);

    kp_it_set_capacity(catalog, it, "cpu", cores * 1000);
    kp_it_set_capacity(catalog, it, "memory", memory * 1000);
    kp_it_set_capacity(catalog, it, "pods", cores * 10 * 1000);
    kp_it_set_overhead(catalog, it, "cpu", 100);
    kp_it_set_overhead(catalog, it, "memory", INT64_C(10) * 1024 * 1024 * 1000);

    double price = synthetic_price(cores, memory);
    kp_it_add_offering(catalog, it, "test-zone-1", "spot", price, true);
    kp_it_add_offering(catalog, it, "test-zone-2", "spot", price, true);
    kp_it_add_offering(catalog, it, "test-zone-1", "on-demand", price, true);
    kp_it_add_offering(catalog, it, "test-zone-2", "on-demand", price, true);
    kp_it_add_offering(catalog, it, "test-zone-3", "on-demand", price, true);
}

int kp_catalog_synthetic(size_t n, kp_catalog **out)
{
    if (n == 0 || n > 100000)
        return kp_error_set(KP_EINVALID, "synthetic catalog size %zu out of range 1..100000", n);
    char description[48];
    snprintf(description, sizeof(description), "synthetic:%zu", n);
    kp_catalog *catalog = kp_catalog_new(description);
    kp_catalog_add_well_known(catalog, "size");
    kp_catalog_add_well_known(catalog, "special");
    kp_catalog_add_well_known(catalog, "integer");
    for (size_t i = 0; i < n; i++)
        add_synthetic_type(catalog, i);
    *out = catalog;
    return 0;
}
