#include "api/field_errors.h"
#include "base/buf.h"

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
    kp_buf b = KP_BUF_INIT(16 * 1024);
    kp_buf_printf(&b, "%s: %s", err->path, type_string(err->type));
    if (!omits_value(err->type) && err->value)
        kp_buf_printf(&b, ": %s", err->value);
    if (err->detail && *err->detail)
        kp_buf_printf(&b, ": %s", err->detail);
    const char *s = kp_arena_strdup(arena, kp_buf_cstr(&b));
    kp_buf_free(&b);
    return s;
}

const char *kp_field_errors_string(kp_arena *arena, const kp_field_errors *errs)
{
    if (errs->count == 0)
        return "";
    if (errs->count == 1)
        return kp_field_error_string(arena, &errs->items[0]);
    kp_buf b = KP_BUF_INIT(256 * 1024);
    kp_buf_putc(&b, '[');
    for (size_t i = 0; i < errs->count; i++) {
        if (i)
            kp_buf_puts(&b, ", ");
        kp_buf_puts(&b, kp_field_error_string(arena, &errs->items[i]));
    }
    kp_buf_putc(&b, ']');
    const char *s = kp_arena_strdup(arena, kp_buf_cstr(&b));
    kp_buf_free(&b);
    return s;
}

const char *kp_quote(kp_arena *arena, const char *s)
{
    kp_buf b = KP_BUF_INIT(64 * 1024);
    kp_buf_putc(&b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            kp_buf_printf(&b, "\\%c", *p);
        else if (*p == '\n')
            kp_buf_puts(&b, "\\n");
        else if (*p == '\t')
            kp_buf_puts(&b, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            kp_buf_printf(&b, "\\x%02x", *p);
        else
            kp_buf_putc(&b, (char)*p);
    }
    kp_buf_putc(&b, '"');
    const char *out = kp_arena_strdup(arena, kp_buf_cstr(&b));
    kp_buf_free(&b);
    return out;
}
