/*
 * Karpenter's scheduler metrics around one provisioning simulation: the
 * pods it was given (karpenter_scheduler_queue_depth, pending pods by the
 * zone their constraints leave them, ignored pods), how long it runs
 * (..._unfinished_work_seconds while it runs, ..._scheduling_duration_seconds
 * when done), what it could not place (..._unschedulable_pods_count), and
 * each pod's first sighting and first decision for the pod metrics
 * (pod_metrics.h). Karpenter's labels: controller, scheduling_id (a UUID per
 * simulation), zone.
 *
 * One simulation at a time per controller name; begin and end run on the
 * thread that solves.
 */
#ifndef KP_CONTROLLER_SCHEDULER_METRICS_H
#define KP_CONTROLLER_SCHEDULER_METRICS_H

#include "controller/ctrl.h"
#include "scheduling/snapshot.h"
#include "scheduling/solver.h"

/* One simulation: its controller and Karpenter's scheduling_id. */
typedef struct kp_sched_run {
    const char *controller;
    char id[37];
} kp_sched_run;

/* The simulation of `controller` starts over `pending` (snapshot pod
 * indices): each pod is seen by the provisioner (its first sighting starts
 * the undecided clock), the queue depth is the pods given, and pods that
 * Karpenter's Validate would reject (`unschedulable` known before solving:
 * PVC problems, DRA requirements) are the ignored ones. */
void kp_sched_metrics_begin(kp_sched_run *run, kp_ctrl *c, const char *controller, const kp_snapshot *snap,
                            const uint32_t *pending, uint32_t n);
/* ... and ended with `plan` (NULL when the solve failed): its duration, the
 * pods it could not place (ignored ones aside), and each pod's decision. */
void kp_sched_metrics_end(kp_sched_run *run, kp_ctrl *c, const kp_snapshot *snap, const kp_plan *plan);
/* No dynamic NodePool to schedule with, so no simulation: as Karpenter, each
 * of the `pending` pods is still seen and decided (not placed). */
void kp_sched_metrics_no_pools(kp_ctrl *c, const kp_snapshot *snap, const uint32_t *pending, uint32_t n);

/* Karpenter's effective zone of a pending pod: the one zone its strict node
 * requirements and volumes leave it, "flexible" when they leave several or
 * say nothing, "none" when they leave none. (Karpenter also narrows by the
 * zones its topology spread allows; that is not done here.) */
const char *kp_sched_effective_zone(const kp_snapshot *snap, const kp_spod *pod, char *buf, size_t size);

#endif
