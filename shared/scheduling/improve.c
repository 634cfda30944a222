/*
 * Doing better than Karpenter where it is cheap to. Karpenter keeps adding
 * pods to the least-loaded planned NodeClaim as long as some instance type
 * still fits, so a batch of unconstrained pods ends up on as few, as large
 * nodes as possible, and the last size step is often mostly empty (67 vCPU
 * of pods on a 96-vCPU node). This pass takes the NodeClaims whose pods carry
 * no constraint that placement could break (no topology terms, not selected
 * by any topology group, no host ports or volume topology, requirements
 * exactly the NodePool's) and repacks their pods with a cost-efficiency
 * greedy for variable-sized bins: open the instance type whose fill (first
 * fit, largest pods first) costs least per unit of the work it holds, repeat.
 * The result replaces the original NodeClaims only when it is cheaper and
 * stays within the NodePool's limits.
 */
#include "scheduling/solver_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct pod_weight {
    uint32_t pod;
    double weight; /* what the pod costs at the cheapest price per unit of its binding resource */
    const kp_resvec *requests;
} pod_weight;

/* Heaviest first; equal pods together (they form one class). */
static int cmp_weight_desc(const void *a, const void *b)
{
    const pod_weight *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    int c = memcmp(x->requests, y->requests, sizeof(kp_resvec));
    if (c)
        return c;
    return x->pod < y->pod ? -1 : x->pod > y->pod;
}

static bool selected_by_any_group(const solver *s, const kp_spod *p)
{
    const topology *t = &s->topo;
    for (uint32_t g = 0; g < t->n_groups + t->n_inverse; g++) {
        const tgroup *grp = g < t->n_groups ? &t->groups[g] : &t->inverse[g - t->n_groups];
        if (!grp->selector || grp->selector->nothing)
            continue;
        for (uint32_t i = 0; i < grp->n_namespaces; i++)
            if (grp->namespaces[i] == p->ns && kp_selector_matches(grp->selector, &p->labels))
                return true;
    }
    return false;
}

static bool pod_is_free(const solver *s, uint32_t pod)
{
    const kp_spod *p = &s->snap->pods[pod];
    const podstate *st = &s->ps[s->ps_of_pod[pod]];
    return st->n_groups == 0 && st->n_inverse == 0 && p->n_ports == 0 && p->n_volume_alts == 0 &&
           p->n_csi_volumes == 0 /* attach limits: claim_try keeps them */ &&
           !selected_by_any_group(s, p);
}

/* The claim's requirements are its NodePool's plus its hostname, nothing narrowed. */
static bool claim_is_free(const solver *s, const claim *c)
{
    const kp_requirements *t = &s->snap->templates[c->tmpl].reqs;
    if (c->reqs.count != t->count + 1)
        return false;
    for (uint32_t i = 0, j = 0; i < c->reqs.count; i++) {
        const kp_requirement *r = &c->reqs.items[i];
        if (r->key == KP_SYM_HOSTNAME)
            continue;
        kp_requirements one = {(kp_requirement *)r, 1, 1}, other = {&t->items[j++], 1, 1};
        if (r->min_values > 0 || !reqs_equal(&one, &other))
            return false;
    }
    for (uint32_t i = 0; i < c->n_pods; i++)
        if (!pod_is_free(s, c->pods[i]))
            return false;
    return true;
}

/* The cheapest instance type of the NodePool (in price order) whose room holds `need`. */
static int32_t cheapest_fit(const solver *s, const tstate *ts, const kp_resvec *need)
{
    for (uint32_t i = 0; i < ts->n_its; i++)
        if (kp_resvec_fits(need, &ts->room[ts->its[i]], s->n_res))
            return (int32_t)ts->its[i];
    return -1;
}

static double price_of(const solver *s, uint32_t tmpl, int32_t it)
{
    return it < 0 ? -1 : cheapest_price(s, &s->snap->templates[tmpl].reqs, &s->snap->its[it]);
}

