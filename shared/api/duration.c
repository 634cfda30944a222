/*
 * Go's time.ParseDuration and Duration.String, plus Karpenter's "Never".
 *
 * The parser follows Go's algorithm step by step, including its float64
 * arithmetic for fractions (so "0.3333333333333333333h" is exactly 20m, as in
 * Go) and its order of checks (so the same input fails the same way). Error
 * messages start with Go's own text and add where the problem is:
 *   time: invalid duration "1.2.3s": unexpected character '.' at position 3
 *   time: unknown unit "d" in duration "1d" at position 1
 * Syntax errors are KP_EINVALID, values beyond int64 nanoseconds KP_EOVERFLOW.
 */
#include "api/duration.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/quote.h"

#define MAG_LIMIT (UINT64_C(1) << 63) /* |INT64_MIN|, the largest magnitude */

typedef struct dscan {
    const char *s;
    size_t n;
    size_t pos;
} dscan;

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "unexpected character 'x' at position 3" or "unexpected end of input at position 3". */
static void describe_at(char *dst, size_t size, const dscan *sc, size_t pos)
{
    unsigned char c;

    if (pos >= sc->n) {
        snprintf(dst, size, "unexpected end of input at position %zu", pos);
        return;
    }
    c = (unsigned char)sc->s[pos];
    if (c < 0x20 || c >= 0x7f)
        snprintf(dst, size, "unexpected character '\\x%02x' at position %zu", c, pos);
    else if (c == '\'' || c == '\\')
        snprintf(dst, size, "unexpected character '\\%c' at position %zu", c, pos);
    else
        snprintf(dst, size, "unexpected character '%c' at position %zu", c, pos);
}

/* `what` is Go's message stem: "invalid duration" or "missing unit in duration". */
static int syntax_error(const dscan *sc, const char *what, size_t pos)
{
    char q[KP_QUOTE_SIZE], where[80];

    kp_quote_go(q, sizeof(q), sc->s, sc->n);
    describe_at(where, sizeof(where), sc, pos);
    return kp_error_set(KP_EINVALID, "time: %s %s: %s", what, q, where);
}

static int range_error(const dscan *sc, size_t pos)
{
    char q[KP_QUOTE_SIZE];

    kp_quote_go(q, sizeof(q), sc->s, sc->n);
    return kp_error_set(KP_EOVERFLOW, "time: invalid duration %s: out of range at position %zu", q,
                        pos);
}

static int unknown_unit(const dscan *sc, size_t start, size_t end)
{
    char q[KP_QUOTE_SIZE], u[KP_QUOTE_SIZE];

    kp_quote_go(q, sizeof(q), sc->s, sc->n);
    kp_quote_go(u, sizeof(u), sc->s + start, end - start);
    return kp_error_set(KP_EINVALID, "time: unknown unit %s in duration %s at position %zu", u, q,
                        start);
}

/* [0-9]* as Go's leadingInt: false once the value passes 2^63. */
static bool leading_int(dscan *sc, uint64_t *out)
{
    uint64_t x = 0;

    for (; sc->pos < sc->n && is_digit(sc->s[sc->pos]); sc->pos++) {
        if (x > MAG_LIMIT / 10) return false;
        x = x * 10 + (uint64_t)(sc->s[sc->pos] - '0');
        if (x > MAG_LIMIT) return false;
    }
    *out = x;
    return true;
}

/* [0-9]* after the point as Go's leadingFraction: digits past int64 precision
 * are consumed but no longer counted. */
static void leading_fraction(dscan *sc, uint64_t *frac, double *scale)
{
    uint64_t x = 0;
    bool overflow = false;

    *scale = 1;
    for (; sc->pos < sc->n && is_digit(sc->s[sc->pos]); sc->pos++) {
        uint64_t y;
        if (overflow) continue;
        if (x > (MAG_LIMIT - 1) / 10) {
            overflow = true;
            continue;
        }
        y = x * 10 + (uint64_t)(sc->s[sc->pos] - '0');
        if (y > MAG_LIMIT) {
            overflow = true;
            continue;
        }
        x = y;
        *scale *= 10;
    }
    *frac = x;
}

static uint64_t unit_ns(const char *u, size_t len)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek small letter mu */
        {"ms", 1000000},
        {"s", UINT64_C(1000000000)},
        {"m", UINT64_C(60000000000)},
        {"h", UINT64_C(3600000000000)},
    };

    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].name) == len && memcmp(units[i].name, u, len) == 0) return units[i].ns;
    return 0;
}

/* One "<number><unit>" element, its nanoseconds into *ns. */
static int parse_element(dscan *sc, uint64_t *ns)
{
    size_t start = sc->pos, unit_start;
    uint64_t v = 0, f = 0, unit;
    double scale = 1;
    bool pre, post = false;

    if (!(sc->s[sc->pos] == '.' || is_digit(sc->s[sc->pos])))
        return syntax_error(sc, "invalid duration", sc->pos);
    if (!leading_int(sc, &v)) return range_error(sc, start);
    pre = sc->pos > start;
    if (sc->pos < sc->n && sc->s[sc->pos] == '.') {
        size_t frac_start = ++sc->pos;
        leading_fraction(sc, &f, &scale);
        post = sc->pos > frac_start;
    }
    if (!pre && !post) return syntax_error(sc, "invalid duration", sc->pos);
    for (unit_start = sc->pos; sc->pos < sc->n; sc->pos++)
        if (sc->s[sc->pos] == '.' || is_digit(sc->s[sc->pos])) break;
    if (sc->pos == unit_start) return syntax_error(sc, "missing unit in duration", sc->pos);
    if (!(unit = unit_ns(sc->s + unit_start, sc->pos - unit_start)))
        return unknown_unit(sc, unit_start, sc->pos);
    if (v > MAG_LIMIT / unit) return range_error(sc, start);
    v *= unit;
    /* float64 keeps hour fractions nanosecond-accurate; the product is below
     * 3.6e12, so the conversion cannot overflow. */
    if (f > 0 && (v += (uint64_t)((double)f * ((double)unit / scale))) > MAG_LIMIT)
        return range_error(sc, start);
    *ns = v;
    return 0;
}

