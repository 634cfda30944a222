/* Shared by the disruption planner's files; not part of the interface. */
#ifndef KP_DISRUPTION_INTERNAL_H
#define KP_DISRUPTION_INTERNAL_H

#include "disruption/disruption.h"

/* What a loop knows about one node. */
typedef struct node_facts {
    bool managed;          /* has a NodePool we know */
    bool eligible;         /* may be disrupted gracefully (consolidation, emptiness) */
    bool eligible_forced;  /* may be disrupted when pod protections do not hold (drift with a grace period) */
    const kp_disrupt_blocked *blocked;   /* why not eligible; NULL when eligible */
    uint32_t *pods;        /* pods that would need a new home */
    uint32_t n_pods;
    double price;          /* hourly price of its instance type's offering in its zone and capacity type */
    double cost;           /* Karpenter's rescheduling cost: 1 per node plus each pod's eviction cost */
    bool empty;
    bool consolidatable;       /* consolidateAfter has elapsed */
    const kp_disrupt_blocked *not_consolidatable;
    bool closed_to_moves;      /* still within consolidateAfter: receives no moved pods */
    bool drifted;
    int64_t drifted_ns;
    const char *drift_reason;
    bool expired;
    bool spot;
    bool counts_for_budget;    /* managed and initialized: counted in the NodePool's budget */
    bool consumes_budget;      /* not ready or being deleted: already disrupting */
} node_facts;

enum { REASON_EMPTY = 0, REASON_DRIFTED, REASON_UNDERUTILIZED, N_REASONS };

/* A node with the key a method orders candidates by. */
typedef struct ranked {
    uint32_t node;
    double key;
} ranked;

/* qsort orders: by key, ties by node index (deterministic). */
int ranked_desc(const void *a, const void *b);
int ranked_asc(const void *a, const void *b);

typedef struct planner {
    kp_snapshot *snap;
    const kp_disrupt_opts *opts;
    kp_disruption_plan *plan;
    kp_arena *scratch;  /* one method's working memory */
    kp_arena *loop_arena; /* one loop's: the pod index, the facts' pod lists */
    kp_arena_mark loop_mark;
    uint32_t cap;       /* length of the per-node arrays */
    bool *gone;         /* nodes taken away by earlier commands */
    bool *touched;      /* candidates, destinations and replacements of this loop's commands */
    bool *fresh;        /* replacements launched in this loop: no moved pod may land there yet */
    node_facts *facts;  /* per node, for the current loop */
    uint32_t n_facts;
    int32_t *it_of_node;
    uint32_t loop;
    const kp_disrupt_blocked **why; /* per node: the latest reason it was not disrupted */
    uint32_t *pods_first; /* pods by node for this loop: node i's are pods_list[first[i] .. first[i+1]) */
    uint32_t *pods_list;
    int32_t *nominated;   /* per node: a pending pod the provisioner would put there, or -1 */
    uint32_t *buffer_pods; /* per node (or NULL): CapacityBuffer virtual pods the provisioner would put there */
    /* Budgets of this loop: what each NodePool's budgets allow per reason, and
     * how many of its nodes are disrupting (at the start, plus this loop's candidates). */
    int64_t *budget;      /* n_templates x N_REASONS */
    int64_t *disrupting;  /* n_templates */
    int64_t *node_count;  /* n_templates: initialised nodes, the base of percentages */
    /* Balanced: each NodePool's hourly cost and disruption cost this loop. */
    double *pool_cost;
    double *pool_disruption;
    const kp_sit **host;  /* per NodePool (merge.c) */
    /* Commands. */
    uint32_t cmd_cap;
    uint32_t loop_commands;
    uint32_t serial;      /* replacement names */
    uint32_t move_cap;
    /* Single-node consolidation found nothing for a node at this capacity
     * epoch (0: not tried); the epoch grows when a loop begins after one
     * that launched a replacement with room to spare (moved pods may land
     * there from then on), the way such a node could succeed later; a node
     * whose pods change is tried again. Only without topology spread or pod
     * (anti-)affinity, whose answers other moves change. */
    uint32_t *tried;
    const kp_disrupt_blocked **why_tried; /* what it found then */
    bool *split_tried;    /* a split was searched for, and its pods have not changed since */
    uint32_t epoch;
    bool capacity_added;  /* this loop launched a replacement with room to spare */
    bool record_only;     /* all_methods_once: record commands, apply none */
    /* What the pods bound to each node request (CPU, memory, pods). `simple`:
     * no NodePool has limits, no pod anti-affinity and no pending pod with
     * topology or affinity terms, so pods without such terms (pod_constrained)
     * go where there is room: for them a node too full for any of them can be
     * left out of a simulation. `feasible_by_room`: the same for required
     * terms only (preferences give way when they must), so whether a node
     * without required terms can go depends on room alone: one that found no
     * consolidation stays so until room appears (tried/epoch). */
    struct used { int64_t v[3]; } *used;
    bool simple;
    bool feasible_by_room;
    uint32_t n_initial;   /* the nodes when planning began (entries of opts->cloud_drift) */
    /* What every simulation starts from while no pod moves (simulate.c):
     * the solver's base, the pending pods, the nodes being deleted; stale
     * once a command is applied. `moved` (per pod) is all false between
     * simulations. */
    kp_solve_base base;
    kp_arena *base_arena;
    bool base_stale;
    uint32_t *pending_pods, n_pending_pods;
    uint32_t *deleting, n_deleting;
    bool *moved;
    const kp_disrupt_blocked **budget_why; /* n_templates x N_REASONS: why_budget's, once made */
    double *pool_prices;  /* n_templates x n_its: pool_launch_price's, POOL_PRICE_UNKNOWN until asked */
} planner;

