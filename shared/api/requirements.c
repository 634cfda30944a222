/*
 * The requirements algebra (requirements.h). Value sets are sorted symbol
 * arrays, so every check is a merge walk or a bisection over integers and
 * never allocates; results are built from the caller's arena and share value
 * arrays with their inputs whenever the result equals one of them.
 */
#include "api/requirements.h"

#include "api/crd_tables.h"
#include "api/field_errors.h"
#include "api/wellknown.h"
#include "base/buf.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

enum {
    LINEAR_SCAN_MAX = 16,    /* below this, a scan beats a bisection */
    GALLOP_RATIO = 8,        /* size ratio from which probing beats a merge walk */
    STRING_VALUES_SHOWN = 5, /* Karpenter prints this many values, then "and N others" */
    STRING_MAX = 1 << 20,
};

/* The one table of operator names (parsing, printing, and the "supported
 * values" of validation and decoding messages) is the CRDs' operator enum,
 * which lists them in kp_selector_op's order. */
static const char *const *const op_names = kp_crd_requirement_operator_names;
_Static_assert(KP_SELECTOR_OP_COUNT == KP_CRD_REQUIREMENT_OPERATOR_COUNT, "operator count");
_Static_assert(KP_OP_IN == (int)KP_CRD_REQUIREMENT_OPERATOR_IN &&
                   KP_OP_NOT_IN == (int)KP_CRD_REQUIREMENT_OPERATOR_NOT_IN &&
                   KP_OP_EXISTS == (int)KP_CRD_REQUIREMENT_OPERATOR_EXISTS &&
                   KP_OP_DOES_NOT_EXIST == (int)KP_CRD_REQUIREMENT_OPERATOR_DOES_NOT_EXIST &&
                   KP_OP_GT == (int)KP_CRD_REQUIREMENT_OPERATOR_GT &&
                   KP_OP_LT == (int)KP_CRD_REQUIREMENT_OPERATOR_LT &&
                   KP_OP_GTE == (int)KP_CRD_REQUIREMENT_OPERATOR_GTE &&
                   KP_OP_LTE == (int)KP_CRD_REQUIREMENT_OPERATOR_LTE,
               "the CRDs list the operators in kp_selector_op's order");

int kp_selector_op_parse(const char *name)
{
    for (int op = 0; name && op < KP_SELECTOR_OP_COUNT; op++) {
        if (strcmp(name, op_names[op]) == 0) return op;
    }
    return -1;
}

const char *kp_selector_op_name(enum kp_selector_op op)
{
    return (unsigned)op < KP_SELECTOR_OP_COUNT ? op_names[op] : "";
}

const char *const *kp_selector_op_names(void)
{
    return op_names;
}

/* --- value sets --- */

static bool sym_contains(const kp_sym *v, uint32_t n, kp_sym x)
{
    if (n <= LINEAR_SCAN_MAX) {
        for (uint32_t i = 0; i < n; i++) {
            if (v[i] >= x) return v[i] == x;
        }
        return false;
    }
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == x;
}

struct bounds {
    bool has_gte, has_lte;
    int64_t gte, lte;
};

/* The tighter of both sides' bounds. */
static inline void bounds_combine(struct bounds *bd, const kp_requirement *a,
                                  const kp_requirement *b)
{
    bd->has_gte = a->has_gte || b->has_gte;
    bd->has_lte = a->has_lte || b->has_lte;
    bd->gte = !a->has_gte ? b->gte : !b->has_gte ? a->gte : (a->gte > b->gte ? a->gte : b->gte);
    bd->lte = !a->has_lte ? b->lte : !b->has_lte ? a->lte : (a->lte < b->lte ? a->lte : b->lte);
}

static bool bounds_empty(const struct bounds *bd)
{
    return bd->has_gte && bd->has_lte && bd->gte > bd->lte;
}

/* Bounds admit integers only: any other value is outside them. */
static inline bool within(const kp_symtab *symtab, const struct bounds *bd, kp_sym v)
{
    int64_t x;
    if (!bd->has_gte && !bd->has_lte) return true;
    if (!kp_sym_int(symtab, v, &x)) return false;
    return (!bd->has_gte || x >= bd->gte) && (!bd->has_lte || x <= bd->lte);
}

