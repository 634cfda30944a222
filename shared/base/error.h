/*
 * Errors as values. A function that can fail returns 0 or a negative KP_E* code
 * and sets a message once, where the failure happened, in a thread-local slot
 * (the libgit2 pattern). Callers act on the code and log or show the message.
 */
#ifndef KP_BASE_ERROR_H
#define KP_BASE_ERROR_H

#include <stdarg.h>

enum kp_error_code {
    KP_OK = 0,
    KP_ERROR = -1,       /* generic failure; the message says what */
    KP_EINVALID = -2,    /* malformed or semantically invalid input */
    KP_ENOTFOUND = -3,   /* the named object does not exist */
    KP_ECONFLICT = -4,   /* optimistic concurrency conflict (HTTP 409) */
    KP_EGONE = -5,       /* resourceVersion too old (HTTP 410): relist */
    KP_ETOOLARGE = -6,   /* input exceeds a hard cap */
    KP_ERETRY = -7,      /* transient: throttled, 5xx, timeout; try again later */
    KP_EOVERFLOW = -8,   /* arithmetic result out of range */
    KP_EIO = -9,         /* file or socket failure */
    KP_EFORBIDDEN = -10, /* authenticated but not allowed (HTTP 403) */
    KP_EUNAUTHORIZED = -11,
    KP_EINSUFFICIENT_CAPACITY = -12, /* the cloud has no capacity for the request */
    KP_ETIMEOUT = -13,
    KP_ENOTREADY = -14, /* a dependency exists but is not ready yet (a node class, a cache) */
};

/* Set the thread's last error message and return code, so that callers can
 * write `return kp_error_set(KP_EINVALID, "bad %s", what);`. */
int kp_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kp_error_setv(int code, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Prefix the current message with context: "reading x.yaml: <old message>". */
int kp_error_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The thread's last message; never NULL ("" when none was set). */
const char *kp_error_last(void);

/* Forget the last message. */
void kp_error_clear(void);

/* A short constant name for a code ("invalid", "not found", ...). */
const char *kp_error_name(int code);

#endif
