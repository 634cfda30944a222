/*
 * Turning the solver's state into a plan (Karpenter's FinalizeScheduling and
 * TruncateInstanceTypes): NodeClaims lose their placeholder hostname, gain
 * the smallest DaemonSet overhead their instance types would carry, keep the
 * cheapest instance types (at most opts->max_instance_types), and are priced
 * at the offering a launch would pick (reserved, then spot, then on-demand;
 * the cheapest within that capacity type); one that launches into a
 * reservation is pinned to reserved capacity and to the reservations it
 * holds, as Karpenter does, and no reservation is planned for more NodeClaims
 * than it has places (reservations.c): the rest fall back.
 */
#include "scheduling/solver_internal.h"
#include "api/wellknown.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

kp_plan *plan_new(solver *s)
{
    kp_plan *plan = kp_xcalloc(1, sizeof(*plan));
    plan->arena = s->arena;
    return plan;
}

kp_plan *kp_plan_free(kp_plan *plan)
{
    if (!plan)
        return NULL;
    kp_arena_free(plan->arena);
    free(plan);
    return NULL;
}

static void drop_key(kp_requirements *reqs, kp_sym key)
{
    for (uint32_t i = 0; i < reqs->count; i++) {
        if (reqs->items[i].key == key) {
            memmove(&reqs->items[i], &reqs->items[i + 1], (reqs->count - i - 1) * sizeof(kp_requirement));
            reqs->count--;
            return;
        }
    }
}

/* Element-wise minimum of the overheads of the daemon groups still represented. */
static kp_resvec min_daemon_overhead(const solver *s, const claim *c)
{
    const tstate *ts = &s->ts[c->tmpl];
    kp_resvec out;
    bool any = false;
    kp_resvec_zero(&out);
    for (uint32_t g = 0; g < ts->n_dgroups; g++) {
        bool present = false;
        for (uint32_t i = 0; i < c->n_its && !present; i++)
            present = ts->group_of[c->its[i]] == (int32_t)g;
        if (!present)
            continue;
        if (!any)
            out = ts->dgroups[g].overhead;
        else
            kp_resvec_min(&out, &ts->dgroups[g].overhead, s->n_res);
        any = true;
    }
    return out;
}

static const kp_sym ct_priority[] = {KP_SYM_RESERVED, KP_SYM_SPOT, KP_SYM_ON_DEMAND};

/* The offering a launch would use: first capacity type by priority, cheapest within it. */
static void choose_offering(solver *s, const reservations *rs, kp_plan_claim *pc)
{
    offer_filter f = offer_filter_of(&pc->reqs);
    double best[3] = {-1, -1, -1};
    kp_sym zone[3] = {KP_SYM_NONE, KP_SYM_NONE, KP_SYM_NONE};
    for (uint32_t i = 0; i < pc->n_its; i++) {
        const kp_sit *it = &s->snap->its[pc->its[i]];
        for (uint32_t o = 0; o < it->n_offerings; o++) {
            const kp_soffering *of = &it->offerings[o];
            size_t k = 0;
            while (k < 3 && of->capacity_type != ct_priority[k])
                k++;
            if (k == 3 || (best[k] >= 0 && of->price >= best[k]) || !offer_ok(s, &f, of) ||
                !reservation_open(s, rs, &pc->reqs, of))
                continue;
            best[k] = of->price;
            zone[k] = of->zone;
        }
    }
    for (size_t k = 0; k < 3; k++) {
        if (best[k] >= 0) {
            pc->price = best[k];
            pc->zone = zone[k];
            pc->capacity_type = ct_priority[k];
            return;
        }
    }
}

static int cmp_sym(const void *a, const void *b)
{
    kp_sym x = *(const kp_sym *)a, y = *(const kp_sym *)b;
    return x < y ? -1 : x > y;
}

