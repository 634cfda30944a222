/*
 * Static NodePools on the cluster (Karpenter's static.provisioning and
 * static.deprovisioning controllers, feature gate StaticCapacity): a NodePool
 * with spec.replicas keeps exactly that many NodeClaims, whatever the pods do.
 *
 *   up    while its active NodeClaims plus those a disruption is replacing
 *         fall short of spec.replicas, NodeClaims made from the template
 *         alone are created (within limits.nodes; "nodepool node limit
 *         reached" when it binds);
 *   down  when it has more active NodeClaims than spec.replicas, the
 *         surplus is deleted: claims that never launched first, then empty
 *         nodes, then the cheapest to disrupt (budgets do not apply).
 *
 * Which nodes count, what a replica is and which go live in
 * scheduling/static_pools.h and disruption/disruption.h, shared with
 * `simulate` and the disruption planner (which replaces drifted static nodes
 * and never consolidates them). The reconciler runs per NodePool name, fed
 * by NodePool and NodeClaim changes, and looks again every minute.
 */
#ifndef KP_CONTROLLER_STATIC_CTRL_H
#define KP_CONTROLLER_STATIC_CTRL_H

#include "controller/ctrl.h"

/* kp_reconcile_fn for NodePool `key`; `state` is unused. */
int kp_static_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* Whether a cached NodePool is static (has spec.replicas). */
bool kp_static_pool_json(const cJSON *pool);

/* A static NodePool seen while the gate is off: say once (per process and
 * NodePool) that nothing keeps its replicas. */
void kp_static_warn_gate_off(kp_ctrl *c, const cJSON *pool);

#endif
