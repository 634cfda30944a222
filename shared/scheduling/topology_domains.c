/*
 * Choosing domains: given what a pod allows and what a node (or planned
 * NodeClaim) allows for a topology key, which domains keep every topology
 * group satisfied. Follows Karpenter's TopologyGroup.Get; where Karpenter
 * picks among equals in map order (at random), we pick the domain whose name
 * sorts first, so plans are deterministic.
 */
#include "scheduling/solver_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool rhas(solver *s, const kp_requirement *r, kp_sym d)
{
    return !r || kp_requirement_has(s->symtab, r, d);
}

static bool r_is_in(const kp_requirement *r)
{
    return r && kp_requirement_operator(r) == KP_OP_IN;
}

static uint32_t r_count(const kp_requirement *r)
{
    return r ? r->n_values : 0;
}

static bool selects(const tgroup *g, const kp_spod *p)
{
    if (!g->selector || g->selector->nothing)
        return false;
    bool in_ns = false;
    for (uint32_t i = 0; i < g->n_namespaces && !in_ns; i++)
        in_ns = g->namespaces[i] == p->ns;
    return in_ns && kp_selector_matches(g->selector, &p->labels);
}

static int32_t count_of(const tgroup *g, kp_sym d)
{
    uint32_t i = kp_symmap_get(&g->index, d);
    return i == UINT32_MAX ? 0 : g->counts[i];
}

static bool known(const tgroup *g, kp_sym d)
{
    return kp_symmap_get(&g->index, d) != UINT32_MAX;
}

/* Lower count wins; on a tie, the name that sorts first. */
static bool better(solver *s, kp_sym d, int64_t count, kp_sym best, int64_t best_count)
{
    if (best == KP_SYM_NONE || count < best_count)
        return true;
    return count == best_count && strcmp(kp_sym_str(s->symtab, d), kp_sym_str(s->symtab, best)) < 0;
}

/* A set of domains being collected into an In requirement. */
typedef struct domset {
    kp_sym *v;
    uint32_t n, cap;
} domset;

static void domset_add(solver *s, domset *set, kp_sym d)
{
    for (uint32_t i = 0; i < set->n; i++)
        if (set->v[i] == d)
            return;
    if (set->n == set->cap) {
        uint32_t cap = set->cap ? set->cap * 2 : 8;
        set->v = kp_arena_grow(s->scratch, set->v, set->n, cap, sizeof(kp_sym));
        set->cap = cap;
    }
    set->v[set->n++] = d;
}

static int cmp_sym(const void *a, const void *b)
{
    kp_sym x = *(const kp_sym *)a, y = *(const kp_sym *)b;
    return x < y ? -1 : x > y;
}

static kp_requirement domset_requirement(kp_sym key, domset *set)
{
    kp_requirement r = req_none(key);
    if (set->n == 0)
        return r;
    qsort(set->v, set->n, sizeof(kp_sym), cmp_sym);
    r.values = set->v;
    r.n_values = set->n;
    return r;
}

static int64_t min_count(solver *s, const tgroup *g, const kp_requirement *pod_domains)
{
    if (g->key == KP_SYM_HOSTNAME)
        return 0; /* a new node is always an empty hostname domain */
    int64_t min = INT32_MAX;
    int32_t supported = 0;
    for (uint32_t i = 0; i < g->n_domains; i++) {
        if (!rhas(s, pod_domains, g->domains[i]))
            continue;
        supported++;
        if (g->counts[i] < min)
            min = g->counts[i];
    }
    if (g->min_domains > 0 && supported < g->min_domains)
        min = 0;
    return min;
}

