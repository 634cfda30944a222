/* Cluster-wide and NodePool dollar caps in the solver (see caps.h). */
#include "scheduling/caps.h"
#include "scheduling/solver_internal.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

/* Dollar comparisons forgive rounding in sums of prices. */
#define COST_EPSILON 1e-9
#define UNKNOWN_PRICE (-2.0)

/* ------------------------------------------------------------ prices */

static bool allows(const kp_snapshot *snap, const kp_requirements *reqs, const kp_soffering *o)
{
    const kp_requirement *zone = kp_requirements_get(reqs, KP_SYM_ZONE);
    const kp_requirement *ct = kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE);
    return o->available && (!zone || kp_requirement_has(snap->symtab, zone, o->zone)) &&
           (!ct || kp_requirement_has(snap->symtab, ct, o->capacity_type));
}

static const kp_sym launch_order[] = {KP_SYM_RESERVED, KP_SYM_SPOT, KP_SYM_ON_DEMAND};

/* What `it` may cost once launched under `reqs`: the dearest offering they
 * allow of the capacity type a launch takes (reserved, then spot, then
 * on-demand), as Karpenter's WorstLaunchPrice; -1 when none is allowed. */
static double worst_launch(const kp_snapshot *snap, const kp_requirements *reqs, uint32_t it)
{
    const kp_sit *sit = &snap->its[it];
    for (size_t k = 0; k < sizeof(launch_order) / sizeof(launch_order[0]); k++) {
        double d = -1;
        for (uint32_t o = 0; o < sit->n_offerings; o++)
            if (sit->offerings[o].capacity_type == launch_order[k] && allows(snap, reqs, &sit->offerings[o]) &&
                sit->offerings[o].price > d)
                d = sit->offerings[o].price;
        if (d >= 0)
            return d;
    }
    return -1;
}

/* The snapshot's instance type named `name`, among the template's first. */
static int64_t type_named(const kp_snapshot *snap, int32_t tmpl, const char *name)
{
    kp_sym s = name ? kp_sym_lookup(snap->symtab, name) : KP_SYM_NONE;
    if (s == KP_SYM_NONE)
        return -1;
    const kp_template *t = tmpl >= 0 ? &snap->templates[tmpl] : NULL;
    for (uint32_t k = 0; t && k < t->n_its; k++)
        if (snap->its[t->its[k]].name == s)
            return t->its[k];
    for (uint32_t k = 0; k < snap->n_its; k++)
        if (snap->its[k].name == s)
            return k;
    return -1;
}

/* A launched node's offering price: its zone and capacity type, else the
 * type's cheapest offering; -1 when the catalog does not know it. */
static double launched_price(const kp_snapshot *snap, const kp_snode *n)
{
    int64_t it = type_named(snap, n->template_index, n->instance_type);
    if (it < 0)
        return -1;
    const kp_sit *sit = &snap->its[it];
    kp_sym zone = kp_symlabels_get(&n->labels, KP_SYM_ZONE), ct = kp_symlabels_get(&n->labels, KP_SYM_CAPACITY_TYPE);
    double cheapest = -1;
    for (uint32_t o = 0; o < sit->n_offerings; o++) {
        const kp_soffering *of = &sit->offerings[o];
        if (of->zone == zone && of->capacity_type == ct)
            return of->price;
        if (cheapest < 0 || of->price < cheapest)
            cheapest = of->price;
    }
    return cheapest;
}

/* A NodeClaim's requirements on the keys that decide its options and price. */
static void claim_requirements(kp_snapshot *snap, const kp_nodeclaim *nc, kp_arena *a, kp_requirements *out)
{
    kp_requirements_init(out);
    for (size_t i = 0; i < nc->spec.n_requirements; i++) {
        const kp_selector_req *r = &nc->spec.requirements[i];
        kp_requirement req;
        if (kp_requirement_new(&req, snap->symtab, a, r->key, r->op, (const char *const *)r->values, r->n_values,
                               0) == 0)
            kp_requirements_add(out, snap->symtab, a, &req);
    }
}

