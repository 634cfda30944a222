/*
 * Disruption budgets (Karpenter's GetAllowedDisruptionsByReason and
 * BuildDisruptionBudgetMapping): for each NodePool and reason, the smallest
 * `nodes` of the budgets that are active now and apply to the reason, as a
 * count or a percentage of the NodePool's initialised nodes rounded up, minus
 * the nodes already disrupting (not ready, or being deleted) — and, within
 * one loop of the plan, minus the candidates of the loop's earlier commands,
 * whatever their reason (they are disrupting when the next one starts).
 */
#include "disruption/disruption_internal.h"
#include "api/cron.h"
#include "api/crd_tables.h"
#include "api/decode.h"
#include "base/clock.h"

#include <stdlib.h>
#include <string.h>

/* A budget with a schedule is active for `duration` after each firing. An
 * invalid schedule allows nothing, as Karpenter does for a broken invariant. */
static bool budget_active(const kp_budget *b, int64_t now, bool *invalid)
{
    kp_cron cron;
    *invalid = false;
    if (!b->has_schedule && !b->has_duration)
        return true;
    if (!b->has_schedule || kp_cron_parse(b->schedule, &cron) < 0) {
        *invalid = true;
        return true;
    }
    int64_t duration = b->has_duration && !b->duration.never ? b->duration.ns : 0;
    int64_t from = now - duration, next_s;
    int64_t from_s = from / KP_NS_PER_SEC - (from % KP_NS_PER_SEC < 0);
    /* robfig answers the zero time when nothing fires within five years, and
     * Karpenter's "next firing is not after now" then holds: active. */
    if (!kp_cron_next(&cron, from_s, &next_s))
        return true;
    return next_s * KP_NS_PER_SEC <= now;
}

/* "10%" of n rounded up, or a count. */
static int64_t scaled(const char *nodes, int64_t n)
{
    char *end;
    long long v = strtoll(nodes, &end, 10);
    if (end == nodes || v < 0)
        return 0;
    if (*end == '%' && end[1] == '\0')
        return (v * n + 99) / 100;
    return *end ? 0 : v;
}

static int64_t pool_allowance(const kp_nodepool *np, const char *reason, int64_t now, int64_t nodes)
{
    static const kp_budget fallback = {KP_CRD_BUDGET_NODES_DEFAULT, false, "", false, {0, false}, false, 0};
    const kp_budget *budgets = np && np->disruption.has_budgets ? np->disruption.budgets : &fallback;
    size_t n = np && np->disruption.has_budgets ? np->disruption.n_budgets : 1;
    int64_t allowed = INT32_MAX;
    for (size_t i = 0; i < n; i++) {
        const kp_budget *b = &budgets[i];
        if (b->has_reasons && !(b->reasons & kp_budget_reason_bit(reason)))
            continue;
        bool invalid;
        if (!budget_active(b, now, &invalid))
            continue;
        int64_t v = invalid ? 0 : scaled(b->nodes, nodes);
        if (v < allowed)
            allowed = v;
    }
    return allowed;
}

static const char *const reason_names[N_REASONS] = {"Empty", "Drifted", "Underutilized"};

const char *budget_reason_name(int reason)
{
    return reason_names[reason];
}

/* What every NodePool's budgets allow when the loop begins, and how many of
 * its nodes are disrupting already (not ready, or being deleted). The nodes
 * this loop's commands take count as disrupting as they are added. */
void budgets_start_loop(planner *p)
{
    const kp_snapshot *snap = p->snap;
    uint32_t nt = snap->n_templates ? snap->n_templates : 1;
    int64_t *nodes = p->node_count = KP_ARENA_NEW(p->loop_arena, int64_t, nt);
    p->budget = KP_ARENA_NEW(p->loop_arena, int64_t, nt * N_REASONS);
    p->disrupting = KP_ARENA_NEW(p->loop_arena, int64_t, nt);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        int32_t t = snap->nodes[i].template_index;
        if (p->gone[i] || !f->counts_for_budget || t < 0)
            continue;
        nodes[t]++;
        p->disrupting[t] += f->consumes_budget;
    }
    for (uint32_t t = 0; t < snap->n_templates; t++)
        for (int r = 0; r < N_REASONS; r++)
            p->budget[t * N_REASONS + r] = pool_allowance(snap->templates[t].src, reason_names[r], facts_now(p), nodes[t]);
}

int64_t budget_of(const planner *p, uint32_t t, int reason)
{
    return p->budget[t * N_REASONS + reason];
}

int64_t budget_left(const planner *p, int32_t t, int reason)
{
    if (t < 0)
        return 0;
    int64_t left = p->budget[(uint32_t)t * N_REASONS + reason] - p->disrupting[t];
    return left > 0 ? left : 0;
}

void budget_take(planner *p, const uint32_t *nodes, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = p->snap->nodes[nodes[i]].template_index;
        if (t >= 0 && p->facts[nodes[i]].counts_for_budget && !p->facts[nodes[i]].consumes_budget)
            p->disrupting[t]++;
    }
}
