/*
 * Answers the solve would otherwise compute again and again, kept for the
 * solve:
 *
 *   - which of a NodePool's instance types a NodeClaim's requirements admit
 *     (they meet the requirements on the keys instance types define, and one
 *     of their available offerings is in the allowed zones and capacity
 *     types). Thousands of NodeClaims narrow their NodePool's requirements
 *     the same few ways (one zone, one capacity type), so each distinct
 *     narrowing is judged once, as a bitset over the snapshot's types;
 *   - the options a new NodeClaim keeps for its first pod, which depend only
 *     on the NodePool, those requirements and the pod's requests: thousands
 *     of NodeClaims start from a few kinds of pod.
 */
#include "scheduling/solver_internal.h"

#include <string.h>

enum { MEMO_MAX = 4096, FRESH_MAX = 1024 };

typedef struct verdict {
    uint32_t tmpl;
    kp_requirements key; /* the requirements on keys instance types define */
    uint64_t *ok;
} verdict;

typedef struct fresh {
    uint32_t tmpl;
    kp_requirements key;
    kp_resvec requests;
    fresh_options options;
} fresh;

typedef struct type_memo {
    idx_table table;
    verdict *items;
    uint32_t n, cap;
    idx_table fresh_table;
    fresh *fresh;
    uint32_t n_fresh, cap_fresh;
} type_memo;

static type_memo *memo_of(solver *s)
{
    if (!s->memo)
        s->memo = KP_ARENA_NEW(s->work, type_memo, 1);
    return s->memo;
}

static void restrict_to_type_keys(solver *s, const kp_requirements *reqs, kp_requirements *out)
{
    out->items = KP_ARENA_NEW(s->scratch, kp_requirement, reqs->count ? reqs->count : 1);
    out->count = 0;
    out->cap = reqs->count;
    for (uint32_t i = 0; i < reqs->count; i++)
        if (kp_symmap_get(&s->it_keys, reqs->items[i].key) != UINT32_MAX)
            out->items[out->count++] = reqs->items[i];
}

typedef struct verdict_probe {
    const type_memo *m;
    uint32_t tmpl;
    const kp_requirements *key;
} verdict_probe;

static bool probe_equal(const void *ctx, uint32_t idx)
{
    const verdict_probe *p = ctx;
    const verdict *v = &p->m->items[idx];
    return v->tmpl == p->tmpl && reqs_equal(&v->key, p->key);
}

static uint64_t *judge(solver *s, uint32_t tmpl, const kp_requirements *key)
{
    const tstate *ts = &s->ts[tmpl];
    uint64_t *ok = KP_ARENA_NEW(s->work, uint64_t, (s->snap->n_its + 63) / 64 + 1);
    const kp_requirement *zone = kp_requirements_get(key, KP_SYM_ZONE);
    const kp_requirement *ct = kp_requirements_get(key, KP_SYM_CAPACITY_TYPE);
    for (uint32_t i = 0; i < ts->n_its; i++) {
        const kp_sit *it = &s->snap->its[ts->its[i]];
        if (kp_requirements_intersects(s->symtab, &it->reqs, key, NULL) && cheapest_price_in(s, zone, ct, it) >= 0)
            ok[ts->its[i] / 64] |= UINT64_C(1) << (ts->its[i] % 64);
    }
    return ok;
}

const uint64_t *type_verdicts(solver *s, uint32_t tmpl, const kp_requirements *reqs)
{
    type_memo *m = memo_of(s);
    kp_arena_mark mark = kp_arena_mark_get(s->scratch);
    kp_requirements key;
    restrict_to_type_keys(s, reqs, &key);
    fnv f = FNV_INIT;
    fnv_requirements(&f, &key);
    verdict_probe pr = {m, tmpl, &key};
    uint32_t at = idx_table_find(&m->table, f.h, probe_equal, &pr);
    if (at == UINT32_MAX && m->n < MEMO_MAX) {
        if (m->n == m->cap) {
            uint32_t cap = m->cap ? m->cap * 2 : 16;
            m->items = kp_arena_grow(s->work, m->items, m->n, cap, sizeof(verdict));
            m->cap = cap;
        }
        verdict *v = &m->items[m->n];
        v->tmpl = tmpl;
        reqs_persist(&v->key, s->work, &key);
        v->ok = judge(s, tmpl, &v->key);
        idx_table_put(s->work, &m->table, f.h, m->n);
        at = m->n++;
    }
    kp_arena_rewind(s->scratch, mark);
    return at == UINT32_MAX ? NULL : m->items[at].ok;
}

typedef struct fresh_probe {
    const type_memo *m;
    uint32_t tmpl;
    const kp_requirements *key;
    const kp_resvec *requests;
} fresh_probe;

static bool fresh_equal(const void *ctx, uint32_t idx)
{
    const fresh_probe *p = ctx;
    const fresh *f = &p->m->fresh[idx];
    return f->tmpl == p->tmpl && memcmp(&f->requests, p->requests, sizeof(kp_resvec)) == 0 &&
           reqs_equal(&f->key, p->key);
}

static uint64_t fresh_hash(uint32_t tmpl, const kp_requirements *key, const kp_resvec *requests)
{
    fnv f = FNV_INIT;
    fnv_u64(&f, tmpl);
    fnv_bytes(&f, requests, sizeof(*requests));
    fnv_requirements(&f, key);
    return f.h;
}

const fresh_options *fresh_find(solver *s, uint32_t tmpl, const kp_requirements *reqs, const kp_resvec *requests)
{
    type_memo *m = memo_of(s);
    if (m->n_fresh == 0)
        return NULL;
    kp_arena_mark mark = kp_arena_mark_get(s->scratch);
    kp_requirements key;
    restrict_to_type_keys(s, reqs, &key);
    fresh_probe probe = {m, tmpl, &key, requests};
    uint32_t at = idx_table_find(&m->fresh_table, fresh_hash(tmpl, &key, requests), fresh_equal, &probe);
    kp_arena_rewind(s->scratch, mark);
    return at == UINT32_MAX ? NULL : &m->fresh[at].options;
}

void fresh_put(solver *s, uint32_t tmpl, const kp_requirements *reqs, const kp_resvec *requests,
               const fresh_options *options)
{
    type_memo *m = memo_of(s);
    if (m->n_fresh >= FRESH_MAX)
        return;
    if (m->n_fresh == m->cap_fresh) {
        uint32_t cap = m->cap_fresh ? m->cap_fresh * 2 : 16;
        m->fresh = kp_arena_grow(s->work, m->fresh, m->n_fresh, cap, sizeof(fresh));
        m->cap_fresh = cap;
    }
    kp_arena_mark mark = kp_arena_mark_get(s->scratch);
    kp_requirements key;
    restrict_to_type_keys(s, reqs, &key);
    fresh *f = &m->fresh[m->n_fresh];
    f->tmpl = tmpl;
    reqs_persist(&f->key, s->work, &key);
    f->requests = *requests;
    f->options = *options;
    f->options.its = kp_arena_memdup(s->work, options->its, options->n * sizeof(uint32_t));
    idx_table_put(s->work, &m->fresh_table, fresh_hash(tmpl, &f->key, requests), m->n_fresh++);
    kp_arena_rewind(s->scratch, mark);
}