/* Weights: cheapest price per unit of cpu and of memory over the NodePool's types. */
static void weigh(solver *s, uint32_t tmpl, pod_weight *pods, uint32_t n)
{
    const tstate *ts = &s->ts[tmpl];
    double unit[2] = {-1, -1};
    for (uint32_t i = 0; i < ts->n_its; i++) {
        const kp_resvec *room = &ts->room[ts->its[i]];
        double price = price_of(s, tmpl, (int32_t)ts->its[i]);
        for (int r = 0; r < 2 && price >= 0; r++)
            if (room->v[r] > 0 && (unit[r] < 0 || price / (double)room->v[r] < unit[r]))
                unit[r] = price / (double)room->v[r];
    }
    for (uint32_t i = 0; i < n; i++) {
        const kp_resvec *req = &s->snap->pods[pods[i].pod].requests;
        pods[i].requests = req;
        double c = (double)req->v[KP_RES_CPU] * (unit[0] > 0 ? unit[0] : 0);
        double m = (double)req->v[KP_RES_MEMORY] * (unit[1] > 0 ? unit[1] : 0);
        pods[i].weight = c > m ? c : m;
    }
    qsort(pods, n, sizeof(*pods), cmp_weight_desc);
}

typedef struct bin {
    int32_t it; /* the type it was filled for */
    kp_resvec requests;
    uint32_t *pods;
    uint32_t n_pods;
} bin;

/* Pods with identical requests form a class; packing works on classes, so
 * a fill costs the number of distinct sizes, not of pods. */
typedef struct pod_class {
    kp_resvec requests;
    double weight;
    uint32_t first; /* index in the weight-sorted pod array */
    uint32_t count;
    uint32_t left;  /* not yet packed */
} pod_class;

static uint32_t make_classes(const solver *s, const pod_weight *pods, uint32_t n, pod_class *out)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const kp_resvec *req = &s->snap->pods[pods[i].pod].requests;
        if (k > 0 && memcmp(&out[k - 1].requests, req, sizeof(*req)) == 0 && out[k - 1].weight == pods[i].weight) {
            out[k - 1].count++;
            out[k - 1].left++;
            continue;
        }
        out[k].requests = *req;
        out[k].weight = pods[i].weight;
        out[k].first = i;
        out[k].count = out[k].left = 1;
        k++;
    }
    return k;
}

/* How many copies of `req` fit in `room - used`. */
static uint32_t copies_that_fit(const solver *s, const kp_resvec *req, const kp_resvec *room, const kp_resvec *used,
                                uint32_t want)
{
    uint64_t n = want;
    for (uint32_t r = 0; r < s->n_res && n > 0; r++) {
        if (req->v[r] <= 0)
            continue;
        int64_t free = room->v[r] - used->v[r];
        uint64_t k = free > 0 ? (uint64_t)(free / req->v[r]) : 0;
        if (k < n)
            n = k;
    }
    return (uint32_t)n;
}

/* First fit, largest class first, into one node of `room`: takes[c] copies of class c. */
static uint32_t fill(const solver *s, const pod_class *classes, uint32_t n, const kp_resvec *room, uint32_t *takes,
                     kp_resvec *used, double *value)
{
    uint32_t total = 0;
    kp_resvec_zero(used);
    *value = 0;
    for (uint32_t c = 0; c < n; c++) {
        takes[c] = classes[c].left ? copies_that_fit(s, &classes[c].requests, room, used, classes[c].left) : 0;
        for (uint32_t r = 0; r < s->n_res && takes[c]; r++)
            used->v[r] += classes[c].requests.v[r] * (int64_t)takes[c];
        *value += classes[c].weight * takes[c];
        total += takes[c];
    }
    return total;
}

/* Every type the NodePool can launch, in price order. */
static uint32_t candidates(solver *s, uint32_t tmpl, uint32_t *out)
{
    const tstate *ts = &s->ts[tmpl];
    uint32_t n = 0;
    for (uint32_t i = 0; i < ts->n_its; i++)
        if (price_of(s, tmpl, (int32_t)ts->its[i]) >= 0)
            out[n++] = ts->its[i];
    return n;
}

static void commit_bin(solver *s, bin *b, int32_t it, const kp_resvec *used, pod_class *classes, uint32_t n_classes,
                       const uint32_t *takes, const pod_weight *pods, uint32_t k)
{
    b->it = it;
    b->requests = *used;
    b->pods = KP_ARENA_NEW(s->arena, uint32_t, k);
    b->n_pods = 0;
    for (uint32_t c = 0; c < n_classes; c++) {
        pod_class *pc = &classes[c];
        for (uint32_t i = 0; i < takes[c]; i++)
            b->pods[b->n_pods++] = pods[pc->first + (pc->count - pc->left) + i].pod;
        pc->left -= takes[c];
    }
}

