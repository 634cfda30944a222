/*
 * Which instance types and offerings a launch asks EC2 for (see launch.h):
 * Karpenter's compatibility check, its launch filters, the capacity type,
 * and the cheapest-first order capped at KP_AWS_MAX_INSTANCE_TYPES.
 */
#include "cloud/aws/launch.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/requirements.h"
#include "api/wellknown.h"
#include "base/error.h"

#include "cloud/aws/launch_internal.h"


static int claim_requirements(sel *s, const kp_nodeclaim *claim)
{
    kp_requirements_init(&s->claim);
    for (size_t i = 0; i < claim->spec.n_requirements; i++) {
        const kp_selector_req *r = &claim->spec.requirements[i];
        kp_requirement req;
        int err = kp_requirement_new(&req, s->symtab, s->tmp, r->key, r->op,
                                     (const char *const *)r->values, r->n_values, 0);
        if (err < 0)
            return kp_error_wrap(err, "nodeclaim %s: spec.requirements[%zu]", claim->meta.name, i);
        kp_requirements_add(&s->claim, s->symtab, s->tmp, &req);
        if (r->min_values > 0) s->min_values = true;
    }
    return 0;
}

bool kp_aws_sel_allows(sel *s, kp_sym key, const char *value)
{
    const kp_requirement *r = kp_requirements_get(&s->claim, key);
    return !r || kp_requirement_has(s->symtab, r, kp_sym_intern(s->symtab, value));
}

#define claim_allows kp_aws_sel_allows

/* Whether the claim lets label `key` be absent (no requirement, DoesNotExist, NotIn). */
static bool claim_allows_absent(sel *s, const char *key)
{
    const kp_requirement *r = kp_requirements_get(&s->claim, kp_sym_intern(s->symtab, key));
    return !r || (!r->complement && r->n_values == 0) || (r->complement && r->n_values > 0);
}

static bool reservation_key(kp_sym key, const sel *s)
{
    return key == s->k_cr_id || key == s->k_cr_type || key == s->k_cr_interruptible;
}

/* The type's labels (zone and capacity type aside: offerings carry those)
 * meet the claim's. */
static bool type_compatible(sel *s, const kp_instance_type *it)
{
    kp_requirements reqs;
    kp_requirements_init(&reqs);
    kp_requirements_add_label(&reqs, s->symtab, s->tmp, KP_LABEL_INSTANCE_TYPE, it->name);
    for (uint32_t i = 0; i < it->n_reqs; i++) {
        const kp_it_requirement *r = &it->reqs[i];
        kp_requirement req;
        if (kp_requirement_new(&req, s->symtab, s->tmp, r->key, r->op, r->values, r->n_values, 0) <
            0)
            return false;
        if (req.key != KP_SYM_ZONE && req.key != KP_SYM_CAPACITY_TYPE && !reservation_key(req.key, s))
            kp_requirements_add(&reqs, s->symtab, s->tmp, &req);
    }
    return kp_requirements_intersects(s->symtab, &reqs, &s->claim, NULL);
}

static bool fits(const kp_instance_type *it, const kp_nodeclaim *claim)
{
    const kp_resource_list *rq = &claim->spec.resource_requests;
    for (size_t i = 0; i < rq->count; i++) {
        int64_t want = kp_quantity_milli_value(rq->items[i].quantity);
        const char *name = rq->items[i].name;
        if (want > 0 && want > kp_it_capacity(it, name) - kp_it_overhead(it, name)) return false;
    }
    return true;
}

static bool offering_ok(sel *s, const kp_instance_type *it, const kp_offering *o)
{
    if (!o->available || !o->zone || !o->capacity_type) return false;
    bool reserved = strcmp(o->capacity_type, RESERVED) == 0;
    if (!reserved && strcmp(o->capacity_type, SPOT) != 0 && strcmp(o->capacity_type, ON_DEMAND) != 0)
        return false;
    if (s->forced && strcmp(o->capacity_type, s->forced) != 0) return false;
    if (!claim_allows(s, KP_SYM_ZONE, o->zone) ||
        !claim_allows(s, KP_SYM_CAPACITY_TYPE, o->capacity_type))
        return false;
    if (reserved) return kp_aws_reservation_usable(s, o);
    if (!claim_allows_absent(s, KP_AWS_LABEL_CR_ID)) return false; /* pinned to a reservation */
    return !(s->ice && kp_aws_ice_unavailable(s->ice, o->capacity_type, it->name, o->zone));
}

