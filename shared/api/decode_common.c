/*
 * The generic field readers every kind is built from (decode_internal.h),
 * and the lookups on the object model's sorted maps (objects.h).
 */
#include "api/decode_internal.h"

#include "base/clock.h"
#include "base/error.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char kp_dec_empty[] = "";

/* Absent sub-objects are decoded as {} so every decoder sets all its
 * strings to "" even when its whole object is missing. */
static const cJSON empty_object = {.type = cJSON_Object};

const cJSON *kp_dec_empty_object(void)
{
    return &empty_object;
}

enum { MSG_MAX = 768 };

void kp_dec_init(kp_decoder *d, kp_arena *arena)
{
    d->arena = arena;
    kp_path_init(&d->path, "");
}

__attribute__((format(printf, 2, 0))) static int fail_v(kp_decoder *d, const char *fmt, va_list ap)
{
    char msg[MSG_MAX];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (d->path.len == 0) return kp_error_set(KP_EINVALID, "%s", msg);
    return kp_error_set(KP_EINVALID, "%s: %s", kp_path_cstr(&d->path), msg);
}

int kp_dec_fail(kp_decoder *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int err = fail_v(d, fmt, ap);
    va_end(ap);
    return err;
}

int kp_dec_fail_at(kp_decoder *d, const char *name, const char *fmt, ...)
{
    va_list ap;
    kp_path_push_field(&d->path, name);
    va_start(ap, fmt);
    int err = fail_v(d, fmt, ap);
    va_end(ap);
    kp_path_pop(&d->path);
    return err;
}

const char *kp_dec_type_name(const cJSON *item)
{
    if (cJSON_IsObject(item)) return "object";
    if (cJSON_IsArray(item)) return "array";
    if (cJSON_IsString(item)) return "string";
    if (cJSON_IsNumber(item)) return "number";
    if (cJSON_IsBool(item)) return "boolean";
    if (cJSON_IsNull(item)) return "null";
    return "invalid JSON";
}

int kp_dec_type_error(kp_decoder *d, const char *want, const cJSON *got)
{
    return kp_dec_fail(d, "expected %s, got %s", want, kp_dec_type_name(got));
}

int kp_dec_required(kp_decoder *d, const char *name)
{
    return kp_dec_fail_at(d, name, "Required value");
}

const cJSON *kp_dec_get(const cJSON *obj, const char *name)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNull(item) ? NULL : item;
}

int kp_dec_expect_object(kp_decoder *d, const cJSON *json)
{
    return cJSON_IsObject(json) ? 0 : kp_dec_type_error(d, "object", json);
}

/* ---------------------------------------------------------------- scalars */

static const char *arena_str(kp_decoder *d, const char *s)
{
    return *s ? kp_arena_strdup(d->arena, s) : kp_dec_empty;
}

/* Member `name` is there but not of type `want`: the error, at its path. */
static int member_type_error(kp_decoder *d, const char *name, const char *want, const cJSON *item)
{
    kp_path_push_field(&d->path, name);
    int err = kp_dec_type_error(d, want, item);
    kp_path_pop(&d->path);
    return err;
}

int kp_dec_string_p(kp_decoder *d, const cJSON *obj, const char *name, const char **out,
                    bool *present)
{
    const cJSON *item = kp_dec_get(obj, name);
    *out = kp_dec_empty;
    if (present) *present = item != NULL;
    if (!item) return 0;
    if (!cJSON_IsString(item)) return member_type_error(d, name, "string", item);
    *out = arena_str(d, item->valuestring);
    return 0;
}

int kp_dec_string(kp_decoder *d, const cJSON *obj, const char *name, const char **out)
{
    return kp_dec_string_p(d, obj, name, out, NULL);
}

int kp_dec_bool(kp_decoder *d, const cJSON *obj, const char *name, bool *out, bool *present)
{
    const cJSON *item = kp_dec_get(obj, name);
    if (present) *present = item != NULL;
    if (!item) return 0;
    if (!cJSON_IsBool(item)) return member_type_error(d, name, "boolean", item);
    *out = cJSON_IsTrue(item);
    return 0;
}

