/*
 * Admission entry points (results, kind lookup, dispatch) and the field-path
 * walker every validator uses: path bookkeeping, Kubernetes-shaped errors and
 * type-checking readers over cJSON.
 */
#include "api/admission.h"
#include "api/validate_internal.h"
#include "base/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- results */

void kp_admission_result_init(kp_admission_result *res, kp_arena *arena)
{
    memset(res, 0, sizeof(*res));
    kp_field_errors_init(&res->errors, arena);
}

static void add_warning(kp_admission_result *res, const char *text)
{
    if (res->n_warnings == res->cap_warnings) {
        size_t cap = res->cap_warnings ? res->cap_warnings * 2 : 4;
        res->warnings = kp_arena_grow(res->errors.arena, res->warnings, res->n_warnings, cap,
                                      sizeof(*res->warnings));
        res->cap_warnings = cap;
    }
    res->warnings[res->n_warnings++] = text;
}

void kp_admission_warn(kp_admission_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_warning(res, kp_arena_vprintf(res->errors.arena, fmt, ap));
    va_end(ap);
}

void kp_admission_result_clear(kp_admission_result *res)
{
    if (res->patch) cJSON_Delete(res->patch);
    res->patch = NULL;
}

const char *kp_admission_kind_name(enum kp_admission_kind kind)
{
    switch (kind) {
    case KP_ADMIT_NODEPOOL:
        return "NodePool";
    case KP_ADMIT_NODECLAIM:
        return "NodeClaim";
    case KP_ADMIT_EC2NODECLASS:
        return "EC2NodeClass";
    case KP_ADMIT_NODEOVERLAY:
        return "NodeOverlay";
    }
    return "";
}

int kp_admission_kind_lookup(const char *group, const char *version, const char *kind)
{
    static const struct {
        const char *group, *version, *kind;
        enum kp_admission_kind value;
    } kinds[] = {
        {"karpenter.sh", "v1", "NodePool", KP_ADMIT_NODEPOOL},
        {"karpenter.sh", "v1", "NodeClaim", KP_ADMIT_NODECLAIM},
        {"karpenter.k8s.aws", "v1", "EC2NodeClass", KP_ADMIT_EC2NODECLASS},
        {"karpenter.sh", "v1alpha1", "NodeOverlay", KP_ADMIT_NODEOVERLAY},
    };
    if (!group || !version || !kind) return -1;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(group, kinds[i].group) == 0 && strcmp(version, kinds[i].version) == 0 &&
            strcmp(kind, kinds[i].kind) == 0)
            return (int)kinds[i].value;
    }
    return -1;
}

int kp_admission_validate(enum kp_admission_kind kind, enum kp_admission_op op, const cJSON *obj,
                          const cJSON *old, kp_admission_result *res)
{
    if (!cJSON_IsObject(obj))
        return kp_error_set(KP_EINVALID, "%s: the object is not a JSON object",
                            kp_admission_kind_name(kind));
    /* Transition rules need both sides; without the old object they are skipped. */
    if (op != KP_ADMIT_UPDATE || !cJSON_IsObject(old)) old = NULL;
    if (kind != KP_ADMIT_NODEPOOL && kind != KP_ADMIT_NODECLAIM && kind != KP_ADMIT_EC2NODECLASS &&
        kind != KP_ADMIT_NODEOVERLAY)
        return kp_error_set(KP_EINVALID, "unknown admission kind %d", (int)kind);
    /* The API server defaults both objects before any rule sees them. */
    cJSON *self = cJSON_Duplicate(obj, true);
    cJSON *was = old ? cJSON_Duplicate(old, true) : NULL;
    if (!self || (old && !was)) {
        cJSON_Delete(self);
        return kp_error_set(KP_ERROR, "out of memory copying the object");
    }
    kp_admission_apply_defaults(kind, self);
    if (was) kp_admission_apply_defaults(kind, was);
    kp_vctx v;
    kp_v_init(&v, res, op);
    if (kind == KP_ADMIT_NODEPOOL)
        kp_validate_nodepool(&v, self, was);
    else if (kind == KP_ADMIT_NODECLAIM)
        kp_validate_nodeclaim(&v, self, was);
    else if (kind == KP_ADMIT_NODEOVERLAY)
        kp_validate_nodeoverlay(&v, self, was);
    else
        kp_validate_ec2nodeclass(&v, self, was);
    cJSON_Delete(self);
    cJSON_Delete(was);
    return 0;
}

/* ---------------------------------------------------------------- the path */

void kp_v_init(kp_vctx *v, kp_admission_result *res, enum kp_admission_op op)
{
    memset(v, 0, sizeof(*v));
    v->res = res;
    v->errs = &res->errors;
    v->arena = res->errors.arena;
    v->op = op;
    kp_path_init(&v->path, NULL);
}

