/*
 * Topology: spread constraints, pod affinity and pod anti-affinity, as
 * Karpenter tracks them. A topology group counts, per domain of one label key,
 * the pods its selector picks; pods that share a constraint share a group (a
 * Deployment of 100 pods with self anti-affinity is one group with 100
 * owners). Inverse groups track pods that carry required anti-affinity, so
 * that a pod they repel is kept out of their domains even though the pod has
 * no term of its own.
 *
 * Domains are seeded from what the NodePools and instance types can offer
 * (the domain universe), from existing nodes, and from hostnames as NodeClaims
 * are planned.
 */
#include "scheduling/solver_internal.h"
#include "base/buf.h"

#include <string.h>

/* ---------- domains of one group ---------- */

static uint32_t domain_index(const tgroup *g, kp_sym d)
{
    return kp_symmap_get(&g->index, d);
}

static uint32_t domain_add(solver *s, tgroup *g, kp_sym d)
{
    uint32_t i = domain_index(g, d);
    if (i != UINT32_MAX)
        return i;
    if (g->n_domains == g->cap_domains) {
        uint32_t cap = g->cap_domains ? g->cap_domains * 2 : 8;
        g->domains = kp_arena_grow(s->arena, g->domains, g->n_domains, cap, sizeof(kp_sym));
        g->counts = kp_arena_grow(s->arena, g->counts, g->n_domains, cap, sizeof(int32_t));
        g->cap_domains = cap;
    }
    i = g->n_domains++;
    g->domains[i] = d;
    g->counts[i] = 0;
    kp_symmap_put(&g->index, s->arena, d, i);
    return i;
}

static void domain_record(solver *s, tgroup *g, kp_sym d)
{
    uint32_t i = domain_add(s, g, d);
    if (g->counts[i]++ == 0)
        g->n_nonempty++;
    topo_count_changed(s, g, d);
}

/* ---------- identity ---------- */

/* Karpenter's group hash covers key, type, namespaces, maxSkew, node filter
 * and selector (not minDomains: the first constraint seen wins). Groups are
 * hashed and compared field by field; a table per group array finds equals. */
static void hash_selector(fnv *f, const kp_selector *sel)
{
    if (!sel || sel->nothing) {
        fnv_u64(f, UINT64_MAX);
        return;
    }
    for (uint32_t i = 0; i < sel->n_match; i++)
        fnv_u64(f, (uint64_t)sel->match[i].key << 32 | sel->match[i].value);
    for (uint32_t i = 0; i < sel->n_exprs; i++) {
        const kp_selector_expr *e = &sel->exprs[i];
        fnv_u64(f, (uint64_t)e->key << 32 | (uint32_t)e->op);
        fnv_bytes(f, e->values, e->n_values * sizeof(kp_sym));
    }
}

static void group_identify(tgroup *g)
{
    fnv f = FNV_INIT;
    fnv_u64(&f, (uint64_t)g->type << 48 | (uint64_t)g->key << 16);
    fnv_u64(&f, (uint64_t)(uint32_t)g->max_skew);
    fnv_bytes(&f, g->namespaces, g->n_namespaces * sizeof(kp_sym));
    hash_selector(&f, g->selector);
    if (g->has_filter) {
        fnv_u64(&f, (uint64_t)g->honor_affinity << 1 | g->honor_taints);
        for (uint32_t i = 0; i < g->n_filter_terms; i++) {
            fnv_u64(&f, i);
            fnv_requirements(&f, &g->filter_terms[i]);
        }
        for (uint32_t i = 0; i < g->n_filter_tols; i++) {
            const kp_toleration *t = &g->filter_tols[i];
            fnv_str(&f, t->key);
            fnv_str(&f, t->value);
            fnv_u64(&f, (uint64_t)t->op << 8 | (uint64_t)t->effect);
        }
    }
    g->hash = f.h;
}

static bool syms_equal(const kp_sym *a, uint32_t na, const kp_sym *b, uint32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof(kp_sym)) == 0);
}

