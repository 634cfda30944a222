/*
 * The snapshot container: growable arrays of the model's objects, instance
 * types compiled from catalogs, and the label and selector helpers builders
 * and the solver share.
 */
#include "scheduling/snapshot.h"
#include "scheduling/solver.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

kp_snapshot *kp_snapshot_new(void)
{
    kp_snapshot *snap = kp_xcalloc(1, sizeof(*snap));
    snap->arena = kp_arena_new();
    snap->symtab = kp_symtab_new();
    kp_restab_init(&snap->restab);
    return snap;
}

void kp_snapshot_invalidate(kp_snapshot *snap)
{
    if (snap->solver_cache && snap->solver_cache_free)
        snap->solver_cache_free(snap->solver_cache);
    snap->solver_cache = NULL;
}

kp_snapshot *kp_snapshot_free(kp_snapshot *snap)
{
    if (!snap)
        return NULL;
    kp_snapshot_invalidate(snap);
    free(snap->pods);
    free(snap->nodes);
    free(snap->templates);
    free(snap->its);
    free(snap->daemons);
    kp_symtab_free(snap->symtab);
    kp_arena_free(snap->arena);
    free(snap);
    return NULL;
}

#define ADD_SLOT(snap, arr, n, cap)                                                                \
    do {                                                                                           \
        if ((snap)->n == (snap)->cap) {                                                            \
            size_t cap_ = (snap)->cap;                                                             \
            (snap)->arr = kp_xgrow((snap)->arr, &cap_, (size_t)(snap)->n + 1, sizeof(*(snap)->arr)); \
            (snap)->cap = (uint32_t)cap_;                                                          \
        }                                                                                          \
        memset(&(snap)->arr[(snap)->n], 0, sizeof(*(snap)->arr));                                  \
    } while (0)

kp_spod *kp_snapshot_add_pod(kp_snapshot *snap)
{
    ADD_SLOT(snap, pods, n_pods, cap_pods);
    kp_spod *p = &snap->pods[snap->n_pods++];
    p->node = -1;
    return p;
}

kp_snode *kp_snapshot_add_node(kp_snapshot *snap)
{
    ADD_SLOT(snap, nodes, n_nodes, cap_nodes);
    kp_snode *n = &snap->nodes[snap->n_nodes++];
    n->template_index = -1;
    return n;
}

kp_template *kp_snapshot_add_template(kp_snapshot *snap)
{
    kp_snapshot_invalidate(snap);
    ADD_SLOT(snap, templates, n_templates, cap_templates);
    return &snap->templates[snap->n_templates++];
}

kp_spod *kp_snapshot_add_daemon(kp_snapshot *snap)
{
    kp_snapshot_invalidate(snap);
    ADD_SLOT(snap, daemons, n_daemons, cap_daemons);
    kp_spod *p = &snap->daemons[snap->n_daemons++];
    p->node = -1;
    p->daemon = true;
    return p;
}

static int compile_resources(kp_snapshot *snap, const kp_it_resource *list, uint32_t n, kp_resvec *out)
{
    kp_resvec_zero(out);
    for (uint32_t i = 0; i < n; i++) {
        int r = kp_restab_index(&snap->restab, kp_arena_strdup(snap->arena, list[i].name));
        if (r < 0)
            return r;
        out->v[r] = list[i].milli;
    }
    return 0;
}

static int compile_type(kp_snapshot *snap, const kp_instance_type *src, kp_sit *it)
{
    memset(it, 0, sizeof(*it));
    it->src = src;
    it->name = kp_sym_intern(snap->symtab, src->name);
    kp_requirements_init(&it->reqs);
    for (uint32_t i = 0; i < src->n_reqs; i++) {
        kp_requirement r;
        const kp_it_requirement *q = &src->reqs[i];
        int err = kp_requirement_new(&r, snap->symtab, snap->arena, q->key, q->op,
                                     (const char *const *)q->values, q->n_values, 0);
        if (err < 0)
            return kp_error_wrap(err, "instance type %s", src->name);
        kp_requirements_add(&it->reqs, snap->symtab, snap->arena, &r);
    }
    int err = compile_resources(snap, src->capacity, src->n_capacity, &it->capacity);
    kp_resvec overhead;
    if (!err)
        err = compile_resources(snap, src->overhead, src->n_overhead, &overhead);
    if (err < 0)
        return err;
    it->allocatable = it->capacity;
    kp_resvec_sub(&it->allocatable, &overhead, KP_RES_MAX);
    kp_soffering *offs = KP_ARENA_NEW(snap->arena, kp_soffering, src->n_offerings ? src->n_offerings : 1);
    for (uint32_t i = 0; i < src->n_offerings; i++) {
        offs[i].zone = kp_sym_intern(snap->symtab, src->offerings[i].zone);
        offs[i].capacity_type = kp_sym_intern(snap->symtab, src->offerings[i].capacity_type);
        offs[i].price = src->offerings[i].price;
        offs[i].available = src->offerings[i].available;
        const char *cr = src->offerings[i].reservation_id;
        offs[i].reservation = cr && *cr ? kp_sym_intern(snap->symtab, cr) : KP_SYM_NONE;
        offs[i].reservation_capacity = src->offerings[i].reservation_capacity;
    }
    it->offerings = offs;
    it->n_offerings = src->n_offerings;
    return 0;
}

