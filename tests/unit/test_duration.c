/*
 * Duration tests. The tables are Go's own (src/time/time_test.go:
 * parseDurationTests, parseDurationErrorTests, durationTests), with the
 * position each error must name, plus Karpenter's "Never".
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/duration.h"
#include "base/error.h"
#include "helpers/assert.h"

#define NS   INT64_C(1)
#define US   (1000 * NS)
#define MS   (1000 * US)
#define SEC  (1000 * MS)
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)

Test(duration_parse, go_parse_duration_table)
{
    static const struct {
        const char *in;
        int64_t want;
    } cases[] = {
        /* simple */
        {"0", 0},
        {"5s", 5 * SEC},
        {"30s", 30 * SEC},
        {"1478s", 1478 * SEC},
        /* sign */
        {"-5s", -5 * SEC},
        {"+5s", 5 * SEC},
        {"-0", 0},
        {"+0", 0},
        /* decimal */
        {"5.0s", 5 * SEC},
        {"5.6s", 5 * SEC + 600 * MS},
        {"5.s", 5 * SEC},
        {".5s", 500 * MS},
        {"1.0s", 1 * SEC},
        {"1.00s", 1 * SEC},
        {"1.004s", 1 * SEC + 4 * MS},
        {"1.0040s", 1 * SEC + 4 * MS},
        {"100.00100s", 100 * SEC + 1 * MS},
        /* different units */
        {"10ns", 10 * NS},
        {"11us", 11 * US},
        {"12\xc2\xb5s", 12 * US}, /* U+00B5 */
        {"12\xce\xbcs", 12 * US}, /* U+03BC */
        {"13ms", 13 * MS},
        {"14s", 14 * SEC},
        {"15m", 15 * MIN},
        {"16h", 16 * HOUR},
        /* composite durations */
        {"3h30m", 3 * HOUR + 30 * MIN},
        {"10.5s4m", 4 * MIN + 10 * SEC + 500 * MS},
        {"-2m3.4s", -(2 * MIN + 3 * SEC + 400 * MS)},
        {"1h2m3s4ms5us6ns", 1 * HOUR + 2 * MIN + 3 * SEC + 4 * MS + 5 * US + 6 * NS},
        {"39h9m14.425s", 39 * HOUR + 9 * MIN + 14 * SEC + 425 * MS},
        /* large value */
        {"52763797000ns", 52763797000 * NS},
        /* more than 9 digits after the decimal point */
        {"0.3333333333333333333h", 20 * MIN},
        /* 1<<53+1 cannot be stored precisely in a float64 */
        {"9007199254740993ns", (INT64_C(1) << 53) + 1},
        /* the int64 extremes */
        {"9223372036854775807ns", INT64_MAX},
        {"9223372036854775.807us", INT64_MAX},
        {"9223372036s854ms775us807ns", INT64_MAX},
        {"-9223372036854775808ns", INT64_MIN},
        {"-9223372036854775.808us", INT64_MIN},
        {"-9223372036s854ms775us808ns", INT64_MIN},
        {"-2562047h47m16.854775808s", INT64_MIN},
        /* huge string */
        {"0.100000000000000000000h", 6 * MIN},
        /* the first overflow check in leadingFraction */
        {"0.830103483285477580700h", 49 * MIN + 48 * SEC + 372539827 * NS},
        /* Karpenter's usual values */
        {"720h", 720 * HOUR},
        {"1.5h", 90 * MIN},
        {"1h30m", 90 * MIN},
        {"300ms", 300 * MS},
        {"-2m", -2 * MIN},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_duration d = {.ns = 42, .never = true};
        int err = kp_duration_parse(cases[i].in, &d);
        cr_expect_eq(err, 0, "%s: %s", cases[i].in, kp_error_last());
        cr_expect_eq(d.ns, cases[i].want, "%s: %lld ns, want %lld", cases[i].in, (long long)d.ns,
                     (long long)cases[i].want);
        cr_expect_not(d.never, "%s: never set", cases[i].in);
    }
}

