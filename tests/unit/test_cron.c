/*
 * api/cron: robfig/cron v3's standard parser as Karpenter's disruption budgets
 * use it (fields, ranges, steps, lists, names, descriptors and their quirks),
 * its error messages with the offending position, and the next firing time.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "api/cron.h"
#include "base/error.h"

static uint64_t bits(const int *list, size_t n)
{
    uint64_t b = 0;
    for (size_t i = 0; i < n; i++)
        b |= UINT64_C(1) << list[i];
    return b;
}
#define BITS(...) bits((const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static uint64_t range_bits(int lo, int hi, int step)
{
    uint64_t b = 0;
    for (int i = lo; i <= hi; i += step)
        b |= UINT64_C(1) << i;
    return b;
}

static kp_cron parse_ok(const char *spec)
{
    kp_cron c;
    memset(&c, 0xaa, sizeof(c));
    cr_assert_eq(kp_cron_parse(spec, &c), 0, "%s: %s", spec, kp_error_last());
    return c;
}

Test(cron, every_minute)
{
    kp_cron c = parse_ok("* * * * *");
    cr_expect_eq(c.minute, range_bits(0, 59, 1));
    cr_expect_eq(c.hour, range_bits(0, 23, 1));
    cr_expect_eq(c.dom, range_bits(1, 31, 1));
    cr_expect_eq(c.month, range_bits(1, 12, 1));
    cr_expect_eq(c.dow, range_bits(0, 6, 1));
    cr_expect(c.dom_any && c.dow_any);
    cr_expect_eq(c.every_s, 0);
    cr_expect_str_eq(c.tz, "");
}

Test(cron, steps_ranges_lists_and_names)
{
    kp_cron c = parse_ok("*/15 1-10/3 5/10 JAN,jul mon-FRI");
    cr_expect_eq(c.minute, BITS(0, 15, 30, 45));
    cr_expect_eq(c.hour, BITS(1, 4, 7, 10));
    cr_expect_eq(c.dom, BITS(5, 15, 25));
    cr_expect_eq(c.month, BITS(1, 7));
    cr_expect_eq(c.dow, range_bits(1, 5, 1));
    cr_expect_not(c.dom_any);
    cr_expect_not(c.dow_any);
    c = parse_ok("0 22 * * sat,sun");
    cr_expect_eq(c.dow, BITS(0, 6));
    cr_expect_eq(c.minute, 1);
    cr_expect_eq(c.hour, BITS(22));
}

Test(cron, robfig_quirks)
{
    /* "?" is "*"; anything after "*-" is ignored; a leading '+' is accepted by Atoi. */
    kp_cron c = parse_ok("? ? ? ? ?");
    cr_expect(c.dom_any && c.dow_any);
    c = parse_ok("*-5 * * * *");
    cr_expect_eq(c.minute, range_bits(0, 59, 1));
    c = parse_ok("+5 * * * *");
    cr_expect_eq(c.minute, BITS(5));
    /* A step above 1 makes "*" a restriction; a step of 1 does not. */
    c = parse_ok("0 0 */2 * *");
    cr_expect_eq(c.dom, range_bits(1, 31, 2));
    cr_expect_not(c.dom_any);
    c = parse_ok("0 0 */1 * *");
    cr_expect(c.dom_any);
    /* "*" in a list keeps the field unrestricted. */
    c = parse_ok("0 0 *,5 * *");
    cr_expect(c.dom_any);
    /* Blanks of any kind and number between fields. */
    c = parse_ok("  0\t9  *\n*  1 ");
    cr_expect_eq(c.hour, BITS(9));
    cr_expect_eq(c.dow, BITS(1));
}