/* facts.c */
void facts_compute(planner *p);
int64_t facts_now(const planner *p);
/* Whether a pod could be evicted now (no active do-not-disrupt, no budget
 * refusing it): only those get new capacity in a simulation (Karpenter's
 * IsCurrentlyReschedulable). */
bool facts_pod_reschedulable_now(const planner *p, const kp_spod *s);

/* budgets.c */
void budgets_start_loop(planner *p);
/* Disruptions NodePool `t` may still take in this loop for reason REASON_*. */
int64_t budget_left(const planner *p, int32_t t, int reason);
/* The candidates of a command now count as disrupting. */
void budget_take(planner *p, const uint32_t *nodes, uint32_t n);
/* What record_allowances reports: the budget and the disrupting nodes at the start. */
int64_t budget_of(const planner *p, uint32_t t, int reason);
const char *budget_reason_name(int reason);

/* simulate.c: move the pods of `nodes` elsewhere. *out is the simulation (the
 * caller owns it); *why is set when the move is not possible. */
int simulate_move(planner *p, const uint32_t *nodes, uint32_t n, bool consolidation, kp_plan **out,
                  const kp_disrupt_blocked **why);

/* The parts of a simulation a plan keeps (frees `sim`). */
kp_plan *simulation_keep(kp_plan *sim);

/* methods.c: each adds its commands through plan_add; >= 0, or an error */
int method_expiration(planner *p);
int method_emptiness(planner *p);
int method_drift(planner *p);
/* static_drift.c: drifted nodes of static NodePools, each replaced by one
 * NodeClaim of its NodePool (Karpenter's StaticDrift) */
int method_static_drift(planner *p);
/* consolidation.c */
int method_multi_node(planner *p);
int method_single_node(planner *p);

/* merge.c: grouped multi-node consolidation over `cands` (within budgets). */
int merge_groups(planner *p, const uint32_t *cands, uint32_t n);
/* Each NodePool's host type this loop: the one that runs its pods' mix most
 * cheaply. A multi-node replacement is no larger than it. */
void hosts_start_loop(planner *p);
bool within_host(const planner *p, const kp_plan_claim *c);

/* replace.c: Karpenter's computeConsolidation for `nodes`: 1 with the
 * simulation in *out (no claims: delete; claims: replace), 0 with *why, or
 * an error. `split` allows several cheaper claims for one node. */
int consolidate(planner *p, const uint32_t *nodes, uint32_t n, bool split, kp_plan **out,
                const kp_disrupt_blocked **why);
