/*
 * YAML events -> cJSON trees. One pass over libyaml's events with an explicit
 * stack of open collections (so input depth never becomes C stack depth).
 * Scalars are resolved by go-yaml v2's rules (resolve() below), keys are
 * turned into strings, aliases are copied from their anchor, "<<" merges are
 * applied by appending the merged members; duplicate keys are collapsed once
 * the document is complete, so that anchors can keep pointing into the tree
 * until then.
 *
 * Memory: cJSON nodes are malloc'ed by cJSON and belong to the tree being
 * built; frames, anchors and key strings live in a per-call arena. Nodes that
 * left the tree but may still be aliased (merge values, anchored keys) wait in
 * a "spare" array that is freed with the document.
 */
#include "format/yaml.h"
#include "format/json_out.h"

#include "base/arena.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MERGE_TAG "tag:yaml.org,2002:merge"

/* ---- scalars: go-yaml v2's resolution ------------------------------------ */

enum scalar_kind { S_NULL, S_BOOL, S_INT, S_UINT, S_FLOAT, S_STR };

struct scalar {
    enum scalar_kind kind;
    int b;
    int64_t i;
    uint64_t u; /* integers above INT64_MAX */
    double f;
    const char *str; /* S_STR: NUL-terminated, `len` bytes (may hold NULs) */
    size_t len;
};

enum tag_kind { T_NONE, T_STR, T_BOOL, T_INT, T_FLOAT, T_NULL, T_TIMESTAMP, T_BINARY, T_OTHER };

static const char *const tag_names[] = {"",     "str",       "bool",   "int", "float",
                                        "null", "timestamp", "binary", ""};

static enum tag_kind tag_kind(const char *tag)
{
    static const char prefix[] = "tag:yaml.org,2002:";
    if (!tag) return T_NONE;
    if (strncmp(tag, prefix, sizeof(prefix) - 1) != 0) return T_OTHER;
    for (int k = T_STR; k < T_OTHER; k++)
        if (strcmp(tag + sizeof(prefix) - 1, tag_names[k]) == 0) return (enum tag_kind)k;
    return T_OTHER;
}

/* Plain scalars with a fixed meaning: YAML 1.1 booleans and nulls, .inf, .nan. */
static const struct {
    const char *words; /* space-separated spellings */
    enum scalar_kind kind;
    int b;
    double f;
} fixed_scalars[] = {
    {"y Y yes Yes YES true True TRUE on On ON", S_BOOL, 1, 0},
    {"n N no No NO false False FALSE off Off OFF", S_BOOL, 0, 0},
    {"~ null Null NULL", S_NULL, 0, 0},
    {".nan .NaN .NAN", S_FLOAT, 0, NAN},
    {".inf .Inf .INF +.inf +.Inf +.INF", S_FLOAT, 0, INFINITY},
    {"-.inf -.Inf -.INF", S_FLOAT, 0, -INFINITY},
};

