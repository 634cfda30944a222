/*
 * The instance types the AWS provider offers, as catalogs the solver reads.
 *
 * A refresh asks EC2 what exists (DescribeInstanceTypes: hvm, x86_64 and
 * arm64) and where (DescribeInstanceTypeOfferings by availability zone) and
 * keeps the answer as rows shaped like the built-in table
 * (cloud/aws_catalog.h). Network bandwidth and branch-ENI (pod-eni) counts
 * are not in EC2's answer; like Karpenter, we take them from static data (the
 * built-in table) when it knows the type. Before the first successful refresh
 * there is nothing to offer (KP_ENOTREADY).
 *
 * A catalog is built per EC2NodeClass: allocatable under the class's kubelet
 * settings, AMI family, block devices and instance store policy
 * (cloud/aws_allocatable.h); Karpenter's labels (karpenter.k8s.aws/instance-*,
 * arch, os, region); offerings = the zones of the class's status subnets (that
 * EC2 offers anywhere) x the capacity types the type supports, priced from
 * the pricing provider, available when the type is offered in that zone, has
 * a price and is not in the ICE cache. Catalogs are cached per node class and
 * rebuilt when the class's inputs, the types, the prices or the ICE cache's
 * sequence number change.
 *
 * Owns the rows and the catalogs; borrows the EC2 client (used only by
 * refresh, from one thread at a time), the prices, the ICE cache and the
 * clock, which must outlive it. kp_aws_instancetypes_catalog and the lookups
 * are thread-safe (a lock inside).
 */
#ifndef KP_CLOUD_AWS_INSTANCETYPES_H
#define KP_CLOUD_AWS_INSTANCETYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "api/objects.h"
#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/ice_cache.h"
#include "cloud/aws/instancetypes_fetch.h"
#include "cloud/aws/pricing_provider.h"
#include "cloud/aws_allocatable.h"
#include "cloud/aws_catalog.h"
#include "cloud/instance_types.h"

#define KP_AWS_INSTANCETYPES_REFRESH_NS (INT64_C(12) * 3600 * KP_NS_PER_SEC)

typedef struct kp_aws_instancetypes kp_aws_instancetypes;

/* Operator flags that change every catalog. */
typedef struct kp_aws_instancetypes_opts {
    double vm_memory_overhead_percent; /* --vm-memory-overhead-percent, [0, 1) */
    int32_t reserved_enis;             /* --reserved-enis, >= 0 */
    const char *region; /* the region label; NULL: the EC2 client's (else us-east-1) */
} kp_aws_instancetypes_opts;

#define KP_AWS_INSTANCETYPES_OPTS_INIT                                                             \
    {                                                                                              \
        .vm_memory_overhead_percent = KP_AWS_VM_MEMORY_OVERHEAD_DEFAULT                            \
    }

/* `ec2` may be NULL when rows are only ever set by kp_aws_instancetypes_set_rows
 * (tests, offline use). No network here. */
int kp_aws_instancetypes_new(kp_aws_instancetypes **out, kp_aws_client *ec2, kp_aws_prices *prices,
                             kp_aws_ice_cache *ice, const kp_clock *clock);
kp_aws_instancetypes *kp_aws_instancetypes_free(kp_aws_instancetypes *it);

/* KP_EINVALID for values out of range. Invalidates every cached catalog. */
int kp_aws_instancetypes_set_opts(kp_aws_instancetypes *it, const kp_aws_instancetypes_opts *o);

/* DescribeInstanceTypes and DescribeInstanceTypeOfferings; the old data stays
 * on error. Karpenter's period is KP_AWS_INSTANCETYPES_REFRESH_NS; the caller
 * schedules it. */
int kp_aws_instancetypes_refresh(kp_aws_instancetypes *it);

/* Whether a refresh (or set_rows) has succeeded. */
bool kp_aws_instancetypes_ready(kp_aws_instancetypes *it);

