/*
 * Launching one instance for a NodeClaim through EC2 CreateFleet (type
 * instant, target capacity 1), as Karpenter's AWS provider does.
 *
 * Selection (kp_aws_launch_select): the class's catalog narrowed to the types
 * the claim allows (requirements, resource requests, an available offering
 * in a zone and capacity type it allows that the ICE cache does not hold;
 * a reserved offering also needs its reservation to have room, not to be
 * expiring, and to match the claim's capacity-reservation-id/-type/
 * -interruptible requirements, while a claim pinned to a reservation takes
 * no other offering), then Karpenter's launch filters — for a reserved
 * launch one kind of reservation (the cheapest of default, capacity block,
 * interruptible, in that order on ties), one type for a capacity block, and
 * one reservation per zone (the one with most room); exotic types (metal,
 * GPUs, accelerators) dropped when anything else fits, spot offerings dearer
 * than the cheapest on-demand one dropped when the claim allows both —, the
 * capacity type (reserved when a reservation is usable, else spot when any
 * spot offering is left, else on-demand), and the types ordered cheapest
 * first by their cheapest allowed offering, at most KP_AWS_MAX_INSTANCE_TYPES.
 *
 * Launch (kp_aws_launch): one subnet per zone (the class's subnet there with
 * the most free IPs, subnets that just ran out of addresses last), one launch
 * template per (AMI the type runs, pod capacity, EFA interfaces, reservation)
 * with its overrides (type x zone's subnet, the image, the offering price as
 * priority), spot with price-capacity-optimized, on-demand with lowest-price,
 * reserved as on-demand into the targeted reservation (capacity blocks as
 * capacity-block, interruptible ODCRs as reserved-capacity), in the class's
 * placement group (a partition group's lowest allowed partition), tags on the
 * instance, its volumes and the fleet (the class's tags, karpenter.sh/nodepool,
 * karpenter.sh/nodeclaim, karpenter.k8s.aws/ec2nodeclass, eks:eks-cluster-name,
 * kubernetes.io/cluster/<name>=owned, and the class hash with its version so
 * drift can be read back from the instance).
 *
 * Fleet errors mark the ICE cache (capacity type, type, zone) for the
 * capacity codes — for a reserved launch, the reservation's count goes to
 * zero instead —, spot as a whole when the spot service-linked role cannot
 * be created, and the subnet when it has no free addresses. A reserved
 * launch takes one from its reservation's count. Nothing launched and only
 * such errors: KP_EINSUFFICIENT_CAPACITY — after one more try without the
 * exhausted reservation, and one more on on-demand when spot came back
 * empty, when the claim allows them. A
 * launch template EC2 no longer has is forgotten and the launch tried once
 * more.
 *
 * The launcher borrows the launch templates, the node-class resolver (the
 * class's subnets with their free IPs, cached), the ICE cache and the clock;
 * it keeps which subnets ran out of addresses. Thread-safe.
 */
#ifndef KP_CLOUD_AWS_LAUNCH_H
#define KP_CLOUD_AWS_LAUNCH_H

#include <stdint.h>

#include "api/objects.h"
#include "base/arena.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/ice_cache.h"
#include "cloud/aws/launchtemplate.h"
#include "cloud/aws/nodeclass.h"
#include "cloud/instance_types.h"

#define KP_AWS_MAX_INSTANCE_TYPES 60

/* Tags the launch writes so the provider can find and judge its instances. */
#define KP_AWS_TAG_NODECLAIM "karpenter.sh/nodeclaim"
#define KP_AWS_TAG_NODEPOOL  "karpenter.sh/nodepool"
#define KP_AWS_TAG_NODECLASS "karpenter.k8s.aws/ec2nodeclass"
#define KP_AWS_TAG_CLUSTER   "eks:eks-cluster-name"

/* The extended resource of EFA interfaces. */
#define KP_RESOURCE_EFA "vpc.amazonaws.com/efa"

/* ---- selection --------------------------------------------------------- */

/* What selection knows of a class's capacity reservations. */
typedef struct kp_aws_launch_reservations {
    const kp_ec2nodeclass *nc;   /* status.capacityReservations: type, interruptible, state */
    kp_aws_reservations *counts; /* remaining counts now; NULL: the catalog's word */
} kp_aws_launch_reservations;