/* The greedy packing; 0 when some pod fits no type (then nothing changes). */
static uint32_t pack(solver *s, uint32_t tmpl, const pod_weight *pods, uint32_t n, bin *bins)
{
    const tstate *ts = &s->ts[tmpl];
    pod_class *classes = KP_ARENA_NEW(s->scratch, pod_class, n);
    uint32_t n_classes = make_classes(s, pods, n, classes);
    uint32_t *takes = KP_ARENA_NEW(s->scratch, uint32_t, n_classes), *best = KP_ARENA_NEW(s->scratch, uint32_t, n_classes);
    uint32_t *types = KP_ARENA_NEW(s->scratch, uint32_t, ts->n_its ? ts->n_its : 1);
    uint32_t left = n, nb = 0, n_types = candidates(s, tmpl, types);
    while (left > 0) {
        uint32_t best_k = 0;
        int32_t best_it = -1;
        double best_eff = 0;
        kp_resvec best_used, used;
        for (uint32_t t = 0; t < n_types; t++) {
            double value, price = price_of(s, tmpl, (int32_t)types[t]);
            uint32_t k = fill(s, classes, n_classes, &ts->room[types[t]], takes, &used, &value);
            double eff = value > 0 ? price / value : 1e300;
            if (k == 0 || (best_it >= 0 && eff >= best_eff))
                continue;
            best_it = (int32_t)types[t], best_eff = eff, best_k = k, best_used = used;
            memcpy(best, takes, n_classes * sizeof(uint32_t));
        }
        if (best_it < 0)
            return 0;
        commit_bin(s, &bins[nb++], best_it, &best_used, classes, n_classes, best, pods, best_k);
        left -= best_k;
    }
    return nb;
}

enum { MERGE_MAX_BINS = 512 };

/* Merge two bins when one node of the cheapest type holding both costs less
 * than the two nodes did; repeat until no pair improves. The greedy opens
 * nodes one at a time and can leave two half-empty ones at the end. */
static uint32_t merge_bins(solver *s, uint32_t tmpl, bin *bins, uint32_t nb)
{
    const tstate *ts = &s->ts[tmpl];
    bool merged = nb <= MERGE_MAX_BINS;
    while (merged) {
        merged = false;
        for (uint32_t i = 0; i < nb && !merged; i++) {
            double pi = price_of(s, tmpl, cheapest_fit(s, ts, &bins[i].requests));
            for (uint32_t j = i + 1; j < nb && !merged; j++) {
                kp_resvec both = bins[i].requests;
                kp_resvec_add(&both, &bins[j].requests, s->n_res);
                int32_t it = cheapest_fit(s, ts, &both);
                double pj = price_of(s, tmpl, cheapest_fit(s, ts, &bins[j].requests));
                if (it < 0 || price_of(s, tmpl, it) >= (pi + pj) * (1 - 1e-9))
                    continue;
                uint32_t *pods = KP_ARENA_NEW(s->arena, uint32_t, bins[i].n_pods + bins[j].n_pods);
                memcpy(pods, bins[i].pods, bins[i].n_pods * sizeof(uint32_t));
                memcpy(pods + bins[i].n_pods, bins[j].pods, bins[j].n_pods * sizeof(uint32_t));
                bins[i] = (bin){it, both, pods, bins[i].n_pods + bins[j].n_pods};
                bins[j] = bins[--nb];
                merged = true;
            }
        }
    }
    return nb;
}

/* What a claim with these requests charges against limits: its largest option. */
static void charge(const solver *s, uint32_t tmpl, const kp_resvec *requests, kp_resvec *out)
{
    const tstate *ts = &s->ts[tmpl];
    for (uint32_t i = 0; i < ts->n_its; i++)
        if (kp_resvec_fits(requests, &ts->room[ts->its[i]], s->n_res))
            kp_resvec_max(out, &s->snap->its[ts->its[i]].capacity, s->n_res);
}

static bool within_limits(const solver *s, uint32_t tmpl, const kp_resvec *freed, const kp_resvec *taken,
                          int64_t node_delta)
{
    const kp_template *t = &s->snap->templates[tmpl];
    const tstate *ts = &s->ts[tmpl];
    if (t->limit_nodes && ts->nodes_remaining - node_delta < 0)
        return false;
    for (uint32_t r = 0; r < s->n_res; r++)
        if (t->limited[r] && ts->remaining.v[r] + freed->v[r] - taken->v[r] < 0) /* 128-bit: no overflow */
            return false;
    return true;
}