static kp_requirement next_spread(solver *s, const tgroup *g, const kp_spod *p,
                                  const kp_requirement *pod_domains, const kp_requirement *node_domains)
{
    int64_t self = selects(g, p) ? 1 : 0;
    if (g->key == KP_SYM_HOSTNAME && r_count(node_domains) == 1) {
        kp_sym host = node_domains->values[0];
        if (count_of(g, host) + self <= g->max_skew)
            return req_single(s->scratch, g->key, host);
        return req_none(g->key);
    }
    int64_t min = min_count(s, g, pod_domains);
    kp_sym best = KP_SYM_NONE;
    int64_t best_count = 0;
    if (r_is_in(node_domains)) {
        for (uint32_t i = 0; i < node_domains->n_values; i++) {
            kp_sym d = node_domains->values[i];
            if (!known(g, d))
                continue;
            int64_t c = count_of(g, d) + self;
            if (c - min <= g->max_skew && better(s, d, c, best, best_count))
                best = d, best_count = c;
        }
    } else {
        for (uint32_t i = 0; i < g->n_domains; i++) {
            kp_sym d = g->domains[i];
            if (!rhas(s, node_domains, d))
                continue;
            int64_t c = g->counts[i] + self;
            if (c - min <= g->max_skew && better(s, d, c, best, best_count))
                best = d, best_count = c;
        }
    }
    return best == KP_SYM_NONE ? req_none(g->key) : req_single(s->scratch, g->key, best);
}

static bool any_compatible_domain(solver *s, const tgroup *g, const kp_requirement *pod_domains)
{
    for (uint32_t i = 0; i < g->n_domains; i++)
        if (g->counts[i] > 0 && rhas(s, pod_domains, g->domains[i]))
            return true;
    return false;
}

/* The first domain, by name, that both sides allow (pass NULL to skip a side). */
static kp_sym first_allowed(solver *s, const tgroup *g, const kp_requirement *a, const kp_requirement *b)
{
    kp_sym best = KP_SYM_NONE;
    for (uint32_t i = 0; i < g->n_domains; i++) {
        kp_sym d = g->domains[i];
        if (rhas(s, a, d) && rhas(s, b, d) && better(s, d, 0, best, 0))
            best = d;
    }
    return best;
}

static kp_requirement next_affinity(solver *s, const tgroup *g, const kp_spod *p,
                                    const kp_requirement *pod_domains, const kp_requirement *node_domains)
{
    domset set = {0};
    bool bootstrap = selects(g, p) && (g->n_nonempty == 0 || !any_compatible_domain(s, g, pod_domains));
    if (g->key == KP_SYM_HOSTNAME && r_count(node_domains) == 1) {
        kp_sym host = node_domains->values[0];
        if (rhas(s, pod_domains, host) && (count_of(g, host) > 0 || bootstrap))
            return req_single(s->scratch, g->key, host);
        return req_none(g->key);
    }
    if (r_is_in(node_domains)) {
        for (uint32_t i = 0; i < node_domains->n_values; i++) {
            kp_sym d = node_domains->values[i];
            if (rhas(s, pod_domains, d) && count_of(g, d) > 0)
                domset_add(s, &set, d);
        }
    } else {
        for (uint32_t i = 0; i < g->n_domains; i++)
            if (g->counts[i] > 0 && rhas(s, pod_domains, g->domains[i]) &&
                rhas(s, node_domains, g->domains[i]))
                domset_add(s, &set, g->domains[i]);
    }
    if (set.n == 0 && bootstrap) {
        /* The first pod of a self-selecting group picks a domain: one the node
         * allows if there is one, else any the pod allows. */
        kp_sym d = first_allowed(s, g, pod_domains, node_domains);
        if (d != KP_SYM_NONE)
            domset_add(s, &set, d);
        d = first_allowed(s, g, pod_domains, NULL);
        if (d != KP_SYM_NONE)
            domset_add(s, &set, d);
    }
    return domset_requirement(g->key, &set);
}