int kp_duration_parse(const char *text, kp_duration *out)
{
    dscan sc = {text, 0, 0};
    uint64_t total = 0;
    size_t over_at = SIZE_MAX; /* the element that took the total past INT64_MAX */
    bool neg = false;
    int err;

    if (!text) return kp_error_set(KP_EINVALID, "time: invalid duration: no input");
    sc.n = strlen(text);
    if (sc.n > 0 && (text[0] == '-' || text[0] == '+')) {
        neg = text[0] == '-';
        sc.pos = 1;
    }
    if (sc.n - sc.pos == 1 && text[sc.pos] == '0') {
        out->ns = 0;
        out->never = false;
        return 0;
    }
    if (sc.pos == sc.n) return syntax_error(&sc, "invalid duration", sc.pos);
    while (sc.pos < sc.n) {
        size_t start = sc.pos;
        uint64_t ns = 0;
        if ((err = parse_element(&sc, &ns)) < 0) return err;
        /* Go's running total may wrap past 2^64 on "2^63ns" twice; refuse it. */
        if (__builtin_add_overflow(total, ns, &total) || total > MAG_LIMIT)
            return range_error(&sc, start);
        if (total > INT64_MAX && over_at == SIZE_MAX) over_at = start;
    }
    /* Like Go, a positive total past INT64_MAX is refused only after the whole
     * string parsed, so a later syntax error wins. */
    if (!neg && total > INT64_MAX) return range_error(&sc, over_at);
    out->ns = !neg ? (int64_t)total : total == MAG_LIMIT ? INT64_MIN : -(int64_t)total;
    out->never = false;
    return 0;
}

int kp_duration_parse_nillable(const char *text, kp_duration *out)
{
    if (text && strcmp(text, "Never") == 0) {
        out->ns = 0;
        out->never = true;
        return 0;
    }
    return kp_duration_parse(text, out);
}

/* Go's fmtFrac: v's last prec digits as ".ddd" without trailing zeros, written
 * backwards ending at buf[w]; returns the new start and leaves v / 10^prec. */
static size_t fmt_frac(char *buf, size_t w, uint64_t *v, int prec)
{
    bool print = false;

    for (int i = 0; i < prec; i++) {
        uint64_t digit = *v % 10;
        print = print || digit != 0;
        if (print) buf[--w] = (char)('0' + digit);
        *v /= 10;
    }
    if (print) buf[--w] = '.';
    return w;
}

static size_t fmt_int(char *buf, size_t w, uint64_t v)
{
    do {
        buf[--w] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    return w;
}

/* Below one second: the largest of ns, µs, ms that keeps a non-zero integer part. */
static size_t fmt_small(char *buf, size_t w, uint64_t u)
{
    int prec = 0;

    buf[--w] = 's';
    if (u < 1000) {
        buf[--w] = 'n';
    } else if (u < 1000000) {
        prec = 3;
        buf[--w] = '\xb5';
        buf[--w] = '\xc2';
    } else {
        prec = 6;
        buf[--w] = 'm';
    }
    w = fmt_frac(buf, w, &u, prec);
    return fmt_int(buf, w, u);
}

/* One second or more: [<h>h][<m>m]<s>[.<frac>]s, hours being the largest unit. */
static size_t fmt_large(char *buf, size_t w, uint64_t u)
{
    buf[--w] = 's';
    w = fmt_frac(buf, w, &u, 9);
    w = fmt_int(buf, w, u % 60);
    u /= 60;
    if (u > 0) {
        buf[--w] = 'm';
        w = fmt_int(buf, w, u % 60);
        u /= 60;
        if (u > 0) {
            buf[--w] = 'h';
            w = fmt_int(buf, w, u);
        }
    }
    return w;
}

char *kp_duration_format(kp_duration d, char *buf, size_t size)
{
    char tmp[KP_DURATION_STRLEN];
    size_t w = sizeof(tmp) - 1;
    uint64_t u = d.ns < 0 ? 0 - (uint64_t)d.ns : (uint64_t)d.ns;

    tmp[w] = '\0';
    if (d.never) {
        if (buf && size) snprintf(buf, size, "Never");
        return buf;
    }
    if (u == 0) {
        tmp[--w] = 's';
        tmp[--w] = '0';
    } else {
        w = u < UINT64_C(1000000000) ? fmt_small(tmp, w, u) : fmt_large(tmp, w, u);
        if (d.ns < 0) tmp[--w] = '-';
    }
    if (buf && size) snprintf(buf, size, "%s", tmp + w);
    return buf;
}
