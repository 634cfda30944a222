/*
 * JSON Pointer building and lookup, JSON Patch building and application.
 * Application follows RFC 6902 section 4 operation by operation; array
 * indices are RFC 6901's: "0" or a digit string without leading zeros, and
 * "-" (one past the end) for add.
 */
#include "api/jsonpatch.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON returns NULL when malloc fails; like kp_x* we stop there. */
static cJSON *must(cJSON *item)
{
    if (!item) {
        fputs("fatal: out of memory building JSON\n", stderr);
        abort();
    }
    return item;
}

/* ---------------------------------------------------------------- pointers */

void kp_jsonpointer_init(kp_jsonpointer *ptr)
{
    memset(ptr, 0, sizeof(*ptr));
}

size_t kp_jsonpointer_escape(const char *token, char *buf, size_t size)
{
    size_t n = 0;
    for (const char *p = token; *p; p++) {
        const char *piece = *p == '~' ? "~0" : *p == '/' ? "~1" : NULL;
        size_t len = piece ? 2 : 1;
        for (size_t i = 0; i < len; i++, n++) {
            if (n + 1 < size) buf[n] = piece ? piece[i] : *p;
        }
    }
    if (size) buf[n < size ? n : size - 1] = '\0';
    return n;
}

static void pointer_append(kp_jsonpointer *ptr, const char *token)
{
    if (ptr->depth < KP_JSONPOINTER_DEPTH) ptr->marks[ptr->depth] = ptr->len;
    ptr->depth++;
    if (ptr->truncated) return;
    size_t room = sizeof(ptr->text) - ptr->len;
    size_t need = kp_jsonpointer_escape(token, ptr->text + ptr->len + 1, room > 1 ? room - 1 : 0);
    if (room < 2 || need + 2 > room || ptr->depth > KP_JSONPOINTER_DEPTH) {
        ptr->truncated = true;
        ptr->text[ptr->len] = '\0';
        return;
    }
    ptr->text[ptr->len] = '/';
    ptr->len += need + 1;
}

void kp_jsonpointer_push(kp_jsonpointer *ptr, const char *token)
{
    pointer_append(ptr, token);
}

void kp_jsonpointer_push_index(kp_jsonpointer *ptr, size_t index)
{
    char digits[32];
    snprintf(digits, sizeof(digits), "%zu", index);
    pointer_append(ptr, digits);
}

void kp_jsonpointer_pop(kp_jsonpointer *ptr)
{
    if (ptr->depth == 0) return;
    ptr->depth--;
    if (ptr->depth < KP_JSONPOINTER_DEPTH) {
        ptr->len = ptr->marks[ptr->depth];
        ptr->text[ptr->len] = '\0';
        ptr->truncated = false;
    }
}

const char *kp_jsonpointer_cstr(const kp_jsonpointer *ptr)
{
    return ptr->text;
}

/* Copy the next reference token of `*p` (just after a '/') into `out`,
 * unescaped. False for a malformed escape or a token that does not fit. */
static bool next_token(const char **p, char *out, size_t size)
{
    size_t n = 0;
    const char *s = *p;
    for (; *s && *s != '/'; s++) {
        char c = *s;
        if (c == '~') {
            if (s[1] != '0' && s[1] != '1') return false;
            c = s[1] == '0' ? '~' : '/';
            s++;
        }
        if (n + 1 >= size) return false;
        out[n++] = c;
    }
    out[n] = '\0';
    *p = s;
    return true;
}

/* RFC 6901 array index: "0" or [1-9][0-9]*. -1 when not one. */
static long parse_index(const char *token)
{
    if (!*token || (token[0] == '0' && token[1])) return -1;
    long v = 0;
    for (const char *c = token; *c; c++) {
        if (*c < '0' || *c > '9' || v > 100000000) return -1;
        v = v * 10 + (*c - '0');
    }
    return v;
}

