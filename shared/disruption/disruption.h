/*
 * Disruption planning: which nodes Karpenter would take away, and why the
 * others stay. Pure functions over a snapshot, with Karpenter's methods in
 * Karpenter's order on each loop — expiration (forceful), emptiness, drift,
 * multi-node consolidation, single-node consolidation — under disruption
 * budgets, PodDisruptionBudgets and do-not-disrupt annotations. Every decision
 * is proved by a scheduling simulation: the pods the nodes hold must all find
 * a place on the rest of the cluster plus the replacements.
 *
 * kp_disruption_plan runs loop after loop, applying each command to the
 * snapshot (nodes removed, replacements added, pods moved), until a loop
 * finds nothing more to do: the plan is the sequence, and what is left is
 * explained node by node. The controller executes only the first command of
 * a one-loop plan.
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

typedef struct kp_disrupt_opts {
    int64_t now_ns;
    uint32_t max_loops;     /* 0: until nothing changes (capped at the number of nodes) */
    bool spot_to_spot;      /* Karpenter's SpotToSpotConsolidation feature gate; off by default */
    bool ignore_preferences;
    uint32_t multi_node_max; /* candidates a multi-node consolidation may take; Karpenter: 100 */
    /* One loop in which every method is evaluated over every candidate (each
     * method's command recorded, none applied): the whole decision a loop
     * considers, rather than the first command it would act on. */
    bool all_methods_once;
} kp_disrupt_opts;

#define KP_DISRUPT_OPTS_INIT {0, 0, false, false, 100, false}

typedef struct kp_disrupt_command {
    enum kp_disrupt_method method;
    uint32_t loop;             /* which disruption loop decided it (0-based) */
    const uint32_t *candidates; /* snapshot node indices */
    uint32_t n_candidates;
    kp_plan *simulation;       /* where the pods go; its claims are the replacements */
    double savings_hourly;     /* the candidates' prices minus the replacements' */
} kp_disrupt_command;

typedef struct kp_disrupt_blocked {
    uint32_t node;
    const char *reason;
} kp_disrupt_blocked;

/* What a NodePool's budgets allow for one reason when planning began. */
typedef struct kp_disrupt_allowance {
    uint32_t template_index; /* snapshot template (NodePool) */
    const char *reason;      /* "Empty", "Drifted", "Underutilized" */
    int64_t allowed;         /* nodes that may be disrupted now */
} kp_disrupt_allowance;

typedef struct kp_disruption_plan {
    kp_arena *arena;
    kp_disrupt_allowance *allowances; /* per NodePool x reason (metrics, explanations) */
    uint32_t n_allowances;
    /* Candidates when planning began, by reason (Karpenter's eligible_nodes):
     * empty and past consolidateAfter; drifted; non-empty and past consolidateAfter. */
    uint32_t eligible_empty, eligible_drifted, eligible_underutilized;
    kp_disrupt_command *commands;
    uint32_t n_commands;
    kp_disrupt_blocked *blocked; /* every managed node left in place */
    uint32_t n_blocked;
    double cost_before; /* hourly price of the managed nodes, before and after */
    double cost_after;
    int64_t compute_ns;
} kp_disruption_plan;

/* Plan. `snap` is changed: the commands are applied to it as they are found
 * (its nodes after the call are the cluster after the plan). */
int kp_disruption_plan_compute(kp_snapshot *snap, const kp_disrupt_opts *opts, kp_disruption_plan **out);
kp_disruption_plan *kp_disruption_plan_free(kp_disruption_plan *plan);

/* "Expired", "Empty", "Drifted", "Underutilized" (Karpenter's reasons). */
const char *kp_disrupt_reason(enum kp_disrupt_method method);
/* "expiration", "emptiness", "drift", "multi-node consolidation", ... */
const char *kp_disrupt_method_name(enum kp_disrupt_method method);

/* [{"method","reason","candidates":[...],"replacements":[nodeClaims...],"savingsHourly"}] */
cJSON *kp_disruption_plan_commands_json(const kp_disruption_plan *plan, const kp_snapshot *snap);
/* [{"node","reason"}] */
cJSON *kp_disruption_plan_blocked_json(const kp_disruption_plan *plan, const kp_snapshot *snap);

#endif