/* A JSON number as an integer in [min, max] (the item's path is current). */
static int integer_value(kp_decoder *d, const cJSON *item, double min, double max_excl,
                         const char *type, int64_t *out)
{
    if (!cJSON_IsNumber(item)) return kp_dec_type_error(d, "integer", item);
    double v = item->valuedouble;
    if (!isfinite(v) || v != floor(v)) return kp_dec_fail(d, "expected integer, got %.15g", v);
    if (v < min || v >= max_excl) return kp_dec_fail(d, "%.15g is out of range for %s", v, type);
    *out = (int64_t)v;
    return 0;
}

static int integer_field(kp_decoder *d, const cJSON *obj, const char *name, double min,
                         double max_excl, const char *type, int64_t *out, bool *present)
{
    const cJSON *item = kp_dec_get(obj, name);
    *present = item != NULL;
    if (!item) return 0;
    kp_path_push_field(&d->path, name);
    int err = integer_value(d, item, min, max_excl, type, out);
    kp_path_pop(&d->path);
    return err;
}

int kp_dec_int32(kp_decoder *d, const cJSON *obj, const char *name, int32_t *out, bool *present)
{
    int64_t v = 0;
    bool has;
    int err = integer_field(d, obj, name, -2147483648.0, 2147483648.0, "int32", &v, &has);
    if (present) *present = has;
    if (err == 0 && has) *out = (int32_t)v;
    return err;
}

int kp_dec_int64(kp_decoder *d, const cJSON *obj, const char *name, int64_t *out, bool *present)
{
    int64_t v = 0;
    bool has;
    int err = integer_field(d, obj, name, -9223372036854775808.0, 9223372036854775808.0, "int64",
                            &v, &has);
    if (present) *present = has;
    if (err == 0 && has) *out = v;
    return err;
}

/* A quantity given as a string or a bare JSON number (the path is current). */
static int quantity_value(kp_decoder *d, const cJSON *item, kp_quantity *out)
{
    char text[64];
    const char *s;
    if (cJSON_IsString(item)) {
        s = item->valuestring;
    } else if (cJSON_IsNumber(item) && isfinite(item->valuedouble)) {
        /* 15 significant digits: the shortest form for what people write
         * ("0.1", not "0.10000000000000001", which would round up a milli). */
        snprintf(text, sizeof(text), "%.15g", item->valuedouble);
        s = text;
    } else {
        return kp_dec_type_error(d, "quantity (string or number)", item);
    }
    if (kp_quantity_parse(s, out) < 0) return kp_dec_fail(d, "%s", kp_error_last());
    return 0;
}

int kp_dec_quantity(kp_decoder *d, const cJSON *obj, const char *name, kp_quantity *out,
                    bool *present)
{
    const cJSON *item = kp_dec_get(obj, name);
    if (present) *present = item != NULL;
    if (!item) return 0;
    kp_path_push_field(&d->path, name);
    int err = quantity_value(d, item, out);
    kp_path_pop(&d->path);
    return err;
}

int kp_dec_time(kp_decoder *d, const cJSON *obj, const char *name, kp_time *out)
{
    const char *text;
    bool present;
    int err = kp_dec_string_p(d, obj, name, &text, &present);
    if (err < 0 || !present || !*text) return err;
    int64_t ns;
    if (kp_time_parse_rfc3339(text, &ns) < 0) return kp_dec_fail_at(d, name, "%s", kp_error_last());
    out->set = true;
    out->ns = ns;
    return 0;
}

int kp_dec_duration(kp_decoder *d, const cJSON *obj, const char *name, bool nillable,
                    kp_duration *out, bool *present)
{
    const char *text;
    bool has;
    int err = kp_dec_string_p(d, obj, name, &text, &has);
    if (present) *present = has;
    if (err < 0 || !has) return err;
    kp_duration v;
    err = nillable ? kp_duration_parse_nillable(text, &v) : kp_duration_parse(text, &v);
    if (err < 0) return kp_dec_fail_at(d, name, "%s", kp_error_last());
    *out = v;
    return 0;
}

