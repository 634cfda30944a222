/*
 * TOML for Bottlerocket user data: a reader into a cJSON tree and a writer
 * back. The reader takes TOML 1.0 as users write it (tables, arrays of
 * tables, dotted keys, the four string kinds, arrays, inline tables);
 * numbers and date-times are not interpreted but kept as raw text, so they
 * are written back exactly as given.
 */
#include "cloud/aws/userdata_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

typedef struct toml_reader {
    const char *p;
    int line;
} toml_reader;

enum { TOML_MAX_DEPTH = 64 };

static int fail(const toml_reader *r, const char *what)
{
    return kp_error_set(KP_EINVALID, "user data: TOML line %d: %s", r->line, what);
}

static void skip_blanks(toml_reader *r)
{
    while (*r->p == ' ' || *r->p == '\t')
        r->p++;
}

/* Blanks, comments and line breaks (inside arrays, between statements). */
static void skip_space(toml_reader *r)
{
    for (;;) {
        skip_blanks(r);
        if (*r->p == '#') r->p += strcspn(r->p, "\n");
        if (*r->p == '\r' && r->p[1] == '\n') r->p++;
        if (*r->p != '\n') return;
        r->p++;
        r->line++;
    }
}

static int end_of_line(toml_reader *r)
{
    skip_blanks(r);
    if (*r->p == '#') r->p += strcspn(r->p, "\n");
    if (*r->p == '\r' && r->p[1] == '\n') r->p++;
    if (*r->p && *r->p != '\n') return fail(r, "expected the end of the line");
    if (*r->p) {
        r->p++;
        r->line++;
    }
    return 0;
}

static int put_utf8(kp_buf *b, unsigned long cp)
{
    char u[4];
    if (cp < 0x80) return kp_buf_putc(b, (char)cp);
    if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F));
        return kp_buf_append(b, u, 2);
    }
    if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        return kp_buf_append(b, u, 3);
    }
    u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F));
    return kp_buf_append(b, u, 4);
}

