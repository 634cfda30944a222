/*
 * Disruption commands in flight (Karpenter's orchestration queue): each one
 * progresses on its own, so a drift of many nodes under a budget of several,
 * or an expiration while a consolidation waits for its replacement, proceed
 * side by side.
 *
 *   start      forceful (expiration): the candidates' NodeClaims are deleted
 *              at once. Otherwise: the candidates are tainted
 *              karpenter.sh/disrupted:NoSchedule and their NodeClaims get the
 *              DisruptionReason condition, the replacements are created
 *              (DisruptionLaunching, DisruptionWaitingReadiness events);
 *   progress   once every replacement is Initialized the candidates' NodeClaims
 *              are deleted (DisruptionTerminating on the Node and NodeClaim)
 *              and the command is done; a replacement that disappears or does
 *              not initialize within 15 minutes aborts it: taints and
 *              conditions are taken back, the other replacements deleted.
 *
 * The queue remembers the candidates' Node and NodeClaim names, so the next
 * plan can count them against budgets and leave them out as candidates.
 */
#ifndef KP_CONTROLLER_DISRUPTION_EXEC_H
#define KP_CONTROLLER_DISRUPTION_EXEC_H

#include "controller/ctrl.h"
#include "disruption/disruption.h"

#include <stdbool.h>

typedef struct kp_disrupt_queue kp_disrupt_queue;

kp_disrupt_queue *kp_disrupt_queue_new(void);
kp_disrupt_queue *kp_disrupt_queue_free(kp_disrupt_queue *q);

/* Commands in flight (started, not yet done or abandoned). */
size_t kp_disrupt_queue_len(const kp_disrupt_queue *q);
/* Whether `node` or `claim` (either may be NULL) is a candidate of a command in
 * flight, or of a finished one whose NodeClaims the cache does not show
 * deleting yet (for at most a minute). */
bool kp_disrupt_queue_has(const kp_disrupt_queue *q, const char *node, const char *claim);

/* Start `cmd` of `plan` (its indices are `snap`'s). 0, or KP_E* when it could
 * not start (then it was abandoned). */
int kp_disrupt_queue_start(kp_disrupt_queue *q, kp_ctrl *c, const kp_snapshot *snap, const kp_disrupt_command *cmd);

/* Move every command on; done and abandoned ones leave the queue (done ones
 * stay marked as above). Returns how many finished (deleted their candidates)
 * in this call. */
int kp_disrupt_queue_progress(kp_disrupt_queue *q, kp_ctrl *c);

/* How many NodeClaims of finished commands have, since the last call, gone
 * or had their instance start terminating: each frees a place in its
 * NodePool's disruption budget (Karpenter counts a deleting node until then),
 * so a plan made now may start more. Each is watched until it goes. */
int kp_disrupt_queue_released(kp_disrupt_queue *q, kp_ctrl *c);

/* Put the pods still on the candidates of each command in flight on that
 * command's replacements (first fit, in `snap`): the room a command launched
 * is its own pods'. The next plan leaves it to them, as the planner does for
 * the commands of one pass, instead of sending another candidate's pods onto
 * a replacement still booting (which Karpenter refuses: UninitializedTarget)
 * and waiting for it. Call after the candidates are marked deleting. */
void kp_disrupt_queue_place(kp_disrupt_queue *q, kp_snapshot *snap);

/* Add (or remove) karpenter.sh/disrupted:NoSchedule on a cached node. */
int kp_disruption_taint(kp_ctrl *c, const char *node, bool on);

/* Say why, from one plan (disruption_explain.c): Karpenter's events for the
 * nodes kept (DisruptionBlocked, Unconsolidatable) on
 * the Node and NodeClaim, its Balanced events, the NodePools' blocked
 * budgets, and the plan's metrics. Events are rate-limited as Karpenter's. */
void kp_disruption_explain(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan);

/* A single- or multi-node consolidation command as its events name it,
 * kept from the pass that found it to the one that validates it. */
typedef struct kp_consolidation_ref kp_consolidation_ref;

/* NULL for commands that have no such events (Karpenter writes them for
 * single- and multi-node consolidation only). */
kp_consolidation_ref *kp_consolidation_ref_new(const kp_snapshot *snap, const kp_disrupt_command *cmd);
kp_consolidation_ref *kp_consolidation_ref_free(kp_consolidation_ref *r);

/* ConsolidationCandidate on each candidate's Node and NodeClaim, for a
 * command that replaces them (Karpenter's, as a command is computed):
 * "Consolidation candidate: replace: [NODE] -> [1 replacement] (savings:
 * $0.12)", or for one of several "replace: [NODE] (part of 3-node
 * consolidation)". Deduplicated for 2 minutes by object and command. */
void kp_consolidation_candidate_events(kp_ctrl *c, const kp_consolidation_ref *r);

/* ConsolidationRejected on each candidate's Node and NodeClaim, for a
 * command found before and not found again after the validation period.
 * The reason is Karpenter's validation failure, read from the plan made now
 * (`snap`, `plan`): "churn" when a candidate is gone or no longer a
 * candidate, "budget" when one is nominated or out of budget, else
 * "scheduling" (its pods would go elsewhere now). */
void kp_consolidation_rejected_events(kp_ctrl *c, const kp_consolidation_ref *r, const kp_snapshot *snap,
                                      const kp_disruption_plan *plan);

#endif
