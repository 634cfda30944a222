/*
 * The scheduling solver: where pending pods go — existing nodes, NodeClaims
 * in flight, or new NodeClaims — with Karpenter's rules (requirements,
 * taints, topology spread, pod (anti-)affinity, volume topology, host ports,
 * NodePool weights and limits, DaemonSet overhead) and its order (pods by CPU
 * then memory, descending; relaxation of preferences one at a time).
 *
 * Pure: a snapshot in, a plan out, no I/O, deterministic. The plan owns its
 * memory; free it with kp_plan_free.
 */
#ifndef KP_SCHEDULING_SOLVER_H
#define KP_SCHEDULING_SOLVER_H

#include "api/caps.h"
#include "scheduling/snapshot.h"

#include <stdbool.h>
#include <stdint.h>

/* What every solve of the same cluster computes before it places a pod: the
 * pods bound to each node and what they request, and the pods whose
 * required anti-affinity repels others. A caller
 * that solves one snapshot many times while no pod moves and no node or pod
 * is added (disruption's simulations) builds it once with
 * kp_solve_base_build, in an arena it owns, and passes it in
 * kp_solve_opts.base: each solve then costs what the nodes and the pods being
 * placed cost, not every pod of the cluster. kp_solve ignores a base built
 * for other counts of nodes or pods; one built before a pod moved is the
 * caller's bug. */
typedef struct kp_solve_base {
    uint32_t n_nodes, n_pods;  /* the snapshot's when it was built */
    const uint32_t *first;     /* n_nodes + 1: node i's pods are pods[first[i] .. first[i + 1]) */
    const uint32_t *pods;      /* bound pods that are not terminal, in index order per node */
    const kp_resvec *used;     /* per node: what its pods request */
    const kp_resvec *daemons;  /* per node: what the DaemonSet pods among them request */
    const uint32_t *anti;      /* bound pods with required anti-affinity terms */
    uint32_t n_anti;
} kp_solve_base;

void kp_solve_base_build(const kp_snapshot *snapshot, kp_arena *arena, kp_solve_base *out);

typedef struct kp_solve_opts {
    bool ignore_preferences;  /* Karpenter's PreferencePolicy=Ignore */
    bool min_values_best_effort;
    uint32_t max_instance_types; /* per NodeClaim; Karpenter launches with 60 */
    const bool *exclude_nodes;   /* n_nodes flags: nodes treated as gone (disruption) */
    bool improve;                /* post-pass that repacks NodeClaims more cheaply */
    /* Consolidation simulations (Karpenter's IsConsolidationSimulation): pods
     * being moved off disrupted nodes may not land on nodes still within their
     * NodePool's consolidateAfter; pending pods may. Both arrays optional. */
    const bool *closed_to_moves; /* n_nodes flags */
    const bool *moved;           /* n_pods flags */
    bool skip_lower_bound;       /* simulations nobody prices against the bound */
    /* Try every place in turn instead of asking the index which ones can take
     * a pod: the reference the index is tested against (same plan, slower). */
    bool plain_scan;
    const kp_solve_base *base;   /* optional (see kp_solve_base) */
    /* Cluster-wide caps (scheduling/caps.h); NULL: none. NodePools' own
     * dollar caps (their annotation) apply either way. */
    const kp_caps *caps;
} kp_solve_opts;

/* Designated, so that a new member needs no edit here (NULL / false by default). */
#define KP_SOLVE_OPTS_INIT {.max_instance_types = 60, .improve = true}

typedef struct kp_plan_claim {
    uint32_t template_index;
    kp_requirements reqs;  /* final: no hostname; instance-type and capacity-type pinned */
    const uint32_t *its;   /* instance types, cheapest first */
    uint32_t n_its;
    kp_resvec requests;    /* pods plus the smallest DaemonSet overhead */
    const uint32_t *pods;  /* snapshot pod indices */
    uint32_t n_pods;
    double price;          /* the launch offering's hourly price */
    kp_sym zone;           /* the launch offering's zone and capacity type */
    kp_sym capacity_type;
} kp_plan_claim;

typedef struct kp_plan_node {
    uint32_t node; /* snapshot node index */
    const uint32_t *pods;
    uint32_t n_pods;
} kp_plan_node;

typedef struct kp_plan_error {
    uint32_t pod;
    const char *reason;
} kp_plan_error;

/* What the NodePool's own requirements leave before any pod is placed
 * (Karpenter's scheduler drops such a NodePool and says so with
 * NoCompatibleInstanceTypes): no instance type with an offering they allow
 * and room for its DaemonSets, or, without min_values_best_effort, too few
 * of them for a minValues. */
enum kp_template_types {
    KP_TEMPLATE_TYPES_OK = 0,
    KP_TEMPLATE_TYPES_NONE,
    KP_TEMPLATE_TYPES_MIN_VALUES,
};

typedef struct kp_plan {
    kp_arena *arena;
    const uint8_t *template_types; /* per snapshot template: enum kp_template_types (static ones: OK) */
    kp_plan_claim *claims;
    uint32_t n_claims;
    kp_plan_node *nodes; /* only nodes that received pods */
    uint32_t n_nodes;
    kp_plan_error *errors;
    uint32_t n_errors;
    uint32_t n_scheduled;
    double hourly_cost;
    double lower_bound_cost;
    int64_t solve_ns;
} kp_plan;

/* Place `pending` (snapshot pod indices). */
int kp_solve(kp_snapshot *snapshot, const kp_solve_opts *opts, const uint32_t *pending,
             uint32_t n_pending, kp_plan **out);

kp_plan *kp_plan_free(kp_plan *plan);

/* Indices of pods with no node that are neither terminal nor daemon pods. */
uint32_t kp_snapshot_pending_pods(const kp_snapshot *snapshot, uint32_t **out, kp_arena *arena);

#endif
