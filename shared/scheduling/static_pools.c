/* Static NodePools in plans (see static_pools.h). */
#include "scheduling/static_pools.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- counting */

/* Deleted for good: the Node or NodeClaim has a deletion timestamp, or the
 * instance is terminating. */
static bool going(const kp_snode *n)
{
    const kp_nodeclaim *nc = n->src_claim;
    return (n->src_node && n->src_node->meta.deletion_timestamp.set) ||
           (nc && (nc->meta.deletion_timestamp.set || kp_conditions_is_true(&nc->conditions, "InstanceTerminating")));
}

/* Taken by a disruption command: its claim says so, or the caller marked it. */
static bool pending_disruption(const kp_snode *n)
{
    return n->deleting || (n->src_claim && kp_conditions_is_true(&n->src_claim->conditions, "DisruptionReason"));
}

void kp_static_count_nodes(const kp_snapshot *snap, uint32_t t, const bool *gone, kp_static_count *out)
{
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        const kp_snode *n = &snap->nodes[i];
        /* Karpenter counts NodeClaims: a Node whose NodeClaim is gone is on
         * its way out, not a replica (planned claims have neither object). */
        if (n->template_index != (int32_t)t || !n->managed || (gone && gone[i]) || (n->src_node && !n->src_claim))
            continue;
        if (going(n))
            out->deleting++;
        else if (pending_disruption(n))
            out->pending++;
        else
            out->active++;
    }
}

int64_t kp_static_room(const kp_snapshot *snap, uint32_t t, const kp_static_count *n, int64_t want)
{
    const kp_template *tp = &snap->templates[t];
    if (!tp->limit_nodes)
        return want;
    int64_t room = tp->node_limit - (int64_t)n->active - (int64_t)n->pending - (int64_t)n->deleting;
    return room < want ? (room > 0 ? room : 0) : want;
}

uint32_t kp_static_missing(const kp_snapshot *snap, uint32_t t)
{
    const kp_template *tp = &snap->templates[t];
    kp_static_count n;
    if (!tp->is_static)
        return 0;
    kp_static_count_nodes(snap, t, NULL, &n);
    if ((int64_t)n.active + (int64_t)n.pending >= tp->replicas)
        return 0;
    int64_t want = kp_static_room(snap, t, &n, tp->replicas - (int64_t)n.active);
    return want > UINT32_MAX ? UINT32_MAX : (uint32_t)want;
}

uint32_t kp_static_excess(const kp_snapshot *snap, uint32_t t)
{
    const kp_template *tp = &snap->templates[t];
    kp_static_count n;
    if (!tp->is_static)
        return 0;
    kp_static_count_nodes(snap, t, NULL, &n);
    return (int64_t)n.active > tp->replicas ? (uint32_t)((int64_t)n.active - tp->replicas) : 0;
}

/* --------------------------------------------------------------- claims */

typedef struct priced {
    uint32_t it;
    uint32_t offering;
    double price;
} priced;

/* The cheapest available offering of `it` the template allows; -1 if none. */
static int cheapest_offering(const kp_snapshot *snap, const kp_template *tp, const kp_sit *it)
{
    const kp_requirement *zone = kp_requirements_get(&tp->reqs, KP_SYM_ZONE);
    const kp_requirement *ct = kp_requirements_get(&tp->reqs, KP_SYM_CAPACITY_TYPE);
    int best = -1;
    for (uint32_t o = 0; o < it->n_offerings; o++) {
        const kp_soffering *of = &it->offerings[o];
        if (!of->available || (zone && !kp_requirement_has(snap->symtab, zone, of->zone)) ||
            (ct && !kp_requirement_has(snap->symtab, ct, of->capacity_type)))
            continue;
        if (best < 0 || of->price < it->offerings[best].price)
            best = (int)o;
    }
    return best;
}

/* Cheapest first; equal prices in catalog order, as the providers pick. */
static int cmp_priced(const void *a, const void *b)
{
    const priced *x = a, *y = b;
    if (x->price != y->price)
        return x->price < y->price ? -1 : 1;
    return x->it < y->it ? -1 : x->it > y->it;
}

int kp_static_claim(const kp_snapshot *snap, uint32_t t, kp_arena *arena, kp_plan_claim *out)
{
    const kp_template *tp = &snap->templates[t];
    priced *opts = kp_xcalloc(tp->n_its ? tp->n_its : 1, sizeof(priced));
    uint32_t n = 0;
    for (uint32_t i = 0; i < tp->n_its; i++) {
        int o = cheapest_offering(snap, tp, &snap->its[tp->its[i]]);
        if (o >= 0)
            opts[n++] = (priced){tp->its[i], (uint32_t)o, snap->its[tp->its[i]].offerings[o].price};
    }
    if (n == 0) {
        free(opts);
        return kp_error_set(KP_ENOTFOUND, "nodepool \"%s\": no instance type its requirements allow has an "
                            "available offering", tp->name);
    }
    qsort(opts, n, sizeof(*opts), cmp_priced);
    uint32_t *its = KP_ARENA_NEW(arena, uint32_t, n);
    for (uint32_t i = 0; i < n; i++)
        its[i] = opts[i].it;
    const kp_soffering *launch = &snap->its[opts[0].it].offerings[opts[0].offering];
    memset(out, 0, sizeof(*out));
    out->template_index = t;
    kp_requirements_copy(&out->reqs, arena, &tp->reqs);
    out->its = its;
    out->n_its = n;
    out->price = launch->price;
    out->zone = launch->zone;
    out->capacity_type = launch->capacity_type;
    free(opts);
    return 0;
}

