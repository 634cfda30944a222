/*
 * Snapshot building, part two: pods (and DaemonSet pod templates) become the
 * solver's pods: requirements from nodeSelector and node affinity, compiled
 * label selectors for spread constraints and pod (anti-)affinity (with
 * matchLabelKeys folded in and namespaces resolved), host ports, and the
 * topology alternatives their volumes impose.
 */
#include "scheduling/snapshot_internal.h"
#include "scheduling/symmap.h"
#include "scheduling/volume_limits.h"
#include "api/pod_rules.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct build_ctx {
    kp_snapshot *snap;
    const kp_cluster *c;
    kp_symmap node_by_name; /* node name -> snapshot node index */
    kp_symmap pvc_by_key;   /* "ns/name" -> cluster pvc index */
    kp_symmap pv_by_name;
    kp_symmap sc_by_name;
    kp_sym *all_namespaces;
    uint32_t n_namespaces;
} build_ctx;

static kp_sym intern(build_ctx *b, const char *s)
{
    return kp_sym_intern(b->snap->symtab, s);
}

static int cmp_sym(const void *a, const void *b)
{
    kp_sym x = *(const kp_sym *)a, y = *(const kp_sym *)b;
    return x < y ? -1 : x > y;
}

/* Sorted, de-duplicated symbols for strings. */
static const kp_sym *sym_set(build_ctx *b, const char *const *values, size_t n, uint32_t *out_n)
{
    kp_sym *v = KP_ARENA_NEW(b->snap->arena, kp_sym, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        v[i] = intern(b, values[i]);
    qsort(v, n, sizeof(kp_sym), cmp_sym);
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    *out_n = k;
    return v;
}

/* ---------- label selectors ---------- */

typedef struct extra_expr {
    const char *key;
    enum kp_selector_op op;
    const char *value;
} extra_expr;

static void compile_selector(build_ctx *b, const kp_label_selector *ls, const extra_expr *extra, size_t n_extra,
                             kp_selector *out)
{
    memset(out, 0, sizeof(*out));
    if (!ls->present) {
        out->nothing = true;
        return;
    }
    const char **keys = KP_ARENA_NEW(b->snap->arena, const char *, ls->match_labels.count + 1);
    const char **vals = KP_ARENA_NEW(b->snap->arena, const char *, ls->match_labels.count + 1);
    for (size_t i = 0; i < ls->match_labels.count; i++) {
        keys[i] = ls->match_labels.items[i].key;
        vals[i] = ls->match_labels.items[i].value;
    }
    kp_symlabels ml = kp_snapshot_labels(b->snap, keys, vals, (uint32_t)ls->match_labels.count);
    out->match = ml.items;
    out->n_match = ml.count;
    size_t n = ls->n_match_expressions + n_extra;
    kp_selector_expr *e = KP_ARENA_NEW(b->snap->arena, kp_selector_expr, n ? n : 1);
    for (size_t i = 0; i < ls->n_match_expressions; i++) {
        const kp_selector_req *r = &ls->match_expressions[i];
        e[i].key = intern(b, r->key);
        e[i].op = r->op;
        e[i].values = sym_set(b, (const char *const *)r->values, r->n_values, &e[i].n_values);
    }
    for (size_t i = 0; i < n_extra; i++) {
        kp_selector_expr *x = &e[ls->n_match_expressions + i];
        x->key = intern(b, extra[i].key);
        x->op = extra[i].op;
        x->values = sym_set(b, &extra[i].value, 1, &x->n_values);
    }
    out->exprs = e;
    out->n_exprs = (uint32_t)n;
}

static bool labels_match(const kp_label_selector *ls, const kp_labels *labels)
{
    for (size_t i = 0; i < ls->match_labels.count; i++) {
        const char *v = kp_labels_get(labels, ls->match_labels.items[i].key);
        if (!v || strcmp(v, ls->match_labels.items[i].value) != 0)
            return false;
    }
    for (size_t i = 0; i < ls->n_match_expressions; i++) {
        const kp_selector_req *r = &ls->match_expressions[i];
        const char *v = kp_labels_get(labels, r->key);
        bool in = false;
        for (size_t j = 0; v && j < r->n_values && !in; j++)
            in = strcmp(v, r->values[j]) == 0;
        bool ok = r->op == KP_OP_IN ? in : r->op == KP_OP_NOT_IN ? !in : r->op == KP_OP_EXISTS ? v != NULL
                                                                                              : v == NULL;
        if (!ok)
            return false;
    }
    return true;
}

/* ---------- namespaces ---------- */

static void collect_namespaces(build_ctx *b)
{
    size_t cap = b->c->n_namespaces + b->c->n_pods + 1;
    const char **names = KP_ARENA_NEW(b->snap->arena, const char *, cap);
    size_t n = 0;
    for (size_t i = 0; i < b->c->n_namespaces; i++)
        names[n++] = b->c->namespaces[i].name;
    for (size_t i = 0; i < b->c->n_pods; i++)
        names[n++] = b->c->pods[i]->meta.namespace;
    b->all_namespaces = (kp_sym *)sym_set(b, names, n, &b->n_namespaces);
}

/* Whether namespace `ns` matches a namespaceSelector. Every namespace
 * carries kubernetes.io/metadata.name (the API server sets it since 1.21),
 * also the ones known only from their pods. Labels stay sorted by key. */
static bool namespace_selected(build_ctx *b, kp_sym ns, const kp_label_selector *sel)
{
    static const char *const name_key = "kubernetes.io/metadata.name";
    const kp_labels *own = NULL;
    for (size_t i = 0; i < b->c->n_namespaces && !own; i++)
        if (intern(b, b->c->namespaces[i].name) == ns)
            own = &b->c->namespaces[i].labels;
    if (own && kp_labels_get(own, name_key))
        return labels_match(sel, own);
    size_t n = own ? own->count : 0, k = 0;
    kp_label *items = KP_ARENA_NEW(b->snap->arena, kp_label, n + 1);
    bool placed = false;
    for (size_t i = 0; i < n; i++) {
        if (!placed && strcmp(own->items[i].key, name_key) > 0)
            items[k++] = (kp_label){name_key, kp_sym_str(b->snap->symtab, ns)}, placed = true;
        items[k++] = own->items[i];
    }
    if (!placed)
        items[k++] = (kp_label){name_key, kp_sym_str(b->snap->symtab, ns)};
    kp_labels all = {items, k};
    return labels_match(sel, &all);
}

/* Kubernetes: neither field -> the pod's namespace; a namespaceSelector adds
 * the namespaces it selects (an empty one selects them all). */
static void term_namespaces(build_ctx *b, const kp_pod_affinity_term *t, kp_sym own, kp_pod_term *out)
{
    if (t->namespaces.count == 0 && !t->namespace_selector.present) {
        kp_sym *v = KP_ARENA_NEW(b->snap->arena, kp_sym, 1);
        *v = own;
        out->namespaces = v;
        out->n_namespaces = 1;
        return;
    }
    size_t cap = t->namespaces.count + b->n_namespaces;
    const char **names = KP_ARENA_NEW(b->snap->arena, const char *, cap ? cap : 1);
    size_t n = 0;
    for (size_t i = 0; i < t->namespaces.count; i++)
        names[n++] = t->namespaces.items[i];
    for (uint32_t i = 0; t->namespace_selector.present && i < b->n_namespaces; i++) {
        if (namespace_selected(b, b->all_namespaces[i], &t->namespace_selector))
            names[n++] = kp_sym_str(b->snap->symtab, b->all_namespaces[i]);
    }
    out->namespaces = sym_set(b, names, n, &out->n_namespaces);
}

/* ---------- spreads and affinity terms ---------- */

static const kp_spread *compile_spreads(build_ctx *b, const kp_pod *p, uint32_t *out_n)
{
    kp_spread *v = KP_ARENA_NEW(b->snap->arena, kp_spread, p->n_topology_spread ? p->n_topology_spread : 1);
    for (size_t i = 0; i < p->n_topology_spread; i++) {
        const kp_topology_spread *t = &p->topology_spread[i];
        extra_expr *extra = KP_ARENA_NEW(b->snap->arena, extra_expr, t->match_label_keys.count + 1);
        size_t n_extra = 0;
        for (size_t k = 0; k < t->match_label_keys.count; k++) {
            const char *value = kp_labels_get(&p->meta.labels, t->match_label_keys.items[k]);
            if (value)
                extra[n_extra++] = (extra_expr){t->match_label_keys.items[k], KP_OP_IN, value};
        }
        v[i].key = intern(b, t->topology_key);
        v[i].max_skew = t->max_skew;
        v[i].min_domains = t->min_domains;
        v[i].do_not_schedule = t->when_unsatisfiable == KP_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE;
        v[i].honor_affinity = t->node_affinity_policy != KP_POLICY_IGNORE;
        v[i].honor_taints = t->node_taints_policy == KP_POLICY_HONOR;
        compile_selector(b, &t->label_selector, extra, n_extra, &v[i].selector);
    }
    *out_n = (uint32_t)p->n_topology_spread;
    return v;
}

static void compile_term(build_ctx *b, const kp_pod *p, kp_sym ns, const kp_pod_affinity_term *t,
                         int32_t weight, kp_pod_term *out)
{
    size_t n = t->match_label_keys.count + t->mismatch_label_keys.count;
    extra_expr *extra = KP_ARENA_NEW(b->snap->arena, extra_expr, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < t->match_label_keys.count; i++) {
        const char *value = kp_labels_get(&p->meta.labels, t->match_label_keys.items[i]);
        if (value)
            extra[k++] = (extra_expr){t->match_label_keys.items[i], KP_OP_IN, value};
    }
    for (size_t i = 0; i < t->mismatch_label_keys.count; i++) {
        const char *value = kp_labels_get(&p->meta.labels, t->mismatch_label_keys.items[i]);
        if (value)
            extra[k++] = (extra_expr){t->mismatch_label_keys.items[i], KP_OP_NOT_IN, value};
    }
    out->key = intern(b, t->topology_key);
    out->weight = weight;
    compile_selector(b, &t->label_selector, extra, k, &out->selector);
    term_namespaces(b, t, ns, out);
}

static const kp_pod_term *required_terms(build_ctx *b, const kp_pod *p, kp_sym ns, const kp_pod_affinity *a,
                                         uint32_t *n)
{
    kp_pod_term *v = KP_ARENA_NEW(b->snap->arena, kp_pod_term, a->n_required ? a->n_required : 1);
    for (size_t i = 0; i < a->n_required; i++)
        compile_term(b, p, ns, &a->required[i], 0, &v[i]);
    *n = (uint32_t)a->n_required;
    return v;
}

/* Preferred terms, heaviest first (stable): the order relaxation removes them in. */
static const kp_pod_term *preferred_terms(build_ctx *b, const kp_pod *p, kp_sym ns, const kp_pod_affinity *a,
                                          uint32_t *n)
{
    kp_pod_term *v = KP_ARENA_NEW(b->snap->arena, kp_pod_term, a->n_preferred ? a->n_preferred : 1);
    for (size_t i = 0; i < a->n_preferred; i++) {
        kp_pod_term t;
        compile_term(b, p, ns, &a->preferred[i].term, a->preferred[i].weight, &t);
        size_t j = i;
        while (j > 0 && v[j - 1].weight < t.weight) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = t;
    }
    *n = (uint32_t)a->n_preferred;
    return v;
}

/* ---------- node affinity ---------- */

static int node_affinity(build_ctx *b, const kp_pod *p, kp_spod *sp)
{
    kp_snapshot *snap = b->snap;
    const kp_node_affinity *na = &p->affinity.node;
    kp_requirements_init(&sp->node_selector);
    kp_snapshot_add_label_reqs(snap, &sp->node_selector, &p->node_selector);
    kp_requirements *req = KP_ARENA_NEW(snap->arena, kp_requirements, na->n_required ? na->n_required : 1);
    for (size_t i = 0; i < na->n_required; i++) {
        kp_requirements_init(&req[i]);
        int err = kp_snapshot_add_selector_reqs(snap, &req[i], na->required[i].match_expressions,
                                                na->required[i].n_match_expressions);
        if (err < 0)
            return err;
    }
    sp->required = req;
    sp->n_required = (uint32_t)na->n_required;
    if (na->has_required && na->n_required == 0)
        sp->unschedulable = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution has no "
                           "terms, so no node can match";
    kp_requirements *pref = KP_ARENA_NEW(snap->arena, kp_requirements, na->n_preferred ? na->n_preferred : 1);
    int32_t *weights = KP_ARENA_NEW(snap->arena, int32_t, na->n_preferred ? na->n_preferred : 1);
    for (size_t i = 0; i < na->n_preferred; i++) {
        kp_requirements r;
        kp_requirements_init(&r);
        int err = kp_snapshot_add_selector_reqs(snap, &r, na->preferred[i].preference.match_expressions,
                                                na->preferred[i].preference.n_match_expressions);
        if (err < 0)
            return err;
        size_t j = i;
        while (j > 0 && weights[j - 1] < na->preferred[i].weight) {
            pref[j] = pref[j - 1];
            weights[j] = weights[j - 1];
            j--;
        }
        pref[j] = r;
        weights[j] = na->preferred[i].weight;
    }
    sp->preferred = pref;
    sp->preferred_weights = weights;
    sp->n_preferred = (uint32_t)na->n_preferred;
    return 0;
}

/* ---------- volumes ---------- */

static const kp_pvc *find_pvc(build_ctx *b, const char *ns, const char *name)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    kp_sym s = kp_sym_lookup(b->snap->symtab, key);
    uint32_t i = s ? kp_symmap_get(&b->pvc_by_key, s) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : b->c->pvcs[i];
}