static int escape(toml_reader *r, kp_buf *b)
{
    char c = *r->p++;
    static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
    const char *at = c ? strchr(from, c) : NULL;
    if (at) return kp_buf_putc(b, to[at - from]);
    if (c != 'u' && c != 'U') return fail(r, "unknown escape in a string");
    int digits = c == 'u' ? 4 : 8;
    unsigned long cp = 0;
    for (int i = 0; i < digits; i++, r->p++) {
        if (!isxdigit((unsigned char)*r->p)) return fail(r, "bad unicode escape");
        char h = (char)tolower((unsigned char)*r->p);
        cp = cp * 16 + (unsigned long)(isdigit((unsigned char)h) ? h - '0' : h - 'a' + 10);
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return fail(r, "bad unicode escape");
    return put_utf8(b, cp);
}

/* A string of any of the four kinds; r->p is on the opening quote. */
static int string_value(toml_reader *r, kp_buf *b)
{
    char q = *r->p;
    bool multi = r->p[1] == q && r->p[2] == q;
    r->p += multi ? 3 : 1;
    if (multi && *r->p == '\r' && r->p[1] == '\n') r->p++;
    if (multi && *r->p == '\n') r->p++, r->line++;
    for (;;) {
        char c = *r->p;
        if (!c || (!multi && c == '\n')) return fail(r, "unterminated string");
        if (c == q && (!multi || (r->p[1] == q && r->p[2] == q))) {
            r->p += multi ? 3 : 1;
            return 0;
        }
        r->p++;
        if (c == '\n') r->line++;
        if (c == '\\' && q == '"' && multi && (isspace((unsigned char)*r->p))) {
            /* a line-ending backslash eats the break and following blanks */
            while (isspace((unsigned char)*r->p))
                r->line += *r->p++ == '\n';
            continue;
        }
        int err = c == '\\' && q == '"' ? escape(r, b) : kp_buf_putc(b, c);
        if (err < 0) return err;
    }
}

static int key_part(toml_reader *r, kp_buf *b)
{
    skip_blanks(r);
    if (*r->p == '"' || *r->p == '\'') {
        if (r->p[1] == *r->p && r->p[2] == *r->p)
            return fail(r, "multi-line strings cannot be keys");
        return string_value(r, b);
    }
    size_t n = 0;
    while (isalnum((unsigned char)r->p[n]) || r->p[n] == '_' || r->p[n] == '-')
        n++;
    if (n == 0) return fail(r, "expected a key");
    int err = kp_buf_append(b, r->p, n);
    r->p += n;
    return err;
}

/* A dotted key into `parts` (NUL-separated segments in one buffer). */
static int dotted_key(toml_reader *r, kp_buf *parts, int *count)
{
    *count = 0;
    for (;;) {
        int err = key_part(r, parts);
        if (err == 0) err = kp_buf_append(parts, "", 1);
        if (err < 0) return err;
        (*count)++;
        skip_blanks(r);
        if (*r->p != '.') return 0;
        r->p++;
    }
}

static int value(toml_reader *r, cJSON **out, int depth);

static int array_value(toml_reader *r, cJSON **out, int depth)
{
    cJSON *a = cJSON_CreateArray();
    r->p++;
    for (;;) {
        skip_space(r);
        if (*r->p == ']') break;
        cJSON *v = NULL;
        int err = value(r, &v, depth + 1);
        if (err < 0) {
            cJSON_Delete(a);
            return err;
        }
        cJSON_AddItemToArray(a, v);
        skip_space(r);
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        if (*r->p != ']') {
            cJSON_Delete(a);
            return fail(r, "expected ',' or ']' in an array");
        }
    }
    r->p++;
    *out = a;
    return 0;
}

static int insert(toml_reader *r, cJSON *table, const kp_buf *key, int count, cJSON *v);

static int inline_table(toml_reader *r, cJSON **out, int depth)
{
    cJSON *t = cJSON_CreateObject();
    int err = 0;
    r->p++;
    skip_blanks(r);
    while (err == 0 && *r->p != '}') {
        kp_buf key = KP_BUF_INIT(KP_UD_BUF_MAX);
        int count = 0;
        cJSON *v = NULL;
        err = dotted_key(r, &key, &count);
        if (err == 0 && *r->p != '=') err = fail(r, "expected '=' in an inline table");
        if (err == 0) {
            r->p++;
            skip_blanks(r);
            err = value(r, &v, depth + 1);
        }
        if (err == 0) err = insert(r, t, &key, count, v);
        kp_buf_free(&key);
        skip_blanks(r);
        if (err == 0 && *r->p == ',')
            r->p++, skip_blanks(r);
        else if (err == 0 && *r->p != '}')
            err = fail(r, "expected ',' or '}' in an inline table");
    }
    if (err < 0) {
        cJSON_Delete(t);
        return err;
    }
    r->p++;
    *out = t;
    return 0;
}

/* Numbers, booleans and date-times: a bare token. */
static bool number_like(const char *s, size_t n)
{
    size_t i = (*s == '+' || *s == '-') ? 1 : 0;
    if (n - i == 3 && (strncmp(s + i, "inf", 3) == 0 || strncmp(s + i, "nan", 3) == 0)) return true;
    if (i >= n || !isdigit((unsigned char)s[i])) return false;
    for (; i < n; i++)
        if (!strchr("0123456789abcdefABCDEFxXoOTtZz:._+- ", s[i])) return false;
    return true;
}

static int bare_value(toml_reader *r, cJSON **out)
{
    size_t n = strcspn(r->p, ",]}# \t\r\n");
    /* "1979-05-27 07:32:00": a date and a time joined by a space */
    if (n == 10 && r->p[4] == '-' && r->p[10] == ' ' && isdigit((unsigned char)r->p[11]))
        n = 11 + strcspn(r->p + 11, ",]}# \t\r\n");
    if (n == 4 && strncmp(r->p, "true", 4) == 0)
        *out = cJSON_CreateTrue();
    else if (n == 5 && strncmp(r->p, "false", 5) == 0)
        *out = cJSON_CreateFalse();
    else if (n > 0 && number_like(r->p, n)) {
        char *text = kp_xstrndup(r->p, n);
        *out = cJSON_CreateRaw(text);
        free(text);
    } else
        return fail(r, "expected a value");
    r->p += n;
    return 0;
}

static int value(toml_reader *r, cJSON **out, int depth)
{
    if (depth > TOML_MAX_DEPTH) return fail(r, "values nested too deeply");
    if (*r->p == '[') return array_value(r, out, depth);
    if (*r->p == '{') return inline_table(r, out, depth);
    if (*r->p != '"' && *r->p != '\'') return bare_value(r, out);
    kp_buf b = KP_BUF_INIT(KP_UD_BUF_MAX);
    int err = string_value(r, &b);
    if (err == 0) *out = cJSON_CreateString(kp_buf_cstr(&b));
    kp_buf_free(&b);
    return err;
}

/* The table `name` under `t`, made when missing; the last element when it
 * is an array of tables. NULL when `name` holds a plain value. */
static cJSON *sub_table(cJSON *t, const char *name)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(t, name);
    if (!c) return cJSON_AddObjectToObject(t, name);
    if (cJSON_IsArray(c)) {
        cJSON *last = c->child ? c->child->prev : NULL;
        return cJSON_IsObject(last) ? last : NULL;
    }
    return cJSON_IsObject(c) ? c : NULL;
}

