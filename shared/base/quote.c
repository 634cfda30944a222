/* Go-style quoting for error messages (see quote.h). */
#include "base/quote.h"

#include <string.h>

void kp_quote_go(char *dst, size_t size, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t w = 0, i = 0;

    dst[w++] = '"';
    for (; i < len && i < KP_QUOTE_MAX_INPUT && w + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x80) {
            dst[w++] = '\\';
            dst[w++] = 'x';
            dst[w++] = hex[c >> 4];
            dst[w++] = hex[c & 15];
            continue;
        }
        if (c == '"' || c == '\\') dst[w++] = '\\';
        dst[w++] = (char)c;
    }
    if (i < len) {
        memcpy(dst + w, "...", 3);
        w += 3;
    }
    dst[w++] = '"';
    dst[w] = '\0';
}
