/*
 * Multi-node and single-node consolidation (Karpenter's
 * multinodeconsolidation.go and singlenodeconsolidation.go), each adding as
 * many commands to the loop as the Underutilized budgets allow: multi-node
 * searches the longest prefix of the candidates (by savings per unit of
 * disruption) that can go at once, again over what is left; single-node
 * tries every candidate in turn, NodePools interleaved. Balanced NodePools
 * score each move.
 */
#include "disruption/disruption_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    /* Prefix searches per loop and kind, each a binary search over what
     * earlier ones left: one is Karpenter's; more let a loop use its budget. */
    MULTI_ROUNDS = 4,
};


/* Karpenter's consolidation ShouldDisrupt, in its order; the reason when not. */
static const kp_disrupt_blocked *not_consolidatable(planner *p, uint32_t i)
{
    const kp_snapshot *snap = p->snap;
    const node_facts *f = &p->facts[i];
    const kp_nodepool *np = snap->templates[snap->nodes[i].template_index].src;
    const char *pool = pool_name(p, i), *it = snap->nodes[i].instance_type;
    kp_arena *a = p->plan->arena;
    if (p->it_of_node[i] < 0)
        return why_new(p, KP_BLOCK_INSTANCE_TYPE_NOT_FOUND, it ? it : "",
                       kp_arena_printf(a, "its instance type %s is not in the catalog", it ? it : "(none)"), NULL);
    bool ct = kp_symlabels_get(&snap->nodes[i].labels, KP_SYM_CAPACITY_TYPE) != KP_SYM_NONE;
    if (!ct || !kp_symlabels_get(&snap->nodes[i].labels, KP_SYM_ZONE))
        return why_new(p, KP_BLOCK_MISSING_LABEL, ct ? "topology.kubernetes.io/zone" : "karpenter.sh/capacity-type",
                       "node has no zone or capacity-type label", NULL);
    if (np && np->disruption.has_consolidate_after && np->disruption.consolidate_after.never)
        return f->not_consolidatable;
    if (np && np->disruption.consolidation_policy == KP_CONSOLIDATION_WHEN_EMPTY)
        return why_new(p, KP_BLOCK_WHEN_EMPTY, pool,
                       kp_arena_printf(a, "NodePool %s consolidates only empty nodes (WhenEmpty)", pool), NULL);
    return f->consolidatable ? NULL : f->not_consolidatable;
}

/* The candidates, by savings per unit of disruption. */
static uint32_t consolidation_candidates(planner *p, ranked *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (!available(p, i) || !f->managed || f->blocked || f->empty)
            continue;
        const kp_disrupt_blocked *why = not_consolidatable(p, i);
        if (why)
            note_why(p, i, why);
        else
            out[n++] = (ranked){i, f->price / f->cost};
    }
    qsort(out, n, sizeof(*out), ranked_desc);
    return n;
}

/* Candidates still available and within the Underutilized budgets, in order;
 * the others noted. */
static uint32_t within_budgets(planner *p, const ranked *c, uint32_t n, uint32_t *out)
{
    int64_t *left = KP_ARENA_NEW(p->scratch, int64_t, p->snap->n_templates ? p->snap->n_templates : 1);
    uint32_t k = 0;
    for (uint32_t t = 0; t < p->snap->n_templates; t++)
        left[t] = budget_left(p, (int32_t)t, REASON_UNDERUTILIZED);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = p->snap->nodes[c[i].node].template_index;
        if (!available(p, c[i].node))
            continue;
        if (left[t] <= 0) {
            note_why(p, c[i].node, why_budget(p, c[i].node, REASON_UNDERUTILIZED));
            continue;
        }
        left[t]--;
        out[k++] = c[i].node;
    }
    return k;
}

typedef struct search {
    kp_plan *best;
    uint32_t best_n;
    const kp_disrupt_score *scores, *rejected;
    uint32_t n_scores, n_rejected;
} search;

