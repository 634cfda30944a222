/*
 * NodeClaims being planned: can a pod join one (Karpenter's NodeClaim.CanAdd)
 * and, if so, join it (NodeClaim.Add). Each join narrows the claim's
 * requirements and the instance types that can still hold all its pods.
 * Work for an attempt lives in the scratch arena and is thrown away unless
 * the pod joins.
 */
#include "scheduling/solver_internal.h"
#include "api/wellknown.h"
#include "base/buf.h"
#include "cloud/aws_ebs_limits.h"

#include <stdio.h>
#include <string.h>

/* What the instance-type filter saw, for Karpenter-style explanations. */
typedef struct filter_report {
    bool req_met, fits, offering;
    bool req_and_fits, req_and_offering, fits_and_offering;
    bool min_values_failed;
} filter_report;

static bool pod_ports_conflict(const solver *s, const claim *c, const kp_spod *p)
{
    for (uint32_t i = 0; i < c->n_pods && p->n_ports; i++) {
        const kp_spod *q = &s->snap->pods[c->pods[i]];
        if (ports_conflict(p->ports, p->n_ports, q->ports, q->n_ports))
            return true;
    }
    return false;
}

/* minValues: the surviving types must still offer enough distinct values. */
bool min_values_ok(solver *s, const kp_requirements *reqs, const uint32_t *its, uint32_t n)
{
    for (uint32_t k = 0; k < reqs->count; k++) {
        const kp_requirement *r = &reqs->items[k];
        if (r->min_values <= 0)
            continue;
        kp_sym seen[256];
        uint32_t n_seen = 0;
        for (uint32_t i = 0; i < n && n_seen < (uint32_t)r->min_values; i++) {
            const kp_requirement *ir = kp_requirements_get(&s->snap->its[its[i]].reqs, r->key);
            for (uint32_t v = 0; ir && v < ir->n_values && n_seen < 256; v++) {
                bool dup = false;
                for (uint32_t j = 0; j < n_seen && !dup; j++)
                    dup = seen[j] == ir->values[v];
                if (!dup)
                    seen[n_seen++] = ir->values[v];
            }
        }
        if (n_seen < (uint32_t)r->min_values)
            return false;
    }
    return true;
}

/* Keys no instance type defines (hostname, custom labels) cannot rule one out. */
static bool key_on_some_type(const solver *s, kp_sym key)
{
    return kp_symmap_get(&s->it_keys, key) != UINT32_MAX;
}

/* The requirements of `node` that differ from `base`: only those can rule out
 * an option that met `base` already. */
static void changed_keys(solver *s, const kp_requirements *node, const kp_requirements *base,
                         kp_requirements *out, bool *offering_changed)
{
    kp_requirements_init(out);
    *offering_changed = false;
    for (uint32_t i = 0; i < node->count; i++) {
        const kp_requirement *r = &node->items[i];
        const kp_requirement *b = kp_requirements_get(base, r->key);
        kp_requirements one = {(kp_requirement *)r, 1, 1}, other = {(kp_requirement *)b, b ? 1 : 0, 1};
        if ((b && reqs_equal(&one, &other)) || !key_on_some_type(s, r->key))
            continue;
        kp_requirements_add(out, s->symtab, s->scratch, r);
        if (r->key == KP_SYM_ZONE || r->key == KP_SYM_CAPACITY_TYPE)
            *offering_changed = true;
    }
}

/* Every check, for pods that narrowed the claim's requirements or use host ports. */
static uint32_t filter_general(solver *s, const claim *c, const kp_spod *p, const kp_requirements *reqs,
                               const kp_requirements *changed, bool offering_changed,
                               const kp_resvec *requests, uint32_t *out, kp_resvec *max_room,
                               filter_report *rep)
{
    const tstate *ts = &s->ts[c->tmpl];
    offer_filter f = offer_filter_of(reqs);
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_its; i++) {
        const kp_sit *it = &s->snap->its[c->its[i]];
        int32_t g = ts->group_of[c->its[i]];
        const dgroup *dg = g >= 0 ? &ts->dgroups[g] : NULL;
        if (dg && dg->n_ports && ports_conflict(p->ports, p->n_ports, dg->ports, dg->n_ports))
            continue;
        bool compat = changed->count == 0 || kp_requirements_intersects(s->symtab, &it->reqs, changed, NULL);
        bool offering = !offering_changed;
        for (uint32_t o = 0; o < it->n_offerings && !offering; o++)
            offering = offer_ok(s, &f, &it->offerings[o]);
        const kp_resvec *room = &ts->room[c->its[i]];
        bool fits = offering && kp_resvec_fits(requests, room, s->n_res);
        rep->req_met |= compat;
        rep->fits |= fits;
        rep->offering |= offering;
        rep->req_and_fits |= compat && fits && !offering;
        rep->req_and_offering |= compat && offering && !fits;
        rep->fits_and_offering |= fits && offering && !compat;
        if (compat && fits && offering) {
            out[n++] = c->its[i];
            kp_resvec_max(max_room, room, s->n_res);
        }
    }
    return n;
}