/* Is some value in both x and y (and within the bounds)? */
static bool any_common(const kp_symtab *symtab, const struct bounds *bd, const kp_sym *x,
                       uint32_t nx, const kp_sym *y, uint32_t ny)
{
    if (nx > ny) {
        const kp_sym *t = x;
        x = y, y = t;
        uint32_t tn = nx;
        nx = ny, ny = tn;
    }
    if ((uint64_t)nx * GALLOP_RATIO < ny) {
        for (uint32_t i = 0; i < nx; i++) {
            if (sym_contains(y, ny, x[i]) && within(symtab, bd, x[i])) return true;
        }
        return false;
    }
    for (uint32_t i = 0, j = 0; i < nx && j < ny;) {
        if (x[i] < y[j])
            i++;
        else if (x[i] > y[j])
            j++;
        else if (within(symtab, bd, x[i]))
            return true;
        else
            i++, j++;
    }
    return false;
}

/* Is some value of x outside `excl` (and within the bounds)? */
static bool any_outside(const kp_symtab *symtab, const struct bounds *bd, const kp_sym *x,
                        uint32_t nx, const kp_sym *excl, uint32_t ne)
{
    for (uint32_t i = 0, j = 0; i < nx; i++) {
        while (j < ne && excl[j] < x[i])
            j++;
        if ((j == ne || excl[j] != x[i]) && within(symtab, bd, x[i])) return true;
    }
    return false;
}

/* Which parts of a merge walk over a's and b's values to keep. */
enum { KEEP_A_ONLY = 1, KEEP_B_ONLY = 2, KEEP_BOTH = 4 };

struct merge_count {
    uint32_t n, a_only, b_only;
};

/* Count (and with `out`, write) the kept values, in ascending order. */
static struct merge_count merge_values(const kp_symtab *symtab, const struct bounds *bd,
                                       const kp_requirement *a, const kp_requirement *b,
                                       unsigned keep, kp_sym *out)
{
    struct merge_count m = {0, 0, 0};
    const kp_sym *av = a->values, *bv = b->values;
    uint32_t na = a->n_values, nb = b->n_values, i = 0, j = 0;
    while (i < na || j < nb) {
        kp_sym v;
        unsigned part;
        if (j == nb || (i < na && av[i] < bv[j]))
            v = av[i++], part = KEEP_A_ONLY;
        else if (i == na || bv[j] < av[i])
            v = bv[j++], part = KEEP_B_ONLY;
        else
            v = av[i++], j++, part = KEEP_BOTH;
        if (!(keep & part) || !within(symtab, bd, v)) continue;
        if (out) out[m.n] = v;
        m.n++;
        m.a_only += part == KEEP_A_ONLY;
        m.b_only += part == KEEP_B_ONLY;
    }
    return m;
}

static int compare_syms(const void *a, const void *b)
{
    kp_sym x = *(const kp_sym *)a, y = *(const kp_sym *)b;
    return (x > y) - (x < y);
}

/* --- one requirement --- */

static int check_values(const char *key, enum kp_selector_op op, const char *const *values,
                        size_t n_values)
{
    for (size_t i = 0; i < n_values; i++) {
        if (!values || !values[i])
            return kp_error_set(KP_EINVALID, "key %s: value %zu is missing", key, i);
    }
    switch (op) {
    case KP_OP_IN:
        if (n_values == 0)
            return kp_error_set(KP_EINVALID, "key %s: operator In needs at least one value", key);
        return 0;
    case KP_OP_NOT_IN:
        return 0;
    case KP_OP_EXISTS:
    case KP_OP_DOES_NOT_EXIST:
        if (n_values != 0)
            return kp_error_set(KP_EINVALID, "key %s: operator %s takes no values, got %zu", key,
                                op_names[op], n_values);
        return 0;
    case KP_OP_GT:
    case KP_OP_LT:
    case KP_OP_GTE:
    case KP_OP_LTE:
        if (n_values != 1)
            return kp_error_set(KP_EINVALID, "key %s: operator %s needs exactly one value, got %zu",
                                key, op_names[op], n_values);
        if (!kp_sym_parse_int(values[0], strlen(values[0]), NULL))
            return kp_error_set(KP_EINVALID,
                                "key %s: operator %s needs an integer value, got \"%s\"", key,
                                op_names[op], values[0]);
        return 0;
    }
    return kp_error_set(KP_EINVALID, "key %s: unsupported operator %d", key, (int)op);
}

