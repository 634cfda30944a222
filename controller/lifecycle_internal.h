/* Shared between the parts of the NodeClaim lifecycle controller. */
#ifndef KP_CONTROLLER_LIFECYCLE_INTERNAL_H
#define KP_CONTROLLER_LIFECYCLE_INTERNAL_H

#include "controller/lifecycle.h"
#include "api/objects.h"
#include "kube/objutil.h"

/* One reconcile of one claim. */
typedef struct claim_ctx {
    kp_ctrl *c;
    cJSON *obj;         /* the claim as we want it */
    const cJSON *orig;  /* as read */
    kp_arena *arena;
    kp_nodeclaim nc;    /* decoded from orig */
    int64_t now;
    int64_t requeue_ms;
    const char *pool;   /* karpenter.sh/nodepool label or "" */
} claim_ctx;

void lc_requeue(claim_ctx *x, int64_t ms);
void lc_event(claim_ctx *x, const char *type, const char *reason, const char *msg);
void lc_observe_cloud(kp_ctrl *c, const char *method, int64_t start, int err);
bool lc_taint_matches(const cJSON *t, const char *key, const char *effect);
void lc_remove_taint(cJSON *node, const char *key);

/* The steps, in Karpenter's order. Each returns 0 to go on, 1 when it wrote
 * something that must be persisted before the next step (launch), or a
 * negative KP_E*. */
int lc_launch(claim_ctx *x);
int lc_registration(claim_ctx *x);
int lc_initialization(claim_ctx *x);
int lc_liveness(claim_ctx *x);
/* The launch cache (Karpenter's, by claim UID): apply a launch this process
 * made that `claim` does not show yet; forget it once the claim shows it. */
void lc_recall_launch(kp_ctrl *c, cJSON *claim, int64_t now);
void lc_forget_launch(kp_ctrl *c, const char *uid);
/* The claim is being deleted. */
int lc_finalize(claim_ctx *x);

#endif
