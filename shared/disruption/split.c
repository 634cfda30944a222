/*
 * Split consolidation (beyond Karpenter, which replaces one node with at most
 * one): a node whose pods fit no single cheaper NodeClaim may still be
 * replaced by two or more whose prices add up to less than its own. Bounded:
 * at most opts.split_max NodeClaims, one extra simulation per node, and only
 * when even the cheapest capacity for its pods (the lower bound over the
 * cheaper instance types) costs less than the node; never to add nodes
 * without saving money. Each claim keeps only options whose worst launch
 * price fits its share of the node's price, so whatever the launches pick,
 * the replacements cost less than the node.
 */
#include "disruption/disruption_internal.h"

#include <string.h>

/* Packing into several smaller nodes wastes some of each: a split is tried
 * only when the lower bound leaves at least this much of the price. */
#define SPLIT_MARGIN 0.9


/* Whether the node's pods could cost less on instance types cheaper than it:
 * the fractional lower bound of CPU and memory at the best price per unit. */
static bool may_save(const planner *p, uint32_t node, double price)
{
    const node_facts *f = &p->facts[node];
    double need_cpu = 0, need_mem = 0, per_cpu = -1, per_mem = -1;
    for (uint32_t i = 0; i < f->n_pods; i++) {
        need_cpu += (double)p->snap->pods[f->pods[i]].requests.v[KP_RES_CPU];
        need_mem += (double)p->snap->pods[f->pods[i]].requests.v[KP_RES_MEMORY];
    }
    uint32_t tmpl = (uint32_t)p->snap->nodes[node].template_index;
    const kp_template *t = &p->snap->templates[tmpl];
    for (uint32_t k = 0; k < t->n_its; k++) {
        const kp_sit *it = &p->snap->its[t->its[k]];
        double c = pool_launch_price(p, tmpl, t->its[k]);
        if (c < 0 || c >= price || it->allocatable.v[KP_RES_CPU] <= 0 || it->allocatable.v[KP_RES_MEMORY] <= 0)
            continue;
        double uc = c / (double)it->allocatable.v[KP_RES_CPU], um = c / (double)it->allocatable.v[KP_RES_MEMORY];
        per_cpu = per_cpu < 0 || uc < per_cpu ? uc : per_cpu;
        per_mem = per_mem < 0 || um < per_mem ? um : per_mem;
    }
    if (per_cpu < 0)
        return false;
    double bound = need_cpu * per_cpu > need_mem * per_mem ? need_cpu * per_cpu : need_mem * per_mem;
    return bound < price * SPLIT_MARGIN;
}

int split_claims(planner *p, uint32_t node, kp_plan *sim, const kp_disrupt_blocked **why)
{
    double price = p->facts[node].price, total = plan_claims_price(sim);
    *why = NULL;
    if (p->opts->split_max < 2 || sim->n_claims > p->opts->split_max || p->facts[node].spot)
        return 0;
    if (total >= price) {
        kp_arena *a = p->plan->arena;
        *why = why_new(p, KP_BLOCK_NEEDS_SEVERAL, NULL,
                       kp_arena_printf(a, "its pods would need %u new NodeClaims costing $%.4f/hour, it costs "
                                          "$%.4f/hour", sim->n_claims, total, price),
                       kp_arena_printf(a, "Can't remove without creating %u candidates", sim->n_claims));
        return 0;
    }
    for (uint32_t i = 0; i < sim->n_claims; i++) {
        kp_plan_claim *c = &sim->claims[i];
        if (!keep_cheaper(p, c, c->price * price / total))
            return 0;
        const kp_requirement *ct = kp_requirements_get(&c->reqs, KP_SYM_CAPACITY_TYPE);
        if (!ct || (kp_requirement_has(p->snap->symtab, ct, KP_SYM_SPOT) &&
                    kp_requirement_has(p->snap->symtab, ct, KP_SYM_ON_DEMAND))) {
            pin_capacity_type(p, c, KP_SYM_SPOT);
            reprice(p, c);
        }
    }
    return 1;
}

/* The node's pods may go only to instance types cheaper than `price` (the
 * price filter Karpenter applies to one replacement, applied before packing,
 * as a node selector so the solver's cached NodePool data stays valid).
 * Returns their own selectors, to put back. */
static kp_requirements *restrict_pods(planner *p, uint32_t node, double price)
{
    kp_snapshot *snap = p->snap;
    const node_facts *f = &p->facts[node];
    /* The plan's arena: the replacement's requirements may point at these values. */
    kp_sym *names = KP_ARENA_NEW(p->plan->arena, kp_sym, snap->n_its ? snap->n_its : 1);
    uint32_t n = 0;
    uint32_t tmpl = (uint32_t)snap->nodes[node].template_index;
    for (uint32_t k = 0; k < snap->n_its; k++) {
        double c = pool_launch_price(p, tmpl, k);
        if (c >= 0 && c < price)
            names[n++] = snap->its[k].name;
    }
    kp_requirement r = requirement_in(KP_SYM_INSTANCE_TYPE, names, n);
    kp_requirements *saved = KP_ARENA_NEW(p->scratch, kp_requirements, f->n_pods ? f->n_pods : 1);
    for (uint32_t i = 0; i < f->n_pods; i++) {
        kp_spod *s = &snap->pods[f->pods[i]];
        saved[i] = s->node_selector;
        kp_requirements_copy(&s->node_selector, p->scratch, &saved[i]);
        kp_requirements_add(&s->node_selector, snap->symtab, p->scratch, &r);
    }
    return saved;
}

static void restore_pods(planner *p, uint32_t node, const kp_requirements *saved)
{
    const node_facts *f = &p->facts[node];
    for (uint32_t i = 0; i < f->n_pods; i++)
        p->snap->pods[f->pods[i]].node_selector = saved[i];
}

int split_node(planner *p, uint32_t node, kp_plan **out, const kp_disrupt_blocked **why)
{
    double price = p->facts[node].price;
    *out = NULL;
    *why = NULL;
    if (p->opts->split_max < 2 || p->facts[node].spot || p->split_tried[node] || !may_save(p, node, price))
        return 0;
    p->split_tried[node] = true; /* until its pods change */
    kp_plan *sim;
    kp_arena_mark mark = kp_arena_mark_get(p->scratch);
    const kp_requirements *saved = restrict_pods(p, node, price);
    int ok = consolidate(p, &node, 1, true, &sim, why);
    restore_pods(p, node, saved);
    kp_arena_rewind(p->scratch, mark);
    if (ok <= 0)
        return ok;
    if (sim->n_claims < 2) { /* one cheaper claim: the unrestricted simulation would have found it */
        kp_plan_free(sim);
        return 0;
    }
    *out = sim;
    return 1;
}
