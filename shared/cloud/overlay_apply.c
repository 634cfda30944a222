/* Applying an evaluated store to a catalog, and the store's life (see overlay.h). */
#include "cloud/overlay_internal.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t kp_overlay_store_verdicts(const kp_overlay_store *s, const kp_overlay_verdict **out)
{
    *out = s->verdicts;
    return s->n_verdicts;
}

kp_overlay_store *kp_overlay_store_ref(kp_overlay_store *s)
{
    if (s) atomic_fetch_add(&s->refs, 1);
    return s;
}

kp_overlay_store *kp_overlay_store_unref(kp_overlay_store *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        kp_arena_free(s->arena);
        free(s);
    }
    return NULL;
}

/* bsearch over arrays whose elements start with their name (ov_pool, ov_type). */
static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

static const ov_pool *find_pool(const kp_overlay_store *s, const char *name)
{
    return s->n_pools ? bsearch(name, s->pools, s->n_pools, sizeof(*s->pools), cmp_name) : NULL;
}

static const ov_type *find_type(const ov_pool *p, const char *name)
{
    return p->n_types ? bsearch(name, p->types, p->n_types, sizeof(*p->types), cmp_name) : NULL;
}

ov_price *ov_price_find(const ov_type *u, const kp_offering *of)
{
    for (uint32_t i = 0; u && i < u->n_prices; i++) {
        ov_price *p = &u->prices[i];
        if (!strcmp(p->zone, ov_str(of->zone)) && !strcmp(p->capacity_type, ov_str(of->capacity_type)) &&
            !strcmp(p->reservation_id, ov_str(of->reservation_id)))
            return p;
    }
    return NULL;
}

/* New offerings with the selected ones repriced; the rest as they were. */
static bool reprice(kp_catalog *c, kp_instance_type *it, const ov_type *u)
{
    if (!u->n_prices || !it->n_offerings) return false;
    kp_offering *offs = kp_arena_memdup(c->arena, it->offerings, it->n_offerings * sizeof(*offs));
    bool changed = false;
    for (uint32_t k = 0; k < it->n_offerings; k++) {
        const ov_price *p = ov_price_find(u, &offs[k]);
        if (!p) continue;
        offs[k].price = kp_price_change_apply(&p->change, offs[k].price);
        changed = true;
    }
    it->offerings = offs;
    it->cap_offerings = it->n_offerings;
    it->price_overlaid = changed;
    return changed;
}

/* The type's capacity with the overlays' resources set (Karpenter assigns
 * them over what the cloud reported). */
static bool add_capacity(kp_catalog *c, kp_instance_type *it, const ov_type *u)
{
    if (!u->n_capacity) return false;
    uint32_t n = it->n_capacity;
    kp_it_resource *res = KP_ARENA_NEW(c->arena, kp_it_resource, n + u->n_capacity);
    if (n) memcpy(res, it->capacity, n * sizeof(*res));
    for (uint32_t r = 0; r < u->n_capacity; r++) {
        uint32_t i = 0;
        while (i < n && strcmp(res[i].name, u->capacity[r].name) != 0)
            i++;
        res[i] = (kp_it_resource){u->capacity[r].name, u->capacity[r].milli};
        if (i == n) n++;
    }
    it->capacity = res;
    it->n_capacity = it->cap_capacity = n;
    it->capacity_overlaid = true;
    return true;
}

/* A catalog sharing everything with `base` but the types array, into which
 * changed types get their own offerings and capacity. */
static kp_catalog *shallow_copy(const kp_catalog *base)
{
    kp_catalog *c = kp_catalog_new(base->description);
    c->description = kp_arena_printf(c->arena, "%s with NodeOverlays", base->description);
    c->types = kp_xmalloc((base->count ? base->count : 1) * sizeof(*c->types));
    if (base->count) memcpy(c->types, base->types, base->count * sizeof(*c->types));
    c->count = c->cap = base->count;
    c->well_known = base->well_known;
    c->n_well_known = c->cap_well_known = base->n_well_known;
    return c;
}