/* What a filter kept besides the list: a bound on the largest room (for
 * quick rejections), one option known to fit, and whether the list is the
 * claim's own, unchanged. */
typedef struct kept {
    kp_resvec max;
    kp_resvec charge; /* new claims: the largest capacity among the options */
    uint32_t witness;
    bool same;
} kept;

static void keep(const solver *s, const claim *c, kept *k, const kp_resvec *room, uint32_t it)
{
    if (!c->n_pods) {
        kp_resvec_max(&k->max, room, s->n_res);
        kp_resvec_max(&k->charge, &s->snap->its[it].capacity, s->n_res);
    }
    k->witness = it;
}

static bool any_min_values(const kp_requirements *reqs)
{
    for (uint32_t i = 0; i < reqs->count; i++)
        if (reqs->items[i].min_values > 0)
            return true;
    return false;
}

/* Only resources can rule an option out. Requests only grow, so an option
 * that does not fit now never will: unless minValues needs the exact list,
 * the claim keeps its list while one option (the witness) still fits, and
 * claims_settle drops the rest at the end (the same list a drop at every
 * step would leave). */
static uint32_t filter_fits(solver *s, const claim *c, const kp_requirements *reqs, const kp_resvec *requests,
                            uint32_t *out, kept *k)
{
    const tstate *ts = &s->ts[c->tmpl];
    if (c->n_pods && kp_resvec_fits(requests, &ts->room[c->witness], s->n_res) && !any_min_values(reqs)) {
        k->max = c->max_avail;
        k->witness = c->witness;
        k->same = true;
        return c->n_its;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_its; i++) {
        const kp_resvec *room = &ts->room[c->its[i]];
        if (kp_resvec_fits(requests, room, s->n_res)) {
            keep(s, c, k, room, c->its[i]);
            out[n++] = c->its[i];
        }
    }
    return n;
}

/* Options the requirements admit (memo bits), free of DaemonSet port
 * conflicts, with room for the requests. */
static uint32_t filter_known(solver *s, const claim *c, const kp_spod *p, const uint64_t *ok,
                             const kp_resvec *requests, uint32_t *out, kept *k)
{
    const tstate *ts = &s->ts[c->tmpl];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_its; i++) {
        uint32_t it = c->its[i];
        if (!((ok[it / 64] >> (it % 64)) & 1))
            continue;
        int32_t g = ts->group_of[it];
        const dgroup *dg = g >= 0 ? &ts->dgroups[g] : NULL;
        if (dg && dg->n_ports && ports_conflict(p->ports, p->n_ports, dg->ports, dg->n_ports))
            continue;
        const kp_resvec *room = &ts->room[it];
        if (kp_resvec_fits(requests, room, s->n_res)) {
            keep(s, c, k, room, it);
            out[n++] = it;
        }
    }
    return n;
}

/* Karpenter's filterInstanceTypesByRequirements over the claim's options,
 * which all met `base` (the claim's, or for a new claim its NodePool's,
 * requirements) and had an offering under it. `rep` is filled in only when
 * nothing survives and `report` is set. */
