/*
 * Shared between the instance-type provider's files: the snapshot of what
 * EC2 offers, the inputs a node class contributes to its catalog, and the
 * catalog builder. Not part of the interface.
 */
#ifndef KP_CLOUD_AWS_INSTANCETYPES_INTERNAL_H
#define KP_CLOUD_AWS_INSTANCETYPES_INTERNAL_H

#include "cloud/aws/instancetypes.h"

/* One refresh's result; immutable once published. */
typedef struct it_snapshot {
    kp_arena *arena;
    kp_aws_type_row *rows; /* sorted by name */
    uint32_t n;
    const char **zones; /* every zone any type is offered in, sorted */
    uint32_t n_zones;
} it_snapshot;

/* What one node class contributes to its catalog. `opts` is zero-filled
 * before it is set, so two inputs compare with memcmp. */
typedef struct it_class_inputs {
    kp_aws_alloc_opts opts;
    const char *windows_build; /* "10.0.20348" for Windows families, else NULL */
    bool any_zone;             /* no class: every zone EC2 offers */
    const char **zones;        /* the class's subnet zones, sorted, unique */
    const char **zone_ids;     /* zone_ids[i] belongs to zones[i]; may be NULL entries */
    uint32_t n_zones;
    /* Compatibility checks and reserved offerings (borrowed from the class). */
    const kp_nc_network_interface *nis;
    size_t n_nis;
    bool nested_virtualization;
    bool connection_tracking;
    kp_aws_pg_info pg; /* id NULL: no placement group */
    const kp_nc_capacity_reservation *crs;
    size_t n_crs;
    /* Memory registered nodes reported for types under the class's AMIs. */
    const char **mem_types;
    int64_t *mem_bytes;
    size_t n_mem;
} it_class_inputs;

/* The inputs of `nc` (NULL: defaults, any zone) in placement group `pg`
 * (NULL: none); strings in `arena` or borrowed from `nc` and `pg`. */
int kp_aws_it_class_inputs(const kp_aws_instancetypes_opts *flags, const kp_ec2nodeclass *nc,
                           const kp_aws_pg_info *pg, kp_arena *arena, it_class_inputs *out);

/* Whether a type passes the class's compatibility checks. */
bool kp_aws_it_compatible(const kp_aws_type_row *row, const it_class_inputs *in);

/* A text key of everything in `in` a catalog depends on (in `arena`). */
const char *kp_aws_it_class_key(const it_class_inputs *in, kp_arena *arena);

typedef struct it_build_env {
    const it_snapshot *snap;
    const char *region;
    kp_aws_prices *prices;
    kp_aws_ice_cache *ice;
    struct kp_aws_reservations *crs; /* remaining counts; NULL: none */
} it_build_env;

/* Build the catalog for `in` over the snapshot. */
int kp_aws_it_build_catalog(const it_build_env *env, const it_class_inputs *in,
                            const char *description, kp_catalog **out);

#endif
