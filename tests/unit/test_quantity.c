/*
 * Quantity tests. Inputs and expected strings come from Kubernetes' own tests
 * (apimachinery pkg/api/resource quantity_test.go: TestQuantityParse,
 * TestQuantityParseEmit, TestQuantityString, TestMilliNewSet, TestNewSet,
 * TestAdd, TestSub, TestMul, TestQuantityCmp, TestNegativeValueRoundsAwayFromZero
 * TestQuantityAsInt64, and the invalid list). Two deliberate differences,
 * noted per case:
 *  - we hold milli-units, so Kubernetes' sub-milli values ("5n", "4u") round up
 *    to 1m and print as such;
 *  - past ±(2^127-1) milli-units ("1e2147483647") we saturate where
 *    Kubernetes keeps arbitrary precision. Everything below is exact, as
 *    there ("3Ei", "12E", "10000000Gi"), BinarySI capped at 2^63-1 units.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "base/error.h"

#define SI  KP_QUANTITY_DECIMAL_SI
#define BIN KP_QUANTITY_BINARY_SI
#define EXP KP_QUANTITY_DECIMAL_EXP

struct parse_case {
    const char *in;
    int64_t milli;
    enum kp_quantity_format format;
    const char *canonical;
};

/* TestQuantityParse, in table order, with the canonical String() of each. */
static const struct parse_case kubernetes_parse[] = {
    {"0", 0, SI, "0"},
    {"0n", 0, SI, "0"},
    {"0u", 0, SI, "0"},
    {"0m", 0, SI, "0"},
    {"0Ki", 0, BIN, "0"},
    {"0k", 0, SI, "0"},
    {"0Mi", 0, BIN, "0"},
    {"0M", 0, SI, "0"},
    {"0Gi", 0, BIN, "0"},
    {"0G", 0, SI, "0"},
    {"0Ti", 0, BIN, "0"},
    {"0T", 0, SI, "0"},
    {"1", 1000, SI, "1"},
    {"1Ki", 1024000, BIN, "1Ki"},
    {"8Ki", 8192000, BIN, "8Ki"},
    {"7Mi", 7340032000, BIN, "7Mi"},
    {"6Gi", 6442450944000, BIN, "6Gi"},
    {"5Ti", 5497558138880000, BIN, "5Ti"},
    {"4Pi", 4503599627370496000, BIN, "4Pi"},
    /* "3Ei": beyond int64 milli-units, see quantity_overflow */
    {"10Ti", 10995116277760000, BIN, "10Ti"},
    {"100Ti", 109951162777600000, BIN, "100Ti"},
    {"5n", 1, SI, "1m"}, /* Kubernetes: 5n */
    {"4u", 1, SI, "1m"}, /* Kubernetes: 4u */
    {"3m", 3, SI, "3m"},
    {"9", 9000, SI, "9"},
    {"8k", 8000000, SI, "8k"},
    {"50k", 50000000, SI, "50k"},
    {"7M", 7000000000, SI, "7M"},
    {"6G", 6000000000000, SI, "6G"},
    {"5T", 5000000000000000, SI, "5T"},
    {"40T", 40000000000000000, SI, "40T"},
    {"300T", 300000000000000000, SI, "300T"},
    {"2P", 2000000000000000000, SI, "2P"},
    /* "1E": overflow */
    {"1E-3", 1, EXP, "1e-3"},
    {"1e3", 1000000, EXP, "1e3"},
    {"1E6", 1000000000, EXP, "1e6"},
    {"1e9", 1000000000000, EXP, "1e9"},
    {"1E12", 1000000000000000, EXP, "1e12"},
    {"1e15", 1000000000000000000, EXP, "1e15"},
    /* "1E18": overflow */
    {"1e14", 100000000000000000, EXP, "100e12"},
    {"1e13", 10000000000000000, EXP, "10e12"},
    {"100.035k", 100035000, SI, "100035"},
    {"0.001", 1, SI, "1m"},
    {"0.0005k", 500, SI, "500m"},
    {"0.005", 5, SI, "5m"},
    {"0.05", 50, SI, "50m"},
    {"0.5", 500, SI, "500m"},
    {"0.00050k", 500, SI, "500m"},
    {"0.00500", 5, SI, "5m"},
    {"0.05000", 50, SI, "50m"},
    {"0.50000", 500, SI, "500m"},
    {"0.5e0", 500, EXP, "500e-3"},
    {"0.5e-1", 50, EXP, "50e-3"},
    {"0.5e-2", 5, EXP, "5e-3"},
    {"10.035M", 10035000000, SI, "10035k"},
    {"1.2e3", 1200000, EXP, "1200"},
    {"1.3E+6", 1300000000, EXP, "1300e3"},
    {"1.40e9", 1400000000000, EXP, "1400e6"},
    {"1.53E12", 1530000000000000, EXP, "1530e9"},
    {"1.6e15", 1600000000000000000, EXP, "1600e12"},
    /* "1.7E18": overflow */
    {"9.01", 9010, SI, "9010m"},
    {"8.1k", 8100000, SI, "8100"},
    {"7.123456M", 7123456000, SI, "7123456"},
    {"6.987654321G", 6987654321000, SI, "6987654321"},
    {"5.444T", 5444000000000000, SI, "5444G"},
    {"40.1T", 40100000000000000, SI, "40100G"},
    {"300.2T", 300200000000000000, SI, "300200G"},
    {"2.5P", 2500000000000000000, SI, "2500T"},
    /* "1.01E": overflow */
    /* Things that round up: Kubernetes stops at 1n, we at 1m. */
    {"3.001n", 1, SI, "1m"},
    {"1.1E-9", 1, EXP, "1e-3"},
    {"0.0000000001", 1, SI, "1m"},
    {"0.0000000005", 1, SI, "1m"},
    {"0.00000000050", 1, SI, "1m"},
    {"0.5e-9", 1, EXP, "1e-3"},
    {"0.9n", 1, SI, "1m"},
    {"0.00000012345", 1, SI, "1m"},
    {"0.00000012354", 1, SI, "1m"},
    /* "9Ei", "9223372036854775807Ki", "12E": overflow */
    {"100.035Ki", 102435840, BIN, "102435840m"},
    {"0.5Mi", 524288000, BIN, "512Ki"},
    {"0.05Gi", 53687091200, BIN, "53687091200m"},
    {"0.025Ti", 27487790694400, BIN, "27487790694400m"},
    /* Below one once rounded, a binary value becomes DecimalSI. */
    {"0.000000000001Ki", 1, SI, "1m"},
    {".001", 1, SI, "1m"},
    {".0001k", 100, SI, "100m"},
    {"1.", 1000, SI, "1"},
    {"1.G", 1000000000000, SI, "1G"},
};