static uint32_t filter_its(solver *s, const claim *c, const kp_spod *p, const kp_requirements *reqs,
                           const kp_requirements *base, const kp_resvec *requests, uint32_t *out, kept *k,
                           filter_report *rep, bool report)
{
    kp_requirements changed;
    bool offering_changed;
    changed_keys(s, reqs, base, &changed, &offering_changed);
    uint32_t n = 0;
    memset(rep, 0, sizeof(*rep));
    memset(k, 0, sizeof(*k));
    if (c->n_pods)
        k->max = c->max_avail; /* the old largest room stays a valid bound for quick rejections */
    bool memo = !c->n_pods && p->n_ports == 0 && c->n_its == s->ts[c->tmpl].n_its && !any_min_values(reqs);
    const fresh_options *f = memo ? fresh_find(s, c->tmpl, reqs, requests) : NULL;
    if (f) {
        memcpy(out, f->its, f->n * sizeof(uint32_t));
        k->max = f->max;
        k->charge = f->charge;
        k->witness = f->witness;
        return f->n;
    }
    if (changed.count == 0 && !offering_changed && p->n_ports == 0) {
        n = filter_fits(s, c, reqs, requests, out, k);
        rep->req_met = rep->offering = true;
        rep->fits = n > 0;
        rep->req_and_offering = n < c->n_its;
    } else {
        const uint64_t *ok = type_verdicts(s, c->tmpl, reqs);
        if (ok)
            n = filter_known(s, c, p, ok, requests, out, k);
        if (!ok || (n == 0 && report)) {
            /* no memo, or the reasons are wanted: every check, type by type */
            kp_resvec max_room;
            kp_resvec_zero(&max_room);
            n = filter_general(s, c, p, reqs, &changed, offering_changed, requests, out, &max_room, rep);
            for (uint32_t i = 0; i < n; i++)
                keep(s, c, k, &s->ts[c->tmpl].room[out[i]], out[i]);
        }
    }
    if (k->same)
        return n; /* no minValues to check */
    if (n > 0 && !s->opts->min_values_best_effort && !min_values_ok(s, reqs, out, n)) {
        rep->min_values_failed = true;
        return 0;
    }
    if (memo && n > 0) {
        fresh_options o = {out, n, k->max, k->charge, k->witness};
        fresh_put(s, c->tmpl, reqs, requests, &o);
    }
    return n;
}

/* Without the keys that exist only for the simulation (registered,
 * initialized): users never wrote them and cannot act on them. */
static const kp_requirements *user_visible(solver *s, const kp_requirements *reqs)
{
    kp_requirements *out = KP_ARENA_NEW(s->arena, kp_requirements, 1);
    kp_sym registered = kp_sym_lookup(s->symtab, KP_LABEL_REGISTERED);
    kp_sym initialized = kp_sym_lookup(s->symtab, KP_LABEL_INITIALIZED);
    out->items = KP_ARENA_NEW(s->arena, kp_requirement, reqs->count ? reqs->count : 1);
    for (uint32_t i = 0; i < reqs->count; i++)
        if (reqs->items[i].key != registered && reqs->items[i].key != initialized)
            out->items[out->count++] = reqs->items[i];
    out->cap = out->count;
    return out;
}

static const char *filter_text(solver *s, const filter_report *r, const kp_requirements *reqs,
                               const kp_resvec *requests)
{
    const char *what;
    if (r->min_values_failed)
        what = "the instance types left cannot meet minValues";
    else if (!r->req_met && !r->fits && !r->offering)
        what = "no instance type met the requirements, had enough resources, or had an available offering";
    else if (!r->req_met && !r->fits)
        what = "no instance type met the requirements or had enough resources";
    else if (!r->req_met && !r->offering)
        what = "no instance type met the requirements or had an available offering";
    else if (!r->fits && !r->offering)
        what = "no instance type had enough resources or an available offering";
    else if (!r->req_met)
        what = "no instance type met the requirements";
    else if (!r->fits)
        what = "no instance type has enough resources";
    else if (!r->offering)
        what = "no instance type has an available offering in the allowed zones and capacity types";
    else
        what = "no single instance type met the requirements, had enough resources and an available offering";
    char res[256];
    kp_resvec_format(&s->snap->restab, requests, res, sizeof(res));
    const char *req_text = kp_requirements_string(s->symtab, s->arena, user_visible(s, reqs));
    if (requests->v[KP_RES_CPU] >= INT64_C(1000000000))
        what = kp_arena_printf(s->arena, "%s (cpu request of a million cores or more: m vs M typo?)", what);
    return kp_arena_printf(s->arena, "%s; requests %s; requirements %s", what, res, req_text);
}

