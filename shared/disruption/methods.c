/*
 * The disruption methods, in Karpenter's order: expiration (forceful),
 * emptiness, drift, multi-node and single-node consolidation. Each finds at
 * most one command per loop; each records, for the nodes it looked at and
 * left alone, why.
 */
#include "disruption/disruption_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------- ordering ---------- */

typedef struct ranked {
    uint32_t node;
    double key;
} ranked;

static int cmp_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_asc(const void *a, const void *b)
{
    return -cmp_desc(a, b);
}

/* Karpenter sorts consolidation candidates by savings per unit of disruption. */
static double savings_ratio(const node_facts *f)
{
    return f->price / f->cost;
}

static const char *policy_of(const planner *p, uint32_t node, int *out)
{
    const kp_snode *n = &p->snap->nodes[node];
    const kp_nodepool *np = p->snap->templates[n->template_index].src;
    *out = np ? np->disruption.consolidation_policy : KP_CONSOLIDATION_UNSET;
    return np ? np->meta.name : p->snap->templates[n->template_index].name;
}

static bool consolidate_after_never(const planner *p, uint32_t node)
{
    const kp_nodepool *np = p->snap->templates[p->snap->nodes[node].template_index].src;
    return np && np->disruption.has_consolidate_after && np->disruption.consolidate_after.never;
}

static const char *budget_reason(planner *p, uint32_t node, const char *reason)
{
    int policy;
    const char *pool = policy_of(p, node, &policy);
    return kp_arena_printf(p->plan->arena, "the disruption budgets of NodePool %s allow no more %s disruptions now",
                           pool, reason);
}

/* ---------- commands ---------- */

static void command(planner *p, kp_disrupt_command *cmd, enum kp_disrupt_method m, const uint32_t *nodes, uint32_t n,
                    kp_plan *sim)
{
    double price = 0;
    for (uint32_t i = 0; i < n; i++)
        price += p->facts[nodes[i]].price;
    cmd->method = m;
    cmd->loop = p->loop;
    cmd->candidates = kp_arena_memdup(p->plan->arena, nodes, n * sizeof(uint32_t));
    cmd->n_candidates = n;
    cmd->simulation = sim;
    cmd->savings_hourly = price - plan_claims_price(sim);
}

/* ---------- expiration ---------- */

int method_expiration(planner *p, kp_disrupt_command *cmd)
{
    uint32_t *nodes = KP_ARENA_NEW(p->scratch, uint32_t, p->snap->n_nodes ? p->snap->n_nodes : 1), n = 0;
    for (uint32_t i = 0; i < p->snap->n_nodes; i++)
        if (!p->gone[i] && p->facts[i].managed && p->facts[i].expired && !p->snap->nodes[i].deleting)
            nodes[n++] = i;
    if (n == 0)
        return 0;
    kp_plan *sim;
    const char *why;
    int err = simulate_move(p, nodes, n, false, &sim, &why);
    if (err < 0)
        return err;
    command(p, cmd, KP_DISRUPT_EXPIRATION, nodes, n, sim); /* forceful: pods that find no place wait */
    return 1;
}

/* ---------- emptiness ---------- */

int method_emptiness(planner *p, kp_disrupt_command *cmd)
{
    const kp_snapshot *snap = p->snap;
    int64_t *budget = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, snap->n_nodes ? snap->n_nodes : 1);
    uint32_t n = 0, *take = KP_ARENA_NEW(p->scratch, uint32_t, snap->n_nodes ? snap->n_nodes : 1), k = 0;
    budgets_compute(p, "Empty", budget);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (p->gone[i] || !f->managed || f->blocked || !f->empty)
            continue;
        if (consolidate_after_never(p, i) || !f->consolidatable) {
            note_why(p, i, f->not_consolidatable);
            continue;
        }
        c[n++] = (ranked){i, savings_ratio(f)};
    }
    qsort(c, n, sizeof(*c), cmp_desc);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = snap->nodes[c[i].node].template_index;
        if (budget[t] <= 0) {
            note_why(p, c[i].node, budget_reason(p, c[i].node, "Empty"));
            continue;
        }
        budget[t]--;
        take[k++] = c[i].node;
    }
    if (k == 0)
        return 0;
    command(p, cmd, KP_DISRUPT_EMPTINESS, take, k, NULL);
    return 1;
}

/* ---------- drift ---------- */

