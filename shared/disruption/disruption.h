/*
 * Disruption planning: which nodes Karpenter would take away, and why the
 * others stay. Pure functions over a snapshot, with Karpenter's methods in
 * Karpenter's order — expiration (forceful), emptiness, drift, multi-node
 * consolidation, single-node consolidation — under disruption budgets,
 * PodDisruptionBudgets and do-not-disrupt annotations. Every decision is
 * proved by a scheduling simulation: the pods the nodes hold must all find a
 * place on the rest of the cluster plus the replacements.
 *
 * The plan is a sequence of loops. One loop is what the controller can start
 * at once: every method runs in order and may add several commands, each
 * simulated with the commands before it (of this loop and earlier ones)
 * already applied, so the commands of a loop are valid together:
 *   - their candidates are disjoint, and no candidate receives pods moved by
 *     another command of the loop;
 *   - no command moves pods onto a replacement launched by another command of
 *     the same loop (it has not initialised yet);
 *   - together they stay within each NodePool's budgets, every candidate of the
 *     loop counting as disrupting for every reason (Karpenter's
 *     BuildDisruptionBudgetMapping), the expired ones included.
 * The next loop assumes the previous one completed (candidates gone,
 * replacements initialised, pods where the simulations put them); later
 * loops are a forecast (`simulate --disrupt`, the benchmark).
 *
 * How the controller uses it (Karpenter's orchestration queue):
 *   1. Build the snapshot with the candidates of every command still in
 *      flight marked `deleting` (Karpenter's MarkedForDeletion): they are no
 *      candidates, count against their NodePool's budgets for every reason,
 *      and their pods are placed again in every simulation — on the flight's
 *      replacements too, which are nodes `in_flight` or not `initialized`.
 *      Pass the cloud provider's is_drifted answers in opts.cloud_drift.
 *   2. Plan with opts.max_loops = 1: plan->commands are loop 0, in method
 *      order. Start them all (or only the first: max_commands_per_loop = 1
 *      is Karpenter's one command per pass), and plan again as soon as one is
 *      queued or done.
 *   3. A command: `forceful` (expiration) — delete its NodeClaims now, with no
 *      budget, no validation delay and no replacement to wait for (the
 *      simulation only shows where the provisioner will put the pods).
 *      Otherwise launch `simulation->claims` (none for a delete; several for
 *      a split), wait for them to initialise, taint the candidates
 *      karpenter.sh/disrupted:NoSchedule, then delete them; consolidation
 *      (Empty, Underutilized) first waits the validation period and plans
 *      again, keeping the command only if it is still found.
 *   4. Say why (rate-limited, as Karpenter dedupes them):
 *      - per command: DisruptionTerminating etc. with `reason`;
 *        karpenter_voluntary_disruption_decisions_total{decision,reason,
 *        consolidation_type} with kp_disrupt_decision_name(decision), the
 *        reason lowercased, `consolidation_type`; the Drifted condition's
 *        reason is `drift_reason`; each Balanced score's `event_reason` and
 *        `message` (single-node: on the Node and NodeClaim; multi-node: on
 *        the NodePool);
 *      - per move (plan->moves): karpenter_consolidation_moves_total
 *        {decision,nodepool,policy} ("approved"/"rejected" from `approved`),
 *        and karpenter_consolidation_score{decision,nodepool,policy} observing
 *        score->score when score->scored, its decision from score->approved;
 *      - per node kept (plan->blocked): `event_reason` with `message` on the
 *        Node and its NodeClaim when event_reason is not NULL; `reason` is
 *        the longer explanation (simulate's), `kind` and `object` the data;
 *      - per NodePool and reason (plan->allowances):
 *        karpenter_nodepools_allowed_disruptions{nodepool,reason} = budget,
 *        karpenter_nodepools_nodes_consuming_budgets = disrupting, and a
 *        DisruptionBlocked event on the NodePool with blocked_message;
 *      - eligible_* for karpenter_voluntary_disruption_eligible_nodes.
 *
 * Every managed node left in place gets one reason (kp_disrupt_blocked), with
 * the event Karpenter writes for it where Karpenter has one.
 */
