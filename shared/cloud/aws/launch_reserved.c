/*
 * Reserved launches (see launch.h): which reserved offerings are usable and
 * Karpenter's three filters that make one CreateFleet out of them — one kind
 * of reservation (a fleet has one market type), one capacity block (a fleet
 * takes one), one reservation per zone (a fleet takes one offering per pool).
 */
#include "cloud/aws/launch_internal.h"

#include <float.h>
#include <string.h>

#include "cloud/aws/capacityreservation.h"

static const kp_nc_capacity_reservation *reservation_of(const sel *s, const kp_offering *o)
{
    return s->crs ? kp_aws_nc_reservation(s->crs->nc, o->reservation_id) : NULL;
}

bool kp_aws_reservation_usable(sel *s, const kp_offering *o)
{
    const kp_nc_capacity_reservation *cr = o->reservation_id ? reservation_of(s, o) : NULL;
    if (!cr || kp_aws_cr_expiring(cr)) return false;
    if (s->crs->counts && kp_aws_crs_available(s->crs->counts, cr->id) <= 0) return false;
    return kp_aws_sel_allows(s, s->k_cr_id, cr->id) &&
           kp_aws_sel_allows(s, s->k_cr_type, kp_aws_cr_type(cr)) &&
           kp_aws_sel_allows(s, s->k_cr_interruptible, cr->interruptible ? "true" : "false");
}

bool kp_aws_any_usable(const cand *c, size_t n, const char *ct)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++)
            if (c[i].ok[j] && kp_aws_offering_is(&c[i].type->offerings[j], ct)) return true;
    return false;
}

/* The kinds, in Karpenter's order of preference on equal prices. */
enum kind { KIND_DEFAULT, KIND_BLOCK, KIND_INTERRUPTIBLE, KIND_NONE };

static enum kind kind_of(const sel *s, const kp_offering *o)
{
    const kp_nc_capacity_reservation *cr = reservation_of(s, o);
    if (!cr) return KIND_NONE;
    if (strcmp(kp_aws_cr_type(cr), "capacity-block") == 0) return KIND_BLOCK;
    return cr->interruptible ? KIND_INTERRUPTIBLE : KIND_DEFAULT;
}

/* Keep only usable reserved offerings for which keep(s, o, arg) holds. */
static size_t keep_offerings(sel *s, cand *c, size_t n,
                             bool (*keep)(const sel *, const cand *, uint32_t, const void *),
                             const void *arg)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++) {
            const kp_offering *o = &c[i].type->offerings[j];
            c[i].ok[j] = c[i].ok[j] && kp_aws_offering_is(o, RESERVED) && keep(s, &c[i], j, arg);
        }
        if (kp_aws_cand_reprice(&c[i])) c[k++] = c[i];
    }
    return k;
}

static bool of_kind(const sel *s, const cand *c, uint32_t j, const void *arg)
{
    return kind_of(s, &c->type->offerings[j]) == *(const enum kind *)arg;
}

/* The kind whose cheapest usable offering is cheapest (ties: enum order). */
static enum kind cheapest_kind(const sel *s, const cand *c, size_t n)
{
    double best[KIND_NONE] = {DBL_MAX, DBL_MAX, DBL_MAX};
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c[i].type->n_offerings; j++) {
            const kp_offering *o = &c[i].type->offerings[j];
            enum kind k = kp_aws_offering_is(o, RESERVED) ? kind_of(s, o) : KIND_NONE;
            if (c[i].ok[j] && k != KIND_NONE && o->price < best[k]) best[k] = o->price;
        }
    enum kind pick = KIND_DEFAULT;
    for (int k = KIND_BLOCK; k < KIND_NONE; k++)
        if (best[k] < best[pick]) pick = (enum kind)k;
    return pick;
}

/* A capacity block: the single cheapest offering of the cheapest type. */
static size_t one_block(cand *c, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (c[i].price < c[best].price) best = i;
    cand keep = c[best];
    bool found = false;
    for (uint32_t j = 0; j < keep.type->n_offerings; j++) {
        bool cheapest = keep.ok[j] && !found && keep.type->offerings[j].price == keep.price;
        found = found || cheapest;
        keep.ok[j] = cheapest;
    }
    c[0] = keep;
    return 1;
}

static int32_t room(const sel *s, const kp_offering *o)
{
    return s->crs && s->crs->counts ? kp_aws_crs_available(s->crs->counts, o->reservation_id) : 0;
}

/* One reservation per zone and type: the one with most room (first on ties). */
static bool zone_best(const sel *s, const cand *c, uint32_t j, const void *arg)
{
    (void)arg;
    const kp_offering *o = &c->type->offerings[j];
    for (uint32_t k = 0; k < c->type->n_offerings; k++) {
        const kp_offering *p = &c->type->offerings[k];
        if (k == j || !c->ok[k] || !kp_aws_offering_is(p, RESERVED) || strcmp(p->zone, o->zone))
            continue;
        if (room(s, p) > room(s, o) || (room(s, p) == room(s, o) && k < j)) return false;
    }
    return true;
}

size_t kp_aws_filter_reserved(sel *s, cand *c, size_t n, kp_aws_launch_choice *out)
{
    enum kind k = cheapest_kind(s, c, n);
    n = keep_offerings(s, c, n, of_kind, &k);
    if (n > 0 && k == KIND_BLOCK) n = one_block(c, n);
    if (n > 0) n = keep_offerings(s, c, n, zone_best, NULL);
    out->reservation_type = k == KIND_BLOCK ? "capacity-block" : "default";
    out->reservation_interruptible = k == KIND_INTERRUPTIBLE;
    return n;
}