/* A NodeClaim not launched yet: its largest option, and the most its launch may cost. */
static void unlaunched(kp_snapshot *snap, const kp_snode *n, kp_arena *a, kp_resvec *cap, double *price)
{
    kp_requirements reqs;
    claim_requirements(snap, n->src_claim, a, &reqs);
    const kp_requirement *types = kp_requirements_get(&reqs, KP_SYM_INSTANCE_TYPE);
    const kp_template *t = n->template_index >= 0 ? &snap->templates[n->template_index] : NULL;
    uint32_t count = t ? t->n_its : snap->n_its;
    kp_resvec_zero(cap);
    *price = -1;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t it = t ? t->its[k] : k;
        if (types && !kp_requirement_has(snap->symtab, types, snap->its[it].name))
            continue;
        kp_resvec_max(cap, &snap->its[it].capacity, KP_RES_MAX);
        double d = worst_launch(snap, &reqs, it);
        *price = d > *price ? d : *price;
    }
}

/* One node's share: capacity, and price (-1: not counted in dollars,
 * UNKNOWN_PRICE: a managed node the catalog cannot price). */
static void node_share(kp_snapshot *snap, const kp_snode *n, kp_arena *a, kp_resvec *cap, double *price)
{
    *cap = n->capacity;
    *price = -1;
    if (n->in_flight && !n->instance_type && n->src_claim) {
        unlaunched(snap, n, a, cap, price);
        if (*price < 0)
            *price = UNKNOWN_PRICE;
    } else if (n->managed && n->template_index >= 0) {
        *price = launched_price(snap, n);
        if (*price < 0)
            *price = UNKNOWN_PRICE;
    }
    if (n->template_index < 0 && *price != -1)
        *price = -1; /* only the NodePools we know are priced */
}

/* ------------------------------------------------------------ usage */

static void add_share(kp_caps_usage *u, const kp_resvec *cap, double price, double *pool)
{
    u->nodes++;
    u->cores += cap->v[KP_RES_CPU];
    u->memory += cap->v[KP_RES_MEMORY];
    if (price == UNKNOWN_PRICE)
        u->unpriced++;
    else if (price > 0)
        u->hourly_cost += price, *pool += price;
}

/* Usage of every node not being deleted (`all`), and of those not excluded (`kept`). */
static void measure(kp_snapshot *snap, const bool *exclude, kp_caps_usage *all, kp_caps_usage *kept,
                    double *pool_all, double *pool_kept)
{
    kp_arena *a = kp_arena_new();
    double none = 0;
    memset(all, 0, sizeof(*all));
    memset(kept, 0, sizeof(*kept));
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const kp_snode *n = &snap->nodes[i];
        if (n->deleting)
            continue;
        kp_resvec cap;
        double price;
        node_share(snap, n, a, &cap, &price);
        int32_t t = n->template_index;
        add_share(all, &cap, price, pool_all && t >= 0 ? &pool_all[t] : &none);
        if (!exclude || !exclude[i])
            add_share(kept, &cap, price, pool_kept && t >= 0 ? &pool_kept[t] : &none);
    }
    kp_arena_free(a);
}

void kp_caps_measure(kp_snapshot *snap, kp_caps_usage *total, double *pool_cost)
{
    kp_caps_usage ignored;
    if (pool_cost)
        memset(pool_cost, 0, snap->n_templates * sizeof(double));
    measure(snap, NULL, total, &ignored, pool_cost, NULL);
}

/* ------------------------------------------------------------ the solve */

typedef struct caps_state {
    const kp_caps *caps; /* the cluster-wide ones (never NULL here) */
    kp_caps none;
    int64_t nodes_used, nodes_left;
    kp_milli128 cores_left, memory_left;
    double cost_left;
    double *pool_cap, *pool_left; /* per template; pool_cap < 0: none */
    const char **pool_bad;        /* per template: its annotation's error */
} caps_state;

static kp_milli128 left_of(kp_milli128 cap, kp_milli128 all, kp_milli128 kept)
{
    return (cap > all ? cap : all) - kept;
}

static double cost_left_of(double cap, double all, double kept)
{
    return (cap > all ? cap : all) - kept;
}

/* The NodePools' own caps; false when none has one. */
static bool pool_caps(solver *s, caps_state *cs)
{
    uint32_t n = s->snap->n_templates;
    bool any = false;
    cs->pool_cap = KP_ARENA_NEW(s->work, double, n ? n : 1);
    cs->pool_bad = KP_ARENA_NEW(s->work, const char *, n ? n : 1);
    for (uint32_t t = 0; t < n; t++) {
        const kp_nodepool *np = s->snap->templates[t].src;
        cs->pool_cap[t] = -1;
        if (np && kp_caps_nodepool_cost(np, &cs->pool_cap[t]) < 0)
            cs->pool_bad[t] = kp_arena_printf(s->arena, "nodepool \"%s\" launches nothing: %s", np->meta.name,
                                              kp_error_last());
        any |= cs->pool_cap[t] >= 0 || cs->pool_bad[t];
    }
    return any;
}

