/*
 * The disruption controller: every poll interval, plan one disruption loop
 * (shared/disruption, as `simulate --disrupt` does offline) and carry out its
 * first command, the way Karpenter's disruption controller and orchestration
 * queue do:
 *
 *   - consolidation (emptiness, multi-node, single-node) is validated: the
 *     same command must come out again after the validation period (15 s),
 *     or it is dropped, since pods and prices move;
 *   - drift and expiration act at once (expiration is forceful: budgets do
 *     not hold it back);
 *   - candidates are tainted karpenter.sh/disrupted:NoSchedule, replacement
 *     NodeClaims are created, and only when every replacement is Initialized
 *     are the candidates' NodeClaims deleted (their termination drains them
 *     under PodDisruptionBudgets). A replacement that disappears or does not
 *     initialize in time aborts the command: the candidates are untainted and
 *     kept;
 *   - one command at a time; nothing new is planned while one is in flight;
 *   - on start, disrupted taints left by an earlier process on nodes that are
 *     not being deleted are removed.
 */
#ifndef KP_CONTROLLER_DISRUPTION_CTRL_H
#define KP_CONTROLLER_DISRUPTION_CTRL_H

#include "controller/ctrl.h"

typedef struct kp_disruption_ctrl kp_disruption_ctrl;

kp_disruption_ctrl *kp_disruption_ctrl_new(void);
kp_disruption_ctrl *kp_disruption_ctrl_free(kp_disruption_ctrl *d);

/* One pass (the kp_loop function; `state` is the kp_disruption_ctrl). */
int kp_disruption_pass(kp_ctrl *c, void *state);

#endif
