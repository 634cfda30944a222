/*
 * Where a pod may go, found without trying every place. The solve loop tries
 * a pod against existing nodes in their order and against planned NodeClaims
 * least loaded first (Karpenter's order), and takes the first that accepts.
 * Trying each one in turn costs pods x places; this index keeps, for every
 * place, a few facts that a rejection follows from, as bitsets over the
 * places, so that the loop visits only the places where none of them rules
 * the pod out, still in the same order:
 *
 *   - load level (NodeClaims): the places with exactly k pods, so that the
 *     least-loaded order is walked level by level, by index within a level;
 *   - remaining resources: per resource, the places whose headroom reaches a
 *     bucket (two per power of two), for the pod's request's bucket;
 *   - NodePool (NodeClaims): the NodePools whose taints the pod tolerates;
 *   - pinned values of the keys topology and zone or capacity-type
 *     requirements look at: a place pinned to one value the pod or one of its
 *     topology groups refuses is out;
 *   - hostname topology groups: the places whose count in the group is within
 *     what the group allows the pod (spread), or zero (anti-affinity), or not
 *     zero (affinity).
 *
 * Every bit is a necessary condition of the full check (claim_try /
 * enode_try), which still runs on every candidate: the index only skips places
 * that would have said no, so the plan is exactly the plain scan's. Facts only
 * get worse for a place during a solve (headroom shrinks, counts grow, values
 * get pinned), which keeps updates cheap. Memory comes from its own arena,
 * freed with the solve.
 */
#include "scheduling/solver_internal.h"

#include <string.h>

enum { PI_BUCKETS = 128, PI_MAX_TERMS = 32, PI_MAX_OR = 8 };

typedef struct key_index {
    kp_sym key;
    kp_sym *pinned;  /* per place: its single value, or KP_SYM_NONE */
    pbits *unpinned; /* places that allow more than one value (or none known) */
    kp_symmap pos;   /* value -> index into values / by_value */
    kp_sym *values;
    pbits **by_value;
    uint32_t n_values, cap_values;
} key_index;

typedef struct host_index {
    bool built;
    int32_t lim[2]; /* count thresholds, -1 when unused */
    pbits *le[2];   /* places whose hostname count is <= lim[i] */
} host_index;

struct place_index {
    kp_arena *arena;
    bool levelled;
    uint32_t n_slots, cap_slots, n_words, n_sum;
    /* levels: level[k] holds the places with k pods; emptied bitsets are reused */
    pbits **level;
    uint32_t *level_n;
    uint32_t n_levels;
    pbits **pool;
    uint32_t n_pool;
    uint32_t *slot_level;
    pbits *all; /* unlevelled: every place */
    /* resources */
    uint8_t *bucket[KP_RES_FIXED];
    pbits *ge[KP_RES_FIXED][PI_BUCKETS]; /* built when first asked for */
    /* NodePools (NodeClaims only, when there are several) */
    pbits **by_tmpl;
    uint32_t n_tmpl;
    /* pinned keys */
    key_index *keys;
    uint32_t n_keys, cap_keys;
    /* hostnames and hostname topology groups (0: groups, 1: inverse groups) */
    kp_symmap host_slot;
    kp_sym *slot_host;
    host_index *hg[2];
    uint32_t n_hg[2];
};

/* ---------- bitsets, each with a summary: one bit per non-zero word ---------- */

static pbits *bits_new(place_index *ix)
{
    pbits *b = KP_ARENA_NEW(ix->arena, pbits, 1);
    b->w = KP_ARENA_NEW(ix->arena, uint64_t, ix->n_words);
    b->sum = KP_ARENA_NEW(ix->arena, uint64_t, ix->n_sum);
    return b;
}

static void bit_set(pbits *b, uint32_t i)
{
    b->w[i / 64] |= UINT64_C(1) << (i % 64);
    b->sum[i / 4096] |= UINT64_C(1) << (i / 64 % 64);
}

static void bit_clear(pbits *b, uint32_t i)
{
    b->w[i / 64] &= ~(UINT64_C(1) << (i % 64));
    if (b->w[i / 64] == 0)
        b->sum[i / 4096] &= ~(UINT64_C(1) << (i / 64 % 64));
}

