/*
 * The disruption controller (Karpenter's disruption controller and
 * orchestration queue): every poll interval, plan one disruption loop
 * (shared/disruption, as `simulate --disrupt` does offline) and start every
 * command of it; commands then progress on their own (disruption_exec.h),
 * checked every second.
 *
 *   - the candidates of commands in flight are marked deleting in the next
 *     plan: no candidates again, and counted against their NodePool's budgets,
 *     so parallel commands stay within them;
 *   - consolidation (emptiness, multi-node, single-node) is validated: the
 *     same command must come out again after the validation period (15 s),
 *     or it is dropped, since pods and prices move; each command on its own;
 *   - drift acts at once; expiration is forceful (no budget, no replacement
 *     to wait for) and never waits behind another command;
 *   - a command finishing frees its budget: the next plan is made at once;
 *   - DISRUPTION_PARALLELISM 1 is Karpenter's serial behaviour (for
 *     comparison);
 *   - on start, disrupted taints left by an earlier process on our nodes that
 *     are not being deleted are removed.
 *
 * Every plan also says why the other nodes stay and what the budgets allow
 * (kp_disruption_explain): events and metrics with Karpenter's names.
 */
#ifndef KP_CONTROLLER_DISRUPTION_CTRL_H
#define KP_CONTROLLER_DISRUPTION_CTRL_H

#include "controller/ctrl.h"

typedef struct kp_disruption_ctrl kp_disruption_ctrl;

kp_disruption_ctrl *kp_disruption_ctrl_new(void);
kp_disruption_ctrl *kp_disruption_ctrl_free(kp_disruption_ctrl *d);

/* One pass (the kp_loop function; `state` is the kp_disruption_ctrl). */
int kp_disruption_pass(kp_ctrl *c, void *state);
/* Commands in flight now. */
size_t kp_disruption_ctrl_in_flight(const kp_disruption_ctrl *d);

#endif