/* Cheapest usable offering; false when there is none. */
bool kp_aws_cand_reprice(cand *c)
{
    c->price = DBL_MAX;
    bool any = false;
    for (uint32_t i = 0; i < c->type->n_offerings; i++)
        if (c->ok[i] && c->type->offerings[i].price < c->price) {
            c->price = c->type->offerings[i].price;
            any = true;
        }
    return any;
}

static size_t candidates(sel *s, const kp_catalog *cat, const kp_nodeclaim *claim, kp_arena *a,
                         cand *out)
{
    size_t n = 0;
    for (size_t t = 0; t < cat->count; t++) {
        const kp_instance_type *it = &cat->types[t];
        if (!type_compatible(s, it) || !fits(it, claim)) continue;
        cand c = {it, KP_ARENA_NEW(a, bool, it->n_offerings + 1), 0, t};
        for (uint32_t i = 0; i < it->n_offerings; i++)
            c.ok[i] = offering_ok(s, it, &it->offerings[i]);
        if (kp_aws_cand_reprice(&c)) out[n++] = c;
    }
    return n;
}

/* ---------------------------------------------------------------- filters */

static bool exotic(const kp_instance_type *it)
{
    static const char *const accelerators[] = {"aws.amazon.com/neuron", "aws.amazon.com/neuroncore",
                                               "amd.com/gpu", "nvidia.com/gpu", "habana.ai/gaudi"};
    for (uint32_t i = 0; i < it->n_reqs; i++)
        if (strcmp(it->reqs[i].key, KP_LABEL_INSTANCE_SIZE) == 0)
            for (uint32_t j = 0; j < it->reqs[i].n_values; j++)
                if (strstr(it->reqs[i].values[j], "metal")) return true;
    for (size_t i = 0; i < sizeof(accelerators) / sizeof(*accelerators); i++)
        if (kp_it_capacity(it, accelerators[i]) > 0) return true;
    return false;
}

/* Metal and accelerated types only when nothing else fits. */
static size_t drop_exotic(cand *c, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!exotic(c[i].type)) c[k++] = c[i];
    if (k == 0) return n; /* nothing ordinary: keep all (the array is untouched) */
    return k;
}

#define is kp_aws_offering_is

bool kp_aws_offering_is(const kp_offering *o, const char *ct)
{
    return strcmp(o->capacity_type, ct) == 0;
}

/* With both capacity types allowed, spot dearer than on-demand is pointless. */
static size_t drop_dear_spot(sel *s, cand *c, size_t n)
{
    if (!claim_allows(s, KP_SYM_CAPACITY_TYPE, SPOT) ||
        !claim_allows(s, KP_SYM_CAPACITY_TYPE, ON_DEMAND))
        return n;
    double od = DBL_MAX;
    bool spot = false;
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++) {
            const kp_offering *o = &c[i].type->offerings[j];
            if (!c[i].ok[j]) continue;
            if (is(o, ON_DEMAND) && o->price < od) od = o->price;
            spot = spot || is(o, SPOT);
        }
    if (od == DBL_MAX || !spot) return n;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++) {
            const kp_offering *o = &c[i].type->offerings[j];
            if (c[i].ok[j] && is(o, SPOT) && o->price > od) c[i].ok[j] = false;
        }
        if (kp_aws_cand_reprice(&c[i])) c[k++] = c[i];
    }
    return k;
}

static const char *capacity_type(sel *s, const cand *c, size_t n)
{
    if (s->forced) return s->forced;
    if (kp_aws_any_usable(c, n, RESERVED)) return RESERVED;
    if (!claim_allows(s, KP_SYM_CAPACITY_TYPE, SPOT)) return ON_DEMAND;
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++)
            if (c[i].ok[j] && is(&c[i].type->offerings[j], SPOT)) return SPOT;
    return ON_DEMAND;
}

static int by_price(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->price != y->price) return x->price < y->price ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* ----------------------------------------------------------------- select */

static void choice_of(cand *c, size_t n, const char *ct, kp_arena *a, kp_aws_launch_choice *out)
{
    /* Karpenter orders (and truncates) by the cheapest offering of any
     * capacity type the claim allows, before the capacity type is chosen. */
    qsort(c, n, sizeof(*c), by_price);
    if (n > KP_AWS_MAX_INSTANCE_TYPES) n = KP_AWS_MAX_INSTANCE_TYPES;
    out->capacity_type = ct;
    out->types = KP_ARENA_NEW(a, const kp_instance_type *, n + 1);
    out->usable = KP_ARENA_NEW(a, const bool *, n + 1);
    out->n_types = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        out->types[i] = c[i].type;
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++)
            c[i].ok[j] = c[i].ok[j] && is(&c[i].type->offerings[j], ct);
        out->usable[i] = c[i].ok;
    }
}