#ifndef KP_DISRUPTION_DISRUPTION_H
#define KP_DISRUPTION_DISRUPTION_H

#include "scheduling/solver.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

enum kp_disrupt_method {
    KP_DISRUPT_EXPIRATION = 0,
    KP_DISRUPT_EMPTINESS,
    KP_DISRUPT_DRIFT,
    KP_DISRUPT_MULTI_NODE,
    KP_DISRUPT_SINGLE_NODE,
};
#define KP_DISRUPT_METHODS 5

/* Karpenter's Command.Decision(). */
enum kp_disrupt_decision {
    KP_DISRUPT_DELETE = 0, /* no replacement */
    KP_DISRUPT_REPLACE,    /* replacements first, then the candidates */
};

/* Beyond Karpenter, always on (the commands are Karpenter's shapes): after
 * Karpenter's prefix search, multi-node consolidation also merges groups of
 * nodes packed by CPU and memory onto the NodePool's cheapest shape, and no
 * multi-node replacement is larger than that shape unless a pod needs it. */
typedef struct kp_disrupt_opts {
    int64_t now_ns;
    uint32_t max_loops;     /* 0: until nothing changes (capped at the number of nodes) */
    bool spot_to_spot;      /* Karpenter's SpotToSpotConsolidation feature gate; off by default */
    bool ignore_preferences;
    uint32_t multi_node_max; /* candidates a multi-node consolidation may take; Karpenter: 100 */
    /* One loop in which every method is evaluated over every candidate (each
     * method's first command recorded, none applied): the whole decision a
     * loop considers, rather than the commands it would act on. */
    bool all_methods_once;
    /* Commands one loop may hold; 0: as many as the budgets allow, 1:
     * Karpenter's serial loop (the first command, then plan again). */
    uint32_t max_commands_per_loop;
    /* Split consolidation (beyond Karpenter, which replaces one node with at
     * most one): the most NodeClaims single-node consolidation may replace one
     * node with when together they cost less; 0 or 1: never. Default 3. */
    uint32_t split_max;
    /* Drift found by the cloud provider, per snapshot node (n_nodes entries
     * when planning starts, or NULL): the provider's is_drifted reason —
     * "AMIDrift", "SubnetDrift", "SecurityGroupDrift", "NodeClassDrift", ... —
     * or NULL when it found none. When this array is given it is the
     * provider's answer and a NodeClaim's own Drifted condition is not read;
     * without it the condition is (what an earlier pass wrote). */
    const char *const *cloud_drift;
    /* Cluster-wide caps (scheduling/caps.h) on what replacements add; NULL: none. */
    const kp_caps *caps;
} kp_disrupt_opts;

#define KP_DISRUPT_OPTS_INIT {.multi_node_max = 100, .split_max = 3}

/* Karpenter v1.14's Balanced consolidation policy (k = 2): a move is approved
 * when (savings / NodePool cost) / (disruption / NodePool disruption cost)
 * >= 1/k. Scored per NodePool of the candidates, against the NodePool's totals
 * when the loop began; only NodePools with consolidationPolicy Balanced are
 * scored (`scored`), the others pass. */
#define KP_DISRUPT_BALANCED_K 2

typedef struct kp_disrupt_score {
    uint32_t template_index;    /* the NodePool */
    const char *policy;         /* its consolidationPolicy, "WhenEmptyOrUnderutilized" when unset */
    bool scored;                /* a Balanced NodePool: the fields below are set */
    bool approved;              /* score >= threshold (always true when not scored) */
    double savings;             /* this NodePool's share of the move's hourly savings */
    double disruption;          /* the candidates' disruption cost (1 per node + pod eviction costs) */
    double savings_fraction;    /* savings / the NodePool's hourly cost */
    double disruption_fraction; /* disruption / the NodePool's total disruption cost */
    double score;               /* savings_fraction / disruption_fraction; 0 without savings, INFINITY without disruption */
    double threshold;           /* 1/k */
    int k;
    /* The event Karpenter writes, "score %.2f >= threshold %.2f (k: %d,
     * savings %.1f%%, disruption %.1f%%)" ("<" when rejected): reason
     * ConsolidationApproved (single-node: on the Node and NodeClaim;
     * multi-node: on the NodePool) when approved; NULL when rejected (Karpenter
     * counts rejections in metrics only) or not scored. */
    const char *event_reason;
    const char *message;
} kp_disrupt_score;