static const void *find_named(build_ctx *b, const kp_symmap *map, const void *const *items, const char *name)
{
    kp_sym s = kp_sym_lookup(b->snap->symtab, name);
    uint32_t i = s ? kp_symmap_get(map, s) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : items[i];
}

static bool is_hostname(const kp_selector_req *r)
{
    return strcmp(r->key, KP_LABEL_HOSTNAME) == 0;
}

/* Alternatives from a list of node-selector terms (OR): one requirement set
 * each. With `drop_hostname` (local and hostPath volumes, whose hostname is
 * a node that may be gone), hostname requirements are left out, as Karpenter
 * does; a term that had only those becomes unconstrained. */
static int term_alternatives(build_ctx *b, const kp_node_selector_term *terms, size_t n, bool drop_hostname,
                             kp_requirements **out, uint32_t *n_out)
{
    kp_requirements *alts = KP_ARENA_NEW(b->snap->arena, kp_requirements, n ? n : 1);
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const kp_selector_req *exprs = terms[i].match_expressions;
        size_t n_exprs = terms[i].n_match_expressions;
        if (n_exprs == 0)
            continue;
        kp_requirements_init(&alts[k]);
        for (size_t j = 0; j < n_exprs; j++) {
            if (drop_hostname && is_hostname(&exprs[j]))
                continue;
            int err = kp_snapshot_add_selector_reqs(b->snap, &alts[k], &exprs[j], 1);
            if (err < 0)
                return err;
        }
        k++;
    }
    *out = alts;
    *n_out = k;
    return 0;
}