int method_drift(planner *p, kp_disrupt_command *cmd)
{
    const kp_snapshot *snap = p->snap;
    int64_t *budget = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, snap->n_nodes ? snap->n_nodes : 1);
    uint32_t n = 0;
    budgets_compute(p, "Drifted", budget);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (p->gone[i] || !f->managed || !f->drifted || !f->eligible_forced || snap->nodes[i].deleting)
            continue;
        /* Empty nodes first, then the longest drifted. */
        c[n++] = (ranked){i, (double)f->drifted_ns + (f->n_pods ? 1e30 : 0)};
    }
    qsort(c, n, sizeof(*c), cmp_asc);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = c[i].node;
        if (budget[snap->nodes[node].template_index] <= 0) {
            note_why_drift(p, node, budget_reason(p, node, "Drifted"));
            continue;
        }
        kp_plan *sim;
        const char *why;
        int err = simulate_move(p, &node, 1, false, &sim, &why);
        if (err < 0)
            return err;
        if (why) {
            note_why_drift(p, node,
                           kp_arena_printf(p->plan->arena, "drifted (%s), but %s", p->facts[node].drift_reason, why));
            kp_plan_free(sim);
            continue;
        }
        command(p, cmd, KP_DISRUPT_DRIFT, &node, 1, sim);
        return 1;
    }
    return 0;
}

/* ---------- consolidation ---------- */

enum { SPOT_TO_SPOT_MIN_TYPES = 15 };

static const kp_sym ct_order[] = {KP_SYM_RESERVED, KP_SYM_SPOT, KP_SYM_ON_DEMAND};

static bool allowed(const planner *p, const kp_requirements *reqs, const kp_soffering *o)
{
    const kp_requirement *zone = kp_requirements_get(reqs, KP_SYM_ZONE);
    const kp_requirement *ct = kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE);
    return o->available && (!zone || kp_requirement_has(p->snap->symtab, zone, o->zone)) &&
           (!ct || kp_requirement_has(p->snap->symtab, ct, o->capacity_type));
}

/* Karpenter's WorstLaunchPrice: the dearest offering of the capacity type a
 * launch would use (reserved, spot, on-demand). */
static double worst_launch_price(const planner *p, const kp_requirements *reqs, uint32_t it)
{
    const kp_sit *sit = &p->snap->its[it];
    for (size_t k = 0; k < 3; k++) {
        double worst = -1;
        for (uint32_t o = 0; o < sit->n_offerings; o++)
            if (sit->offerings[o].capacity_type == ct_order[k] && allowed(p, reqs, &sit->offerings[o]) &&
                sit->offerings[o].price > worst)
                worst = sit->offerings[o].price;
        if (worst >= 0)
            return worst;
    }
    return 1e300;
}

/* The launch offering's price after the options changed. */
static void reprice(const planner *p, kp_plan_claim *c)
{
    for (size_t k = 0; k < 3; k++) {
        double best = -1;
        for (uint32_t i = 0; i < c->n_its; i++) {
            const kp_sit *sit = &p->snap->its[c->its[i]];
            for (uint32_t o = 0; o < sit->n_offerings; o++) {
                const kp_soffering *of = &sit->offerings[o];
                if (of->capacity_type == ct_order[k] && allowed(p, &c->reqs, of) && (best < 0 || of->price < best)) {
                    best = of->price;
                    c->zone = of->zone;
                }
            }
        }
        if (best >= 0) {
            c->price = best;
            c->capacity_type = ct_order[k];
            return;
        }
    }
}

/* How many of the first options it takes for `r`'s minValues distinct
 * values; n + 1 when all of them are not enough. */
static uint32_t min_values_prefix(const planner *p, const kp_requirement *r, const uint32_t *its, uint32_t n)
{
    kp_arena_mark mark = kp_arena_mark_get(p->scratch);
    kp_sym *seen = KP_ARENA_NEW(p->scratch, kp_sym, (size_t)r->min_values);
    uint32_t distinct = 0, at = n + 1;
    for (uint32_t i = 0; i < n && at > n; i++) {
        kp_sym v = kp_requirement_single_value(kp_requirements_get(&p->snap->its[its[i]].reqs, r->key));
        bool dup = v == KP_SYM_NONE;
        for (uint32_t j = 0; j < distinct && !dup; j++)
            dup = seen[j] == v;
        if (!dup)
            seen[distinct++] = v;
        if (distinct == (uint32_t)r->min_values)
            at = i + 1;
    }
    kp_arena_rewind(p->scratch, mark);
    return at;
}

