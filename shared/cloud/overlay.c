/* Evaluating NodeOverlays against NodePools' instance types (see overlay.h). */
#include "cloud/overlay_internal.h"

#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/capacityreservation.h"

#include <stdlib.h>
#include <string.h>

/* A type compiled for one NodePool: the pool's labels with the type's
 * requirements, and each offering's (zone, capacity type, reservation). */
typedef struct eval_type {
    kp_requirements reqs;
    kp_requirements *offerings;
    ov_type *update; /* NULL until an overlay changes the type */
} eval_type;

typedef struct eval_pool {
    ov_pool *out;
    const kp_catalog *cat;
    eval_type *types;
} eval_pool;

typedef struct eval {
    kp_symtab *symtab;
    kp_arena *scratch; /* compiled requirements, selections */
    kp_overlay_store *store;
    eval_pool *pools;
    size_t n_pools;
    bool *selected; /* per offering of the type being looked at */
    size_t cap_selected;
} eval;

/* One overlay being evaluated. */
typedef struct ov_input {
    const kp_nodeoverlay *o;
    kp_requirements reqs;
    bool has_change;
    kp_price_change change;
    int32_t weight;
} ov_input;

/* ------------------------------------------------------------- compiling */

static int compile_type(eval *e, const kp_requirements *pool, const kp_instance_type *it, eval_type *t)
{
    kp_requirements_copy(&t->reqs, e->scratch, pool);
    for (uint32_t i = 0; i < it->n_reqs; i++) {
        const kp_it_requirement *q = &it->reqs[i];
        kp_requirement r;
        int err = kp_requirement_new(&r, e->symtab, e->scratch, q->key, q->op, (const char *const *)q->values,
                                     q->n_values, 0);
        if (err < 0) return kp_error_wrap(err, "instance type %s", it->name);
        kp_requirements_add(&t->reqs, e->symtab, e->scratch, &r);
    }
    t->offerings = KP_ARENA_NEW(e->scratch, kp_requirements, it->n_offerings ? it->n_offerings : 1);
    for (uint32_t k = 0; k < it->n_offerings; k++) {
        const kp_offering *of = &it->offerings[k];
        kp_requirements *r = &t->offerings[k];
        kp_requirements_init(r);
        kp_requirements_add_label(r, e->symtab, e->scratch, KP_LABEL_ZONE, ov_str(of->zone));
        kp_requirements_add_label(r, e->symtab, e->scratch, KP_LABEL_CAPACITY_TYPE, ov_str(of->capacity_type));
        if (of->reservation_id && *of->reservation_id)
            kp_requirements_add_label(r, e->symtab, e->scratch, KP_AWS_LABEL_CR_ID, of->reservation_id);
    }
    return 0;
}

/* Karpenter matches overlays against the type plus the NodePool's name and
 * template labels (which every node of the pool carries). */
static int compile_pool(eval *e, eval_pool *ep, const kp_nodepool *np)
{
    kp_requirements pool;
    kp_requirements_init(&pool);
    kp_requirements_add_label(&pool, e->symtab, e->scratch, KP_LABEL_NODEPOOL, np->meta.name);
    for (size_t i = 0; i < np->template_labels.count; i++)
        kp_requirements_add_label(&pool, e->symtab, e->scratch, np->template_labels.items[i].key,
                                  np->template_labels.items[i].value);
    for (size_t i = 0; i < ep->cat->n_well_known; i++)
        kp_symtab_mark_well_known(e->symtab, kp_sym_intern(e->symtab, ep->cat->well_known[i]));
    ep->types = KP_ARENA_NEW(e->scratch, eval_type, ep->cat->count ? ep->cat->count : 1);
    for (size_t i = 0; i < ep->cat->count; i++) {
        int err = compile_type(e, &pool, &ep->cat->types[i], &ep->types[i]);
        if (err < 0) return kp_error_wrap(err, "nodepool %s", np->meta.name);
    }
    return 0;
}

