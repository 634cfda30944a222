/*
 * Kubernetes resource.Quantity on signed 128-bit milli-units (the int64
 * `milli` every caller reads is that value, saturated).
 *
 * Parsing accepts exactly the strings Kubernetes' ParseQuantity accepts: an
 * optional sign, digits with an optional fraction (either side of the point may
 * be empty), then one suffix. That includes some surprising spellings Kubernetes
 * takes as zero ("+", "-", ".", "e3", "Ki") and the two it refuses because its
 * slow path finds no digit ("Pi", "Ei" and exponents below -9 with no digits).
 * Errors name the first position from which no valid quantity can continue.
 *
 * The value is computed exactly: the significant digits are kept as a decimal
 * digit array (binary suffixes multiply it by 1024 per step), then rounded up
 * in magnitude to a whole milli-unit, as Kubernetes' MilliValue() does.
 * BinarySI values are capped at 2^63-1 units as Kubernetes caps them; others
 * saturate at ±(2^127-1) milli-units. Nothing here allocates except a digit
 * array for inputs of more than ~40 digits.
 */
#include "api/quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/quote.h"
#include "base/xalloc.h"

/* Exponents Kubernetes accepts after 'e'/'E': the magnitude of an int32 scale. */
#define EXPONENT_MAX 2147483647LL

__extension__ typedef unsigned __int128 u128;

#define MILLI128_MAX ((kp_milli128)(((u128)1 << 127) - 1))
/* Kubernetes' cap for BinarySI values: 2^63-1 whole units. */
#define BINARY_CAP ((kp_milli128)INT64_MAX * 1000)

/* The scanned pieces of one quantity string. */
typedef struct qscan {
    const char *s;
    size_t n;
    size_t pos;
    bool neg;
    size_t num_start; /* after the sign */
    size_t int_end;   /* [num_start, int_end) are the integer digits */
    size_t frac_start, frac_end;
    enum kp_quantity_format format;
    int64_t exp10; /* power of ten the suffix contributes */
    int exp2;      /* power of two a binary suffix contributes */
} qscan;

/* Significant digits, least significant first. */
typedef struct digits {
    uint8_t *d;
    size_t len;
    uint8_t *heap; /* set when the inline array was too small */
    uint8_t inline_d[64];
} digits;

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static void describe_char(char *dst, size_t size, char ch)
{
    unsigned char c = (unsigned char)ch;
    if (c < 0x20 || c >= 0x7f)
        snprintf(dst, size, "'\\x%02x'", c);
    else if (c == '\'' || c == '\\')
        snprintf(dst, size, "'\\%c'", c);
    else
        snprintf(dst, size, "'%c'", c);
}

static int fail_at(const qscan *sc, size_t pos)
{
    char q[KP_QUOTE_SIZE], c[8];

    kp_quote_go(q, sizeof(q), sc->s, strlen(sc->s));
    if (pos >= sc->n)
        return kp_error_set(KP_EINVALID, "quantity %s: unexpected end of input at position %zu", q,
                            pos);
    describe_char(c, sizeof(c), sc->s[pos]);
    return kp_error_set(KP_EINVALID, "quantity %s: unexpected character %s at position %zu", q, c,
                        pos);
}

static int fail_detail(int code, const qscan *sc, const char *what, size_t pos)
{
    char q[KP_QUOTE_SIZE];

    kp_quote_go(q, sizeof(q), sc->s, strlen(sc->s));
    return kp_error_set(code, "quantity %s: %s at position %zu", q, what, pos);
}

static void scan_number(qscan *sc)
{
    if (sc->s[0] == '+' || sc->s[0] == '-') {
        sc->neg = sc->s[0] == '-';
        sc->pos = 1;
    }
    sc->num_start = sc->pos;
    while (sc->pos < sc->n && is_digit(sc->s[sc->pos]))
        sc->pos++;
    sc->int_end = sc->frac_start = sc->frac_end = sc->pos;
    if (sc->pos < sc->n && sc->s[sc->pos] == '.') {
        sc->frac_start = ++sc->pos;
        while (sc->pos < sc->n && is_digit(sc->s[sc->pos]))
            sc->pos++;
        sc->frac_end = sc->pos;
    }
}

static int expect_end(const qscan *sc)
{
    return sc->pos == sc->n ? 0 : fail_at(sc, sc->pos);
}