static void bit_put(pbits *b, uint32_t i, bool on)
{
    if (on)
        bit_set(b, i);
    else
        bit_clear(b, i);
}

/* 0 for nothing; otherwise two buckets per power of two, monotone in x. */
static uint32_t res_bucket(int64_t x)
{
    if (x <= 0)
        return 0;
    uint32_t lg = 63u - (uint32_t)__builtin_clzll((uint64_t)x);
    uint32_t half = lg > 0 ? (uint32_t)(((uint64_t)x >> (lg - 1)) & 1) : 0;
    return 1 + 2 * lg + half;
}

/* ---------- what a place is ---------- */

static const kp_requirements *slot_reqs(const solver *s, const place_index *ix, uint32_t slot)
{
    return ix->levelled ? &s->claims[slot].reqs : &s->enodes[slot].reqs;
}

static void slot_headroom(const solver *s, const place_index *ix, uint32_t slot, kp_resvec *out)
{
    if (!ix->levelled) {
        *out = s->enodes[slot].remaining;
        return;
    }
    const claim *c = &s->claims[slot];
    *out = c->max_avail;
    kp_resvec_sub(out, &c->requests, KP_RES_FIXED);
}

static kp_sym single_value(const kp_requirements *reqs, kp_sym key)
{
    const kp_requirement *r = kp_requirements_get(reqs, key);
    if (!r || r->complement || r->n_values != 1 || r->has_gte || r->has_lte)
        return KP_SYM_NONE;
    return r->values[0];
}

/* ---------- creation ---------- */

place_index *place_index_new(kp_arena *arena, bool levelled, uint32_t capacity, uint32_t n_templates)
{
    place_index *ix = KP_ARENA_NEW(arena, place_index, 1);
    ix->arena = arena;
    ix->levelled = levelled;
    ix->cap_slots = capacity ? capacity : 1;
    ix->n_words = (ix->cap_slots + 63) / 64;
    ix->n_sum = (ix->n_words + 63) / 64;
    ix->slot_level = KP_ARENA_NEW(arena, uint32_t, ix->cap_slots);
    ix->slot_host = KP_ARENA_NEW(arena, kp_sym, ix->cap_slots);
    for (uint32_t r = 0; r < KP_RES_FIXED; r++)
        ix->bucket[r] = KP_ARENA_NEW(arena, uint8_t, ix->cap_slots);
    if (!levelled)
        ix->all = bits_new(ix);
    if (levelled && n_templates > 1) {
        ix->n_tmpl = n_templates;
        ix->by_tmpl = KP_ARENA_NEW(arena, pbits *, n_templates);
        for (uint32_t t = 0; t < n_templates; t++)
            ix->by_tmpl[t] = bits_new(ix);
    }
    return ix;
}

/* ---------- levels ---------- */

static void level_ensure(place_index *ix, uint32_t k)
{
    if (k >= ix->n_levels) {
        uint32_t n = ix->n_levels ? ix->n_levels : 8;
        while (n <= k)
            n *= 2;
        ix->level = kp_arena_grow(ix->arena, ix->level, ix->n_levels, n, sizeof(pbits *));
        ix->level_n = kp_arena_grow(ix->arena, ix->level_n, ix->n_levels, n, sizeof(uint32_t));
        ix->pool = kp_arena_grow(ix->arena, ix->pool, ix->n_levels, n, sizeof(pbits *));
        ix->n_levels = n;
    }
    if (!ix->level[k])
        ix->level[k] = ix->n_pool > 0 ? ix->pool[--ix->n_pool] : bits_new(ix);
}

static void level_put(place_index *ix, uint32_t slot, uint32_t k)
{
    level_ensure(ix, k);
    bit_set(ix->level[k], slot);
    ix->level_n[k]++;
    ix->slot_level[slot] = k;
}

/* An emptied level's bitset (all zero again) goes back to the pool: at most
 * as many levels are in use at once as there are distinct pod counts. */
static void level_take(place_index *ix, uint32_t slot)
{
    uint32_t k = ix->slot_level[slot];
    bit_clear(ix->level[k], slot);
    if (--ix->level_n[k] > 0)
        return;
    ix->pool[ix->n_pool++] = ix->level[k];
    ix->level[k] = NULL;
}