static cJSON *child(const cJSON *node, const char *token)
{
    if (cJSON_IsObject(node)) return cJSON_GetObjectItemCaseSensitive(node, token);
    if (cJSON_IsArray(node)) {
        long i = parse_index(token);
        return i < 0 ? NULL : cJSON_GetArrayItem(node, (int)i);
    }
    return NULL;
}

/* Walk every token but the last; *last receives the last one. NULL when the
 * parent does not exist or the pointer is malformed or is "". */
static cJSON *resolve_parent(const cJSON *doc, const char *pointer, char *last, size_t size)
{
    if (!pointer || pointer[0] != '/') return NULL;
    const char *p = pointer;
    cJSON *node = (cJSON *)doc;
    while (*p == '/') {
        p++;
        if (!next_token(&p, last, size)) return NULL;
        if (*p == '\0') return node;
        node = child(node, last);
        if (!node) return NULL;
    }
    return NULL;
}

cJSON *kp_jsonpointer_get(const cJSON *doc, const char *pointer)
{
    if (pointer && !*pointer) return (cJSON *)doc;
    char last[KP_JSONPOINTER_MAX];
    cJSON *parent = resolve_parent(doc, pointer, last, sizeof(last));
    return parent ? child(parent, last) : NULL;
}

/* ---------------------------------------------------------------- building */

cJSON *kp_jsonpatch_new(void)
{
    return must(cJSON_CreateArray());
}

static void add_op(cJSON *patch, const char *op, const char *path, cJSON *value)
{
    cJSON *o = must(cJSON_CreateObject());
    must(cJSON_AddStringToObject(o, "op", op));
    must(cJSON_AddStringToObject(o, "path", path));
    if (value) cJSON_AddItemToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
}

void kp_jsonpatch_add(cJSON *patch, const char *path, cJSON *value)
{
    add_op(patch, "add", path, value);
}

void kp_jsonpatch_replace(cJSON *patch, const char *path, cJSON *value)
{
    add_op(patch, "replace", path, value);
}

void kp_jsonpatch_remove(cJSON *patch, const char *path)
{
    add_op(patch, "remove", path, NULL);
}

/* ---------------------------------------------------------------- applying */

/* Insert `item` before element `i` (or append when i is the size). Done by
 * hand: cJSON_InsertItemInArray of some cJSON releases refuses to insert in
 * the middle of a parsed array. */
static void insert_at(cJSON *array, int i, cJSON *item)
{
    cJSON *tail = must(cJSON_CreateArray());
    while (cJSON_GetArraySize(array) > i)
        cJSON_AddItemToArray(tail, cJSON_DetachItemFromArray(array, i));
    cJSON_AddItemToArray(array, item);
    while (tail->child)
        cJSON_AddItemToArray(array, cJSON_DetachItemFromArray(tail, 0));
    cJSON_Delete(tail);
}

typedef struct apply_ctx {
    size_t index;
    const char *op;
    const char *path;
} apply_ctx;

static int op_fail(const apply_ctx *c, const char *what)
{
    return kp_error_set(KP_EINVALID, "operation %zu (%s %s): %s", c->index, c->op ? c->op : "?",
                        c->path ? c->path : "?", what);
}

/* Put `value` (owned) at `pointer`: a member is set (replacing any), an array
 * element inserted; with `replace`, the target must already exist. */
