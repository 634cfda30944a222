#include "format/json_out.h"
#include "format/yaml.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- exact integers ---------------------------------------------------- */

void kp_json_number_set_text(cJSON *number, const char *text, size_t len)
{
    free(number->valuestring);
    number->valuestring = kp_xstrndup(text, len);
}

const char *kp_json_number_text(const cJSON *number)
{
    if (!cJSON_IsNumber(number) || !number->valuestring) return NULL;
    /* A number changed after it was annotated no longer matches its text. */
    return strtod(number->valuestring, NULL) == number->valuedouble ? number->valuestring : NULL;
}

int kp_json_int64(int64_t *out, const cJSON *item)
{
    const char *text = kp_json_number_text(item);
    if (!cJSON_IsNumber(item)) return kp_error_set(KP_EINVALID, "not a number");
    if (text) {
        char *end;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno == ERANGE || *end)
            return kp_error_set(KP_EOVERFLOW, "%s does not fit in int64", text);
        *out = v;
        return 0;
    }
    double d = item->valuedouble;
    if (d != floor(d)) return kp_error_set(KP_EINVALID, "%g is not an integer", d);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return kp_error_set(KP_EOVERFLOW, "%g does not fit in int64", d);
    *out = (int64_t)d;
    return 0;
}

/* ---- duplicate keys -------------------------------------------------------- */

struct member {
    cJSON *item;
    size_t index;
};

static int member_cmp(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    int c = strcmp(x->item->string ? x->item->string : "", y->item->string ? y->item->string : "");
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Sorting by (key, position) puts each key's occurrences side by side; all
 * but the last of each run go. O(n log n), so a huge mapping stays cheap. */
static void dedupe_members(cJSON *object)
{
    size_t n = 0, i = 0;
    for (cJSON *c = object->child; c; c = c->next)
        n++;
    if (n < 2) return;
    struct member *m = kp_xcalloc(n, sizeof(*m));
    for (cJSON *c = object->child; c; c = c->next, i++)
        m[i] = (struct member){c, i};
    qsort(m, n, sizeof(*m), member_cmp);
    for (i = 0; i + 1 < n; i++)
        if (strcmp(m[i].item->string ? m[i].item->string : "",
                   m[i + 1].item->string ? m[i + 1].item->string : "") == 0)
            cJSON_Delete(cJSON_DetachItemViaPointer(object, m[i].item));
    free(m);
}

void kp_json_dedupe_keys(cJSON *root)
{
    if (!root) return;
    if (cJSON_IsObject(root)) dedupe_members(root);
    for (cJSON *c = root->child; c; c = c->next)
        if (cJSON_IsObject(c) || cJSON_IsArray(c)) kp_json_dedupe_keys(c);
}

size_t kp_json_utf8_len(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) return 0;
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (!len || len > n || s[0] > 0xF4) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||
        (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
        return 0;
    return len;
}

/* ---- floats -------------------------------------------------------------- */

/* The fewest significant digits that read back as `v` (as a float32 when
 * `single`): "15" and exponent 0 for 1.5. */
static void shortest_digits(double v, int single, char digits[24], int *exp10)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        double back = strtod(buf, NULL);
        if (single ? (float)back == (float)v : back == v) break;
    }
    size_t n = 0;
    char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *exp10 = (int)strtol(p + 1, NULL, 10);
}

/* strconv.FormatFloat's %e and %f with all shortest digits. */
static char *go_format(char *buf, size_t size, double v, int single, int use_e)
{
    char d[24];
    int exp, neg = signbit(v) != 0;
    shortest_digits(fabs(v), single, d, &exp);
    size_t nd = strlen(d), o = 0;
    if (use_e < 0) /* 'g' with shortest digits switches at 1e-4 and 1e+6 */
        use_e = exp < -4 || exp >= 6;
    if (use_e) {
        snprintf(buf, size, "%s%c%s%se%c%02d", neg ? "-" : "", d[0], nd > 1 ? "." : "", d + 1,
                 exp < 0 ? '-' : '+', abs(exp));
        return buf;
    }
    char tmp[400];
    if (neg) tmp[o++] = '-';
    if (exp < 0) {
        tmp[o++] = '0';
        tmp[o++] = '.';
        for (int i = -1; i > exp; i--)
            tmp[o++] = '0';
        for (size_t i = 0; i < nd; i++)
            tmp[o++] = d[i];
    } else {
        for (int i = 0; i <= exp || (size_t)i < nd; i++) {
            if (i == exp + 1) tmp[o++] = '.';
            tmp[o++] = (size_t)i < nd ? d[i] : '0';
        }
    }
    tmp[o] = '\0';
    snprintf(buf, size, "%s", tmp);
    return buf;
}

