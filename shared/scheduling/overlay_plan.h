/*
 * NodeOverlays in a plan made from manifests (simulate): evaluated against
 * the cluster's NodePools, each with the cluster's catalog, and the cluster
 * told to plan every NodePool with its overlaid catalog (cloud/overlay.h).
 */
#ifndef KP_SCHEDULING_OVERLAY_PLAN_H
#define KP_SCHEDULING_OVERLAY_PLAN_H

#include "cloud/overlay.h"
#include "scheduling/snapshot_build.h"

/* Sets cluster->catalog_for and catalog_ctx; *out owns the catalogs the
 * snapshot will read (free it after the snapshot). With no overlays the
 * cluster is left alone and *out is NULL. */
int kp_overlay_plan(kp_cluster *cluster, const kp_nodeoverlay *const *overlays, size_t n_overlays,
                    kp_overlay_catalogs **out);

#endif
