/*
 * A growable byte buffer with a hard cap (curl's dynbuf): HTTP bodies, watch
 * lines, YAML documents and AdmissionReviews all go through one, so no input
 * can make us allocate without bound. Exceeding the cap is KP_ETOOLARGE.
 * The contents are always NUL-terminated.
 */
#ifndef KP_BASE_BUF_H
#define KP_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct kp_buf {
    char *data; /* NULL until the first append */
    size_t len;
    size_t cap;
    size_t max; /* hard cap on len */
} kp_buf;

#define KP_BUF_INIT(max_bytes) {NULL, 0, 0, (max_bytes)}

/* An append that hit the cap changed nothing and returns KP_ETOOLARGE; a
 * caller that went on would write a document with a hole in it, so the
 * result of every append must be looked at. */
#define KP_BUF_MUST_USE __attribute__((warn_unused_result))

void kp_buf_init(kp_buf *buf, size_t max);
KP_BUF_MUST_USE int kp_buf_append(kp_buf *buf, const void *data, size_t len);
KP_BUF_MUST_USE int kp_buf_puts(kp_buf *buf, const char *s);
KP_BUF_MUST_USE int kp_buf_putc(kp_buf *buf, char c);
KP_BUF_MUST_USE int kp_buf_printf(kp_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
KP_BUF_MUST_USE int kp_buf_vprintf(kp_buf *buf, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append `s` as a JSON string literal, quotes included. */
KP_BUF_MUST_USE int kp_buf_json_string(kp_buf *buf, const char *s);
void kp_buf_reset(kp_buf *buf);
/* Hand the contents to the caller (free() them); the buffer is left empty. */
char *kp_buf_detach(kp_buf *buf);
void kp_buf_free(kp_buf *buf);
/* The contents, "" when empty. */
const char *kp_buf_cstr(const kp_buf *buf);

#endif
