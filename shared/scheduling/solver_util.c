/* Small helpers the solver's files share. */
#include "scheduling/solver_internal.h"
#include "base/buf.h"

#include <string.h>

kp_requirement req_single(kp_arena *arena, kp_sym key, kp_sym value)
{
    kp_requirement r;
    memset(&r, 0, sizeof(r));
    kp_sym *v = kp_arena_alloc(arena, sizeof(kp_sym));
    *v = value;
    r.key = key;
    r.values = v;
    r.n_values = 1;
    return r;
}

kp_requirement req_none(kp_sym key)
{
    kp_requirement r;
    memset(&r, 0, sizeof(r));
    r.key = key;
    return r;
}

static bool port_matches(const kp_host_port *a, const kp_host_port *b)
{
    if (a->port != b->port || a->protocol != b->protocol)
        return false;
    /* An empty or unspecified address overlaps every address. */
    if (!a->ip || !b->ip || !a->ip[0] || !b->ip[0] || strcmp(a->ip, "0.0.0.0") == 0 ||
        strcmp(b->ip, "0.0.0.0") == 0 || strcmp(a->ip, "::") == 0 || strcmp(b->ip, "::") == 0)
        return true;
    return strcmp(a->ip, b->ip) == 0;
}

bool ports_conflict(const kp_host_port *a, uint32_t na, const kp_host_port *b, uint32_t nb)
{
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++)
            if (port_matches(&a[i], &b[j]))
                return true;
    return false;
}

const char *conflict_text(solver *s, const kp_requirements *node, const kp_requirements_conflict *c)
{
    return kp_requirements_conflict_string(s->symtab, s->arena, node, c);
}

/* A deep copy whose value arrays live in `arena` (the scratch arena is rewound). */
void reqs_persist(kp_requirements *dst, kp_arena *arena, const kp_requirements *src)
{
    dst->count = src->count;
    dst->cap = src->count;
    dst->items = src->count ? KP_ARENA_NEW(arena, kp_requirement, src->count) : NULL;
    for (uint32_t i = 0; i < src->count; i++) {
        dst->items[i] = src->items[i];
        if (src->items[i].n_values)
            dst->items[i].values =
                kp_arena_memdup(arena, src->items[i].values, src->items[i].n_values * sizeof(kp_sym));
    }
}

offer_filter offer_filter_of(const kp_requirements *reqs)
{
    offer_filter f = {kp_requirements_get(reqs, KP_SYM_ZONE), kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE)};
    return f;
}

bool offer_ok(const solver *s, const offer_filter *f, const kp_soffering *o)
{
    return o->available && (!f->zone || kp_requirement_has(s->symtab, f->zone, o->zone)) &&
           (!f->ct || kp_requirement_has(s->symtab, f->ct, o->capacity_type));
}

/* The cheapest offering the zone and capacity-type requirements allow, or a
 * negative number when none is allowed. */
double cheapest_price_in(const solver *s, const kp_requirement *zone, const kp_requirement *ct,
                         const kp_sit *it)
{
    offer_filter f = {zone, ct};
    double best = -1;
    for (uint32_t i = 0; i < it->n_offerings; i++) {
        const kp_soffering *o = &it->offerings[i];
        if (offer_ok(s, &f, o) && (best < 0 || o->price < best))
            best = o->price;
    }
    return best;
}

double cheapest_price(const solver *s, const kp_requirements *reqs, const kp_sit *it)
{
    return cheapest_price_in(s, kp_requirements_get(reqs, KP_SYM_ZONE),
                             kp_requirements_get(reqs, KP_SYM_CAPACITY_TYPE), it);
}

bool reqs_equal(const kp_requirements *a, const kp_requirements *b)
{
    if (a->count != b->count)
        return false;
    for (uint32_t i = 0; i < a->count; i++) {
        const kp_requirement *x = &a->items[i], *y = &b->items[i];
        if (x->key != y->key || x->complement != y->complement || x->has_gte != y->has_gte ||
            x->has_lte != y->has_lte || x->min_values != y->min_values || x->n_values != y->n_values ||
            (x->has_gte && x->gte != y->gte) || (x->has_lte && x->lte != y->lte))
            return false;
        if (x->values != y->values && x->n_values &&
            memcmp(x->values, y->values, x->n_values * sizeof(kp_sym)) != 0)
            return false;
    }
    return true;
}