/* reqs AND `key In values` (values are sorted in place). */
static void add_in_requirement(solver *s, kp_requirements *reqs, kp_sym key, kp_sym *values, uint32_t n,
                               bool keep_min_values)
{
    if (n == 0)
        return;
    /* The set may keep pointing at `values`: it must live as long as the plan. */
    values = kp_arena_memdup(s->arena, values, n * sizeof(kp_sym));
    qsort(values, n, sizeof(kp_sym), cmp_sym);
    kp_requirement r;
    memset(&r, 0, sizeof(r));
    r.key = key;
    r.values = values;
    r.n_values = n;
    const kp_requirement *old = kp_requirements_get(reqs, key);
    if (keep_min_values && old)
        r.min_values = old->min_values;
    kp_requirements_add(reqs, s->symtab, s->arena, &r);
}

/* Pin instance-type and capacity-type to what the kept options offer. */
static void pin_requirements(solver *s, const reservations *rs, kp_plan_claim *pc)
{
    kp_sym *names = KP_ARENA_NEW(s->scratch, kp_sym, pc->n_its ? pc->n_its : 1);
    kp_sym cts[3];
    uint32_t n_cts = 0;
    offer_filter f = offer_filter_of(&pc->reqs);
    for (uint32_t i = 0; i < pc->n_its; i++) {
        const kp_sit *it = &s->snap->its[pc->its[i]];
        names[i] = it->name;
        for (uint32_t o = 0; o < it->n_offerings; o++) {
            kp_sym ct = it->offerings[o].capacity_type;
            bool seen = false;
            for (uint32_t j = 0; j < n_cts && !seen; j++)
                seen = cts[j] == ct;
            if (!seen && n_cts < 3 && offer_ok(s, &f, &it->offerings[o]) &&
                reservation_open(s, rs, &pc->reqs, &it->offerings[o]))
                cts[n_cts++] = ct;
        }
    }
    add_in_requirement(s, &pc->reqs, KP_SYM_INSTANCE_TYPE, names, pc->n_its, true);
    add_in_requirement(s, &pc->reqs, KP_SYM_CAPACITY_TYPE, cts, n_cts, false);
}

/* Karpenter's FinalizeScheduling: a NodeClaim that can launch into a
 * reservation is pinned to reserved capacity, so that its launch (or a
 * consolidation deciding by its requirements) does not fall back to spot or
 * on-demand. Options without a reservation go last, as a launch ranks them. */
static void pin_reserved(solver *s, kp_plan_claim *pc, uint32_t *its)
{
    kp_sym reserved = KP_SYM_RESERVED;
    add_in_requirement(s, &pc->reqs, KP_SYM_CAPACITY_TYPE, &reserved, 1, false);
    sort_its_by_price(s, &pc->reqs, its, pc->n_its);
}

/* Price orders of a NodePool's instance types under a narrowed zone and
 * capacity type, shared by the claims that narrowed them the same way
 * (thousands of claims pinned to one of three zones sort three times). */
typedef struct price_order {
    uint32_t tmpl;
    kp_requirements key; /* the zone and capacity-type requirements */
    uint32_t *its;
    uint32_t n;
} price_order;

typedef struct price_cache {
    price_order *orders;
    uint32_t n, cap;
    uint32_t *stamp; /* per instance type: claim number + 1 when it is an option */
    uint32_t epoch;
    uint32_t *ordered; /* one claim's options in price order (room for every type) */
} price_cache;

static void offering_key(solver *s, const kp_requirements *reqs, kp_requirements *key)
{
    kp_requirements_init(key);
    const kp_requirement *zone = kp_requirements_get(reqs, KP_SYM_ZONE);
    const kp_requirement *ct = kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE);
    if (zone)
        kp_requirements_add(key, s->symtab, s->scratch, zone);
    if (ct)
        kp_requirements_add(key, s->symtab, s->scratch, ct);
}

static const price_order *cached_order(solver *s, price_cache *cache, const claim *c)
{
    kp_requirements key;
    offering_key(s, &c->reqs, &key);
    for (uint32_t i = 0; i < cache->n; i++)
        if (cache->orders[i].tmpl == c->tmpl && reqs_equal(&cache->orders[i].key, &key))
            return &cache->orders[i];
    if (cache->n == cache->cap) {
        uint32_t cap = cache->cap ? cache->cap * 2 : 8;
        cache->orders = kp_arena_grow(s->scratch, cache->orders, cache->n, cap, sizeof(price_order));
        cache->cap = cap;
    }
    price_order *o = &cache->orders[cache->n++];
    const tstate *ts = &s->ts[c->tmpl];
    o->tmpl = c->tmpl;
    reqs_persist(&o->key, s->scratch, &key);
    o->its = kp_arena_memdup(s->scratch, ts->its, ts->n_its * sizeof(uint32_t));
    o->n = ts->n_its;
    sort_its_by_price(s, &key, o->its, o->n);
    return o;
}

