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

void kp_buf_init(kp_buf *buf, size_t max);
int kp_buf_append(kp_buf *buf, const void *data, size_t len);
int kp_buf_puts(kp_buf *buf, const char *s);
int kp_buf_putc(kp_buf *buf, char c);
int kp_buf_printf(kp_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kp_buf_vprintf(kp_buf *buf, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append `s` as a JSON string literal, quotes included. */
int kp_buf_json_string(kp_buf *buf, const char *s);
void kp_buf_reset(kp_buf *buf);
/* Hand the contents to the caller (free() them); the buffer is left empty. */
char *kp_buf_detach(kp_buf *buf);
void kp_buf_free(kp_buf *buf);
/* The contents, "" when empty. */
const char *kp_buf_cstr(const kp_buf *buf);

#endif
