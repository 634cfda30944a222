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
}

/* ---------- identity ---------- */

static void canon_selector(kp_buf *b, const kp_selector *sel)
{
    if (!sel || sel->nothing) {
        kp_buf_puts(b, "|nothing");
        return;
    }
    for (uint32_t i = 0; i < sel->n_match; i++)
        kp_buf_printf(b, "|m%u=%u", sel->match[i].key, sel->match[i].value);
    for (uint32_t i = 0; i < sel->n_exprs; i++) {
        const kp_selector_expr *e = &sel->exprs[i];
        kp_buf_printf(b, "|e%u:%d", e->key, (int)e->op);
        for (uint32_t j = 0; j < e->n_values; j++)
            kp_buf_printf(b, ",%u", e->values[j]);
    }
}

static void canon_requirements(kp_buf *b, const kp_requirements *r)
{
    for (uint32_t i = 0; i < r->count; i++) {
        const kp_requirement *q = &r->items[i];
        kp_buf_printf(b, "{%u:%d:%d%lld:%d%lld", q->key, q->complement, q->has_gte,
                      (long long)q->gte, q->has_lte, (long long)q->lte);
        for (uint32_t j = 0; j < q->n_values; j++)
            kp_buf_printf(b, ",%u", q->values[j]);
        kp_buf_putc(b, '}');
    }
}

static void canon_filter(kp_buf *b, const tgroup *g)
{
    if (!g->has_filter)
        return;
    kp_buf_printf(b, "|f%d%d", g->honor_affinity, g->honor_taints);
    for (uint32_t i = 0; i < g->n_filter_terms; i++) {
        kp_buf_putc(b, '[');
        canon_requirements(b, &g->filter_terms[i]);
        kp_buf_putc(b, ']');
    }
    for (uint32_t i = 0; i < g->n_filter_tols; i++) {
        const kp_toleration *t = &g->filter_tols[i];
        kp_buf_printf(b, "|t%s\x1f%s\x1f%d\x1f%d", t->key, t->value, (int)t->op, (int)t->effect);
    }
}

/* Karpenter's group hash covers key, type, namespaces, maxSkew, node filter
 * and selector (not minDomains: the first constraint seen wins). */
static void group_identify(solver *s, tgroup *g)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    kp_buf_printf(&b, "%d|%u|%d", (int)g->type, g->key, g->max_skew);
    for (uint32_t i = 0; i < g->n_namespaces; i++)
        kp_buf_printf(&b, ",%u", g->namespaces[i]);
    canon_selector(&b, g->selector);
    canon_filter(&b, g);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < b.len; i++)
        h = (h ^ (unsigned char)b.data[i]) * 1099511628211ull;
    g->hash = h;
    g->canon = kp_arena_strdup(s->arena, kp_buf_cstr(&b));
    kp_buf_free(&b);
}

static int32_t group_find(const tgroup *groups, uint32_t n, const tgroup *g)
{
    for (uint32_t i = 0; i < n; i++)
        if (groups[i].hash == g->hash && strcmp(groups[i].canon, g->canon) == 0)
            return (int32_t)i;
    return -1;
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
    group_identify(s, g);
    int32_t found = group_find(*arr, *n, g);
    *created = found < 0;
    if (found >= 0)
        return (uint32_t)found;
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 16;
        *arr = kp_arena_grow(s->arena, *arr, *n, c, sizeof(tgroup));
        *cap = c;
    }
    (*arr)[*n] = *g;
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
    for (uint32_t i = 0; i < snap->n_pods; i++) {
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