static void commit(solver *s, claim *c, podstate *st, const kp_requirements *reqs,
                   const kp_resvec *requests, const uint32_t *its, uint32_t n_its, const kept *k)
{
    const kp_template *t = &s->snap->templates[c->tmpl];
    if (c->n_pods == c->cap_pods) {
        uint32_t cap = c->cap_pods ? c->cap_pods * 2 : 8;
        c->pods = kp_arena_grow(s->arena, c->pods, c->n_pods, cap, sizeof(uint32_t));
        c->cap_pods = cap;
    }
    c->pods[c->n_pods++] = st->pod;
    if (c->n_pods == 1)
        c->its = kp_arena_memdup(s->arena, its, n_its * sizeof(uint32_t)); /* out of scratch */
    else if (!k->same)
        memcpy(c->its, its, n_its * sizeof(uint32_t)); /* options only shrink: reuse the array */
    c->n_its = n_its;
    c->requests = *requests;
    if (c->n_pods == 1 || !reqs_equal(reqs, &c->reqs))
        reqs_persist(&c->reqs, s->arena, reqs);
    c->max_avail = k->max;
    c->witness = k->witness;
    if (c->n_pods == 1)
        c->charged = k->charge;
    topo_register(s, KP_SYM_HOSTNAME, c->hostname);
    topo_record(s, st, t->taints, t->n_taints, &c->reqs, KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN);
}

/* Drop the options the final requests left behind (see filter_fits). */
void claims_settle(solver *s)
{
    for (uint32_t i = 0; i < s->n_claims; i++) {
        claim *c = &s->claims[i];
        const tstate *ts = &s->ts[c->tmpl];
        uint32_t n = 0;
        for (uint32_t j = 0; j < c->n_its; j++)
            if (kp_resvec_fits(&c->requests, &ts->room[c->its[j]], s->n_res))
                c->its[n++] = c->its[j];
        c->n_its = n;
    }
}

/* A new claim's options under the dollar caps, priced with its first pod's
 * requirements: what is kept is what the claim will be charged for. */
static uint32_t caps_keep(solver *s, const claim *c, const kp_requirements *reqs, uint32_t *its, uint32_t n, kept *k,
                          const char **note)
{
    uint32_t left = caps_cost_filter(s, c->tmpl, reqs, its, n, note);
    if (left == n)
        return n;
    if (left && !s->opts->min_values_best_effort && !min_values_ok(s, reqs, its, left)) {
        if (note && *note)
            *note = kp_arena_printf(s->arena, "%s, leaving too few instance types for minValues", *note);
        return 0;
    }
    memset(k, 0, sizeof(*k));
    for (uint32_t i = 0; i < left; i++)
        keep(s, c, k, &s->ts[c->tmpl].room[its[i]], its[i]);
    return left;
}

/* Drop the options whose instance type cannot attach the claim's EBS
 * volumes with the pod's. Claims only gain volumes, so a dropped option
 * never comes back; the lazily kept list (filter_fits) is settled here. */
static uint32_t volume_keep(solver *s, const claim *c, const kp_spod *p, const kp_requirements *reqs,
                            const kp_resvec *requests, uint32_t *its, uint32_t n, kept *k, uint32_t *need)
{
    if (k->same)
        memcpy(its, c->its, n * sizeof(uint32_t));
    uint32_t left = volumes_keep_types(s, c, p, its, n, need);
    if (left == n)
        return n;
    kept fresh;
    memset(&fresh, 0, sizeof(fresh));
    if (c->n_pods)
        fresh.max = k->max;
    uint32_t fit = 0;
    for (uint32_t i = 0; i < left; i++) {
        const kp_resvec *room = &s->ts[c->tmpl].room[its[i]];
        if (kp_resvec_fits(requests, room, s->n_res)) {
            keep(s, c, &fresh, room, its[i]);
            its[fit++] = its[i];
        }
    }
    *k = fresh;
    if (fit && !s->opts->min_values_best_effort && !min_values_ok(s, reqs, its, fit))
        return 0;
    return fit;
}

/* Try one volume-topology alternative (or none when `vol` is NULL). `node`
 * holds the claim's requirements with the pod's added; it is scratch. */
