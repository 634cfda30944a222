/*
 * Disruption budgets (Karpenter's GetAllowedDisruptionsByReason and
 * BuildDisruptionBudgetMapping): for each NodePool and reason, the smallest
 * `nodes` of the budgets that are active now and apply to the reason, as a
 * count or a percentage of the NodePool's initialised nodes rounded up, minus
 * the nodes already disrupting (not ready, or being deleted).
 */
#include "disruption/disruption_internal.h"
#include "api/cron.h"
#include "base/clock.h"

#include <stdlib.h>
#include <string.h>

static unsigned reason_bit(const char *reason)
{
    if (strcmp(reason, "Empty") == 0)
        return KP_REASON_EMPTY;
    if (strcmp(reason, "Underutilized") == 0)
        return KP_REASON_UNDERUTILIZED;
    if (strcmp(reason, "Drifted") == 0)
        return KP_REASON_DRIFTED;
    return 0;
}

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
    static const kp_budget fallback = {"10%", false, "", false, {0, false}, false, 0};
    const kp_budget *budgets = np && np->disruption.has_budgets ? np->disruption.budgets : &fallback;
    size_t n = np && np->disruption.has_budgets ? np->disruption.n_budgets : 1;
    int64_t allowed = INT32_MAX;
    for (size_t i = 0; i < n; i++) {
        const kp_budget *b = &budgets[i];
        if (b->has_reasons && !(b->reasons & reason_bit(reason)))
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

void budgets_compute(planner *p, const char *reason, int64_t *allowed)
{
    const kp_snapshot *snap = p->snap;
    int64_t *nodes = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    int64_t *busy = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        int32_t t = snap->nodes[i].template_index;
        if (p->gone[i] || !f->counts_for_budget || t < 0)
            continue;
        nodes[t]++;
        busy[t] += f->consumes_budget;
    }
    for (uint32_t t = 0; t < snap->n_templates; t++) {
        int64_t a = pool_allowance(snap->templates[t].src, reason, facts_now(p), nodes[t]) - busy[t];
        allowed[t] = a > 0 ? a : 0;
    }
}