/* A claim bound to a volume: the volume's topology, unless the binding
 * cannot be used (Karpenter's ValidatePersistentVolumeClaims). */
static int bound_volume(build_ctx *b, const kp_pvc *pvc, kp_requirements **out, uint32_t *n_out, const char **why)
{
    kp_arena *a = b->snap->arena;
    const kp_pv *pv = find_named(b, &b->pv_by_name, (const void *const *)b->c->pvs, pvc->volume_name);
    if (!pv) {
        *why = kp_arena_printf(a, "persistentvolume \"%s\" of claim \"%s\" not found", pvc->volume_name,
                               pvc->meta.name);
        return 0;
    }
    if (pv->meta.deletion_timestamp.set) {
        *why = kp_arena_printf(a, "persistentvolume \"%s\" of claim \"%s\" is being deleted", pv->meta.name,
                               pvc->meta.name);
        return 0;
    }
    if (!kp_labels_get(&pvc->meta.annotations, "pv.kubernetes.io/bind-completed")) {
        *why = kp_arena_printf(a,
                               "persistentvolumeclaim \"%s\" names volume \"%s\" but is considered unbound: it lacks "
                               "the annotation pv.kubernetes.io/bind-completed",
                               pvc->meta.name, pv->meta.name);
        return 0;
    }
    if (!pv->has_node_affinity)
        return 0;
    return term_alternatives(b, pv->node_affinity, pv->n_node_affinity, pv->local_or_host_path, out, n_out);
}

