/*
 * EC2NodeClass resolution: what a node class's selectors find in the account
 * (subnets, security groups, AMIs — aliases through SSM —, the instance
 * profile), as the status object the node-class controller writes on
 * /status, with the conditions Karpenter sets (SubnetsReady,
 * SecurityGroupsReady, AMIsReady, InstanceProfileReady, ValidationSucceeded,
 * PlacementGroupReady, CapacityReservationsReady and the root Ready).
 *
 * Also the pieces launch and drift read back from a decoded node class: the
 * readiness gate, the class hash (annotation karpenter.k8s.aws/ec2nodeclass-hash
 * with its version), and the AMI requirements an instance type must meet.
 *
 * A resolver owns a cache of AWS answers (subnets and AMIs 1 min, security
 * groups 1 min, SSM parameters 24 h for aliases and 5 min otherwise, instance
 * profiles 15 min) and is thread-safe; it borrows the AWS clients per call
 * (a client belongs to one thread at a time) and the clock.
 */
#ifndef KP_CLOUD_AWS_NODECLASS_H
#define KP_CLOUD_AWS_NODECLASS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/objects.h"
#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/instancetypes.h"
#include "cloud/aws_catalog.h"
#include "cloud/instance_types.h"

#define KP_AWS_ANNOTATION_NODECLASS_HASH         "karpenter.k8s.aws/ec2nodeclass-hash"
#define KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION "karpenter.k8s.aws/ec2nodeclass-hash-version"
/* Karpenter writes "v6" with Go's hashstructure values, which a C program
 * cannot reproduce; a version of our own makes claims from either skip the
 * static drift check instead of all looking drifted. */
#define KP_AWS_NODECLASS_HASH_VERSION "c1"

/* Node labels of the class's placement group. */
#define KP_AWS_LABEL_PG_ID        "karpenter.k8s.aws/placement-group-id"
#define KP_AWS_LABEL_PG_PARTITION "karpenter.k8s.aws/placement-group-partition"

typedef struct kp_aws_nc_resolver kp_aws_nc_resolver;

typedef struct kp_aws_nc_resolver_opts {
    const char *region;
    const char *cluster_name;
    /* "1.33": the control plane's minor version; AMI aliases need it. */
    const char *kubernetes_version;
    const kp_clock *clock; /* NULL: the system clock */
    /* Capacity reservations (borrowed). NULL: a class that selects some
     * reports CapacityReservationsReady False instead of ignoring them. */
    kp_aws_reservations *reservations;
    /* How long subnets and AMIs found stay cached (Karpenter's
     * SUBNET_/AMI_REFRESH_INTERVAL); 0: a minute. Less than a minute is
     * KP_EINVALID, as Karpenter refuses it. */
    int64_t subnet_refresh_ns;
    int64_t ami_refresh_ns;
} kp_aws_nc_resolver_opts;


/* The clients one resolution uses (each belongs to the calling thread for
 * the call). iam may be NULL when no class names a role. */
typedef struct kp_aws_nc_clients {
    kp_aws_client *ec2;
    kp_aws_client *ssm;
    kp_aws_client *iam;
} kp_aws_nc_clients;

/* ValidationSucceeded, decided by the caller (the provider's dry-run checks)
 * for a class whose AMIs, subnets, security groups and instance profile all
 * resolved; `resolved` carries the new status. Set *reason (and *message)
 * for False, leave it NULL for True; a negative return fails the resolution
 * (retried). */
typedef int (*kp_aws_nc_validate_fn)(void *ctx, const kp_aws_nc_clients *clients,
                                     const kp_ec2nodeclass *resolved, kp_arena *arena,
                                     const char **reason, const char **message);

/* KP_EINVALID without a region or cluster name, or a refresh under a minute. */
int kp_aws_nc_resolver_new(kp_aws_nc_resolver **out, const kp_aws_nc_resolver_opts *o);
kp_aws_nc_resolver *kp_aws_nc_resolver_free(kp_aws_nc_resolver *r);
/* Forget every cached answer (tests; after an operator fixed the account). */
void kp_aws_nc_resolver_flush(kp_aws_nc_resolver *r);

/* Replace the Kubernetes version AMI aliases resolve against (the version
 * discovered from the API server or EKS); cached alias answers of the old
 * version are dropped. */
void kp_aws_nc_resolver_set_kubernetes_version(kp_aws_nc_resolver *r, const char *version);

/* Who decides ValidationSucceeded (borrowed). Without one it is True. */
void kp_aws_nc_resolver_set_validator(kp_aws_nc_resolver *r, kp_aws_nc_validate_fn fn, void *ctx);

