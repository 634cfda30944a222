#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kp_buf_init(kp_buf *buf, size_t max)
{
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
    buf->max = max;
}

static int ensure(kp_buf *buf, size_t extra)
{
    if (extra > buf->max - buf->len)
        return kp_error_set(KP_ETOOLARGE, "buffer would exceed its limit of %zu bytes", buf->max);
    size_t need = buf->len + extra + 1;
    if (need > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 256;
        while (cap < need)
            cap *= 2;
        if (cap > buf->max + 1)
            cap = buf->max + 1;
        buf->data = kp_xrealloc(buf->data, cap);
        buf->cap = cap;
    }
    return 0;
}

int kp_buf_append(kp_buf *buf, const void *data, size_t len)
{
    int err = ensure(buf, len);
    if (err < 0)
        return err;
    if (len)
        memcpy(buf->data + buf->len, data, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
    return 0;
}

int kp_buf_puts(kp_buf *buf, const char *s)
{
    return kp_buf_append(buf, s, strlen(s));
}

int kp_buf_putc(kp_buf *buf, char c)
{
    return kp_buf_append(buf, &c, 1);
}

int kp_buf_vprintf(kp_buf *buf, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return kp_error_set(KP_ERROR, "bad format string");
    int err = ensure(buf, (size_t)n);
    if (err < 0)
        return err;
    vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
    buf->len += (size_t)n;
    return 0;
}

int kp_buf_printf(kp_buf *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int err = kp_buf_vprintf(buf, fmt, ap);
    va_end(ap);
    return err;
}

int kp_buf_json_string(kp_buf *buf, const char *s)
{
    int err = kp_buf_putc(buf, '"');
    for (const unsigned char *p = (const unsigned char *)s; !err && *p; p++) {
        switch (*p) {
        case '"': err = kp_buf_puts(buf, "\\\""); break;
        case '\\': err = kp_buf_puts(buf, "\\\\"); break;
        case '\n': err = kp_buf_puts(buf, "\\n"); break;
        case '\r': err = kp_buf_puts(buf, "\\r"); break;
        case '\t': err = kp_buf_puts(buf, "\\t"); break;
        default:
            if (*p < 0x20)
                err = kp_buf_printf(buf, "\\u%04x", *p);
            else
                err = kp_buf_putc(buf, (char)*p);
        }
    }
    return err ? err : kp_buf_putc(buf, '"');
}

void kp_buf_reset(kp_buf *buf)
{
    buf->len = 0;
    if (buf->data)
        buf->data[0] = '\0';
}

char *kp_buf_detach(kp_buf *buf)
{
    char *p = buf->data ? buf->data : kp_xstrdup("");
    buf->data = NULL;
    buf->len = buf->cap = 0;
    return p;
}

void kp_buf_free(kp_buf *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}

const char *kp_buf_cstr(const kp_buf *buf)
{
    return buf->data ? buf->data : "";
}