/* One probe of the binary search: the first `n` candidates at once. */
static int probe(planner *p, const uint32_t *nodes, uint32_t n, search *s)
{
    kp_plan *sim = NULL;
    const kp_disrupt_blocked *why;
    int ok = consolidate(p, nodes, n, false, &sim, &why);
    if (ok <= 0)
        return ok;
    /* Beyond Karpenter: no replacement larger than the NodePool's host type
     * (a dear shape later loops could not improve); then Karpenter's
     * filterOutSameInstanceType. */
    if (sim->n_claims == 1 && (!within_host(p, &sim->claims[0]) || !not_same_type(p, &sim->claims[0], nodes, n))) {
        kp_plan_free(sim);
        return 0;
    }
    const kp_disrupt_score *scores;
    uint32_t n_scores;
    if (!balanced_approve(p, nodes, n, sim, &scores, &n_scores)) {
        s->rejected = scores, s->n_rejected = n_scores;
        kp_plan_free(sim);
        return 0;
    }
    kp_plan_free(s->best);
    s->best = sim, s->best_n = n, s->scores = scores, s->n_scores = n_scores;
    return 1;
}

/* Karpenter's firstNConsolidationOption: the longest prefix (2 to 100
 * candidates) whose pods fit the rest of the cluster plus at most one cheaper
 * NodeClaim, no larger than the host type. 1 with a command added, 0 when
 * none, or an error. */
static int first_n(planner *p, const uint32_t *nodes, uint32_t n)
{
    uint32_t max = n < p->opts->multi_node_max ? n : p->opts->multi_node_max;
    if (n <= max)
        max = n ? n - 1 : 0;
    uint32_t lo = 1, hi = max;
    search s = {0};
    while (n >= 2 && lo <= hi) {
        uint32_t mid = (lo + hi) / 2;
        int ok = probe(p, nodes, mid + 1, &s);
        if (ok < 0) {
            kp_plan_free(s.best);
            return ok;
        }
        if (ok)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (!s.best) {
        if (s.rejected)
            balanced_record_moves(p, "multi", s.rejected, s.n_rejected, false);
        return 0;
    }
    balanced_record_moves(p, "multi", s.scores, s.n_scores, true);
    plan_add(p, KP_DISRUPT_MULTI_NODE, nodes, s.best_n, s.best, s.scores, s.n_scores);
    return 1;
}

static int merges(planner *p, const ranked *c, uint32_t n, uint32_t *nodes)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (available(p, c[i].node))
            nodes[k++] = c[i].node;
    return merge_groups(p, nodes, k);
}

static int prefixes(planner *p, const ranked *c, uint32_t n, uint32_t *nodes)
{
    uint32_t found = 0;
    for (uint32_t round = 0; round < MULTI_ROUNDS && !loop_full(p); round++) {
        int ok = first_n(p, nodes, within_budgets(p, c, n, nodes));
        if (ok < 0)
            return ok;
        if (ok == 0 || p->record_only)
            break;
        found++;
    }
    return (int)found;
}

/* Karpenter's prefix search, then the grouped merges over what it left. */
int method_multi_node(planner *p)
{
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, p->snap->n_nodes ? p->snap->n_nodes : 1);
    uint32_t *nodes = KP_ARENA_NEW(p->scratch, uint32_t, p->snap->n_nodes ? p->snap->n_nodes : 1);
    uint32_t n = consolidation_candidates(p, c);
    int found = prefixes(p, c, n, nodes);
    if (found < 0 || p->record_only || loop_full(p))
        return found;
    int merged = merges(p, c, n, nodes);
    return merged < 0 ? merged : found + merged;
}

/* Round-robin across NodePools, each in savings order, so one large pool
 * does not starve the others (Karpenter's shuffleCandidates). */
static uint32_t interleave(const planner *p, const ranked *c, uint32_t n, uint32_t *out)
{
    uint32_t nt = p->snap->n_templates ? p->snap->n_templates : 1;
    uint32_t *count = KP_ARENA_NEW(p->scratch, uint32_t, nt), *rank = KP_ARENA_NEW(p->scratch, uint32_t, n ? n : 1);
    uint32_t *at = KP_ARENA_NEW(p->scratch, uint32_t, n ? n : 1), rounds = 0;
    for (uint32_t i = 0; i < n; i++) {
        rank[i] = count[p->snap->nodes[c[i].node].template_index]++;
        rounds = rank[i] + 1 > rounds ? rank[i] + 1 : rounds;
    }
    /* Position: all first-ranked nodes by NodePool, then all second-ranked, ... */
    uint32_t *start = KP_ARENA_NEW(p->scratch, uint32_t, rounds + 1);
    for (uint32_t i = 0; i < n; i++)
        start[rank[i] + 1]++;
    for (uint32_t r = 0; r < rounds; r++)
        start[r + 1] += start[r];
    for (uint32_t i = 0; i < n; i++)
        at[i] = start[rank[i]]++;
    for (uint32_t i = 0; i < n; i++)
        out[at[i]] = c[i].node;
    return n;
}