static bool selectors_equal(const kp_selector *a, const kp_selector *b)
{
    bool a_none = !a || a->nothing, b_none = !b || b->nothing;
    if (a_none || b_none)
        return a_none == b_none;
    if (a->n_match != b->n_match || a->n_exprs != b->n_exprs ||
        (a->n_match && memcmp(a->match, b->match, a->n_match * sizeof(kp_symlabel)) != 0))
        return false;
    for (uint32_t i = 0; i < a->n_exprs; i++) {
        const kp_selector_expr *x = &a->exprs[i], *y = &b->exprs[i];
        if (x->key != y->key || x->op != y->op || !syms_equal(x->values, x->n_values, y->values, y->n_values))
            return false;
    }
    return true;
}

static bool strs_equal(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool filters_equal(const tgroup *a, const tgroup *b)
{
    if (a->has_filter != b->has_filter)
        return false;
    if (!a->has_filter)
        return true;
    if (a->honor_affinity != b->honor_affinity || a->honor_taints != b->honor_taints ||
        a->n_filter_terms != b->n_filter_terms || a->n_filter_tols != b->n_filter_tols)
        return false;
    for (uint32_t i = 0; i < a->n_filter_terms; i++)
        if (!reqs_equal(&a->filter_terms[i], &b->filter_terms[i]))
            return false;
    for (uint32_t i = 0; i < a->n_filter_tols; i++) {
        const kp_toleration *x = &a->filter_tols[i], *y = &b->filter_tols[i];
        if (x->op != y->op || x->effect != y->effect || !strs_equal(x->key, y->key) || !strs_equal(x->value, y->value))
            return false;
    }
    return true;
}

static bool groups_equal(const tgroup *a, const tgroup *b)
{
    return a->hash == b->hash && a->type == b->type && a->key == b->key && a->max_skew == b->max_skew &&
           syms_equal(a->namespaces, a->n_namespaces, b->namespaces, b->n_namespaces) &&
           selectors_equal(a->selector, b->selector) && filters_equal(a, b);
}

typedef struct group_probe {
    const tgroup *groups;
    const tgroup *g;
} group_probe;

static bool probe_equal(const void *ctx, uint32_t idx)
{
    const group_probe *p = ctx;
    return groups_equal(&p->groups[idx], p->g);
}

/* ---------- selection and node filters ---------- */

static bool in_namespaces(const tgroup *g, kp_sym ns)
{
    for (uint32_t i = 0; i < g->n_namespaces; i++)
        if (g->namespaces[i] == ns)
            return true;
    return false;
}

static bool group_selects(const tgroup *g, const kp_spod *p)
{
    return g->selector && !g->selector->nothing && in_namespaces(g, p->ns) &&
           kp_selector_matches(g->selector, &p->labels);
}

static bool taints_tolerated_by(const kp_taint *taints, uint32_t n, const kp_toleration *tols,
                                uint32_t n_tols)
{
    return kp_taints_tolerated(taints, n, tols, n_tols);
}

/* The spread constraint's node filter (Karpenter's TopologyNodeFilter.Matches):
 * which nodes take part in counting. Always true for (anti-)affinity groups. */
bool topo_filter_matches(solver *s, const tgroup *g, const kp_taint *taints, uint32_t n_taints,
                         const kp_requirements *reqs, unsigned compat)
{
    if (!g->has_filter)
        return true;
    if (g->honor_affinity && g->n_filter_terms > 0) {
        bool any = false;
        for (uint32_t i = 0; i < g->n_filter_terms && !any; i++)
            any = kp_requirements_compatible(s->symtab, reqs, &g->filter_terms[i], compat, NULL);
        if (!any)
            return false;
    }
    if (g->honor_taints && !taints_tolerated_by(taints, n_taints, g->filter_tols, g->n_filter_tols))
        return false;
    return true;
}

/* ---------- the domain universe ---------- */

static domain_group *dgroup_get(solver *s, kp_sym key, bool create)
{
    topology *t = &s->topo;
    for (uint32_t i = 0; i < t->n_dgroups; i++)
        if (t->dgroups[i].key == key)
            return &t->dgroups[i];
    if (!create)
        return NULL;
    if (t->n_dgroups == t->cap_dgroups) {
        uint32_t cap = t->cap_dgroups ? t->cap_dgroups * 2 : 16;
        t->dgroups = kp_arena_grow(s->arena, t->dgroups, t->n_dgroups, cap, sizeof(domain_group));
        t->cap_dgroups = cap;
    }
    domain_group *dg = &t->dgroups[t->n_dgroups++];
    memset(dg, 0, sizeof(*dg));
    dg->key = key;
    return dg;
}

static void dgroup_insert(solver *s, domain_group *dg, kp_sym domain, int32_t tmpl, bool tainted)
{
    domain_entry *e = NULL;
    for (uint32_t i = 0; i < dg->n && !e; i++)
        if (dg->entries[i].domain == domain)
            e = &dg->entries[i];
    if (!e) {
        if (dg->n == dg->cap) {
            uint32_t cap = dg->cap ? dg->cap * 2 : 8;
            dg->entries = kp_arena_grow(s->arena, dg->entries, dg->n, cap, sizeof(domain_entry));
            dg->cap = cap;
        }
        e = &dg->entries[dg->n++];
        memset(e, 0, sizeof(*e));
        e->domain = domain;
    }
    if (!tainted) {
        e->untainted = true;
        return;
    }
    for (uint32_t i = 0; i < e->n_templates; i++)
        if (e->templates[i] == (uint32_t)tmpl)
            return;
    if (e->n_templates == e->cap_templates) {
        uint32_t cap = e->cap_templates ? e->cap_templates * 2 : 4;
        e->templates = kp_arena_grow(s->arena, e->templates, e->n_templates, cap, sizeof(uint32_t));
        e->cap_templates = cap;
    }
    e->templates[e->n_templates++] = (uint32_t)tmpl;
}

static void universe_add(solver *s, const kp_requirements *reqs, uint32_t tmpl, bool in_only)
{
    bool tainted = s->snap->templates[tmpl].n_taints > 0;
    for (uint32_t k = 0; k < reqs->count; k++) {
        const kp_requirement *r = &reqs->items[k];
        if (in_only && (r->complement || r->n_values == 0))
            continue;
        domain_group *dg = dgroup_get(s, r->key, true);
        for (uint32_t v = 0; v < r->n_values; v++)
            dgroup_insert(s, dg, r->values[v], (int32_t)tmpl, tainted);
    }
}

/* Karpenter's buildDomainGroups: the NodePool's requirements and labels
 * intersected with each of its instance types, plus the NodePool's own In values. */
void topo_build_universe(solver *s)
{
    kp_snapshot *snap = s->snap;
    for (uint32_t t = 0; t < snap->n_templates; t++) {
        const kp_template *tp = &snap->templates[t];
        if (tp->is_static) /* Karpenter schedules without static NodePools */
            continue;
        for (uint32_t i = 0; i < tp->n_its; i++) {
            kp_arena_mark m = kp_arena_mark_get(s->scratch);
            kp_requirements combined;
            kp_requirements_copy(&combined, s->scratch, &tp->spec_reqs);
            kp_requirements_add_all(&combined, s->symtab, s->scratch, &snap->its[tp->its[i]].reqs);
            universe_add(s, &combined, t, false);
            kp_arena_rewind(s->scratch, m);
        }
        universe_add(s, &tp->spec_reqs, t, true);
    }
}

static void seed_domains(solver *s, tgroup *g, const kp_spod *owner)
{
    domain_group *dg = dgroup_get(s, g->key, false);
    bool honor = g->type != TG_SPREAD || g->honor_taints;
    if (!dg)
        return;
    for (uint32_t i = 0; i < dg->n; i++) {
        const domain_entry *e = &dg->entries[i];
        bool ok = !honor || e->untainted;
        for (uint32_t j = 0; j < e->n_templates && !ok; j++) {
            const kp_template *tp = &s->snap->templates[e->templates[j]];
            ok = taints_tolerated_by(tp->taints, tp->n_taints, owner->tolerations, owner->n_tolerations);
        }
        if (ok)
            domain_add(s, g, e->domain);
    }
}

/* ---------- counting what already runs ---------- */

static bool ignored_for_topology(const solver *s, uint32_t pod)
{
    const kp_spod *p = &s->snap->pods[pod];
    if (p->node < 0 || p->terminal || p->terminating)
        return true;
    if (s->ps_of_pod[pod] >= 0)
        return true; /* being placed now: counted where it lands */
    return s->opts->exclude_nodes && s->opts->exclude_nodes[p->node];
}

static kp_sym node_domain(const kp_snode *n, kp_sym key)
{
    kp_sym d = kp_symlabels_get(&n->labels, key);
    if (d == KP_SYM_NONE && key == KP_SYM_HOSTNAME)
        d = n->hostname;
    return d;
}

static void count_domains(solver *s, tgroup *g)
{
    kp_snapshot *snap = s->snap;
    for (uint32_t i = 0; i < s->n_enodes; i++) {
        const enode *e = &s->enodes[i];
        const kp_snode *n = &snap->nodes[e->node];
        if (n->in_flight || !topo_filter_matches(s, g, n->taints, n->n_taints, &e->reqs, 0))
            continue;
        kp_sym d = kp_symlabels_get(&n->labels, g->key);
        if (d != KP_SYM_NONE)
            domain_add(s, g, d);
    }
    for (uint32_t i = 0; i < s->n_enodes; i++) {
        const enode *e = &s->enodes[i];
        const kp_snode *n = &snap->nodes[e->node];
        kp_sym d = node_domain(n, g->key);
        if (d == KP_SYM_NONE || !topo_filter_matches(s, g, n->taints, n->n_taints, &e->reqs, 0))
            continue;
        for (uint32_t j = 0; j < e->n_bound; j++)
            if (!ignored_for_topology(s, e->bound[j]) && group_selects(g, &snap->pods[e->bound[j]]))
                domain_record(s, g, d);
    }
}

/* ---------- building groups ---------- */

/* Every hostname group knows every planned NodeClaim's hostname, even a group
 * created after the claim (Karpenter registers hostnames only as pods land;
 * an unknown hostname counts as empty there, exactly as a known empty one
 * does here). This lets the solver tell in O(1) when a hostname
 * anti-affinity group blocks every node. */
static void seed_claim_hosts(solver *s, tgroup *g)
{
    for (uint32_t i = 0; i < s->n_claims; i++)
        domain_add(s, g, s->claims[i].hostname);
    for (uint32_t i = 0; i < s->n_enodes; i++)
        domain_add(s, g, s->snap->nodes[s->enodes[i].node].hostname);
}

static uint32_t add_group(solver *s, tgroup *g, bool inverse, const kp_spod *owner, bool *created)
{
    topology *t = &s->topo;
    tgroup **arr = inverse ? &t->inverse : &t->groups;
    uint32_t *n = inverse ? &t->n_inverse : &t->n_groups;
    uint32_t *cap = inverse ? &t->cap_inverse : &t->cap_groups;
    idx_table *table = &t->tables[inverse];
    group_identify(g);
    group_probe probe = {*arr, g};
    uint32_t found = idx_table_find(table, g->hash, probe_equal, &probe);
    *created = found == UINT32_MAX;
    if (!*created)
        return found;
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 16;
        *arr = kp_arena_grow(s->arena, *arr, *n, c, sizeof(tgroup));
        *cap = c;
    }
    (*arr)[*n] = *g;
    idx_table_put(s->arena, table, g->hash, *n);
    seed_domains(s, &(*arr)[*n], owner);
    if (g->key == KP_SYM_HOSTNAME)
        seed_claim_hosts(s, &(*arr)[*n]);
    return (*n)++;
}