static int cmp_pool(const void *a, const void *b)
{
    return strcmp(((const kp_overlay_pool *)a)->pool->meta.name, ((const kp_overlay_pool *)b)->pool->meta.name);
}

static int add_pools(eval *e, const kp_overlay_pool *pools, size_t n)
{
    kp_overlay_pool *sorted = kp_xmalloc((n ? n : 1) * sizeof(*sorted));
    if (n) memcpy(sorted, pools, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), cmp_pool);
    kp_overlay_store *s = e->store;
    s->pools = KP_ARENA_NEW(s->arena, ov_pool, n ? n : 1);
    e->pools = KP_ARENA_NEW(e->scratch, eval_pool, n ? n : 1);
    int err = 0;
    for (size_t i = 0; i < n && !err; i++) {
        if (i && strcmp(sorted[i].pool->meta.name, sorted[i - 1].pool->meta.name) == 0) continue;
        ov_pool *op = &s->pools[s->n_pools++];
        op->name = kp_arena_strdup(s->arena, sorted[i].pool->meta.name);
        op->evaluated = sorted[i].catalog != NULL;
        if (!op->evaluated) continue;
        eval_pool *ep = &e->pools[e->n_pools++];
        *ep = (eval_pool){op, sorted[i].catalog, NULL};
        err = compile_pool(e, ep, sorted[i].pool);
    }
    free(sorted);
    return err;
}

/* The overlay's requirements; false (with the verdict set) when they do not compile. */
static bool compile_overlay(eval *e, const kp_nodeoverlay *o, ov_input *in, kp_overlay_verdict *v)
{
    *in = (ov_input){o, {0}, false, {0}, o->has_weight ? o->weight : 0};
    kp_requirements_init(&in->reqs);
    in->has_change = kp_nodeoverlay_price_change(o, &in->change);
    for (size_t i = 0; i < o->n_requirements; i++) {
        const kp_selector_req *q = &o->requirements[i];
        kp_requirement r;
        if (kp_requirement_new(&r, e->symtab, e->scratch, q->key, q->op, (const char *const *)q->values,
                               q->n_values, 0) < 0) {
            v->outcome = KP_OVERLAY_INVALID;
            v->message = kp_arena_printf(e->store->arena, "spec.requirements[%zu]: %s", i, kp_error_last());
            return false;
        }
        kp_requirements_add(&in->reqs, e->symtab, e->scratch, &r);
    }
    return true;
}

/* ------------------------------------------------------------- selecting */

/* Which offerings of type `t` the overlay selects (e->selected); 0 when it
 * does not select the type at all (Karpenter: then it is not applied to it). */
static uint32_t select_offerings(eval *e, const eval_type *t, const kp_instance_type *it, const ov_input *in)
{
    if (!kp_requirements_compatible(e->symtab, &t->reqs, &in->reqs, 0, NULL)) return 0;
    if (it->n_offerings > e->cap_selected) {
        e->cap_selected = it->n_offerings;
        e->selected = kp_xrealloc(e->selected, e->cap_selected * sizeof(bool));
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < it->n_offerings; k++) {
        e->selected[k] = kp_requirements_compatible(e->symtab, &in->reqs, &t->offerings[k],
                                                    KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN, NULL);
        n += e->selected[k];
    }
    return n;
}

static bool has_resource(const ov_type *u, const char *name)
{
    for (uint32_t i = 0; i < u->n_capacity; i++)
        if (!strcmp(u->capacity[i].name, name)) return true;
    return false;
}

/* ------------------------------------------------------------ conflicts */

/* Karpenter's isPriceUpdatesConflicting and isCapacityUpdatesConflicting:
 * overlays come heaviest first, so an earlier change of the same weight on
 * the same offering or resource is a conflict; a heavier one is not. */
