#include "format/json_in.h"
#include "format/json_out.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

void kp_json_scan_free(kp_json_scan *scan)
{
    free(scan->big);
    scan->big = NULL;
    scan->count = scan->cap = 0;
}

static size_t number_token(const char *data, size_t len, size_t i, int *integer)
{
    size_t j = i;
    *integer = 1;
    while (j < len && strchr("0123456789+-eE.", data[j]) && data[j]) {
        if (data[j] == '.' || data[j] == 'e' || data[j] == 'E') *integer = 0;
        j++;
    }
    return j;
}

/* Integers of 16 digits or more may not fit a double exactly (2^53 has 16). */
static void note_number(kp_json_scan *scan, const char *data, size_t i, size_t j, int integer,
                        size_t ordinal)
{
    if (!integer || j - i < 16 + (data[i] == '-')) return;
    scan->big = kp_xgrow(scan->big, &scan->cap, scan->count + 1, sizeof(*scan->big));
    scan->big[scan->count++] = (struct kp_json_big_int){ordinal, i, j - i};
}

static int bad(size_t *offset, const char **problem, size_t at, int code, const char *what)
{
    *offset = at;
    *problem = what;
    return code;
}

int kp_json_prescan(const char *data, size_t len, size_t max_depth, kp_json_scan *scan,
                    size_t *offset, const char **problem)
{
    size_t depth = 0, ordinal = 0;
    int in_string = 0, escape = 0, integer;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        size_t k = c < 0x80 ? 1 : kp_json_utf8_len(data + i, len - i);
        if (!k) return bad(offset, problem, i, KP_EINVALID, "invalid UTF-8");
        if (c == '\0') return bad(offset, problem, i, KP_EINVALID, "NUL byte in JSON");
        if (in_string) {
            if (escape && c == 'u' && len - i > 4 && memcmp(data + i + 1, "0000", 4) == 0)
                return bad(offset, problem, i - 1, KP_EINVALID,
                           "strings containing NUL are not supported");
            in_string = escape || c != '"';
            escape = !escape && c == '\\';
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth)
                return bad(offset, problem, i, KP_ETOOLARGE, "nesting too deep");
        } else if (c == '}' || c == ']') {
            depth -= depth > 0;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = number_token(data, len, i, &integer);
            note_number(scan, data, i, j, integer, ordinal++);
            k = j - i;
        }
        i += k - 1;
    }
    return 0;
}

/* Numbers come out of a pre-order walk in text order: match them to the scan. */
static void annotate(cJSON *item, const char *data, const kp_json_scan *scan, size_t *ordinal,
                     size_t *next)
{
    for (; item; item = item->next) {
        if (cJSON_IsNumber(item)) {
            const struct kp_json_big_int *b = *next < scan->count ? &scan->big[*next] : NULL;
            if (b && b->ordinal == *ordinal) {
                kp_json_number_set_text(item, data + b->offset, b->len);
                (*next)++;
            }
            (*ordinal)++;
        }
        annotate(item->child, data, scan, ordinal, next);
    }
}

void kp_json_finish(cJSON *value, const char *data, const kp_json_scan *scan, size_t *ordinal,
                    size_t *next)
{
    annotate(value, data, scan, ordinal, next);
    kp_json_dedupe_keys(value);
}

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int kp_json_parse_one(cJSON **out, const char *data, size_t len, size_t max_depth,
                      const char *what)
{
    kp_json_scan scan = KP_JSON_SCAN_INIT;
    size_t at = 0, ordinal = 0, next = 0;
    const char *problem = NULL;
    int err = kp_json_prescan(data, len, max_depth, &scan, &at, &problem);
    cJSON *root = NULL;
    const char *end = NULL;
    if (err == 0 && !(root = cJSON_ParseWithLengthOpts(data, len, &end, 0))) {
        err = KP_EINVALID;
        problem = "not valid JSON";
        at = end && end >= data ? (size_t)(end - data) : 0;
    }
    for (size_t i = end ? (size_t)(end - data) : len; err == 0 && i < len; i++)
        if (!blank(data[i])) err = KP_EINVALID, problem = "data after the JSON value", at = i;
    if (err == 0) kp_json_finish(root, data, &scan, &ordinal, &next);
    kp_json_scan_free(&scan);
    if (err < 0) {
        cJSON_Delete(root);
        return kp_error_set(err, "%s: %s (at byte %zu)", what, problem, at);
    }
    *out = root;
    return 0;
}
