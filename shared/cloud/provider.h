/*
 * The cloud-provider interface: what the controllers need from a cloud, as a
 * table of functions (kwok and aws implement it). The controllers never know
 * which cloud they talk to.
 *
 * A NodeClaim goes in, an instance comes out: create() launches capacity for
 * a NodeClaim whose requirements list the instance types, zones and capacity
 * types it may have (cheapest first), and answers with what it got. get() and
 * list() read instances back by provider ID; delete() terminates. Every call
 * may block on the network; providers are safe to call from several threads.
 *
 * Errors (negative KP_E*, message set):
 *   KP_EINSUFFICIENT_CAPACITY  nothing the claim allows could be launched now
 *                              (the caller deletes the claim and provisions again)
 *   KP_ENOTREADY               the claim's node class is missing or not Ready
 *   KP_ENOTFOUND               get/delete: the instance is gone (delete: done)
 *   KP_ERETRY                  throttled or transient: try again later
 */
#ifndef KP_CLOUD_PROVIDER_H
#define KP_CLOUD_PROVIDER_H

#include "api/objects.h"
#include "base/arena.h"
#include "cloud/instance_types.h"

#include <stdbool.h>
#include <stdint.h>

/* One machine as the cloud sees it. Strings live in the arena the call got. */
typedef struct kp_cloud_instance {
    const char *provider_id;   /* "aws:///us-east-1a/i-0abc", "kwok://kwok-default-xyz" */
    const char *nodeclaim;     /* the NodeClaim it was launched for, when known */
    const char *nodepool;      /* likewise its NodePool */
    const char *instance_type;
    const char *zone;
    const char *capacity_type; /* "spot", "on-demand", "reserved" */
    const char *image_id;      /* NULL when the cloud has none */
    kp_labels labels;          /* labels the Node will carry (instance type, zone, ...) */
    kp_resource_list capacity;
    kp_resource_list allocatable;
    int64_t created_ns;        /* launch time, 0 when unknown */
    bool terminating;          /* shutting down or gone */
} kp_cloud_instance;

typedef struct kp_cloud_provider kp_cloud_provider;

/* Karpenter's RepairPolicy: a Node whose condition `type` has had `status`
 * for `toleration_ns` is replaced (node auto-repair, gate NodeRepair). */
typedef struct kp_repair_policy {
    const char *type;
    const char *status;
    int64_t toleration_ns;
} kp_repair_policy;

typedef struct kp_cloud_provider_ops {
    /* "kwok", "aws" */
    const char *(*name)(const kp_cloud_provider *cp);
    /* Launch for `claim` (its spec: requirements, resources, nodeClassRef,
     * taints; metadata: name, labels). */
    int (*create)(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *arena, kp_cloud_instance *out);
    /* Terminate the claim's instance (status.providerID). KP_ENOTFOUND once it is gone. */
    int (*delete_instance)(kp_cloud_provider *cp, const kp_nodeclaim *claim);
    int (*get)(kp_cloud_provider *cp, const char *provider_id, kp_arena *arena, kp_cloud_instance *out);
    /* Every instance this provider launched (for garbage collection). */
    int (*list)(kp_cloud_provider *cp, kp_arena *arena, kp_cloud_instance **out, uint32_t *n);
    /* The instance types `pool` may launch, with allocatable and offerings as
     * they are now (`pool` NULL: the provider's default catalog). The catalog
     * stays the provider's until the next call for the same pool; the caller
     * never frees it. */
    int (*instance_types)(kp_cloud_provider *cp, const kp_nodepool *pool, const kp_catalog **out);
    /* Why the claim no longer matches its node class (the provider's part of
     * drift: image, subnets, security groups...); *reason NULL when it does. */
    int (*is_drifted)(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *arena, const char **reason);
    void (*free)(kp_cloud_provider *cp);
    /* Ownership (cloud/ownership.h decides with these): the node class this
     * provider serves, as spec.nodeClassRef's group and kind, and the scheme
     * of its provider IDs ("aws" for "aws:///zone/i-1"). The controllers act
     * only on NodePools, NodeClaims and Nodes that match. */
    const char *node_class_group;
    const char *node_class_kind;
    const char *provider_id_scheme;
    /* The node conditions that make a node unhealthy, and for how long. */
    const kp_repair_policy *repair_policies;
    size_t n_repair_policies;
} kp_cloud_provider_ops;

/* Implementations embed this as their first member. */
struct kp_cloud_provider {
    const kp_cloud_provider_ops *ops;
};

static inline const char *kp_cloud_name(const kp_cloud_provider *cp)
{
    return cp->ops->name(cp);
}

static inline kp_cloud_provider *kp_cloud_free(kp_cloud_provider *cp)
{
    if (cp)
        cp->ops->free(cp);
    return NULL;
}

#endif