int caps_init(solver *s)
{
    caps_state *cs = KP_ARENA_NEW(s->work, caps_state, 1);
    cs->none = (kp_caps)KP_CAPS_INIT;
    cs->caps = s->opts->caps ? s->opts->caps : &cs->none;
    bool pools = pool_caps(s, cs);
    if (!kp_caps_any(cs->caps) && !pools)
        return 0; /* s->caps stays NULL: nothing to check */
    uint32_t n = s->snap->n_templates ? s->snap->n_templates : 1;
    double *pool_all = KP_ARENA_NEW(s->work, double, n);
    cs->pool_left = KP_ARENA_NEW(s->work, double, n);
    kp_caps_usage all, kept;
    measure(s->snap, s->opts->exclude_nodes, &all, &kept, pool_all, cs->pool_left);
    const kp_caps *c = cs->caps;
    cs->nodes_used = kept.nodes;
    cs->nodes_left = c->max_nodes < 0 ? 0 : (c->max_nodes > all.nodes ? c->max_nodes : all.nodes) - kept.nodes;
    cs->cores_left = c->has_cores ? left_of(c->cores, all.cores, kept.cores) : 0;
    cs->memory_left = c->has_memory ? left_of(c->memory, all.memory, kept.memory) : 0;
    cs->cost_left = c->max_hourly_cost >= 0 ? cost_left_of(c->max_hourly_cost, all.hourly_cost, kept.hourly_cost) : 0;
    for (uint32_t t = 0; t < s->snap->n_templates; t++)
        cs->pool_left[t] = cs->pool_cap[t] >= 0 ? cost_left_of(cs->pool_cap[t], pool_all[t], cs->pool_left[t]) : 0;
    s->caps = cs;
    return 0;
}

enum { BY_CORES = 1, BY_MEMORY = 2, BY_COST = 4, BY_POOL_COST = 8 };

static bool cost_capped(const caps_state *cs, uint32_t tmpl)
{
    return cs->caps->max_hourly_cost >= 0 || cs->pool_cap[tmpl] >= 0;
}

static unsigned cost_excludes(const caps_state *cs, uint32_t tmpl, double price)
{
    unsigned by = 0;
    if (cs->caps->max_hourly_cost >= 0 && price > cs->cost_left + COST_EPSILON)
        by |= BY_COST;
    if (cs->pool_cap[tmpl] >= 0 && price > cs->pool_left[tmpl] + COST_EPSILON)
        by |= BY_POOL_COST;
    return by;
}

static void quantity_text(kp_milli128 v, bool binary, char *buf, size_t size)
{
    kp_quantity_format(kp_quantity_from_milli128(v > 0 ? v : 0, binary ? KP_QUANTITY_BINARY_SI
                                                                        : KP_QUANTITY_DECIMAL_SI),
                       buf, size);
}

/* `text` after `so_far` ("a; b"), in the solve's arena. */
static const char *join(solver *s, const char *so_far, const char *text)
{
    return so_far ? kp_arena_printf(s->arena, "%s; %s", so_far, text) : text;
}

/* "cluster-wide cap --cores-total=64 leaves 2 cores; ..." for the caps in
 * `by`; with `none_left`, followed by what that means for the NodePool. */
static const char *caps_text(solver *s, uint32_t tmpl, unsigned by, bool none_left)
{
    const caps_state *cs = s->caps;
    const kp_caps *c = cs->caps;
    const char *out = NULL;
    char q[KP_QUANTITY_STRLEN], cap[KP_QUANTITY_STRLEN];
    if (by & BY_POOL_COST)
        out = kp_arena_printf(s->arena, "nodepool \"%s\" cap %s=%g leaves $%.4f/hour", s->snap->templates[tmpl].name,
                              KP_ANNOTATION_MAX_HOURLY_COST, cs->pool_cap[tmpl],
                              cs->pool_left[tmpl] > 0 ? cs->pool_left[tmpl] : 0);
    if (by & BY_CORES) {
        quantity_text(cs->cores_left, false, q, sizeof(q));
        out = join(s, out, kp_arena_printf(s->arena, "cluster-wide cap --cores-total=%lld leaves %s cores",
                                           (long long)(c->cores / 1000), q));
    }
    if (by & BY_MEMORY) {
        quantity_text(cs->memory_left, true, q, sizeof(q));
        quantity_text(c->memory, true, cap, sizeof(cap));
        out = join(s, out, kp_arena_printf(s->arena, "cluster-wide cap --memory-total=%s leaves %s of memory", cap, q));
    }
    if (by & BY_COST)
        out = join(s, out, kp_arena_printf(s->arena, "cluster-wide cap --max-hourly-cost=%g leaves $%.4f/hour",
                                           c->max_hourly_cost, cs->cost_left > 0 ? cs->cost_left : 0));
    if (none_left)
        out = kp_arena_printf(s->arena, "%s, %s", out,
                              (by & (BY_COST | BY_POOL_COST)) ? "less than any instance type it could launch costs"
                                                               : "too little for any of its instance types");
    return out;
}

