/*
 * Instance types as a cloud provider offers them: a name, the label
 * requirements the type satisfies (single values, or sets such as its zones
 * and operating systems), capacity, overhead (capacity - overhead =
 * allocatable) and offerings (zone x capacity type, with a price and
 * availability). A catalog owns its types and all their strings.
 *
 * Catalogs: the built-in AWS table (offline), the synthetic catalog of
 * Karpenter's scheduling benchmark, a JSON file, and whatever a provider
 * discovers at run time.
 */
#ifndef KP_CLOUD_INSTANCE_TYPES_H
#define KP_CLOUD_INSTANCE_TYPES_H

#include "api/requirements.h"
#include "base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_it_requirement {
    const char *key;
    enum kp_selector_op op; /* In or DoesNotExist in practice */
    const char **values;
    uint32_t n_values;
} kp_it_requirement;

typedef struct kp_it_resource {
    const char *name;
    int64_t milli;
} kp_it_resource;

typedef struct kp_offering {
    const char *zone;
    const char *capacity_type;  /* "spot", "on-demand", "reserved" */
    const char *reservation_id; /* NULL unless reserved */
    int32_t reservation_capacity; /* reserved: instances the reservation can still take */
    double price;               /* per hour */
    bool available;
} kp_offering;

typedef struct kp_instance_type {
    const char *name;
    kp_it_requirement *reqs;
    uint32_t n_reqs, cap_reqs;
    kp_it_resource *capacity;
    uint32_t n_capacity, cap_capacity;
    kp_it_resource *overhead;
    uint32_t n_overhead, cap_overhead;
    kp_offering *offerings;
    uint32_t n_offerings, cap_offerings;
    /* How many volumes the EBS CSI driver (ebs.csi.aws.com) would let a new
     * node of this type attach: its CSINode's allocatable.count before the
     * node exists (cloud/aws_ebs_limits.h); 0 = unknown, not limited. */
    int32_t ebs_volume_limit;
    /* A NodeOverlay changed its offerings' prices / its capacity
     * (cloud/overlay.h): NodeClaims launched from it say so. */
    bool price_overlaid, capacity_overlaid;
} kp_instance_type;

typedef struct kp_catalog {
    kp_arena *arena;
    kp_instance_type *types;
    size_t count, cap;
    /* Label keys this catalog's provider adds to Karpenter's well-known set
     * (the synthetic catalog's "size", "special", "integer"). */
    const char **well_known;
    size_t n_well_known, cap_well_known;
    const char *description; /* "builtin aws us-east-1", "synthetic:400", a file name */
} kp_catalog;

kp_catalog *kp_catalog_new(const char *description);
kp_catalog *kp_catalog_free(kp_catalog *catalog);

/* Building (strings are copied into the catalog's arena). */
kp_instance_type *kp_catalog_add_type(kp_catalog *catalog, const char *name);
void kp_catalog_add_well_known(kp_catalog *catalog, const char *key);
void kp_it_add_req(kp_catalog *catalog, kp_instance_type *it, const char *key,
                   enum kp_selector_op op, const char *const *values, uint32_t n_values);
/* Shorthand for `key In [value]`. */
void kp_it_add_label(kp_catalog *catalog, kp_instance_type *it, const char *key, const char *value);
void kp_it_set_capacity(kp_catalog *catalog, kp_instance_type *it, const char *resource, int64_t milli);
void kp_it_set_overhead(kp_catalog *catalog, kp_instance_type *it, const char *resource, int64_t milli);
void kp_it_add_offering(kp_catalog *catalog, kp_instance_type *it, const char *zone,
                        const char *capacity_type, double price, bool available);

const kp_instance_type *kp_catalog_find(const kp_catalog *catalog, const char *name);
int64_t kp_it_capacity(const kp_instance_type *it, const char *resource);
int64_t kp_it_overhead(const kp_instance_type *it, const char *resource);

/* Karpenter's fake.InstanceTypes(n): fake-it-0 .. fake-it-(n-1). */
int kp_catalog_synthetic(size_t n, kp_catalog **out);

/* The JSON file format of `--instance-types FILE.json` (see docs/simulate.md). */
int kp_catalog_load_file(const char *path, kp_catalog **out);
struct cJSON;
int kp_catalog_from_json(const struct cJSON *json, const char *description, kp_catalog **out);

/* The built-in AWS table (cloud/aws_catalog.h) with allocatable computed by
 * `opts` (NULL: Karpenter's defaults, AL2023). */
struct kp_aws_alloc_opts;
int kp_catalog_builtin_aws(const struct kp_aws_alloc_opts *opts, kp_catalog **out);

/* "builtin", "synthetic:N" or a file path. */
int kp_catalog_open(const char *spec, kp_catalog **out);

#endif