/* `key` (count segments) = v under `table`; takes v. */
static int insert(toml_reader *r, cJSON *table, const kp_buf *key, int count, cJSON *v)
{
    const char *seg = key->data;
    for (int i = 0; i < count - 1 && table; i++, seg += strlen(seg) + 1)
        table = sub_table(table, seg);
    if (!table || cJSON_GetObjectItemCaseSensitive(table, seg)) {
        cJSON_Delete(v);
        return fail(r, "a key is defined twice");
    }
    cJSON_AddItemToObject(table, seg, v);
    return 0;
}

/* "[a.b]" or "[[a.b]]": the table later keys go into. */
static int header(toml_reader *r, cJSON *root, cJSON **current)
{
    bool array = r->p[1] == '[';
    r->p += array ? 2 : 1;
    kp_buf key = KP_BUF_INIT(KP_UD_BUF_MAX);
    int count = 0, err = dotted_key(r, &key, &count);
    if (err == 0 && (r->p[0] != ']' || (array && r->p[1] != ']')))
        err = fail(r, "expected ']' after a table name");
    cJSON *t = root;
    const char *seg = key.data;
    for (int i = 0; err == 0 && i < count - 1 && t; i++, seg += strlen(seg) + 1)
        t = sub_table(t, seg);
    if (err == 0 && t && array) {
        cJSON *a = cJSON_GetObjectItemCaseSensitive(t, seg);
        if (!a) a = cJSON_AddArrayToObject(t, seg);
        t = NULL;
        if (cJSON_IsArray(a)) {
            t = cJSON_CreateObject();
            cJSON_AddItemToArray(a, t);
        }
    } else if (err == 0 && t) {
        t = sub_table(t, seg);
    }
    if (err == 0 && !t) err = fail(r, "a table name is already a value");
    kp_buf_free(&key);
    if (err < 0) return err;
    r->p += array ? 2 : 1;
    *current = t;
    return end_of_line(r);
}

static int statement(toml_reader *r, cJSON *root, cJSON **current)
{
    if (*r->p == '[') return header(r, root, current);
    kp_buf key = KP_BUF_INIT(KP_UD_BUF_MAX);
    int count = 0;
    cJSON *v = NULL;
    int err = dotted_key(r, &key, &count);
    if (err == 0 && *r->p != '=') err = fail(r, "expected '=' after a key");
    if (err == 0) {
        r->p++;
        skip_blanks(r);
        err = value(r, &v, 0);
    }
    if (err == 0) err = insert(r, *current, &key, count, v);
    kp_buf_free(&key);
    return err ? err : end_of_line(r);
}

int kp_ud_toml_parse(const char *text, cJSON **out)
{
    toml_reader r = {text, 1};
    cJSON *root = cJSON_CreateObject(), *current = root;
    int err = 0;
    for (skip_space(&r); err == 0 && *r.p; skip_space(&r))
        err = statement(&r, root, &current);
    if (err < 0) {
        cJSON_Delete(root);
        return err;
    }
    *out = root;
    return 0;
}