static bool try_alternative(solver *s, claim *c, podstate *st, kp_requirements *node,
                            const kp_requirements *vol, const char **why)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    const unsigned allow = KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN;
    kp_requirements domains;
    kp_requirements_conflict conflict;
    if (vol) {
        if (!kp_requirements_compatible(s->symtab, node, vol, allow, &conflict)) {
            if (why)
                *why = kp_arena_printf(s->arena, "incompatible volume topology: %s",
                                       conflict_text(s, node, &conflict));
            return false;
        }
        kp_requirements_add_all(node, s->symtab, s->scratch, vol);
    }
    if (!topo_add_requirements(s, st, node, &domains, why))
        return false;
    if (!kp_requirements_compatible(s->symtab, node, &domains, allow, &conflict)) {
        if (why)
            *why = kp_arena_printf(s->arena, "topology: %s", conflict_text(s, node, &conflict));
        return false;
    }
    kp_requirements_add_all(node, s->symtab, s->scratch, &domains);
    kp_resvec requests = c->requests;
    kp_resvec_add(&requests, &p->requests, s->n_res);
    uint32_t *its = kp_arena_alloc(s->scratch, (c->n_its ? c->n_its : 1) * sizeof(uint32_t)); /* filled before read */
    filter_report rep;
    kept k;
    const kp_requirements *base = c->n_pods ? &c->reqs : &s->snap->templates[c->tmpl].reqs;
    uint32_t n = filter_its(s, c, p, node, base, &requests, its, &k, &rep, why != NULL);
    uint32_t volumes = 0;
    bool too_many_volumes = false;
    if (n > 0 && p->n_csi_volumes) {
        n = volume_keep(s, c, p, node, &requests, its, n, &k, &volumes);
        too_many_volumes = n == 0;
    }
    const char *capped = NULL;
    if (n > 0 && c->n_pods == 0 && s->caps)
        n = caps_keep(s, c, node, its, n, &k, why ? &capped : NULL);
    if (n == 0) {
        if (why && too_many_volumes)
            *why = kp_arena_printf(s->arena, "no instance type can attach %u volumes of %s", volumes,
                                   KP_EBS_CSI_DRIVER);
        else if (why)
            *why = capped ? capped : filter_text(s, &rep, node, &requests);
        return false;
    }
    commit(s, c, st, node, &requests, its, n, &k);
    return true;
}

static const char *taint_text(solver *s, const kp_taint *taint)
{
    char buf[512];
    kp_taint_format(taint, buf, sizeof(buf));
    return kp_arena_printf(s->arena, "did not tolerate taint %s", buf);
}

bool claim_try(solver *s, claim *c, podstate *st, bool fresh, const char **why)
{
    const kp_template *t = &s->snap->templates[c->tmpl];
    const kp_spod *p = &s->snap->pods[st->pod];
    const unsigned allow = KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN;
    kp_requirements_conflict conflict;
    long bad;
    if (!fresh) {
        /* Cheap rejections first: Karpenter would reach the same verdict later. */
        for (uint32_t r = 0; r < s->n_res; r++)
            if (p->requests.v[r] > c->max_avail.v[r] - c->requests.v[r])
                return false;
        if (pod_ports_conflict(s, c, p) ||
            topo_quick_rejects(s, st, &c->reqs))
            return false;
    }
    if (!ps_tolerates(s, st, t->taints, t->n_taints, &bad)) {
        if (why)
            *why = taint_text(s, &t->taints[bad]);
        return false;
    }
    if (!kp_requirements_compatible(s->symtab, &c->reqs, &st->reqs, allow, &conflict)) {
        if (why)
            *why = kp_arena_printf(s->arena, "incompatible requirements: %s",
                                   conflict_text(s, &c->reqs, &conflict));
        return false;
    }
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    kp_requirements node;
    bool ok = false;
    for (uint32_t i = 0; !ok && (i < p->n_volume_alts || (i == 0 && p->n_volume_alts == 0)); i++) {
        kp_requirements_copy(&node, s->scratch, &c->reqs);
        kp_requirements_add_all(&node, s->symtab, s->scratch, &st->reqs);
        ok = try_alternative(s, c, st, &node, p->n_volume_alts ? &p->volume_alts[i] : NULL, why);
    }
    kp_arena_rewind(s->scratch, m);
    return ok;
}

/* Karpenter's filterByRemainingResources: types whose capacity would break a limit. */
static uint32_t within_limits(solver *s, uint32_t tmpl, uint32_t *out)
{
    const kp_template *t = &s->snap->templates[tmpl];
    tstate *ts = &s->ts[tmpl];
    uint32_t n = 0;
    bool all = true;
    if (ts->exhausted)
        return 0;
    for (uint32_t r = 0; r < s->n_res && all; r++)
        all = !t->limited[r] || ts->largest.v[r] <= ts->remaining.v[r];
    if (all) { /* the usual case: even the largest type fits in what is left */
        memcpy(out, ts->its, ts->n_its * sizeof(uint32_t));
        return ts->n_its;
    }
    for (uint32_t i = 0; i < ts->n_its; i++) {
        const kp_sit *it = &s->snap->its[ts->its[i]];
        bool ok = true;
        for (uint32_t r = 0; r < s->n_res && ok; r++)
            ok = !t->limited[r] || it->capacity.v[r] <= ts->remaining.v[r];
        if (ok)
            out[n++] = ts->its[i];
    }
    ts->exhausted = n == 0; /* what is left of the limits only shrinks while pods are placed */
    return n;
}

