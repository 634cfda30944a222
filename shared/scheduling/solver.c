/*
 * The solve loop (Karpenter's Scheduler.Solve). Pods are taken biggest first
 * (CPU, then memory, then age); each goes to the first existing node that
 * takes it, else the least-loaded planned NodeClaim that takes it, else a new
 * NodeClaim from the heaviest NodePool that can make one. A pod that fits
 * nowhere has its preferences relaxed one at a time; if it still fits nowhere
 * it goes to the back of the queue, and the loop ends when a whole pass over
 * the queue places nothing.
 */
#include "scheduling/solver_internal.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------- queue ---------- */

typedef struct queue {
    uint32_t *items;
    uint32_t cap, head, len;
} queue;

static void queue_push(queue *q, uint32_t v)
{
    q->items[(q->head + q->len) % q->cap] = v;
    q->len++;
}

static uint32_t queue_pop(queue *q)
{
    uint32_t v = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return v;
}

/* Karpenter's queue order: CPU, then memory, descending; then the oldest;
 * then by UID. The keys are copied out of the pods so that the sort touches
 * only them. */
typedef struct queue_key {
    int64_t cpu, memory, created_ns;
    const char *uid;
    uint32_t idx;
} queue_key;

static int cmp_i64_desc(int64_t a, int64_t b)
{
    return a > b ? -1 : a < b;
}

