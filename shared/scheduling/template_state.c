/*
 * Per-NodePool state for one solve: its instance types ordered by price, the
 * DaemonSet overhead each of them would carry (instance types are grouped by
 * the exact set of DaemonSets that would land on them), and what is left of
 * its limits after the nodes it already has.
 */
#include "scheduling/solver_internal.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

typedef struct price_key {
    uint32_t it;
    double price;
} price_key;

static int cmp_price(const void *a, const void *b)
{
    const price_key *x = a, *y = b;
    if (x->price != y->price) {
        /* No allowed offering (negative) sorts last. */
        if (x->price < 0)
            return 1;
        if (y->price < 0)
            return -1;
        return x->price < y->price ? -1 : 1;
    }
    return x->it < y->it ? -1 : x->it > y->it;
}

void sort_its_by_price(solver *s, const kp_requirements *reqs, uint32_t *its, uint32_t n)
{
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    price_key *keys = KP_ARENA_NEW(s->scratch, price_key, n ? n : 1);
    const kp_requirement *zone = kp_requirements_get(reqs, KP_SYM_ZONE);
    const kp_requirement *ct = kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE);
    for (uint32_t i = 0; i < n; i++) {
        keys[i].it = its[i];
        keys[i].price = cheapest_price_in(s, zone, ct, &s->snap->its[its[i]]);
    }
    qsort(keys, n, sizeof(*keys), cmp_price);
    for (uint32_t i = 0; i < n; i++)
        its[i] = keys[i].it;
    kp_arena_rewind(s->scratch, m);
}

/* Karpenter's isDaemonPodCompatible: the DaemonSet tolerates the NodePool's
 * taints (PreferNoSchedule always) and one of its required terms fits both the
 * NodePool and the instance type. */
static bool daemon_fits(solver *s, const kp_template *t, const kp_sit *it, const kp_spod *d)
{
    for (uint32_t i = 0; i < t->n_taints; i++) {
        if (t->taints[i].effect == KP_EFFECT_PREFER_NO_SCHEDULE)
            continue;
        if (!kp_taints_tolerated(&t->taints[i], 1, d->tolerations, d->n_tolerations))
            return false;
    }
    return daemon_term_matches(s, d, &t->reqs, KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN, &it->reqs);
}

enum { MAX_DAEMON_WORDS = 64 }; /* up to 4096 DaemonSets */

static int32_t find_or_add_group(solver *s, tstate *ts, uint64_t *keys, const uint64_t *bits,
                                 uint32_t words)
{
    for (uint32_t g = 0; g < ts->n_dgroups; g++)
        if (memcmp(&keys[g * words], bits, words * sizeof(uint64_t)) == 0)
            return (int32_t)g;
    uint32_t g = ts->n_dgroups++;
    memcpy(&keys[g * words], bits, words * sizeof(uint64_t));
    dgroup *dg = &ts->dgroups[g];
    memset(dg, 0, sizeof(*dg));
    uint32_t n_ports = 0;
    for (uint32_t d = 0; d < s->snap->n_daemons; d++)
        if (bits[d / 64] & (UINT64_C(1) << (d % 64)))
            n_ports += s->snap->daemons[d].n_ports;
    kp_host_port *ports = n_ports ? KP_ARENA_NEW(s->arena, kp_host_port, n_ports) : NULL;
    for (uint32_t d = 0; d < s->snap->n_daemons; d++) {
        if (!(bits[d / 64] & (UINT64_C(1) << (d % 64))))
            continue;
        const kp_spod *dp = &s->snap->daemons[d];
        kp_resvec_add(&dg->overhead, &dp->requests, s->n_res);
        if (dp->n_ports)
            memcpy(ports + dg->n_ports, dp->ports, dp->n_ports * sizeof(kp_host_port));
        dg->n_ports += dp->n_ports;
    }
    dg->ports = ports;
    return (int32_t)g;
}

static int build_daemon_groups(solver *s, uint32_t t)
{
    kp_snapshot *snap = s->snap;
    const kp_template *tp = &snap->templates[t];
    tstate *ts = &s->ts[t];
    uint32_t words = (snap->n_daemons + 63) / 64;
    if (words > MAX_DAEMON_WORDS)
        return kp_error_set(KP_ETOOLARGE, "more than %d DaemonSets", MAX_DAEMON_WORDS * 64);
    if (words == 0)
        words = 1;
    ts->group_of = KP_ARENA_NEW(s->arena, int32_t, snap->n_its ? snap->n_its : 1);
    ts->room = KP_ARENA_NEW(s->arena, kp_resvec, snap->n_its ? snap->n_its : 1);
    for (uint32_t i = 0; i < snap->n_its; i++)
        ts->group_of[i] = -1;
    ts->dgroups = KP_ARENA_NEW(s->arena, dgroup, tp->n_its + 1);
    uint64_t *keys = KP_ARENA_NEW(s->arena, uint64_t, (size_t)(tp->n_its + 1) * words);
    uint64_t bits[MAX_DAEMON_WORDS];
    for (uint32_t i = 0; i < tp->n_its; i++) {
        memset(bits, 0, sizeof(bits));
        for (uint32_t d = 0; d < snap->n_daemons; d++)
            if (daemon_fits(s, tp, &snap->its[tp->its[i]], &snap->daemons[d]))
                bits[d / 64] |= UINT64_C(1) << (d % 64);
        int32_t g = find_or_add_group(s, ts, keys, bits, words);
        ts->group_of[tp->its[i]] = g;
        ts->room[tp->its[i]] = snap->its[tp->its[i]].allocatable;
        kp_resvec_sub(&ts->room[tp->its[i]], &ts->dgroups[g].overhead, s->n_res);
    }
    return 0;
}