/* ----------------------------------------------------------------- seed */

typedef struct seeded {
    uint32_t node; /* its index in the snapshot */
    kp_plan_claim claim;
} seeded;

struct kp_static_seed {
    kp_arena *arena;
    seeded *items;
    uint32_t n, cap;
    uint32_t first_node; /* snapshot nodes from here on are the seed's */
    const char **notes;
    size_t n_notes, cap_notes;
};

/* A launch's labels: the template's (with its NodePool), the instance
 * type's single values, the offering's zone and capacity type, the name. */
static kp_symlabels launch_labels(kp_snapshot *snap, const kp_template *tp, const kp_plan_claim *c,
                                  const char *host)
{
    const kp_sit *it = &snap->its[c->its[0]];
    uint32_t cap = tp->labels.count + it->reqs.count + 5, n = 0;
    const char **keys = KP_ARENA_NEW(snap->arena, const char *, cap);
    const char **vals = KP_ARENA_NEW(snap->arena, const char *, cap);
    kp_sym fixed[][2] = {{KP_SYM_INSTANCE_TYPE, it->name},
                         {KP_SYM_ZONE, c->zone},
                         {KP_SYM_CAPACITY_TYPE, c->capacity_type}};
    for (uint32_t i = 0; i < 3; i++)
        if (fixed[i][1])
            keys[n] = kp_sym_str(snap->symtab, fixed[i][0]), vals[n++] = kp_sym_str(snap->symtab, fixed[i][1]);
    for (uint32_t i = 0; i < tp->labels.count; i++)
        keys[n] = kp_sym_str(snap->symtab, tp->labels.items[i].key),
        vals[n++] = kp_sym_str(snap->symtab, tp->labels.items[i].value);
    for (uint32_t i = 0; i < it->reqs.count; i++) {
        kp_sym v = kp_requirement_single_value(&it->reqs.items[i]);
        kp_sym k = it->reqs.items[i].key;
        if (v != KP_SYM_NONE && k != KP_SYM_INSTANCE_TYPE && k != KP_SYM_ZONE && k != KP_SYM_CAPACITY_TYPE)
            keys[n] = kp_sym_str(snap->symtab, k), vals[n++] = kp_sym_str(snap->symtab, v);
    }
    keys[n] = kp_sym_str(snap->symtab, KP_SYM_HOSTNAME), vals[n++] = host;
    return kp_snapshot_labels(snap, keys, vals, n);
}

static void add_node(kp_snapshot *snap, uint32_t t, const kp_plan_claim *c, uint32_t k)
{
    const kp_template *tp = &snap->templates[t];
    const kp_sit *it = &snap->its[c->its[0]];
    const char *name = kp_arena_printf(snap->arena, "%s-static-%u", tp->name, k);
    kp_snode *n = kp_snapshot_add_node(snap);
    n->name = name;
    n->nodeclaim = name;
    n->hostname = kp_sym_intern(snap->symtab, name);
    n->labels = launch_labels(snap, tp, c, name);
    n->taints = tp->taints;
    n->n_taints = tp->n_taints;
    n->capacity = it->capacity;
    n->allocatable = it->allocatable;
    n->template_index = (int32_t)t;
    n->managed = n->in_flight = true;
    n->instance_type = kp_sym_str(snap->symtab, it->name);
}

static void note(kp_static_seed *seed, const char *text)
{
    seed->notes = kp_xgrow(seed->notes, &seed->cap_notes, seed->n_notes + 1, sizeof(char *));
    seed->notes[seed->n_notes++] = kp_arena_strdup(seed->arena, text);
}

static int seed_template(kp_snapshot *snap, kp_static_seed *seed, uint32_t t)
{
    uint32_t missing = kp_static_missing(snap, t);
    if (missing == 0)
        return 0;
    kp_plan_claim c;
    int err = kp_static_claim(snap, t, seed->arena, &c);
    if (err == KP_ENOTFOUND) {
        note(seed, kp_error_last());
        return 0;
    }
    if (err < 0)
        return err;
    for (uint32_t k = 1; k <= missing; k++) {
        size_t cap = seed->cap;
        seed->items = kp_xgrow(seed->items, &cap, seed->n + 1, sizeof(seeded));
        seed->cap = (uint32_t)cap;
        seed->items[seed->n] = (seeded){snap->n_nodes, c};
        add_node(snap, t, &c, k);
        seed->n++;
    }
    return 0;
}