static void set_values(kp_requirement *r, kp_symtab *symtab, kp_arena *arena,
                       const char *const *values, size_t n_values)
{
    if (n_values == 0) return;
    kp_sym *v = kp_arena_alloc(arena, n_values * sizeof(kp_sym));
    for (size_t i = 0; i < n_values; i++)
        v[i] = kp_sym_intern(symtab, values[i]);
    qsort(v, n_values, sizeof(kp_sym), compare_syms);
    uint32_t n = 1;
    for (size_t i = 1; i < n_values; i++) {
        if (v[i] != v[n - 1]) v[n++] = v[i];
    }
    r->values = v;
    r->n_values = n;
}

/* Gt/Lt/Gte/Lte as bounds on "any value". Gt MAX and Lt MIN admit nothing. */
static void set_bound(kp_requirement *r, enum kp_selector_op op, int64_t v)
{
    if ((op == KP_OP_GT && v == INT64_MAX) || (op == KP_OP_LT && v == INT64_MIN)) {
        r->complement = false;
        r->min_values = 0; /* Karpenter rebuilds it as a plain DoesNotExist */
        return;
    }
    if (op == KP_OP_GT || op == KP_OP_GTE) {
        r->has_gte = true;
        r->gte = op == KP_OP_GT ? v + 1 : v;
    } else {
        r->has_lte = true;
        r->lte = op == KP_OP_LT ? v - 1 : v;
    }
}

int kp_requirement_new(kp_requirement *out, kp_symtab *symtab, kp_arena *arena, const char *key,
                       enum kp_selector_op op, const char *const *values, size_t n_values,
                       int32_t min_values)
{
    if (!key) return kp_error_set(KP_EINVALID, "requirement has no key");
    int err = check_values(key, op, values, n_values);
    if (err < 0) return err;
    if (min_values < 0)
        return kp_error_set(KP_EINVALID, "key %s: minValues must be at least 1, got %d", key,
                            (int)min_values);
    kp_requirement r = {0};
    r.key = kp_sym_intern(symtab, kp_label_normalize(key));
    r.min_values = min_values;
    r.complement = op != KP_OP_IN && op != KP_OP_DOES_NOT_EXIST;
    if (op == KP_OP_IN || op == KP_OP_NOT_IN) {
        set_values(&r, symtab, arena, values, n_values);
    } else if (op != KP_OP_EXISTS && op != KP_OP_DOES_NOT_EXIST) {
        int64_t v = 0;
        kp_sym_parse_int(values[0], strlen(values[0]), &v);
        set_bound(&r, op, v);
    }
    *out = r;
    return 0;
}

enum kp_selector_op kp_requirement_operator(const kp_requirement *req)
{
    if (req->complement) return req->n_values > 0 ? KP_OP_NOT_IN : KP_OP_EXISTS;
    return req->n_values > 0 ? KP_OP_IN : KP_OP_DOES_NOT_EXIST;
}

bool kp_requirement_has(const kp_symtab *symtab, const kp_requirement *req, kp_sym value)
{
    if (sym_contains(req->values, req->n_values, value) == req->complement) return false;
    struct bounds bd = {req->has_gte, req->has_lte, req->gte, req->lte};
    return within(symtab, &bd, value);
}

bool kp_requirement_intersects(const kp_symtab *symtab, const kp_requirement *a,
                               const kp_requirement *b)
{
    static const struct bounds unbounded = {false, false, 0, 0};
    struct bounds combined;
    const struct bounds *bd = &unbounded;
    if (a->has_gte || a->has_lte || b->has_gte || b->has_lte) {
        bounds_combine(&combined, a, b);
        if (bounds_empty(&combined)) return false;
        bd = &combined;
    }
    if (a->complement && b->complement) return true;
    if (a->complement)
        return any_outside(symtab, bd, b->values, b->n_values, a->values, a->n_values);
    if (b->complement)
        return any_outside(symtab, bd, a->values, a->n_values, b->values, b->n_values);
    return any_common(symtab, bd, a->values, a->n_values, b->values, b->n_values);
}