typedef struct kp_aws_launch_choice {
    const char *capacity_type;      /* "reserved", "spot" or "on-demand" */
    /* "reserved": the reservations' type ("default", "capacity-block") and
     * whether they are interruptible ODCRs (one kind per launch: a fleet
     * has one market type). */
    const char *reservation_type;
    bool reservation_interruptible;
    const kp_instance_type **types; /* cheapest first */
    uint32_t n_types;
    /* Per type (parallel to `types`): which of its offerings may be used —
     * allowed, available, not ICE, of `capacity_type`, not filtered out. */
    const bool **usable;
} kp_aws_launch_choice;

/*
 * Narrow `catalog` for `claim` (see above). `capacity_type` NULL lets the
 * offerings decide; "on-demand" forces it (the spot fallback). `ice` may be
 * NULL. KP_EINSUFFICIENT_CAPACITY when nothing is left; KP_EINVALID for
 * claim requirements that do not parse.
 */
int kp_aws_launch_select(const kp_catalog *catalog, const kp_nodeclaim *claim,
                         kp_aws_ice_cache *ice, const kp_aws_launch_reservations *crs,
                         const char *capacity_type, kp_arena *arena, kp_aws_launch_choice *out);

/*
 * A catalog of its own (the caller frees it) holding copies of the types
 * kp_aws_launch_select keeps for `claim` (any capacity type), all their
 * offerings included. Launches work on it so that the class's catalog, which
 * a concurrent refresh may replace, is only read for this short copy.
 * Errors as kp_aws_launch_select.
 */
int kp_aws_launch_candidates(const kp_catalog *catalog, const kp_nodeclaim *claim,
                             kp_aws_ice_cache *ice, const kp_aws_launch_reservations *crs,
                             kp_catalog **out);

/* ---- launching --------------------------------------------------------- */

typedef struct kp_aws_launcher kp_aws_launcher;

typedef struct kp_aws_launcher_opts {
    const char *cluster_name;     /* required */
    kp_aws_lts *lts;              /* required */
    kp_aws_nc_resolver *resolver; /* required: the class's subnets */
    kp_aws_ice_cache *ice;        /* required */
    const kp_clock *clock;        /* NULL: the system clock */
    kp_aws_reservations *crs;     /* remaining counts of reservations; NULL: none */
} kp_aws_launcher_opts;

typedef struct kp_aws_launched {
    const char *instance_id;
    const kp_instance_type *type; /* in the catalog launched from */
    const char *zone;
    const char *subnet_id;
    const char *capacity_type;
    const char *image_id;
    const char *fleet_id;
    /* capacity_type "reserved": the reservation, its type and kind */
    const char *reservation_id;
    const char *reservation_type;
    bool reservation_interruptible;
    int32_t efa_count;              /* EFA interfaces the template attached */
    const char *placement_group_id; /* NULL: none */
    int32_t placement_partition;    /* 0: EC2's choice */
} kp_aws_launched;

int kp_aws_launcher_new(kp_aws_launcher **out, const kp_aws_launcher_opts *o);
kp_aws_launcher *kp_aws_launcher_free(kp_aws_launcher *l);

/*
 * Launch one instance for `claim` of class `nc` (Ready, its status resolved)
 * from `catalog` (the class's). `clients` are the calling thread's (EC2 for
 * the launch; the resolver's subnet query uses clients->ec2 too). Strings of
 * *out live in `arena`.
 */
int kp_aws_launch(kp_aws_launcher *l, const kp_aws_nc_clients *clients, const kp_ec2nodeclass *nc,
                  const kp_nodeclaim *claim, const kp_catalog *catalog, kp_arena *arena,
                  kp_aws_launched *out);

/* The tags launches put on the instances of `claim` (sorted by key; strings
 * in `arena`): the class's and Karpenter's. `for_template` leaves out the
 * per-claim ones (the claim's name, the class hash), which must not make
 * one template per claim. */
void kp_aws_launch_tags(const char *cluster_name, const kp_ec2nodeclass *nc,
                        const kp_nodeclaim *claim, bool for_template, kp_arena *arena,
                        kp_ec2_tag **tags, size_t *n);

#endif
