/*
 * Why a node stays, as data: one home for the kinds, their names, and the
 * event Karpenter writes for each (reason and message, from its
 * disruption/events package, its state node's checks and its consolidation
 * methods), next to our own longer explanation.
 */
#include "disruption/disruption_internal.h"


#include <string.h>

typedef struct kind_info {
    const char *name;
    const char *event_reason;
    const char *message; /* printf format taking the object, or a fixed text; NULL: the caller's */
} kind_info;

#define BLOCKED "DisruptionBlocked"
#define UNCONSOLIDATABLE "Unconsolidatable"

static const kind_info kinds[] = {
    [KP_BLOCK_NONE] = {"", NULL, NULL},
    [KP_BLOCK_IN_FLIGHT] = {"InFlight", BLOCKED, "Nodeclaim does not have an associated node"},
    [KP_BLOCK_NOT_INITIALIZED] = {"NotInitialized", BLOCKED, "Node isn't initialized"},
    [KP_BLOCK_DELETING] = {"Deleting", BLOCKED, "Node is deleting or marked for deletion"},
    [KP_BLOCK_NODE_DO_NOT_DISRUPT] = {"NodeDoNotDisrupt", BLOCKED,
                                      "Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation"},
    [KP_BLOCK_NOMINATED] = {"Nominated", BLOCKED, "Node is nominated for a pending pod"},
    [KP_BLOCK_NODEPOOL_NOT_FOUND] = {"NodePoolNotFound", BLOCKED, "NodePool not found (NodePool=%s)"},
    [KP_BLOCK_POD_DO_NOT_DISRUPT] = {"PodDoNotDisrupt", BLOCKED,
                                     "Pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=%s)"},
    [KP_BLOCK_PDB] = {"PodDisruptionBudget", BLOCKED, "Pdb prevents pod evictions (PodDisruptionBudget=[%s])"},
    [KP_BLOCK_PDB_MULTIPLE] = {"MultiplePodDisruptionBudgets", BLOCKED,
                               "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[%s])"},
    [KP_BLOCK_BUDGET] = {"Budget", BLOCKED, NULL},
    [KP_BLOCK_CONSOLIDATION_DISABLED] = {"ConsolidationDisabled", UNCONSOLIDATABLE,
                                         "NodePool \"%s\" has consolidation disabled"},
    [KP_BLOCK_CONSOLIDATE_AFTER] = {"ConsolidateAfter", NULL, NULL},
    [KP_BLOCK_WHEN_EMPTY] = {"WhenEmpty", UNCONSOLIDATABLE,
                             "NodePool \"%s\" has consolidation policy WhenEmpty, but node is not empty"},
    [KP_BLOCK_INSTANCE_TYPE_NOT_FOUND] = {"InstanceTypeNotFound", UNCONSOLIDATABLE, "Instance Type \"%s\" not found"},
    [KP_BLOCK_MISSING_LABEL] = {"MissingLabel", UNCONSOLIDATABLE, "Node does not have label \"%s\""},
    [KP_BLOCK_UNSCHEDULABLE] = {"Unschedulable", UNCONSOLIDATABLE, NULL},
    [KP_BLOCK_UNINITIALIZED_TARGET] = {"UninitializedTarget", UNCONSOLIDATABLE, NULL},
    [KP_BLOCK_NEEDS_SEVERAL] = {"NeedsSeveralNodeClaims", UNCONSOLIDATABLE, NULL},
    [KP_BLOCK_NO_CHEAPER] = {"NoCheaperReplacement", UNCONSOLIDATABLE, "Can't replace with a cheaper node"},
    [KP_BLOCK_MIN_VALUES] = {"MinValues", UNCONSOLIDATABLE, NULL},
    [KP_BLOCK_SPOT_TO_SPOT_DISABLED] = {"SpotToSpotDisabled", UNCONSOLIDATABLE,
                                        "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"},
    [KP_BLOCK_SPOT_TO_SPOT_OPTIONS] = {"SpotToSpotOptions", UNCONSOLIDATABLE, NULL},
    [KP_BLOCK_BUFFER_PODS] = {"BufferPods", UNCONSOLIDATABLE, "Node \"%s\" has buffer pods"},
    /* Karpenter counts Balanced rejections in metrics only, no event. */
    [KP_BLOCK_BALANCED] = {"BalancedScore", NULL, NULL},
    [KP_BLOCK_DRIFT_UNSCHEDULABLE] = {"DriftUnschedulable", BLOCKED, NULL},
    [KP_BLOCK_IN_PLAN] = {"InPlan", NULL, NULL},
    [KP_BLOCK_NOTHING_TO_DO] = {"NothingCheaper", NULL, NULL},
    [KP_BLOCK_STATIC_NODEPOOL] = {"StaticNodePool", NULL, NULL},
};

const char *kp_disrupt_block_name(enum kp_disrupt_block kind)
{
    return (size_t)kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[kind].name : "";
}

