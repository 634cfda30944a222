/*
 * consolidationPolicy: Balanced (Karpenter v1.14, k = 2). A consolidation is
 * scored for each NodePool of its candidates: the NodePool's share of the
 * hourly savings as a fraction of the NodePool's hourly cost, over the
 * candidates' disruption cost (1 per node plus each pod's eviction cost) as
 * a fraction of the NodePool's total disruption cost. A Balanced NodePool
 * approves when that score is at least 1/k; other NodePools always approve.
 * The totals are taken when the loop begins, over every node of the NodePool
 * (Karpenter's computeNodePoolTotals).
 */
#include "disruption/disruption_internal.h"
#include "api/decode.h"
#include "base/xalloc.h"

#include <math.h>
#include <string.h>

static const kp_nodepool *pool_src(const planner *p, int32_t t)
{
    return t >= 0 ? p->snap->templates[t].src : NULL;
}

static bool is_balanced(const planner *p, int32_t t)
{
    const kp_nodepool *np = pool_src(p, t);
    return np && np->disruption.consolidation_policy == KP_CONSOLIDATION_BALANCED;
}

const char *policy_name(const planner *p, int32_t t)
{
    const kp_nodepool *np = pool_src(p, t);
    return kp_consolidation_policy_name(np ? np->disruption.consolidation_policy : KP_CONSOLIDATION_UNSET);
}

void balanced_start_loop(planner *p)
{
    uint32_t nt = p->snap->n_templates ? p->snap->n_templates : 1;
    p->pool_cost = KP_ARENA_NEW(p->loop_arena, double, nt);
    p->pool_disruption = KP_ARENA_NEW(p->loop_arena, double, nt);
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        int32_t t = p->snap->nodes[i].template_index;
        if (p->gone[i] || !f->managed || t < 0)
            continue;
        p->pool_cost[t] += f->price;
        p->pool_disruption[t] += f->cost > 0 ? f->cost : 1.0;
    }
}

kp_disrupt_score kp_disrupt_score_move(double savings, double disruption, double pool_cost, double pool_disruption,
                                       int k)
{
    kp_disrupt_score s = {.scored = true, .k = k, .threshold = 1.0 / k, .savings = savings, .disruption = disruption};
    /* Nothing to normalise against: Karpenter's ScoreMove leaves the
     * fractions at 0, which scores 0 and rejects. */
    if (pool_cost > 0 && pool_disruption > 0) {
        s.savings_fraction = savings / pool_cost;
        s.disruption_fraction = disruption / pool_disruption;
    }
    s.score = s.savings_fraction <= 0 ? 0 : s.disruption_fraction == 0 ? INFINITY
                                          : s.savings_fraction / s.disruption_fraction;
    s.approved = s.score >= s.threshold;
    return s;
}

static void score(const planner *p, kp_disrupt_score *s, double savings, double disruption)
{
    uint32_t t = s->template_index;
    kp_disrupt_score r = kp_disrupt_score_move(savings, disruption, p->pool_cost[t], p->pool_disruption[t],
                                               KP_DISRUPT_BALANCED_K);
    r.template_index = t;
    r.policy = s->policy;
    *s = r;
}

static void describe(planner *p, kp_disrupt_score *s)
{
    /* Karpenter writes approvals only: rejections are too many, and would
     * bury them (karpenter_consolidation_moves_total counts both). */
    s->event_reason = s->approved ? "ConsolidationApproved" : NULL;
    s->message = kp_arena_printf(p->plan->arena, "score %.2f %s threshold %.2f (k: %d, savings %.1f%%, disruption %.1f%%)",
                                 s->score, s->approved ? ">=" : "<", s->threshold, s->k, s->savings_fraction * 100,
                                 s->disruption_fraction * 100);
}

bool balanced_can_pass(const planner *p, uint32_t node)
{
    int32_t t = p->snap->nodes[node].template_index;
    if (!is_balanced(p, t) || p->pool_cost[t] <= 0)
        return true;
    kp_disrupt_score s = {.template_index = (uint32_t)t};
    score(p, &s, p->facts[node].price, p->facts[node].cost);
    return s.approved;
}

/* Net savings shared out in proportion to each NodePool's share of the
 * candidates' price (Karpenter's EvaluateBalancedMove). */
bool balanced_approve(planner *p, const uint32_t *nodes, uint32_t n, const kp_plan *sim,
                      const kp_disrupt_score **out, uint32_t *n_out)
{
    kp_disrupt_score *scores = KP_ARENA_NEW(p->plan->arena, kp_disrupt_score, n ? n : 1);
    double total = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        total += p->facts[nodes[i]].price;
    double savings = total - plan_claims_price(sim);
    bool approved = true;
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = p->snap->nodes[nodes[i]].template_index;
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++)
            seen = scores[j].template_index == (uint32_t)t;
        if (seen)
            continue;
        double price = 0, disruption = 0;
        for (uint32_t j = 0; j < n; j++)
            if (p->snap->nodes[nodes[j]].template_index == t)
                price += p->facts[nodes[j]].price, disruption += p->facts[nodes[j]].cost;
        kp_disrupt_score *s = &scores[k++];
        *s = (kp_disrupt_score){.template_index = (uint32_t)t, .policy = policy_name(p, t), .approved = true};
        if (!is_balanced(p, t))
            continue;
        bool several = false;
        for (uint32_t j = 0; j < n && !several; j++)
            several = p->snap->nodes[nodes[j]].template_index != t;
        score(p, s, several && total > 0 ? savings * price / total : savings, disruption);
        describe(p, s);
        approved &= s->approved;
    }
    *out = scores;
    *n_out = k;
    return approved;
}

void balanced_record_moves(planner *p, const char *type, const kp_disrupt_score *scores, uint32_t n, bool approved)
{
    kp_disruption_plan *plan = p->plan;
    for (uint32_t i = 0; i < n; i++) {
        size_t cap = p->move_cap;
        plan->moves = kp_xgrow(plan->moves, &cap, plan->n_moves + 1, sizeof(kp_disrupt_move));
        p->move_cap = (uint32_t)cap;
        plan->moves[plan->n_moves++] = (kp_disrupt_move){p->loop, type, approved, &scores[i]};
    }
}