/* Spellings Kubernetes' scanner accepts that look wrong: an empty number is
 * zero on its fast path, and a fraction point needs no digits on either side. */
static const struct parse_case kubernetes_oddities[] = {
    {"+", 0, SI, "0"},
    {"-", 0, SI, "0"},
    {".", 0, SI, "0"},
    {"-.", 0, SI, "0"},
    {"000", 0, SI, "0"},
    {"-0", 0, SI, "0"},
    {"e3", 0, EXP, "0"},
    {"e-9", 0, EXP, "0"},
    {"Ki", 0, BIN, "0"},
    {"Ti", 0, BIN, "0"},
    {"1.Ki", 1024000, BIN, "1Ki"},
    {"+5", 5000, SI, "5"},
    {"05", 5000, SI, "5"},
    {"5.", 5000, SI, "5"},
    {"1E+3", 1000000, EXP, "1e3"},
    {"1e-0", 1000, EXP, "1"},
    {"1e0003", 1000000, EXP, "1e3"},
    {"1E-2147483647", 1, EXP, "1e-3"}, /* the smallest exponent allowed */
    {"0e2147483647", 0, EXP, "0"},     /* zero stays zero at any scale */
    {"8Pi", 9007199254740992000, BIN, "8Pi"},
    /* The BinarySI -> DecimalSI switch looks at the value rounded up to 1n. */
    {".000001Ki", 2, SI, "2m"},
    {"0.0009765624Ki", 1000, SI, "1"}, /* 0.9999998976, so DecimalSI */
    {"0.00097656249999Ki", 1000, BIN, "1"},
    {"0.0009765625Ki", 1000, BIN, "1"},
    {"9223372036854775.807", INT64_MAX, SI, "9223372036854775807m"},
    {"-9223372036854775807m", -INT64_MAX, SI, "-9223372036854775807m"},
    {"0.00000000000000000000000000000000000000000000000000000000000000000001", 1, SI, "1m"},
    {"1000000000000000000000000000000000000000000000000000000000000000000e-66", 1000, EXP, "1"},
};