int kp_overlay_store_apply(const kp_overlay_store *s, const char *pool, const kp_catalog *base,
                           kp_catalog **out)
{
    const ov_pool *p = find_pool(s, pool);
    if (!p || !p->evaluated)
        return kp_error_set(KP_ENOTREADY, "nodepool \"%s\" is awaiting evaluation of its NodeOverlays", pool);
    *out = NULL;
    if (!p->n_types) return 0;
    kp_catalog *c = shallow_copy(base);
    bool changed = false;
    for (size_t i = 0; i < c->count; i++) {
        const ov_type *u = find_type(p, c->types[i].name);
        if (!u) continue;
        changed |= reprice(c, &c->types[i], u);
        changed |= add_capacity(c, &c->types[i], u);
    }
    if (!changed) {
        kp_catalog_free(c);
        return 0;
    }
    *out = c;
    return 0;
}

/* ------------------------------------------------------------ catalog sets */

typedef struct applied_catalog {
    const char *pool;
    const kp_catalog *base;
    kp_catalog *catalog; /* NULL: the base as it is */
    bool awaiting;
} applied_catalog;

struct kp_overlay_catalogs {
    kp_overlay_store *store;
    const kp_catalog *base;
    kp_arena *arena;
    applied_catalog *items;
    size_t n, cap;
};

kp_overlay_catalogs *kp_overlay_catalogs_new(kp_overlay_store *store, const kp_catalog *base)
{
    kp_overlay_catalogs *set = kp_xcalloc(1, sizeof(*set));
    set->store = kp_overlay_store_ref(store);
    set->base = base;
    set->arena = kp_arena_new();
    return set;
}

kp_overlay_catalogs *kp_overlay_catalogs_free(kp_overlay_catalogs *set)
{
    if (!set) return NULL;
    for (size_t i = 0; i < set->n; i++)
        kp_catalog_free(set->items[i].catalog);
    free(set->items);
    kp_arena_free(set->arena);
    kp_overlay_store_unref(set->store);
    free(set);
    return NULL;
}

static const kp_catalog *result(const applied_catalog *a)
{
    return a->awaiting ? NULL : a->catalog ? a->catalog : a->base;
}

const kp_catalog *kp_overlay_catalogs_get(kp_overlay_catalogs *set, const kp_nodepool *np,
                                          const kp_catalog *base)
{
    if (!np || !base) return base;
    for (size_t i = 0; i < set->n; i++)
        if (set->items[i].base == base && !strcmp(set->items[i].pool, np->meta.name)) return result(&set->items[i]);
    set->items = kp_xgrow(set->items, &set->cap, set->n + 1, sizeof(*set->items));
    applied_catalog *a = &set->items[set->n++];
    *a = (applied_catalog){kp_arena_strdup(set->arena, np->meta.name), base, NULL, false};
    a->awaiting = !set->store || kp_overlay_store_apply(set->store, np->meta.name, base, &a->catalog) < 0;
    return result(a);
}

const kp_catalog *kp_overlay_catalogs_cluster_fn(void *set, const kp_nodepool *np)
{
    kp_overlay_catalogs *s = set;
    return kp_overlay_catalogs_get(s, np, s->base);
}

const kp_overlay_store *kp_overlay_catalogs_store(const kp_overlay_catalogs *set)
{
    return set->store;
}

const char *kp_overlay_verdict_text(const kp_overlay_verdict *v, char *buf, size_t size)
{
    if (v->outcome == KP_OVERLAY_APPLIED)
        snprintf(buf, size, "NodeOverlay %s: applied to %u instance type(s)", v->name, v->n_types);
    else
        snprintf(buf, size, "NodeOverlay %s: not applied (%s): %s", v->name,
                 v->outcome == KP_OVERLAY_CONFLICT ? KP_OVERLAY_REASON_CONFLICT : KP_OVERLAY_REASON_INVALID,
                 v->message);
    return buf;
}