/* Balanced turns away a node even deleting it would not pay for. */
static const kp_disrupt_blocked *why_low_score(planner *p, uint32_t node)
{
    const kp_disrupt_score *scores;
    uint32_t n;
    balanced_approve(p, &node, 1, NULL, &scores, &n);
    return why_balanced(p, node, "even deleting it", scores);
}

/* One node: Karpenter's computeConsolidation, then a split when one cheaper
 * NodeClaim cannot take its pods. */
static int evaluate(planner *p, uint32_t node, kp_plan **sim, const kp_disrupt_blocked **why)
{
    bool split = p->opts->split_max >= 2;
    int ok = consolidate(p, &node, 1, split, sim, why);
    if (ok != 0 || !split || !*why || ((*why)->kind != KP_BLOCK_NO_CHEAPER && (*why)->kind != KP_BLOCK_NEEDS_SEVERAL))
        return ok;
    const kp_disrupt_blocked *split_why;
    ok = split_node(p, node, sim, &split_why);
    if (ok == 0 && split_why && split_why->kind == KP_BLOCK_NEEDS_SEVERAL)
        *why = split_why;
    return ok;
}

/* Whether the node found no consolidation before and nothing changed that
 * could help it: only room could, for pods whose placement only room decides
 * (preferences give way before a placement fails). */
static bool remembered(const planner *p, uint32_t node)
{
    if (!p->feasible_by_room || p->tried[node] != p->epoch)
        return false;
    const node_facts *f = &p->facts[node];
    for (uint32_t i = 0; i < f->n_pods; i++)
        if (pod_constrained(&p->snap->pods[f->pods[i]], true))
            return false;
    return true;
}

/* 1: a command added; 0: the node stays (reason noted); or an error. */
static int single(planner *p, uint32_t node)
{
    if (remembered(p, node)) { /* nothing changed that could help it */
        note_why(p, node, p->why_tried[node]);
        return 0;
    }
    kp_plan *sim;
    const kp_disrupt_blocked *why;
    int ok = evaluate(p, node, &sim, &why);
    if (ok <= 0) {
        if (ok == 0 && why) {
            note_why(p, node, why);
            p->tried[node] = p->epoch, p->why_tried[node] = why;
        }
        return ok;
    }
    const kp_disrupt_score *scores;
    uint32_t n_scores;
    bool approved = balanced_approve(p, &node, 1, sim, &scores, &n_scores);
    balanced_record_moves(p, "single", scores, n_scores, approved);
    if (!approved) {
        note_why(p, node, why_balanced(p, node, "the move", scores));
        kp_plan_free(sim);
        return 0;
    }
    plan_add(p, KP_DISRUPT_SINGLE_NODE, &node, 1, sim, scores, n_scores);
    return 1;
}

int method_single_node(planner *p)
{
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, p->snap->n_nodes ? p->snap->n_nodes : 1);
    uint32_t *order = KP_ARENA_NEW(p->scratch, uint32_t, p->snap->n_nodes ? p->snap->n_nodes : 1);
    uint32_t n = interleave(p, c, consolidation_candidates(p, c), order), found = 0;
    for (uint32_t i = 0; i < n && !loop_full(p); i++) {
        uint32_t node = order[i];
        if (!available(p, node))
            continue;
        if (budget_left(p, p->snap->nodes[node].template_index, REASON_UNDERUTILIZED) <= 0) {
            note_why(p, node, why_budget(p, node, REASON_UNDERUTILIZED));
            continue;
        }
        if (!balanced_can_pass(p, node)) {
            note_why(p, node, why_low_score(p, node));
            continue;
        }
        int ok = single(p, node);
        if (ok < 0)
            return ok;
        found += (uint32_t)ok;
        if (ok && p->record_only)
            break;
    }
    return (int)found;
}