int kp_snapshot_add_catalog(kp_snapshot *snap, const kp_catalog *catalog)
{
    kp_snapshot_invalidate(snap);
    uint32_t first = snap->n_its;
    for (size_t i = 0; i < catalog->n_well_known; i++)
        kp_symtab_mark_well_known(snap->symtab, kp_sym_intern(snap->symtab, catalog->well_known[i]));
    for (size_t i = 0; i < catalog->count; i++) {
        ADD_SLOT(snap, its, n_its, cap_its);
        int err = compile_type(snap, &catalog->types[i], &snap->its[snap->n_its]);
        if (err < 0)
            return err;
        snap->n_its++;
    }
    return (int)first;
}

static int cmp_templates(const void *a, const void *b)
{
    const kp_template *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return strcmp(y->name, x->name); /* Karpenter: equal weights, the later name first */
}

void kp_snapshot_sort_templates(kp_snapshot *snap)
{
    kp_snapshot_invalidate(snap);
    if (snap->n_templates > 1)
        qsort(snap->templates, snap->n_templates, sizeof(kp_template), cmp_templates);
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        kp_snode *n = &snap->nodes[i];
        kp_sym pool = kp_symlabels_get(&n->labels, KP_SYM_NODEPOOL);
        n->template_index = -1;
        for (uint32_t t = 0; t < snap->n_templates && pool && n->managed; t++)
            if (snap->templates[t].name_sym == pool)
                n->template_index = (int32_t)t;
    }
}

void kp_snapshot_template_use_its(kp_snapshot *snap, uint32_t t, uint32_t first, uint32_t count)
{
    kp_snapshot_invalidate(snap);
    kp_template *tp = &snap->templates[t];
    uint32_t *its = KP_ARENA_NEW(snap->arena, uint32_t, count ? count : 1);
    uint32_t n = 0;
    for (uint32_t i = first; i < first + count; i++)
        if (kp_requirements_intersects(snap->symtab, &snap->its[i].reqs, &tp->reqs, NULL))
            its[n++] = i;
    tp->its = its;
    tp->n_its = n;
}


static int cmp_label(const void *a, const void *b)
{
    const kp_symlabel *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

kp_symlabels kp_snapshot_labels(kp_snapshot *snap, const char *const *keys, const char *const *values,
                                uint32_t count)
{
    kp_symlabels out = {NULL, 0};
    kp_symlabel *items = KP_ARENA_NEW(snap->arena, kp_symlabel, count ? count : 1);
    for (uint32_t i = 0; i < count; i++) {
        items[i].key = kp_sym_intern(snap->symtab, keys[i]);
        items[i].value = kp_sym_intern(snap->symtab, values[i]);
    }
    qsort(items, count, sizeof(kp_symlabel), cmp_label);
    out.items = items;
    out.count = count;
    return out;
}

kp_sym kp_symlabels_get(const kp_symlabels *labels, kp_sym key)
{
    uint32_t lo = 0, hi = labels->count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        kp_sym k = labels->items[mid].key;
        if (k == key)
            return labels->items[mid].value;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return KP_SYM_NONE;
}

static bool sorted_has(const kp_sym *v, uint32_t n, kp_sym x)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (v[mid] == x)
            return true;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool kp_selector_matches(const kp_selector *sel, const kp_symlabels *labels)
{
    if (sel->nothing)
        return false;
    for (uint32_t i = 0; i < sel->n_match; i++)
        if (kp_symlabels_get(labels, sel->match[i].key) != sel->match[i].value)
            return false;
    for (uint32_t i = 0; i < sel->n_exprs; i++) {
        const kp_selector_expr *e = &sel->exprs[i];
        kp_sym v = kp_symlabels_get(labels, e->key);
        bool ok;
        switch (e->op) {
        case KP_OP_IN: ok = v != KP_SYM_NONE && sorted_has(e->values, e->n_values, v); break;
        case KP_OP_NOT_IN: ok = v == KP_SYM_NONE || !sorted_has(e->values, e->n_values, v); break;
        case KP_OP_EXISTS: ok = v != KP_SYM_NONE; break;
        case KP_OP_DOES_NOT_EXIST: ok = v == KP_SYM_NONE; break;
        default: ok = false; break;
        }
        if (!ok)
            return false;
    }
    return true;
}

uint32_t kp_snapshot_pending_pods(const kp_snapshot *snap, uint32_t **out, kp_arena *arena)
{
    uint32_t *v = KP_ARENA_NEW(arena, uint32_t, snap->n_pods ? snap->n_pods : 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *p = &snap->pods[i];
        if (!p->scheduled && !p->terminal && !p->terminating && !p->daemon)
            v[n++] = i;
    }
    *out = v;
    return n;
}