char *kp_json_format_float(char *buf, size_t size, double v, enum kp_float_style style)
{
    if (style == KP_FLOAT_KEY32) v = (double)(float)v;
    if (!isfinite(v)) {
        snprintf(buf, size, "%s",
                 style == KP_FLOAT_JSON ? "null"
                 : isnan(v)             ? ".nan"
                 : v > 0                ? ".inf"
                                        : "-.inf");
        return buf;
    }
    if (style == KP_FLOAT_JSON) {
        double a = fabs(v);
        go_format(buf, size, v, 0, a != 0 && (a < 1e-6 || a >= 1e21));
        size_t n = strlen(buf); /* Go writes e-7, not e-07 */
        if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
            buf[n - 2] = buf[n - 1];
            buf[n - 1] = '\0';
        }
        return buf;
    }
    if (style == KP_FLOAT_YAML && v == floor(v) && v >= -9223372036854775808.0 &&
        v < 18446744073709551616.0) {
        snprintf(buf, size, "%.0f", v);
        return buf;
    }
    return go_format(buf, size, v, style == KP_FLOAT_KEY32, -1);
}

/* ---- JSON ------------------------------------------------------------------ */

static int put_indent(kp_buf *out, int pretty, int level)
{
    int err = 0;
    if (!pretty) return 0;
    err = kp_buf_putc(out, '\n');
    for (int i = 0; !err && i < level; i++)
        err = kp_buf_puts(out, "    ");
    return err;
}

static int put_json(kp_buf *out, const cJSON *item, int pretty, int level);

static int put_container(kp_buf *out, const cJSON *item, int pretty, int level)
{
    int object = cJSON_IsObject(item);
    int err = kp_buf_putc(out, object ? '{' : '[');
    for (const cJSON *c = item->child; !err && c; c = c->next) {
        if (c != item->child) err = kp_buf_putc(out, ',');
        if (!err) err = put_indent(out, pretty, level + 1);
        if (!err && object) {
            err = kp_buf_json_string(out, c->string ? c->string : "");
            if (!err) err = kp_buf_puts(out, pretty ? ": " : ":");
        }
        if (!err) err = put_json(out, c, pretty, level + 1);
    }
    if (!err && item->child) err = put_indent(out, pretty, level);
    return err ? err : kp_buf_putc(out, object ? '}' : ']');
}

static int put_json(kp_buf *out, const cJSON *item, int pretty, int level)
{
    char num[64];
    switch (item->type & 0xFF) {
    case cJSON_False:
        return kp_buf_puts(out, "false");
    case cJSON_True:
        return kp_buf_puts(out, "true");
    case cJSON_NULL:
        return kp_buf_puts(out, "null");
    case cJSON_String:
        return kp_buf_json_string(out, item->valuestring ? item->valuestring : "");
    case cJSON_Raw:
        return kp_buf_puts(out, item->valuestring ? item->valuestring : "null");
    case cJSON_Number: {
        const char *text = kp_json_number_text(item);
        return kp_buf_puts(
            out,
            text ? text : kp_json_format_float(num, sizeof(num), item->valuedouble, KP_FLOAT_JSON));
    }
    case cJSON_Array:
    case cJSON_Object:
        return put_container(out, item, pretty, level);
    default:
        return kp_buf_puts(out, "null");
    }
}

static int truncate_to(kp_buf *out, size_t len, int err)
{
    if (out->data) {
        out->len = len;
        out->data[len] = '\0';
    }
    return err;
}

int kp_json_out_json(kp_buf *out, const cJSON *item, int pretty)
{
    size_t mark = out->len;
    int err = put_json(out, item, pretty, 0);
    if (!err && pretty) err = kp_buf_putc(out, '\n');
    return err ? truncate_to(out, mark, err) : 0;
}

/* ---- YAML ---------------------------------------------------------------- */

struct emitter {
    yaml_emitter_t e;
    kp_buf *out;
    int write_err;
};

static int write_out(void *data, unsigned char *bytes, size_t size)
{
    struct emitter *em = data;
    if (kp_buf_append(em->out, bytes, size) < 0) {
        em->write_err = KP_ETOOLARGE;
        return 0;
    }
    return 1;
}

/* libyaml destroys the event even when emitting fails. */
static int emit(struct emitter *em, yaml_event_t *ev, int made)
{
    if (!made) return kp_error_set(KP_EINVALID, "YAML cannot carry a string that is not UTF-8");
    if (yaml_emitter_emit(&em->e, ev)) return 0;
    if (em->e.error == YAML_MEMORY_ERROR) {
        fputs("karpenter: out of memory in libyaml\n", stderr);
        abort();
    }
    if (em->write_err)
        return kp_error_set(em->write_err, "YAML output exceeds its limit of %zu bytes",
                            em->out->max);
    return kp_error_set(KP_EINVALID, "emitting YAML: %s",
                        em->e.problem ? em->e.problem : "unknown problem");
}

