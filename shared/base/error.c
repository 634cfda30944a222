#include "base/error.h"

#include <stdio.h>
#include <string.h>

/* One message per thread, so workers never see each other's failures. */
static _Thread_local char last_message[1024];

int kp_error_setv(int code, const char *fmt, va_list ap)
{
    vsnprintf(last_message, sizeof(last_message), fmt, ap);
    return code;
}

int kp_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_error_setv(code, fmt, ap);
    va_end(ap);
    return code;
}

int kp_error_wrap(int code, const char *fmt, ...)
{
    char prefix[512];
    char old[sizeof(last_message)];
    va_list ap;

    memcpy(old, last_message, sizeof(old));
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    if (old[0])
        snprintf(last_message, sizeof(last_message), "%s: %s", prefix, old);
    else
        snprintf(last_message, sizeof(last_message), "%s", prefix);
    return code;
}

const char *kp_error_last(void)
{
    return last_message;
}

void kp_error_clear(void)
{
    last_message[0] = '\0';
}

const char *kp_error_name(int code)
{
    switch (code) {
    case KP_OK: return "ok";
    case KP_EINVALID: return "invalid";
    case KP_ENOTFOUND: return "not found";
    case KP_ECONFLICT: return "conflict";
    case KP_EGONE: return "gone";
    case KP_ETOOLARGE: return "too large";
    case KP_ERETRY: return "retry";
    case KP_EOVERFLOW: return "overflow";
    case KP_EIO: return "i/o error";
    case KP_EFORBIDDEN: return "forbidden";
    case KP_EUNAUTHORIZED: return "unauthorized";
    case KP_EINSUFFICIENT_CAPACITY: return "insufficient capacity";
    case KP_ETIMEOUT: return "timeout";
    case KP_ENOTREADY: return "not ready";
    default: return "error";
    }
}