/* Karpenter's SatisfiesMinValues: how many of the first options (cheapest
 * first) meet every minValues; 0 without minValues, n + 1 when they cannot. */
static uint32_t min_values_needed(const planner *p, const kp_requirements *reqs, const uint32_t *its, uint32_t n)
{
    uint32_t needed = 0;
    for (uint32_t k = 0; k < reqs->count; k++) {
        if (reqs->items[k].min_values <= 0)
            continue;
        uint32_t at = min_values_prefix(p, &reqs->items[k], its, n);
        needed = at > needed ? at : needed;
    }
    return needed;
}

static int cmp_sym(const void *a, const void *b)
{
    kp_sym x = *(const kp_sym *)a, y = *(const kp_sym *)b;
    return x < y ? -1 : x > y;
}

/* c->reqs AND `key In values` (sorted here, as a requirement's values are). */
static void require_in(planner *p, kp_plan_claim *c, kp_sym key, kp_sym *values, uint32_t n)
{
    kp_requirement r;
    memset(&r, 0, sizeof(r));
    qsort(values, n, sizeof(kp_sym), cmp_sym);
    r.key = key;
    r.values = values;
    r.n_values = n;
    kp_requirements_add(&c->reqs, p->snap->symtab, p->plan->arena, &r);
}

/* Karpenter creates the replacement NodeClaim from its options (ToNodeClaim):
 * instance-type In the options and capacity-type In what they offer, so the
 * launch cannot pick a type the price filter removed. */
static void require_options(planner *p, kp_plan_claim *c)
{
    kp_sym *names = KP_ARENA_NEW(p->plan->arena, kp_sym, c->n_its);
    kp_sym *cts = KP_ARENA_NEW(p->plan->arena, kp_sym, 3);
    uint32_t n_cts = 0;
    for (uint32_t i = 0; i < c->n_its; i++) {
        const kp_sit *sit = &p->snap->its[c->its[i]];
        names[i] = sit->name;
        for (uint32_t o = 0; o < sit->n_offerings; o++) {
            bool seen = !allowed(p, &c->reqs, &sit->offerings[o]);
            for (uint32_t j = 0; j < n_cts && !seen; j++)
                seen = cts[j] == sit->offerings[o].capacity_type;
            if (!seen && n_cts < 3)
                cts[n_cts++] = sit->offerings[o].capacity_type;
        }
    }
    require_in(p, c, KP_SYM_INSTANCE_TYPE, names, c->n_its);
    if (n_cts)
        require_in(p, c, KP_SYM_CAPACITY_TYPE, cts, n_cts);
}

/* Karpenter's RemoveInstanceTypeOptionsByPriceAndMinValues. */
static bool keep_cheaper(planner *p, kp_plan_claim *c, double max_price)
{
    uint32_t *kept = KP_ARENA_NEW(p->plan->arena, uint32_t, c->n_its ? c->n_its : 1), n = 0;
    for (uint32_t i = 0; i < c->n_its; i++)
        if (worst_launch_price(p, &c->reqs, c->its[i]) < max_price)
            kept[n++] = c->its[i];
    c->its = kept;
    c->n_its = n;
    if (n) {
        reprice(p, c);
        require_options(p, c);
    }
    return n > 0 && min_values_needed(p, &c->reqs, kept, n) <= n;
}

static void pin_capacity_type(planner *p, kp_plan_claim *c, kp_sym ct)
{
    kp_requirement r;
    memset(&r, 0, sizeof(r));
    kp_sym *v = kp_arena_alloc(p->plan->arena, sizeof(kp_sym));
    *v = ct;
    r.key = KP_SYM_CAPACITY_TYPE;
    r.values = v;
    r.n_values = 1;
    kp_requirements_add(&c->reqs, p->snap->symtab, p->plan->arena, &r);
}

/* Spot replacing spot: only with the feature enabled, only onto spot, and a
 * single node only with enough cheaper options (Karpenter keeps 15), so the
 * replacement is not the next spot type to be reclaimed. */
