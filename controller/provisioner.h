/*
 * The provisioner: pods that kube-scheduler could not place become
 * NodeClaims. Triggers (a pod marked Unschedulable, a NodePool changed) open
 * a batch; the batch closes after `batch_idle_ms` without a trigger or
 * `batch_max_ms` after it opened, as Karpenter's batcher does, so that a
 * Deployment scaled to a hundred replicas is solved as one problem. A batch
 * reads the cluster from the informers, solves with shared/scheduling and
 * creates the new NodeClaims; pods get an event saying where they should go
 * or why they cannot.
 *
 * Pods placed on NodeClaims still in flight are not placed again: such a
 * claim is in the next snapshot with the room it was made with.
 */
#ifndef KP_CONTROLLER_PROVISIONER_H
#define KP_CONTROLLER_PROVISIONER_H

#include "controller/ctrl.h"

typedef struct kp_provisioner kp_provisioner;

typedef struct kp_provision_result {
    uint32_t pending;        /* provisionable pods in the batch */
    uint32_t claims_created; /* NodeClaims written */
    uint32_t claims_failed;  /* NodeClaims the API refused */
    uint32_t on_existing;    /* pods that fit on nodes or claims that exist */
    uint32_t unschedulable;  /* pods with no place */
    int64_t solve_ns;
} kp_provision_result;

kp_provisioner *kp_provisioner_new(kp_ctrl *c);
/* Start the batching thread. */
int kp_provisioner_start(kp_provisioner *p);
/* Stop the thread (a batch in progress finishes) and free. NULL-safe. */
kp_provisioner *kp_provisioner_free(kp_provisioner *p);

/* Open a batch, or keep the open one open. Thread-safe, never blocks. */
void kp_provisioner_trigger(kp_provisioner *p);

/* Run one batch now, on the calling thread (tests, and the thread itself). */
int kp_provisioner_run_once(kp_provisioner *p, kp_provision_result *out);

/* The NodePool's template hash for new NodeClaims: its annotation when the
 * NodePool controller has set it with our hash version, else computed from
 * the cached object. NULL when the NodePool is not cached. */
const char *kp_ctrl_pool_hash(kp_ctrl *c, const kp_nodepool *np, char *buf, size_t size);

/* Whether a Pod (as JSON) is one the provisioner should look at: no node,
 * not being deleted, not finished, PodScheduled=False with reason
 * Unschedulable. Used by the pod informer's handler to trigger batches. */
bool kp_pod_json_provisionable(const cJSON *pod);

#endif