static void own(solver *s, uint32_t **list, uint32_t *n, uint32_t *cap, uint32_t group)
{
    for (uint32_t i = 0; i < *n; i++)
        if ((*list)[i] == group)
            return;
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 4;
        *list = kp_arena_grow(s->arena, *list, *n, c, sizeof(uint32_t));
        *cap = c;
    }
    (*list)[(*n)++] = group;
}

static tgroup term_group(enum tg_type type, const kp_pod_term *term)
{
    tgroup g;
    memset(&g, 0, sizeof(g));
    g.type = type;
    g.key = term->key;
    g.max_skew = INT32_MAX;
    g.selector = &term->selector;
    g.namespaces = term->namespaces;
    g.n_namespaces = term->n_namespaces;
    return g;
}

/* The spread filter follows the pod's current nodeSelector and required terms. */
static void spread_filter(solver *s, const podstate *st, tgroup *g)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    g->has_filter = true;
    g->filter_tols = p->tolerations;
    g->n_filter_tols = p->n_tolerations;
    uint32_t n_terms = p->n_required > st->req_term ? p->n_required - st->req_term : 0;
    if (n_terms == 0) {
        g->filter_terms = &p->node_selector;
        g->n_filter_terms = 1;
        return;
    }
    kp_requirements *terms = KP_ARENA_NEW(s->arena, kp_requirements, n_terms);
    for (uint32_t i = 0; i < n_terms; i++) {
        kp_requirements_copy(&terms[i], s->arena, &p->node_selector);
        kp_requirements_add_all(&terms[i], s->symtab, s->arena, &p->required[st->req_term + i]);
    }
    g->filter_terms = terms;
    g->n_filter_terms = n_terms;
}