/* Karpenter pre-filters a NodePool's instance types: they need an available
 * offering its requirements allow and room for the DaemonSets that would run. */
static void keep_launchable(solver *s, uint32_t t)
{
    const kp_template *tp = &s->snap->templates[t];
    tstate *ts = &s->ts[t];
    uint32_t *its = (uint32_t *)ts->its, n = 0;
    kp_resvec none;
    kp_resvec_zero(&none);
    for (uint32_t i = 0; i < ts->n_its; i++) {
        const kp_sit *it = &s->snap->its[its[i]];
        if (cheapest_price(s, &tp->reqs, it) >= 0 && kp_resvec_fits(&none, &ts->room[its[i]], s->n_res)) {
            kp_resvec_max(&ts->largest, &it->capacity, s->n_res);
            its[n++] = its[i];
        }
    }
    ts->n_its = n;
}

const uint8_t *templates_types(solver *s)
{
    uint32_t n = s->snap->n_templates;
    uint8_t *out = KP_ARENA_NEW(s->arena, uint8_t, n ? n : 1);
    for (uint32_t t = 0; t < n; t++) {
        const tstate *ts = &s->ts[t];
        if (s->snap->templates[t].is_static)
            out[t] = KP_TEMPLATE_TYPES_OK; /* they launch for their replicas, never for pods */
        else if (ts->n_its == 0)
            out[t] = KP_TEMPLATE_TYPES_NONE;
        else if (!s->opts->min_values_best_effort &&
                 !min_values_ok(s, &s->snap->templates[t].reqs, ts->its, ts->n_its))
            out[t] = KP_TEMPLATE_TYPES_MIN_VALUES;
        else
            out[t] = KP_TEMPLATE_TYPES_OK;
    }
    return out;
}

/* Limits minus what the NodePool's nodes already hold (Karpenter counts capacity). */
static void init_limits(solver *s, uint32_t t)
{
    const kp_template *tp = &s->snap->templates[t];
    tstate *ts = &s->ts[t];
    ts->remaining = tp->limits;
    ts->nodes_remaining = tp->node_limit;
    for (uint32_t i = 0; i < s->snap->n_nodes; i++) {
        const kp_snode *n = &s->snap->nodes[i];
        /* Karpenter counts active nodes only: one being deleted frees its share. */
        if (n->template_index != (int32_t)t || n->deleting || (s->opts->exclude_nodes && s->opts->exclude_nodes[i]))
            continue;
        kp_limvec_sub(&ts->remaining, &n->capacity, s->n_res);
        ts->nodes_remaining--;
    }
}

/* Everything about the templates that no solve changes; run with s->arena
 * being the cache's arena. */
static int build_static(solver *s)
{
    kp_snapshot *snap = s->snap;
    for (uint32_t i = 0; i < snap->n_its; i++)
        for (uint32_t k = 0; k < snap->its[i].reqs.count; k++)
            kp_symmap_put(&s->it_keys, s->arena, snap->its[i].reqs.items[k].key, 1);
    s->ts = KP_ARENA_NEW(s->arena, tstate, snap->n_templates ? snap->n_templates : 1);
    for (uint32_t t = 0; t < snap->n_templates; t++) {
        const kp_template *tp = &snap->templates[t];
        tstate *ts = &s->ts[t];
        uint32_t *its = KP_ARENA_NEW(s->arena, uint32_t, tp->n_its ? tp->n_its : 1);
        memcpy(its, tp->its, tp->n_its * sizeof(uint32_t));
        sort_its_by_price(s, &tp->reqs, its, tp->n_its);
        ts->its = its;
        ts->n_its = tp->n_its;
        int err = build_daemon_groups(s, t);
        if (err < 0)
            return err;
        keep_launchable(s, t);
        for (uint32_t i = 0; i < tp->n_taints; i++)
            if (tp->taints[i].effect == KP_EFFECT_PREFER_NO_SCHEDULE)
                s->tolerate_pns_available = true;
    }
    topo_build_universe(s);
    return 0;
}

static void cache_free(void *p)
{
    solver_cache *c = p;
    kp_arena_free(c->arena);
    free(c);
}

static int cache_build(solver *s, solver_cache **out)
{
    solver_cache *c = kp_xcalloc(1, sizeof(*c));
    kp_arena *solve_arena = s->arena;
    c->arena = kp_arena_new();
    s->arena = c->arena;
    int err = build_static(s);
    s->arena = solve_arena;
    if (err < 0) {
        cache_free(c);
        return err;
    }
    c->ts = s->ts;
    c->it_keys = s->it_keys;
    c->tolerate_pns_available = s->tolerate_pns_available;
    c->dgroups = s->topo.dgroups;
    c->n_dgroups = s->topo.n_dgroups;
    *out = c;
    return 0;
}

int cache_ensure(solver *s)
{
    kp_snapshot *snap = s->snap;
    if (snap->solver_cache)
        return 0;
    solver_cache *c;
    int err = cache_build(s, &c);
    if (err < 0)
        return err;
    snap->solver_cache = c;
    snap->solver_cache_free = cache_free;
    return 0;
}

int claims_init(solver *s)
{
    kp_snapshot *snap = s->snap;
    const solver_cache *c = snap->solver_cache;
    s->it_keys = c->it_keys;
    s->tolerate_pns_available = c->tolerate_pns_available;
    s->topo.dgroups = c->dgroups;
    s->topo.n_dgroups = s->topo.cap_dgroups = c->n_dgroups;
    s->ts = kp_arena_memdup(s->arena, c->ts, (snap->n_templates ? snap->n_templates : 1) * sizeof(tstate));
    for (uint32_t t = 0; t < snap->n_templates; t++)
        init_limits(s, t);
    return caps_init(s);
}