/* ---------- resources ---------- */

static pbits *ge_bits(place_index *ix, uint32_t r, uint32_t b)
{
    if (ix->ge[r][b])
        return ix->ge[r][b];
    pbits *bits = bits_new(ix);
    for (uint32_t i = 0; i < ix->n_slots; i++)
        if (ix->bucket[r][i] >= b)
            bit_set(bits, i);
    ix->ge[r][b] = bits;
    return bits;
}

static void set_headroom(const solver *s, place_index *ix, uint32_t slot, bool fresh)
{
    kp_resvec h;
    slot_headroom(s, ix, slot, &h);
    for (uint32_t r = 0; r < KP_RES_FIXED; r++) {
        uint32_t nb = res_bucket(h.v[r]);
        uint32_t ob = fresh ? 0 : ix->bucket[r][slot];
        ix->bucket[r][slot] = (uint8_t)nb;
        if (fresh) {
            for (uint32_t b = 0; b <= nb; b++)
                if (ix->ge[r][b])
                    bit_set(ix->ge[r][b], slot);
            continue;
        }
        for (uint32_t b = nb + 1; b <= ob; b++) /* headroom only shrinks */
            if (ix->ge[r][b])
                bit_clear(ix->ge[r][b], slot);
    }
}

/* ---------- pinned keys ---------- */

static uint32_t key_value_pos(place_index *ix, key_index *k, kp_sym v)
{
    uint32_t i = kp_symmap_get(&k->pos, v);
    if (i != UINT32_MAX)
        return i;
    if (k->n_values == k->cap_values) {
        uint32_t cap = k->cap_values ? k->cap_values * 2 : 4;
        k->values = kp_arena_grow(ix->arena, k->values, k->n_values, cap, sizeof(kp_sym));
        k->by_value = kp_arena_grow(ix->arena, k->by_value, k->n_values, cap, sizeof(pbits *));
        k->cap_values = cap;
    }
    i = k->n_values++;
    k->values[i] = v;
    k->by_value[i] = bits_new(ix);
    kp_symmap_put(&k->pos, ix->arena, v, i);
    return i;
}

static void key_place(place_index *ix, key_index *k, uint32_t slot, kp_sym v, bool on)
{
    if (v == KP_SYM_NONE) {
        bit_put(k->unpinned, slot, on);
        return;
    }
    uint32_t pos = key_value_pos(ix, k, v); /* may grow by_value: index it after */
    bit_put(k->by_value[pos], slot, on);
}

static key_index *key_get(const solver *s, place_index *ix, kp_sym key)
{
    for (uint32_t i = 0; i < ix->n_keys; i++)
        if (ix->keys[i].key == key)
            return &ix->keys[i];
    if (ix->n_keys == ix->cap_keys) {
        uint32_t cap = ix->cap_keys ? ix->cap_keys * 2 : 4;
        ix->keys = kp_arena_grow(ix->arena, ix->keys, ix->n_keys, cap, sizeof(key_index));
        ix->cap_keys = cap;
    }
    key_index *k = &ix->keys[ix->n_keys++];
    memset(k, 0, sizeof(*k));
    k->key = key;
    k->pinned = KP_ARENA_NEW(ix->arena, kp_sym, ix->cap_slots);
    k->unpinned = bits_new(ix);
    for (uint32_t i = 0; i < ix->n_slots; i++) {
        k->pinned[i] = single_value(slot_reqs(s, ix, i), key);
        key_place(ix, k, i, k->pinned[i], true);
    }
    return k;
}

static void set_pinned(const solver *s, place_index *ix, uint32_t slot, bool fresh)
{
    const kp_requirements *reqs = slot_reqs(s, ix, slot);
    for (uint32_t i = 0; i < ix->n_keys; i++) {
        key_index *k = &ix->keys[i];
        kp_sym v = single_value(reqs, k->key);
        if (!fresh && v == k->pinned[slot])
            continue;
        if (!fresh)
            key_place(ix, k, slot, k->pinned[slot], false);
        k->pinned[slot] = v;
        key_place(ix, k, slot, v, true);
    }
}

/* ---------- hostname topology groups ---------- */