static int spot_to_spot(planner *p, kp_plan_claim *c, uint32_t n, double price, const char **why)
{
    if (!p->opts->spot_to_spot) {
        *why = "replacing spot with spot needs the SpotToSpotConsolidation feature";
        return 0;
    }
    pin_capacity_type(p, c, KP_SYM_SPOT);
    if (!keep_cheaper(p, c, price)) {
        *why = "no cheaper spot replacement";
        return 0;
    }
    if (n == 1 && c->n_its < SPOT_TO_SPOT_MIN_TYPES) {
        *why = kp_arena_printf(p->plan->arena, "spot-to-spot consolidation needs %d cheaper instance types, found %u",
                               SPOT_TO_SPOT_MIN_TYPES, c->n_its);
        return 0;
    }
    /* Karpenter keeps more than 15 when minValues needs them. */
    uint32_t keep = min_values_needed(p, &c->reqs, c->its, c->n_its);
    keep = keep > SPOT_TO_SPOT_MIN_TYPES ? keep : SPOT_TO_SPOT_MIN_TYPES;
    if (n == 1 && c->n_its > keep) {
        c->n_its = keep;
        require_options(p, c);
    }
    return 1;
}

/* Karpenter's computeConsolidation: 1 with the simulation in *out (no
 * claims: delete; one cheaper claim: replace), 0 with *why, or an error. */
static int consolidate(planner *p, const uint32_t *nodes, uint32_t n, kp_plan **out, const char **why)
{
    kp_plan *sim;
    int err = simulate_move(p, nodes, n, true, &sim, why);
    if (err < 0 || *why) {
        kp_plan_free(sim);
        return err < 0 ? err : 0;
    }
    double price = 0;
    bool all_spot = true;
    for (uint32_t i = 0; i < n; i++)
        price += p->facts[nodes[i]].price, all_spot &= p->facts[nodes[i]].spot;
    int ok = 1;
    kp_plan_claim *c = sim->n_claims == 1 ? &sim->claims[0] : NULL;
    const kp_requirement *ct = c ? kp_requirements_get(&c->reqs, KP_SYM_CAPACITY_TYPE) : NULL;
    double needed = c ? c->price : 0;
    if (sim->n_claims > 1) {
        *why = kp_arena_printf(p->plan->arena, "its pods would need %u new NodeClaims", sim->n_claims);
        ok = 0;
    } else if (c && all_spot && (!ct || kp_requirement_has(p->snap->symtab, ct, KP_SYM_SPOT))) {
        ok = spot_to_spot(p, c, n, price, why);
    } else if (c && !keep_cheaper(p, c, price)) {
        *why = kp_arena_printf(p->plan->arena, "no cheaper replacement: its pods need $%.4f/hour, it costs $%.4f/hour",
                               needed, price);
        ok = 0;
    } else if (c && (!ct || (kp_requirement_has(p->snap->symtab, ct, KP_SYM_SPOT) &&
                             kp_requirement_has(p->snap->symtab, ct, KP_SYM_ON_DEMAND)))) {
        pin_capacity_type(p, c, KP_SYM_SPOT); /* Karpenter consolidates on-demand onto spot when allowed */
        reprice(p, c);
    }
    if (!ok)
        sim = kp_plan_free(sim);
    *out = sim;
    return ok;
}

/* Which nodes consolidation may consider (Karpenter's consolidation ShouldDisrupt). */
static uint32_t consolidation_candidates(planner *p, ranked *out)
{
    const kp_snapshot *snap = p->snap;
    uint32_t n = 0;
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        int policy;
        if (p->gone[i] || !f->managed || f->blocked || f->empty)
            continue;
        const char *pool = policy_of(p, i, &policy);
        if (p->it_of_node[i] < 0)
            note_why(p, i, kp_arena_printf(p->plan->arena, "its instance type %s is not in the catalog",
                                           snap->nodes[i].instance_type ? snap->nodes[i].instance_type : "(none)"));
        else if (!kp_symlabels_get(&snap->nodes[i].labels, KP_SYM_ZONE) ||
                 !kp_symlabels_get(&snap->nodes[i].labels, KP_SYM_CAPACITY_TYPE))
            note_why(p, i, "node has no zone or capacity-type label");
        else if (policy == KP_CONSOLIDATION_WHEN_EMPTY)
            note_why(p, i, kp_arena_printf(p->plan->arena, "NodePool %s consolidates only empty nodes (WhenEmpty)", pool));
        else if (!f->consolidatable)
            note_why(p, i, f->not_consolidatable);
        else
            out[n++] = (ranked){i, savings_ratio(f)};
    }
    qsort(out, n, sizeof(*out), cmp_desc);
    return n;
}

