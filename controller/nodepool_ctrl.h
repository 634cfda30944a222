/*
 * NodePool upkeep, Karpenter's nodepool.hash, nodepool.counter,
 * nodepool.readiness and nodepool.validation controllers in one reconcile:
 *
 *   - the template hash annotation (karpenter.sh/nodepool-hash and its
 *     version), which drift compares NodeClaims against; NodeClaims stamped
 *     with another hash version get the current hash (adopted, not drifted);
 *   - status.resources and status.nodes: what the NodePool's nodes and
 *     in-flight NodeClaims have, which limits are checked against;
 *   - conditions ValidationSucceeded (the admission rules, for NodePools that
 *     reached the cluster without the webhook), NodeClassReady and Ready. A
 *     NodePool that is not Ready provisions nothing.
 */
#ifndef KP_CONTROLLER_NODEPOOL_CTRL_H
#define KP_CONTROLLER_NODEPOOL_CTRL_H

#include "controller/ctrl.h"

/* The reconcile function for NodePool keys (state unused: NULL). */
int kp_nodepool_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* Informer index function: the karpenter.sh/nodepool label. */
const char *kp_index_nodepool_label(const cJSON *obj);

#endif
