/*
 * The caps' headroom on /metrics (beyond Karpenter): what provisioning may
 * still add before a cap (api/caps.h) holds pods back, recomputed every 10
 * seconds from the informers, counted as the solver counts it
 * (scheduling/caps.h).
 *
 *   karpenter_caps_headroom{cap, nodepool}
 *     cap="max-nodes-total"  nodes and NodeClaims        nodepool=""
 *     cap="cores-total"      CPU cores                   nodepool=""
 *     cap="memory-total"     bytes                       nodepool=""
 *     cap="max-hourly-cost"  dollars an hour             nodepool="" (--max-hourly-cost)
 *                                                        or the NodePool (its annotation)
 *
 * Negative when the cluster is above a cap (it was lowered). Only caps in
 * force have a series; without any, the pass builds nothing.
 */
#ifndef KP_CONTROLLER_CAPS_CTRL_H
#define KP_CONTROLLER_CAPS_CTRL_H

#include "controller/ctrl.h"

typedef struct kp_caps_ctrl kp_caps_ctrl;

/* Registers the family in c->metrics (none when the controller has no registry). */
int kp_caps_ctrl_new(kp_ctrl *c, kp_caps_ctrl **out);
kp_caps_ctrl *kp_caps_ctrl_free(kp_caps_ctrl *cc);

/* A kp_loop_fn (`state`: the kp_caps_ctrl). */
int kp_caps_headroom_pass(kp_ctrl *c, void *state);

#endif