void kp_requirement_intersect(kp_requirement *out, const kp_symtab *symtab, kp_arena *arena,
                              const kp_requirement *a, const kp_requirement *b)
{
    struct bounds bd;
    bounds_combine(&bd, a, b);
    kp_requirement r = {0};
    r.key = a->key;
    r.min_values = a->min_values > b->min_values ? a->min_values : b->min_values;
    if (bounds_empty(&bd)) {
        *out = r; /* DoesNotExist, keeping minValues */
        return;
    }
    r.complement = a->complement && b->complement;
    unsigned keep = r.complement    ? KEEP_A_ONLY | KEEP_B_ONLY | KEEP_BOTH
                    : a->complement ? KEEP_B_ONLY
                    : b->complement ? KEEP_A_ONLY
                                    : KEEP_BOTH;
    struct merge_count m = merge_values(symtab, &bd, a, b, keep, NULL);
    r.n_values = m.n;
    if (m.n > 0 && m.b_only == 0 && m.n == a->n_values) {
        r.values = a->values;
    } else if (m.n > 0 && m.a_only == 0 && m.n == b->n_values) {
        r.values = b->values;
    } else if (m.n > 0) {
        kp_sym *v = kp_arena_alloc(arena, m.n * sizeof(kp_sym));
        merge_values(symtab, &bd, a, b, keep, v);
        r.values = v;
    }
    /* A concrete set has no use for bounds: its values were filtered already. */
    if (r.complement) {
        r.has_gte = bd.has_gte, r.gte = bd.has_gte ? bd.gte : 0;
        r.has_lte = bd.has_lte, r.lte = bd.has_lte ? bd.lte : 0;
    }
    *out = r;
}

size_t kp_requirement_len(const kp_requirement *req)
{
    return req->complement ? SIZE_MAX : req->n_values;
}

kp_sym kp_requirement_single_value(const kp_requirement *req)
{
    return !req->complement && req->n_values == 1 ? req->values[0] : KP_SYM_NONE;
}

/* The (up to) STRING_VALUES_SHOWN smallest values by string, in order. */
static size_t smallest_strings(const kp_symtab *symtab, const kp_requirement *req,
                               const char **shown)
{
    size_t n = 0;
    for (uint32_t i = 0; i < req->n_values; i++) {
        const char *s = kp_sym_str(symtab, req->values[i]);
        s = s ? s : "";
        size_t at = n;
        while (at > 0 && strcmp(s, shown[at - 1]) < 0)
            at--;
        if (at == STRING_VALUES_SHOWN) continue;
        size_t last = n < STRING_VALUES_SHOWN ? n : STRING_VALUES_SHOWN - 1;
        memmove(&shown[at + 1], &shown[at], (last - at) * sizeof(*shown));
        shown[at] = s;
        if (n < STRING_VALUES_SHOWN) n++;
    }
    return n;
}

static int append_values(kp_buf *b, const kp_symtab *symtab, const kp_requirement *req)
{
    const char *shown[STRING_VALUES_SHOWN];
    size_t n = smallest_strings(symtab, req, shown);
    int err = kp_buf_puts(b, " [");
    for (size_t i = 0; i < n && !err; i++)
        err = kp_buf_printf(b, "%s%s", i ? " " : "", shown[i]);
    if (!err && req->n_values > STRING_VALUES_SHOWN)
        err = kp_buf_printf(b, " and %u others", req->n_values - STRING_VALUES_SHOWN);
    return err ? err : kp_buf_putc(b, ']');
}

static int append_requirement(kp_buf *b, const kp_symtab *symtab, const kp_requirement *req)
{
    enum kp_selector_op op = kp_requirement_operator(req);
    const char *key = kp_sym_str(symtab, req->key);
    int err = kp_buf_printf(b, "%s %s", key ? key : "", op_names[op]);
    if (!err && (op == KP_OP_IN || op == KP_OP_NOT_IN)) err = append_values(b, symtab, req);
    if (!err && req->has_gte) err = kp_buf_printf(b, " >=%lld", (long long)req->gte);
    if (!err && req->has_lte) err = kp_buf_printf(b, " <=%lld", (long long)req->lte);
    if (!err && req->min_values) err = kp_buf_printf(b, " minValues %d", (int)req->min_values);
    return err;
}

/* The text in `arena`; when an append failed (past STRING_MAX), what fit,
 * marked as cut, rather than a text that reads complete. */
static char *buf_to_arena(kp_arena *arena, kp_buf *b, int err)
{
    char *s = err < 0
                  ? kp_arena_printf(arena, "%s ... (cut at %d bytes)", kp_buf_cstr(b), STRING_MAX)
                  : kp_arena_strdup(arena, kp_buf_cstr(b));
    kp_buf_free(b);
    return s;
}

char *kp_requirement_string(const kp_symtab *symtab, kp_arena *arena, const kp_requirement *req)
{
    kp_buf b = KP_BUF_INIT(STRING_MAX);
    int err = append_requirement(&b, symtab, req);
    return buf_to_arena(arena, &b, err);
}

