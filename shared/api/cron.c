/*
 * robfig/cron v3's standard parser (what Karpenter's budgets use), with the
 * position of the offending part added to each message, and its schedule
 * search for the next firing time, in UTC.
 */
#include "api/cron.h"
#include "api/duration.h"
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct bounds {
    unsigned min, max;
    const char *const *names; /* lower-case names for min, min+1, ...; or NULL */
} bounds;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const bounds field_bounds[5] = {
    {0, 59, NULL}, {0, 23, NULL}, {1, 31, NULL}, {1, 12, month_names}, {0, 6, dow_names},
};

typedef struct parser {
    const char *spec; /* the whole input, for messages */
    size_t pos;       /* where the part being parsed starts */
} parser;

static int fail(const parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const parser *p, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return kp_error_set(KP_EINVALID, "cron \"%s\": %s at position %zu", p->spec, why, p->pos);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Go's strconv.Atoi followed by robfig's "negative number" check. `s` has
 * `len` bytes (no NUL needed). */
static int parse_uint(const parser *p, const char *s, size_t len, unsigned long long *out)
{
    char text[64];
    snprintf(text, sizeof(text), "%.*s", (int)(len < 60 ? len : 60), s);
    size_t i = (len && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
    bool neg = len && s[0] == '-';
    if (i == len)
        return fail(p, "failed to parse int from %s: strconv.Atoi: parsing \"%s\": invalid syntax",
                    text, text);
    unsigned long long v = 0;
    bool range = false;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return fail(p,
                        "failed to parse int from %s: strconv.Atoi: parsing \"%s\": invalid syntax",
                        text, text);
        if (v > (unsigned long long)INT64_MAX / 10) range = true;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (range || v > (unsigned long long)INT64_MAX + neg)
        return fail(p,
                    "failed to parse int from %s: strconv.Atoi: parsing \"%s\": value out of range",
                    text, text);
    if (neg && v) return fail(p, "negative number (-%llu) not allowed: %s", v, text);
    *out = v;
    return 0;
}

static int parse_int_or_name(const parser *p, const char *s, size_t len, const bounds *b,
                             unsigned long long *out)
{
    for (size_t i = 0; b->names && b->names[i]; i++) {
        if (len == 3 && strncasecmp(s, b->names[i], 3) == 0) {
            *out = b->min + i;
            return 0;
        }
    }
    return parse_uint(p, s, len, out);
}

static uint64_t bits_between(unsigned long long lo, unsigned long long hi, unsigned long long step)
{
    uint64_t bits = 0;
    for (unsigned long long i = lo; i <= hi; i += step)
        bits |= UINT64_C(1) << i;
    return bits;
}

/* One list element: "*", "?", "N", "N-M", each with an optional "/step".
 * Checks run in robfig's order, so a doubly broken element gets its message. */
static int parse_range(const parser *p, const char *s, size_t len, const bounds *b, uint64_t *bits,
                       bool *any)
{
    char expr[64];
    snprintf(expr, sizeof(expr), "%.*s", (int)(len < 60 ? len : 60), s);
    const char *slash = memchr(s, '/', len);
    size_t rlen = slash ? (size_t)(slash - s) : len;
    const char *dash = memchr(s, '-', rlen);
    size_t lowlen = dash ? (size_t)(dash - s) : rlen;
    unsigned long long start, end, step = 1;
    bool star = lowlen == 1 && (s[0] == '*' || s[0] == '?');
    int err;
    if (star) {
        start = b->min, end = b->max;
    } else {
        if ((err = parse_int_or_name(p, s, lowlen, b, &start)) < 0) return err;
        end = start;
        if (dash) {
            const char *hi = dash + 1;
            size_t hilen = rlen - (size_t)(hi - s);
            if (memchr(hi, '-', hilen)) return fail(p, "too many hyphens: %s", expr);
            if ((err = parse_int_or_name(p, hi, hilen, b, &end)) < 0) return err;
        }
    }
    if (slash) {
        const char *st = slash + 1;
        size_t stlen = len - rlen - 1;
        if (memchr(st, '/', stlen)) return fail(p, "too many slashes: %s", expr);
        if ((err = parse_uint(p, st, stlen, &step)) < 0) return err;
        if (!dash) end = b->max; /* "N/step" means N-max/step */
        if (step > 1) star = false;
    }
    if (start < b->min)
        return fail(p, "beginning of range (%llu) below minimum (%u): %s", start, b->min, expr);
    if (end > b->max)
        return fail(p, "end of range (%llu) above maximum (%u): %s", end, b->max, expr);
    if (start > end)
        return fail(p, "beginning of range (%llu) beyond end of range (%llu): %s", start, end,
                    expr);
    if (step == 0) return fail(p, "step of range should be a positive number: %s", expr);
    *bits |= bits_between(start, end, step);
    *any = *any || star;
    return 0;
}

/* A comma-separated list; `p->pos` is where the field starts. */
static int parse_field(parser *p, const char *s, size_t len, const bounds *b, uint64_t *bits,
                       bool *any)
{
    size_t field_pos = p->pos;
    size_t i = 0;
    *bits = 0;
    *any = false;
    for (;;) {
        const char *comma = memchr(s + i, ',', len - i);
        size_t n = comma ? (size_t)(comma - (s + i)) : len - i;
        p->pos = field_pos + i;
        int err = parse_range(p, s + i, n, b, bits, any);
        if (err < 0) return err;
        if (!comma) break;
        i += n + 1;
    }
    p->pos = field_pos;
    return 0;
}

static void set_all(kp_cron *c, bool hours)
{
    c->dom = (uint32_t)bits_between(1, 31, 1);
    c->month = (uint16_t)bits_between(1, 12, 1);
    c->dow = (uint8_t)bits_between(0, 6, 1);
    c->dom_any = c->dow_any = true;
    if (hours) c->hour = (uint32_t)bits_between(0, 23, 1);
}

static int parse_descriptor(parser *p, const char *d, kp_cron *c)
{
    c->minute = 1; /* minute 0 */
    c->hour = 1;   /* hour 0 */
    if (strcmp(d, "@yearly") == 0 || strcmp(d, "@annually") == 0) {
        set_all(c, false);
        c->dom = 1u << 1, c->month = 1u << 1, c->dom_any = false;
    } else if (strcmp(d, "@monthly") == 0) {
        set_all(c, false);
        c->dom = 1u << 1, c->dom_any = false;
    } else if (strcmp(d, "@weekly") == 0) {
        set_all(c, false);
        c->dow = 1, c->dow_any = false;
    } else if (strcmp(d, "@daily") == 0 || strcmp(d, "@midnight") == 0) {
        set_all(c, false);
    } else if (strcmp(d, "@hourly") == 0) {
        set_all(c, true);
    } else if (strncmp(d, "@every ", 7) == 0) {
        kp_duration dur;
        if (kp_duration_parse(d + 7, &dur) < 0)
            return fail(p, "failed to parse duration %s: %s", d, kp_error_last());
        int64_t s = dur.ns / 1000000000;
        c->every_s = s < 1 ? 1 : s;
    } else {
        return fail(p, "unrecognized descriptor: %s", d);
    }
    return 0;
}

/* "TZ=name rest" or "CRON_TZ=name rest": keep the name (robfig loads it;
 * an empty name is UTC) and return where the rest starts. */
static int parse_tz(parser *p, const char *s, kp_cron *c, size_t *rest)
{
    const char *eq = strchr(s, '=');
    const char *sp = strchr(s, ' ');
    if (!sp) return fail(p, "missing schedule after time zone");
    size_t n = (size_t)(sp - (eq + 1));
    if (n >= sizeof(c->tz)) return fail(p, "provided bad location %.*s", 64, eq + 1);
    snprintf(c->tz, sizeof(c->tz), "%.*s", (int)n, n ? eq + 1 : "UTC");
    *rest = (size_t)(sp - s);
    return 0;
}

static int parse_fields(parser *p, const char *s, size_t base, kp_cron *c)
{
    size_t start[6] = {0}, len[6] = {0}, n = 0, i = 0;
    while (s[i]) {
        while (is_space(s[i]))
            i++;
        if (!s[i]) break;
        size_t b = i;
        while (s[i] && !is_space(s[i]))
            i++;
        if (n < 6) start[n] = b, len[n] = i - b;
        n++;
    }
    if (n != 5) {
        p->pos = base + (n > 5 ? start[5] : i);
        return fail(p, "expected exactly 5 fields, found %zu: [%s]", n, s);
    }
    uint64_t bits[5];
    bool any[5];
    for (size_t f = 0; f < 5; f++) {
        p->pos = base + start[f];
        int err = parse_field(p, s + start[f], len[f], &field_bounds[f], &bits[f], &any[f]);
        if (err < 0) return err;
    }
    c->minute = bits[0], c->hour = (uint32_t)bits[1], c->dom = (uint32_t)bits[2];
    c->month = (uint16_t)bits[3], c->dow = (uint8_t)bits[4];
    c->dom_any = any[2], c->dow_any = any[4];
    return 0;
}

int kp_cron_parse(const char *spec, kp_cron *out)
{
    parser p = {spec ? spec : "", 0};
    kp_cron c;
    memset(&c, 0, sizeof(c));
    if (!*p.spec) return fail(&p, "empty spec string");
    if (strlen(p.spec) >= 1024) return fail(&p, "schedule longer than 1023 bytes");
    char body[1024];
    size_t base = 0;
    int err = 0;
    if (strncmp(p.spec, "TZ=", 3) == 0 || strncmp(p.spec, "CRON_TZ=", 8) == 0) {
        /* robfig trims what follows the zone (strings.TrimSpace) */
        if ((err = parse_tz(&p, p.spec, &c, &base)) < 0) return err;
        while (is_space(p.spec[base]))
            base++;
    }
    size_t n = strlen(p.spec + base);
    while (base > 0 && n > 0 && is_space(p.spec[base + n - 1]))
        n--;
    memcpy(body, p.spec + base, n);
    body[n] = '\0';
    p.pos = base;
    err = body[0] == '@' ? parse_descriptor(&p, body, &c) : parse_fields(&p, body, base, &c);
    if (err < 0) return err;
    *out = c;
    return 0;
}

/* ---------------------------------------------------------------- search */

/* The proleptic Gregorian date of a day counted from 1970-01-01 (H. Hinnant). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static bool day_matches(const kp_cron *c, unsigned dom, unsigned dow)
{
    bool dom_ok = (c->dom >> dom) & 1u, dow_ok = (c->dow >> dow) & 1u;
    return (c->dom_any || c->dow_any) ? (dom_ok && dow_ok) : (dom_ok || dow_ok);
}

/* First set bit at or after `from` in `bits` below `limit`, or -1. */
static int first_from(uint64_t bits, int from, int limit)
{
    for (int i = from; i < limit; i++)
        if ((bits >> i) & 1u) return i;
    return -1;
}

bool kp_cron_next(const kp_cron *c, int64_t after, int64_t *next)
{
    if (c->every_s > 0) {
        *next = after + c->every_s;
        return true;
    }
    int64_t t = (floor_div(after, 60) + 1) * 60; /* fires only at second 0 */
    int64_t day = floor_div(t, 86400);
    int64_t y0, y;
    unsigned m, d;
    civil_from_days(day, &y0, &m, &d);
    int h0 = (int)(floor_div(t, 3600) - day * 24), min0 = (int)(floor_div(t, 60) % 60);
    for (bool first = true;; first = false, day++) {
        civil_from_days(day, &y, &m, &d);
        if (y > y0 + 5) return false;
        unsigned dow = (unsigned)((day % 7 + 11) % 7); /* 1970-01-01 was a Thursday */
        if (!((c->month >> m) & 1u) || !day_matches(c, d, dow)) continue;
        for (int h = first_from(c->hour, first ? h0 : 0, 24); h >= 0;
             h = first_from(c->hour, h + 1, 24)) {
            int mi = first_from(c->minute, (first && h == h0) ? min0 : 0, 60);
            if (mi >= 0) {
                *next = day * 86400 + h * 3600 + mi * 60;
                return true;
            }
        }
    }
}