static void expect_parse(const struct parse_case *c, const char *in, int sign)
{
    kp_quantity q, again;
    char buf[KP_QUANTITY_STRLEN], want[KP_QUANTITY_STRLEN + 1];
    int err = kp_quantity_parse(in, &q);

    cr_expect_eq(err, 0, "%s: %s", in, kp_error_last());
    if (err) return;
    snprintf(want, sizeof(want), "%s%s", sign < 0 && c->milli ? "-" : "", c->canonical);
    cr_expect_eq(q.milli, sign * c->milli, "%s: milli %lld, want %lld", in, (long long)q.milli,
                 (long long)(sign * c->milli));
    cr_expect_eq(q.format, c->format, "%s: format %d, want %d", in, q.format, c->format);
    cr_expect_str_eq(kp_quantity_format(q, buf, sizeof(buf)), want, "%s: printed %s, want %s", in,
                     buf, want);
    /* The canonical string parses back to the same value. */
    cr_expect_eq(kp_quantity_parse(buf, &again), 0, "%s: %s", buf, kp_error_last());
    cr_expect_eq(again.milli, q.milli, "%s: reparsed %s differs", in, buf);
}

static void expect_parse_table(const struct parse_case *cases, size_t n)
{
    char in[160];

    for (size_t i = 0; i < n; i++) {
        expect_parse(&cases[i], cases[i].in, 1);
        /* Kubernetes' test repeats every case with an explicit sign. */
        if (cases[i].in[0] == '-' || cases[i].in[0] == '+') continue;
        snprintf(in, sizeof(in), "-%s", cases[i].in);
        expect_parse(&cases[i], in, -1);
        snprintf(in, sizeof(in), "+%s", cases[i].in);
        expect_parse(&cases[i], in, 1);
    }
}

Test(quantity_parse, kubernetes_parse_table)
{
    expect_parse_table(kubernetes_parse, sizeof(kubernetes_parse) / sizeof(kubernetes_parse[0]));
}

Test(quantity_parse, kubernetes_oddities_are_accepted)
{
    expect_parse_table(kubernetes_oddities,
                       sizeof(kubernetes_oddities) / sizeof(kubernetes_oddities[0]));
}

/* TestQuantityParseEmit and TestQuantityString's alternates: input -> String(). */
Test(quantity_parse, parse_then_print)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"1Ki", "1Ki"},
        {"1Mi", "1Mi"},
        {"1Gi", "1Gi"},
        {"1024Mi", "1Gi"},
        {"1000M", "1G"},
        {".001Ki", "1024m"},
        {".000001Ki", "2m"},       /* Kubernetes: 1024u */
        {".000000001Ki", "1m"},    /* Kubernetes: 1024n */
        {".000000000001Ki", "1m"}, /* Kubernetes: 2n */
        {"-.001Ki", "-1024m"},
        {"307200Ki", "300Mi"},
        {"6Ki", "6Ki"},
        {"1025024Mi", "1001Gi"},
        {"1024Gi", "1Ti"},
        {"5000m", "5"},
        {"1000M", "1G"},
        {"0.001T", "1G"},
        {"1000u", "1m"},
        {"1.08", "1080m"},
        {"1080000000n", "1080m"},
        {"300M", "300M"},
        {"1234567M", "1234567M"},
        {"3k", "3k"},
        {"1025", "1025"},
        {".001e12", "1e9"},
        {"0.001e0", "1e-3"},
        {"1000e-12", "1e-3"}, /* Kubernetes: 1e-9 */
        {"80e-3", "80e-3"},
        {"300e6", "300e6"},
        {"3e3", "3e3"},
        {"00", "0"},
        {"1Mi", "1Mi"}, /* TestQuantityValueSet */
    };
    char buf[KP_QUANTITY_STRLEN];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_quantity q;
        int err = kp_quantity_parse(cases[i].in, &q);
        cr_expect_eq(err, 0, "%s: %s", cases[i].in, kp_error_last());
        if (!err)
            cr_expect_str_eq(kp_quantity_format(q, buf, sizeof(buf)), cases[i].out, "%s -> %s",
                             cases[i].in, buf);
    }
}

struct bad_case {
    const char *in;
    const char *message;
};