void kp_v_push(kp_vctx *v, const char *field)
{
    kp_path_push_field(&v->path, field);
}

void kp_v_push_index(kp_vctx *v, size_t index)
{
    kp_path_push_index(&v->path, index);
}

void kp_v_push_key(kp_vctx *v, const char *key)
{
    kp_path_push_key(&v->path, key);
}

void kp_v_pop(kp_vctx *v)
{
    kp_path_pop(&v->path);
}

const char *kp_v_here(const kp_vctx *v)
{
    return kp_path_cstr(&v->path);
}

const char *kp_v_child(kp_vctx *v, const char *field)
{
    kp_v_push(v, field);
    const char *p = kp_arena_strdup(v->arena, kp_v_here(v));
    kp_v_pop(v);
    return p;
}

/* ---------------------------------------------------------------- errors */

const char *kp_v_type_name(const cJSON *item)
{
    if (cJSON_IsString(item)) return "string";
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        return (isfinite(d) && d == floor(d)) ? "integer" : "number";
    }
    if (cJSON_IsBool(item)) return "boolean";
    if (cJSON_IsArray(item)) return "array";
    if (cJSON_IsObject(item)) return "object";
    return "null";
}

/* How Kubernetes prints a bad value: %q for strings, numbers bare, and the
 * type name for everything else (as CEL errors do). */
static const char *render(kp_vctx *v, const cJSON *value)
{
    if (cJSON_IsString(value)) return kp_quote(v->arena, value->valuestring);
    if (cJSON_IsNumber(value)) {
        double d = value->valuedouble;
        if (isfinite(d) && d == floor(d) && fabs(d) < 9.2e18)
            return kp_arena_printf(v->arena, "%" PRId64, (int64_t)d);
        return kp_arena_printf(v->arena, "%g", d);
    }
    if (cJSON_IsBool(value)) return cJSON_IsTrue(value) ? "true" : "false";
    return kp_quote(v->arena, kp_v_type_name(value));
}

void kp_v_required(kp_vctx *v, const char *field)
{
    kp_field_errors_required(v->errs, field ? kp_v_child(v, field) : kp_v_here(v), NULL);
}

void kp_v_invalid(kp_vctx *v, const cJSON *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_field_errors_addv(v->errs, KP_FIELD_INVALID, kp_v_here(v), render(v, value), fmt, ap);
    va_end(ap);
}

void kp_v_invalid_str(kp_vctx *v, const char *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_field_errors_addv(v->errs, KP_FIELD_INVALID, kp_v_here(v), kp_quote(v->arena, value), fmt,
                         ap);
    va_end(ap);
}

void kp_v_forbidden(kp_vctx *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_field_errors_addv(v->errs, KP_FIELD_FORBIDDEN, kp_v_here(v), NULL, fmt, ap);
    va_end(ap);
}

void kp_v_not_supported(kp_vctx *v, const char *value, const char *const *allowed)
{
    char list[1024];
    size_t n = 0;
    list[0] = '\0';
    for (size_t i = 0; allowed[i] && n < sizeof(list); i++) {
        int w = snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i ? ", " : "", allowed[i]);
        n += w > 0 ? (size_t)w : 0;
    }
    kp_field_errors_add(v->errs, KP_FIELD_NOT_SUPPORTED, kp_v_here(v), kp_quote(v->arena, value),
                        "supported values: %s", list);
}

void kp_v_too_many(kp_vctx *v, size_t have, size_t max)
{
    char text[32];
    snprintf(text, sizeof(text), "%zu", have);
    kp_field_errors_add(v->errs, KP_FIELD_TOO_MANY, kp_v_here(v), text,
                        "must have at most %zu items", max);
}

void kp_v_too_long(kp_vctx *v, size_t max)
{
    kp_field_errors_add(v->errs, KP_FIELD_TOO_LONG, kp_v_here(v), NULL,
                        "may not be longer than %zu", max);
}

void kp_v_too_short(kp_vctx *v, const char *value, size_t min)
{
    kp_v_invalid_str(v, value, "should be at least %zu chars long", min);
}

void kp_v_duplicate(kp_vctx *v, const char *value)
{
    kp_field_errors_add(v->errs, KP_FIELD_DUPLICATE, kp_v_here(v), kp_quote(v->arena, value), NULL);
}

void kp_v_pattern(kp_vctx *v, const char *value, const char *pattern)
{
    kp_v_invalid_str(v, value, "should match '%s'", pattern);
}

void kp_v_warn(kp_vctx *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *text = kp_arena_vprintf(v->arena, fmt, ap);
    va_end(ap);
    const char *here = kp_v_here(v);
    add_warning(v->res, *here ? kp_arena_printf(v->arena, "%s: %s", here, text) : text);
}

/* ---------------------------------------------------------------- readers */