int kp_dec_int_or_string(kp_decoder *d, const cJSON *obj, const char *name, kp_int_or_string *out)
{
    const cJSON *item = kp_dec_get(obj, name);
    out->str_value = kp_dec_empty;
    if (!item) return 0;
    if (cJSON_IsString(item)) {
        out->type = KP_INT_OR_STRING_STRING;
        out->str_value = arena_str(d, item->valuestring);
        return 0;
    }
    int64_t v = 0;
    kp_path_push_field(&d->path, name);
    int err = cJSON_IsNumber(item)
                  ? integer_value(d, item, -2147483648.0, 2147483648.0, "int32", &v)
                  : kp_dec_type_error(d, "integer or string", item);
    kp_path_pop(&d->path);
    if (err < 0) return err;
    out->type = KP_INT_OR_STRING_INT;
    out->int_value = (int32_t)v;
    return 0;
}

/* ------------------------------------------------------------------ enums */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int kp_dec_unsupported(kp_decoder *d, const char *value, const char *const *supported,
                       size_t n_supported)
{
    const char *sorted[32];
    if (n_supported > sizeof(sorted) / sizeof(sorted[0]))
        n_supported = sizeof(sorted) / sizeof(sorted[0]);
    memcpy(sorted, supported, n_supported * sizeof(*sorted));
    qsort(sorted, n_supported, sizeof(*sorted), compare_names);
    char list[MSG_MAX / 2];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n_supported && len < sizeof(list); i++) {
        int n = snprintf(list + len, sizeof(list) - len, "%s\"%s\"", i ? ", " : "", sorted[i]);
        if (n < 0) break;
        len += (size_t)n;
    }
    return kp_dec_fail(d, "Unsupported value: \"%s\": supported values: %s", value, list);
}

/* Member `name`'s index in `names` (NULL-terminated), or the error listing
 * them; absent leaves *index unchanged. */
static int enum_index(kp_decoder *d, const cJSON *obj, const char *name, const char *const *names,
                      bool required, int *index)
{
    const char *text;
    bool present;
    int err = kp_dec_string_p(d, obj, name, &text, &present);
    if (err < 0) return err;
    if (!present) return required ? kp_dec_required(d, name) : 0;
    size_t n = 0;
    for (; names[n]; n++) {
        if (strcmp(names[n], text) == 0) {
            *index = (int)n;
            return 0;
        }
    }
    kp_path_push_field(&d->path, name);
    err = kp_dec_unsupported(d, text, names, n);
    kp_path_pop(&d->path);
    return err;
}

int kp_dec_enum(kp_decoder *d, const cJSON *obj, const char *name, const kp_dec_choice *table,
                bool required, int *out)
{
    const char *names[17];
    size_t n = 0;
    for (const kp_dec_choice *e = table; e->name && n + 1 < sizeof(names) / sizeof(names[0]); e++)
        names[n++] = e->name;
    names[n] = NULL;
    int index = -1;
    int err = enum_index(d, obj, name, names, required, &index);
    if (err == 0 && index >= 0) *out = table[index].value;
    return err;
}

int kp_dec_enum_index(kp_decoder *d, const cJSON *obj, const char *name, const char *const *names,
                      int *index)
{
    return enum_index(d, obj, name, names, false, index);
}

/* ----------------------------------------------------- objects and arrays */

int kp_dec_object(kp_decoder *d, const cJSON *obj, const char *name, kp_dec_fn fn, void *out,
                  bool *present)
{
    const cJSON *item = kp_dec_get(obj, name);
    if (present) *present = item != NULL;
    kp_path_push_field(&d->path, name);
    int err = item ? kp_dec_expect_object(d, item) : 0;
    if (err == 0) err = fn(d, item ? item : &empty_object, out);
    kp_path_pop(&d->path);
    return err;
}

/* The member `name` as an array (NULL when absent), type-checked. */
static int get_array(kp_decoder *d, const cJSON *obj, const char *name, const cJSON **out)
{
    const cJSON *item = kp_dec_get(obj, name);
    *out = NULL;
    if (!item) return 0;
    if (!cJSON_IsArray(item)) return member_type_error(d, name, "array", item);
    *out = item;
    return 0;
}

static int array_elements(kp_decoder *d, const cJSON *array, size_t elem_size, kp_dec_fn fn,
                          char *items)
{
    size_t i = 0;
    int err = 0;
    for (const cJSON *el = array->child; el && err == 0; el = el->next, i++) {
        kp_path_push_index(&d->path, i);
        /* Go leaves a null element at its zero value: decode it as {}. */
        const cJSON *src = cJSON_IsNull(el) ? &empty_object : el;
        err = kp_dec_expect_object(d, src);
        if (err == 0) err = fn(d, src, items + i * elem_size);
        kp_path_pop(&d->path);
    }
    return err;
}

