/*
 * MIME multi-part archives for user data: reading the user's archive into
 * parts, and writing an archive the way Karpenter writes one (Go's
 * mime/multipart with boundary "//", headers sorted, carriage returns
 * removed).
 */
#include "cloud/aws/userdata_internal.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"

bool kp_ud_is_mime(const char *text)
{
    while (*text && isspace((unsigned char)*text))
        text++;
    return strncmp(text, "MIME-Version:", 13) == 0 || strncmp(text, "Content-Type:", 13) == 0;
}

/* One line starting at *p (without its LF or CRLF); *p moves past it.
 * Returns false at the end of the text. */
static bool next_line(const char **p, const char **line, size_t *len)
{
    if (!**p) return false;
    const char *s = *p, *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    *line = s;
    *len = n > 0 && s[n - 1] == '\r' ? n - 1 : n;
    *p = nl ? nl + 1 : s + n;
    return true;
}

static char *canonical_name(kp_arena *arena, const char *s, size_t n)
{
    char *out = kp_arena_strndup(arena, s, n);
    bool upper = true;
    for (char *c = out; *c; c++) {
        *c = (char)(upper ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
        upper = *c == '-';
    }
    return out;
}

static char *trimmed(kp_arena *arena, const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return kp_arena_strndup(arena, s, n);
}

/* A header block up to its blank line; *p moves past the blank line. */
static int read_headers(kp_arena *arena, const char **p, kp_ud_header **out, size_t *n_out)
{
    kp_ud_header *h = NULL;
    size_t n = 0, cap = 0;
    const char *line;
    size_t len;
    while (next_line(p, &line, &len) && len > 0) {
        if ((*line == ' ' || *line == '\t') && n > 0) {
            char *joined =
                kp_arena_printf(arena, "%s %s", h[n - 1].value, trimmed(arena, line, len));
            h[n - 1].value = joined;
            continue;
        }
        const char *colon = memchr(line, ':', len);
        if (!colon || colon == line)
            return kp_error_set(KP_EINVALID, "user data: malformed MIME header \"%.*s\"",
                                (int)(len > 80 ? 80 : len), line);
        if (n == cap) {
            h = kp_arena_grow(arena, h, n, cap ? cap * 2 : 4, sizeof(*h));
            cap = cap ? cap * 2 : 4;
        }
        h[n].name = canonical_name(arena, line, (size_t)(colon - line));
        h[n].value = trimmed(arena, colon + 1, len - (size_t)(colon + 1 - line));
        n++;
    }
    *out = h;
    *n_out = n;
    return 0;
}

static const char *header_get(const kp_ud_header *h, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(h[i].name, name) == 0) return h[i].value;
    return NULL;
}

/* The boundary parameter of a multipart Content-Type. */
static int boundary_of(kp_arena *arena, const char *content_type, const char **out)
{
    if (!content_type)
        return kp_error_set(KP_EINVALID, "user data: the MIME archive has no Content-Type");
    if (strncasecmp(content_type, "multipart/", 10) != 0)
        return kp_error_set(KP_EINVALID, "user data: the MIME archive is not multipart (%s)",
                            content_type);
    for (const char *s = strchr(content_type, ';'); s; s = strchr(s + 1, ';')) {
        const char *k = s + 1;
        while (*k == ' ' || *k == '\t')
            k++;
        if (strncasecmp(k, "boundary=", 9) != 0) continue;
        const char *v = k + 9;
        if (*v == '"') {
            const char *end = strchr(v + 1, '"');
            if (!end) break;
            *out = kp_arena_strndup(arena, v + 1, (size_t)(end - v - 1));
        } else {
            *out = kp_arena_strndup(arena, v, strcspn(v, "; \t"));
        }
        if (**out) return 0;
        break;
    }
    return kp_error_set(KP_EINVALID, "user data: the multipart archive names no boundary");
}

/* Whether `line` is the delimiter "--b" or the close "--b--" (trailing blanks allowed). */
static int delimiter(const char *line, size_t len, const char *b, size_t blen)
{
    if (len < blen + 2 || line[0] != '-' || line[1] != '-' || memcmp(line + 2, b, blen) != 0)
        return 0;
    const char *rest = line + 2 + blen;
    size_t rlen = len - 2 - blen;
    int kind = 1;
    if (rlen >= 2 && rest[0] == '-' && rest[1] == '-') kind = 2, rest += 2, rlen -= 2;
    for (size_t i = 0; i < rlen; i++)
        if (rest[i] != ' ' && rest[i] != '\t') return 0;
    return kind;
}