static void update_spreads(solver *s, podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < p->n_spreads; i++) {
        const kp_spread *sp = &p->spreads[i];
        if (!ps_spread_active(st, i) || (s->opts->ignore_preferences && !sp->do_not_schedule))
            continue;
        tgroup g;
        memset(&g, 0, sizeof(g));
        g.type = TG_SPREAD;
        g.key = sp->key;
        g.max_skew = sp->max_skew;
        g.min_domains = sp->min_domains;
        g.selector = &sp->selector;
        g.namespaces = &p->ns;
        g.n_namespaces = 1;
        g.honor_affinity = sp->honor_affinity;
        g.honor_taints = sp->honor_taints;
        spread_filter(s, st, &g);
        bool created;
        uint32_t idx = add_group(s, &g, false, p, &created);
        if (created)
            count_domains(s, &s->topo.groups[idx]);
        own(s, &st->groups, &st->n_groups, &st->cap_groups, idx);
    }
}

static void update_terms(solver *s, podstate *st, enum tg_type type, const kp_pod_term *terms,
                         uint32_t n)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < n; i++) {
        tgroup g = term_group(type, &terms[i]);
        bool created;
        uint32_t idx = add_group(s, &g, false, p, &created);
        if (created)
            count_domains(s, &s->topo.groups[idx]);
        own(s, &st->groups, &st->n_groups, &st->cap_groups, idx);
    }
}

