/*
 * Capacity reservations within one solve, as Karpenter's ReservationManager:
 * each reservation has the instances its offerings say it can still take
 * (the least, when NodePools see different counts), and every NodeClaim
 * planned onto reserved capacity holds a place in a reservation and is
 * pinned to it (its capacity-reservation-id requirement). Once a reservation
 * is held by as many NodeClaims as it has places, later NodeClaims do not see
 * its offerings and fall back to spot or on-demand in the same solve.
 *
 * Karpenter holds a place in every reservation a NodeClaim could use (its
 * launch picks one later) and defers the pods that then find none to the next
 * batch. Holding only the cheapest and pinning the claim to it never plans
 * more launches than places either, and leaves the other reservations to the
 * next NodeClaims of the same solve: one batch fills every place.
 */
#include "scheduling/solver_internal.h"
#include "base/xalloc.h"
#include "cloud/aws/capacityreservation.h"

#include <string.h>

static int32_t *slot(const reservations *r, kp_sym id)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->ids[i] == id) return &r->left[i];
    return NULL;
}

void reservations_build(solver *s, reservations *r)
{
    memset(r, 0, sizeof(*r));
    uint32_t cap = 0;
    for (uint32_t t = 0; t < s->snap->n_its; t++) {
        const kp_sit *it = &s->snap->its[t];
        for (uint32_t o = 0; o < it->n_offerings; o++) {
            const kp_soffering *of = &it->offerings[o];
            if (of->capacity_type != KP_SYM_RESERVED || of->reservation == KP_SYM_NONE) continue;
            int32_t *left = slot(r, of->reservation);
            if (left) {
                if (of->reservation_capacity < *left) *left = of->reservation_capacity;
                continue;
            }
            if (r->n == cap) {
                uint32_t ncap = cap ? cap * 2 : 8;
                r->ids = kp_arena_grow(s->scratch, r->ids, r->n, ncap, sizeof(kp_sym));
                r->left = kp_arena_grow(s->scratch, r->left, r->n, ncap, sizeof(int32_t));
                cap = ncap;
            }
            r->ids[r->n] = of->reservation;
            r->left[r->n++] = of->reservation_capacity;
        }
    }
    r->key = r->n ? kp_sym_intern(s->symtab, KP_AWS_LABEL_CR_ID) : KP_SYM_NONE;
}

bool reservation_open(const solver *s, const reservations *r, const kp_requirements *reqs,
                      const kp_soffering *of)
{
    if (of->capacity_type != KP_SYM_RESERVED || r->n == 0) return true;
    if (of->reservation == KP_SYM_NONE)
        return false; /* a reserved offering nobody can count is never planned onto */
    const kp_requirement *want = kp_requirements_get(reqs, r->key);
    if (want && !kp_requirement_has(s->symtab, want, of->reservation)) return false;
    const int32_t *left = slot(r, of->reservation);
    return left && *left > 0;
}

/* The cheapest reserved offering the claim could launch with whose
 * reservation has a place left; NULL when there is none. */
static const kp_soffering *cheapest_open(solver *s, const reservations *r, const kp_plan_claim *pc)
{
    offer_filter f = offer_filter_of(&pc->reqs);
    const kp_soffering *best = NULL;
    for (uint32_t i = 0; i < pc->n_its; i++) {
        const kp_sit *it = &s->snap->its[pc->its[i]];
        for (uint32_t o = 0; o < it->n_offerings; o++) {
            const kp_soffering *of = &it->offerings[o];
            if (of->capacity_type == KP_SYM_RESERVED && (!best || of->price < best->price) &&
                offer_ok(s, &f, of) && reservation_open(s, r, &pc->reqs, of))
                best = of;
        }
    }
    return best;
}

bool reservations_take(solver *s, reservations *r, kp_plan_claim *pc)
{
    if (r->n == 0)
        return true; /* reserved offerings without a count (a catalog file): nothing to track */
    const kp_soffering *of = cheapest_open(s, r, pc);
    if (!of) return false;
    (*slot(r, of->reservation))--;
    pc->price = of->price;
    pc->zone = of->zone;
    kp_sym *id = KP_ARENA_NEW(s->arena, kp_sym, 1);
    *id = of->reservation;
    kp_requirement req;
    memset(&req, 0, sizeof(req));
    req.key = r->key;
    req.values = id;
    req.n_values = 1;
    kp_requirements_add(&pc->reqs, s->symtab, s->arena, &req);
    return true;
}