Test(quantity_parse, invalid_inputs_name_the_position)
{
    static const struct bad_case cases[] = {
        {"", "quantity \"\": empty string"},
        /* Kubernetes' invalid list. */
        {"1.1.M", "quantity \"1.1.M\": unexpected character '.' at position 3"},
        {"1+1.0M", "quantity \"1+1.0M\": unexpected character '+' at position 1"},
        {"0.1mi", "quantity \"0.1mi\": unexpected character 'i' at position 4"},
        {"0.1am", "quantity \"0.1am\": unexpected character 'a' at position 3"},
        {"aoeu", "quantity \"aoeu\": unexpected character 'a' at position 0"},
        {".5i", "quantity \".5i\": unexpected character 'i' at position 2"},
        {"1i", "quantity \"1i\": unexpected character 'i' at position 1"},
        {"-3.01i", "quantity \"-3.01i\": unexpected character 'i' at position 5"},
        {"-3.01e-", "quantity \"-3.01e-\": unexpected end of input at position 7"},
        {"1e4294967297", "quantity \"1e4294967297\": exponent out of range at position 2"},
        {" 1", "quantity \" 1\": unexpected character ' ' at position 0"},
        {"1 ", "quantity \"1 \": unexpected character ' ' at position 1"},
        /* TestQuantityParseNonNumericPanic, TestQuantityValueSet. */
        {"Non-Numeric", "quantity \"Non-Numeric\": unexpected character 'N' at position 0"},
        {"invalid", "quantity \"invalid\": unexpected character 'i' at position 0"},
        /* Suffix spellings Kubernetes refuses. */
        {"1Gb", "quantity \"1Gb\": unexpected character 'b' at position 2"},
        {"1KiB", "quantity \"1KiB\": unexpected character 'B' at position 3"},
        {"1ki", "quantity \"1ki\": unexpected character 'i' at position 2"},
        {"1K", "quantity \"1K\": unexpected end of input at position 2"},
        {"1e", "quantity \"1e\": unexpected end of input at position 2"},
        {"1E+", "quantity \"1E+\": unexpected end of input at position 3"},
        {"1ee3", "quantity \"1ee3\": unexpected character 'e' at position 2"},
        {"1e3.5", "quantity \"1e3.5\": unexpected character '.' at position 3"},
        {"1Ki5", "quantity \"1Ki5\": unexpected character '5' at position 3"},
        {"1m5", "quantity \"1m5\": unexpected character '5' at position 2"},
        {"1.2.3", "quantity \"1.2.3\": unexpected character '.' at position 3"},
        {"12x", "quantity \"12x\": unexpected character 'x' at position 2"},
        {"--1", "quantity \"--1\": unexpected character '-' at position 1"},
        {"1\xff", "quantity \"1\\xff\": unexpected character '\\xff' at position 1"},
        /* The int32 exponent bounds (TestInterpretExponentInt32Bounds). */
        {"1E2147483648", "quantity \"1E2147483648\": exponent out of range at position 2"},
        {"1E-2147483648", "quantity \"1E-2147483648\": exponent out of range at position 2"},
        /* No digit where Kubernetes' slow path needs one. */
        {"Pi", "quantity \"Pi\": a digit is required before this suffix at position 0"},
        {"-Ei", "quantity \"-Ei\": a digit is required before this suffix at position 1"},
        {"e-10", "quantity \"e-10\": a digit is required before this suffix at position 0"},
        {".e-10", "quantity \".e-10\": a digit is required before this suffix at position 0"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_quantity q = kp_quantity_from_milli(42, BIN);
        cr_expect_eq(kp_quantity_parse(cases[i].in, &q), KP_EINVALID, "%s parsed", cases[i].in);
        cr_expect_str_eq(kp_error_last(), cases[i].message, "%s", cases[i].in);
        cr_expect(q.milli == 42 && q.format == BIN, "%s: output written on error", cases[i].in);
    }
    cr_expect_eq(kp_quantity_parse(NULL, &(kp_quantity){0}), KP_EINVALID);
}

Test(quantity_parse, long_input_is_cut_in_the_message)
{
    char in[400];
    kp_quantity q;

    memset(in, '1', sizeof(in) - 2);
    in[sizeof(in) - 2] = 'x';
    in[sizeof(in) - 1] = '\0';
    cr_assert_eq(kp_quantity_parse(in, &q), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "...\": unexpected character 'x' at position 398"), "%s",
              kp_error_last());
}

/* Values past the int64 milli-unit range, from TestQuantityParse,
 * TestQuantityAsInt64 and TestParseQuantity, with the String() Kubernetes
 * prints: kept exactly, `milli` saturated. */