static const char *limits_text(solver *s, uint32_t tmpl)
{
    const kp_template *t = &s->snap->templates[tmpl];
    if (s->ts[tmpl].limits_text)
        return s->ts[tmpl].limits_text;
    /* Put together in the arena (once per template), as long as its parts. */
    const char *list = "";
    for (uint32_t r = 0; r < s->n_res; r++) {
        if (!t->limited[r])
            continue;
        char q[KP_QUANTITY_STRLEN];
        enum kp_quantity_format f = r == KP_RES_MEMORY || r == KP_RES_EPHEMERAL ? KP_QUANTITY_BINARY_SI
                                                                                : KP_QUANTITY_DECIMAL_SI;
        kp_quantity_format(kp_quantity_from_milli128(t->limits.v[r], f), q, sizeof(q));
        list = kp_arena_printf(s->arena, "%s%s%s %s", list, *list ? ", " : "", s->snap->restab.names[r], q);
    }
    const char *out = kp_arena_printf(s->arena, "all compatible instance types exceed nodepool \"%s\" limits: %s",
                                      t->name, list);
    s->ts[tmpl].limits_text = out;
    return out;
}

/* Reserve the largest capacity among the options: whichever type launches,
 * the limit holds (Karpenter's subtractMax). */
static void charge_limits(solver *s, const claim *c)
{
    tstate *ts = &s->ts[c->tmpl];
    kp_limvec_sub(&ts->remaining, &c->charged, s->n_res);
    ts->nodes_remaining--;
}

static claim *push_claim(solver *s, const claim *c)
{
    if (s->n_claims == s->cap_claims) {
        uint32_t cap = s->cap_claims ? s->cap_claims * 2 : 64;
        s->claims = kp_arena_grow(s->arena, s->claims, s->n_claims, cap, sizeof(claim));
        s->cap_claims = cap;
    }
    s->claims[s->n_claims] = *c;
    return &s->claims[s->n_claims++];
}

bool claim_new(solver *s, uint32_t tmpl, podstate *st, const char **why)
{
    const kp_template *t = &s->snap->templates[tmpl];
    tstate *ts = &s->ts[tmpl];
    if (t->limit_nodes && ts->nodes_remaining <= 0) {
        if (why)
            *why = kp_arena_printf(s->arena, "nodepool \"%s\" node limit of %lld is reached", t->name,
                                   (long long)t->node_limit);
        return false;
    }
    if (!caps_node_allowed(s, tmpl, why))
        return false;
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    claim c;
    memset(&c, 0, sizeof(c));
    c.tmpl = tmpl;
    c.its = kp_arena_alloc(s->scratch, (ts->n_its ? ts->n_its : 1) * sizeof(uint32_t)); /* filled below */
    c.n_its = t->has_limits ? within_limits(s, tmpl, c.its) : ts->n_its;
    if (!t->has_limits)
        memcpy(c.its, ts->its, ts->n_its * sizeof(uint32_t));
    uint32_t before_caps = c.n_its;
    const char *capped = NULL;
    c.n_its = caps_filter(s, tmpl, c.its, c.n_its, why ? &capped : NULL);
    if (c.n_its == 0) {
        if (why)
            *why = before_caps && capped ? capped
                   : t->has_limits       ? limits_text(s, tmpl)
                                         : kp_arena_printf(s->arena, "nodepool \"%s\" has no instance types", t->name);
        kp_arena_rewind(s->scratch, m);
        return false;
    }
    char host[48];
    snprintf(host, sizeof(host), "hostname-placeholder-%04u", s->next_hostname + 1);
    c.hostname = kp_sym_intern(s->symtab, host);
    kp_requirements_copy(&c.reqs, s->scratch, &t->reqs);
    kp_requirement h = req_single(s->scratch, KP_SYM_HOSTNAME, c.hostname);
    kp_requirements_add(&c.reqs, s->symtab, s->scratch, &h);
    bool ok = claim_try(s, &c, st, true, why);
    if (ok) {
        s->next_hostname++;
        claim *made = push_claim(s, &c);
        charge_limits(s, made);
        caps_charge(s, made);
    } else if (why && *why && capped) {
        *why = kp_arena_printf(s->arena, "%s (options left by the caps: %s)", *why, capped);
    }
    kp_arena_rewind(s->scratch, m);
    return ok;
}
