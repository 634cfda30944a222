#include "api/field_errors.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void kp_field_errors_init(kp_field_errors *errs, kp_arena *arena)
{
    memset(errs, 0, sizeof(*errs));
    errs->arena = arena;
}

void kp_field_errors_addv(kp_field_errors *errs, enum kp_field_error_type type, const char *path,
                          const char *value, const char *detail_fmt, va_list ap)
{
    if (errs->count == errs->cap) {
        size_t cap = errs->cap ? errs->cap * 2 : 8;
        errs->items = kp_arena_grow(errs->arena, errs->items, errs->count, cap, sizeof(kp_field_error));
        errs->cap = cap;
    }
    kp_field_error *e = &errs->items[errs->count++];
    e->type = type;
    e->path = kp_arena_strdup(errs->arena, path ? path : "");
    e->value = value ? kp_arena_strdup(errs->arena, value) : NULL;
    e->detail = detail_fmt ? kp_arena_vprintf(errs->arena, detail_fmt, ap) : NULL;
}

void kp_field_errors_add(kp_field_errors *errs, enum kp_field_error_type type, const char *path,
                         const char *value, const char *detail_fmt, ...)
{
    va_list ap;
    va_start(ap, detail_fmt);
    kp_field_errors_addv(errs, type, path, value, detail_fmt, ap);
    va_end(ap);
}

void kp_field_errors_required(kp_field_errors *errs, const char *path, const char *detail)
{
    kp_field_errors_add(errs, KP_FIELD_REQUIRED, path, NULL, detail ? "%s" : NULL, detail);
}

void kp_field_errors_invalid_str(kp_field_errors *errs, const char *path, const char *value,
                                 const char *detail)
{
    kp_field_errors_add(errs, KP_FIELD_INVALID, path, kp_quote(errs->arena, value ? value : ""),
                        detail ? "%s" : NULL, detail);
}

void kp_field_errors_invalid_int(kp_field_errors *errs, const char *path, long long value,
                                 const char *detail)
{
    char text[32];
    snprintf(text, sizeof(text), "%lld", value);
    kp_field_errors_add(errs, KP_FIELD_INVALID, path, text, detail ? "%s" : NULL, detail);
}

static const char *type_string(enum kp_field_error_type type)
{
    switch (type) {
    case KP_FIELD_REQUIRED: return "Required value";
    case KP_FIELD_INVALID: return "Invalid value";
    case KP_FIELD_NOT_SUPPORTED: return "Unsupported value";
    case KP_FIELD_FORBIDDEN: return "Forbidden";
    case KP_FIELD_TOO_LONG: return "Too long";
    case KP_FIELD_TOO_MANY: return "Too many";
    case KP_FIELD_DUPLICATE: return "Duplicate value";
    case KP_FIELD_TYPE: return "Invalid type";
    }
    return "Invalid value";
}

/* Kubernetes omits the bad value for these kinds. */
static int omits_value(enum kp_field_error_type type)
{
    return type == KP_FIELD_REQUIRED || type == KP_FIELD_FORBIDDEN || type == KP_FIELD_TOO_LONG;
}

const char *kp_field_error_string(kp_arena *arena, const kp_field_error *err)
{
    bool value = !omits_value(err->type) && err->value, detail = err->detail && *err->detail;
    return kp_arena_printf(arena, "%s: %s%s%s%s%s", err->path, type_string(err->type), value ? ": " : "",
                           value ? err->value : "", detail ? ": " : "", detail ? err->detail : "");
}

/* The strings and separators are as long as the errors are: they are put
 * together in the arena, with nothing to cut. */
const char *kp_field_errors_string(kp_arena *arena, const kp_field_errors *errs)
{
    if (errs->count == 0)
        return "";
    if (errs->count == 1)
        return kp_field_error_string(arena, &errs->items[0]);
    const char **parts = kp_arena_calloc(arena, errs->count, sizeof(*parts));
    size_t len = 2;
    for (size_t i = 0; i < errs->count; i++) {
        parts[i] = kp_field_error_string(arena, &errs->items[i]);
        len += strlen(parts[i]) + (i ? 2 : 0);
    }
    char *out = kp_arena_alloc(arena, len + 1), *p = out;
    *p++ = '[';
    for (size_t i = 0; i < errs->count; i++) {
        if (i)
            memcpy(p, ", ", 2), p += 2;
        size_t n = strlen(parts[i]);
        memcpy(p, parts[i], n), p += n;
    }
    *p++ = ']', *p = '\0';
    return out;
}

/* Each byte takes at most four ("\x1f"), plus the quotes. */
const char *kp_quote(kp_arena *arena, const char *s)
{
    char *out = kp_arena_alloc(arena, strlen(s) * 4 + 3), *p = out;
    *p++ = '"';
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            *p++ = '\\', *p++ = (char)*c;
        else if (*c == '\n')
            *p++ = '\\', *p++ = 'n';
        else if (*c == '\t')
            *p++ = '\\', *p++ = 't';
        else if (*c < 0x20 || *c == 0x7f)
            p += snprintf(p, 5, "\\x%02x", *c);
        else
            *p++ = (char)*c;
    }
    *p++ = '"', *p = '\0';
    return out;
}