/* The topology one volume imposes; a non-NULL *why makes the pod unschedulable. */
static int volume_alternatives(build_ctx *b, const kp_pod *p, const kp_volume *v, kp_requirements **out,
                               uint32_t *n_out, const char **why)
{
    kp_arena *a = b->snap->arena;
    *n_out = 0;
    const kp_pvc *pvc = find_pvc(b, p->meta.namespace, v->claim_name);
    const char *class_name = pvc ? pvc->storage_class_name : v->storage_class_name;
    bool has_class = pvc ? pvc->has_storage_class_name : v->has_storage_class_name;
    if (!pvc && v->kind == KP_VOLUME_PVC) {
        *why = kp_arena_printf(a, "persistentvolumeclaim \"%s\" not found", v->claim_name);
        return 0;
    }
    if (pvc && pvc->meta.deletion_timestamp.set) {
        *why = kp_arena_printf(a, "persistentvolumeclaim \"%s\" is being deleted", pvc->meta.name);
        return 0;
    }
    if (pvc && pvc->phase == KP_PVC_PHASE_LOST) {
        *why = kp_arena_printf(a, "persistentvolumeclaim \"%s\" is bound to a persistentvolume that does not exist",
                               pvc->meta.name);
        return 0;
    }
    if (pvc && *pvc->volume_name)
        return bound_volume(b, pvc, out, n_out, why);
    if (!has_class)
        return 0; /* the cluster's default class decides; nothing to constrain here */
    if (!*class_name) {
        *why = kp_arena_printf(a, "persistentvolumeclaim \"%s\" is unbound and names no storage class",
                               pvc ? pvc->meta.name : v->claim_name);
        return 0;
    }
    const kp_storage_class *sc =
        find_named(b, &b->sc_by_name, (const void *const *)b->c->storage_classes, class_name);
    if (!sc) {
        *why = kp_arena_printf(a, "storageclass \"%s\" not found", class_name);
        return 0;
    }
    if (pvc && sc->volume_binding_mode == KP_BINDING_IMMEDIATE) {
        *why = kp_arena_printf(a, "persistentvolumeclaim \"%s\" uses storageclass \"%s\" with Immediate binding "
                               "and must be bound before its pod can be placed",
                               pvc->meta.name, sc->meta.name);
        return 0;
    }
    return term_alternatives(b, sc->allowed_topologies, sc->n_allowed_topologies, false, out, n_out);
}