/*
 * The catalog for EC2NodeClass `nc` (NULL: Karpenter's defaults, every zone
 * EC2 offers types in). Types the class cannot run at all (Windows families
 * on arm64) are left out; types it may not launch (a1 with AL2023) stay, with
 * every offering unavailable, as in Karpenter. KP_ENOTREADY ("no subnets
 * found") for a class whose status lists no subnets yet. The catalog stays owned by `it` and valid
 * until the next call for the same class (by name) returns a different one, or `it` is freed.
 * KP_ENOTREADY before the first refresh; KP_EINVALID for kubelet values that do
 * not parse.
 */
int kp_aws_instancetypes_catalog(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                 const kp_catalog **out);

/* The placement group a class resolved to (cloud/aws/nodeclass.h finds it). */
typedef struct kp_aws_pg_info {
    const char *id;
    const char *strategy; /* "cluster", "partition", "spread" */
    int32_t partition_count;
} kp_aws_pg_info;

/*
 * As kp_aws_instancetypes_catalog, for a class in placement group `pg` (NULL:
 * none): types that do not support its strategy have no available offering,
 * and every type carries karpenter.k8s.aws/placement-group-id (and, for a
 * partition group, placement-group-partition In 1..N).
 *
 * Whatever the group, the class's other launch settings narrow the catalog
 * as Karpenter's compatibility checks do: networkInterfaces (network cards,
 * device indices, EFA-only count, ENA), nested virtualization, connection
 * tracking (Nitro only). Its status.capacityReservations add reserved
 * offerings: one per reservation of the type, in its zone, priced at the
 * on-demand price / 10,000,000 (free, but ordered as on-demand is),
 * available while the reservation has room (kp_aws_instancetypes_set_reservations),
 * is not expiring and the type may launch there; the type's capacity types
 * then include "reserved" and its reservation labels (id, type,
 * interruptible) list the reservations' values.
 */
int kp_aws_instancetypes_catalog_pg(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                    const kp_aws_pg_info *pg, const kp_catalog **out);

/* Karpenter's discovered capacity: a registered node of `type` under the
 * class's AMIs reported `memory_bytes` of memory; catalogs of classes with
 * the same AMIs use it instead of the estimate when it is lower (the first
 * report, then only lower ones; kept 60 days). */
void kp_aws_instancetypes_observe_memory(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                         const char *type, int64_t memory_bytes);

struct kp_aws_reservations;
/* Where reserved offerings read remaining counts (borrowed; NULL: none known,
 * so every reserved offering is unavailable). */
void kp_aws_instancetypes_set_reservations(kp_aws_instancetypes *it,
                                           struct kp_aws_reservations *crs);

/* The row of `name` as the last refresh saw it (a copy: strings in `arena`):
 * hardware facts, the zones EC2 offers it in, the capacity types it supports.
 * KP_ENOTFOUND when unknown, KP_ENOTREADY before the first refresh. */
int kp_aws_instancetypes_get(kp_aws_instancetypes *it, const char *name, kp_arena *arena,
                             kp_aws_type_row *out);

/* Every zone EC2 offers any known type in (sorted; strings in `arena`). */
int kp_aws_instancetypes_zones(kp_aws_instancetypes *it, kp_arena *arena, const char ***zones,
                               uint32_t *n);

/*
 * The allocatable options for a node class: the operator flags in `it`, the
 * class's AMI family (spec.amiFamily, else from its alias), kubelet block
 * (maxPods, podsPerCore, kube/systemReserved, evictionHard), ephemeral volume
 * from its block device mappings and its instance store policy. Launch code
 * uses it for the maxPods and reservations it writes into user data.
 * KP_EINVALID for quantities that do not parse (message names the field).
 */
int kp_aws_alloc_opts_for_nodeclass(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                    kp_aws_alloc_opts *out);

/* The AMI family of a node class: spec.amiFamily when set, else the family of
 * its alias term, else AL2023. */
enum kp_aws_ami_family kp_aws_nodeclass_ami_family(const kp_ec2nodeclass *nc);

/* ---- rows without EC2 (tests, offline) --------------------------------- */

/* Replace the rows (copied) as a successful refresh would. */
void kp_aws_instancetypes_set_rows(kp_aws_instancetypes *it, const kp_aws_type_row *rows,
                                   uint32_t n);

#endif
