/* Shared by launchtemplate*.c: the object behind kp_aws_lts. Not an interface. */
#ifndef KP_CLOUD_AWS_LAUNCHTEMPLATE_INTERNAL_H
#define KP_CLOUD_AWS_LAUNCHTEMPLATE_INTERNAL_H

#include <pthread.h>

#include "base/buf.h"

#include "cloud/aws/launchtemplate.h"

/* A template known to exist. */
typedef struct kp_lt_entry {
    char *name;
    char *id; /* NULL: unknown */
    int64_t last_used_ns;
} kp_lt_entry;

struct kp_aws_lts {
    char *cluster_name, *cluster_endpoint, *ca_bundle, *cluster_cidr, *kube_dns_ip, *region;
    const kp_clock *clock;
    bool reserved_capacity_disabled;
    pthread_mutex_t lock; /* entries, and the cluster strings (replaced by set_cluster) */
    kp_lt_entry *entries;
    size_t n, cap;
};

/* The resource a claim asks for to get a Nitro Enclave. */
#define KP_RESOURCE_NITRO_SANDBOX "eks.amazonaws.com/nitro-sandbox"

/* The network interfaces of a template (launchtemplate_network.c): the
 * class's networkInterfaces, else p->efa_count EFA interfaces, else one
 * primary interface; `ipv6` for an IPv6 cluster. KP_ENOTREADY without
 * security groups in the class's status. */
int kp_aws_lt_interfaces(kp_arena *arena, const kp_aws_lt_params *p, bool ipv6,
                         kp_ec2_launch_template_data *d);
/* The interfaces' fields, for the template name. */
void kp_aws_lt_hash_interfaces(kp_buf *b, const kp_ec2_launch_template_data *d);

#endif