static int word_in(const char *words, const char *v, size_t n)
{
    for (const char *w = words; *w;) {
        size_t len = strcspn(w, " ");
        if (len == n && memcmp(w, v, n) == 0) return 1;
        w += len + (w[len] == ' ');
    }
    return 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Go's strconv.ParseUint(s, 0, 64): 0x/0o/0b prefixes, a leading 0 is octal. */
static int go_parse_uint(const char *s, uint64_t *out)
{
    unsigned base = 10;
    if (!*s) return 0;
    if (s[0] == '0') {
        char c = (char)(s[1] | 0x20);
        int prefixed = s[1] && s[2] && (c == 'b' || c == 'o' || c == 'x');
        base = !prefixed ? 8 : c == 'b' ? 2 : c == 'o' ? 8 : 16;
        s += prefixed ? 2 : 1;
    }
    uint64_t n = 0;
    for (; *s; s++) {
        char c = (char)(*s | 0x20);
        unsigned d = is_digit(*s)             ? (unsigned)(*s - '0')
                     : (c >= 'a' && c <= 'z') ? (unsigned)(c - 'a' + 10)
                                              : 99;
        if (d >= base || n > (UINT64_MAX - d) / base) return 0;
        n = n * base + d;
    }
    *out = n;
    return 1;
}

static int go_parse_int(const char *s, int64_t *out)
{
    int neg = s[0] == '-';
    uint64_t u;
    if (!go_parse_uint(s + (s[0] == '-' || s[0] == '+'), &u)) return 0;
    if (u > (uint64_t)INT64_MAX + (unsigned)neg) return 0;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 1;
}

static size_t skip_digits(const char *s, size_t i)
{
    while (is_digit(s[i]))
        i++;
    return i;
}

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int yaml_style_float(const char *s)
{
    size_t i = (s[0] == '-' || s[0] == '+'), j;
    if (s[i] == '.') {
        if ((j = skip_digits(s, i + 1)) == i + 1) return 0;
    } else {
        if ((j = skip_digits(s, i)) == i) return 0;
        if (s[j] == '.') j = skip_digits(s, j + 1);
    }
    if (s[j] == 'e' || s[j] == 'E') {
        i = j + 1 + (s[j + 1] == '-' || s[j + 1] == '+');
        if ((j = skip_digits(s, i)) == i) return 0;
    }
    return s[j] == '\0';
}

/* Go's rule for '_' in number literals: only between digits. */
static int underscores_ok(const char *s, size_t n)
{
    char saw = '^';
    for (size_t i = 0; i < n; i++) {
        if (is_digit(s[i]))
            saw = '0';
        else if (s[i] == '_' && saw != '0')
            return 0;
        else if (s[i] == '_')
            saw = '_';
        else if (saw == '_')
            return 0;
        else
            saw = '!';
    }
    return saw != '_';
}

static int parse_float(const char *s, double *out)
{
    char *end;
    double f = strtod(s, &end);
    if (*end || isinf(f)) /* Go refuses overflow; underflow to 0 is fine */
        return 0;
    *out = f;
    return 1;
}

/* Plain scalars that start with a digit or a sign: integer, else float, else
 * string, as go-yaml tries them (after dropping every '_'). */
static void resolve_number(struct scalar *out, const char *v, size_t n, int dot)
{
    char small[64];
    char *s = n < sizeof(small) ? small : kp_xmalloc(n + 1);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] != '_') s[len++] = v[i];
    s[len] = '\0';
    if (memchr(v, '\0', n)) {
        /* embedded NUL: not a number */
    } else if (dot) {
        if (underscores_ok(v, n) && yaml_style_float(s) && parse_float(s, &out->f))
            out->kind = S_FLOAT;
    } else if (go_parse_int(s, &out->i)) {
        out->kind = S_INT;
    } else if (go_parse_uint(s, &out->u)) {
        out->kind = S_UINT;
    } else if (yaml_style_float(s) && parse_float(s, &out->f)) {
        out->kind = S_FLOAT;
    }
    if (s != small) free(s);
}

/* The type a plain, untagged scalar has. */
static void resolve_plain(struct scalar *out, const char *v, size_t n)
{
    out->kind = S_STR;
    if (n == 0) {
        out->kind = S_NULL;
        return;
    }
    for (size_t k = 0; k < sizeof(fixed_scalars) / sizeof(fixed_scalars[0]); k++) {
        if (word_in(fixed_scalars[k].words, v, n)) {
            out->kind = fixed_scalars[k].kind;
            out->b = fixed_scalars[k].b;
            out->f = fixed_scalars[k].f;
            return;
        }
    }
    if (v[0] == '.')
        resolve_number(out, v, n, 1);
    else if (is_digit(v[0]) || v[0] == '-' || v[0] == '+')
        resolve_number(out, v, n, 0);
}

static size_t take_digits(const char *s, size_t *i, size_t min, size_t max, int *value)
{
    size_t start = *i;
    *value = 0;
    while (*i - start < max && is_digit(s[*i]))
        *value = *value * 10 + (s[(*i)++] - '0');
    return *i - start >= min;
}

/* The timestamp layouts go-yaml accepts for !!timestamp: 2001-12-14,
 * 2001-12-14T21:59:43.10Z (or +hh:mm), 2001-12-14 21:59:43.10. */