/* The claim's options in price order: its NodePool's order under the claim's
 * zones and capacity types, keeping the claim's options. */
static void order_by_price(solver *s, price_cache *cache, const claim *c, uint32_t *its)
{
    const price_order *o = cached_order(s, cache, c);
    uint32_t mark = ++cache->epoch;
    for (uint32_t i = 0; i < c->n_its; i++)
        cache->stamp[c->its[i]] = mark;
    uint32_t n = 0;
    for (uint32_t i = 0; i < o->n && n < c->n_its; i++)
        if (cache->stamp[o->its[i]] == mark)
            its[n++] = o->its[i];
}

static bool same_requirement(const kp_requirement *a, const kp_requirement *b)
{
    if (!a || !b)
        return a == b;
    kp_requirements x = {(kp_requirement *)a, 1, 1}, y = {(kp_requirement *)b, 1, 1};
    return reqs_equal(&x, &y);
}

/* A claim's options are a subsequence of its NodePool's, which are in price
 * order under the NodePool's zones and capacity types; unless the claim
 * narrowed those, the order still holds. */
static bool same_price_order(const solver *s, const claim *c)
{
    const kp_requirements *t = &s->snap->templates[c->tmpl].reqs;
    return same_requirement(kp_requirements_get(&c->reqs, KP_SYM_ZONE), kp_requirements_get(t, KP_SYM_ZONE)) &&
           same_requirement(kp_requirements_get(&c->reqs, KP_SYM_CAPACITY_TYPE),
                            kp_requirements_get(t, KP_SYM_CAPACITY_TYPE));
}

static void add_error(kp_plan *plan, uint32_t pod, const char *reason)
{
    plan->errors[plan->n_errors].pod = pod;
    plan->errors[plan->n_errors].reason = reason;
    plan->n_errors++;
}

/* Karpenter's TruncateInstanceTypes: keeping only the cheapest types must not
 * break minValues; when it does, the claim's pods cannot be placed. */
static bool truncation_keeps_min_values(solver *s, kp_plan *plan, const claim *c, const kp_plan_claim *pc)
{
    if (s->opts->min_values_best_effort || pc->n_its == c->n_its || min_values_ok(s, &pc->reqs, pc->its, pc->n_its))
        return true;
    const char *why = kp_arena_printf(s->arena, "nodepool \"%s\" cannot meet minValues with its %u cheapest instance "
                                      "types", s->snap->templates[c->tmpl].name, pc->n_its);
    for (uint32_t i = 0; i < c->n_pods; i++)
        add_error(plan, c->pods[i], why);
    return false;
}

/* The reservations the claim could use are held by NodeClaims planned before
 * it, and it has no other offering: its pods wait for a later solve, as in
 * Karpenter's strict mode (a fallback needs a NodePool offering more). */
static bool keeps_an_offering(kp_plan *plan, const kp_plan_claim *pc)
{
    if (pc->capacity_type != KP_SYM_NONE)
        return true;
    const char *why = "one or more instance types with compatible reserved offerings are available, but could "
                      "not be reserved";
    for (uint32_t i = 0; i < pc->n_pods; i++)
        add_error(plan, pc->pods[i], why);
    return false;
}

