/* Shared by provider*.c: the AWS provider object and its helpers. Not an interface. */
#ifndef KP_CLOUD_AWS_PROVIDER_STATE_H
#define KP_CLOUD_AWS_PROVIDER_STATE_H

#include <pthread.h>

#include "cloud/aws/launch.h"
#include "cloud/aws/launchtemplate.h"
#include "cloud/aws/nodeclass.h"
#include "cloud/aws/provider.h"
#include "cloud/aws/provider_internal.h"

/* Clients for one thread's call. */
typedef struct kp_awsp_clients {
    kp_aws_nc_clients c; /* ec2, ssm, iam */
    struct kp_awsp_clients *next;
} kp_awsp_clients;

typedef struct kp_awsp {
    kp_cloud_provider base;
    char *region, *cluster_name, *queue, *endpoint_url;
    kp_aws_endpoint *endpoints;
    size_t n_endpoints;
    kp_aws_client_options client_opts; /* pointing at the copies above */
    kp_aws_credentials *owned_credentials;
    kp_aws_nodeclass_lookup lookup;
    void *lookup_ctx;
    const kp_clock *clock;
    pthread_mutex_t pool_lock;
    kp_awsp_clients *pool;
    /* refresh: one at a time, with clients of its own */
    pthread_mutex_t refresh_lock;
    kp_aws_client *refresh_ec2, *pricing, *sqs;
    /* a catalog is only read under this lock: a concurrent call may replace it */
    pthread_mutex_t catalog_lock;
    kp_aws_ice_cache *ice;
    kp_aws_prices *prices;
    kp_aws_instancetypes *it;
    kp_aws_nc_resolver *resolver;
    kp_aws_lts *lts;
    kp_aws_launcher *launcher;
    kp_aws_reservations *crs;
    kp_aws_cache *validations;       /* dry-run results per class inputs, 30 min */
    kp_metric *termination_failures; /* karpenter_cloudprovider_instance_termination_failures_total;
                                        NULL: none */
    bool disable_dry_run, eks_control_plane;
    /* EKS discovery (kp_aws_provider_discover): what the options left unset */
    bool want_endpoint, want_ca, want_cidr;
    int64_t task_due_ns[KP_AWS_TASK_COUNT]; /* the upkeep schedule, under refresh_lock */
} kp_awsp;

/* ValidationSucceeded (provider_validate.c): a kp_aws_nc_validate_fn, ctx the provider. */
int kp_awsp_validate(void *ctx, const kp_aws_nc_clients *clients, const kp_ec2nodeclass *nc,
                     kp_arena *arena, const char **reason, const char **message);

/* The class's catalog in its placement group (catalog_lock held). Every
 * reader goes through here, so the catalog cache sees one set of inputs. */
int kp_awsp_catalog(kp_awsp *p, const kp_ec2nodeclass *nc, const kp_catalog **out);

/* The class's placement group for catalogs and launches (id NULL: none). */
void kp_awsp_placement_group(kp_awsp *p, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                             kp_arena *arena, kp_aws_pg_info *out);

extern const kp_cloud_provider_ops kp_awsp_ops;
void kp_awsp_free(kp_cloud_provider *cp);

/* Clients for the calling thread, given back after the call. */
int kp_awsp_clients_take(kp_awsp *p, kp_awsp_clients **out);
void kp_awsp_clients_give(kp_awsp *p, kp_awsp_clients *c);

/* The class called `name` (KP_ENOTFOUND when the caller's cache has none). */
int kp_awsp_lookup(kp_awsp *p, const char *name, kp_arena *arena, const kp_ec2nodeclass **out);

/* What the class's catalog says about one type, copied into an arena. */
typedef struct kp_awsp_type_facts {
    kp_label *labels; /* the type's single-valued labels, unsorted */
    size_t n_labels;
    kp_resource_list capacity, allocatable; /* zero values left out */
    const char *ami;                        /* the class's AMI for the type; NULL: none */
} kp_awsp_type_facts;

/* false when the catalog is not ready or has no such type. */
bool kp_awsp_type_facts_of(kp_awsp *p, const kp_ec2nodeclass *nc, const char *type, kp_arena *arena,
                           kp_awsp_type_facts *out);
/* The same from a type at hand. */
void kp_awsp_type_facts_from(const kp_instance_type *it, const kp_ec2nodeclass *nc, kp_arena *arena,
                             kp_awsp_type_facts *out);

/* An instance as the controllers see it. `facts` and `nc` may be NULL. */
void kp_awsp_instance(kp_arena *arena, const kp_ec2_instance *in, const kp_ec2nodeclass *nc,
                      const kp_awsp_type_facts *facts, kp_cloud_instance *out);

#endif