/* Karpenter's filter order: reserved ones first (when a reservation can be
 * used, the launch is reserved), then exotic types and dear spot. */
static size_t filter(sel *s, cand *c, size_t n, kp_aws_launch_choice *out)
{
    if (n > 0 && !s->forced && kp_aws_any_usable(c, n, RESERVED))
        n = kp_aws_filter_reserved(s, c, n, out);
    if (n > 0 && !s->min_values) n = drop_exotic(c, n);
    if (n > 0 && !s->min_values && !kp_aws_any_usable(c, n, RESERVED)) n = drop_dear_spot(s, c, n);
    return n;
}

int kp_aws_launch_select(const kp_catalog *catalog, const kp_nodeclaim *claim,
                         kp_aws_ice_cache *ice, const kp_aws_launch_reservations *crs,
                         const char *ct, kp_arena *arena, kp_aws_launch_choice *out)
{
    sel s = {kp_symtab_new(), kp_arena_new(), {0}, false, ice, ct, crs, 0, 0, 0};
    s.k_cr_id = kp_sym_intern(s.symtab, KP_AWS_LABEL_CR_ID);
    s.k_cr_type = kp_sym_intern(s.symtab, KP_AWS_LABEL_CR_TYPE);
    s.k_cr_interruptible = kp_sym_intern(s.symtab, KP_AWS_LABEL_CR_INTERRUPTIBLE);
    memset(out, 0, sizeof(*out));
    int err = claim_requirements(&s, claim);
    cand *c = KP_ARENA_NEW(arena, cand, catalog->count + 1);
    size_t n = err == 0 ? candidates(&s, catalog, claim, arena, c) : 0;
    if (err == 0) n = filter(&s, c, n, out);
    if (err == 0 && n == 0)
        err = kp_error_set(KP_EINSUFFICIENT_CAPACITY,
                           "nodeclaim %s: all requested instance types were unavailable during "
                           "launch",
                           claim->meta.name);
    if (err == 0) choice_of(c, n, capacity_type(&s, c, n), arena, out);
    kp_arena_free(s.tmp);
    kp_symtab_free(s.symtab);
    return err;
}

/* -------------------------------------------------------------- a copy */

static void copy_type(kp_catalog *dst, const kp_instance_type *it)
{
    kp_instance_type *t = kp_catalog_add_type(dst, it->name);
    t->ebs_volume_limit = it->ebs_volume_limit;
    for (uint32_t i = 0; i < it->n_reqs; i++)
        kp_it_add_req(dst, t, it->reqs[i].key, it->reqs[i].op, it->reqs[i].values,
                      it->reqs[i].n_values);
    for (uint32_t i = 0; i < it->n_capacity; i++)
        kp_it_set_capacity(dst, t, it->capacity[i].name, it->capacity[i].milli);
    for (uint32_t i = 0; i < it->n_overhead; i++)
        kp_it_set_overhead(dst, t, it->overhead[i].name, it->overhead[i].milli);
    for (uint32_t i = 0; i < it->n_offerings; i++) {
        const kp_offering *o = &it->offerings[i];
        kp_it_add_offering(dst, t, o->zone, o->capacity_type, o->price, o->available);
        if (o->reservation_id)
            t->offerings[t->n_offerings - 1].reservation_id =
                kp_arena_strdup(dst->arena, o->reservation_id);
        t->offerings[t->n_offerings - 1].reservation_capacity = o->reservation_capacity;
    }
}

int kp_aws_launch_candidates(const kp_catalog *catalog, const kp_nodeclaim *claim,
                             kp_aws_ice_cache *ice, const kp_aws_launch_reservations *crs,
                             kp_catalog **out)
{
    kp_arena *a = kp_arena_new();
    kp_aws_launch_choice choice;
    int err = kp_aws_launch_select(catalog, claim, ice, crs, NULL, a, &choice);
    if (err == 0) {
        kp_catalog *copy = kp_catalog_new(catalog->description);
        for (uint32_t i = 0; i < choice.n_types; i++)
            copy_type(copy, choice.types[i]);
        *out = copy;
    }
    kp_arena_free(a);
    return err;
}