int kp_dec_array_into(kp_decoder *d, const cJSON *obj, const char *name, size_t elem_size,
                      kp_dec_fn fn, void *items_ptr, size_t *count, bool *present)
{
    const cJSON *array;
    void *items = NULL;
    int err = get_array(d, obj, name, &array);
    if (present) *present = array != NULL;
    *count = 0;
    if (err < 0 || !array) goto done;
    size_t n = (size_t)cJSON_GetArraySize(array);
    if (n == 0) goto done;
    items = kp_arena_calloc(d->arena, n, elem_size);
    kp_path_push_field(&d->path, name);
    err = array_elements(d, array, elem_size, fn, items);
    kp_path_pop(&d->path);
    if (err == 0) *count = n;
done:
    memcpy(items_ptr, &items, sizeof(items)); /* the caller's T * */
    return err;
}

int kp_dec_strings(kp_decoder *d, const cJSON *obj, const char *name, kp_strings *out)
{
    const cJSON *array;
    int err = get_array(d, obj, name, &array);
    out->items = NULL;
    out->count = 0;
    if (err < 0 || !array || !array->child) return err;
    size_t n = (size_t)cJSON_GetArraySize(array), i = 0;
    const char **items = KP_ARENA_NEW(d->arena, const char *, n);
    kp_path_push_field(&d->path, name);
    for (const cJSON *el = array->child; el && err == 0; el = el->next, i++) {
        items[i] = kp_dec_empty;
        if (cJSON_IsString(el)) {
            items[i] = arena_str(d, el->valuestring);
        } else if (!cJSON_IsNull(el)) {
            kp_path_push_index(&d->path, i);
            err = kp_dec_type_error(d, "string", el);
            kp_path_pop(&d->path);
        }
    }
    kp_path_pop(&d->path);
    if (err == 0) {
        out->items = items;
        out->count = n;
    }
    return err;
}

/* ------------------------------------------------------------ sorted maps */

/* A map entry's key and its position in the document. */
typedef struct indexed_key {
    const char *key;
    size_t index;
} indexed_key;

static int cmp_indexed_key(const void *a, const void *b)
{
    const indexed_key *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sort by key (qsort is not stable: the position breaks ties); of duplicate
 * keys keep the last written, as Go does. Returns how many are kept, first. */
static size_t sort_keys_last_wins(indexed_key *keys, size_t n)
{
    size_t m = 0;
    qsort(keys, n, sizeof(*keys), cmp_indexed_key);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && strcmp(keys[i].key, keys[i + 1].key) == 0) continue;
        keys[m++] = keys[i];
    }
    return m;
}

/* Decode one map value into its element (the key is already set); the value's
 * path is the caller's to push. */
typedef int (*map_value_fn)(kp_decoder *d, const cJSON *value, void *elem, bool flag);

/* The member `name` as a sorted map (objects.h): an arena array of
 * `elem_size` elements, each starting with its key (const char *), values
 * decoded by `fn`. `items_ptr` is the address of the destination pointer
 * (T **); it and *count are left alone when the map is absent or empty. */
static int sorted_map(kp_decoder *d, const cJSON *obj, const char *name, size_t elem_size,
                      map_value_fn fn, bool flag, void *items_ptr, size_t *count)
{
    const cJSON *map = kp_dec_get(obj, name);
    if (!map) return 0;
    kp_path_push_field(&d->path, name);
    int err = kp_dec_expect_object(d, map);
    size_t n = err ? 0 : (size_t)cJSON_GetArraySize(map), i = 0;
    char *vals = n ? kp_arena_calloc(d->arena, n, elem_size) : NULL;
    indexed_key *keys = n ? KP_ARENA_NEW(d->arena, indexed_key, n) : NULL;
    for (const cJSON *el = n ? map->child : NULL; el && err == 0; el = el->next, i++) {
        const char *key = arena_str(d, el->string);
        memcpy(vals + i * elem_size, &key, sizeof(key));
        keys[i] = (indexed_key){key, i};
        err = fn(d, el, vals + i * elem_size, flag);
    }
    kp_path_pop(&d->path);
    if (err < 0 || n == 0) return err;
    *count = sort_keys_last_wins(keys, n);
    char *items = kp_arena_calloc(d->arena, *count, elem_size);
    for (size_t k = 0; k < *count; k++)
        memcpy(items + k * elem_size, vals + keys[k].index * elem_size, elem_size);
    memcpy(items_ptr, &items, sizeof(items)); /* the caller's T * */
    return 0;
}