/* Karpenter's ScoreMove: savings and disruption as fractions of the
 * NodePool's totals, approved when their ratio is at least 1/k (no event
 * text; template_index and policy unset). */
kp_disrupt_score kp_disrupt_score_move(double savings, double disruption, double pool_cost, double pool_disruption,
                                       int k);

typedef struct kp_disrupt_command {
    enum kp_disrupt_method method;
    const char *reason;         /* "Expired", "Empty", "Drifted", "Underutilized" (kp_disrupt_reason) */
    /* Drift: why the candidate drifted — "NodePoolDrifted", "RequirementsDrifted",
     * "InstanceTypeNotFound", or the cloud provider's reason ("AMIDrift", ...):
     * the Drifted condition's reason. NULL for other methods. */
    const char *drift_reason;
    const char *consolidation_type; /* Karpenter's label: "empty", "multi", "single", or "" */
    enum kp_disrupt_decision decision;
    /* Forceful (expiration, as in Karpenter v1's nodeclaim expiration
     * controller): delete the candidates' NodeClaims at once — no budget, no
     * validation delay, no replacement launched or awaited; the simulation
     * shows where the provisioner will put the pods. */
    bool forceful;
    uint32_t loop;              /* which disruption loop decided it (0-based) */
    const uint32_t *candidates; /* snapshot node indices */
    uint32_t n_candidates;
    kp_plan *simulation;        /* where the pods go; its claims are the replacements */
    double savings_hourly;      /* the candidates' prices minus the replacements' */
    /* Consolidation: one entry per NodePool of the candidates (Karpenter's
     * per-pool evaluation); Balanced pools carry their score. */
    const kp_disrupt_score *scores;
    uint32_t n_scores;
} kp_disrupt_command;

/* Why a node stays, as data. Karpenter's own checks come first, in its order;
 * the event is Karpenter's (reason and message) where it has one. */