/* Candidates within the Underutilized budgets, in order; the others noted. */
static uint32_t within_budgets(planner *p, ranked *c, uint32_t n, uint32_t *out)
{
    int64_t *budget = KP_ARENA_NEW(p->scratch, int64_t, p->snap->n_templates ? p->snap->n_templates : 1);
    uint32_t k = 0;
    budgets_compute(p, "Underutilized", budget);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = p->snap->nodes[c[i].node].template_index;
        if (budget[t] <= 0) {
            note_why(p, c[i].node, budget_reason(p, c[i].node, "Underutilized"));
            continue;
        }
        budget[t]--;
        out[k++] = c[i].node;
    }
    return k;
}

/* Karpenter's filterOutSameInstanceType: a multi-node replacement must be
 * cheaper than the cheapest of the candidates' own types it could launch as. */
static bool not_same_type(planner *p, kp_plan_claim *c, const uint32_t *nodes, uint32_t n)
{
    double max_price = 1e300;
    for (uint32_t i = 0; i < n; i++) {
        int32_t it = p->it_of_node[nodes[i]];
        for (uint32_t k = 0; k < c->n_its; k++)
            if ((int32_t)c->its[k] == it && p->facts[nodes[i]].price < max_price)
                max_price = p->facts[nodes[i]].price;
    }
    return max_price >= 1e300 || keep_cheaper(p, c, max_price);
}

int method_multi_node(planner *p, kp_disrupt_command *cmd)
{
    const kp_snapshot *snap = p->snap;
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, snap->n_nodes ? snap->n_nodes : 1);
    uint32_t *nodes = KP_ARENA_NEW(p->scratch, uint32_t, snap->n_nodes ? snap->n_nodes : 1);
    uint32_t n = within_budgets(p, c, consolidation_candidates(p, c), nodes);
    uint32_t max = n < p->opts->multi_node_max ? n : p->opts->multi_node_max;
    if (n <= max)
        max = n ? n - 1 : 0;
    uint32_t lo = 1, hi = max, best_n = 0;
    kp_plan *best = NULL;
    while (n >= 2 && lo <= hi) {
        uint32_t mid = (lo + hi) / 2;
        kp_plan *sim = NULL;
        const char *why;
        int ok = consolidate(p, nodes, mid + 1, &sim, &why);
        if (ok < 0) {
            kp_plan_free(best);
            return ok;
        }
        if (ok && sim->n_claims == 1 && !not_same_type(p, &sim->claims[0], nodes, mid + 1))
            ok = 0, sim = kp_plan_free(sim);
        if (ok) {
            kp_plan_free(best);
            best = sim, best_n = mid + 1, lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (!best)
        return 0;
    command(p, cmd, KP_DISRUPT_MULTI_NODE, nodes, best_n, best);
    return 1;
}

/* Round-robin across NodePools, each in savings order, so one large pool
 * does not starve the others (Karpenter's shuffleCandidates). */
static uint32_t interleave(const planner *p, const ranked *c, uint32_t n, uint32_t *out)
{
    uint32_t k = 0;
    bool *used = KP_ARENA_NEW(p->scratch, bool, n ? n : 1);
    while (k < n) {
        for (uint32_t t = 0; t < p->snap->n_templates; t++) {
            for (uint32_t i = 0; i < n; i++) {
                if (!used[i] && p->snap->nodes[c[i].node].template_index == (int32_t)t) {
                    used[i] = true;
                    out[k++] = c[i].node;
                    break;
                }
            }
        }
    }
    return k;
}

int method_single_node(planner *p, kp_disrupt_command *cmd)
{
    const kp_snapshot *snap = p->snap;
    ranked *c = KP_ARENA_NEW(p->scratch, ranked, snap->n_nodes ? snap->n_nodes : 1);
    uint32_t *order = KP_ARENA_NEW(p->scratch, uint32_t, snap->n_nodes ? snap->n_nodes : 1);
    int64_t *budget = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    uint32_t n = interleave(p, c, consolidation_candidates(p, c), order);
    budgets_compute(p, "Underutilized", budget);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = order[i];
        if (budget[snap->nodes[node].template_index] <= 0) {
            note_why(p, node, budget_reason(p, node, "Underutilized"));
            continue;
        }
        kp_plan *sim;
        const char *why;
        int ok = consolidate(p, &node, 1, &sim, &why);
        if (ok < 0)
            return ok;
        if (!ok) {
            note_why(p, node, why);
            continue;
        }
        command(p, cmd, KP_DISRUPT_SINGLE_NODE, &node, 1, sim);
        return 1;
    }
    return 0;
}