int kp_static_seed_new(kp_snapshot *snap, kp_static_seed **out)
{
    *out = NULL;
    bool any = false;
    for (uint32_t t = 0; t < snap->n_templates && !any; t++)
        any = kp_static_missing(snap, t) > 0;
    if (!any)
        return 0;
    kp_static_seed *seed = kp_xcalloc(1, sizeof(*seed));
    seed->arena = kp_arena_new();
    seed->first_node = snap->n_nodes;
    int err = 0;
    for (uint32_t t = 0; t < snap->n_templates && !err; t++)
        err = seed_template(snap, seed, t);
    if (err < 0) {
        snap->n_nodes = seed->first_node;
        kp_snapshot_invalidate(snap);
        kp_static_seed_free(seed);
        return err;
    }
    *out = seed;
    return 0;
}

/* The pods the plan put on seeded node `node`, and the plan's existing
 * nodes without it. */
static const kp_plan_node *placed_on(const kp_plan *plan, uint32_t node)
{
    for (uint32_t i = 0; i < plan->n_nodes; i++)
        if (plan->nodes[i].node == node)
            return &plan->nodes[i];
    return NULL;
}

static kp_plan_claim fold_one(const kp_snapshot *snap, kp_plan *plan, const seeded *s)
{
    kp_plan_claim c = s->claim;
    kp_requirements_copy(&c.reqs, plan->arena, &s->claim.reqs);
    c.its = kp_arena_memdup(plan->arena, s->claim.its, s->claim.n_its * sizeof(uint32_t));
    const kp_plan_node *on = placed_on(plan, s->node);
    if (on) {
        c.pods = on->pods;
        c.n_pods = on->n_pods;
        for (uint32_t k = 0; k < on->n_pods; k++)
            kp_resvec_add(&c.requests, &snap->pods[on->pods[k]].requests, snap->restab.count);
    }
    return c;
}

int kp_static_seed_fold(kp_static_seed *seed, kp_snapshot *snap, kp_plan *plan)
{
    if (!seed || seed->n == 0)
        return 0;
    if (snap->n_nodes != seed->first_node + seed->n)
        return kp_error_set(KP_EINVALID, "static seed: the snapshot grew by %u nodes, not the %u seeded",
                            snap->n_nodes - seed->first_node, seed->n);
    kp_plan_claim *claims = KP_ARENA_NEW(plan->arena, kp_plan_claim, plan->n_claims + seed->n);
    if (plan->n_claims)
        memcpy(claims, plan->claims, plan->n_claims * sizeof(kp_plan_claim));
    for (uint32_t i = 0; i < seed->n; i++) {
        claims[plan->n_claims + i] = fold_one(snap, plan, &seed->items[i]);
        plan->hourly_cost += seed->items[i].claim.price;
        plan->lower_bound_cost += seed->items[i].claim.price; /* launched whatever the pods need */
    }
    plan->claims = claims;
    plan->n_claims += seed->n;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < plan->n_nodes; i++)
        if (plan->nodes[i].node < seed->first_node)
            plan->nodes[kept++] = plan->nodes[i];
    plan->n_nodes = kept;
    snap->n_nodes = seed->first_node;
    kp_snapshot_invalidate(snap); /* the solver cached the seeded nodes */
    seed->n = 0;
    return 0;
}

size_t kp_static_seed_note_count(const kp_static_seed *seed)
{
    return seed ? seed->n_notes : 0;
}

const char *kp_static_seed_note(const kp_static_seed *seed, size_t i)
{
    return seed && i < seed->n_notes ? seed->notes[i] : NULL;
}

kp_static_seed *kp_static_seed_free(kp_static_seed *seed)
{
    if (!seed)
        return NULL;
    free(seed->items);
    free(seed->notes);
    kp_arena_free(seed->arena);
    free(seed);
    return NULL;
}

int kp_static_solve(kp_snapshot *snap, const kp_solve_opts *opts, const uint32_t *pending, uint32_t n_pending,
                    void (*on_note)(void *ctx, const char *text), void *ctx, kp_plan **out)
{
    kp_static_seed *seed = NULL;
    kp_plan *plan = NULL;
    int err = kp_static_seed_new(snap, &seed);
    for (size_t i = 0; !err && on_note && i < kp_static_seed_note_count(seed); i++)
        on_note(ctx, kp_static_seed_note(seed, i));
    if (!err)
        err = kp_solve(snap, opts, pending, n_pending, &plan);
    if (!err)
        err = kp_static_seed_fold(seed, snap, plan);
    if (err < 0 && seed && snap->n_nodes > seed->first_node) { /* leave the snapshot as it was */
        snap->n_nodes = seed->first_node;
        kp_snapshot_invalidate(snap);
    }
    kp_static_seed_free(seed);
    if (err < 0) {
        kp_plan_free(plan);
        return err;
    }
    *out = plan;
    return 0;
}
