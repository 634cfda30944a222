/*
 * Tests for shared/api/symtab.c: fixed ids, interning and lookup, growth,
 * integer parsing with Go's strconv.Atoi rules, well-known flags.
 */
#include "api/symtab.h"
#include "api/wellknown.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(symtab, fixed_symbols_have_fixed_ids)
{
    static const struct {
        kp_sym sym;
        const char *str;
    } fixed[] = {
        {KP_SYM_NODEPOOL, "karpenter.sh/nodepool"},
        {KP_SYM_ZONE, "topology.kubernetes.io/zone"},
        {KP_SYM_REGION, "topology.kubernetes.io/region"},
        {KP_SYM_INSTANCE_TYPE, "node.kubernetes.io/instance-type"},
        {KP_SYM_ARCH, "kubernetes.io/arch"},
        {KP_SYM_OS, "kubernetes.io/os"},
        {KP_SYM_CAPACITY_TYPE, "karpenter.sh/capacity-type"},
        {KP_SYM_HOSTNAME, "kubernetes.io/hostname"},
        {KP_SYM_SPOT, "spot"},
        {KP_SYM_ON_DEMAND, "on-demand"},
        {KP_SYM_RESERVED, "reserved"},
    };
    /* Two tables, so ids do not depend on what one table saw first. */
    for (int round = 0; round < 2; round++) {
        kp_symtab *st = kp_symtab_new();
        if (round == 1) cr_assert_eq(kp_sym_intern(st, "something-else"), KP_SYM_FIXED_COUNT);
        cr_assert_eq(kp_symtab_count(st), KP_SYM_FIXED_COUNT - 1 + (size_t)round);
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
            cr_expect_eq(kp_sym_lookup(st, fixed[i].str), fixed[i].sym, "%s", fixed[i].str);
            cr_expect_eq(kp_sym_intern(st, fixed[i].str), fixed[i].sym, "%s", fixed[i].str);
            cr_expect_str_eq(kp_sym_str(st, fixed[i].sym), fixed[i].str);
        }
        kp_symtab_free(st);
    }
}

Test(symtab, intern_lookup_and_strings)
{
    kp_symtab *st = kp_symtab_new();
    cr_assert_eq(kp_sym_lookup(st, "m5.large"), KP_SYM_NONE);
    kp_sym a = kp_sym_intern(st, "m5.large");
    cr_assert_neq(a, KP_SYM_NONE);
    cr_assert_eq(kp_sym_intern(st, "m5.large"), a);
    cr_assert_eq(kp_sym_lookup(st, "m5.large"), a);
    cr_assert_eq(kp_sym_intern_n(st, "m5.largeXYZ", 8), a);
    kp_sym b = kp_sym_intern_n(st, "m5.xlarge-tail", 9);
    cr_assert_str_eq(kp_sym_str(st, b), "m5.xlarge");
    cr_assert_neq(a, b);

    /* The table copies: the caller's buffer may change afterwards. */
    char buf[16];
    snprintf(buf, sizeof(buf), "%s", "c6g.2xlarge");
    kp_sym c = kp_sym_intern(st, buf);
    memset(buf, 'z', sizeof(buf) - 1);
    cr_assert_str_eq(kp_sym_str(st, c), "c6g.2xlarge");

    kp_sym empty = kp_sym_intern(st, "");
    cr_assert_neq(empty, KP_SYM_NONE);
    cr_assert_str_eq(kp_sym_str(st, empty), "");
    cr_assert_eq(kp_sym_lookup(st, ""), empty);

    cr_assert_eq(kp_sym_intern(st, NULL), KP_SYM_NONE);
    cr_assert_eq(kp_sym_lookup(st, NULL), KP_SYM_NONE);
    cr_assert_null(kp_sym_str(st, KP_SYM_NONE));
    cr_assert_null(kp_sym_str(st, 1000000));
    cr_assert_eq(kp_symtab_count(st), KP_SYM_FIXED_COUNT - 1 + 4);
    cr_assert_null(kp_symtab_free(st));
    cr_assert_null(kp_symtab_free(NULL));
}

