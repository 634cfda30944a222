/*
 * Karpenter's voluntary disruption metrics from the disruption controller's
 * plans and commands: how long each method took to evaluate, the decisions
 * started (in total, per NodePool of their candidates, and per NodeClaim
 * disrupted, with its capacity type), and consolidations that failed
 * validation (found once, not found again).
 */
#ifndef KP_CONTROLLER_DISRUPTION_METRICS_H
#define KP_CONTROLLER_DISRUPTION_METRICS_H

#include "controller/ctrl.h"
#include "disruption/disruption.h"

/* A plan was made: karpenter_voluntary_disruption_decision_evaluation_duration_seconds
 * for each method it ran (expiration is not one of Karpenter's disruption
 * methods: its NodeClaims expire in the lifecycle). */
void kp_disruption_metrics_plan(kp_ctrl *c, const kp_disruption_plan *plan);

/* Command `k` of a plan over `snap` was started. */
void kp_disruption_metrics_decision(kp_ctrl *c, const kp_snapshot *snap, const kp_disrupt_command *k);

/* A consolidation of `method` over `candidates` nodes waited for validation
 * and was not found again. */
void kp_disruption_metrics_failed_validation(kp_ctrl *c, enum kp_disrupt_method method, uint32_t candidates);

#endif
