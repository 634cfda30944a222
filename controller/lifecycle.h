/*
 * NodeClaim lifecycle, Karpenter's nodeclaim.lifecycle controller: a new
 * NodeClaim gets the termination finalizer and is launched through the cloud
 * provider (Launched: providerID, capacity, allocatable, resolved labels);
 * when a Node with its provider ID appears, the Node is brought in line
 * (finalizer, owner, labels, annotations, taints and startup taints, the
 * unregistered taint removed, karpenter.sh/registered) and the claim is
 * Registered; once the Node is Ready, its startup and ephemeral taints are
 * gone and the requested resources are on it, both are Initialized. Ready is
 * all three. A claim that fails to launch for lack of capacity is deleted so
 * the provisioner tries elsewhere; one that does not launch within 5 minutes
 * or register within the registration TTL is deleted too.
 *
 * On deletion: the claim's Nodes are deleted (their own termination drains
 * them), then the instance, then the finalizer goes.
 */
#ifndef KP_CONTROLLER_LIFECYCLE_H
#define KP_CONTROLLER_LIFECYCLE_H

#include "api/wellknown.h" /* the finalizer, taint, label and annotation names */
#include "controller/ctrl.h"

/* The reconcile function for NodeClaim keys (state unused: NULL). */
int kp_lifecycle_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* The key of the NodeClaim with `provider_id` (malloc'd), or NULL. */
char *kp_claim_for_provider_id(const kp_ctrl *c, const char *provider_id);
/* The key of the Node with `provider_id` (malloc'd), or NULL; *count says how many had it. */
char *kp_node_for_provider_id(const kp_ctrl *c, const char *provider_id, int *count);

/* Informer index functions: spec.providerID of Nodes, status.providerID of NodeClaims. */
const char *kp_index_node_provider_id(const cJSON *obj);
const char *kp_index_claim_provider_id(const cJSON *obj);

#endif