/* ------------------------------------------------------------------ writer */

static bool bare_key(const char *k)
{
    if (!*k) return false;
    for (; *k; k++)
        if (!isalnum((unsigned char)*k) && *k != '_' && *k != '-') return false;
    return true;
}

static bool literal_ok(const char *s)
{
    for (; *s; s++)
        if (*s == '\'' || (unsigned char)*s < 0x20 || *s == 0x7f) return false;
    return true;
}

static int write_string(kp_buf *out, const char *s)
{
    if (literal_ok(s)) return kp_buf_printf(out, "'%s'", s);
    int err = kp_buf_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; err == 0 && *p; p++) {
        static const char from[] = "\b\t\n\f\r\"\\", to[] = "btnfr\"\\";
        const char *at = strchr(from, (char)*p);
        if (at)
            err = kp_buf_printf(out, "\\%c", to[at - from]);
        else if (*p < 0x20 || *p == 0x7f)
            err = kp_buf_printf(out, "\\u%04x", *p);
        else
            err = kp_buf_putc(out, (char)*p);
    }
    return err ? err : kp_buf_putc(out, '"');
}

static int write_key(kp_buf *out, const char *k)
{
    return bare_key(k) ? kp_buf_puts(out, k) : write_string(out, k);
}

static int write_value(kp_buf *out, const cJSON *v)
{
    if (cJSON_IsString(v)) return write_string(out, v->valuestring);
    if (cJSON_IsBool(v)) return kp_buf_puts(out, cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsRaw(v)) return kp_buf_puts(out, v->valuestring);
    if (cJSON_IsNumber(v))
        return v->valuedouble == (double)(long long)v->valuedouble
                   ? kp_buf_printf(out, "%lld", (long long)v->valuedouble)
                   : kp_buf_printf(out, "%.17g", v->valuedouble);
    bool obj = cJSON_IsObject(v);
    int err = kp_buf_puts(out, obj ? "{" : "[");
    bool first = true;
    for (const cJSON *c = v->child; c && err == 0; c = c->next) {
        if (cJSON_IsNull(c)) continue;
        err = kp_buf_puts(out, first ? (obj ? " " : "") : ", ");
        first = false;
        if (err == 0 && obj) {
            err = write_key(out, c->string);
            if (err == 0) err = kp_buf_puts(out, " = ");
        }
        if (err == 0) err = write_value(out, c);
    }
    if (err == 0) err = kp_buf_puts(out, obj ? (first ? "}" : " }") : "]");
    return err;
}

static int write_table(kp_buf *out, const cJSON *t, kp_buf *path, bool *after_keys)
{
    int err = 0;
    for (const cJSON *c = t->child; c && err == 0; c = c->next) {
        if (cJSON_IsObject(c) || cJSON_IsNull(c)) continue;
        err = write_key(out, c->string);
        if (err == 0) err = kp_buf_puts(out, " = ");
        if (err == 0) err = write_value(out, c);
        if (err == 0) err = kp_buf_putc(out, '\n');
        *after_keys = true;
    }
    for (const cJSON *c = t->child; c && err == 0; c = c->next) {
        if (!cJSON_IsObject(c)) continue;
        size_t mark = path->len;
        if (path->len) err = kp_buf_putc(path, '.');
        if (err == 0) err = write_key(path, c->string);
        if (err == 0 && *after_keys) err = kp_buf_putc(out, '\n');
        if (err == 0) err = kp_buf_printf(out, "[%s]\n", kp_buf_cstr(path));
        *after_keys = false;
        if (err == 0) err = write_table(out, c, path, after_keys);
        path->len = mark;
        if (path->data) path->data[mark] = '\0';
    }
    return err;
}

int kp_ud_toml_write(kp_buf *out, const cJSON *root)
{
    kp_buf path = KP_BUF_INIT(KP_UD_BUF_MAX);
    bool after_keys = false;
    int err = write_table(out, root, &path, &after_keys);
    kp_buf_free(&path);
    return err;
}
