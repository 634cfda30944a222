/*
 * Karpenter's computeConsolidation: simulate moving the candidates' pods,
 * then decide between delete (no new NodeClaim), replace (one NodeClaim whose
 * every option is cheaper than the candidates, pinned to those options), or
 * nothing — and why. Spot-to-spot and minValues as Karpenter does them; a
 * single node whose pods need several NodeClaims may be split (split.c).
 */
#include "disruption/disruption_internal.h"

#include <stdlib.h>
#include <string.h>

enum { SPOT_TO_SPOT_MIN_TYPES = 15 };

static const kp_sym ct_order[] = {KP_SYM_RESERVED, KP_SYM_SPOT, KP_SYM_ON_DEMAND};

/* The zone and capacity-type requirements an offering must meet, looked up
 * once for all the offerings a price is chosen among. */
typedef struct offer_reqs {
    const kp_requirement *zone, *ct;
} offer_reqs;

static offer_reqs offer_reqs_of(const kp_requirements *reqs)
{
    offer_reqs r = {kp_requirements_get(reqs, KP_SYM_ZONE), kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE)};
    return r;
}

static bool allowed(const planner *p, const offer_reqs *r, const kp_soffering *o)
{
    return o->available && (!r->zone || kp_requirement_has(p->snap->symtab, r->zone, o->zone)) &&
           (!r->ct || kp_requirement_has(p->snap->symtab, r->ct, o->capacity_type));
}

/* The dearest (or cheapest) offering `reqs` allow of the capacity type a
 * launch would use (reserved, then spot, then on-demand); -1 when none. */
static double offering_price(const planner *p, const kp_requirements *reqs, uint32_t it, bool dearest)
{
    const kp_sit *sit = &p->snap->its[it];
    offer_reqs r = offer_reqs_of(reqs);
    for (size_t k = 0; k < 3; k++) {
        double found = -1;
        for (uint32_t o = 0; o < sit->n_offerings; o++) {
            const kp_soffering *of = &sit->offerings[o];
            if (of->capacity_type == ct_order[k] && allowed(p, &r, of) &&
                (found < 0 || (dearest ? of->price > found : of->price < found)))
                found = of->price;
        }
        if (found >= 0)
            return found;
    }
    return -1;
}

/* Karpenter's WorstLaunchPrice. */
double worst_launch_price(const planner *p, const kp_requirements *reqs, uint32_t it)
{
    double worst = offering_price(p, reqs, it, true);
    return worst < 0 ? 1e300 : worst;
}

double launch_price(const planner *p, const kp_requirements *reqs, uint32_t it)
{
    return offering_price(p, reqs, it, false);
}

double pool_launch_price(const planner *p, uint32_t t, uint32_t it)
{
    double *known = &p->pool_prices[(size_t)t * p->snap->n_its + it];
    if (*known == POOL_PRICE_UNKNOWN)
        *known = launch_price(p, &p->snap->templates[t].reqs, it);
    return *known;
}