Test(quantity_parse, values_beyond_int64_milli_are_exact)
{
    static const struct {
        const char *in, *canonical;
    } cases[] = {
        {"3Ei", "3Ei"},
        {"1E", "1E"},
        {"-1E", "-1E"},
        {"1E18", "1e18"},
        {"1.7E18", "1700e15"},
        {"1.01E", "1010P"},
        {"12E", "12E"},
        {"10000T", "10P"},
        {"999999999999999999", "999999999999999999"},
        {"1000000000000000000", "1E"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"1000000000000000000.1", "1000000000000000000100m"},
        {"-9999999999999999999.1", "-9999999999999999999100m"},
        {"1.0000000000000000001E", "1000000000000000000100m"},
        {"9999999999999999999000m", "9999999999999999999"},
        {"9Pi", "9Pi"},
        {"100Pi", "100Pi"},
        {"10000000Gi", "10000000Gi"},
        {"9223372036854775808m", "9223372036854775808m"},
        {"9223372036854775.8071", "9223372036854775808m"},
        {"100000000000000000000000000000000000000000000000000e-31", "10e18"},
        {"1e30", "1e30"},
        /* BinarySI is capped at 2^63-1 units, as Kubernetes' maxAllowed. */
        {"9Ei", "9223372036854775807"},
        {"8Ei", "9223372036854775807"},
        {"-8Ei", "-9223372036854775807"},
        {"9223372036854775807Ki", "9223372036854775807"},
    };
    char buf[KP_QUANTITY_STRLEN];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_quantity q;
        cr_assert_eq(kp_quantity_parse(cases[i].in, &q), 0, "%s: %s", cases[i].in, kp_error_last());
        cr_expect_str_eq(kp_quantity_format(q, buf, sizeof(buf)), cases[i].canonical, "%s", cases[i].in);
        cr_expect(q.milli == INT64_MAX || q.milli == INT64_MIN, "%s: milli %lld should saturate", cases[i].in,
                  (long long)q.milli);
    }
}

Test(quantity_parse, big_values_compare_and_sum_exactly)
{
    kp_quantity limit, used, left, a, b;
    cr_assert_eq(kp_quantity_parse("10000000Gi", &limit), 0);
    cr_assert_eq(kp_quantity_parse("8500000Gi", &used), 0);
    cr_expect(kp_quantity_milli128(limit) == (kp_milli128)10000000 * 1024 * 1024 * 1024 * 1000);
    cr_expect_eq(kp_quantity_cmp(limit, used), 1);
    cr_assert_eq(kp_quantity_sub(limit, used, &left), 0);
    cr_expect_eq(left.milli, INT64_C(1500000) * 1024 * 1024 * 1024 * 1000, "1500000Gi fits int64 milli-units");
    cr_expect_eq(kp_quantity_value(limit), INT64_C(10000000) * 1024 * 1024 * 1024);
    cr_assert_eq(kp_quantity_parse("9Ei", &a), 0);
    cr_assert_eq(kp_quantity_parse("8Ei", &b), 0);
    cr_expect_eq(kp_quantity_cmp(a, b), 0, "both capped at 2^63-1");
    cr_expect_eq(kp_quantity_value(a), INT64_MAX);
    cr_assert_eq(kp_quantity_parse("1e2147483647", &a), 0, "Kubernetes accepts it");
    cr_assert_eq(kp_quantity_parse("1e30", &b), 0);
    cr_expect_eq(kp_quantity_cmp(a, b), 1, "saturated, but still the largest");
    cr_expect_eq(kp_quantity_value(a), INT64_MAX);
    cr_assert_eq(kp_quantity_parse("-1e2147483647", &a), 0);
    cr_expect_eq(kp_quantity_value(a), INT64_MIN);
}