const cJSON *kp_v_get(const cJSON *obj, const char *name)
{
    const cJSON *item = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, name) : NULL;
    return cJSON_IsNull(item) ? NULL : item;
}

bool kp_v_has(const cJSON *obj, const char *name)
{
    return kp_v_get(obj, name) != NULL;
}

void kp_v_type(kp_vctx *v, const cJSON *got, const char *want)
{
    kp_field_errors_add(v->errs, KP_FIELD_TYPE, kp_v_here(v),
                        kp_quote(v->arena, kp_v_type_name(got)), "must be of type %s", want);
}

/* A type error at obj.name (or here, when `name` is NULL). */
static void type_error(kp_vctx *v, const char *name, const cJSON *got, const char *want)
{
    if (name) kp_v_push(v, name);
    kp_v_type(v, got, want);
    if (name) kp_v_pop(v);
}

const char *kp_v_string(kp_vctx *v, const cJSON *obj, const char *name)
{
    const cJSON *item = kp_v_get(obj, name);
    if (!item) return NULL;
    if (!cJSON_IsString(item)) {
        type_error(v, name, item, "string");
        return NULL;
    }
    return item->valuestring;
}

const char *kp_v_required_string(kp_vctx *v, const cJSON *obj, const char *name)
{
    if (!kp_v_has(obj, name)) {
        kp_v_required(v, name);
        return NULL;
    }
    return kp_v_string(v, obj, name);
}

static const cJSON *typed(kp_vctx *v, const cJSON *obj, const char *name,
                          cJSON_bool (*is)(const cJSON *), const char *want)
{
    const cJSON *item = kp_v_get(obj, name);
    if (item && !is(item)) {
        type_error(v, name, item, want);
        return NULL;
    }
    return item;
}

const cJSON *kp_v_object(kp_vctx *v, const cJSON *obj, const char *name)
{
    return typed(v, obj, name, cJSON_IsObject, "object");
}

const cJSON *kp_v_required_object(kp_vctx *v, const cJSON *obj, const char *name)
{
    if (!kp_v_has(obj, name)) {
        kp_v_required(v, name);
        return NULL;
    }
    return kp_v_object(v, obj, name);
}

const cJSON *kp_v_array(kp_vctx *v, const cJSON *obj, const char *name, size_t max_items)
{
    const cJSON *arr = typed(v, obj, name, cJSON_IsArray, "array");
    size_t n = arr ? (size_t)cJSON_GetArraySize(arr) : 0;
    if (max_items && n > max_items) {
        kp_v_push(v, name);
        kp_v_too_many(v, n, max_items);
        kp_v_pop(v);
    }
    return arr;
}

bool kp_v_int(kp_vctx *v, const cJSON *obj, const char *name, int64_t min, int64_t max,
              int64_t *out)
{
    const cJSON *item = kp_v_get(obj, name);
    if (!item) return false;
    if (strcmp(kp_v_type_name(item), "integer") != 0) {
        type_error(v, name, item, "integer");
        return false;
    }
    double d = item->valuedouble;
    bool ok = true;
    kp_v_push(v, name);
    if (d < (double)min) {
        kp_v_invalid(v, item, "should be greater than or equal to %" PRId64, min);
        ok = false;
    } else if (d > (double)max || d >= 9223372036854775808.0) { /* 2^63: beyond int64 */
        kp_v_invalid(v, item, "should be less than or equal to %" PRId64, max);
        ok = false;
    }
    kp_v_pop(v);
    if (ok && out) *out = (int64_t)d;
    return ok;
}

bool kp_v_bool(kp_vctx *v, const cJSON *obj, const char *name, bool *out)
{
    const cJSON *item = typed(v, obj, name, cJSON_IsBool, "boolean");
    if (item && out) *out = cJSON_IsTrue(item);
    return item != NULL;
}

const char *kp_v_enum(kp_vctx *v, const cJSON *obj, const char *name, const char *const *allowed)
{
    const char *s = kp_v_string(v, obj, name);
    if (!s) return NULL;
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0) return s;
    kp_v_push(v, name);
    kp_v_not_supported(v, s, allowed);
    kp_v_pop(v);
    return NULL;
}

const cJSON *kp_v_string_map(kp_vctx *v, const cJSON *obj, const char *name, size_t max_props)
{
    const cJSON *map = kp_v_object(v, obj, name);
    if (!map) return NULL;
    kp_v_push(v, name);
    size_t n = (size_t)cJSON_GetArraySize(map);
    if (max_props && n > max_props) kp_v_too_many(v, n, max_props);
    const cJSON *e;
    cJSON_ArrayForEach(e, map)
    {
        if (cJSON_IsString(e)) continue;
        kp_v_push_key(v, e->string);
        type_error(v, NULL, e, "string");
        kp_v_pop(v);
    }
    kp_v_pop(v);
    return map;
}
