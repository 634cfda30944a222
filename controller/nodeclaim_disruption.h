/*
 * Karpenter's nodeclaim.disruption controller: the conditions that say, on
 * each of our NodeClaims, whether it has drifted and whether it may be
 * consolidated, so `kubectl get nodeclaims` and `describe` show what the
 * disruption planner will act on.
 *
 *   Drifted          True with the reason when the claim launched and its
 *                    NodePool's hash or requirements moved away from it
 *                    (api/nodeclaim_rules.h), its instance type or offering
 *                    is gone from the provider's catalog (InstanceTypeNotFound,
 *                    checked an hour after creation, then every 30 minutes), or
 *                    the cloud provider says so (AMIDrift, SubnetDrift,
 *                    SecurityGroupDrift, NodeClassDrift, ...; asked at most every
 *                    2 minutes per claim, and again at once when its node
 *                    class changes); removed when none holds. Checked again
 *                    every 5 minutes, and whenever the claim, its pool or its
 *                    node class changes.
 *   Consolidatable   True once the pool's consolidateAfter has passed since the
 *                    last pod event (or initialization); removed while it has
 *                    not, with `consolidateAfter: Never`, or before the claim
 *                    initialized.
 *
 * Written in one status patch under the resourceVersion. Claims of another
 * provider and claims being deleted are left alone.
 */
#ifndef KP_CONTROLLER_NODECLAIM_DISRUPTION_H
#define KP_CONTROLLER_NODECLAIM_DISRUPTION_H

#include "controller/ctrl.h"

typedef struct kp_claim_disruption kp_claim_disruption;

kp_claim_disruption *kp_claim_disruption_new(void);
kp_claim_disruption *kp_claim_disruption_free(kp_claim_disruption *d);

/* The claim (by uid) has a node class that changed: the provider's last drift
 * answer for it is stale, its next reconcile asks again. */
void kp_claim_disruption_forget(kp_claim_disruption *d, const char *claim_uid);

/* The reconcile function for NodeClaim keys (`state`: the kp_claim_disruption). */
int kp_claim_disruption_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

#endif
