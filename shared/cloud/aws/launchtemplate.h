/*
 * Launch templates for the nodes the AWS provider launches, Karpenter's way:
 * one template per distinct set of inputs (AMI, security groups, user data,
 * block devices, metadata options, instance profile, tags...), named
 * "karpenter.k8s.aws/<decimal hash of the rendered template>" so that any
 * process rendering the same inputs finds the same template, created on
 * first use and reused after.
 *
 * Rendering (no I/O): the node class's status (AMI, security groups on every
 * network interface, instance profile), its spec (block devices with their
 * volume initialization rate, or the AMI family's defaults; metadata
 * options, or the CRD's defaults; detailed monitoring; public IP;
 * networkInterfaces with their cards, device indices and EFA-only types,
 * else EFA interfaces when the claim asks for EFA, else one primary
 * interface; ipPrefixCount as IPv4 or, in an IPv6 cluster (the kube-dns IP
 * is IPv6), IPv6 prefixes, with a primary IPv6 address; connection tracking;
 * cpuOptions.nestedVirtualization; the placement group), the claim (enclaves
 * when it asks for eks.amazonaws.com/nitro-sandbox), the capacity type
 * (capacity-reservations-only with the reservation as target, and the
 * capacity-block or interruptible market type, for reserved launches; none
 * otherwise), user data for the family
 * (cloud/aws/userdata.h: cluster, the claim's labels and taints, maxPods),
 * and the tags, which go on the template and, through it, on network
 * interfaces (and spot requests for spot templates).
 *
 * Ensuring: a cache of templates known to exist (name -> id), re-armed on
 * every use; on a miss, DescribeLaunchTemplates by name, then
 * CreateLaunchTemplate when EC2 has none. Karpenter deletes a template once
 * its cache entry has gone unused for KP_AWS_LT_TTL_NS; kp_aws_lt_sweep does
 * that, on the caller's timer. A launch that finds a template missing
 * (CreateFleet: InvalidLaunchTemplateName.NotFoundException) invalidates its
 * entry so the next ensure creates it again.
 *
 * The object owns its cache (thread-safe, a lock inside) and copies its
 * options; EC2 clients are borrowed per call.
 */
#ifndef KP_CLOUD_AWS_LAUNCHTEMPLATE_H
#define KP_CLOUD_AWS_LAUNCHTEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "api/objects.h"
#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/ec2.h"

#define KP_AWS_LT_NAME_PREFIX "karpenter.k8s.aws/"
/* How long a template stays known (and alive) after its last use. */
#define KP_AWS_LT_TTL_NS (INT64_C(60) * KP_NS_PER_SEC)

typedef struct kp_aws_lts kp_aws_lts;

typedef struct kp_aws_lt_opts {
    const char *cluster_name;     /* required */
    const char *cluster_endpoint; /* the API server URL nodes join */
    const char *ca_bundle;        /* base64 of the cluster CA; NULL: none */
    const char *cluster_cidr;     /* the service CIDR (AL2023 needs it) */
    const char *kube_dns_ip;      /* clusterDNS unless the class sets it */
    const char *region;           /* isolated regions get no HttpProtocolIpv6 */
    const kp_clock *clock;        /* NULL: the system clock */
    /* Karpenter's ReservedCapacity gate off: templates carry no
     * CapacityReservationSpecification (EC2's "open" default). */
    bool reserved_capacity_disabled;
} kp_aws_lt_opts;

/* What one template is made of. The strings are borrowed for the call. */
typedef struct kp_aws_lt_params {
    const kp_ec2nodeclass *nc; /* spec and status (AMIs, groups, profile) */
    const kp_nodeclaim *claim; /* labels, taints and startup taints */
    const char *image_id;
    const char *capacity_type; /* "spot", "on-demand" */
    /* The pod capacity of the instance types launched with this template,
     * written as maxPods unless the class's kubelet block sets it. */
    int32_t max_pods;
    const kp_ec2_tag *tags; /* on the template and its network interfaces */
    size_t n_tags;
    /* capacity_type "reserved": the reservation launched into (targeted),
     * its type ("capacity-block" adds that market type) and whether it is
     * an interruptible ODCR. */
    const char *capacity_reservation_id;
    const char *capacity_reservation_type;
    bool capacity_reservation_interruptible;
    /* EFA interfaces to attach when the class lists no network interfaces
     * and the claim asks for vpc.amazonaws.com/efa (one per network card). */
    int32_t efa_count;
    /* The class's placement group (NULL: none) and the partition (0: EC2's choice). */
    const char *placement_group_id;
    int32_t placement_partition;
} kp_aws_lt_params;

typedef struct kp_aws_lt {
    const char *name;
    const char *id; /* NULL when EC2 did not say */
} kp_aws_lt;

/* KP_EINVALID without a cluster name. */
int kp_aws_lts_new(kp_aws_lts **out, const kp_aws_lt_opts *o);
kp_aws_lts *kp_aws_lts_free(kp_aws_lts *lts);

/*
 * The template for `p` without asking EC2: its name and data (strings in
 * `arena`). KP_EINVALID for user data or block devices that cannot be
 * rendered, KP_ENOTREADY for a class without security groups or instance
 * profile in its status, or AL2023 without a cluster CIDR.
 */
int kp_aws_lt_render(kp_aws_lts *lts, kp_arena *arena, const kp_aws_lt_params *p, const char **name,
                     kp_ec2_launch_template_data *data);

/* Make sure the template for `p` exists in EC2 and name it (strings in `arena`). */
int kp_aws_lt_ensure(kp_aws_lts *lts, kp_aws_client *ec2, kp_arena *arena,
                     const kp_aws_lt_params *p, kp_aws_lt *out);

/* Replace what nodes join (EKS_CONTROL_PLANE discovery); NULL keeps a value. */
void kp_aws_lts_set_cluster(kp_aws_lts *lts, const char *endpoint, const char *ca_bundle,
                            const char *cluster_cidr);

/* Forget `name` (EC2 says it does not exist). */
void kp_aws_lt_invalidate(kp_aws_lts *lts, const char *name);

/* Load the cluster's templates (tag eks:eks-cluster-name) into the cache, as
 * Karpenter does when it becomes leader. */
int kp_aws_lt_hydrate(kp_aws_lts *lts, kp_aws_client *ec2);

/* Delete the templates unused for KP_AWS_LT_TTL_NS. Returns how many went
 * (>= 0) or the first EC2 error (entries that failed stay for the next sweep). */
int kp_aws_lt_sweep(kp_aws_lts *lts, kp_aws_client *ec2);

/* Delete every template of the cluster made for node class `nodeclass` (its
 * finalizer). */
int kp_aws_lt_delete_all(kp_aws_lts *lts, kp_aws_client *ec2, const char *nodeclass);

/* How many templates the cache holds (tests, metrics). */
size_t kp_aws_lt_cached(kp_aws_lts *lts);

#endif
