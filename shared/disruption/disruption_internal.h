/* Shared by the disruption planner's files; not part of the interface. */
#ifndef KP_DISRUPTION_INTERNAL_H
#define KP_DISRUPTION_INTERNAL_H

#include "disruption/disruption.h"

/* What a loop knows about one node. */
typedef struct node_facts {
    bool managed;          /* has a NodePool we know */
    bool eligible;         /* may be disrupted gracefully (consolidation, emptiness) */
    bool eligible_forced;  /* may be disrupted when pod protections do not hold (drift with a grace period) */
    const char *blocked;   /* why not eligible; NULL when eligible */
    uint32_t *pods;        /* pods that would need a new home */
    uint32_t n_pods;
    double price;          /* hourly price of its instance type's offering in its zone and capacity type */
    double cost;           /* Karpenter's rescheduling cost: 1 per node plus each pod's eviction cost */
    bool empty;
    bool consolidatable;       /* consolidateAfter has elapsed */
    const char *not_consolidatable;
    bool closed_to_moves;      /* still within consolidateAfter: receives no moved pods */
    bool drifted;
    int64_t drifted_ns;
    const char *drift_reason;
    bool expired;
    bool spot;
    bool counts_for_budget;    /* managed and initialized: counted in the NodePool's budget */
    bool consumes_budget;      /* not ready or being deleted: already disrupting */
} node_facts;

typedef struct planner {
    kp_snapshot *snap;
    const kp_disrupt_opts *opts;
    kp_disruption_plan *plan;
    kp_arena *scratch;
    bool *gone;         /* nodes taken away by earlier commands */
    node_facts *facts;  /* per node, for the current loop */
    uint32_t n_facts;
    int32_t *it_of_node;
    uint32_t loop;
    const char **why;   /* per node: the latest reason it was not disrupted */
    uint32_t *pods_first; /* pods by node for this loop: node i's are pods_list[first[i] .. first[i+1]) */
    uint32_t *pods_list;
    int32_t *nominated;   /* per node: a pending pod the provisioner would put there, or -1 */
} planner;

/* facts.c */
void facts_compute(planner *p);
int64_t facts_now(const planner *p);
/* Whether a pod could be evicted now (no active do-not-disrupt, no budget
 * refusing it): only those get new capacity in a simulation (Karpenter's
 * IsCurrentlyReschedulable). */
bool facts_pod_reschedulable_now(const planner *p, const kp_spod *s);

/* budgets.c: disruptions each template may still take for `reason` ("Empty", ...) */
void budgets_compute(planner *p, const char *reason, int64_t *allowed);

/* simulate.c: move the pods of `nodes` elsewhere. *out is the simulation (the
 * caller owns it); *why is set when the move is not possible. */
int simulate_move(planner *p, const uint32_t *nodes, uint32_t n, bool consolidation, kp_plan **out,
                  const char **why);

/* methods.c */
int method_expiration(planner *p, kp_disrupt_command *cmd);
int method_emptiness(planner *p, kp_disrupt_command *cmd);
int method_drift(planner *p, kp_disrupt_command *cmd);
int method_multi_node(planner *p, kp_disrupt_command *cmd);
int method_single_node(planner *p, kp_disrupt_command *cmd);

/* helpers */
double plan_claims_price(const kp_plan *plan);
void note_why(planner *p, uint32_t node, const char *reason);
void note_why_drift(planner *p, uint32_t node, const char *reason);

#endif