static int32_t host_count(const tgroup *g, kp_sym host)
{
    uint32_t i = kp_symmap_get(&g->index, host);
    return i == UINT32_MAX ? 0 : g->counts[i];
}

static void host_bits_for(host_index *h, const tgroup *g, kp_sym host, uint32_t slot)
{
    int32_t c = host == KP_SYM_NONE ? INT32_MIN : host_count(g, host); /* unknown host: always a candidate */
    for (int i = 0; i < 2; i++)
        if (h->lim[i] >= 0 && c <= h->lim[i])
            bit_set(h->le[i], slot);
}

static const tgroup *group_at(const solver *s, int which, uint32_t gi)
{
    return which ? &s->topo.inverse[gi] : &s->topo.groups[gi];
}

static host_index *host_get(const solver *s, place_index *ix, int which, uint32_t gi)
{
    if (gi >= ix->n_hg[which]) {
        uint32_t n = ix->n_hg[which] ? ix->n_hg[which] : 8;
        while (n <= gi)
            n *= 2;
        ix->hg[which] = kp_arena_grow(ix->arena, ix->hg[which], ix->n_hg[which], n, sizeof(host_index));
        ix->n_hg[which] = n;
    }
    host_index *h = &ix->hg[which][gi];
    if (h->built)
        return h;
    const tgroup *g = group_at(s, which, gi);
    h->built = true;
    h->lim[0] = g->type == TG_SPREAD ? g->max_skew - 1 : 0;
    h->lim[1] = g->type == TG_SPREAD ? g->max_skew : -1;
    for (int i = 0; i < 2; i++)
        h->le[i] = h->lim[i] >= 0 ? bits_new(ix) : NULL;
    for (uint32_t i = 0; i < ix->n_slots; i++)
        host_bits_for(h, g, ix->slot_host[i], i);
    return h;
}

static void set_host_bits(const solver *s, place_index *ix, uint32_t slot)
{
    for (int which = 0; which < 2; which++)
        for (uint32_t gi = 0; gi < ix->n_hg[which]; gi++)
            if (ix->hg[which][gi].built)
                host_bits_for(&ix->hg[which][gi], group_at(s, which, gi), ix->slot_host[slot], slot);
}

void place_index_count_changed(const solver *s, place_index *ix, const tgroup *g, kp_sym host)
{
    if (!ix || g->key != KP_SYM_HOSTNAME)
        return;
    uint32_t slot = kp_symmap_get(&ix->host_slot, host);
    if (slot == UINT32_MAX)
        return;
    int which = g >= s->topo.groups && g < s->topo.groups + s->topo.n_groups ? 0 : 1;
    uint32_t gi = (uint32_t)(g - (which ? s->topo.inverse : s->topo.groups));
    if (gi >= ix->n_hg[which] || !ix->hg[which][gi].built)
        return;
    host_index *h = &ix->hg[which][gi];
    int32_t c = host_count(g, host);
    for (int i = 0; i < 2; i++)
        if (h->lim[i] >= 0 && c > h->lim[i])
            bit_clear(h->le[i], slot); /* counts only grow */
}

/* ---------- places come and change ---------- */

void place_index_add(const solver *s, place_index *ix, uint32_t slot, uint32_t level, uint32_t tmpl)
{
    ix->n_slots = slot + 1 > ix->n_slots ? slot + 1 : ix->n_slots;
    if (ix->levelled)
        level_put(ix, slot, level);
    else
        bit_set(ix->all, slot);
    if (ix->by_tmpl && tmpl < ix->n_tmpl)
        bit_set(ix->by_tmpl[tmpl], slot);
    kp_sym host = single_value(slot_reqs(s, ix, slot), KP_SYM_HOSTNAME);
    ix->slot_host[slot] = host;
    if (host != KP_SYM_NONE)
        kp_symmap_put(&ix->host_slot, ix->arena, host, slot);
    set_headroom(s, ix, slot, true);
    set_pinned(s, ix, slot, true);
    set_host_bits(s, ix, slot);
}

void place_index_changed(const solver *s, place_index *ix, uint32_t slot, uint32_t level)
{
    if (ix->levelled && level != ix->slot_level[slot]) {
        level_take(ix, slot);
        level_put(ix, slot, level);
    }
    set_headroom(s, ix, slot, false);
    set_pinned(s, ix, slot, false);
}

