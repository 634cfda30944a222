/*
 * The AWS cloud provider: Karpenter's AWS provider behind the cloud-provider
 * interface (cloud/provider.h).
 *
 *   create           the claim's EC2NodeClass (looked up through the
 *                    caller's callback; missing: KP_EINSUFFICIENT_CAPACITY,
 *                    as Karpenter treats it; not Ready: KP_ENOTREADY), its
 *                    catalog, then one instance through CreateFleet
 *                    (cloud/aws/launch.h). The answer: provider ID
 *                    aws:///<zone>/<instance-id>, the type's single-valued
 *                    labels plus zone, zone ID, capacity type, tenancy and
 *                    nodepool, capacity and allocatable (zero values left
 *                    out), the image.
 *   delete_instance  TerminateInstances unless the instance is shutting down
 *                    already; KP_ENOTFOUND once EC2 no longer has it. A claim
 *                    without provider ID is found by its karpenter.sh/nodeclaim tag.
 *   get / list       DescribeInstances (list: the cluster's instances with
 *                    karpenter.sh/nodepool and karpenter.k8s.aws/ec2nodeclass
 *                    tags, not terminated); labels and resources from the
 *                    class's catalog when the class and type are known.
 *   instance_types   the catalog of the pool's class (cloud/aws/instancetypes.h).
 *   is_drifted       NodeClassDrift (class hash from the claim's annotations,
 *                    else the instance's tags), AMIDrift (the image is not the
 *                    class's AMI for the type), SubnetDrift.
 *
 * Outside the table, for the controllers: the node class status
 * (kp_aws_provider_resolve_nodeclass), the periodic work (refresh: instance
 * types and prices, 12 h; maintain: unused launch templates, every minute or
 * so), the launch-template cache at leader election (hydrate), a class's
 * finalizer (delete_nodeclass), and the interruption queue.
 *
 * The provider owns its AWS clients (a pool: a client serves one thread at a
 * time), the caches (ICE, node-class answers, launch templates, instance
 * types, prices) and copies of the option strings. It never talks to
 * Kubernetes. Every function is safe to call from several threads.
 */
#ifndef KP_CLOUD_AWS_PROVIDER_H
#define KP_CLOUD_AWS_PROVIDER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/objects.h"
#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/credentials.h"
#include "cloud/aws/ice_cache.h"
#include "cloud/aws/instancetypes.h"
#include "cloud/aws/pricing_provider.h"
#include "cloud/interruption.h"
#include "cloud/provider.h"

#define KP_AWS_PROVIDER_ID_PREFIX "aws:///"

/* The EC2NodeClass called `name` from the caller's cache, decoded into
 * `arena`; KP_ENOTFOUND when there is none. */
typedef int (*kp_aws_nodeclass_lookup)(void *ctx, const char *name, kp_arena *arena,
                                       const kp_ec2nodeclass **out);