/* The launch offering's price after the options changed. */
void reprice(const planner *p, kp_plan_claim *c)
{
    offer_reqs r = offer_reqs_of(&c->reqs);
    for (size_t k = 0; k < 3; k++) {
        double best = -1;
        for (uint32_t i = 0; i < c->n_its; i++) {
            const kp_sit *sit = &p->snap->its[c->its[i]];
            for (uint32_t o = 0; o < sit->n_offerings; o++) {
                const kp_soffering *of = &sit->offerings[o];
                if (of->capacity_type == ct_order[k] && allowed(p, &r, of) && (best < 0 || of->price < best)) {
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
 * first) meet every minValues; 0 without minValues, n + 1 when they cannot
 * (*key: the first requirement that cannot be met). */
static uint32_t min_values_needed(const planner *p, const kp_requirements *reqs, const uint32_t *its, uint32_t n,
                                  kp_sym *key)
{
    uint32_t needed = 0;
    for (uint32_t k = 0; k < reqs->count; k++) {
        if (reqs->items[k].min_values <= 0)
            continue;
        uint32_t at = min_values_prefix(p, &reqs->items[k], its, n);
        if (at > n && key && !*key)
            *key = reqs->items[k].key;
        needed = at > needed ? at : needed;
    }
    return needed;
}

static int cmp_sym(const void *a, const void *b)
{
    kp_sym x = *(const kp_sym *)a, y = *(const kp_sym *)b;
    return x < y ? -1 : x > y;
}

kp_requirement requirement_in(kp_sym key, kp_sym *values, uint32_t n)
{
    kp_requirement r;
    memset(&r, 0, sizeof(r));
    qsort(values, n, sizeof(kp_sym), cmp_sym);
    r.key = key;
    r.values = values;
    r.n_values = n;
    return r;
}

/* c->reqs AND `key In values`. */
static void require_in(planner *p, kp_plan_claim *c, kp_sym key, kp_sym *values, uint32_t n)
{
    kp_requirement r = requirement_in(key, values, n);
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
    offer_reqs r = offer_reqs_of(&c->reqs);
    for (uint32_t i = 0; i < c->n_its; i++) {
        const kp_sit *sit = &p->snap->its[c->its[i]];
        names[i] = sit->name;
        for (uint32_t o = 0; o < sit->n_offerings; o++) {
            bool seen = !allowed(p, &r, &sit->offerings[o]);
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

/* Karpenter's RemoveInstanceTypeOptionsByPriceAndMinValues; *min_key is set
 * when what is left cannot meet a minValues. */
static bool filter_by_price(planner *p, kp_plan_claim *c, double max_price, kp_sym *min_key)
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
    return n > 0 && min_values_needed(p, &c->reqs, kept, n, min_key) <= n;
}

bool keep_cheaper(planner *p, kp_plan_claim *c, double max_price)
{
    return filter_by_price(p, c, max_price, NULL);
}

void pin_capacity_type(planner *p, kp_plan_claim *c, kp_sym ct)
{
    kp_sym *v = kp_arena_alloc(p->plan->arena, sizeof(kp_sym));
    *v = ct;
    require_in(p, c, KP_SYM_CAPACITY_TYPE, v, 1);
}

/* Why the price filter left nothing: minValues, or nothing cheaper. */
static const kp_disrupt_blocked *why_not_cheaper(planner *p, double needed, double price, kp_sym min_key)
{
    kp_arena *a = p->plan->arena;
    const char *reason = kp_arena_printf(a, "no cheaper replacement: its pods need $%.4f/hour, it costs $%.4f/hour",
                                         needed, price);
    if (!min_key)
        return why_new(p, KP_BLOCK_NO_CHEAPER, NULL, reason, NULL);
    const char *key = kp_sym_str(p->snap->symtab, min_key);
    return why_new(p, KP_BLOCK_MIN_VALUES, key, reason,
                   kp_arena_printf(a, "Filtering by price: minValues requirement is not met for label(s) "
                                      "(label(s)=[%s])", key));
}

/* Spot replacing spot: only with the feature enabled, only onto spot, and a
 * single node only with enough cheaper options (Karpenter keeps 15), so the
 * replacement is not the next spot type to be reclaimed. */
static int spot_to_spot(planner *p, kp_plan_claim *c, uint32_t n, double price, const kp_disrupt_blocked **why)
{
    if (!p->opts->spot_to_spot) {
        *why = why_new(p, KP_BLOCK_SPOT_TO_SPOT_DISABLED, NULL,
                       "replacing spot with spot needs the SpotToSpotConsolidation feature", NULL);
        return 0;
    }
    pin_capacity_type(p, c, KP_SYM_SPOT);
    double needed = c->price;
    kp_sym min_key = KP_SYM_NONE;
    if (!filter_by_price(p, c, price, &min_key)) {
        *why = why_not_cheaper(p, needed, price, min_key);
        if (!min_key)
            ((kp_disrupt_blocked *)*why)->reason = "no cheaper spot replacement";
        return 0;
    }
    if (n == 1 && c->n_its < SPOT_TO_SPOT_MIN_TYPES) {
        kp_arena *a = p->plan->arena;
        *why = why_new(p, KP_BLOCK_SPOT_TO_SPOT_OPTIONS, NULL,
                       kp_arena_printf(a, "spot-to-spot consolidation needs %d cheaper instance types, found %u",
                                       SPOT_TO_SPOT_MIN_TYPES, c->n_its),
                       kp_arena_printf(a, "SpotToSpotConsolidation requires %d cheaper instance type options than "
                                          "the current candidate to consolidate, got %u",
                                       SPOT_TO_SPOT_MIN_TYPES, c->n_its));
        return 0;
    }
    /* Karpenter keeps more than 15 when minValues needs them. */
    uint32_t keep = min_values_needed(p, &c->reqs, c->its, c->n_its, NULL);
    keep = keep > SPOT_TO_SPOT_MIN_TYPES ? keep : SPOT_TO_SPOT_MIN_TYPES;
    if (n == 1 && c->n_its > keep) {
        c->n_its = keep;
        require_options(p, c);
    }
    return 1;
}

/* The one replacement of `nodes` (costing `price`): cheaper, pinned. */
static int one_cheaper(planner *p, kp_plan_claim *c, uint32_t n, double price, bool all_spot,
                       const kp_disrupt_blocked **why)
{
    const kp_requirement *ct = kp_requirements_get(&c->reqs, KP_SYM_CAPACITY_TYPE);
    if (all_spot && (!ct || kp_requirement_has(p->snap->symtab, ct, KP_SYM_SPOT)))
        return spot_to_spot(p, c, n, price, why);
    double needed = c->price;
    kp_sym min_key = KP_SYM_NONE;
    if (!filter_by_price(p, c, price, &min_key)) {
        *why = why_not_cheaper(p, needed, price, min_key);
        return 0;
    }
    ct = kp_requirements_get(&c->reqs, KP_SYM_CAPACITY_TYPE);
    if (!ct || (kp_requirement_has(p->snap->symtab, ct, KP_SYM_SPOT) &&
                kp_requirement_has(p->snap->symtab, ct, KP_SYM_ON_DEMAND))) {
        pin_capacity_type(p, c, KP_SYM_SPOT); /* Karpenter consolidates on-demand onto spot when allowed */
        reprice(p, c);
    }
    return 1;
}

static const kp_disrupt_blocked *why_several(planner *p, uint32_t claims)
{
    kp_arena *a = p->plan->arena;
    return why_new(p, KP_BLOCK_NEEDS_SEVERAL, NULL, kp_arena_printf(a, "its pods would need %u new NodeClaims", claims),
                   kp_arena_printf(a, "Can't remove without creating %u candidates", claims));
}

int consolidate(planner *p, const uint32_t *nodes, uint32_t n, bool split, kp_plan **out,
                const kp_disrupt_blocked **why)
{
    kp_plan *sim;
    *out = NULL;
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
    if (sim->n_claims > 1) {
        ok = split && n == 1 ? split_claims(p, nodes[0], sim, why) : 0;
        if (!ok && !*why)
            *why = why_several(p, sim->n_claims);
    } else if (sim->n_claims == 1) {
        ok = one_cheaper(p, &sim->claims[0], n, price, all_spot, why);
    }
    if (!ok)
        sim = kp_plan_free(sim);
    *out = sim;
    return ok;
}

/* Karpenter's filterOutSameInstanceType: a multi-node replacement must be
 * cheaper than the cheapest of the candidates' own types it could launch as. */
bool not_same_type(planner *p, kp_plan_claim *c, const uint32_t *nodes, uint32_t n)
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