/* Does some required node-affinity term of DaemonSet `d` (with its
 * nodeSelector) fit `node` (Compatible with `flags`) and, when given, the
 * instance type's requirements (Intersects)? A DaemonSet without terms has
 * one: its nodeSelector alone. */
bool daemon_term_matches(solver *s, const kp_spod *d, const kp_requirements *node, unsigned flags,
                         const kp_requirements *it_reqs)
{
    uint32_t n_terms = d->n_required ? d->n_required : 1;
    for (uint32_t term = 0; term < n_terms; term++) {
        kp_arena_mark m = kp_arena_mark_get(s->scratch);
        kp_requirements strict;
        kp_requirements_copy(&strict, s->scratch, &d->node_selector);
        if (d->n_required)
            kp_requirements_add_all(&strict, s->symtab, s->scratch, &d->required[term]);
        bool ok = kp_requirements_compatible(s->symtab, node, &strict, flags, NULL) &&
                  (!it_reqs || kp_requirements_intersects(s->symtab, it_reqs, &strict, NULL));
        kp_arena_rewind(s->scratch, m);
        if (ok)
            return true;
    }
    return false;
}

void fnv_bytes(fnv *f, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        f->h = (f->h ^ p[i]) * 1099511628211ull;
}

void fnv_u64(fnv *f, uint64_t v)
{
    fnv_bytes(f, &v, sizeof(v));
}

void fnv_str(fnv *f, const char *str)
{
    fnv_bytes(f, str ? str : "", str ? strlen(str) + 1 : 1);
}

void fnv_requirements(fnv *f, const kp_requirements *r)
{
    for (uint32_t i = 0; i < r->count; i++) {
        const kp_requirement *q = &r->items[i];
        fnv_u64(f, (uint64_t)q->key << 32 | (uint32_t)q->complement << 2 | (uint32_t)q->has_gte << 1 | q->has_lte);
        fnv_u64(f, (uint64_t)(q->has_gte ? q->gte : 0) ^ (uint64_t)(q->has_lte ? q->lte : 0) << 1);
        fnv_u64(f, (uint64_t)(uint32_t)q->min_values);
        fnv_bytes(f, q->values, q->n_values * sizeof(kp_sym));
    }
}

/* Open addressing, at most half full; a slot holds an index and its hash. */
void idx_table_put(kp_arena *arena, idx_table *t, uint64_t hash, uint32_t idx)
{
    if ((t->count + 1) * 2 > t->cap) {
        idx_table bigger = {NULL, t->cap ? t->cap * 2 : 32, 0};
        bigger.slots = KP_ARENA_NEW(arena, idx_slot, bigger.cap);
        for (uint32_t i = 0; i < bigger.cap; i++)
            bigger.slots[i].idx = UINT32_MAX;
        for (uint32_t i = 0; i < t->cap; i++)
            if (t->slots[i].idx != UINT32_MAX)
                idx_table_put(arena, &bigger, t->slots[i].hash, t->slots[i].idx);
        *t = bigger;
    }
    uint32_t i = (uint32_t)hash & (t->cap - 1);
    while (t->slots[i].idx != UINT32_MAX)
        i = (i + 1) & (t->cap - 1);
    t->slots[i].hash = hash;
    t->slots[i].idx = idx;
    t->count++;
}

uint32_t idx_table_find(const idx_table *t, uint64_t hash, bool (*equal)(const void *ctx, uint32_t idx),
                        const void *ctx)
{
    if (t->cap == 0)
        return UINT32_MAX;
    for (uint32_t i = (uint32_t)hash & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        const idx_slot *e = &t->slots[i];
        if (e->idx == UINT32_MAX)
            return UINT32_MAX;
        if (e->hash == hash && equal(ctx, e->idx))
            return e->idx;
    }
}