/* ---------- queries ---------- */

static void term_add(place_query *q, const pbits *const *bits, uint32_t n, bool negate)
{
    if (q->n_terms == PI_MAX_TERMS || n > PI_MAX_OR)
        return; /* fewer terms only means more candidates to try */
    place_term *t = &q->terms[q->n_terms++];
    memcpy(t->any, bits, n * sizeof(*bits));
    t->n = n;
    t->negate = negate;
}

static void resource_terms(place_index *ix, place_query *q, const kp_spod *p)
{
    for (uint32_t r = 0; r < KP_RES_FIXED; r++) {
        uint32_t b = res_bucket(p->requests.v[r]);
        if (b == 0)
            continue;
        const pbits *bits = ge_bits(ix, r, b);
        term_add(q, &bits, 1, false);
    }
}

static void template_term(const solver *s, place_index *ix, place_query *q, const podstate *st)
{
    const pbits *any[PI_MAX_OR];
    uint32_t n = 0, allowed = 0;
    if (!ix->by_tmpl)
        return;
    for (uint32_t t = 0; t < ix->n_tmpl; t++) {
        const kp_template *tp = &s->snap->templates[t];
        if (!ps_tolerates(s, st, tp->taints, tp->n_taints, NULL))
            continue;
        allowed++;
        if (n < PI_MAX_OR)
            any[n] = ix->by_tmpl[t];
        n++;
    }
    if (allowed < ix->n_tmpl)
        term_add(q, any, n, false);
}

/* The values of `key` a place may be pinned to and still take the pod: the
 * pod's requirements allow it and every group on the key would accept it. */
static void key_term(solver *s, place_index *ix, place_query *q, const podstate *st, kp_sym key)
{
    key_index *k = key_get(s, ix, key);
    const kp_requirement *pr = kp_requirements_get(&st->reqs, key);
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    bool *ok = KP_ARENA_NEW(s->scratch, bool, k->n_values ? k->n_values : 1);
    for (uint32_t i = 0; i < k->n_values; i++)
        ok[i] = !pr || kp_requirement_has(s->symtab, pr, k->values[i]);
    topo_pinned_verdicts(s, st, key, k->values, k->n_values, ok);
    const pbits *any[PI_MAX_OR];
    uint32_t n = 0;
    bool all = true;
    any[n++] = k->unpinned;
    for (uint32_t i = 0; i < k->n_values; i++) {
        all &= ok[i];
        if (ok[i] && n < PI_MAX_OR)
            any[n] = k->by_value[i];
        n += ok[i];
    }
    kp_arena_rewind(s->scratch, m);
    if (!all)
        term_add(q, any, n, false);
}

static bool key_seen(const kp_sym *keys, uint32_t n, kp_sym key)
{
    for (uint32_t i = 0; i < n; i++)
        if (keys[i] == key)
            return true;
    return false;
}

static void key_terms(solver *s, place_index *ix, place_query *q, const podstate *st)
{
    kp_sym keys[PI_MAX_TERMS];
    uint32_t n = 0;
    if (kp_requirements_get(&st->reqs, KP_SYM_ZONE))
        keys[n++] = KP_SYM_ZONE;
    if (kp_requirements_get(&st->reqs, KP_SYM_CAPACITY_TYPE))
        keys[n++] = KP_SYM_CAPACITY_TYPE;
    n += topo_pod_keys(s, st, keys + n, PI_MAX_TERMS - n);
    for (uint32_t i = 0; i < n; i++)
        if (keys[i] != KP_SYM_HOSTNAME && !key_seen(keys, i, keys[i]))
            key_term(s, ix, q, st, keys[i]);
}

static void host_term(solver *s, place_index *ix, place_query *q, const podstate *st, int which, uint32_t gi)
{
    const tgroup *g = group_at(s, which, gi);
    int32_t need = topo_host_need(s, st, g);
    if (need == TOPO_HOST_ANY)
        return;
    host_index *h = host_get(s, ix, which, gi);
    if (need == TOPO_HOST_NONE) {
        q->empty = true;
        return;
    }
    if (need == TOPO_HOST_SOME) {
        const pbits *b = h->le[0];
        term_add(q, &b, 1, true);
        return;
    }
    for (int i = 0; i < 2; i++) {
        if (h->lim[i] == need) {
            const pbits *b = h->le[i];
            term_add(q, &b, 1, false);
        }
    }
}