static int cmp_queue_key(const void *pa, const void *pb)
{
    const queue_key *x = pa, *y = pb;
    int c = cmp_i64_desc(x->cpu, y->cpu);
    if (!c)
        c = cmp_i64_desc(x->memory, y->memory);
    if (!c)
        c = x->created_ns < y->created_ns ? -1 : x->created_ns > y->created_ns;
    if (!c)
        c = strcmp(x->uid, y->uid);
    return c ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

static void sort_queue(solver *s, uint32_t *v, uint32_t n)
{
    queue_key *keys = KP_ARENA_NEW(s->scratch, queue_key, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
        const kp_spod *p = &s->snap->pods[s->ps[v[i]].pod];
        keys[i] = (queue_key){p->requests.v[KP_RES_CPU], p->requests.v[KP_RES_MEMORY], p->created_ns,
                              p->uid ? p->uid : p->ns_name, v[i]};
    }
    qsort(keys, n, sizeof(*keys), cmp_queue_key);
    for (uint32_t i = 0; i < n; i++)
        v[i] = keys[i].idx;
}

/* ---------- planned NodeClaims, least loaded first ---------- */

typedef struct claim_order {
    uint32_t *v;
    uint32_t n, cap;
} claim_order;

static bool claim_before(const solver *s, uint32_t a, uint32_t b)
{
    uint32_t na = s->claims[a].n_pods, nb = s->claims[b].n_pods;
    return na < nb || (na == nb && a < b);
}

/* Claim at position `pos` gained a pod: move it right to keep the order. */
static void order_bump(const solver *s, claim_order *o, uint32_t pos)
{
    while (pos + 1 < o->n && claim_before(s, o->v[pos + 1], o->v[pos])) {
        uint32_t t = o->v[pos];
        o->v[pos] = o->v[pos + 1];
        o->v[pos + 1] = t;
        pos++;
    }
}

static void order_append(solver *s, claim_order *o, uint32_t idx)
{
    if (o->n == o->cap) {
        uint32_t cap = o->cap ? o->cap * 2 : 64;
        o->v = kp_arena_grow(s->arena, o->v, o->n, cap, sizeof(uint32_t));
        o->cap = cap;
    }
    uint32_t pos = o->n++;
    o->v[pos] = idx;
    while (pos > 0 && claim_before(s, o->v[pos], o->v[pos - 1])) {
        uint32_t t = o->v[pos];
        o->v[pos] = o->v[pos - 1];
        o->v[pos - 1] = t;
        pos--;
    }
}

/* ---------- placing one pod ---------- */

/* The plain scan: every existing node in order, then every planned NodeClaim, least loaded first. */
static bool scan_places(solver *s, claim_order *order, podstate *st)
{
    for (uint32_t i = 0; i < s->n_enodes; i++)
        if (enode_try(s, &s->enodes[i], st))
            return true;
    for (uint32_t k = 0; k < order->n; k++) {
        if (claim_try(s, &s->claims[order->v[k]], st, false, NULL)) {
            order_bump(s, order, k);
            return true;
        }
    }
    return false;
}

/* The same places in the same order, skipping those the index rules out. */
static bool indexed_places(solver *s, podstate *st)
{
    place_query q;
    int64_t i;
    place_query_init(s, s->node_ix, st, &q);
    while ((i = place_query_next(&q)) >= 0) {
        if (enode_try(s, &s->enodes[i], st)) {
            place_index_changed(s, s->node_ix, (uint32_t)i, 0);
            return true;
        }
    }
    place_query_init(s, s->claim_ix, st, &q);
    while ((i = place_query_next(&q)) >= 0) {
        claim *c = &s->claims[i];
        if (claim_try(s, c, st, false, NULL)) {
            place_index_changed(s, s->claim_ix, (uint32_t)i, c->n_pods);
            return true;
        }
    }
    return false;
}

static void claim_created(solver *s, claim_order *order)
{
    uint32_t idx = s->n_claims - 1;
    if (s->claim_ix)
        place_index_add(s, s->claim_ix, idx, s->claims[idx].n_pods, s->claims[idx].tmpl);
    else
        order_append(s, order, idx);
}

/* Why a pod has no place, one reason per NodePool, up to WHY_MAX bytes; a
 * reason past that marks the text as cut rather than leaving it to read
 * complete. */
enum { WHY_MAX = 64 * 1024 };

typedef struct why_text {
    kp_buf buf;
    bool cut;
} why_text;

__attribute__((format(printf, 2, 3))) static void why_add(why_text *w, const char *fmt, ...)
{
    if (w->cut)
        return;
    va_list ap;
    va_start(ap, fmt);
    w->cut = kp_buf_vprintf(&w->buf, fmt, ap) < 0;
    va_end(ap);
}

static const char *why_string(kp_arena *arena, why_text *w)
{
    const char *text = w->buf.len ? kp_buf_cstr(&w->buf) : "no place for the pod";
    const char *out = w->cut ? kp_arena_printf(arena, "%s ... (cut at %d bytes)", text, WHY_MAX)
                             : kp_arena_strdup(arena, text);
    kp_buf_free(&w->buf);
    return out;
}

static bool add_pod(solver *s, claim_order *order, podstate *st, why_text *why)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    if (p->unschedulable) {
        if (why)
            why_add(why, "%s", p->unschedulable);
        return false;
    }
    if (!topo_blocks_every_node(s, st) && (s->claim_ix ? indexed_places(s, st) : scan_places(s, order, st)))
        return true;
    uint32_t dynamic = 0;
    for (uint32_t t = 0; t < s->snap->n_templates; t++)
        dynamic += !s->snap->templates[t].is_static;
    if (dynamic == 0 && why)
        why_add(why, "no nodepool can launch nodes (none exist, none is Ready, or their requirements match no instance type)");
    for (uint32_t t = 0; t < s->snap->n_templates; t++) {
        const char *reason = NULL;
        if (s->snap->templates[t].is_static)
            continue; /* static NodePools launch for their replicas, never for pods */
        if (claim_new(s, t, st, why ? &reason : NULL)) {
            claim_created(s, order);
            return true;
        }
        if (why && reason) {
            const char *name = s->snap->templates[t].name;
            if (strncmp(reason, "incompatible requirements: ", 27) == 0)
                why_add(why, "%sincompatible with nodepool \"%s\": %s", why->buf.len ? "; " : "", name,
                        reason + 27);
            else if (strncmp(reason, "all compatible", 14) == 0 || strncmp(reason, "nodepool ", 9) == 0)
                why_add(why, "%s%s", why->buf.len ? "; " : "", reason);
            else
                why_add(why, "%snodepool \"%s\": %s", why->buf.len ? "; " : "", name, reason);
        }
    }
    return false;
}

/* Karpenter's trySchedule: relax until the pod fits or nothing is left to relax. */
static bool try_schedule(solver *s, claim_order *order, podstate *st)
{
    for (;;) {
        if (add_pod(s, order, st, NULL))
            return true;
        if (!ps_relax(s, st))
            break;
        topo_update(s, st);
    }
    why_text why = {KP_BUF_INIT(WHY_MAX), false};
    bool placed = add_pod(s, order, st, &why); /* same verdict, now with the reasons */
    if (!placed)
        st->error = why_string(s->arena, &why);
    else
        kp_buf_free(&why.buf);
    return placed;
}