/* Read one part starting after its delimiter line; *p ends after the next
 * delimiter line, *last set when that was the close delimiter or the end. */
static int read_part(kp_arena *arena, const char **p, const char *b, kp_ud_part *part, bool *last)
{
    int err = read_headers(arena, p, &part->headers, &part->n_headers);
    if (err < 0) return err;
    size_t blen = strlen(b);
    const char *start = *p, *line, *prev_end = *p;
    size_t len;
    *last = true;
    while (next_line(p, &line, &len)) {
        int kind = delimiter(line, len, b, blen);
        if (kind) {
            *last = kind == 2;
            break;
        }
        prev_end = line + len;
    }
    /* The line break before a delimiter belongs to the delimiter. */
    part->content = kp_arena_strndup(arena, start, (size_t)(prev_end - start));
    return 0;
}

int kp_ud_mime_parse(kp_arena *arena, const char *text, kp_ud_parts *parts)
{
    kp_ud_header *h;
    size_t n;
    const char *p = text, *b = NULL;
    while (*p && isspace((unsigned char)*p))
        p++;
    int err = read_headers(arena, &p, &h, &n);
    if (err == 0) err = boundary_of(arena, header_get(h, n, "Content-Type"), &b);
    if (err < 0) return err;
    const char *line;
    size_t len, blen = strlen(b);
    bool found = false;
    while (!found && next_line(&p, &line, &len))
        found = delimiter(line, len, b, blen) == 1;
    for (bool last = !found; !last;) {
        kp_ud_part part;
        if ((err = read_part(arena, &p, b, &part, &last)) < 0) return err;
        if (parts->count == parts->cap) {
            size_t cap = parts->cap ? parts->cap * 2 : 4;
            parts->items =
                kp_arena_grow(arena, parts->items, parts->count, cap, sizeof(kp_ud_part));
            parts->cap = cap;
        }
        parts->items[parts->count++] = part;
    }
    return 0;
}

void kp_ud_parts_add(kp_arena *arena, kp_ud_parts *parts, const char *content_type,
                     const char *content)
{
    if (parts->count == parts->cap) {
        size_t cap = parts->cap ? parts->cap * 2 : 4;
        parts->items = kp_arena_grow(arena, parts->items, parts->count, cap, sizeof(kp_ud_part));
        parts->cap = cap;
    }
    kp_ud_header *h = KP_ARENA_NEW(arena, kp_ud_header, 1);
    h->name = "Content-Type";
    h->value = content_type;
    parts->items[parts->count++] = (kp_ud_part){h, 1, content};
}

/* Go's writer emits a part's headers sorted by name. */
static int write_headers(kp_buf *out, const kp_ud_part *part)
{
    int err = 0;
    const char *prev = "";
    for (size_t done = 0; done < part->n_headers && err == 0;) {
        const char *next = NULL;
        for (size_t i = 0; i < part->n_headers; i++) {
            const char *name = part->headers[i].name;
            if (strcmp(name, prev) > 0 && (!next || strcmp(name, next) < 0)) next = name;
        }
        if (!next) break;
        for (size_t i = 0; i < part->n_headers && err == 0; i++)
            if (strcmp(part->headers[i].name, next) == 0) {
                err = kp_buf_printf(out, "%s: %s\n", next, part->headers[i].value);
                done++;
            }
        prev = next;
    }
    return err;
}

/* Part content without carriage returns, as Karpenter strips them. */
static int put_without_cr(kp_buf *out, const char *s)
{
    int err = 0;
    while (err == 0 && *s) {
        size_t n = strcspn(s, "\r");
        err = kp_buf_append(out, s, n);
        s += n;
        if (*s == '\r') s++;
    }
    return err;
}

int kp_ud_mime_write(kp_buf *out, const kp_ud_parts *parts)
{
    int err = kp_buf_puts(
        out,
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"" KP_UD_BOUNDARY "\"\n\n");
    for (size_t i = 0; i < parts->count && err == 0; i++) {
        err = kp_buf_puts(out, i ? "\n--" KP_UD_BOUNDARY "\n" : "--" KP_UD_BOUNDARY "\n");
        if (err == 0) err = write_headers(out, &parts->items[i]);
        if (err == 0) err = kp_buf_putc(out, '\n');
        if (err == 0) err = put_without_cr(out, parts->items[i].content);
    }
    return err ? err : kp_buf_puts(out, "\n--" KP_UD_BOUNDARY "--\n");
}
