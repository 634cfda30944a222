/*
 * The NodeOverlay controller (gate NodeOverlay), as Karpenter's: any change
 * of a NodeOverlay, a NodePool or a node class evaluates every overlay
 * against every NodePool's instance types at once (cloud/overlay.h), writes
 * each overlay's conditions (ValidationSucceeded False with reason Conflict or
 * RuntimeValidation, and Ready), and publishes the result: the provisioner's
 * and the disruption planner's views apply it to the catalogs they plan with
 * (view.c). Until the first evaluation, and for a NodePool whose instance
 * types could not be had, NodePools wait (Karpenter: awaiting evaluation).
 */
#ifndef KP_CONTROLLER_NODEOVERLAY_CTRL_H
#define KP_CONTROLLER_NODEOVERLAY_CTRL_H

#include "cloud/overlay.h"
#include "controller/ctrl.h"

/* The evaluation published, shared by the controller and the views. */
typedef struct kp_overlay_state kp_overlay_state;

kp_overlay_state *kp_overlay_state_new(void);
kp_overlay_state *kp_overlay_state_free(kp_overlay_state *state);
/* The store now, as a reference (kp_overlay_store_unref it); NULL before the
 * first evaluation. */
kp_overlay_store *kp_overlay_state_get(kp_overlay_state *state);

/* kp_kwok_opts.overlaid: `catalog` as the claim's NodePool sees it now (a
 * new catalog, NULL when nothing changes); `ctx` is the kp_overlay_state. */
kp_catalog *kp_nodeoverlay_claim_catalog(void *ctx, const kp_nodeclaim *claim, const kp_catalog *catalog);

/* The one work-queue key: every reconcile looks at all overlays. */
#define KP_NODEOVERLAY_KEY "nodeoverlays"

/* Karpenter re-evaluates at least this often. */
#define KP_NODEOVERLAY_RESYNC_MS (6LL * 3600 * 1000)

/* kp_reconcile_fn; `state` is the kp_overlay_state (c->overlays). */
int kp_nodeoverlay_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* Whether an update matters to the evaluation (Karpenter's generation
 * predicate; template labels of a NodePool are in its spec). */
bool kp_nodeoverlay_update_matters(const cJSON *old_obj, const cJSON *new_obj);

#endif