static kp_requirement next_anti(solver *s, const tgroup *g, const kp_requirement *pod_domains,
                                const kp_requirement *node_domains)
{
    domset set = {0};
    if (g->key == KP_SYM_HOSTNAME && r_count(node_domains) == 1) {
        kp_sym host = node_domains->values[0];
        return count_of(g, host) == 0 ? req_single(s->scratch, g->key, host) : req_none(g->key);
    }
    uint32_t n_empty = g->n_domains - g->n_nonempty;
    if (r_is_in(node_domains) && node_domains->n_values < n_empty) {
        for (uint32_t i = 0; i < node_domains->n_values; i++) {
            kp_sym d = node_domains->values[i];
            if (known(g, d) && count_of(g, d) == 0 && rhas(s, pod_domains, d))
                domset_add(s, &set, d);
        }
    } else {
        for (uint32_t i = 0; i < g->n_domains; i++)
            if (g->counts[i] == 0 && rhas(s, node_domains, g->domains[i]) &&
                rhas(s, pod_domains, g->domains[i]))
                domset_add(s, &set, g->domains[i]);
    }
    return domset_requirement(g->key, &set);
}

static const char *type_name(enum tg_type type)
{
    return type == TG_SPREAD ? "topology spread" : type == TG_AFFINITY ? "pod affinity" : "pod anti-affinity";
}

/* Put together in the arena, as long as its parts (at most eight domains). */
static const char *describe_failure(solver *s, const tgroup *g)
{
    char skew[32] = "";
    if (g->type == TG_SPREAD)
        snprintf(skew, sizeof(skew), " (maxSkew %d)", g->max_skew);
    const char *out = kp_arena_printf(s->arena, "%s on %s%s cannot be satisfied", type_name(g->type),
                                      kp_sym_str(s->symtab, g->key), skew);
    uint32_t shown = 0;
    for (uint32_t i = 0; i < g->n_domains && shown < 8; i++, shown++)
        out = kp_arena_printf(s->arena, "%s%s%s=%d", out, shown ? ", " : "; pods per domain: ",
                              kp_sym_str(s->symtab, g->domains[i]), g->counts[i]);
    if (g->n_domains > shown)
        out = kp_arena_printf(s->arena, "%s and %u more", out, g->n_domains - shown);
    return out;
}

static bool apply_group(solver *s, const tgroup *g, const podstate *st, const kp_requirements *node_reqs,
                        kp_requirements *domains, const char **why)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    const kp_requirement *pod_domains = kp_requirements_get(&st->strict, g->key);
    const kp_requirement *node_domains = kp_requirements_get(node_reqs, g->key);
    kp_requirement r;
    if (g->type == TG_SPREAD)
        r = next_spread(s, g, p, pod_domains, node_domains);
    else if (g->type == TG_AFFINITY)
        r = next_affinity(s, g, p, pod_domains, node_domains);
    else
        r = next_anti(s, g, pod_domains, node_domains);
    if (r.n_values == 0) {
        if (why)
            *why = describe_failure(s, g);
        return false;
    }
    kp_requirements_add(domains, s->symtab, s->scratch, &r);
    return true;
}

/* Karpenter's Topology.AddRequirements, returning only the domain
 * requirements (the caller checks them against `node_reqs` and adds them):
 * false when some group allows no domain. */
bool topo_add_requirements(solver *s, const podstate *st, const kp_requirements *node_reqs,
                           kp_requirements *domains, const char **why)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    kp_requirements_init(domains);
    for (uint32_t i = 0; i < st->n_groups; i++)
        if (!apply_group(s, &s->topo.groups[st->groups[i]], st, node_reqs, domains, why))
            return false;
    for (uint32_t i = 0; i < s->topo.n_inverse; i++) {
        const tgroup *g = &s->topo.inverse[i];
        if (selects(g, p) && !apply_group(s, g, st, node_reqs, domains, why))
            return false;
    }
    return true;
}

static void record_values(solver *s, tgroup *g, const kp_requirement *r)
{
    for (uint32_t i = 0; i < r->n_values; i++) {
        uint32_t idx = kp_symmap_get(&g->index, r->values[i]);
        if (idx == UINT32_MAX) {
            topo_register(s, g->key, r->values[i]);
            idx = kp_symmap_get(&g->index, r->values[i]);
        }
        if (idx == UINT32_MAX)
            continue;
        if (g->counts[idx]++ == 0)
            g->n_nonempty++;
        topo_count_changed(s, g, r->values[i]);
    }
}