/* The kind's text with `object` where it says %s. */
static const char *fill(kp_arena *a, const char *text, const char *object)
{
    const char *at = strstr(text, "%s");
    if (!at)
        return text;
    return kp_arena_printf(a, "%.*s%s%s", (int)(at - text), text, object ? object : "", at + 2);
}

/* `message` NULL: the kind's own text, with `object` where it takes one. */
const kp_disrupt_blocked *why_new(planner *p, enum kp_disrupt_block kind, const char *object, const char *reason,
                                  const char *message)
{
    kp_disrupt_blocked *w = KP_ARENA_NEW(p->plan->arena, kp_disrupt_blocked, 1);
    const kind_info *k = &kinds[kind];
    w->kind = kind;
    w->reason = reason;
    w->object = object;
    w->event_reason = k->event_reason;
    if (!message && k->message)
        message = fill(p->plan->arena, k->message, object);
    w->message = message ? message : reason;
    return w;
}

const kp_disrupt_blocked *why_budget(planner *p, uint32_t node, int reason)
{
    /* The same for every node of the NodePool: made once, not per node and loop. */
    int32_t t = p->snap->nodes[node].template_index;
    const kp_disrupt_blocked **made = t >= 0 && p->budget_why ? &p->budget_why[t * N_REASONS + reason] : NULL;
    if (made && *made)
        return *made;
    const char *pool = pool_name(p, node), *r = budget_reason_name(reason);
    kp_arena *a = p->plan->arena;
    kp_disrupt_blocked *w = (kp_disrupt_blocked *)why_new(
        p, KP_BLOCK_BUDGET, pool,
        kp_arena_printf(a, "the disruption budgets of NodePool %s allow no more %s disruptions now", pool, r),
        kp_arena_printf(a, "No allowed disruptions for disruption reason %s due to blocking budget (NodePool=%s)", r,
                        pool));
    w->budget_reason = r;
    if (made)
        *made = w;
    return w;
}

const kp_disrupt_blocked *why_balanced(planner *p, uint32_t node, const char *what, const kp_disrupt_score *score)
{
    kp_disrupt_blocked *w = (kp_disrupt_blocked *)why_new(
        p, KP_BLOCK_BALANCED, pool_name(p, node),
        kp_arena_printf(p->plan->arena, "Balanced: %s scores %.2f, below %.2f", what, score->score, score->threshold),
        score->message);
    w->score = score;
    return w;
}

/* Karpenter lists up to five pods that would not schedule. The sentence is
 * put together in the arena, as long as its parts: nothing is cut. */
static const char *pods_sentence(planner *p, const kp_plan *sim)
{
    kp_arena *a = p->plan->arena;
    const char *msg = "Not all pods would schedule, ";
    uint32_t shown = 0, total = 0;
    for (uint32_t i = 0; i < sim->n_errors; i++) {
        const kp_spod *s = &p->snap->pods[sim->errors[i].pod];
        if (!s->scheduled)
            continue;
        total++;
        if (shown < 5 && ++shown)
            msg = kp_arena_printf(a, "%s%s => %s ", msg, s->ns_name, sim->errors[i].reason);
    }
    if (total > shown)
        msg = kp_arena_printf(a, "%s and %u other(s)", msg, total - shown);
    return msg;
}

const kp_disrupt_blocked *why_unschedulable(planner *p, const kp_plan *sim, uint32_t first_error)
{
    const kp_spod *s = &p->snap->pods[sim->errors[first_error].pod];
    const char *reason = kp_arena_printf(p->plan->arena, "pod %s would have nowhere to go: %s", s->ns_name,
                                         sim->errors[first_error].reason);
    return why_new(p, KP_BLOCK_UNSCHEDULABLE, s->ns_name, reason, pods_sentence(p, sim));
}

/* A drifted node that cannot go yet: Karpenter blocks it (DisruptionBlocked)
 * with the same message consolidation would give. */
const kp_disrupt_blocked *why_drift(planner *p, uint32_t node, const kp_disrupt_blocked *cause)
{
    kp_disrupt_blocked *w = KP_ARENA_NEW(p->plan->arena, kp_disrupt_blocked, 1);
    *w = *cause;
    w->reason = kp_arena_printf(p->plan->arena, "drifted (%s), but %s", p->facts[node].drift_reason, cause->reason);
    if (cause->kind == KP_BLOCK_UNSCHEDULABLE || cause->kind == KP_BLOCK_UNINITIALIZED_TARGET) {
        w->kind = KP_BLOCK_DRIFT_UNSCHEDULABLE;
        w->event_reason = BLOCKED;
    }
    return w;
}

/* The first reason a loop finds is kept, except that drift's replaces any
 * other: a drifted node waits on its drift (a budget, a pod that cannot
 * move), whatever consolidation would have said. */
void note_why(planner *p, uint32_t node, const kp_disrupt_blocked *why)
{
    if (!p->why[node])
        p->why[node] = why;
}

void note_why_drift(planner *p, uint32_t node, const kp_disrupt_blocked *why)
{
    p->why[node] = why;
}
