/*
 * Standard base64 (RFC 4648, padded), as Kubernetes encodes []byte fields
 * (caBundle, Secret data, kubeconfig *-data, user data). One home for both
 * directions: encoding is OpenSSL's; decoding is Go's StdEncoding rule,
 * which OpenSSL's decoder does not check (padding required and only at the
 * end, line breaks skipped).
 */
#ifndef KP_BASE_BASE64_H
#define KP_BASE_BASE64_H

#include "base/buf.h"

#include <stddef.h>

/* Append the encoding of `len` bytes at `data` to `out`. */
int kp_base64_append(kp_buf *out, const void *data, size_t len);

/* Decode into a NUL-terminated malloc'd buffer; KP_EINVALID on bad input. */
int kp_base64_decode(char **out, size_t *out_len, const char *text);

#endif