/* Karpenter's mergeVolumeRequirementAlternatives: combine every pair that
 * intersects; if none do, combine every pair (the pod then fails on them). */
static void merge_alternatives(build_ctx *b, kp_requirements **alts, uint32_t *n, const kp_requirements *more,
                               uint32_t n_more)
{
    kp_snapshot *snap = b->snap;
    kp_requirements *out = KP_ARENA_NEW(snap->arena, kp_requirements, (*n ? *n : 1) * n_more);
    uint32_t k = 0;
    for (int pass = 0; pass < 2 && k == 0; pass++) {
        for (uint32_t i = 0; i < (*n ? *n : 1); i++) {
            for (uint32_t j = 0; j < n_more; j++) {
                if (*n && pass == 0 && !kp_requirements_intersects(snap->symtab, &(*alts)[i], &more[j], NULL))
                    continue;
                kp_requirements_init(&out[k]);
                if (*n)
                    kp_requirements_add_all(&out[k], snap->symtab, snap->arena, &(*alts)[i]);
                kp_requirements_add_all(&out[k], snap->symtab, snap->arena, &more[j]);
                k++;
            }
        }
    }
    *alts = out;
    *n = k;
}

/* The CSI driver attaching the claim of volume `v` (Karpenter's
 * ResolveDriver): its bound volume's, else its storage class's provisioner;
 * KP_SYM_NONE when neither names one (the claim is then not counted). */
static kp_sym csi_driver(build_ctx *b, const kp_pod *p, const kp_volume *v)
{
    const kp_pvc *pvc = find_pvc(b, p->meta.namespace, v->claim_name);
    if (pvc && *pvc->volume_name) {
        const kp_pv *pv = find_named(b, &b->pv_by_name, (const void *const *)b->c->pvs, pvc->volume_name);
        return pv && *pv->csi_driver ? intern(b, pv->csi_driver) : KP_SYM_NONE;
    }
    const char *class_name = pvc ? pvc->storage_class_name : v->storage_class_name;
    const kp_storage_class *sc =
        class_name && *class_name
            ? find_named(b, &b->sc_by_name, (const void *const *)b->c->storage_classes, class_name)
            : NULL;
    return sc && *sc->provisioner ? intern(b, kp_csi_driver_name(sc->provisioner)) : KP_SYM_NONE;
}

