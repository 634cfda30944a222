/*
 * Kubernetes resource.Quantity on signed 64-bit milli-units.
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
 * in magnitude to a whole milli-unit, as Kubernetes' MilliValue() does. Nothing
 * here allocates except a digit array for inputs of more than ~40 digits.
 */
#include "api/quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

/* At most this much of the input is echoed in an error message. */
enum { QUOTE_MAX_INPUT = 128, QUOTE_SIZE = QUOTE_MAX_INPUT * 4 + 8 };

/* Exponents Kubernetes accepts after 'e'/'E': the magnitude of an int32 scale. */
#define EXPONENT_MAX 2147483647LL

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

/* Quote the way Go's time package does: bytes outside printable ASCII as \xNN,
 * quote and backslash escaped, so any input is safe in a log line. */
static void quote(char *dst, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t w = 0, i = 0;

    dst[w++] = '"';
    for (; s[i] && i < QUOTE_MAX_INPUT && w + 8 < size; i++) {
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
    if (s[i]) {
        memcpy(dst + w, "...", 3);
        w += 3;
    }
    dst[w++] = '"';
    dst[w] = '\0';
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
    char q[QUOTE_SIZE], c[8];

    quote(q, sizeof(q), sc->s);
    if (pos >= sc->n)
        return kp_error_set(KP_EINVALID, "quantity %s: unexpected end of input at position %zu", q,
                            pos);
    describe_char(c, sizeof(c), sc->s[pos]);
    return kp_error_set(KP_EINVALID, "quantity %s: unexpected character %s at position %zu", q, c,
                        pos);
}

static int fail_detail(int code, const qscan *sc, const char *what, size_t pos)
{
    char q[QUOTE_SIZE];

    quote(q, sizeof(q), sc->s);
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

/* ceil(digits * 10^e) into *out; false when it exceeds INT64_MAX. */
static bool digits_ceil(const digits *dg, int64_t e, uint64_t *out)
{
    uint64_t acc = 0;
    bool fraction = false;

    if (dg->len == 0) {
        *out = 0;
        return true;
    }
    /* The leading digit is non-zero, so a top exponent of 19 means >= 10^19. */
    if (e >= 19 || (int64_t)dg->len - 1 + e >= 19) return false;
    for (size_t i = dg->len; i-- > 0;) {
        if ((int64_t)i + e >= 0)
            acc = acc * 10 + dg->d[i];
        else if (dg->d[i])
            fraction = true;
    }
    for (int64_t i = 0; i < e; i++)
        acc *= 10;
    acc += fraction;
    if (acc > INT64_MAX) return false;
    *out = acc;
    return true;
}

static int evaluate(const qscan *sc, kp_quantity *out)
{
    digits dg;
    uint64_t milli, nano;
    int64_t e = sc->exp10 - (int64_t)(sc->frac_end - sc->frac_start);
    enum kp_quantity_format format = sc->format;
    int err = 0;

    digits_init(&dg, sc);
    for (int k = 0; k < sc->exp2; k += 10)
        digits_mul(&dg, 1024);
    if (!digits_ceil(&dg, e + 3, &milli)) {
        err = fail_detail(KP_EOVERFLOW, sc,
                          "magnitude exceeds the int64 milli-unit range (9223372036854775807m)",
                          sc->num_start);
        goto done;
    }
    /* Kubernetes keeps a binary suffix only for magnitudes of at least 1 once
     * rounded up to a nano-unit. */
    if (format == KP_QUANTITY_BINARY_SI && dg.len > 0 && digits_ceil(&dg, e + 9, &nano) &&
        nano < 1000000000)
        format = KP_QUANTITY_DECIMAL_SI;
    out->milli = sc->neg ? -(int64_t)milli : (int64_t)milli;
    out->format = format;
done:
    free(dg.heap);
    return err;
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
    return evaluate(&sc, out);
}

kp_quantity kp_quantity_from_milli(int64_t milli, enum kp_quantity_format format)
{
    kp_quantity q = {milli, format};
    return q;
}

kp_quantity kp_quantity_from_int(int64_t units, enum kp_quantity_format format)
{
    kp_quantity q = {0, format};

    if (__builtin_mul_overflow(units, (int64_t)1000, &q.milli))
        q.milli = units < 0 ? INT64_MIN : INT64_MAX;
    return q;
}

int kp_quantity_add(kp_quantity a, kp_quantity b, kp_quantity *out)
{
    int64_t sum;

    if (__builtin_add_overflow(a.milli, b.milli, &sum))
        return kp_error_set(KP_EOVERFLOW,
                            "quantity: %" PRId64 "m + %" PRId64 "m overflows int64 milli-units",
                            a.milli, b.milli);
    /* Kubernetes adopts the other operand's format when the receiver is zero. */
    out->format = a.milli == 0 ? b.format : a.format;
    out->milli = sum;
    return 0;
}

int kp_quantity_sub(kp_quantity a, kp_quantity b, kp_quantity *out)
{
    int64_t diff;

    if (__builtin_sub_overflow(a.milli, b.milli, &diff))
        return kp_error_set(KP_EOVERFLOW,
                            "quantity: %" PRId64 "m - %" PRId64 "m overflows int64 milli-units",
                            a.milli, b.milli);
    out->format = a.milli == 0 ? b.format : a.format;
    out->milli = diff;
    return 0;
}

int kp_quantity_mul(kp_quantity a, int64_t factor, kp_quantity *out)
{
    int64_t product;

    if (__builtin_mul_overflow(a.milli, factor, &product))
        return kp_error_set(KP_EOVERFLOW,
                            "quantity: %" PRId64 "m * %" PRId64 " overflows int64 milli-units",
                            a.milli, factor);
    out->format = a.format;
    out->milli = product;
    return 0;
}

int kp_quantity_cmp(kp_quantity a, kp_quantity b)
{
    return (a.milli > b.milli) - (a.milli < b.milli);
}

bool kp_quantity_is_zero(kp_quantity q)
{
    return q.milli == 0;
}

static uint64_t magnitude(int64_t v)
{
    return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

int64_t kp_quantity_value(kp_quantity q)
{
    uint64_t mag = magnitude(q.milli);
    int64_t units = (int64_t)(mag / 1000 + (mag % 1000 != 0));
    return q.milli < 0 ? -units : units;
}

int64_t kp_quantity_milli_value(kp_quantity q)
{
    return q.milli;
}

/* Largest power of 1024 dividing the whole units, as "<n><Ki..Ei>". */
static void format_binary(char *out, const char *sign, uint64_t units)
{
    static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int times = 0;

    while (units >= 1024 && units % 1024 == 0 && times < 6) {
        units /= 1024;
        times++;
    }
    snprintf(out, KP_QUANTITY_STRLEN, "%s%" PRIu64 "%s", sign, units, suffix[times]);
}

/* Mantissa with no trailing zeros beyond what keeps the exponent a multiple of 3. */
static void format_decimal(char *out, const char *sign, uint64_t milli, bool si)
{
    static const char *const suffix[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    uint64_t m = milli;
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
    if (!si && exp != 0)
        snprintf(out, KP_QUANTITY_STRLEN, "%s%" PRIu64 "e%d", sign, m, exp);
    else
        snprintf(out, KP_QUANTITY_STRLEN, "%s%" PRIu64 "%s", sign, m,
                 si ? suffix[(exp + 9) / 3] : "");
}

char *kp_quantity_format(kp_quantity q, char *buf, size_t size)
{
    char tmp[KP_QUANTITY_STRLEN];
    uint64_t mag = magnitude(q.milli);
    const char *sign = q.milli < 0 ? "-" : "";

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