static void finalize_claim(solver *s, kp_plan *plan, price_cache *cache, reservations *rs, const claim *c)
{
    kp_plan_claim *pc = &plan->claims[plan->n_claims];
    memset(pc, 0, sizeof(*pc));
    pc->template_index = c->tmpl;
    reqs_persist(&pc->reqs, s->arena, &c->reqs);
    drop_key(&pc->reqs, KP_SYM_HOSTNAME);
    pc->requests = c->requests;
    kp_resvec overhead = min_daemon_overhead(s, c);
    kp_resvec_add(&pc->requests, &overhead, s->n_res);
    pc->n_its = c->n_its < s->opts->max_instance_types ? c->n_its : s->opts->max_instance_types;
    uint32_t *its;
    if (same_price_order(s, c)) {
        its = kp_arena_memdup(s->arena, c->its, pc->n_its * sizeof(uint32_t));
    } else { /* every option ordered, the cheapest kept: only those live as long as the plan */
        order_by_price(s, cache, c, cache->ordered);
        its = kp_arena_memdup(s->arena, cache->ordered, pc->n_its * sizeof(uint32_t));
    }
    pc->its = its;
    pc->pods = c->pods;
    pc->n_pods = c->n_pods;
    if (!truncation_keeps_min_values(s, plan, c, pc))
        return;
    pin_requirements(s, rs, pc);
    choose_offering(s, rs, pc);
    if (!keeps_an_offering(plan, pc))
        return;
    if (pc->capacity_type == KP_SYM_RESERVED && reservations_take(s, rs, pc))
        pin_reserved(s, pc, its);
    plan->hourly_cost += pc->price;
    plan->n_claims++;
}

/* The LP-relaxation bound: scheduled requests priced at the cheapest price per
 * unit of each resource; the largest of those (the binding resource) wins. */
static double lower_bound(solver *s, const kp_plan *plan)
{
    double best = 0;
    for (uint32_t r = 0; r < s->n_res; r++) {
        if (r == KP_RES_PODS)
            continue;
        double unit = -1;
        for (uint32_t t = 0; t < s->snap->n_templates; t++) {
            for (uint32_t i = 0; !s->snap->templates[t].is_static && i < s->ts[t].n_its; i++) {
                const kp_sit *it = &s->snap->its[s->ts[t].its[i]];
                double price = cheapest_price(s, &s->snap->templates[t].reqs, it);
                if (price < 0 || it->allocatable.v[r] <= 0)
                    continue;
                double u = price / (double)it->allocatable.v[r];
                if (unit < 0 || u < unit)
                    unit = u;
            }
        }
        double need = 0;
        for (uint32_t c = 0; c < plan->n_claims; c++)
            for (uint32_t k = 0; k < plan->claims[c].n_pods; k++)
                need += (double)s->snap->pods[plan->claims[c].pods[k]].requests.v[r];
        if (unit > 0 && need * unit > best)
            best = need * unit;
    }
    return best;
}

int plan_finalize(solver *s, kp_plan *plan)
{
    plan->claims = KP_ARENA_NEW(s->arena, kp_plan_claim, s->n_claims ? s->n_claims : 1);
    plan->errors = KP_ARENA_NEW(s->arena, kp_plan_error, s->n_ps ? s->n_ps : 1); /* every pod at most once */
    plan->nodes = KP_ARENA_NEW(s->arena, kp_plan_node, s->n_enodes ? s->n_enodes : 1);
    price_cache cache = {0};
    cache.stamp = KP_ARENA_NEW(s->scratch, uint32_t, s->snap->n_its ? s->snap->n_its : 1);
    cache.ordered = KP_ARENA_NEW(s->scratch, uint32_t, s->snap->n_its ? s->snap->n_its : 1);
    reservations rs;
    reservations_build(s, &rs);
    for (uint32_t i = 0; i < s->n_claims; i++)
        finalize_claim(s, plan, &cache, &rs, &s->claims[i]);
    for (uint32_t i = 0; i < s->n_enodes; i++) {
        const enode *e = &s->enodes[i];
        if (e->n_pods == 0)
            continue;
        kp_plan_node *pn = &plan->nodes[plan->n_nodes++];
        pn->node = e->node;
        pn->pods = e->pods;
        pn->n_pods = e->n_pods;
    }
    for (uint32_t i = 0; i < s->n_ps; i++)
        if (s->ps[i].error)
            add_error(plan, s->ps[i].pod, s->ps[i].error);
    plan->n_scheduled = s->n_ps - plan->n_errors;
    plan->lower_bound_cost = s->opts->skip_lower_bound ? 0 : lower_bound(s, plan);
    return 0;
}
