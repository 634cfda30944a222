/*
 * The controllers' side of ownership (cloud/ownership.h decides): whether a
 * cached NodePool, NodeClaim or Node is this provider's, read off its JSON.
 * Every controller asks here before it writes, deletes, taints, drains or
 * garbage-collects anything; objects of another provider are only read.
 *
 * kp_ctrl_report_foreign() logs, once per object, why an object is left
 * alone: called for every cached object when the caches have synced and for
 * every one that arrives later, so an operator can see at start-up what this
 * controller will never touch.
 */
#ifndef KP_CONTROLLER_OWNERSHIP_H
#define KP_CONTROLLER_OWNERSHIP_H

#include "controller/ctrl.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* NULL when the object is the provider's; otherwise why not (in `buf`). */
const char *kp_ctrl_pool_foreign(const kp_ctrl *c, const cJSON *pool, char *buf, size_t size);
const char *kp_ctrl_claim_foreign(const kp_ctrl *c, const cJSON *claim, char *buf, size_t size);
/* A Node is ours when its provider ID has our scheme and neither the
 * NodeClaim holding that provider ID nor, without one, the NodePool it is
 * labelled with belongs to another provider (one on the same cloud makes
 * Nodes with the same scheme). */
const char *kp_ctrl_node_foreign(const kp_ctrl *c, const cJSON *node, char *buf, size_t size);
/* The same from a Node's provider ID and karpenter.sh/nodepool label (NULL: none). */
const char *kp_ctrl_node_id_foreign(const kp_ctrl *c, const char *provider_id, const char *pool_name, char *buf,
                                    size_t size);

bool kp_ctrl_owns_pool(const kp_ctrl *c, const cJSON *pool);
bool kp_ctrl_owns_claim(const kp_ctrl *c, const cJSON *claim);
bool kp_ctrl_owns_node(const kp_ctrl *c, const cJSON *node);

/* Log why each cached NodePool, NodeClaim and Node that is not ours is left
 * alone (each object once per process). */
void kp_ctrl_report_foreign(kp_ctrl *c);
/* The same for one object of `kind` (KP_CK_NODEPOOL, _NODECLAIM or _NODE). */
void kp_ctrl_report_foreign_one(kp_ctrl *c, enum kp_ctrl_kind kind, const char *key, const cJSON *obj);

#endif
