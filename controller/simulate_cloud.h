/*
 * Where `simulate` gets its instance types and whose objects it plans for.
 *
 *   no provider  the --instance-types catalog for every NodePool, and every
 *                NodePool, NodeClaim and Node is planned for (manifests
 *                written for any provider plan as they are).
 *   kwok         as `run --cloud-provider kwok`: the --instance-types
 *                catalog; NodePools and NodeClaims are planned for only when
 *                their nodeClassRef is the KWOKNodeClass, Nodes are managed
 *                only with a kwok:// provider ID (cloud/ownership.h decides).
 *   aws          as `run --cloud-provider aws`: instance types, offerings and
 *                prices read from the account (EC2 DescribeInstanceTypes,
 *                DescribeInstanceTypeOfferings, DescribeSpotPriceHistory and
 *                the Price List API, all reads), each NodePool's through its
 *                EC2NodeClass as read from the cluster or given with -f;
 *                ownership as for kwok, with EC2NodeClass and aws:///.
 *
 * Everything it keeps of the documents is borrowed: the list given to
 * kp_sim_cloud_filter must outlive the cloud's last use.
 */
#ifndef KP_CONTROLLER_SIMULATE_CLOUD_H
#define KP_CONTROLLER_SIMULATE_CLOUD_H

#include "format/load.h"
#include "scheduling/snapshot_build.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct kp_sim_cloud_opts {
    const char *provider;       /* NULL, "kwok" or "aws" */
    const char *instance_types; /* no provider and kwok: builtin, synthetic:N or a file */
    /* aws (the same settings as `run`; NULL or < 0: the provider's default) */
    const char *cluster_name;
    const char *region;
    const char *endpoint_url;
    double vm_memory_overhead_percent;
    int reserved_enis;
    bool isolated_vpc;
} kp_sim_cloud_opts;

#define KP_SIM_CLOUD_OPTS_INIT {NULL, "builtin", NULL, NULL, NULL, -1, 0, false}

typedef struct kp_sim_cloud kp_sim_cloud;

/* The catalog or the provider (aws: its instance types and prices are read
 * before this returns). KP_EINVALID for an unknown provider or a missing
 * cluster name with aws. */
int kp_sim_cloud_new(const kp_sim_cloud_opts *opts, kp_sim_cloud **out);
kp_sim_cloud *kp_sim_cloud_free(kp_sim_cloud *cloud);

/* Move the documents of `docs` to `kept`, leaving out the NodePools and
 * NodeClaims of another provider (each with a note), and remember the
 * EC2NodeClasses for the aws provider's look-ups. Every object is moved
 * as it is when there is no provider. */
int kp_sim_cloud_filter(kp_sim_cloud *cloud, kp_doc_list *docs, kp_doc_list *kept);

/* Point `cluster` at the instance types (the catalog, or each NodePool's own)
 * and at the provider's ownership of Nodes. */
void kp_sim_cloud_wire(kp_sim_cloud *cloud, kp_cluster *cluster);

/* Notes for standard error: objects left out, NodePools without instance
 * types (and why). Valid until the cloud is freed. */
size_t kp_sim_cloud_note_count(const kp_sim_cloud *cloud);
const char *kp_sim_cloud_note(const kp_sim_cloud *cloud, size_t i);

#endif