/* After 'e' or 'E': [+-]?[0-9]+ to the end, within the int32 scale range. */
static int scan_exponent(qscan *sc)
{
    size_t start = sc->pos;
    bool neg = false;
    int64_t v = 0;

    sc->format = KP_QUANTITY_DECIMAL_EXP;
    if (sc->pos < sc->n && (sc->s[sc->pos] == '+' || sc->s[sc->pos] == '-'))
        neg = sc->s[sc->pos++] == '-';
    if (sc->pos >= sc->n || !is_digit(sc->s[sc->pos])) return fail_at(sc, sc->pos);
    for (; sc->pos < sc->n && is_digit(sc->s[sc->pos]); sc->pos++) {
        v = v * 10 + (sc->s[sc->pos] - '0');
        if (v > EXPONENT_MAX) return fail_detail(KP_EINVALID, sc, "exponent out of range", start);
    }
    sc->exp10 = neg ? -v : v;
    return expect_end(sc);
}

/* 'M', 'G', 'T', 'P': a decimal suffix alone, a binary one when 'i' follows. */
static int scan_si_or_binary(qscan *sc, int64_t exp10, int exp2)
{
    if (sc->pos == sc->n) {
        sc->exp10 = exp10;
        return 0;
    }
    if (sc->s[sc->pos] != 'i') return fail_at(sc, sc->pos);
    sc->pos++;
    sc->format = KP_QUANTITY_BINARY_SI;
    sc->exp2 = exp2;
    return expect_end(sc);
}

static int scan_single(qscan *sc, int64_t exp10)
{
    sc->exp10 = exp10;
    return expect_end(sc);
}

static int scan_suffix(qscan *sc)
{
    sc->format = KP_QUANTITY_DECIMAL_SI;
    if (sc->pos == sc->n) return 0;
    switch (sc->s[sc->pos++]) {
    case 'n':
        return scan_single(sc, -9);
    case 'u':
        return scan_single(sc, -6);
    case 'm':
        return scan_single(sc, -3);
    case 'k':
        return scan_single(sc, 3);
    case 'K':
        if (sc->pos == sc->n || sc->s[sc->pos] != 'i') return fail_at(sc, sc->pos);
        sc->pos++;
        sc->format = KP_QUANTITY_BINARY_SI;
        sc->exp2 = 10;
        return expect_end(sc);
    case 'M':
        return scan_si_or_binary(sc, 6, 20);
    case 'G':
        return scan_si_or_binary(sc, 9, 30);
    case 'T':
        return scan_si_or_binary(sc, 12, 40);
    case 'P':
        return scan_si_or_binary(sc, 15, 50);
    case 'E':
        if (sc->pos == sc->n || sc->s[sc->pos] == 'i') return scan_si_or_binary(sc, 18, 60);
        return scan_exponent(sc);
    case 'e':
        return scan_exponent(sc);
    default:
        return fail_at(sc, sc->pos - 1);
    }
}

/* Kubernetes reads a digit-less number as zero on its fast path but fails on
 * its slow path, which "Pi", "Ei" and exponents below -9 take. */
static int check_digitless(const qscan *sc)
{
    bool has_digit = sc->int_end > sc->num_start || sc->frac_end > sc->frac_start;
    bool slow = sc->exp2 >= 50 || (sc->format == KP_QUANTITY_DECIMAL_EXP && sc->exp10 < -9);

    if (has_digit || !slow) return 0;
    return fail_detail(KP_EINVALID, sc, "a digit is required before this suffix", sc->num_start);
}

static void digits_init(digits *dg, const qscan *sc)
{
    /* 2^60 adds at most 19 digits when a binary suffix multiplies in. */
    size_t cap = (sc->int_end - sc->num_start) + (sc->frac_end - sc->frac_start) + 20;
    size_t k = 0;

    dg->heap = NULL;
    dg->d = dg->inline_d;
    if (cap > sizeof(dg->inline_d)) dg->d = dg->heap = kp_xmalloc(cap);
    for (size_t i = sc->frac_end; i > sc->frac_start; i--)
        dg->d[k++] = (uint8_t)(sc->s[i - 1] - '0');
    for (size_t i = sc->int_end; i > sc->num_start; i--)
        dg->d[k++] = (uint8_t)(sc->s[i - 1] - '0');
    while (k > 0 && dg->d[k - 1] == 0)
        k--;
    dg->len = k;
}

static void digits_mul(digits *dg, unsigned factor)
{
    unsigned carry = 0;

    for (size_t i = 0; i < dg->len; i++) {
        unsigned v = dg->d[i] * factor + carry;
        dg->d[i] = (uint8_t)(v % 10);
        carry = v / 10;
    }
    for (; carry; carry /= 10)
        dg->d[dg->len++] = (uint8_t)(carry % 10);
}

