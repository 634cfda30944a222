/* Shared by launchtemplate*.c: the object behind kp_aws_lts. Not an interface. */
#ifndef KP_CLOUD_AWS_LAUNCHTEMPLATE_INTERNAL_H
#define KP_CLOUD_AWS_LAUNCHTEMPLATE_INTERNAL_H

#include <pthread.h>

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
    pthread_mutex_t lock;
    kp_lt_entry *entries;
    size_t n, cap;
};

#endif