/*
 * The placement group spec.placementGroupSelector names (DescribePlacementGroups
 * by id or name, state available; answers cached a minute, the last one found
 * kept a day). *found false: the class has no selector, or EC2 has no such
 * group. On an AWS error the last group found is still set (with *found) and
 * the error returned, so launches keep their group while EC2 is unwell.
 */
int kp_aws_nc_placement_group(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                              kp_arena *arena, kp_aws_pg_info *out, bool *found);

/*
 * Resolve `nc` and build its status (the caller owns *status, cJSON_Delete):
 *   {"subnets":[{"id","zone","zoneID"}], "securityGroups":[{"id","name"}],
 *    "amis":[{"id","name","deprecated"?,"requirements":[...]}],
 *    "capacityReservations":[...] (capacityreservation.h),
 *    "instanceProfile":"...", "conditions":[...]}
 * CapacityReservationsReady and PlacementGroupReady are False when EC2
 * refused to answer (the message carries its code and message) or, for the
 * group, has none of that name/id; ValidationSucceeded is the validator's
 * (DependenciesNotReady until the four resolutions above succeed).
 * Selectors that match nothing are conditions (False, with Karpenter's
 * reasons), not errors. Errors are what the caller retries: AWS failures
 * (throttling KP_ERETRY, permissions KP_EFORBIDDEN...). Conditions keep their
 * lastTransitionTime from `nc` when their status did not change.
 */
int kp_aws_nc_resolve(kp_aws_nc_resolver *r, const kp_aws_nc_clients *clients,
                      const kp_ec2nodeclass *nc, cJSON **status);

/*
 * The class with metadata.uid `uid` is being deleted: every instance profile
 * made for its spec.role (all under /karpenter/<region>/<cluster>/<uid>/, so
 * profiles of earlier roles too) loses its role and is deleted. A profile
 * named by spec.instanceProfile is the operator's and is never touched.
 * Nothing to delete, and no uid (NULL or ""), is success.
 */
int kp_aws_nc_delete_profiles(kp_aws_nc_resolver *r, kp_aws_client *iam, const char *uid);

/*
 * Karpenter's instanceprofile.garbagecollection: delete the profiles made for
 * classes that are gone (their uid in /karpenter/<region>/<cluster>/<uid>/ is
 * not in `live_uids` — left behind when a finalizer was removed by force),
 * unless an instance still wears one (`in_use`, by name). Returns how many
 * went, or the first IAM error.
 */
int kp_aws_nc_gc_profiles(kp_aws_nc_resolver *r, kp_aws_client *iam, const char *const *live_uids,
                          size_t n_uids, const char *const *in_use, size_t n_in_use);

/*
 * Karpenter's providers.ssm.invalidation: cached answers of mutable SSM
 * parameters (an alias's "latest"/"recommended" path, a class's own
 * ssmParameter) whose AMI EC2 now reports deprecated are dropped, so the
 * next resolution asks SSM again. Returns how many were dropped.
 */
int kp_aws_nc_invalidate_ssm(kp_aws_nc_resolver *r, kp_aws_client *ec2);

/* ---- reading a decoded node class -------------------------------------- */

/* Whether launches may use `nc`: Ready=True observed at its generation.
 * KP_ENOTREADY with a message saying why otherwise. */
int kp_aws_nodeclass_check_ready(const kp_ec2nodeclass *nc);

/* The class hash as the annotation carries it (decimal): a hash of the spec
 * fields that change how nodes are built, selectors excluded (their results
 * drift through the status instead). Stable across processes. */
uint64_t kp_aws_nodeclass_hash(const kp_ec2nodeclass *nc);

/* Whether instance type `it` can run AMI `ami` (its requirements are
 * compatible with the type's labels). */
bool kp_aws_ami_fits(const kp_nc_ami *ami, const kp_instance_type *it);

/* The first AMI of the status (newest first) that `it` can run; NULL: none. */
const kp_nc_ami *kp_aws_nodeclass_ami_for(const kp_ec2nodeclass *nc, const kp_instance_type *it);

/*
 * Why a claim's instance drifted from its class, Karpenter's reasons: the
 * class hash changed ("NodeClassDrift", only when both carry our hash
 * version), the instance's image is no longer among the class's AMIs
 * ("AMIDrift"), or its subnet is no longer among the class's subnets
 * ("SubnetDrift"). NULL when none. `image_id` and `subnet_id` may be NULL
 * (unknown: not checked).
 */
const char *kp_aws_nodeclass_drift(const kp_ec2nodeclass *nc, const kp_nodeclaim *claim,
                                   const char *image_id, const char *subnet_id);

#endif