static int looks_like_timestamp(const char *s)
{
    size_t i = 0;
    int v, month, day;
    if (!take_digits(s, &i, 4, 4, &v) || s[i++] != '-' || !take_digits(s, &i, 1, 2, &month) ||
        s[i++] != '-' || !take_digits(s, &i, 1, 2, &day) || month < 1 || month > 12 || day < 1 ||
        day > 31)
        return 0;
    if (!s[i]) return 1;
    char sep = s[i++];
    int h, m, sec;
    if ((sep != 'T' && sep != 't' && sep != ' ') || !take_digits(s, &i, 1, 2, &h) || h > 23 ||
        s[i++] != ':' || !take_digits(s, &i, 1, 2, &m) || m > 59 || s[i++] != ':' ||
        !take_digits(s, &i, 1, 2, &sec) || sec > 59)
        return 0;
    if (s[i] == '.' && !take_digits(s, (i++, &i), 1, 9, &v)) return 0;
    if (sep == ' ') return !s[i];
    if (s[i] == 'Z') return !s[i + 1];
    return (s[i] == '+' || s[i] == '-') && (i++, take_digits(s, &i, 2, 2, &v)) && s[i++] == ':' &&
           take_digits(s, &i, 2, 2, &v) && !s[i];
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* !!binary: base64 (line breaks ignored) whose bytes become a string, each
 * byte that is not valid UTF-8 replaced by U+FFFD as encoding/json does. */
static int decode_binary(struct scalar *out, const char *v, size_t n, kp_arena *arena)
{
    unsigned char *raw = kp_arena_alloc(arena, n / 4 * 3 + 3);
    size_t len = 0, quads = 0, pad = 0;
    unsigned acc = 0;
    for (size_t i = 0; i < n; i++) {
        int d = v[i] == '=' ? 0 : b64_value((unsigned char)v[i]);
        if (v[i] == '\n' || v[i] == '\r') continue;
        pad += v[i] == '=';
        if (d < 0 || (pad && v[i] != '=') || pad > 2) return KP_EINVALID;
        acc = acc << 6 | (unsigned)d;
        if (++quads % 4 == 0) {
            unsigned char bytes[3] = {(unsigned char)(acc >> 16), (unsigned char)(acc >> 8),
                                      (unsigned char)acc};
            memcpy(raw + len, bytes, 3 - pad);
            len += 3 - pad;
            acc = 0;
        }
    }
    if (quads % 4 || pad > 2) return KP_EINVALID;
    char *s = kp_arena_alloc(arena, 3 * len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = kp_json_utf8_len((const char *)raw + i, len - i);
        memcpy(s + o, k ? (const char *)raw + i : "\xEF\xBF\xBD", k ? k : 3);
        o += k ? k : 3;
        i += k ? k : 1;
    }
    s[o] = '\0';
    out->kind = S_STR;
    out->str = s;
    out->len = o;
    return 0;
}

static int tag_matches(enum tag_kind t, const struct scalar *s)
{
    switch (t) {
    case T_BOOL:
        return s->kind == S_BOOL;
    case T_INT:
        return s->kind == S_INT || s->kind == S_UINT;
    case T_FLOAT:
        return s->kind == S_FLOAT;
    case T_NULL:
        return s->kind == S_NULL;
    default:
        return 0;
    }
}

static const char *kind_tag(enum scalar_kind k)
{
    static const char *const names[] = {"null", "bool", "int", "int", "float", "str"};
    return names[k];
}

/* Resolve one scalar event. On a type clash, writes the problem and returns
 * KP_EINVALID. */
static int resolve(struct scalar *out, const char *v, size_t n, const char *tag, int plain,
                   kp_arena *arena, char *problem, size_t size)
{
    enum tag_kind t = tag_kind(tag);
    memset(out, 0, sizeof(*out));
    out->kind = S_STR;
    out->str = v;
    out->len = n;
    if (t == T_BINARY) {
        if (decode_binary(out, v, n, arena) == 0) return 0;
        snprintf(problem, size, "!!binary value contains invalid base64 data");
        return KP_EINVALID;
    }
    if ((t == T_NONE && !plain) || t == T_STR || t == T_OTHER) return 0;
    resolve_plain(out, v, n);
    if (t == T_NONE || tag_matches(t, out)) return 0;
    if (t == T_TIMESTAMP && out->kind == S_STR && looks_like_timestamp(v)) return 0;
    if (t == T_FLOAT && out->kind == S_INT) {
        out->kind = S_FLOAT;
        out->f = (double)out->i;
        return 0;
    }
    snprintf(problem, size, "cannot decode !!%s `%.*s` as a !!%s", kind_tag(out->kind),
             n > 40 ? 40 : (int)n, v, tag_names[t]);
    return KP_EINVALID;
}

int kp_yaml_plain_is_string(const char *text, size_t len)
{
    struct scalar s;
    char problem[8];
    if (resolve(&s, text, len, NULL, 1, NULL, problem, sizeof(problem)) < 0 || s.kind != S_STR)
        return 0;
    return !(len == 2 && memcmp(text, "<<", 2) == 0);
}

/* What an anchor names: a resolved scalar, or a collection in the tree. */
struct anchor {
    char *name;
    int open; /* collection still being built: an alias to it is a cycle */
    int is_scalar;
    struct scalar value; /* when is_scalar; strings copied into the arena */
    cJSON *node;         /* when a collection */
    size_t nodes, height;
};

/* An open mapping or sequence (frames[0] is the document itself). */
/* A key written in a mapping (not brought in by a merge), and where. */
struct written_key {
    const char *key;
    int kind; /* enum scalar_kind: 1 and "1" are different YAML keys (both "1" in JSON) */
    yaml_mark_t mark;
};

struct frame {
    cJSON *node;
    struct anchor *anchor;
    const char *key; /* pending key of a mapping */
    int has_key, key_is_merge;
    size_t nodes, height; /* height: 1 + the deepest child's height (scalars are 0) */
    yaml_mark_t mark;
    struct written_key *keys; /* in the parser's arena */
    size_t n_keys, cap_keys;
};

struct parser {
    const char *name;
    kp_yaml_limits lim;
    const char *input;
    size_t input_len;
    kp_arena *arena;
    struct frame *frames;
    size_t depth, frames_cap;
    struct anchor **anchors; /* open-addressing hash table, cleared per document */
    size_t anchors_cap, anchors_used;
    cJSON *root, *spare;
    size_t doc_count, doc_line;
    int in_doc;
    size_t nodes, alias_nodes;
    kp_yaml_doc_fn fn;
    void *ctx;
};

/* ---- errors ------------------------------------------------------------ */

static int fail_at(struct parser *p, int code, const yaml_mark_t *mark, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(struct parser *p, int code, const yaml_mark_t *mark, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t doc = p->in_doc ? p->doc_count : p->doc_count + 1;
    return kp_error_set(code, "%s%sdocument %zu, line %zu column %zu: %s", p->name ? p->name : "",
                        p->name ? ": " : "", doc, mark->line + 1, mark->column + 1, msg);
}

/* Reader errors (bad encoding) carry a byte offset, not a mark. */
static int reader_error(struct parser *p, const yaml_parser_t *yp)
{
    yaml_mark_t mark = {0, 0, 0};
    int utf16 = p->input_len >= 2 &&
                ((unsigned char)p->input[0] == 0xFE || (unsigned char)p->input[0] == 0xFF);
    for (size_t i = 0; !utf16 && i < yp->problem_offset && i < p->input_len; i++) {
        if (p->input[i] == '\n') {
            mark.line++;
            mark.column = 0;
        } else if (((unsigned char)p->input[i] & 0xC0) != 0x80) {
            mark.column++;
        }
    }
    if (yp->problem_value != -1)
        return fail_at(p, KP_EINVALID, &mark, "%s: #%X at byte offset %zu", yp->problem,
                       (unsigned)yp->problem_value, yp->problem_offset);
    return fail_at(p, KP_EINVALID, &mark, "%s at byte offset %zu", yp->problem, yp->problem_offset);
}

static int libyaml_error(struct parser *p, const yaml_parser_t *yp)
{
    if (yp->error == YAML_MEMORY_ERROR) {
        fputs("karpenter: out of memory in libyaml\n", stderr);
        abort();
    }
    if (yp->error == YAML_READER_ERROR) return reader_error(p, yp);
    const char *problem = yp->problem ? yp->problem : "malformed YAML";
    if (!yp->context) return fail_at(p, KP_EINVALID, &yp->problem_mark, "%s", problem);
    return fail_at(p, KP_EINVALID, &yp->problem_mark, "%s (%s at line %zu column %zu)", problem,
                   yp->context, yp->context_mark.line + 1, yp->context_mark.column + 1);
}

static cJSON *must(cJSON *item)
{
    if (!item) {
        fputs("karpenter: out of memory in cJSON\n", stderr);
        abort();
    }
    return item;
}

/* ---- anchors ----------------------------------------------------------- */

static size_t hash_name(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static struct anchor **anchor_slot(struct anchor **table, size_t cap, const char *name)
{
    size_t i = hash_name(name) & (cap - 1);
    while (table[i] && strcmp(table[i]->name, name) != 0)
        i = (i + 1) & (cap - 1);
    return &table[i];
}

static struct anchor *anchor_find(struct parser *p, const char *name)
{
    return p->anchors_cap ? *anchor_slot(p->anchors, p->anchors_cap, name) : NULL;
}

/* A redefinition replaces the entry: aliases refer to the latest one. */
static struct anchor *anchor_define(struct parser *p, const char *name)
{
    if (2 * (p->anchors_used + 1) > p->anchors_cap) {
        size_t cap = p->anchors_cap ? 2 * p->anchors_cap : 16;
        struct anchor **table = KP_ARENA_NEW(p->arena, struct anchor *, cap);
        for (size_t i = 0; i < p->anchors_cap; i++)
            if (p->anchors[i]) *anchor_slot(table, cap, p->anchors[i]->name) = p->anchors[i];
        p->anchors = table;
        p->anchors_cap = cap;
    }
    struct anchor **slot = anchor_slot(p->anchors, p->anchors_cap, name);
    if (!*slot) p->anchors_used++;
    *slot = KP_ARENA_NEW(p->arena, struct anchor, 1);
    (*slot)->name = kp_arena_strdup(p->arena, name);
    return *slot;
}

static void anchor_scalar(struct parser *p, const char *name, const struct scalar *s)
{
    if (!name) return;
    struct anchor *a = anchor_define(p, name);
    a->is_scalar = 1;
    a->value = *s;
    if (s->kind == S_STR) a->value.str = kp_arena_memdup(p->arena, s->str, s->len + 1);
    a->nodes = 1;
}

/* ---- building ---------------------------------------------------------- */

static int count_nodes(struct parser *p, const yaml_mark_t *mark, size_t n, int aliased)
{
    if (n > p->lim.max_nodes - p->nodes)
        return fail_at(p, KP_ETOOLARGE, mark, "more than %zu values in one stream",
                       p->lim.max_nodes);
    if (aliased && n > p->lim.max_alias_nodes - p->alias_nodes)
        return fail_at(p, KP_ETOOLARGE, mark, "aliases and merges expand to more than %zu values",
                       p->lim.max_alias_nodes);
    p->nodes += n;
    if (aliased) p->alias_nodes += n;
    return 0;
}

static struct frame *top(struct parser *p)
{
    return &p->frames[p->depth];
}

static int at_key(struct parser *p)
{
    struct frame *f = top(p);
    return p->depth > 0 && cJSON_IsObject(f->node) && !f->has_key;
}

static int want_map(struct parser *p, const yaml_mark_t *mark)
{
    return fail_at(p, KP_EINVALID, mark, "map merge requires map or sequence of maps as the value");
}

/* Append copies of `from`'s members to `to`; duplicates are collapsed later,
 * which gives go-yaml v2's "last assignment wins" order of application. */
static void merge_members(cJSON *to, const cJSON *from)
{
    for (const cJSON *m = from->child; m; m = m->next)
        cJSON_AddItemToObject(to, m->string, must(cJSON_Duplicate(m, 1)));
}

static void grow(struct frame *f, size_t nodes, size_t child_height)
{
    f->nodes += nodes;
    if (f->height < child_height + 1) f->height = child_height + 1;
}

/* `value` is the value of a "<<" key in the top mapping; it is kept (anchors
 * may point into it) until the document ends. */
static int merge_value(struct parser *p, cJSON *value, size_t nodes, size_t height,
                       const yaml_mark_t *mark)
{
    struct frame *f = top(p);
    int err, list = cJSON_IsArray(value);
    cJSON_AddItemToArray(p->spare, value);
    for (const cJSON *e = value->child; list && e; e = e->next)
        if (!cJSON_IsObject(e)) return want_map(p, mark);
    if (!list && !cJSON_IsObject(value)) return want_map(p, mark);
    if ((err = count_nodes(p, mark, nodes - 1, 0)) < 0) return err;
    grow(f, nodes - 1, height > (size_t)list ? height - 1 - (size_t)list : 0);
    if (!list) {
        merge_members(f->node, value);
    } else if (value->child) {
        /* Earlier maps in the list take precedence: apply them last. */
        for (const cJSON *e = value->child->prev; e; e = e == value->child ? NULL : e->prev)
            merge_members(f->node, e);
    }
    f->has_key = f->key_is_merge = 0;
    return 0;
}

/* Hand a finished value to whatever is open: the document, a sequence, or a
 * mapping waiting for the value of its pending key. */
static int attach(struct parser *p, cJSON *child, size_t nodes, size_t height,
                  const yaml_mark_t *mark)
{
    struct frame *f = top(p);
    if (p->depth == 0) {
        p->root = child;
        return 0;
    }
    if (cJSON_IsObject(f->node) && f->key_is_merge)
        return merge_value(p, child, nodes, height, mark);
    grow(f, nodes, height);
    if (cJSON_IsArray(f->node)) {
        cJSON_AddItemToArray(f->node, child);
        return 0;
    }
    cJSON_AddItemToObject(f->node, f->key, child);
    f->has_key = 0;
    return 0;
}

static int scalar_node(struct parser *p, cJSON **out, const struct scalar *s,
                       const yaml_mark_t *mark)
{
    char text[32];
    switch (s->kind) {
    case S_NULL:
        *out = must(cJSON_CreateNull());
        return 0;
    case S_BOOL:
        *out = must(cJSON_CreateBool(s->b));
        return 0;
    case S_INT:
        *out = must(cJSON_CreateNumber((double)s->i));
        if (s->i > (int64_t)1 << 53 || s->i < -((int64_t)1 << 53))
            kp_json_number_set_text(*out, text,
                                    (size_t)snprintf(text, sizeof(text), "%lld", (long long)s->i));
        return 0;
    case S_UINT:
        *out = must(cJSON_CreateNumber((double)s->u));
        kp_json_number_set_text(
            *out, text, (size_t)snprintf(text, sizeof(text), "%llu", (unsigned long long)s->u));
        return 0;
    case S_FLOAT:
        if (!isfinite(s->f))
            return fail_at(p, KP_EINVALID, mark, "%s cannot be represented in JSON",
                           isnan(s->f) ? ".nan"
                           : s->f > 0  ? ".inf"
                                       : "-.inf");
        *out = must(cJSON_CreateNumber(s->f));
        return 0;
    case S_STR:
        if (memchr(s->str, '\0', s->len))
            return fail_at(p, KP_EINVALID, mark, "strings containing NUL are not supported");
        *out = must(cJSON_CreateString(s->str));
        return 0;
    }
    return fail_at(p, KP_ERROR, mark, "unknown scalar kind");
}

/* JSON keys are strings; others are spelled the way sigs.k8s.io/yaml does. */
static int set_key(struct parser *p, const struct scalar *s, const yaml_mark_t *mark)
{
    char text[64];
    struct frame *f = top(p);
    switch (s->kind) {
    case S_NULL:
        return fail_at(p, KP_EINVALID, mark, "unsupported map key: null");
    case S_BOOL:
        f->key = s->b ? "true" : "false";
        break;
    case S_INT:
        snprintf(text, sizeof(text), "%lld", (long long)s->i);
        f->key = kp_arena_strdup(p->arena, text);
        break;
    case S_UINT:
        return fail_at(p, KP_EINVALID, mark, "unsupported map key: %llu is out of the int64 range",
                       (unsigned long long)s->u);
    case S_FLOAT:
        f->key = kp_arena_strdup(p->arena,
                                 kp_json_format_float(text, sizeof(text), s->f, KP_FLOAT_KEY32));
        break;
    case S_STR:
        if (memchr(s->str, '\0', s->len))
            return fail_at(p, KP_EINVALID, mark, "strings containing NUL are not supported");
        f->key = kp_arena_strdup(p->arena, s->str);
        break;
    }
    f->has_key = 1;
    if (f->n_keys == f->cap_keys) {
        size_t cap = f->cap_keys ? f->cap_keys * 2 : 8;
        f->keys = kp_arena_grow(p->arena, f->keys, f->n_keys, cap, sizeof(*f->keys));
        f->cap_keys = cap;
    }
    f->keys[f->n_keys++] = (struct written_key){f->key, (int)s->kind, *mark};
    return 0;
}

static int written_key_cmp(const void *a, const void *b)
{
    const struct written_key *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return x->mark.index < y->mark.index ? -1 : x->mark.index > y->mark.index;
}

static int written_key_same(const struct written_key *a, const struct written_key *b)
{
    return a->kind == b->kind && strcmp(a->key, b->key) == 0;
}

/* A key written twice in one mapping is refused, as kubectl refuses it
 * ("mapping key "x" already defined at line N"): which of the two values the
 * author meant is anyone's guess. Keys a merge ("<<") brings in may be
 * overridden; that is what merges are for. */
static int check_written_keys(struct parser *p, struct frame *f)
{
    if (f->n_keys < 2) return 0;
    qsort(f->keys, f->n_keys, sizeof(*f->keys), written_key_cmp);
    const struct written_key *dup = NULL;
    for (size_t i = 1; i < f->n_keys; i++)
        if (written_key_same(&f->keys[i], &f->keys[i - 1]) &&
            (!dup || f->keys[i].mark.index < dup->mark.index))
            dup = &f->keys[i];
    if (!dup) return 0;
    const struct written_key *first = dup - 1;
    while (first > f->keys && written_key_same(first - 1, dup))
        first--;
    return fail_at(p, KP_EINVALID, &dup->mark, "mapping key \"%s\" already defined at line %zu",
                   dup->key, first->mark.line + 1);
}

static void note_doc_line(struct parser *p, const yaml_mark_t *mark)
{
    if (p->depth == 0) p->doc_line = mark->line + 1;
}

static int is_merge_key(const yaml_event_t *ev)
{
    const char *tag = (const char *)ev->data.scalar.tag;
    return ev->data.scalar.length == 2 && memcmp(ev->data.scalar.value, "<<", 2) == 0 &&
           (ev->data.scalar.plain_implicit || (tag && strcmp(tag, MERGE_TAG) == 0));
}

static int on_scalar(struct parser *p, const yaml_event_t *ev)
{
    const yaml_mark_t *mark = &ev->start_mark;
    struct scalar s;
    char problem[160];
    int err;

    note_doc_line(p, mark);
    err = resolve(&s, (const char *)ev->data.scalar.value, ev->data.scalar.length,
                  (const char *)ev->data.scalar.tag, ev->data.scalar.plain_implicit, p->arena,
                  problem, sizeof(problem));
    if (err < 0) return fail_at(p, err, mark, "%s", problem);
    anchor_scalar(p, (const char *)ev->data.scalar.anchor, &s);
    if (at_key(p)) {
        if (is_merge_key(ev)) {
            top(p)->has_key = top(p)->key_is_merge = 1;
            return 0;
        }
        return set_key(p, &s, mark);
    }
    if (cJSON_IsObject(top(p)->node) && top(p)->key_is_merge) return want_map(p, mark);
    cJSON *node;
    if ((err = count_nodes(p, mark, 1, 0)) < 0 || (err = scalar_node(p, &node, &s, mark)) < 0)
        return err;
    return attach(p, node, 1, 0, mark);
}

static int alias_merge(struct parser *p, const struct anchor *a, const yaml_mark_t *mark)
{
    int err;
    if (a->is_scalar || !cJSON_IsObject(a->node)) return want_map(p, mark);
    if ((err = count_nodes(p, mark, a->nodes - 1, 1)) < 0) return err;
    grow(top(p), a->nodes - 1, a->height - 1);
    merge_members(top(p)->node, a->node);
    top(p)->has_key = top(p)->key_is_merge = 0;
    return 0;
}

static int on_alias(struct parser *p, const yaml_event_t *ev)
{
    const yaml_mark_t *mark = &ev->start_mark;
    const char *name = (const char *)ev->data.alias.anchor;
    struct anchor *a = anchor_find(p, name);
    cJSON *node;
    int err;

    note_doc_line(p, mark);
    if (!a) return fail_at(p, KP_EINVALID, mark, "unknown anchor '%s' referenced", name);
    if (a->open) return fail_at(p, KP_EINVALID, mark, "anchor '%s' value contains itself", name);
    if (at_key(p)) {
        if (!a->is_scalar)
            return fail_at(p, KP_EINVALID, mark, "invalid map key: alias '%s' is a %s", name,
                           cJSON_IsObject(a->node) ? "mapping" : "sequence");
        return set_key(p, &a->value, mark);
    }
    if (cJSON_IsObject(top(p)->node) && top(p)->key_is_merge) return alias_merge(p, a, mark);
    if (a->is_scalar) {
        if ((err = count_nodes(p, mark, 1, 1)) < 0 ||
            (err = scalar_node(p, &node, &a->value, mark)) < 0)
            return err;
        return attach(p, node, 1, 0, mark);
    }
    if (p->depth + a->height > p->lim.max_depth)
        return fail_at(p, KP_ETOOLARGE, mark, "alias '%s' nests deeper than %zu levels", name,
                       p->lim.max_depth);
    if ((err = count_nodes(p, mark, a->nodes, 1)) < 0) return err;
    return attach(p, must(cJSON_Duplicate(a->node, 1)), a->nodes, a->height, mark);
}

static int on_start(struct parser *p, const yaml_event_t *ev, int mapping)
{
    const yaml_mark_t *mark = &ev->start_mark;
    const char *anchor =
        (const char *)(mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor);
    int err;

    note_doc_line(p, mark);
    if (at_key(p))
        return fail_at(p, KP_EINVALID, mark, "invalid map key: a %s cannot be a key",
                       mapping ? "mapping" : "sequence");
    if (p->depth + 1 > p->lim.max_depth)
        return fail_at(p, KP_ETOOLARGE, mark, "nesting deeper than %zu levels", p->lim.max_depth);
    if ((err = count_nodes(p, mark, 1, 0)) < 0) return err;
    p->frames = kp_xgrow(p->frames, &p->frames_cap, p->depth + 2, sizeof(struct frame));
    struct frame *f = &p->frames[++p->depth];
    memset(f, 0, sizeof(*f));
    f->node = must(mapping ? cJSON_CreateObject() : cJSON_CreateArray());
    f->nodes = f->height = 1;
    f->mark = *mark;
    if (anchor) {
        f->anchor = anchor_define(p, anchor);
        f->anchor->open = 1;
        f->anchor->node = f->node;
    }
    return 0;
}

static int on_end(struct parser *p)
{
    struct frame f = *top(p);
    int err = check_written_keys(p, &f);
    if (err < 0) return err;
    p->depth--;
    if (f.anchor) {
        f.anchor->open = 0;
        f.anchor->nodes = f.nodes;
        f.anchor->height = f.height;
    }
    return attach(p, f.node, f.nodes, f.height, &f.mark);
}

/* ---- documents ----------------------------------------------------------- */

static void doc_begin(struct parser *p)
{
    p->in_doc = 1;
    p->doc_count++;
    p->doc_line = 0;
    /* A fresh table (the old one stays in the arena): clearing a big one for
     * every following document would make "---" lines quadratic. */
    p->anchors = NULL;
    p->anchors_cap = p->anchors_used = 0;
    p->spare = must(cJSON_CreateArray());
}

/* Free whatever a document left behind (all of it, after an error). */
static void doc_discard(struct parser *p)
{
    for (; p->depth > 0; p->depth--)
        cJSON_Delete(p->frames[p->depth].node);
    cJSON_Delete(p->root);
    cJSON_Delete(p->spare);
    p->root = p->spare = NULL;
}

static int doc_end(struct parser *p)
{
    cJSON *root = p->root;
    p->root = NULL;
    doc_discard(p);
    p->in_doc = 0;
    if (!root || cJSON_IsNull(root)) {
        cJSON_Delete(root);
        return 0;
    }
    kp_json_dedupe_keys(root);
    kp_yaml_doc_info info = {p->doc_count - 1, p->doc_line};
    return p->fn(p->ctx, root, &info);
}

static int on_event(struct parser *p, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        doc_begin(p);
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        return doc_end(p);
    case YAML_SCALAR_EVENT:
        return on_scalar(p, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(p, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(p, ev, 0);
    case YAML_MAPPING_START_EVENT:
        return on_start(p, ev, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(p);
    default:
        return 0;
    }
}

static int run(struct parser *p, yaml_parser_t *yp)
{
    yaml_event_t ev;
    for (;;) {
        if (!yaml_parser_parse(yp, &ev)) return libyaml_error(p, yp);
        int done = ev.type == YAML_STREAM_END_EVENT;
        int err = on_event(p, &ev);
        yaml_event_delete(&ev);
        if (err < 0 || done) return err;
    }
}

int kp_yaml_parse_stream(const char *data, size_t len, const char *name,
                         const kp_yaml_limits *limits, kp_yaml_doc_fn fn, void *ctx)
{
    static const kp_yaml_limits defaults = KP_YAML_LIMITS_INIT;
    struct parser p = {.name = name,
                       .lim = limits ? *limits : defaults,
                       .input = data,
                       .input_len = len,
                       .fn = fn,
                       .ctx = ctx};
    yaml_parser_t yp;

    if (len > p.lim.max_bytes)
        return kp_error_set(KP_ETOOLARGE, "%s%sinput is %zu bytes, more than the limit of %zu",
                            name ? name : "", name ? ": " : "", len, p.lim.max_bytes);
    if (!yaml_parser_initialize(&yp)) {
        fputs("karpenter: out of memory in libyaml\n", stderr);
        abort();
    }
    yaml_parser_set_input_string(&yp, (const unsigned char *)(len ? data : ""), len);
    p.arena = kp_arena_new();
    p.frames = kp_xgrow(NULL, &p.frames_cap, 8, sizeof(struct frame));
    memset(&p.frames[0], 0, sizeof(p.frames[0]));
    int err = run(&p, &yp);
    doc_discard(&p);
    free(p.frames);
    kp_arena_free(p.arena);
    yaml_parser_delete(&yp);
    return err;
}

struct one {
    cJSON *root;
    const char *name;
};

static int keep_one(void *ctx, cJSON *root, const kp_yaml_doc_info *info)
{
    struct one *one = ctx;
    if (one->root) {
        cJSON_Delete(root);
        return kp_error_set(KP_EINVALID, "%s%sdocument %zu: expected a single document",
                            one->name ? one->name : "", one->name ? ": " : "", info->index + 1);
    }
    one->root = root;
    return 0;
}

int kp_yaml_parse_one(cJSON **out, const char *data, size_t len, const char *name,
                      const kp_yaml_limits *limits)
{
    struct one one = {NULL, name};
    int err = kp_yaml_parse_stream(data, len, name, limits, keep_one, &one);
    if (err < 0) {
        cJSON_Delete(one.root);
        return err;
    }
    *out = one.root;
    return 0;
}