static void host_terms(solver *s, place_index *ix, place_query *q, const podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < st->n_groups && !q->empty; i++)
        if (s->topo.groups[st->groups[i]].key == KP_SYM_HOSTNAME)
            host_term(s, ix, q, st, 0, st->groups[i]);
    for (uint32_t i = 0; i < s->topo.n_inverse && !q->empty; i++) {
        const tgroup *g = &s->topo.inverse[i];
        if (g->key == KP_SYM_HOSTNAME && topo_selects(g, p))
            host_term(s, ix, q, st, 1, i);
    }
}

void place_query_init(solver *s, place_index *ix, const podstate *st, place_query *q)
{
    memset(q, 0, sizeof(*q));
    q->ix = ix;
    q->word = UINT32_MAX;
    if (ix->n_slots == 0) {
        q->empty = true;
        return;
    }
    /* the terms that usually rule out the most places first: a word is dropped at the first zero */
    host_terms(s, ix, q, st);
    key_terms(s, ix, q, st);
    template_term(s, ix, q, st);
    resource_terms(ix, q, &s->snap->pods[st->pod]);
    q->level = ix->levelled ? 1 : 0;
}

static uint64_t term_word(const place_term *t, uint32_t w)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < t->n; i++)
        v |= t->any[i]->w[w];
    return t->negate ? ~v : v;
}

/* Which words of summary word `i` may hold candidates: a negated term says nothing here. */
static uint64_t term_sum(const place_term *t, uint32_t i)
{
    if (t->negate)
        return ~UINT64_C(0);
    uint64_t v = 0;
    for (uint32_t k = 0; k < t->n; k++)
        v |= t->any[k]->sum[i];
    return v;
}

/* Candidates of `base` (a level, or every place) after the current word. */
static bool scan_base(place_query *q, const pbits *base)
{
    const place_index *ix = q->ix;
    uint32_t from = q->word == UINT32_MAX ? 0 : q->word + 1;
    uint32_t n_sum = (ix->n_slots + 4095) / 4096; /* the summary words places were added to, not the capacity's */
    for (uint32_t i = from / 64; i < n_sum; i++) {
        uint64_t words = base->sum[i];
        if (i == from / 64)
            words &= ~UINT64_C(0) << (from % 64);
        for (uint32_t t = 0; t < q->n_terms && words; t++)
            words &= term_sum(&q->terms[t], i);
        while (words) {
            uint32_t w = i * 64 + (uint32_t)__builtin_ctzll(words);
            words &= words - 1;
            uint64_t m = base->w[w];
            for (uint32_t t = 0; t < q->n_terms && m; t++)
                m &= term_word(&q->terms[t], w);
            if (m) {
                q->word = w;
                q->pending = m;
                return true;
            }
        }
    }
    q->word = ix->n_words;
    return false;
}

int64_t place_query_next(place_query *q)
{
    place_index *ix = q->ix;
    if (q->empty)
        return -1;
    for (;;) {
        if (q->pending) {
            uint32_t b = (uint32_t)__builtin_ctzll(q->pending);
            q->pending &= q->pending - 1;
            return (int64_t)q->word * 64 + b;
        }
        if (!ix->levelled) {
            if (!scan_base(q, ix->all))
                return -1;
            continue;
        }
        while (q->level < ix->n_levels && !ix->level[q->level])
            q->level++;
        if (q->level >= ix->n_levels)
            return -1;
        if (!scan_base(q, ix->level[q->level])) {
            q->level++;
            q->word = UINT32_MAX;
        }
    }
}

void topo_count_changed(solver *s, const tgroup *g, kp_sym domain)
{
    if (g->key != KP_SYM_HOSTNAME)
        return;
    if (s->claim_ix)
        place_index_count_changed(s, s->claim_ix, g, domain);
    if (s->node_ix)
        place_index_count_changed(s, s->node_ix, g, domain);
}