typedef struct kp_aws_provider_opts {
    const char *region;             /* NULL: AWS_REGION, AWS_DEFAULT_REGION, the profile's */
    const char *cluster_name;       /* required */
    const char *cluster_endpoint;   /* the API server nodes join (https://...) */
    const char *cluster_ca_bundle;  /* base64 of the cluster CA PEM; NULL: none */
    const char *cluster_cidr;       /* the service CIDR; AL2023 nodes need it */
    const char *cluster_dns_ip;     /* kube-dns's ClusterIP; NULL: the kubelet's default */
    const char *kubernetes_version; /* "1.33": AMI aliases need it */
    const char *interruption_queue; /* SQS queue name or URL; NULL: no interruption handling */
    /* Where AWS is: every service (tests: moto), and per service. */
    const char *endpoint_url;
    const kp_aws_endpoint *endpoints;
    size_t n_endpoints;
    kp_aws_credentials *credentials; /* borrowed; NULL: the default chain (owned) */
    int max_attempts;                /* per AWS call; 0: 3 */
    kp_aws_nodeclass_lookup lookup;  /* required */
    void *lookup_ctx;
    const kp_clock *clock; /* NULL: the system clock */
    /* Operator flags of the instance-type catalog. */
    double vm_memory_overhead_percent; /* < 0: Karpenter's default 0.075 */
    int32_t reserved_enis;
    bool isolated_vpc; /* no Price List API */
    /* Karpenter's AWS settings (v1.14 settings reference) the controller maps
     * from its flags and environment: */
    bool disable_dry_run;   /* DISABLE_DRY_RUN: ValidationSucceeded is True without the
                             * CreateLaunchTemplate / CreateFleet / RunInstances checks */
    bool eks_control_plane; /* EKS_CONTROL_PLANE: kp_aws_provider_discover reads the
                             * endpoint, CA bundle, service CIDR (those not given above)
                             * and the Kubernetes version from EKS DescribeCluster */
    int64_t ami_refresh_interval_ns;    /* AMI_REFRESH_INTERVAL; 0: 1m; < 1m refused */
    int64_t subnet_refresh_interval_ns; /* SUBNET_REFRESH_INTERVAL; 0: 1m; < 1m refused */
    /* Core FEATURE_GATES ReservedCapacity=false: no reserved offerings, no
     * CapacityReservationSpecification in templates, capacity reservation
     * selector terms are not resolved (CapacityReservationsReady reports so). */
    bool reserved_capacity_disabled;
} kp_aws_provider_opts;

#define KP_AWS_PROVIDER_OPTS_INIT                                                                  \
    {                                                                                              \
        .vm_memory_overhead_percent = -1                                                           \
    }

/* KP_EINVALID without a cluster name, a lookup or a region. No network. */
int kp_aws_provider_new(const kp_aws_provider_opts *o, kp_cloud_provider **out);

/* The status the node-class controller writes on /status (caller deletes it;
 * see kp_aws_nc_resolve for its shape and errors). `arena` is scratch. */
int kp_aws_provider_resolve_nodeclass(kp_cloud_provider *cp, const kp_ec2nodeclass *nc,
                                      kp_arena *arena, cJSON **status);

/* Instance types and prices from AWS (start-up, then every 12 h). Both run;
 * the first error is returned and the old data kept. Until the first
 * success, create and instance_types answer KP_ENOTREADY. */
int kp_aws_provider_refresh(kp_cloud_provider *cp);

/* Delete launch templates unused for a minute (Karpenter's cache expiry).
 * Returns how many went, or an EC2 error. */
int kp_aws_provider_maintain(kp_cloud_provider *cp);

/* Load the cluster's launch templates into the cache (on becoming leader). */
int kp_aws_provider_hydrate(kp_cloud_provider *cp);

/* A node class is going (its finalizer): delete its launch templates and the
 * instance profiles made for its role (found by `uid`; NULL skips them). */
int kp_aws_provider_delete_nodeclass(kp_cloud_provider *cp, const char *name, const char *uid);

/* What EKS says about the cluster (kp_aws_provider_discover); strings owned
 * by the arena given. */
typedef struct kp_aws_cluster_info {
    const char *endpoint;
    const char *ca_bundle; /* base64 PEM */
    const char *service_cidr;
    const char *kubernetes_version;
} kp_aws_cluster_info;

/* EKS_CONTROL_PLANE: EKS DescribeCluster for the cluster name; the endpoint,
 * CA bundle and service CIDR the options left unset are used from now on,
 * and the Kubernetes version replaces the one AMI aliases resolve against
 * (call at start-up, then every 5 minutes, as Karpenter's version
 * provider does). KP_EINVALID when eks_control_plane is off; EKS's errors
 * otherwise (cloud/aws/eks.h). */
int kp_aws_provider_discover(kp_cloud_provider *cp, kp_arena *arena, kp_aws_cluster_info *out);

/* The Kubernetes version discovered elsewhere (the API server's /version):
 * AMI aliases resolve against it from now on. */
void kp_aws_provider_set_kubernetes_version(kp_cloud_provider *cp, const char *version);

/* The provider's capacity reservations (NULL when reserved capacity is off). */
struct kp_aws_reservations *kp_aws_provider_reservations(kp_cloud_provider *cp);