static const char *type_conflict(eval *e, const eval_pool *ep, uint32_t i, const ov_input *in)
{
    const kp_instance_type *it = &ep->cat->types[i];
    ov_type *u = ep->types[i].update;
    kp_arena *a = e->store->arena;
    for (uint32_t k = 0; in->has_change && u && k < it->n_offerings; k++) {
        const ov_price *p = e->selected[k] ? ov_price_find(u, &it->offerings[k]) : NULL;
        if (p && p->weight == in->weight)
            return kp_arena_printf(a, "%s weighs the same (%d) and also sets the price of %s (%s %s) in NodePool %s",
                                   p->last, (int)in->weight, it->name, ov_str(it->offerings[k].zone),
                                   ov_str(it->offerings[k].capacity_type), ep->out->name);
    }
    if (!u || !in->o->capacity.count || !u->has_capacity || u->capacity_weight != in->weight) return NULL;
    for (size_t r = 0; r < in->o->capacity.count; r++)
        if (kp_resource_list_get(u->capacity_last, in->o->capacity.items[r].name))
            return kp_arena_printf(a, "%s weighs the same (%d) and also sets %s of %s in NodePool %s",
                                   u->capacity_owner, (int)in->weight, in->o->capacity.items[r].name, it->name,
                                   ep->out->name);
    return NULL;
}

/* The first conflict anywhere (Karpenter checks every NodePool before
 * applying anything, so an overlay is applied everywhere or nowhere). */