enum kp_disrupt_block {
    KP_BLOCK_NONE = 0,
    /* The node (DisruptionBlocked, on the Node and NodeClaim). */
    KP_BLOCK_IN_FLIGHT,           /* the NodeClaim has no Node yet */
    KP_BLOCK_NOT_INITIALIZED,
    KP_BLOCK_DELETING,
    KP_BLOCK_NODE_DO_NOT_DISRUPT, /* karpenter.sh/do-not-disrupt on the Node or NodeClaim */
    KP_BLOCK_NOMINATED,           /* object: the pending pod the provisioner would put there */
    KP_BLOCK_NODEPOOL_NOT_FOUND,  /* object: the NodePool name */
    /* Its pods (DisruptionBlocked). */
    KP_BLOCK_POD_DO_NOT_DISRUPT,  /* object: "namespace/pod" */
    KP_BLOCK_PDB,                 /* object: "namespace/pdb"; pod: the pod it protects */
    KP_BLOCK_PDB_MULTIPLE,        /* object: "namespace/pdb namespace/pdb" */
    /* Budgets (DisruptionBlocked): object: the NodePool, budget_reason: the reason. */
    KP_BLOCK_BUDGET,
    /* Consolidation (Unconsolidatable). */
    KP_BLOCK_CONSOLIDATION_DISABLED, /* consolidateAfter: Never; object: the NodePool */
    KP_BLOCK_CONSOLIDATE_AFTER,      /* not yet (Karpenter: Consolidatable False, no event) */
    KP_BLOCK_WHEN_EMPTY,             /* object: the NodePool */
    KP_BLOCK_INSTANCE_TYPE_NOT_FOUND,/* object: the instance type */
    KP_BLOCK_MISSING_LABEL,          /* object: the label key */
    KP_BLOCK_UNSCHEDULABLE,          /* a pod would have nowhere to go; object: "namespace/pod" */
    KP_BLOCK_UNINITIALIZED_TARGET,   /* pods would land on a node not initialised; object: that node */
    KP_BLOCK_NEEDS_SEVERAL,          /* its pods need several NodeClaims and no cheaper split exists */
    KP_BLOCK_NO_CHEAPER,             /* no cheaper replacement */
    KP_BLOCK_MIN_VALUES,             /* the cheaper options do not meet minValues */
    KP_BLOCK_SPOT_TO_SPOT_DISABLED,
    KP_BLOCK_SPOT_TO_SPOT_OPTIONS,
    KP_BLOCK_BUFFER_PODS,            /* empty, but hosting CapacityBuffer virtual pods; object: the node */
    KP_BLOCK_BALANCED,               /* Balanced rejected the move (no event); object: the
                                        NodePool; score: the move's (or deleting the node's, when even that
                                        cannot pass: Karpenter's CanPassThreshold, no simulation) */
    /* Drift that cannot proceed (DisruptionBlocked). */
    KP_BLOCK_DRIFT_UNSCHEDULABLE,    /* object: "namespace/pod" */
    /* No event. */
    KP_BLOCK_IN_PLAN,                /* receives pods moved by another command of the same loop (no
                                        candidate until that command is done) */
    KP_BLOCK_NOTHING_TO_DO,          /* nothing cheaper was found */
    KP_BLOCK_STATIC_NODEPOOL,        /* a static NodePool's node: never consolidated; object: the NodePool */
};

typedef struct kp_disrupt_blocked {
    uint32_t node;
    /* A node the plan itself would launch (a replacement), not one that
     * exists: a forecast for `simulate`, nothing for the controller to write. */
    bool replacement;
    enum kp_disrupt_block kind;
    const char *reason;        /* our explanation, as `simulate` prints it */
    /* The event for the Node and its NodeClaim: "DisruptionBlocked" or
     * "Unconsolidatable", or NULL where Karpenter
     * writes none; `message` is Karpenter's text for it. */
    const char *event_reason;
    const char *message;
    const char *object;        /* what blocks it (see the kinds), or NULL */
    const char *pod;           /* KP_BLOCK_PDB: the pod ("namespace/name") */
    const char *budget_reason; /* KP_BLOCK_BUDGET: "Empty", "Drifted", "Underutilized" */
    const kp_disrupt_score *score; /* KP_BLOCK_BALANCED */
} kp_disrupt_blocked;

/* What a NodePool's budgets allow for one reason when planning began. */
typedef struct kp_disrupt_allowance {
    uint32_t template_index; /* snapshot template (NodePool) */
    const char *reason;      /* "Empty", "Drifted", "Underutilized" */
    int64_t allowed;         /* nodes that may be disrupted now (budget minus disrupting) */
    int64_t budget;          /* karpenter_nodepools_allowed_disruptions: the budget before that */
    int64_t disrupting;      /* karpenter_nodepools_nodes_consuming_budgets */
    /* Karpenter's DisruptionBlocked event on the NodePool when its budget for
     * the reason is 0 and it has nodes ("No allowed disruptions for disruption
     * reason %s due to blocking budget"), else NULL. */
    const char *blocked_message;
} kp_disrupt_allowance;

/* One consolidation move as Karpenter counts it in
 * karpenter_consolidation_moves_total{decision,nodepool,policy} and, when
 * scored, karpenter_consolidation_score: every consolidation command, per
 * NodePool, and every move Balanced rejected. */
typedef struct kp_disrupt_move {
    uint32_t loop;
    const char *consolidation_type; /* "multi" or "single" */
    bool approved;
    const kp_disrupt_score *score;
} kp_disrupt_move;

