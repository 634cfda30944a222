/* Base64 both ways (see base64.h). */
#include "base/base64.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

int kp_base64_append(kp_buf *out, const void *data, size_t len)
{
    /* In slices, so the output buffer stays small and lengths fit an int. */
    unsigned char enc[4 * 768 / 3 + 1];
    const unsigned char *in = data;
    int err = 0;
    for (size_t off = 0; off < len && !err; off += 768) {
        size_t n = len - off < 768 ? len - off : 768;
        int m = EVP_EncodeBlock(enc, in + off, (int)n);
        err = kp_buf_append(out, (const char *)enc, (size_t)m);
    }
    return err;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Go's base64.StdEncoding, which Kubernetes uses for []byte fields: padding
 * required, and line breaks skipped. */
int kp_base64_decode(char **out, size_t *out_len, const char *text)
{
    unsigned char *res = kp_xmalloc(strlen(text) / 4 * 3 + 4);
    size_t n = 0, quad = 0, pad = 0;
    unsigned acc = 0;
    int done = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\r' || *p == '\n') continue;
        int v = *p == '=' ? 0 : b64_value(*p);
        if (done || v < 0 || (pad && *p != '=') || (*p == '=' && quad < 2)) goto bad;
        pad += *p == '=';
        acc = acc << 6 | (unsigned)v;
        if (++quad == 4) {
            res[n++] = (unsigned char)(acc >> 16);
            res[n++] = (unsigned char)(acc >> 8);
            res[n++] = (unsigned char)acc;
            quad = 0;
            acc = 0;
            done = pad > 0;
        }
    }
    if (quad != 0) goto bad;
    n -= pad;
    res[n] = '\0';
    *out = (char *)res;
    *out_len = n;
    return 0;
bad:
    free(res);
    return kp_error_set(KP_EINVALID, "not valid base64");
}