bool caps_node_allowed(solver *s, uint32_t tmpl, const char **why)
{
    const caps_state *cs = s->caps;
    if (!cs)
        return true;
    if (cs->pool_bad[tmpl]) {
        if (why)
            *why = cs->pool_bad[tmpl];
        return false;
    }
    if (cs->caps->max_nodes < 0 || cs->nodes_left > 0)
        return true;
    if (why)
        *why = kp_arena_printf(s->arena, "cluster-wide cap --max-nodes-total=%lld is reached (%lld nodes and "
                                         "NodeClaims)",
                               (long long)cs->caps->max_nodes, (long long)cs->nodes_used);
    return false;
}

/* Keep the entries of `its` no cap excludes (by[i] == 0); *removed gathers
 * the caps that excluded the others. */
static uint32_t compact(uint32_t *its, uint32_t n, const unsigned *by, unsigned *removed)
{
    uint32_t k = 0;
    *removed = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!by[i])
            its[k++] = its[i];
        *removed |= by[i];
    }
    return k;
}

uint32_t caps_filter(solver *s, uint32_t tmpl, uint32_t *its, uint32_t n, const char **note)
{
    const caps_state *cs = s->caps;
    if (note)
        *note = NULL;
    if (!cs || (!cs->caps->has_cores && !cs->caps->has_memory))
        return n;
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    unsigned *by = KP_ARENA_NEW(s->scratch, unsigned, n ? n : 1), removed;
    for (uint32_t i = 0; i < n; i++) {
        const kp_sit *sit = &s->snap->its[its[i]];
        by[i] = (cs->caps->has_cores && sit->capacity.v[KP_RES_CPU] > cs->cores_left ? BY_CORES : 0) |
                (cs->caps->has_memory && sit->capacity.v[KP_RES_MEMORY] > cs->memory_left ? BY_MEMORY : 0);
    }
    uint32_t k = compact(its, n, by, &removed);
    kp_arena_rewind(s->scratch, m);
    if (removed && note)
        *note = caps_text(s, tmpl, removed, k == 0);
    return k;
}

uint32_t caps_cost_filter(solver *s, uint32_t tmpl, const kp_requirements *reqs, uint32_t *its, uint32_t n,
                          const char **note)
{
    const caps_state *cs = s->caps;
    if (note)
        *note = NULL;
    if (!cs || !cost_capped(cs, tmpl))
        return n;
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    unsigned *by = KP_ARENA_NEW(s->scratch, unsigned, n ? n : 1), removed;
    for (uint32_t i = 0; i < n; i++)
        by[i] = cost_excludes(cs, tmpl, worst_launch(s->snap, reqs, its[i]));
    uint32_t k = compact(its, n, by, &removed);
    kp_arena_rewind(s->scratch, m);
    if (removed && note)
        *note = caps_text(s, tmpl, removed, k == 0);
    return k;
}

void caps_charge(solver *s, const claim *c)
{
    caps_state *cs = s->caps;
    if (!cs)
        return;
    cs->nodes_left--;
    cs->nodes_used++;
    cs->cores_left -= c->charged.v[KP_RES_CPU];
    cs->memory_left -= c->charged.v[KP_RES_MEMORY];
    if (!cost_capped(cs, c->tmpl))
        return;
    double most = 0;
    for (uint32_t i = 0; i < c->n_its; i++) {
        double p = worst_launch(s->snap, &c->reqs, c->its[i]);
        most = p > most ? p : most;
    }
    cs->cost_left -= most;
    cs->pool_left[c->tmpl] -= most;
}

bool caps_bind(const solver *s, uint32_t tmpl)
{
    const caps_state *cs = s->caps;
    return cs && (kp_caps_any(cs->caps) || cs->pool_cap[tmpl] >= 0 || cs->pool_bad[tmpl]);
}
