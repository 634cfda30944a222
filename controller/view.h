/*
 * A consistent-enough picture of the cluster for one decision: every cached
 * object decoded into one arena, the kp_cluster the snapshot builder reads,
 * and the snapshot itself. Built from the informers at the start of a
 * provisioning batch or a disruption pass and thrown away after it, as
 * Karpenter's cluster state is read per decision. Objects that fail to decode
 * are left out and counted (one bad object must not stop the cluster).
 */
#ifndef KP_CONTROLLER_VIEW_H
#define KP_CONTROLLER_VIEW_H

#include "controller/ctrl.h"
#include "scheduling/snapshot_build.h"
#include "scheduling/solver.h"

typedef struct kp_ctrl_view {
    kp_ctrl *c;
    kp_arena *arena;
    kp_cluster cluster;
    kp_snapshot *snap;
    size_t skipped; /* objects that did not decode */
    const char *first_skip; /* why the first one did not */
    /* NodeOverlay gate: the NodePools' catalogs with the overlays applied,
     * made as the snapshot asks for them. */
    struct kp_overlay_catalogs *overlaid;
} kp_ctrl_view;

/* Build from the informers, with `catalog` as every NodePool's instance types. */
int kp_ctrl_view_build(kp_ctrl *c, const kp_catalog *catalog, kp_ctrl_view **out);
/* The same with the cloud provider's catalog. */
int kp_ctrl_view_build_cloud(kp_ctrl *c, kp_ctrl_view **out);
kp_ctrl_view *kp_ctrl_view_free(kp_ctrl_view *v);

/* Snapshot pod indices the provisioner should place: pending, marked
 * Unschedulable by kube-scheduler, not a DaemonSet's or a static pod, not
 * being deleted (Karpenter's IsProvisionable). */
uint32_t kp_ctrl_view_provisionable(const kp_ctrl_view *v, uint32_t **out);

#endif