/* Karpenter's Topology.Record: the pod now counts where it landed. */
void topo_record(solver *s, const podstate *st, const kp_taint *taints, uint32_t n_taints,
                 const kp_requirements *reqs, unsigned compat)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < s->topo.n_groups; i++) {
        tgroup *g = &s->topo.groups[i];
        if (!selects(g, p) || !topo_filter_matches(s, g, taints, n_taints, reqs, compat))
            continue;
        const kp_requirement *r = kp_requirements_get(reqs, g->key);
        if (!r)
            continue;
        if (g->type == TG_ANTI) {
            record_values(s, g, r); /* every domain it could land in is blocked */
        } else if (!r->complement && r->n_values == 1) {
            record_values(s, g, r);
        }
    }
    for (uint32_t i = 0; i < st->n_inverse; i++) {
        tgroup *g = &s->topo.inverse[st->inverse[i]];
        const kp_requirement *r = kp_requirements_get(reqs, g->key);
        if (r)
            record_values(s, g, r);
    }
}

static void register_in(solver *s, tgroup *groups, uint32_t n, kp_sym key, kp_sym domain)
{
    for (uint32_t i = 0; i < n; i++) {
        tgroup *g = &groups[i];
        if (g->key != key || kp_symmap_get(&g->index, domain) != UINT32_MAX)
            continue;
        if (g->n_domains == g->cap_domains) {
            uint32_t cap = g->cap_domains ? g->cap_domains * 2 : 8;
            g->domains = kp_arena_grow(s->arena, g->domains, g->n_domains, cap, sizeof(kp_sym));
            g->counts = kp_arena_grow(s->arena, g->counts, g->n_domains, cap, sizeof(int32_t));
            g->cap_domains = cap;
        }
        g->domains[g->n_domains] = domain;
        g->counts[g->n_domains] = 0;
        kp_symmap_put(&g->index, s->arena, domain, g->n_domains);
        g->n_domains++;
    }
}

void topo_register(solver *s, kp_sym key, kp_sym domain)
{
    register_in(s, s->topo.groups, s->topo.n_groups, key, domain);
    register_in(s, s->topo.inverse, s->topo.n_inverse, key, domain);
}

/* Would a group refuse this node outright? For every group whose key the
 * node has pinned to a single value, the verdict topo_add_requirements would
 * reach is computed without building requirements; the solver calls this
 * before trying a node. (The pod's own requirements can only narrow a pinned
 * key to nothing, which the compatibility check rejects anyway.) */
/* The verdict of next_spread / next_affinity / next_anti when the node allows
 * exactly one domain `d`, computed without building requirements. */
static bool allows_single(solver *s, const tgroup *g, const kp_spod *p, const kp_requirement *pd, kp_sym d,
                          int64_t min)
{
    bool host = g->key == KP_SYM_HOSTNAME;
    bool is_known = known(g, d);
    int64_t count = count_of(g, d);
    switch (g->type) {
    case TG_SPREAD: {
        int64_t self = selects(g, p) ? 1 : 0;
        if (host)
            return count + self <= g->max_skew;
        return is_known && count + self - min <= g->max_skew;
    }
    case TG_AFFINITY: {
        if (!rhas(s, pd, d))
            return false;
        if (count > 0)
            return true;
        bool bootstrap = selects(g, p) && (g->n_nonempty == 0 || !any_compatible_domain(s, g, pd));
        return bootstrap && (host || is_known);
    }
    case TG_ANTI:
        return count == 0 && (host || (is_known && rhas(s, pd, d)));
    }
    return false;
}

static bool pinned_rejects(solver *s, const tgroup *g, const podstate *st, const kp_requirements *node_reqs)
{
    const kp_requirement *nd = kp_requirements_get(node_reqs, g->key);
    if (!nd || nd->complement || nd->n_values != 1)
        return false;
    const kp_requirement *pd = kp_requirements_get(&st->strict, g->key);
    bool need_min = g->type == TG_SPREAD && g->key != KP_SYM_HOSTNAME;
    int64_t min = need_min ? min_count(s, g, pd) : 0;
    return !allows_single(s, g, &s->snap->pods[st->pod], pd, nd->values[0], min);
}