Test(duration_parse, go_error_table_with_positions)
{
    static const struct {
        const char *in;
        int code;
        const char *message;
    } cases[] = {
        /* invalid */
        {"", KP_EINVALID, "time: invalid duration \"\": unexpected end of input at position 0"},
        {"3", KP_EINVALID,
         "time: missing unit in duration \"3\": unexpected end of input at position 1"},
        {"-", KP_EINVALID, "time: invalid duration \"-\": unexpected end of input at position 1"},
        {"s", KP_EINVALID, "time: invalid duration \"s\": unexpected character 's' at position 0"},
        {".", KP_EINVALID, "time: invalid duration \".\": unexpected end of input at position 1"},
        {"-.", KP_EINVALID, "time: invalid duration \"-.\": unexpected end of input at position 2"},
        {".s", KP_EINVALID,
         "time: invalid duration \".s\": unexpected character 's' at position 1"},
        {"+.s", KP_EINVALID,
         "time: invalid duration \"+.s\": unexpected character 's' at position 2"},
        {"1d", KP_EINVALID, "time: unknown unit \"d\" in duration \"1d\" at position 1"},
        {"\x85\x85", KP_EINVALID,
         "time: invalid duration \"\\x85\\x85\": unexpected character '\\x85' at position 0"},
        {"\xff"
         "ff",
         KP_EINVALID,
         "time: invalid duration \"\\xffff\": unexpected character '\\xff' at position 0"},
        {"hello \xff"
         "ff world",
         KP_EINVALID,
         "time: invalid duration \"hello \\xffff world\": unexpected character 'h' at "
         "position 0"},
        {"\xef\xbf\xbd", KP_EINVALID,
         "time: invalid duration \"\\xef\\xbf\\xbd\": unexpected character '\\xef' at "
         "position 0"},
        {"\xef\xbf\xbd hello \xef\xbf\xbd world", KP_EINVALID,
         "time: invalid duration \"\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world\": unexpected "
         "character '\\xef' at position 0"},
        /* overflow */
        {"9223372036854775810ns", KP_EOVERFLOW,
         "time: invalid duration \"9223372036854775810ns\": out of range at position 0"},
        {"9223372036854775808ns", KP_EOVERFLOW,
         "time: invalid duration \"9223372036854775808ns\": out of range at position 0"},
        {"-9223372036854775809ns", KP_EOVERFLOW,
         "time: invalid duration \"-9223372036854775809ns\": out of range at position 1"},
        {"9223372036854776us", KP_EOVERFLOW,
         "time: invalid duration \"9223372036854776us\": out of range at position 0"},
        {"3000000h", KP_EOVERFLOW,
         "time: invalid duration \"3000000h\": out of range at position 0"},
        {"9223372036854775.808us", KP_EOVERFLOW,
         "time: invalid duration \"9223372036854775.808us\": out of range at position 0"},
        {"9223372036854ms775us808ns", KP_EOVERFLOW,
         "time: invalid duration \"9223372036854ms775us808ns\": out of range at position 20"},
        /* 2^64 must not wrap to 0 while accumulating digits. */
        {"18446744073709551616ns", KP_EOVERFLOW,
         "time: invalid duration \"18446744073709551616ns\": out of range at position 0"},
        /* Our own: where the position points. */
        {"1.2.3s", KP_EINVALID,
         "time: missing unit in duration \"1.2.3s\": unexpected character '.' at position 3"},
        {" 1h", KP_EINVALID,
         "time: invalid duration \" 1h\": unexpected character ' ' at position 0"},
        {"1h ", KP_EINVALID, "time: unknown unit \"h \" in duration \"1h \" at position 1"},
        {"1h30x", KP_EINVALID, "time: unknown unit \"x\" in duration \"1h30x\" at position 4"},
        {"1\xc2\xb5", KP_EINVALID,
         "time: unknown unit \"\\xc2\\xb5\" in duration \"1\\xc2\\xb5\" at position 1"},
        {"Never", KP_EINVALID,
         "time: invalid duration \"Never\": unexpected character 'N' at position 0"},
        {"1h-1m", KP_EINVALID, "time: unknown unit \"h-\" in duration \"1h-1m\" at position 1"},
        {"--1s", KP_EINVALID,
         "time: invalid duration \"--1s\": unexpected character '-' at position 1"},
        /* A later syntax error wins over the final range check, as in Go. */
        {"9223372036854775808nsx", KP_EINVALID,
         "time: unknown unit \"nsx\" in duration \"9223372036854775808nsx\" at position 19"},
        {"9223372036854775808ns1", KP_EINVALID,
         "time: missing unit in duration \"9223372036854775808ns1\": unexpected end of input "
         "at position 22"},
        /* Go's running total wraps to 0 here and accepts it; we refuse. */
        {"9223372036854775808ns9223372036854775808ns", KP_EOVERFLOW,
         "time: invalid duration \"9223372036854775808ns9223372036854775808ns\": out of range "
         "at position 21"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_duration d = {.ns = 42, .never = true};
        cr_expect_eq(kp_duration_parse(cases[i].in, &d), cases[i].code, "%s: %s", cases[i].in,
                     kp_error_last());
        cr_expect_str_eq(kp_error_last(), cases[i].message, "%s", cases[i].in);
        cr_expect(d.ns == 42 && d.never, "%s: output written on error", cases[i].in);
    }
    cr_expect_eq(kp_duration_parse(NULL, &(kp_duration){0}), KP_EINVALID);
}

Test(duration_parse, long_input_is_cut_in_the_message)
{
    char in[300];
    kp_duration d;

    memset(in, '1', sizeof(in) - 1);
    in[sizeof(in) - 1] = '\0';
    in[200] = '.';
    in[201] = '.';
    cr_assert_eq(kp_duration_parse(in, &d), KP_EOVERFLOW);
    cr_expect(strstr(kp_error_last(), "...\": out of range at position 0"), "%s", kp_error_last());
}

Test(duration_parse, never)
{
    kp_duration d = {.ns = 42, .never = false};
    char buf[KP_DURATION_STRLEN];

    KP_ASSERT_OK(kp_duration_parse_nillable("Never", &d));
    cr_expect(d.never);
    cr_expect_str_eq(kp_duration_format(d, buf, sizeof(buf)), "Never");
    KP_ASSERT_OK(kp_duration_parse_nillable("720h", &d));
    cr_expect_not(d.never);
    cr_expect_eq(d.ns, 720 * HOUR);
    /* Exact case only, as Karpenter compares the string. */
    cr_expect_eq(kp_duration_parse_nillable("never", &d), KP_EINVALID);
    cr_expect_eq(kp_duration_parse_nillable("NEVER", &d), KP_EINVALID);
    cr_expect_eq(kp_duration_parse_nillable("Never ", &d), KP_EINVALID);
    cr_expect_eq(kp_duration_parse_nillable(NULL, &d), KP_EINVALID);
    cr_expect_eq(d.ns, 720 * HOUR, "output written on error");
}

/* Go's durationTests, each also negated, plus the brief's examples. */
Test(duration_format, go_string_table)
{
    static const struct {
        const char *str;
        int64_t ns;
    } cases[] = {
        {"0s", 0},
        {"1ns", 1 * NS},
        {"1.1\xc2\xb5s", 1100 * NS},
        {"2.2ms", 2200 * US},
        {"3.3s", 3300 * MS},
        {"4m5s", 4 * MIN + 5 * SEC},
        {"4m5.001s", 4 * MIN + 5001 * MS},
        {"5h6m7.001s", 5 * HOUR + 6 * MIN + 7001 * MS},
        {"8m0.000000001s", 8 * MIN + 1 * NS},
        {"2562047h47m16.854775807s", INT64_MAX},
        {"-2562047h47m16.854775808s", INT64_MIN},
        {"1h30m0s", 90 * MIN},
        {"300ms", 300 * MS},
        {"1.5\xc2\xb5s", 1500 * NS},
        {"720h0m0s", 720 * HOUR},
        {"1m0s", 1 * MIN},
        {"999ns", 999 * NS},
        {"999.999999ms", SEC - 1},
    };
    char buf[KP_DURATION_STRLEN], want[KP_DURATION_STRLEN + 1];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_duration d = {.ns = cases[i].ns, .never = false};
        cr_expect_str_eq(kp_duration_format(d, buf, sizeof(buf)), cases[i].str, "%lld printed %s",
                         (long long)cases[i].ns, buf);
        if (cases[i].ns <= 0) continue;
        d.ns = -cases[i].ns;
        snprintf(want, sizeof(want), "-%s", cases[i].str);
        cr_expect_str_eq(kp_duration_format(d, buf, sizeof(buf)), want, "%lld printed %s",
                         (long long)d.ns, buf);
    }
}

/* TestParseDurationRoundTrip: String() parses back to the same value. */
Test(duration_format, round_trips_through_parse)
{
    static const int64_t values[] = {
        INT64_MAX,  INT64_MIN,       0,        1,          -1,          1100,
        2200 * US,  3300 * MS,       90 * MIN, 720 * HOUR, 8 * MIN + 1, 1234567890123,
        -987654321, 2147483647 * MS,
    };
    char buf[KP_DURATION_STRLEN];

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        kp_duration d = {.ns = values[i]}, back;
        kp_duration_format(d, buf, sizeof(buf));
        cr_assert_eq(kp_duration_parse(buf, &back), 0, "%s: %s", buf, kp_error_last());
        cr_expect_eq(back.ns, values[i], "%s parsed to %lld", buf, (long long)back.ns);
    }
}

Test(duration_format, short_buffer_truncates)
{
    char buf[4] = "zzz";
    kp_duration d = {.ns = 90 * MIN};

    cr_expect_str_eq(kp_duration_format(d, buf, sizeof(buf)), "1h3");
    cr_expect_null(kp_duration_format(d, NULL, 0));
}