/* YAML 1.1 sexagesimal numbers ("1:30"): strings to go-yaml, numbers to other
 * YAML 1.1 readers, so they are quoted as go-yaml's encoder does. */
static int looks_base60(const char *s)
{
    size_t i = s[0] == '-' || s[0] == '+';
    int groups = 0;
    if (s[i] < '0' || s[i] > '9') return 0;
    while ((s[i] >= '0' && s[i] <= '9') || s[i] == '_')
        i++;
    for (; s[i] == ':'; groups++) {
        size_t start = ++i;
        while (s[i] >= '0' && s[i] <= '9' && i - start < 2)
            i++;
        if (i == start || (i - start == 2 && s[start] > '5')) return 0;
    }
    if (groups && s[i] == '.')
        for (i++; (s[i] >= '0' && s[i] <= '9') || s[i] == '_'; i++)
            ;
    return groups && !s[i];
}

static int emit_scalar(struct emitter *em, const char *text, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    int made = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
                                            1, 1, style);
    return emit(em, &ev, made);
}

static int emit_string(struct emitter *em, const char *s)
{
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
    if (strchr(s, '\n'))
        style = YAML_LITERAL_SCALAR_STYLE; /* libyaml falls back to quotes if it must */
    else if (!kp_yaml_plain_is_string(s, strlen(s)) || looks_base60(s))
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return emit_scalar(em, s, style);
}

static int emit_node(struct emitter *em, const cJSON *item);

static int emit_container(struct emitter *em, const cJSON *item)
{
    yaml_event_t ev;
    int object = cJSON_IsObject(item), err;
    if (object)
        err =
            emit(em, &ev,
                 yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
    else
        err = emit(
            em, &ev,
            yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE));
    for (const cJSON *c = item->child; !err && c; c = c->next) {
        if (object) err = emit_string(em, c->string ? c->string : "");
        if (!err) err = emit_node(em, c);
    }
    if (err) return err;
    if (object) return emit(em, &ev, yaml_mapping_end_event_initialize(&ev));
    return emit(em, &ev, yaml_sequence_end_event_initialize(&ev));
}

static int emit_node(struct emitter *em, const cJSON *item)
{
    char num[64];
    switch (item->type & 0xFF) {
    case cJSON_False:
        return emit_scalar(em, "false", YAML_PLAIN_SCALAR_STYLE);
    case cJSON_True:
        return emit_scalar(em, "true", YAML_PLAIN_SCALAR_STYLE);
    case cJSON_NULL:
        return emit_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
    case cJSON_String:
        return emit_string(em, item->valuestring ? item->valuestring : "");
    case cJSON_Number: {
        const char *text = kp_json_number_text(item);
        return emit_scalar(
            em,
            text ? text : kp_json_format_float(num, sizeof(num), item->valuedouble, KP_FLOAT_YAML),
            YAML_PLAIN_SCALAR_STYLE);
    }
    case cJSON_Array:
    case cJSON_Object:
        return emit_container(em, item);
    default:
        return kp_error_set(KP_EINVALID, "a raw JSON item cannot be written as YAML");
    }
}

static int emit_document(struct emitter *em, const cJSON *root, int separator)
{
    yaml_event_t ev;
    int err = emit(em, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    if (!err)
        err =
            emit(em, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, !separator));
    if (!err) err = emit_node(em, root);
    if (!err) err = emit(em, &ev, yaml_document_end_event_initialize(&ev, 1));
    if (!err) err = emit(em, &ev, yaml_stream_end_event_initialize(&ev));
    return err;
}

int kp_json_out_yaml(kp_buf *out, const cJSON *root, int separator)
{
    struct emitter em = {.out = out};
    size_t mark = out->len;
    if (!yaml_emitter_initialize(&em.e)) {
        fputs("karpenter: out of memory in libyaml\n", stderr);
        abort();
    }
    yaml_emitter_set_output(&em.e, write_out, &em);
    yaml_emitter_set_unicode(&em.e, 1);
    yaml_emitter_set_width(&em.e, -1);
    yaml_emitter_set_indent(&em.e, 2);
    int err = emit_document(&em, root, separator);
    yaml_emitter_delete(&em.e);
    return err ? truncate_to(out, mark, err) : 0;
}

int kp_json_out_yaml_stream(kp_buf *out, cJSON *const *roots, size_t count)
{
    size_t mark = out->len;
    for (size_t i = 0; i < count; i++) {
        int err = kp_json_out_yaml(out, roots[i], i > 0);
        if (err < 0) return truncate_to(out, mark, err);
    }
    return 0;
}