Test(symtab, grows_past_initial_capacity)
{
    enum { N = 100000 };
    kp_symtab *st = kp_symtab_new();
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "value-%d", i);
        kp_sym s = kp_sym_intern(st, name);
        cr_assert_eq(s, (kp_sym)(KP_SYM_FIXED_COUNT + i), "%s", name);
    }
    cr_assert_eq(kp_symtab_count(st), KP_SYM_FIXED_COUNT - 1 + N);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "value-%d", i);
        kp_sym s = (kp_sym)(KP_SYM_FIXED_COUNT + i);
        cr_assert_eq(kp_sym_lookup(st, name), s, "%s", name);
        cr_assert_str_eq(kp_sym_str(st, s), name);
        int64_t v;
        cr_assert_not(kp_sym_int(st, s, &v));
    }
    cr_assert_eq(kp_sym_lookup(st, "value-100000"), KP_SYM_NONE);
    cr_assert_eq(kp_sym_lookup(st, "topology.kubernetes.io/zone"), KP_SYM_ZONE);
    kp_symtab_free(st);
}

static const struct {
    const char *s;
    bool ok;
    int64_t v;
} int_cases[] = {
    {"0", true, 0},
    {"5", true, 5},
    {"+5", true, 5},
    {"-5", true, -5},
    {"-0", true, 0},
    {"+0", true, 0},
    {"007", true, 7},
    {"9223372036854775807", true, INT64_MAX},
    {"-9223372036854775808", true, INT64_MIN},
    {"9223372036854775808", false, 0},
    {"-9223372036854775809", false, 0},
    {"99999999999999999999", false, 0},
    {"1e3", false, 0},
    {"", false, 0},
    {"+", false, 0},
    {"-", false, 0},
    {"+-1", false, 0},
    {"--1", false, 0},
    {" 1", false, 0},
    {"1 ", false, 0},
    {"0x10", false, 0},
    {"1_000", false, 0},
    {"1.0", false, 0},
    {"1.5", false, 0},
    {"abc", false, 0},
    {"١", false, 0}, /* an Arabic-Indic digit is not an ASCII digit */
};

Test(symtab, integers_follow_go_atoi)
{
    kp_symtab *st = kp_symtab_new();
    for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
        kp_sym s = kp_sym_intern(st, int_cases[i].s);
        int64_t v = 12345;
        cr_expect_eq(kp_sym_int(st, s, &v), int_cases[i].ok, "\"%s\"", int_cases[i].s);
        if (int_cases[i].ok)
            cr_expect_eq(v, int_cases[i].v, "\"%s\"", int_cases[i].s);
        else
            cr_expect_eq(v, 12345, "\"%s\": output untouched on failure", int_cases[i].s);
        int64_t w = 0;
        bool ok = kp_sym_parse_int(int_cases[i].s, strlen(int_cases[i].s), &w);
        cr_expect_eq(ok, int_cases[i].ok, "parse \"%s\"", int_cases[i].s);
        cr_expect(!ok || w == int_cases[i].v, "parse \"%s\"", int_cases[i].s);
    }
    cr_expect_not(kp_sym_int(st, KP_SYM_NONE, NULL));
    cr_expect_not(kp_sym_int(st, KP_SYM_ZONE, NULL));
    cr_expect(kp_sym_parse_int("12x", 2, NULL), "only `len` bytes are read");
    cr_expect_not(kp_sym_parse_int(NULL, 0, NULL));
    kp_symtab_free(st);
}

Test(symtab, well_known_flag)
{
    kp_symtab *st = kp_symtab_new();
    const char *const *labels = kp_well_known_labels();
    for (size_t i = 0; labels[i]; i++) {
        kp_sym s = kp_sym_intern(st, labels[i]);
        cr_expect(kp_sym_is_well_known(st, s), "%s", labels[i]);
    }
    cr_expect(kp_sym_is_well_known(st, KP_SYM_ZONE));
    cr_expect(kp_sym_is_well_known(st, KP_SYM_CAPACITY_TYPE));
    cr_expect_not(kp_sym_is_well_known(st, KP_SYM_HOSTNAME));
    cr_expect_not(kp_sym_is_well_known(st, KP_SYM_SPOT));
    cr_expect_not(kp_sym_is_well_known(st, KP_SYM_NONE));
    cr_expect_not(kp_sym_is_well_known(st, kp_sym_intern(st, "app")));
    /* Interning by length: a prefix that is a well-known key is that key; bytes
     * after an embedded NUL make a different, unknown string. */
    cr_expect_eq(kp_sym_intern_n(st, "kubernetes.io/osx", 16), KP_SYM_OS);
    kp_sym nul = kp_sym_intern_n(st, "kubernetes.io/os\0x", 18);
    cr_expect_neq(nul, KP_SYM_OS);
    cr_expect_not(kp_sym_is_well_known(st, nul));
    cr_expect_not(kp_sym_is_well_known(st, 999999));
    kp_symtab_free(st);
}
