/*
 * What a cloud provider owns, decided in one place. Karpenter (since v1.1)
 * manages only its own resources, and so do we: a controller acts on a
 * NodePool or NodeClaim only when its spec.nodeClassRef names the group and
 * kind the provider serves, and on a Node (or a claim that has launched) only
 * when its provider ID has the provider's scheme. Everything else belongs to
 * another autoscaler or provider sharing the cluster: it is read (it takes
 * room) and never written, deleted or garbage-collected.
 *
 * The "why" functions return NULL for an object the provider owns, or a
 * sentence saying why it is left alone (static storage or `buf`).
 */
#ifndef KP_CLOUD_OWNERSHIP_H
#define KP_CLOUD_OWNERSHIP_H

#include "cloud/provider.h"

#include <stdbool.h>
#include <stddef.h>

/* Whether nodeClassRef {group, kind} is the provider's node class. */
bool kp_cloud_serves_node_class(const kp_cloud_provider *cp, const char *group, const char *kind);

/* Whether `provider_id` ("scheme://...") has the provider's scheme. False
 * for NULL or "" (nothing launched: nothing to own yet). */
bool kp_cloud_owns_provider_id(const kp_cloud_provider *cp, const char *provider_id);

/* A NodePool: NULL when its template's nodeClassRef is the provider's. */
const char *kp_cloud_pool_foreign(const kp_cloud_provider *cp, const char *group, const char *kind, char *buf,
                                  size_t size);

/* A NodeClaim: NULL when its nodeClassRef is the provider's and its provider
 * ID, once set, has the provider's scheme. */
const char *kp_cloud_claim_foreign(const kp_cloud_provider *cp, const char *group, const char *kind,
                                   const char *provider_id, char *buf, size_t size);

/* A Node: NULL when its provider ID has the provider's scheme. A Node without
 * a provider ID is not ours: we never launched it. */
const char *kp_cloud_node_foreign(const kp_cloud_provider *cp, const char *provider_id, char *buf, size_t size);

#endif