/* TestNegativeValueRoundsAwayFromZero: Value() and MilliValue(). */
Test(quantity_value, rounds_away_from_zero)
{
    static const struct {
        const char *in;
        int64_t value, milli;
    } cases[] = {
        {"-.484785E-7466", -1, -1},
        {".484785E-7466", 1, 1},
        {"-.484785E-1", -1, -49},
        {".484785E-1", 1, 49},
        {"-0.0005", -1, -1},
        {"0.0005", 1, 1},
        {"-1500m", -2, -1500},
        {"1500m", 2, 1500},
        {"-9.5000000001Gi", -10200547329, -10200547328108},
        {"9.5000000001Gi", 10200547329, 10200547328108},
        {"-1", -1, -1000},
        {"1", 1, 1000},
        {"0", 0, 0},
        /* TestQuantityRoundUp at scale 0. */
        {"9.01", 10, 9010},
        {"-9.01", -10, -9010},
        {"0.0001", 1, 1},
        {"-0.0001", -1, -1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_quantity q;
        cr_assert_eq(kp_quantity_parse(cases[i].in, &q), 0, "%s: %s", cases[i].in, kp_error_last());
        cr_expect_eq(kp_quantity_value(q), cases[i].value, "%s: value %lld", cases[i].in,
                     (long long)kp_quantity_value(q));
        cr_expect_eq(kp_quantity_milli_value(q), cases[i].milli, "%s: milli %lld", cases[i].in,
                     (long long)kp_quantity_milli_value(q));
    }
    cr_expect_eq(kp_quantity_value(kp_quantity_from_milli(INT64_MIN, SI)), -9223372036854776);
    cr_expect_eq(kp_quantity_value(kp_quantity_from_milli(INT64_MAX, SI)), 9223372036854776);
}

/* TestQuantityString, TestBinarySIZeroExponentString, TestMilliNewSet,
 * TestNewScaledSet, TestQuantityNeg: values built directly, then printed. */
Test(quantity_format, canonical_strings)
{
    static const struct {
        int64_t milli;
        enum kp_quantity_format format;
        const char *out;
    } cases[] = {
        {1073741824000, BIN, "1Gi"},
        {314572800000, BIN, "300Mi"},
        {6144000, BIN, "6Ki"},
        {1074815565824000, BIN, "1001Gi"},
        {1099511627776000, BIN, "1Ti"},
        {5000, BIN, "5"},
        {500, BIN, "500m"},
        {1000000000000, SI, "1G"},
        {1, SI, "1m"},
        {80, SI, "80m"},
        {1080, SI, "1080m"},
        {300000000000, SI, "300M"},
        {1000000000000000, SI, "1T"},
        {1234567000000000, SI, "1234567M"},
        {1234567, BIN, "1234567m"},
        {3000000, SI, "3k"},
        {1025000, BIN, "1025"},
        {0, SI, "0"},
        {0, BIN, "0"},
        {1000000000000, EXP, "1e9"},
        {1, EXP, "1e-3"},
        {80, EXP, "80e-3"},
        {300000000000, EXP, "300e6"},
        {1000000000000000, EXP, "1e12"},
        {1000000, EXP, "1e3"},
        {3000000, EXP, "3e3"},
        {0, EXP, "0"},
        {2000000, BIN, "2000"},
        {-2000000, BIN, "-2000"},
        {-1073741824000, BIN, "-1Gi"},
        {-1024000, BIN, "-1Ki"},
        {-1023000, BIN, "-1023"},
        {-9010, SI, "-9010m"},
        {1000, SI, "1"},
        {1234000, SI, "1234"},
        {1024, BIN, "1024m"},
        {1000000, (enum kp_quantity_format)99, "1e3"}, /* unknown format: DecimalExponent */
        {1048576, BIN, "1048576m"},
        {INT64_MAX, SI, "9223372036854775807m"},
        {INT64_MIN, BIN, "-9223372036854775808m"},
        {9007199254740992000, BIN, "8Pi"},
        {9000000000000000000, SI, "9P"},
    };
    char buf[KP_QUANTITY_STRLEN];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_quantity q = kp_quantity_from_milli(cases[i].milli, cases[i].format);
        cr_expect_str_eq(kp_quantity_format(q, buf, sizeof(buf)), cases[i].out,
                         "%lld/%d printed %s", (long long)cases[i].milli, cases[i].format, buf);
    }
}

/* TestNewSet. */
Test(quantity_format, from_int)
{
    char buf[KP_QUANTITY_STRLEN];

    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1, SI), buf, sizeof(buf)), "1");
    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1000, SI), buf, sizeof(buf)), "1k");
    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1234000, SI), buf, sizeof(buf)),
                     "1234k");
    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1024, BIN), buf, sizeof(buf)), "1Ki");
    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1000000, (enum kp_quantity_format)7),
                                        buf, sizeof(buf)),
                     "1e6");
    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1048576, BIN), buf, sizeof(buf)),
                     "1Mi");
    cr_expect_eq(kp_quantity_from_int(INT64_MAX / 999, SI).milli, INT64_MAX);
    cr_expect_eq(kp_quantity_from_int(-INT64_MAX / 999, SI).milli, INT64_MIN);
}