typedef struct kp_disruption_plan {
    kp_arena *arena;
    kp_disrupt_allowance *allowances; /* per NodePool x reason (metrics, explanations) */
    uint32_t n_allowances;
    /* Candidates when planning began, by reason (Karpenter's eligible_nodes):
     * empty and past consolidateAfter; drifted; non-empty and past consolidateAfter. */
    uint32_t eligible_empty, eligible_drifted, eligible_underutilized;
    kp_disrupt_command *commands; /* loop by loop, in Karpenter's method order within a loop */
    uint32_t n_commands;
    uint32_t n_loops;             /* loops that found commands */
    kp_disrupt_blocked *blocked;  /* every managed node left in place */
    uint32_t n_blocked;
    kp_disrupt_move *moves;
    uint32_t n_moves;
    double cost_before; /* hourly price of the managed nodes, before and after */
    double cost_after;
    uint32_t simulations; /* scheduling simulations run (for the benchmark) */
    int64_t compute_ns;
    /* Per method (enum kp_disrupt_method): how long it took over the loops
     * that ran it, and in how many loops it ran (Karpenter's
     * decision_evaluation_duration_seconds). */
    int64_t method_ns[KP_DISRUPT_METHODS];
    uint32_t method_runs[KP_DISRUPT_METHODS];
} kp_disruption_plan;

/* Plan. `snap` is changed as the commands are applied: replacements are
 * appended to its nodes and the pods that move point at their new nodes, but
 * the nodes the commands take away stay in snap->nodes (the commands' and the
 * blocked list's indices refer to them); which nodes go is what the commands
 * say. So `snap` afterwards is not a cluster to plan again. */
int kp_disruption_plan_compute(kp_snapshot *snap, const kp_disrupt_opts *opts, kp_disruption_plan **out);
kp_disruption_plan *kp_disruption_plan_free(kp_disruption_plan *plan);

/* "Expired", "Empty", "Drifted", "Underutilized" (Karpenter's reasons). */
const char *kp_disrupt_reason(enum kp_disrupt_method method);
/* "expiration", "emptiness", "drift", "multi-node consolidation", ... */
const char *kp_disrupt_method_name(enum kp_disrupt_method method);
/* Karpenter's consolidation_type label: "empty", "multi", "single" or "". */
const char *kp_disrupt_consolidation_type(enum kp_disrupt_method method);
/* "delete" or "replace" (Karpenter's decision label). */
const char *kp_disrupt_decision_name(enum kp_disrupt_decision decision);
/* The kind as a stable name for JSON and logs: "PodDoNotDisrupt", "Budget", ... */
const char *kp_disrupt_block_name(enum kp_disrupt_block kind);

/* [{"method","reason","loop","decision","forceful","candidates":[...],
 *   "replacements":[nodeClaims...],"savingsHourly", "driftReason"?, "scores"?}] */
cJSON *kp_disruption_plan_commands_json(const kp_disruption_plan *plan, const kp_snapshot *snap);
/* [{"node","reason","kind","eventReason"?,"message"?,"object"?,...}] */
cJSON *kp_disruption_plan_blocked_json(const kp_disruption_plan *plan, const kp_snapshot *snap);

/* Karpenter's EvictionCost of a pod: 1, plus its deletion cost and priority
 * scaled down, clamped to [-10, 10] (NULL: 1). */
double kp_disrupt_eviction_cost(const kp_pod *pod);

/* Which nodes of static template `t` go when the NodePool has `count` more
 * than spec.replicas (Karpenter's static deprovisioning), at most `count`,
 * into `out` (snapshot node indices), in order: NodeClaims not launched yet,
 * then empty nodes (DaemonSet pods only, none protected by do-not-disrupt),
 * then the rest, those without an active do-not-disrupt first, cheapest to
 * disrupt first (rescheduling cost times the fraction of expireAfter left).
 * Nodes being deleted or taken by a disruption are not chosen. */
uint32_t kp_static_scale_down(const kp_snapshot *snap, uint32_t t, uint32_t count, int64_t now_ns, uint32_t *out);

#endif
