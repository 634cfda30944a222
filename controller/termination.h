/*
 * Node termination, Karpenter's node.termination controller: a Node carrying
 * the karpenter.sh/termination finalizer that is being deleted is drained and
 * its instance removed before the finalizer goes.
 *
 *   1. its NodeClaim is deleted too (the claim's own finalizer waits for us);
 *   2. a node that is not Ready and whose instance the cloud no longer has
 *      is let go at once;
 *   3. the node is tainted karpenter.sh/disrupted:NoSchedule (and excluded
 *      from load balancers) so nothing new lands on it;
 *   4. pods are evicted through the Eviction API (this pod's uid only), so the
 *      API server enforces PodDisruptionBudgets (429: a FailedDraining event,
 *      try again), in Karpenter's order: non-critical then critical, each
 *      workload pods before DaemonSet pods. Mirror pods, pods that tolerate
 *      the disrupted taint, finished pods and pods stuck terminating are not
 *      waited for. Pods protected by karpenter.sh/do-not-disrupt ("true" or a
 *      duration not over yet) are waited for but not evicted. Past the claim's
 *      terminationGracePeriod deadline (TerminationGracePeriodExpiring events),
 *      pods are deleted outright (a Disrupted event). The claim's Drained
 *      condition is Unknown while this goes on (at least 5 s) and then True;
 *      each eviction is an Evicted event on the pod;
 *   5. the node's VolumeAttachments (but those of pods the drain does not wait
 *      for) must be gone before the instance is: VolumesDetached Unknown
 *      (AwaitingVolumeDetachment events) until they are, or False once the
 *      terminationGracePeriod has run out;
 *   6. the instance is deleted through the cloud provider (InstanceTerminating);
 *   7. the finalizer is removed and the API server lets the Node go.
 * The claim's conditions are written once per pass, under its resourceVersion.
 */
#ifndef KP_CONTROLLER_TERMINATION_H
#define KP_CONTROLLER_TERMINATION_H

#include "controller/ctrl.h"

/* The reconcile function for Node keys (state unused: NULL). */
int kp_termination_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

#endif