/* Karpenter's filterOutSameInstanceType for a multi-node replacement. */
bool not_same_type(planner *p, kp_plan_claim *c, const uint32_t *nodes, uint32_t n);
/* Restrict a claim to options cheaper than max_price (worst launch price),
 * repriced and pinned; false when none is left or minValues fails. */
bool keep_cheaper(planner *p, kp_plan_claim *c, double max_price);
void pin_capacity_type(planner *p, kp_plan_claim *c, kp_sym ct);
/* `key In values` (sorts `values`, which the requirement then points at). */
kp_requirement requirement_in(kp_sym key, kp_sym *values, uint32_t n);
void reprice(const planner *p, kp_plan_claim *c);
double worst_launch_price(const planner *p, const kp_requirements *reqs, uint32_t it);
double launch_price(const planner *p, const kp_requirements *reqs, uint32_t it);
/* launch_price under NodePool `t`'s own requirements: what consolidation
 * compares replacements against, the same all plan long, so made once. */
double pool_launch_price(const planner *p, uint32_t t, uint32_t it);
#define POOL_PRICE_UNKNOWN (-2.0) /* launch prices are >= 0, or -1 for none */

/* split.c: single-node consolidation onto several cheaper NodeClaims. The
 * solver's own several claims for `node` (1 when they cost less, pinned;
 * 0, maybe with *why), or a search over cheaper instance types. */
int split_claims(planner *p, uint32_t node, kp_plan *sim, const kp_disrupt_blocked **why);
int split_node(planner *p, uint32_t node, kp_plan **out, const kp_disrupt_blocked **why);

/* balanced.c */
void balanced_start_loop(planner *p);
/* Karpenter's CanPassThreshold: whether even deleting the node could pass. */
bool balanced_can_pass(const planner *p, uint32_t node);
/* Score a consolidation per NodePool; false when a Balanced pool rejects it.
 * *scores (plan arena) has one entry per NodePool of the candidates. */
bool balanced_approve(planner *p, const uint32_t *nodes, uint32_t n, const kp_plan *sim,
                      const kp_disrupt_score **scores, uint32_t *n_scores);
/* Count a move as Karpenter does (karpenter_consolidation_moves_total). */
void balanced_record_moves(planner *p, const char *type, const kp_disrupt_score *scores, uint32_t n,
                           bool approved);
const char *policy_name(const planner *p, int32_t template_index);

/* reasons.c: explanations as data */
const kp_disrupt_blocked *why_new(planner *p, enum kp_disrupt_block kind, const char *object,
                                  const char *reason, const char *message);
const kp_disrupt_blocked *why_budget(planner *p, uint32_t node, int reason);
/* Balanced turned the move (or deleting the node) away: `what` says which. */
const kp_disrupt_blocked *why_balanced(planner *p, uint32_t node, const char *what, const kp_disrupt_score *score);
/* The pods that found no place, in Karpenter's words and ours. */
const kp_disrupt_blocked *why_unschedulable(planner *p, const kp_plan *sim, uint32_t first_error);
/* `cause` as the reason a drifted node waits. */
const kp_disrupt_blocked *why_drift(planner *p, uint32_t node, const kp_disrupt_blocked *cause);
void note_why(planner *p, uint32_t node, const kp_disrupt_blocked *why);
void note_why_drift(planner *p, uint32_t node, const kp_disrupt_blocked *why);

/* planner.c */
/* Topology spread or pod (anti-)affinity terms; with required_only, those a
 * placement must satisfy (DoNotSchedule spreads, required terms). */
bool pod_constrained(const kp_spod *s, bool required_only);
/* Add a command of this loop and apply it to the snapshot (candidates gone,
 * pods moved, replacements added, budgets taken). The command's arrays must
 * live in the plan's arena and `sim` is handed over. Returns whether the
 * method may look for another command in this loop. */
bool plan_add(planner *p, enum kp_disrupt_method m, const uint32_t *nodes, uint32_t n, kp_plan *sim,
              const kp_disrupt_score *scores, uint32_t n_scores);
/* Whether this loop can take no more commands. */
bool loop_full(const planner *p);
/* Whether `node` may still be a candidate in this loop. */
bool available(const planner *p, uint32_t node);
double plan_claims_price(const kp_plan *plan);
const char *pool_name(const planner *p, uint32_t node);

#endif