/* ceil(digits * 10^e) into *out; false when it exceeds `max`. */
static bool digits_ceil(const digits *dg, int64_t e, u128 max, u128 *out)
{
    u128 acc = 0;
    bool fraction = false;

    if (dg->len == 0) {
        *out = 0;
        return true;
    }
    /* The leading digit is non-zero, so a top exponent of 39 means >= 10^39 > 2^128. */
    if (e >= 39 || (int64_t)dg->len - 1 + e >= 39) return false;
    for (size_t i = dg->len; i-- > 0;) {
        if ((int64_t)i + e >= 0) {
            if (acc > (max - dg->d[i]) / 10) return false;
            acc = acc * 10 + dg->d[i];
        } else if (dg->d[i]) {
            fraction = true;
        }
    }
    for (int64_t i = 0; i < e; i++) {
        if (acc > max / 10) return false;
        acc *= 10;
    }
    if (fraction && acc == max) return false;
    *out = acc + fraction;
    return true;
}

static int64_t saturate64(kp_milli128 v)
{
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

kp_quantity kp_quantity_from_milli128(kp_milli128 milli, enum kp_quantity_format format)
{
    kp_quantity q = {saturate64(milli), format, milli};
    return q;
}

kp_milli128 kp_quantity_milli128(kp_quantity q)
{
    /* A {milli, format} literal leaves `exact` zero: only a saturated `milli` defers to it. */
    if ((q.milli == INT64_MAX || q.milli == INT64_MIN) && q.exact != 0) return q.exact;
    return q.milli;
}

static void evaluate(const qscan *sc, kp_quantity *out)
{
    digits dg;
    u128 milli, nano;
    int64_t e = sc->exp10 - (int64_t)(sc->frac_end - sc->frac_start);
    enum kp_quantity_format format = sc->format;

    digits_init(&dg, sc);
    for (int k = 0; k < sc->exp2; k += 10)
        digits_mul(&dg, 1024);
    if (!digits_ceil(&dg, e + 3, (u128)MILLI128_MAX, &milli))
        milli = (u128)MILLI128_MAX; /* past what we hold: the nearest value we do */
    if (format == KP_QUANTITY_BINARY_SI && milli > (u128)BINARY_CAP)
        milli = (u128)BINARY_CAP;
    /* Kubernetes keeps a binary suffix only for magnitudes of at least 1 once
     * rounded up to a nano-unit. */
    if (format == KP_QUANTITY_BINARY_SI && dg.len > 0 && digits_ceil(&dg, e + 9, (u128)MILLI128_MAX, &nano) &&
        nano < 1000000000)
        format = KP_QUANTITY_DECIMAL_SI;
    *out = kp_quantity_from_milli128(sc->neg ? -(kp_milli128)milli : (kp_milli128)milli, format);
    free(dg.heap);
}

int kp_quantity_parse(const char *text, kp_quantity *out)
{
    qscan sc = {0};
    int err;

    if (!text) return kp_error_set(KP_EINVALID, "quantity: no input");
    if (!*text) return kp_error_set(KP_EINVALID, "quantity \"\": empty string");
    sc.s = text;
    sc.n = strlen(text);
    scan_number(&sc);
    if ((err = scan_suffix(&sc)) < 0 || (err = check_digitless(&sc)) < 0) return err;
    evaluate(&sc, out);
    return 0;
}

kp_quantity kp_quantity_from_milli(int64_t milli, enum kp_quantity_format format)
{
    return kp_quantity_from_milli128(milli, format);
}

kp_quantity kp_quantity_from_int(int64_t units, enum kp_quantity_format format)
{
    return kp_quantity_from_milli128((kp_milli128)units * 1000, format);
}

/* Text of a 128-bit value for messages (into buf, which it returns). */
static char *i128_text(kp_milli128 v, char *buf, size_t size);

static int overflow(kp_milli128 a, const char *op, kp_milli128 b)
{
    char x[48], y[48];
    return kp_error_set(KP_EOVERFLOW, "quantity: %sm %s %s overflows 128-bit milli-units", i128_text(a, x, sizeof(x)),
                        op, i128_text(b, y, sizeof(y)));
}

static bool in_range(kp_milli128 v)
{
    return v <= MILLI128_MAX && v >= -MILLI128_MAX;
}

int kp_quantity_add(kp_quantity a, kp_quantity b, kp_quantity *out)
{
    kp_milli128 x = kp_quantity_milli128(a), y = kp_quantity_milli128(b), sum;

    if (__builtin_add_overflow(x, y, &sum) || !in_range(sum)) return overflow(x, "+", y);
    /* Kubernetes adopts the other operand's format when the receiver is zero. */
    *out = kp_quantity_from_milli128(sum, x == 0 ? b.format : a.format);
    return 0;
}

int kp_quantity_sub(kp_quantity a, kp_quantity b, kp_quantity *out)
{
    kp_milli128 x = kp_quantity_milli128(a), y = kp_quantity_milli128(b), diff;

    if (__builtin_sub_overflow(x, y, &diff) || !in_range(diff)) return overflow(x, "-", y);
    *out = kp_quantity_from_milli128(diff, x == 0 ? b.format : a.format);
    return 0;
}

int kp_quantity_mul(kp_quantity a, int64_t factor, kp_quantity *out)
{
    kp_milli128 x = kp_quantity_milli128(a), product;

    if (__builtin_mul_overflow(x, (kp_milli128)factor, &product) || !in_range(product))
        return overflow(x, "*", factor);
    *out = kp_quantity_from_milli128(product, a.format);
    return 0;
}

int kp_quantity_cmp(kp_quantity a, kp_quantity b)
{
    kp_milli128 x = kp_quantity_milli128(a), y = kp_quantity_milli128(b);
    return (x > y) - (x < y);
}

bool kp_quantity_is_zero(kp_quantity q)
{
    return kp_quantity_milli128(q) == 0;
}

static u128 magnitude(kp_milli128 v)
{
    return v < 0 ? (u128)0 - (u128)v : (u128)v;
}

int64_t kp_quantity_value(kp_quantity q)
{
    kp_milli128 v = kp_quantity_milli128(q);
    u128 mag = magnitude(v);
    kp_milli128 units = (kp_milli128)(mag / 1000 + (mag % 1000 != 0));
    return saturate64(v < 0 ? -units : units);
}

int64_t kp_quantity_milli_value(kp_quantity q)
{
    return q.milli;
}

/* Decimal digits of `v` into buf (at least 40 bytes). */
static const char *u128_text(u128 v, char *buf, size_t size)
{
    char tmp[48];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v && n < sizeof(tmp));
    size_t w = 0;
    while (n > 0 && w + 1 < size)
        buf[w++] = tmp[--n];
    buf[w] = '\0';
    return buf;
}