/* --- sets of requirements --- */

void kp_requirements_init(kp_requirements *reqs)
{
    reqs->items = NULL;
    reqs->count = 0;
    reqs->cap = 0;
}

void kp_requirements_copy(kp_requirements *dst, kp_arena *arena, const kp_requirements *src)
{
    dst->items =
        src->count ? kp_arena_memdup(arena, src->items, src->count * sizeof(*src->items)) : NULL;
    dst->count = src->count;
    dst->cap = src->count;
}

/* The index of `key`, or where it would be inserted. */
static uint32_t find_key(const kp_requirements *reqs, kp_sym key)
{
    uint32_t lo = 0, hi = reqs->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (reqs->items[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void kp_requirements_add(kp_requirements *reqs, const kp_symtab *symtab, kp_arena *arena,
                         const kp_requirement *req)
{
    uint32_t at = find_key(reqs, req->key);
    if (at < reqs->count && reqs->items[at].key == req->key) {
        kp_requirement r;
        kp_requirement_intersect(&r, symtab, arena, req, &reqs->items[at]);
        reqs->items[at] = r;
        return;
    }
    kp_requirement r = *req; /* `req` may live in the array about to move */
    if (reqs->count == reqs->cap) {
        uint32_t cap = reqs->cap ? reqs->cap * 2 : 8;
        reqs->items = kp_arena_grow(arena, reqs->items, reqs->count, cap, sizeof(*reqs->items));
        reqs->cap = cap;
    }
    memmove(&reqs->items[at + 1], &reqs->items[at], (reqs->count - at) * sizeof(*reqs->items));
    reqs->items[at] = r;
    reqs->count++;
}

void kp_requirements_add_all(kp_requirements *reqs, const kp_symtab *symtab, kp_arena *arena,
                             const kp_requirements *more)
{
    for (uint32_t i = 0; i < more->count; i++)
        kp_requirements_add(reqs, symtab, arena, &more->items[i]);
}

const kp_requirement *kp_requirements_get(const kp_requirements *reqs, kp_sym key)
{
    uint32_t at = find_key(reqs, key);
    return at < reqs->count && reqs->items[at].key == key ? &reqs->items[at] : NULL;
}

void kp_requirements_add_label(kp_requirements *reqs, kp_symtab *symtab, kp_arena *arena,
                               const char *key, const char *value)
{
    kp_requirement r;
    if (kp_requirement_new(&r, symtab, arena, key, KP_OP_IN, &value, 1, 0) == 0)
        kp_requirements_add(reqs, symtab, arena, &r);
}

/* NotIn and DoesNotExist: requirements a missing label satisfies. */
static bool is_negative(const kp_requirement *req)
{
    enum kp_selector_op op = kp_requirement_operator(req);
    return op == KP_OP_NOT_IN || op == KP_OP_DOES_NOT_EXIST;
}

static bool pair_conflicts(const kp_symtab *symtab, const kp_requirement *node,
                           const kp_requirement *pod)
{
    if (kp_requirement_intersects(symtab, node, pod)) return false;
    return !(is_negative(pod) && is_negative(node));
}

static void set_conflict(kp_requirements_conflict *conflict, kp_sym key, bool undefined,
                         const kp_requirement *node, const kp_requirement *pod)
{
    if (!conflict) return;
    conflict->key = key;
    conflict->undefined = undefined;
    conflict->node = node;
    conflict->pod = pod;
}

bool kp_requirements_intersects(const kp_symtab *symtab, const kp_requirements *node,
                                const kp_requirements *pod, kp_requirements_conflict *conflict)
{
    uint32_t i = 0, j = 0;
    while (i < node->count && j < pod->count) {
        const kp_requirement *n = &node->items[i], *p = &pod->items[j];
        if (n->key < p->key) {
            i++;
        } else if (n->key > p->key) {
            j++;
        } else {
            if (pair_conflicts(symtab, n, p)) {
                set_conflict(conflict, n->key, false, n, p);
                return false;
            }
            i++, j++;
        }
    }
    return true;
}

/* One pass: an undefined key wins over a conflict on a shared key (Karpenter
 * checks all keys for definition before it intersects). */
bool kp_requirements_compatible(const kp_symtab *symtab, const kp_requirements *node,
                                const kp_requirements *pod, unsigned flags,
                                kp_requirements_conflict *conflict)
{
    const kp_requirement *bad_node = NULL, *bad_pod = NULL;
    uint32_t i = 0;
    for (uint32_t j = 0; j < pod->count; j++) {
        const kp_requirement *p = &pod->items[j];
        while (i < node->count && node->items[i].key < p->key)
            i++;
        if (i < node->count && node->items[i].key == p->key) {
            if (!bad_pod && pair_conflicts(symtab, &node->items[i], p))
                bad_node = &node->items[i], bad_pod = p;
            continue;
        }
        if ((flags & KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN) && kp_sym_is_well_known(symtab, p->key))
            continue;
        if (is_negative(p)) continue;
        set_conflict(conflict, p->key, true, NULL, p);
        return false;
    }
    if (bad_pod) {
        set_conflict(conflict, bad_pod->key, false, bad_node, bad_pod);
        return false;
    }
    return true;
}

/* --- messages --- */

/* Karpenter's label suffix: the part after the first '/', else the key. */
static const char *label_name(const char *key)
{
    const char *slash = strchr(key, '/');
    return slash ? slash + 1 : key;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* Candidates for a "typo of" hint, as Karpenter matches them. Karpenter takes
 * whichever match its map yields first; we prefer one with the same name part
 * and otherwise the first in our order, so the hint is stable. */
struct hint {
    const char *key, *name;
    const char *first, *exact;
};

static void hint_consider(struct hint *h, const char *candidate)
{
    if (!candidate || h->exact) return;
    if (!strstr(candidate, h->key) && !ends_with(candidate, h->name)) return;
    if (!h->first) h->first = candidate;
    if (strcmp(label_name(candidate), h->name) == 0) h->exact = candidate;
}

static const char *hint_result(const struct hint *h)
{
    return h->exact ? h->exact : h->first;
}

static const char *label_hint(const kp_symtab *symtab, const kp_requirements *node, const char *key,
                              unsigned flags)
{
    struct hint h = {key, label_name(key), NULL, NULL};
    if (flags & KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN) {
        for (const char *const *wk = kp_well_known_labels(); *wk; wk++)
            hint_consider(&h, *wk);
        if (hint_result(&h)) return hint_result(&h);
    }
    for (uint32_t i = 0; node && i < node->count; i++)
        hint_consider(&h, kp_sym_str(symtab, node->items[i].key));
    return hint_result(&h);
}

char *kp_requirements_conflict_string_flags(const kp_symtab *symtab, kp_arena *arena,
                                            const kp_requirements *node,
                                            const kp_requirements_conflict *conflict,
                                            unsigned flags)
{
    const char *key = kp_sym_str(symtab, conflict->key);
    key = key ? key : "";
    if (conflict->undefined || !conflict->node || !conflict->pod) {
        const char *hint = label_hint(symtab, node, key, flags);
        return kp_arena_printf(arena, "label %s does not have known values%s%s%s",
                               kp_quote(arena, key), hint ? " (typo of " : "",
                               hint ? kp_quote(arena, hint) : "", hint ? "?)" : "");
    }
    return kp_arena_printf(arena, "key %s, %s not in %s", key,
                           kp_requirement_string(symtab, arena, conflict->pod),
                           kp_requirement_string(symtab, arena, conflict->node));
}

char *kp_requirements_conflict_string(const kp_symtab *symtab, kp_arena *arena,
                                      const kp_requirements *node,
                                      const kp_requirements_conflict *conflict)
{
    /* An undefined well-known key means the check ran without the flag. */
    unsigned flags = kp_sym_is_well_known(symtab, conflict->key)
                         ? 0
                         : (unsigned)KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN;
    return kp_requirements_conflict_string_flags(symtab, arena, node, conflict, flags);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *kp_requirements_string(const kp_symtab *symtab, kp_arena *arena, const kp_requirements *reqs)
{
    const char **parts = kp_arena_calloc(arena, reqs->count ? reqs->count : 1, sizeof(char *));
    size_t n = 0;
    for (uint32_t i = 0; i < reqs->count; i++) {
        if (reqs->items[i].key != KP_SYM_HOSTNAME) /* Karpenter's RestrictedLabels */
            parts[n++] = kp_requirement_string(symtab, arena, &reqs->items[i]);
    }
    qsort(parts, n, sizeof(*parts), compare_strings);
    kp_buf b = KP_BUF_INIT(STRING_MAX);
    int err = 0;
    for (size_t i = 0; i < n && !err; i++)
        err = kp_buf_printf(&b, "%s%s", i ? ", " : "", parts[i]);
    return buf_to_arena(arena, &b, err);
}
