/*
 * Validation and decoding errors as data: a list of {field path, kind, value,
 * detail}, rendered exactly as Kubernetes renders field.Error so users see the
 * messages they know. The webhook turns the list into a denial; the controller
 * into a condition; decoding into a single error message.
 */
#ifndef KP_API_FIELD_ERRORS_H
#define KP_API_FIELD_ERRORS_H

#include "base/arena.h"

#include <stdarg.h>
#include <stddef.h>

enum kp_field_error_type {
    KP_FIELD_REQUIRED,      /* "Required value" */
    KP_FIELD_INVALID,       /* "Invalid value" */
    KP_FIELD_NOT_SUPPORTED, /* "Unsupported value" */
    KP_FIELD_FORBIDDEN,     /* "Forbidden" */
    KP_FIELD_TOO_LONG,      /* "Too long" */
    KP_FIELD_TOO_MANY,      /* "Too many" */
    KP_FIELD_DUPLICATE,     /* "Duplicate value" */
    KP_FIELD_TYPE,          /* wrong JSON type: "Invalid type" */
};

typedef struct kp_field_error {
    enum kp_field_error_type type;
    const char *path;   /* "spec.template.spec.requirements[2].values" */
    const char *value;  /* the offending value as text (JSON-quoted when a string), or NULL */
    const char *detail; /* what is allowed; may be NULL */
} kp_field_error;

typedef struct kp_field_errors {
    kp_arena *arena; /* owns every string in the list */
    kp_field_error *items;
    size_t count;
    size_t cap;
} kp_field_errors;

void kp_field_errors_init(kp_field_errors *errs, kp_arena *arena);

/* Add one error. `value` may be NULL; `detail_fmt` may be NULL. Strings are copied. */
void kp_field_errors_add(kp_field_errors *errs, enum kp_field_error_type type, const char *path,
                         const char *value, const char *detail_fmt, ...)
    __attribute__((format(printf, 5, 6)));
void kp_field_errors_addv(kp_field_errors *errs, enum kp_field_error_type type, const char *path,
                          const char *value, const char *detail_fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Helpers for the common shapes; the string forms quote the value like Go's %q. */
void kp_field_errors_required(kp_field_errors *errs, const char *path, const char *detail);
void kp_field_errors_invalid_str(kp_field_errors *errs, const char *path, const char *value,
                                 const char *detail);
void kp_field_errors_invalid_int(kp_field_errors *errs, const char *path, long long value,
                                 const char *detail);

/* `path: Invalid value: "x": detail` (Kubernetes' field.Error.Error()). */
const char *kp_field_error_string(kp_arena *arena, const kp_field_error *err);
/* All errors joined with ", " (or `[e1, e2]` when there are several, as
 * Kubernetes' aggregate prints them). "" when empty. */
const char *kp_field_errors_string(kp_arena *arena, const kp_field_errors *errs);

/* Quote a string the way Go's %q does (for values in messages). */
const char *kp_quote(kp_arena *arena, const char *s);

#endif