Test(quantity_format, short_buffer_truncates)
{
    char buf[4] = "zzz";

    cr_expect_str_eq(kp_quantity_format(kp_quantity_from_int(1234567, SI), buf, sizeof(buf)),
                     "123");
    cr_expect_null(kp_quantity_format(kp_quantity_from_int(1, SI), NULL, 0));
}

static kp_quantity parsed(const char *text)
{
    kp_quantity q;
    cr_assert_eq(kp_quantity_parse(text, &q), 0, "%s: %s", text, kp_error_last());
    return q;
}

/* TestQuantityCmp (the "10000T" vs "100Gi" row overflows here). */
Test(quantity_arith, cmp)
{
    cr_expect_eq(kp_quantity_cmp(parsed("0"), parsed("0")), 0);
    cr_expect_eq(kp_quantity_cmp(parsed("100m"), parsed("50m")), 1);
    cr_expect_eq(kp_quantity_cmp(parsed("50m"), parsed("100m")), -1);
    cr_expect_eq(kp_quantity_cmp(parsed("1000T"), parsed("100Gi")), 1);
    cr_expect_eq(kp_quantity_cmp(parsed("1Gi"), parsed("1024Mi")), 0);
    cr_expect_eq(kp_quantity_cmp(parsed("800m"), parsed("1")), -1);
    cr_expect_eq(kp_quantity_cmp(parsed("-1"), parsed("0.79")), -1);
    cr_expect(kp_quantity_is_zero(parsed("0Ki")));
    cr_expect_not(kp_quantity_is_zero(parsed("1m")));
}

static void expect_result(int err, kp_quantity got, int64_t milli, enum kp_quantity_format format,
                          const char *what)
{
    cr_expect_eq(err, 0, "%s: %s", what, kp_error_last());
    cr_expect_eq(got.milli, milli, "%s: milli %lld, want %lld", what, (long long)got.milli,
                 (long long)milli);
    cr_expect_eq(got.format, format, "%s: format %d, want %d", what, got.format, format);
}

/* TestAdd, TestSub, TestQuantityAddZeroPreservesSuffix,
 * TestQuantitySubZeroPreservesSuffix. */
Test(quantity_arith, add_and_sub_keep_or_adopt_the_format)
{
    kp_quantity r;
    char buf[KP_QUANTITY_STRLEN];

    expect_result(kp_quantity_add(parsed("10"), parsed("1e1"), &r), r, 20000, SI, "10+1e1");
    expect_result(kp_quantity_add(parsed("10"), kp_quantity_from_int(1, BIN), &r), r, 11000, SI,
                  "10+1");
    expect_result(kp_quantity_add(kp_quantity_from_int(10, BIN), parsed("1"), &r), r, 11000, BIN,
                  "10Bin+1");
    expect_result(kp_quantity_add(parsed("0"), parsed("50"), &r), r, 50000, SI, "0+50");
    expect_result(kp_quantity_add(parsed("50"), parsed("0"), &r), r, 50000, SI, "50+0");
    expect_result(kp_quantity_sub(parsed("10"), parsed("1e1"), &r), r, 0, SI, "10-1e1");
    expect_result(kp_quantity_sub(parsed("10"), kp_quantity_from_int(1, BIN), &r), r, 9000, SI,
                  "10-1");
    expect_result(kp_quantity_sub(kp_quantity_from_int(10, BIN), parsed("1"), &r), r, 9000, BIN,
                  "10Bin-1");
    expect_result(kp_quantity_sub(parsed("0"), parsed("50"), &r), r, -50000, SI, "0-50");

    cr_assert_eq(kp_quantity_add(parsed("0"), parsed("1Gi"), &r), 0);
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "1Gi");
    cr_assert_eq(kp_quantity_add(parsed("100m"), parsed("0"), &r), 0);
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "100m");
    cr_assert_eq(kp_quantity_sub(parsed("1Gi"), parsed("0"), &r), 0);
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "1Gi");
    cr_assert_eq(kp_quantity_sub(parsed("0"), parsed("1Gi"), &r), 0);
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "-1Gi");
    cr_assert_eq(kp_quantity_add(parsed("1.5Gi"), parsed("512Mi"), &r), 0);
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "2Gi");
}