/* A hostname anti-affinity group that already has a pod on every hostname it
 * knows (which is every node and planned NodeClaim) leaves the pod no place
 * but a new NodeClaim. */
bool topo_blocks_every_node(solver *s, const podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < st->n_groups; i++) {
        const tgroup *g = &s->topo.groups[st->groups[i]];
        if (g->type == TG_ANTI && g->key == KP_SYM_HOSTNAME && g->n_domains > 0 &&
            g->n_nonempty == g->n_domains)
            return true;
    }
    for (uint32_t i = 0; i < s->topo.n_inverse; i++) {
        const tgroup *g = &s->topo.inverse[i];
        if (g->key == KP_SYM_HOSTNAME && g->n_domains > 0 && g->n_nonempty == g->n_domains &&
            selects(g, p))
            return true;
    }
    return false;
}

bool topo_quick_rejects(solver *s, const podstate *st, const kp_requirements *node_reqs)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < st->n_groups; i++)
        if (pinned_rejects(s, &s->topo.groups[st->groups[i]], st, node_reqs))
            return true;
    for (uint32_t i = 0; i < s->topo.n_inverse; i++) {
        const tgroup *g = &s->topo.inverse[i];
        if (selects(g, p) && pinned_rejects(s, g, st, node_reqs))
            return true;
    }
    return false;
}

/* ---------- what the place index asks ---------- */

bool topo_selects(const tgroup *g, const kp_spod *p)
{
    return selects(g, p);
}

/* What hostname group `g` needs of a place's count for the pod, as
 * allows_single decides it: at most N (N >= 0), more than zero
 * (TOPO_HOST_SOME), nothing (TOPO_HOST_NONE), or no condition the index can
 * use (TOPO_HOST_ANY). */
int32_t topo_host_need(solver *s, const podstate *st, const tgroup *g)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    switch (g->type) {
    case TG_SPREAD: {
        int64_t t = (int64_t)g->max_skew - (selects(g, p) ? 1 : 0);
        return t < 0 ? TOPO_HOST_NONE : (int32_t)t;
    }
    case TG_ANTI:
        return 0;
    case TG_AFFINITY:
        if (kp_requirements_get(&st->strict, g->key))
            return TOPO_HOST_ANY; /* the pod's own hostname terms: left to the full check */
        return selects(g, p) && g->n_nonempty == 0 ? TOPO_HOST_ANY : TOPO_HOST_SOME;
    }
    return TOPO_HOST_ANY;
}

static bool pod_group_at(solver *s, const podstate *st, uint32_t i, const tgroup **out)
{
    if (i < st->n_groups) {
        *out = &s->topo.groups[st->groups[i]];
        return true;
    }
    const tgroup *g = &s->topo.inverse[i - st->n_groups];
    *out = g;
    return selects(g, &s->snap->pods[st->pod]);
}

/* The keys of the groups that judge the pod (its own, and inverse groups that select it). */
uint32_t topo_pod_keys(solver *s, const podstate *st, kp_sym *keys, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < st->n_groups + s->topo.n_inverse && n < max; i++) {
        const tgroup *g;
        if (pod_group_at(s, st, i, &g))
            keys[n++] = g->key;
    }
    return n;
}

/* ok[i] &= every group on `key` would accept a place pinned to values[i]. */
void topo_pinned_verdicts(solver *s, const podstate *st, kp_sym key, const kp_sym *values, uint32_t n, bool *ok)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < st->n_groups + s->topo.n_inverse; i++) {
        const tgroup *g;
        if (!pod_group_at(s, st, i, &g) || g->key != key)
            continue;
        const kp_requirement *pd = kp_requirements_get(&st->strict, key);
        int64_t min = g->type == TG_SPREAD && key != KP_SYM_HOSTNAME ? min_count(s, g, pd) : 0;
        for (uint32_t v = 0; v < n; v++)
            ok[v] = ok[v] && allows_single(s, g, p, pd, values[v], min);
    }
}