_Static_assert(offsetof(kp_label, key) == 0, "a label starts with its key");
_Static_assert(offsetof(kp_resource, name) == 0, "a resource starts with its name");

/* A label's value: a string; null reads as "". */
static int label_value(kp_decoder *d, const cJSON *el, void *elem, bool flag)
{
    (void)flag;
    kp_label *label = elem;
    label->value = kp_dec_empty;
    if (cJSON_IsString(el)) {
        label->value = arena_str(d, el->valuestring);
    } else if (!cJSON_IsNull(el)) {
        kp_path_push_key(&d->path, el->string);
        int err = kp_dec_type_error(d, "string", el);
        kp_path_pop(&d->path);
        return err;
    }
    return 0;
}

int kp_dec_labels(kp_decoder *d, const cJSON *obj, const char *name, kp_labels *out)
{
    out->items = NULL;
    out->count = 0;
    kp_labels got = {0};
    int err =
        sorted_map(d, obj, name, sizeof(kp_label), label_value, false, &got.items, &got.count);
    if (err == 0) *out = got;
    return err;
}

/* The API server's ValidateResourceQuantityValue, with its message. */
static int non_negative(kp_decoder *d, const cJSON *item, const kp_quantity *q)
{
    if (q->milli >= 0) return 0;
    if (cJSON_IsString(item))
        return kp_dec_fail(d, "Invalid value: \"%s\": must be greater than or equal to 0",
                           item->valuestring);
    return kp_dec_fail(d, "Invalid value: %g: must be greater than or equal to 0",
                       item->valuedouble);
}

/* A resource's amount; null reads as zero. `must_not_be_negative` for core objects. */
static int resource_value(kp_decoder *d, const cJSON *el, void *elem, bool must_not_be_negative)
{
    kp_resource *r = elem;
    if (cJSON_IsNull(el)) return 0;
    kp_path_push_field(&d->path, el->string);
    int err = quantity_value(d, el, &r->quantity);
    if (err == 0 && must_not_be_negative) err = non_negative(d, el, &r->quantity);
    kp_path_pop(&d->path);
    return err;
}

static int resources(kp_decoder *d, const cJSON *obj, const char *name, kp_resource_list *out,
                     bool must_not_be_negative)
{
    out->items = NULL;
    out->count = 0;
    kp_resource_list got = {0};
    int err = sorted_map(d, obj, name, sizeof(kp_resource), resource_value, must_not_be_negative,
                         &got.items, &got.count);
    if (err == 0) *out = got;
    return err;
}

int kp_dec_resources(kp_decoder *d, const cJSON *obj, const char *name, kp_resource_list *out)
{
    return resources(d, obj, name, out, false);
}

int kp_dec_core_resources(kp_decoder *d, const cJSON *obj, const char *name, kp_resource_list *out)
{
    return resources(d, obj, name, out, true);
}

/* ------------------------------------------------- object model lookups */

const char *kp_labels_get(const kp_labels *labels, const char *key)
{
    size_t lo = 0, hi = labels ? labels->count : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(labels->items[mid].key, key);
        if (c == 0) return labels->items[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const kp_quantity *kp_resource_list_get(const kp_resource_list *list, const char *name)
{
    size_t lo = 0, hi = list ? list->count : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(list->items[mid].name, name);
        if (c == 0) return &list->items[mid].quantity;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int64_t kp_resource_list_milli(const kp_resource_list *list, const char *name)
{
    const kp_quantity *q = kp_resource_list_get(list, name);
    return q ? q->milli : 0;
}

const kp_condition *kp_conditions_get(const kp_conditions *conditions, const char *type)
{
    for (size_t i = 0; conditions && i < conditions->count; i++) {
        if (strcmp(conditions->items[i].type, type) == 0) return &conditions->items[i];
    }
    return NULL;
}

bool kp_conditions_is_true(const kp_conditions *conditions, const char *type)
{
    const kp_condition *c = kp_conditions_get(conditions, type);
    return c && c->status == KP_CONDITION_TRUE;
}