/* The SQS interruption source for opts.interruption_queue (the caller frees
 * it, before the provider). KP_ENOTFOUND when no queue was configured. */
int kp_aws_provider_interruption_source(kp_cloud_provider *cp, kp_interruption_source **out);

/* The interruption source the controller runs with the AWS provider:
 * EC2 instance-status health checks every minute (cloud/aws/instancestatus.h,
 * Karpenter's interruption.instancestatus), merged with the SQS queue when
 * opts.interruption_queue is set. The caller frees it, before the provider. */
int kp_aws_provider_health_source(kp_cloud_provider *cp, kp_interruption_source **out);

/* ---- Karpenter's AWS-side controllers: the provider's halves, the
 * controller's upkeep loop (controller/cloud_aws.c) the other. ---------- */

/* nodeclaim.tagging: give the instance behind `provider_id` the tags
 * Karpenter adds once its node registered (Name = the node's name,
 * karpenter.sh/nodeclaim, eks:eks-cluster-name), those it lacks only.
 * 1 when tags were written, 0 when all were there, KP_ENOTFOUND when the
 * instance is gone. */
int kp_aws_provider_tag_instance(kp_cloud_provider *cp, const char *provider_id,
                                 const char *node_name, const char *claim_name);

/* capacityreservation.expiration: which of the reservations `ids` are
 * capacity blocks within 40 minutes of their end (their nodes go before EC2
 * reclaims them). expiring[i] for ids[i]; none when reserved capacity is off. */
int kp_aws_provider_expiring_reservations(kp_cloud_provider *cp, const char *const *ids, size_t n,
                                          bool *expiring);

/* instanceprofile.garbagecollection: delete the profiles of node classes
 * that are gone (`live_uids` are the uids of those that exist) that no
 * instance of the cluster wears. Returns how many went. */
int kp_aws_provider_gc_instance_profiles(kp_cloud_provider *cp, const char *const *live_uids,
                                         size_t n);

/* providers.ssm.invalidation: drop cached SSM answers whose AMI is now
 * deprecated. Returns how many were dropped. */
int kp_aws_provider_invalidate_ssm(kp_cloud_provider *cp);

/* providers.instancetype.capacity: a registered node of `type` launched from
 * class `nodeclass` reports `memory_bytes`; catalogs use it from now on. */
int kp_aws_provider_observe_node(kp_cloud_provider *cp, const char *nodeclass, const char *type,
                                 int64_t memory_bytes);

/* The upkeep loop's schedule: true (and the next run set `period_ns` on)
 * when `task` is due. */
enum kp_aws_task {
    KP_AWS_TASK_INSTANCE_PROFILE_GC = 0, /* 30 min */
    KP_AWS_TASK_SSM_INVALIDATION,        /* 30 min */
    KP_AWS_TASK_EKS_DISCOVERY,           /* 5 min, with EKS_CONTROL_PLANE */
    KP_AWS_TASK_COUNT
};
bool kp_aws_provider_due(kp_cloud_provider *cp, enum kp_aws_task task, int64_t period_ns);

/* Whether the provider runs with EKS_CONTROL_PLANE (kp_aws_provider_discover). */
bool kp_aws_provider_eks_control_plane(kp_cloud_provider *cp);

/* The provider's parts, for wiring and tests (owned by the provider). */
kp_aws_ice_cache *kp_aws_provider_ice(kp_cloud_provider *cp);
kp_aws_instancetypes *kp_aws_provider_instancetypes(kp_cloud_provider *cp);
kp_aws_prices *kp_aws_provider_prices(kp_cloud_provider *cp);

/* "aws:///us-west-2a/i-0abc" <-> (zone, instance id). Parsing is
 * KP_EINVALID for anything else; *zone and *id point into `provider_id`
 * copies in `arena`. */
const char *kp_aws_provider_id(kp_arena *arena, const char *zone, const char *instance_id);
int kp_aws_parse_provider_id(kp_arena *arena, const char *provider_id, const char **zone,
                             const char **instance_id);

#endif