static const char *conflict(eval *e, const ov_input *in)
{
    for (size_t p = 0; p < e->n_pools; p++) {
        const eval_pool *ep = &e->pools[p];
        for (uint32_t i = 0; i < ep->cat->count; i++) {
            if (!select_offerings(e, &ep->types[i], &ep->cat->types[i], in)) continue;
            const char *why = type_conflict(e, ep, i, in);
            if (why) return why;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------- applying */

static ov_type *update_of(eval *e, eval_pool *ep, uint32_t i)
{
    if (!ep->types[i].update) {
        ov_type *u = KP_ARENA_NEW(e->store->arena, ov_type, 1);
        u->name = kp_arena_strdup(e->store->arena, ep->cat->types[i].name);
        ep->types[i].update = u;
        ep->out->n_types++;
    }
    return ep->types[i].update;
}

static void record_price(eval *e, ov_type *u, const kp_offering *of, const ov_input *in)
{
    kp_arena *a = e->store->arena;
    ov_price *p = ov_price_find(u, of);
    if (!p) {
        if (u->n_prices == u->cap_prices) {
            uint32_t cap = u->cap_prices ? u->cap_prices * 2 : 4;
            u->prices = kp_arena_grow(a, u->prices, u->n_prices, cap, sizeof(*u->prices));
            u->cap_prices = cap;
        }
        p = &u->prices[u->n_prices++];
        *p = (ov_price){kp_arena_strdup(a, ov_str(of->zone)), kp_arena_strdup(a, ov_str(of->capacity_type)),
                        kp_arena_strdup(a, ov_str(of->reservation_id)), in->change, 0, NULL};
    }
    p->weight = in->weight; /* a heavier overlay's price stays */
    p->last = in->o->meta.name;
}

static void record_capacity(eval *e, ov_type *u, const ov_input *in)
{
    kp_arena *a = e->store->arena;
    const kp_resource_list *cap = &in->o->capacity;
    for (size_t r = 0; r < cap->count; r++) {
        if (has_resource(u, cap->items[r].name)) continue; /* a heavier overlay set it */
        if (u->n_capacity == u->cap_capacity) {
            uint32_t n = u->cap_capacity ? u->cap_capacity * 2 : 4;
            u->capacity = kp_arena_grow(a, u->capacity, u->n_capacity, n, sizeof(*u->capacity));
            u->cap_capacity = n;
        }
        u->capacity[u->n_capacity++] =
            (ov_resource){kp_arena_strdup(a, cap->items[r].name), kp_quantity_milli_value(cap->items[r].quantity)};
    }
    u->has_capacity = true;
    u->capacity_weight = in->weight;
    u->capacity_last = cap;
    u->capacity_owner = in->o->meta.name;
}

static uint32_t apply(eval *e, const ov_input *in)
{
    uint32_t changed = 0;
    for (size_t p = 0; p < e->n_pools; p++) {
        eval_pool *ep = &e->pools[p];
        for (uint32_t i = 0; i < ep->cat->count; i++) {
            const kp_instance_type *it = &ep->cat->types[i];
            if (!select_offerings(e, &ep->types[i], it, in) || (!in->has_change && !in->o->capacity.count))
                continue;
            ov_type *u = update_of(e, ep, i);
            for (uint32_t k = 0; in->has_change && k < it->n_offerings; k++)
                if (e->selected[k]) record_price(e, u, &it->offerings[k], in);
            if (in->o->capacity.count) record_capacity(e, u, in);
            changed++;
        }
    }
    return changed;
}

/* ------------------------------------------------------------- the store */

static int cmp_type(const void *a, const void *b)
{
    return strcmp(((const ov_type *)a)->name, ((const ov_type *)b)->name);
}

/* Each pool's changed types, by name, for lookups when applying. */
static void finish(eval *e)
{
    for (size_t p = 0; p < e->n_pools; p++) {
        eval_pool *ep = &e->pools[p];
        ov_pool *op = ep->out;
        op->types = KP_ARENA_NEW(e->store->arena, ov_type, op->n_types ? op->n_types : 1);
        uint32_t n = 0;
        for (size_t i = 0; i < ep->cat->count; i++) {
            ov_type *u = ep->types[i].update;
            if (!u) continue;
            u->capacity_last = NULL; /* it points into the input overlay */
            op->types[n++] = *u;
        }
        qsort(op->types, n, sizeof(*op->types), cmp_type);
    }
}

static void evaluate_one(eval *e, const kp_nodeoverlay *o, kp_overlay_verdict *v)
{
    kp_arena *a = e->store->arena;
    *v = (kp_overlay_verdict){kp_arena_strdup(a, o->meta.name), KP_OVERLAY_APPLIED, "", 0};
    ov_input in;
    if (o->invalid) {
        v->outcome = KP_OVERLAY_INVALID;
        v->message = kp_arena_strdup(a, o->invalid);
        return;
    }
    if (!compile_overlay(e, o, &in, v)) return;
    const char *why = conflict(e, &in);
    if (why) {
        v->outcome = KP_OVERLAY_CONFLICT;
        v->message = kp_arena_printf(a, "%s: %s", KP_OVERLAY_CONFLICT_MESSAGE, why);
        return;
    }
    v->n_types = apply(e, &in);
}

int kp_overlay_evaluate(const kp_nodeoverlay *const *overlays, size_t n_overlays, const kp_overlay_pool *pools,
                        size_t n_pools, kp_overlay_store **out)
{
    eval e = {kp_symtab_new(), kp_arena_new(), kp_xcalloc(1, sizeof(kp_overlay_store)), NULL, 0, NULL, 0};
    atomic_init(&e.store->refs, 1);
    e.store->arena = kp_arena_new();
    int err = add_pools(&e, pools, n_pools);
    const kp_nodeoverlay **order = kp_xmalloc((n_overlays ? n_overlays : 1) * sizeof(*order));
    if (n_overlays) memcpy(order, overlays, n_overlays * sizeof(*order));
    kp_nodeoverlay_sort(order, n_overlays);
    e.store->verdicts = KP_ARENA_NEW(e.store->arena, kp_overlay_verdict, n_overlays ? n_overlays : 1);
    for (size_t i = 0; i < n_overlays && !err; i++)
        evaluate_one(&e, order[i], &e.store->verdicts[e.store->n_verdicts++]);
    if (!err) finish(&e);
    free(order);
    free(e.selected);
    kp_arena_free(e.scratch);
    kp_symtab_free(e.symtab);
    if (err < 0) {
        kp_overlay_store_unref(e.store);
        return err;
    }
    *out = e.store;
    return 0;
}