static void add_csi_volume(build_ctx *b, const kp_pod *p, const kp_volume *v, kp_spod *sp)
{
    kp_sym driver = csi_driver(b, p, v);
    if (!driver)
        return;
    if (!sp->csi_volumes)
        sp->csi_volumes = KP_ARENA_NEW(b->snap->arena, kp_csi_volume, p->n_volumes);
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", p->meta.namespace, v->claim_name);
    ((kp_csi_volume *)sp->csi_volumes)[sp->n_csi_volumes++] = (kp_csi_volume){driver, intern(b, key)};
}

static int volumes(build_ctx *b, const kp_pod *p, kp_spod *sp)
{
    kp_requirements *alts = NULL;
    uint32_t n = 0;
    for (size_t i = 0; i < p->n_volumes; i++) {
        const kp_volume *v = &p->volumes[i];
        if (v->kind != KP_VOLUME_PVC && v->kind != KP_VOLUME_EPHEMERAL)
            continue;
        add_csi_volume(b, p, v, sp);
        kp_requirements *more;
        uint32_t n_more;
        const char *why = NULL;
        int err = volume_alternatives(b, p, v, &more, &n_more, &why);
        if (err < 0)
            return err;
        if (why) {
            sp->unschedulable = why;
            return 0;
        }
        if (n_more)
            merge_alternatives(b, &alts, &n, more, n_more);
    }
    sp->volume_alts = alts;
    sp->n_volume_alts = n;
    return 0;
}

/* ---------- pods ---------- */


static int compile_pod(build_ctx *b, const kp_pod *p, kp_spod *sp)
{
    kp_snapshot *snap = b->snap;
    const kp_labels *l = &p->meta.labels;
    const char **keys = KP_ARENA_NEW(snap->arena, const char *, l->count + 1);
    const char **vals = KP_ARENA_NEW(snap->arena, const char *, l->count + 1);
    for (size_t i = 0; i < l->count; i++)
        keys[i] = l->items[i].key, vals[i] = l->items[i].value;
    sp->labels = kp_snapshot_labels(snap, keys, vals, (uint32_t)l->count);
    sp->src = p;
    sp->ns_name = kp_arena_printf(snap->arena, "%s/%s", p->meta.namespace, p->meta.name);
    sp->ns = intern(b, p->meta.namespace);
    sp->uid = *p->meta.uid ? p->meta.uid : sp->ns_name;
    sp->created_ns = p->meta.creation_timestamp.ns;
    int err = kp_snapshot_resvec(snap, &p->requests, &sp->requests);
    if (err < 0)
        return err;
    sp->requests.v[KP_RES_PODS] += 1000; /* every pod takes one of the node's pod slots */
    if ((err = node_affinity(b, p, sp)) < 0)
        return err;
    sp->tolerations = p->tolerations;
    sp->n_tolerations = (uint32_t)p->n_tolerations;
    sp->spreads = compile_spreads(b, p, &sp->n_spreads);
    sp->affinity = required_terms(b, p, sp->ns, &p->affinity.pod, &sp->n_affinity);
    sp->affinity_pref = preferred_terms(b, p, sp->ns, &p->affinity.pod, &sp->n_affinity_pref);
    sp->anti = required_terms(b, p, sp->ns, &p->affinity.pod_anti, &sp->n_anti);
    sp->anti_pref = preferred_terms(b, p, sp->ns, &p->affinity.pod_anti, &sp->n_anti_pref);
    sp->ports = p->host_ports;
    sp->n_ports = (uint32_t)p->n_host_ports;
    sp->daemon = p->owned_by_daemonset;
    sp->terminal = p->phase == KP_POD_PHASE_SUCCEEDED || p->phase == KP_POD_PHASE_FAILED;
    sp->terminating = p->meta.deletion_timestamp.set;
    sp->scheduled = *p->node_name != '\0';
    if (sp->scheduled) {
        kp_sym s = kp_sym_lookup(snap->symtab, p->node_name);
        uint32_t idx = s ? kp_symmap_get(&b->node_by_name, s) : UINT32_MAX;
        sp->node = idx == UINT32_MAX ? -1 : (int32_t)idx;
    }
    if (sp->scheduled) { /* placed: only its claims' attachments still count */
        for (size_t i = 0; i < p->n_volumes; i++)
            if (p->volumes[i].kind == KP_VOLUME_PVC || p->volumes[i].kind == KP_VOLUME_EPHEMERAL)
                add_csi_volume(b, p, &p->volumes[i], sp);
        return 0;
    }
    if ((err = volumes(b, p, sp)) < 0)
        return err;
    if (kp_pod_dra_unsupported(p))
        sp->unschedulable = kp_pod_dra_unsupported(p);
    return 0;
}