static claim bin_claim(solver *s, uint32_t tmpl, const bin *b)
{
    const tstate *ts = &s->ts[tmpl];
    claim c;
    memset(&c, 0, sizeof(c));
    c.tmpl = tmpl;
    c.requests = b->requests;
    c.pods = b->pods;
    c.n_pods = c.cap_pods = b->n_pods;
    c.its = KP_ARENA_NEW(s->arena, uint32_t, ts->n_its ? ts->n_its : 1);
    for (uint32_t i = 0; i < ts->n_its; i++)
        if (kp_resvec_fits(&b->requests, &ts->room[ts->its[i]], s->n_res))
            c.its[c.n_its++] = ts->its[i];
    kp_requirements_copy(&c.reqs, s->arena, &s->snap->templates[tmpl].reqs);
    return c;
}

static bool has_min_values(const kp_requirements *reqs)
{
    for (uint32_t i = 0; i < reqs->count; i++)
        if (reqs->items[i].min_values > 0)
            return true;
    return false;
}

/* Replace claims marked in `drop` by `bins`. */
static void replace_claims(solver *s, uint32_t tmpl, const bool *drop, const bin *bins, uint32_t nb)
{
    claim *out = KP_ARENA_NEW(s->arena, claim, s->n_claims + nb);
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_claims; i++)
        if (!drop[i])
            out[n++] = s->claims[i];
    for (uint32_t i = 0; i < nb; i++)
        out[n++] = bin_claim(s, tmpl, &bins[i]);
    s->claims = out;
    s->n_claims = s->cap_claims = n;
}

static void improve_template(solver *s, uint32_t tmpl)
{
    const kp_template *t = &s->snap->templates[tmpl];
    if (has_min_values(&t->reqs) || caps_bind(s, tmpl))
        return;
    bool *drop = KP_ARENA_NEW(s->scratch, bool, s->n_claims ? s->n_claims : 1);
    uint32_t n_free = 0, n_pods = 0;
    double old_cost = 0;
    kp_resvec freed;
    kp_resvec_zero(&freed);
    for (uint32_t i = 0; i < s->n_claims; i++) {
        const claim *c = &s->claims[i];
        if (c->tmpl != tmpl || !claim_is_free(s, c))
            continue;
        drop[i] = true;
        n_free++;
        n_pods += c->n_pods;
        old_cost += price_of(s, tmpl, cheapest_fit(s, &s->ts[tmpl], &c->requests));
        charge(s, tmpl, &c->requests, &freed);
    }
    if (n_free == 0)
        return;
    pod_weight *pods = KP_ARENA_NEW(s->scratch, pod_weight, n_pods);
    for (uint32_t i = 0, k = 0; i < s->n_claims; i++)
        for (uint32_t j = 0; drop[i] && j < s->claims[i].n_pods; j++)
            pods[k++].pod = s->claims[i].pods[j];
    weigh(s, tmpl, pods, n_pods);
    bin *bins = KP_ARENA_NEW(s->scratch, bin, n_pods);
    uint32_t nb = merge_bins(s, tmpl, bins, pack(s, tmpl, pods, n_pods, bins));
    double new_cost = 0;
    kp_resvec taken;
    kp_resvec_zero(&taken);
    for (uint32_t i = 0; i < nb; i++) {
        new_cost += price_of(s, tmpl, cheapest_fit(s, &s->ts[tmpl], &bins[i].requests));
        charge(s, tmpl, &bins[i].requests, &taken);
    }
    if (nb == 0 || new_cost >= old_cost * (1 - 1e-9) ||
        !within_limits(s, tmpl, &freed, &taken, (int64_t)nb - (int64_t)n_free))
        return;
    replace_claims(s, tmpl, drop, bins, nb);
    kp_limvec_add(&s->ts[tmpl].remaining, &freed, s->n_res);
    kp_limvec_sub(&s->ts[tmpl].remaining, &taken, s->n_res);
    s->ts[tmpl].nodes_remaining -= (int64_t)nb - (int64_t)n_free;
}

void improve_plan(solver *s)
{
    for (uint32_t t = 0; t < s->snap->n_templates; t++) {
        kp_arena_mark m = kp_arena_mark_get(s->scratch);
        improve_template(s, t);
        kp_arena_rewind(s->scratch, m);
    }
}