static int put(const apply_ctx *c, cJSON *doc, const char *pointer, cJSON *value, bool replace)
{
    char last[KP_JSONPOINTER_MAX];
    cJSON *parent = resolve_parent(doc, pointer, last, sizeof(last));
    int err = 0;
    if (!parent) {
        err = op_fail(c, pointer && !*pointer ? "the whole document cannot be replaced"
                                              : "parent does not exist");
    } else if (cJSON_IsObject(parent)) {
        bool exists = cJSON_GetObjectItemCaseSensitive(parent, last) != NULL;
        if (replace && !exists)
            err = op_fail(c, "path does not exist");
        else if (exists)
            cJSON_ReplaceItemInObjectCaseSensitive(parent, last, value);
        else
            cJSON_AddItemToObject(parent, last, value);
    } else if (cJSON_IsArray(parent)) {
        long size = cJSON_GetArraySize(parent);
        long i = strcmp(last, "-") == 0 && !replace ? size : parse_index(last);
        if (i < 0 || i > size || (replace && i == size))
            err = op_fail(c, "array index out of range");
        else if (replace)
            cJSON_ReplaceItemInArray(parent, (int)i, value);
        else
            insert_at(parent, (int)i, value);
    } else {
        err = op_fail(c, "parent is not an object or array");
    }
    if (err < 0) cJSON_Delete(value);
    return err;
}

/* Detach the value at `pointer`; NULL when there is none. */
static cJSON *detach(cJSON *doc, const char *pointer)
{
    char last[KP_JSONPOINTER_MAX];
    cJSON *parent = resolve_parent(doc, pointer, last, sizeof(last));
    cJSON *target = parent ? child(parent, last) : NULL;
    return target ? cJSON_DetachItemViaPointer(parent, target) : NULL;
}

static const char *string_member(const cJSON *op, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(op, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Is `prefix` a proper prefix of `path` at a token boundary? */
static bool is_ancestor(const char *prefix, const char *path)
{
    size_t n = strlen(prefix);
    return strncmp(prefix, path, n) == 0 && path[n] == '/';
}

static int apply_move_copy(const apply_ctx *c, cJSON *doc, const cJSON *op, bool move)
{
    const char *from = string_member(op, "from");
    if (!from) return op_fail(c, "\"from\" is missing");
    if (move && is_ancestor(from, c->path)) return op_fail(c, "cannot move a value into itself");
    cJSON *value = NULL;
    if (move) {
        value = detach(doc, from);
    } else {
        const cJSON *src = kp_jsonpointer_get(doc, from);
        value = src ? must(cJSON_Duplicate(src, true)) : NULL;
    }
    if (!value) return op_fail(c, "\"from\" does not exist");
    return put(c, doc, c->path, value, false);
}

static int apply_one(const apply_ctx *c, cJSON *doc, const cJSON *op)
{
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
    if (strcmp(c->op, "add") == 0 || strcmp(c->op, "replace") == 0) {
        if (!value) return op_fail(c, "\"value\" is missing");
        return put(c, doc, c->path, must(cJSON_Duplicate(value, true)), c->op[0] == 'r');
    }
    if (strcmp(c->op, "remove") == 0) {
        cJSON *gone = detach(doc, c->path);
        if (!gone) return op_fail(c, "path does not exist");
        cJSON_Delete(gone);
        return 0;
    }
    if (strcmp(c->op, "move") == 0) return apply_move_copy(c, doc, op, true);
    if (strcmp(c->op, "copy") == 0) return apply_move_copy(c, doc, op, false);
    if (strcmp(c->op, "test") == 0) {
        const cJSON *have = kp_jsonpointer_get(doc, c->path);
        if (!value) return op_fail(c, "\"value\" is missing");
        if (!have || !cJSON_Compare(have, value, true)) return op_fail(c, "test failed");
        return 0;
    }
    return op_fail(c, "unknown operation");
}

int kp_jsonpatch_apply(cJSON *doc, const cJSON *patch)
{
    if (!cJSON_IsArray(patch)) return kp_error_set(KP_EINVALID, "a JSON patch must be an array");
    size_t i = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, patch)
    {
        apply_ctx c = {i++, string_member(op, "op"), string_member(op, "path")};
        if (!c.op || !c.path) return op_fail(&c, "\"op\" and \"path\" must be strings");
        int err = apply_one(&c, doc, op);
        if (err < 0) return err;
    }
    return 0;
}