static char *i128_text(kp_milli128 v, char *buf, size_t size)
{
    if (size < 2) return buf;
    size_t start = 0;
    if (v < 0) buf[start++] = '-';
    u128_text(magnitude(v), buf + start, size - start);
    return buf;
}

/* Largest power of 1024 dividing the whole units, as "<n><Ki..Ei>". */
static void format_binary(char *out, const char *sign, u128 units)
{
    static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    char text[48];
    int times = 0;

    while (units >= 1024 && units % 1024 == 0 && times < 6) {
        units /= 1024;
        times++;
    }
    snprintf(out, KP_QUANTITY_STRLEN, "%s%s%s", sign, u128_text(units, text, sizeof(text)), suffix[times]);
}

/* Mantissa with no trailing zeros beyond what keeps the exponent a multiple
 * of 3; SI suffixes from n to E, an exponent past them (as Kubernetes). */
static void format_decimal(char *out, const char *sign, u128 milli, bool si)
{
    static const char *const suffix[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    char text[48];
    u128 m = milli;
    int exp = -3;

    while (m >= 10 && m % 10 == 0) {
        m /= 10;
        exp++;
    }
    /* Dropping a factor of ten never overflows, so restoring one or two cannot. */
    switch (exp % 3) {
    case 1:
    case -2:
        m *= 10;
        exp -= 1;
        break;
    case 2:
    case -1:
        m *= 100;
        exp -= 2;
        break;
    }
    u128_text(m, text, sizeof(text));
    if ((!si && exp != 0) || exp > 18)
        snprintf(out, KP_QUANTITY_STRLEN, "%s%se%d", sign, text, exp);
    else
        snprintf(out, KP_QUANTITY_STRLEN, "%s%s%s", sign, text, si ? suffix[(exp + 9) / 3] : "");
}

char *kp_quantity_format(kp_quantity q, char *buf, size_t size)
{
    char tmp[KP_QUANTITY_STRLEN];
    kp_milli128 v = kp_quantity_milli128(q);
    u128 mag = magnitude(v);
    const char *sign = v < 0 ? "-" : "";

    if (mag == 0)
        memcpy(tmp, "0", 2);
    else if (q.format == KP_QUANTITY_BINARY_SI && mag >= 1024000 && mag % 1000 == 0)
        format_binary(tmp, sign, mag / 1000);
    else
        /* Binary values below 1Ki or with a fraction print as DecimalSI;
         * an unknown format prints as DecimalExponent, as in Kubernetes. */
        format_decimal(tmp, sign, mag,
                       q.format == KP_QUANTITY_BINARY_SI || q.format == KP_QUANTITY_DECIMAL_SI);
    if (buf && size) snprintf(buf, size, "%s", tmp);
    return buf;
}