Test(cron, descriptors)
{
    static const struct {
        const char *spec;
        uint32_t hour;
        uint32_t dom;
        uint16_t month;
        uint8_t dow;
        bool dom_any, dow_any;
    } cases[] = {
        {"@yearly", 1, 1u << 1, 1u << 1, 0x7f, false, true},
        {"@annually", 1, 1u << 1, 1u << 1, 0x7f, false, true},
        {"@monthly", 1, 1u << 1, 0x1ffe, 0x7f, false, true},
        {"@weekly", 1, 0xfffffffe, 0x1ffe, 1, true, false},
        {"@daily", 1, 0xfffffffe, 0x1ffe, 0x7f, true, true},
        {"@midnight", 1, 0xfffffffe, 0x1ffe, 0x7f, true, true},
        {"@hourly", 0xffffff, 0xfffffffe, 0x1ffe, 0x7f, true, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_cron c = parse_ok(cases[i].spec);
        cr_expect_eq(c.minute, 1, "%s", cases[i].spec);
        cr_expect_eq(c.hour, cases[i].hour, "%s", cases[i].spec);
        cr_expect_eq(c.dom, cases[i].dom, "%s", cases[i].spec);
        cr_expect_eq(c.month, cases[i].month, "%s", cases[i].spec);
        cr_expect_eq(c.dow, cases[i].dow, "%s", cases[i].spec);
        cr_expect_eq(c.dom_any, cases[i].dom_any, "%s", cases[i].spec);
        cr_expect_eq(c.dow_any, cases[i].dow_any, "%s", cases[i].spec);
    }
    cr_expect_eq(parse_ok("@every 1h30m").every_s, 5400);
    cr_expect_eq(parse_ok("@every 500ms").every_s, 1, "robfig rounds up to one second");
    cr_expect_eq(parse_ok("@every 2.9s").every_s, 2, "and truncates to whole seconds");
}

Test(cron, time_zone_prefix_is_kept)
{
    kp_cron c = parse_ok("TZ=UTC 0 9 * * *");
    cr_expect_str_eq(c.tz, "UTC");
    cr_expect_eq(c.hour, BITS(9));
    c = parse_ok("CRON_TZ=Asia/Tokyo   @daily  ");
    cr_expect_str_eq(c.tz, "Asia/Tokyo");
    cr_expect(c.dom_any);
}

typedef struct bad_case {
    const char *spec, *message;
} bad_case;

static const bad_case bad_cases[] = {
    {"", "cron \"\": empty spec string at position 0"},
    {"* * * *", "expected exactly 5 fields, found 4: [* * * *] at position 7"},
    {"* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *] at position 10"},
    {"*", "expected exactly 5 fields, found 1"},
    {"0 25 * * *", "end of range (25) above maximum (23): 25 at position 2"},
    {"60 * * * *", "end of range (60) above maximum (59): 60 at position 0"},
    {"0 0 0 * *", "beginning of range (0) below minimum (1): 0 at position 4"},
    {"0 0 * 13 *", "end of range (13) above maximum (12): 13 at position 6"},
    {"0 0 * * 7", "end of range (7) above maximum (6): 7 at position 8"},
    {"5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1 at position 0"},
    {"*/0 * * * *", "step of range should be a positive number: */0 at position 0"},
    {"1-2-3 * * * *", "too many hyphens: 1-2-3 at position 0"},
    {"*/2/3 * * * *", "too many slashes: */2/3 at position 0"},
    {"a * * * *",
     "failed to parse int from a: strconv.Atoi: parsing \"a\": invalid syntax at position 0"},
    {"-1 * * * *", "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax"},
    {"0 0 1,,2 * *", "failed to parse int from :"},
    {"0 0 1,,2 * *", "at position 6"},
    {"1,2,99 * * * *", "end of range (99) above maximum (59): 99 at position 4"},
    {"0 0 * * MON-FRI,xyz",
     "failed to parse int from xyz: strconv.Atoi: parsing \"xyz\": invalid syntax at position 16"},
    {"0 0 * * monday", "failed to parse int from monday"},
    {"0 0 * * 99999999999999999999", "value out of range at position 8"},
    {"0 0 1 1-x *", "failed to parse int from x"},
    {"0 0 1 1/x *", "failed to parse int from x"},
    {"@reboot", "unrecognized descriptor: @reboot at position 0"},
    {"@hourly ", "unrecognized descriptor: @hourly  at position 0"},
    {"@every x", "failed to parse duration @every x: time: invalid duration"},
    {"TZ=UTC", "missing schedule after time zone"},
    {"TZ=UTC * *", "expected exactly 5 fields, found 2: [* *] at position 10"},
    {"TZ=UTC 0 99 * * *", "end of range (99) above maximum (23): 99 at position 9"},
};

static void free_params(struct criterion_test_params *p)
{
    cr_free(p->params);
}

ParameterizedTestParameters(cron, malformed)
{
    size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, n, free_params);
}

ParameterizedTest(size_t *i, cron, malformed)
{
    const bad_case *c = &bad_cases[*i];
    kp_cron out;
    memset(&out, 0x5a, sizeof(out));
    kp_cron before = out;
    cr_assert_eq(kp_cron_parse(c->spec, &out), KP_EINVALID, "\"%s\" should fail", c->spec);
    cr_expect(strstr(kp_error_last(), c->message) != NULL, "\"%s\": message \"%s\" lacks \"%s\"",
              c->spec, kp_error_last(), c->message);
    cr_expect(memcmp(&out, &before, sizeof(out)) == 0, "output untouched on error");
}

typedef struct next_case {
    const char *spec;
    int64_t after, want; /* want < 0: no time within five years */
} next_case;

static const next_case next_cases[] = {
    /* Friday 2024-01-05 10:00 -> Monday 09:00 */
    {"0 9 * * mon-fri", 1704448800, 1704704400},
    /* 10:07:30 -> 10:15 */
    {"*/15 * * * *", 1714990050, 1714990500},
    /* strictly after: at 10:15 exactly -> 10:30 */
    {"*/15 * * * *", 1714990500, 1714991400},
    {"@yearly", 1717200000, 1735689600},
    /* the next 29 February after 2024-03-01 */
    {"0 0 29 2 *", 1709251200, 1835395200},
    {"0 0 30 2 *", 1709251200, -1},
    /* day-of-month OR weekday when neither is "*": Sunday 2024-09-01 -> Friday the 6th */
    {"0 0 13 * 5", 1725148800, 1725580800},
    /* AND when the weekday is "*": only the 13th */
    {"0 0 13 * *", 1725148800, 1726185600},
    {"59 23 31 12 *", 1735689540, 1767225540},
    /* before 1970 */
    {"0 0 1 1 *", -1, 0},
    {"@every 90m", 1000, 1000 + 5400},
    {"* * * * *", 59, 60},
};

ParameterizedTestParameters(cron, next)
{
    size_t n = sizeof(next_cases) / sizeof(next_cases[0]);
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, n, free_params);
}

ParameterizedTest(size_t *i, cron, next)
{
    const next_case *c = &next_cases[*i];
    kp_cron cron = parse_ok(c->spec);
    int64_t got = -42;
    bool found = kp_cron_next(&cron, c->after, &got);
    if (c->want < 0) {
        cr_expect_not(found, "%s after %lld: expected none, got %lld", c->spec, (long long)c->after,
                      (long long)got);
    } else {
        cr_expect(found, "%s after %lld: none found", c->spec, (long long)c->after);
        cr_expect_eq(got, c->want, "%s after %lld: got %lld, want %lld", c->spec,
                     (long long)c->after, (long long)got, (long long)c->want);
    }
}