/* TestMul, in milli-units. */
Test(quantity_arith, mul)
{
    kp_quantity r;
    kp_quantity max = kp_quantity_from_milli(INT64_MAX, SI);
    kp_quantity min = kp_quantity_from_milli(INT64_MIN, SI);

    expect_result(kp_quantity_mul(parsed("10"), 10, &r), r, 100000, SI, "10*10");
    expect_result(kp_quantity_mul(kp_quantity_from_int(10, BIN), 1, &r), r, 10000, BIN, "10*1");
    expect_result(kp_quantity_mul(parsed("0"), 50, &r), r, 0, SI, "0*50");
    expect_result(kp_quantity_mul(parsed("50"), 0, &r), r, 0, SI, "50*0");
    expect_result(kp_quantity_mul(parsed("10"), -10, &r), r, -100000, SI, "10*-10");
    expect_result(kp_quantity_mul(kp_quantity_from_int(10, BIN), -1, &r), r, -10000, BIN, "10*-1");
    expect_result(kp_quantity_mul(parsed("-50"), -50, &r), r, 2500000, SI, "-50*-50");
    expect_result(kp_quantity_mul(max, 1, &r), r, INT64_MAX, SI, "max*1");
    expect_result(kp_quantity_mul(max, -1, &r), r, -INT64_MAX, SI, "max*-1");
    expect_result(kp_quantity_mul(min, 1, &r), r, INT64_MIN, SI, "min*1");
    expect_result(kp_quantity_mul(kp_quantity_from_milli(INT64_MIN / 2, SI), 2, &r), r, INT64_MIN,
                  SI, "min/2*2");

    /* Past int64 milli-units the product stays exact; `milli` saturates. */
    char buf[KP_QUANTITY_STRLEN];
    expect_result(kp_quantity_mul(max, 2, &r), r, INT64_MAX, SI, "max*2");
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "18446744073709551614m");
    expect_result(kp_quantity_mul(min, -1, &r), r, INT64_MAX, SI, "min*-1");
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "9223372036854775808m");
    expect_result(kp_quantity_mul(max, -10, &r), r, INT64_MIN, SI, "max*-10");

    r = kp_quantity_from_milli(7, EXP);
    kp_quantity huge;
    cr_assert_eq(kp_quantity_parse("1e33", &huge), 0);
    cr_expect_eq(kp_quantity_mul(huge, INT64_C(1000000), &r), KP_EOVERFLOW);
    cr_expect_eq(kp_quantity_mul(huge, INT64_C(-1000000), &r), KP_EOVERFLOW);
    cr_expect(r.milli == 7 && r.format == EXP, "output written on overflow");
    cr_expect(strstr(kp_error_last(), "overflows 128-bit milli-units"), "%s", kp_error_last());
}

Test(quantity_arith, add_and_sub_past_int64_and_overflow)
{
    kp_quantity r = kp_quantity_from_milli(7, EXP);
    kp_quantity max = kp_quantity_from_milli(INT64_MAX, SI);
    kp_quantity min = kp_quantity_from_milli(INT64_MIN, SI);
    char buf[KP_QUANTITY_STRLEN];

    expect_result(kp_quantity_add(max, parsed("1m"), &r), r, INT64_MAX, SI, "max+1m");
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "9223372036854775808m");
    expect_result(kp_quantity_sub(min, parsed("1m"), &r), r, INT64_MIN, SI, "min-1m");
    cr_expect_str_eq(kp_quantity_format(r, buf, sizeof(buf)), "-9223372036854775809m");
    expect_result(kp_quantity_add(max, min, &r), r, -1, SI, "max+min");
    /* A sum that comes back into range is exact again. */
    expect_result(kp_quantity_sub(parsed("10000000Gi"), parsed("9999999Gi"), &r), r,
                  INT64_C(1024) * 1024 * 1024 * 1000, BIN, "10000000Gi-9999999Gi");

    kp_quantity top;
    cr_assert_eq(kp_quantity_parse("1e2147483647", &top), 0);
    r = kp_quantity_from_milli(7, EXP);
    cr_expect_eq(kp_quantity_add(top, parsed("1m"), &r), KP_EOVERFLOW);
    cr_expect_eq(kp_quantity_sub(parsed("-1e2147483647"), parsed("1m"), &r), KP_EOVERFLOW);
    cr_expect(r.milli == 7 && r.format == EXP, "output written on overflow");
}