static void run_queue(solver *s, queue *q)
{
    claim_order order = {0};
    while (q->len > 0) {
        uint32_t idx = q->items[q->head];
        podstate *st = &s->ps[idx];
        if (st->requeued && st->queue_mark == q->len)
            break; /* a full pass placed nothing */
        queue_pop(q);
        if (try_schedule(s, &order, st)) {
            st->error = NULL;
            continue;
        }
        /* Retry later with the pod as written. */
        ps_reset(s, st);
        topo_update(s, st);
        queue_push(q, idx);
        st->requeued = true;
        st->queue_mark = q->len;
    }
}

/* ---------- setup ---------- */

static int init_pods(solver *s, const uint32_t *pending, uint32_t n)
{
    kp_snapshot *snap = s->snap;
    s->ps = KP_ARENA_NEW(s->arena, podstate, n ? n : 1);
    s->ps_of_pod = KP_ARENA_NEW(s->arena, int32_t, snap->n_pods ? snap->n_pods : 1);
    for (uint32_t i = 0; i < snap->n_pods; i++)
        s->ps_of_pod[i] = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (pending[i] >= snap->n_pods)
            return kp_error_set(KP_EINVALID, "pending pod index %u out of range", pending[i]);
        if (s->ps_of_pod[pending[i]] >= 0)
            continue;
        podstate *st = &s->ps[s->n_ps];
        st->pod = pending[i];
        st->in_batch = true;
        s->ps_of_pod[pending[i]] = (int32_t)s->n_ps++;
        ps_build_requirements(s, st);
    }
    return 0;
}

static void index_places(solver *s)
{
    s->claim_ix = place_index_new(s->work, true, s->n_ps, s->snap->n_templates);
    s->node_ix = place_index_new(s->work, false, s->n_enodes, 0);
    for (uint32_t i = 0; i < s->n_enodes; i++)
        place_index_add(s, s->node_ix, i, 0, 0);
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

int kp_solve(kp_snapshot *snap, const kp_solve_opts *opts, const uint32_t *pending,
             uint32_t n_pending, kp_plan **out)
{
    int64_t start = monotonic_ns();
    solver s;
    memset(&s, 0, sizeof(s));
    s.snap = snap;
    s.opts = opts;
    s.symtab = snap->symtab;
    s.n_res = snap->restab.count;
    s.arena = kp_arena_new();
    s.scratch = kp_arena_new();
    s.work = kp_arena_new();
    int err = init_pods(&s, pending, n_pending);
    if (!err)
        err = cache_ensure(&s);
    if (!err)
        err = enodes_init(&s);
    if (!err)
        err = claims_init(&s);
    if (!err)
        err = topo_build(&s);
    if (err < 0) {
        kp_arena_free(s.scratch);
        kp_arena_free(s.work);
        kp_arena_free(s.arena);
        return err;
    }
    for (uint32_t i = 0; i < s.n_enodes; i++)
        topo_register(&s, KP_SYM_HOSTNAME, snap->nodes[s.enodes[i].node].hostname);
    if (!opts->plain_scan)
        index_places(&s);

    queue q = {KP_ARENA_NEW(s.scratch, uint32_t, s.n_ps + 1), s.n_ps + 1, 0, 0};
    for (uint32_t i = 0; i < s.n_ps; i++)
        q.items[i] = i;
    sort_queue(&s, q.items, s.n_ps);
    q.len = s.n_ps;
    run_queue(&s, &q);
    claims_settle(&s);
    if (opts->improve)
        improve_plan(&s);

    s.claim_ix = s.node_ix = NULL;
    kp_plan *plan = plan_new(&s);
    plan->template_types = templates_types(&s);
    err = plan_finalize(&s, plan);
    kp_arena_free(s.scratch);
    kp_arena_free(s.work);
    if (err < 0) {
        kp_plan_free(plan);
        return err;
    }
    plan->solve_ns = monotonic_ns() - start;
    *out = plan;
    return 0;
}
