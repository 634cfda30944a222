/* Shared by nodeclass*.c: the resolver and its parts. Not an interface. */
#ifndef KP_CLOUD_AWS_NODECLASS_INTERNAL_H
#define KP_CLOUD_AWS_NODECLASS_INTERNAL_H

#include <pthread.h>

#include "cloud/aws/nodeclass.h"
#include "cloud/aws/provider_internal.h"

#define KP_NC_SUBNET_TTL_NS    (INT64_C(60) * KP_NS_PER_SEC)
#define KP_NC_SG_TTL_NS        (INT64_C(60) * KP_NS_PER_SEC)
#define KP_NC_AMI_TTL_NS       (INT64_C(60) * KP_NS_PER_SEC)
#define KP_NC_SSM_ALIAS_TTL_NS (INT64_C(24) * 3600 * KP_NS_PER_SEC)
#define KP_NC_SSM_TTL_NS       (INT64_C(300) * KP_NS_PER_SEC)
#define KP_NC_PROFILE_TTL_NS   (INT64_C(900) * KP_NS_PER_SEC)

#define KP_NC_PG_TTL_NS      (INT64_C(60) * KP_NS_PER_SEC)
#define KP_NC_PG_LAST_TTL_NS (INT64_C(24) * 3600 * KP_NS_PER_SEC)

struct kp_aws_nc_resolver {
    kp_aws_cache *cache;
    char *region;
    char *cluster_name;
    char *kubernetes_version;
    const kp_clock *clock;
    kp_aws_reservations *reservations;
    int64_t ami_ttl_ns, subnet_ttl_ns; /* AMI_/SUBNET_REFRESH_INTERVAL */
    pthread_mutex_t version_lock;      /* kubernetes_version may be replaced */
    kp_aws_nc_validate_fn validate;
    void *validate_ctx;
};

/* The Kubernetes version now (a copy in `arena`), NULL when unknown. */
const char *kp_ncr_kubernetes_version(kp_aws_nc_resolver *r, kp_arena *arena);

/* One EC2 filter being built: name and values in an arena. */
typedef struct kp_ncr_filters {
    kp_ec2_filter *items;
    size_t n;
} kp_ncr_filters;

void kp_ncr_filter_add(kp_arena *arena, kp_ncr_filters *f, const char *name, const char *value);
/* tags: "*" -> tag-key=<k>, else tag:<k>=<v>. */
void kp_ncr_filter_tags(kp_arena *arena, kp_ncr_filters *f, const kp_labels *tags);
/* A cache key naming `kind` and the filters. */
char *kp_ncr_filters_key(kp_arena *arena, const char *kind, const kp_ncr_filters *f);

/* Sort a JSON array's elements in place. */
void kp_ncr_sort_array(cJSON *array, int (*cmp)(const void *, const void *));

/* Each returns a JSON array (the caller deletes it), ordered as the status
 * lists them; empty when the selectors match nothing. */
int kp_ncr_subnets(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                   cJSON **out);
int kp_ncr_security_groups(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                           cJSON **out);
/* An empty answer comes with the AMIsReady reason and message for it
 * (AMINotFound, or UnsupportedAlias for an alias this Kubernetes version
 * cannot have). */
typedef struct kp_ncr_why {
    const char *reason;
    const char *message;
} kp_ncr_why;
int kp_ncr_amis(kp_aws_nc_resolver *r, const kp_aws_nc_clients *clients, const kp_ec2nodeclass *nc,
                kp_arena *arena, cJSON **out, kp_ncr_why *why);
/* CapacityReservationsReady and PlacementGroupReady: `why->reason` NULL
 * when True. Only transient AWS errors are returned (the caller retries). */
int kp_ncr_capacity_reservations(kp_aws_nc_resolver *r, kp_aws_client *ec2,
                                 const kp_ec2nodeclass *nc, kp_arena *arena, cJSON **out,
                                 kp_ncr_why *why);
int kp_ncr_placement_group_ready(kp_aws_nc_resolver *r, kp_aws_client *ec2,
                                 const kp_ec2nodeclass *nc, kp_arena *arena, kp_ncr_why *why);

/* The instance profile name, NULL with `*why` when there is none. */
int kp_ncr_instance_profile(kp_aws_nc_resolver *r, kp_aws_client *iam, const kp_ec2nodeclass *nc,
                            kp_arena *arena, const char **out, const char **why);

#endif