static void update_inverse(solver *s, podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < p->n_anti; i++) {
        tgroup g = term_group(TG_ANTI, &p->anti[i]);
        bool created;
        uint32_t idx = add_group(s, &g, true, p, &created);
        own(s, &st->inverse, &st->n_inverse, &st->cap_inverse, idx);
    }
}

/* Karpenter's Topology.Update: re-derive the groups a pod owns from its
 * current (possibly relaxed) constraints. */
void topo_update(solver *s, podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    bool respect = !s->opts->ignore_preferences;
    st->n_groups = 0;
    if (p->n_anti > 0 || (respect && p->n_anti_pref > 0))
        update_inverse(s, st);
    update_spreads(s, st);
    update_terms(s, st, TG_AFFINITY, p->affinity, p->n_affinity);
    if (respect)
        update_terms(s, st, TG_AFFINITY, p->affinity_pref + st->pref_aff_removed,
                     p->n_affinity_pref - st->pref_aff_removed);
    update_terms(s, st, TG_ANTI, p->anti, p->n_anti);
    if (respect)
        update_terms(s, st, TG_ANTI, p->anti_pref + st->pref_anti_removed,
                     p->n_anti_pref - st->pref_anti_removed);
}

/* Existing pods with required anti-affinity repel pods from their domains. */
static void inverse_from_existing(solver *s)
{
    kp_snapshot *snap = s->snap;
    const kp_solve_base *b = solve_base(s);
    uint32_t count = b ? b->n_anti : snap->n_pods;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t i = b ? b->anti[k] : k;
        const kp_spod *p = &snap->pods[i];
        if (p->n_anti == 0 || ignored_for_topology(s, i))
            continue;
        const kp_snode *n = &snap->nodes[p->node];
        for (uint32_t j = 0; j < p->n_anti; j++) {
            tgroup g = term_group(TG_ANTI, &p->anti[j]);
            bool created;
            uint32_t idx = add_group(s, &g, true, p, &created);
            kp_sym d = kp_symlabels_get(&n->labels, g.key);
            if (d != KP_SYM_NONE)
                domain_record(s, &s->topo.inverse[idx], d);
        }
    }
}

int topo_build(solver *s)
{
    inverse_from_existing(s);
    for (uint32_t i = 0; i < s->n_ps; i++)
        topo_update(s, &s->ps[i]);
    return 0;
}