static void index_objects(build_ctx *b)
{
    kp_snapshot *snap = b->snap;
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        kp_symmap_put(&b->node_by_name, snap->arena, intern(b, snap->nodes[i].name), i);
    for (size_t i = 0; i < b->c->n_pvcs; i++) {
        const kp_pvc *pvc = b->c->pvcs[i];
        char key[512];
        snprintf(key, sizeof(key), "%s/%s", pvc->meta.namespace, pvc->meta.name);
        kp_symmap_put(&b->pvc_by_key, snap->arena, intern(b, key), (uint32_t)i);
    }
    for (size_t i = 0; i < b->c->n_pvs; i++)
        kp_symmap_put(&b->pv_by_name, snap->arena, intern(b, b->c->pvs[i]->meta.name), (uint32_t)i);
    for (size_t i = 0; i < b->c->n_storage_classes; i++)
        kp_symmap_put(&b->sc_by_name, snap->arena, intern(b, b->c->storage_classes[i]->meta.name), (uint32_t)i);
    collect_namespaces(b);
}

static void ctx_init(build_ctx *b, kp_snapshot *snap, const kp_cluster *c)
{
    memset(b, 0, sizeof(*b));
    b->snap = snap;
    b->c = c;
    index_objects(b);
}

int kp_snapshot_add_pods(kp_snapshot *snap, const kp_cluster *c)
{
    build_ctx b;
    ctx_init(&b, snap, c);
    for (size_t i = 0; i < c->n_pods; i++) {
        kp_spod *sp = kp_snapshot_add_pod(snap);
        int err = compile_pod(&b, c->pods[i], sp);
        if (err < 0)
            return kp_error_wrap(err, "pod %s/%s", c->pods[i]->meta.namespace, c->pods[i]->meta.name);
    }
    return 0;
}

/* Karpenter sizes a DaemonSet by its newest pod when one exists (the pod has
 * the requests the kubelet admitted), with the template's required node
 * affinity, which the DaemonSet controller rewrites per node on its pods. */
static kp_pod daemon_pod(const kp_cluster *c, const kp_workload *ds)
{
    const kp_pod *newest = NULL;
    for (size_t i = 0; i < c->n_pods; i++) {
        const kp_pod *p = c->pods[i];
        if (p->owned_by_daemonset && strcmp(p->controller_name, ds->meta.name) == 0 &&
            strcmp(p->meta.namespace, ds->meta.namespace) == 0 &&
            (!newest || p->meta.creation_timestamp.ns > newest->meta.creation_timestamp.ns))
            newest = p;
    }
    kp_pod pod = newest ? *newest : ds->template;
    if (newest && ds->template.affinity.node.has_required) {
        pod.affinity.node.has_required = true;
        pod.affinity.node.required = ds->template.affinity.node.required;
        pod.affinity.node.n_required = ds->template.affinity.node.n_required;
    }
    return pod;
}

int kp_snapshot_add_daemons(kp_snapshot *snap, const kp_cluster *c)
{
    build_ctx b;
    ctx_init(&b, snap, c);
    for (size_t i = 0; i < c->n_daemonsets; i++) {
        const kp_workload *ds = c->daemonsets[i];
        if (ds->meta.deletion_timestamp.set)
            continue;
        kp_pod tmpl = daemon_pod(c, ds);
        if (kp_pod_dra_unsupported(&tmpl))
            continue; /* not scheduled for, so not counted as overhead either */
        kp_spod *sp = kp_snapshot_add_daemon(snap);
        tmpl.meta.name = ds->meta.name;
        tmpl.meta.namespace = ds->meta.namespace;
        tmpl.node_name = "";
        int err = compile_pod(&b, &tmpl, sp);
        if (err < 0)
            return kp_error_wrap(err, "daemonset %s/%s", ds->meta.namespace, ds->meta.name);
        sp->daemon = true;
        sp->unschedulable = NULL;
        sp->src = NULL; /* compiled from a copy of the template on this stack */
    }
    return 0;
}
