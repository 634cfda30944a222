/*
 * Taints and tolerations: Kubernetes' ToleratesTaint tables (core/v1
 * toleration_test.go, numeric comparisons included) and Karpenter's
 * all-taints rule and known ephemeral taints.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/taints.h"

#define NS  KP_EFFECT_NO_SCHEDULE
#define PNS KP_EFFECT_PREFER_NO_SCHEDULE
#define NE  KP_EFFECT_NO_EXECUTE
#define ANY KP_EFFECT_ANY
#define EQ  KP_TOLERATION_EQUAL
#define EX  KP_TOLERATION_EXISTS
#define LT  KP_TOLERATION_LT
#define GT  KP_TOLERATION_GT

struct tolerate_case {
    const char *name;
    kp_toleration toleration;
    kp_taint taint;
    bool want;
};

static const struct tolerate_case TOLERATE_CASES[] = {
    {"same key and effect, Exists, taint without value",
     {"foo", "", EX, NS, false, 0},
     {"foo", "", NS},
     true},
    {"same key and effect, Exists, taint with value",
     {"foo", "", EX, NS, false, 0},
     {"foo", "bar", NS},
     true},
    {"empty key with Exists matches every key",
     {"", "", EX, NS, false, 0},
     {"foo", "bar", NS},
     true},
    {"same key, effect and value, Equal",
     {"foo", "bar", EQ, NS, false, 0},
     {"foo", "bar", NS},
     true},
    {"different values, Equal", {"foo", "value1", EQ, NS, false, 0}, {"foo", "value2", NS}, false},
    {"different effects, Equal", {"foo", "bar", EQ, NS, false, 0}, {"foo", "bar", NE}, false},
    {"Gt: taint below toleration",
     {"node.kubernetes.io/sla", "950", GT, NS, false, 0},
     {"node.kubernetes.io/sla", "800", NS},
     false},
    {"Gt: taint above toleration",
     {"node.kubernetes.io/sla", "750", GT, NS, false, 0},
     {"node.kubernetes.io/sla", "950", NS},
     true},
    {"Lt: taint above toleration",
     {"node.kubernetes.io/sla", "800", LT, NS, false, 0},
     {"node.kubernetes.io/sla", "950", NS},
     false},
    {"Lt: taint below toleration",
     {"node.kubernetes.io/sla", "950", LT, NS, false, 0},
     {"node.kubernetes.io/sla", "800", NS},
     true},
    {"Gt: equal values",
     {"node.kubernetes.io/sla", "950", GT, NS, false, 0},
     {"node.kubernetes.io/sla", "950", NS},
     false},
    {"Gt: non-numeric taint value",
     {"node.kubernetes.io/sla", "950", GT, NS, false, 0},
     {"node.kubernetes.io/sla", "high", NS},
     false},
    {"Gt: negative values, taint below",
     {"test-key", "-100", GT, NS, false, 0},
     {"test-key", "-200", NS},
     false},
    {"Gt: large int64 threshold",
     {"test-key", "9223372036854775806", GT, NS, false, 0},
     {"test-key", "100", NS},
     false},
    /* effect and key rules */
    {"empty effect matches NoExecute", {"foo", "bar", EQ, ANY, false, 0}, {"foo", "bar", NE}, true},
    {"empty effect matches PreferNoSchedule",
     {"foo", "", EX, ANY, false, 0},
     {"foo", "x", PNS},
     true},
    {"empty key and effect with Exists tolerates anything",
     {"", "", EX, ANY, false, 0},
     {"anything", "v", NE},
     true},
    {"empty key with Exists still checks the effect",
     {"", "", EX, NE, false, 0},
     {"foo", "", NS},
     false},
    {"key mismatch", {"foo", "", EX, NS, false, 0}, {"bar", "", NS}, false},
    {"key match is case-sensitive", {"Foo", "", EX, NS, false, 0}, {"foo", "", NS}, false},
    {"Equal with both values empty", {"foo", "", EQ, NS, false, 0}, {"foo", "", NS}, true},
    {"Equal with empty toleration value, taint has one",
     {"foo", "", EQ, NS, false, 0},
     {"foo", "bar", NS},
     false},
    {"toleration effect set, taint PreferNoSchedule",
     {"foo", "", EX, NS, false, 0},
     {"foo", "", PNS},
     false},
    /* Kubernetes' matcher lets an empty key through to the operator; only
     * validation insists on Exists. */
    {"empty key with Equal compares values",
     {"", "bar", EQ, NS, false, 0},
     {"foo", "bar", NS},
     true},
    {"empty key with Equal, other value", {"", "bar", EQ, NS, false, 0}, {"foo", "baz", NS}, false},
    {"tolerationSeconds do not affect matching",
     {"foo", "", EX, NE, true, 300},
     {"foo", "", NE},
     true},
    {"tolerationSeconds zero still matches",
     {"foo", "bar", EQ, NE, true, 0},
     {"foo", "bar", NE},
     true},
    {"NULL values read as empty", {"foo", NULL, EQ, NS, false, 0}, {"foo", NULL, NS}, true},
    {"Lt with empty key compares any key",
     {"", "5", LT, ANY, false, 0},
     {"gpu-count", "4", NS},
     true},
};

Test(tolerations, kubernetes_table)
{
    for (size_t i = 0; i < sizeof(TOLERATE_CASES) / sizeof(TOLERATE_CASES[0]); i++) {
        const struct tolerate_case *c = &TOLERATE_CASES[i];
        cr_expect_eq(kp_toleration_tolerates(&c->toleration, &c->taint), c->want, "%s", c->name);
    }
}

struct numeric_case {
    const char *toleration_value;
    const char *taint_value;
    enum kp_toleration_op op;
    bool want;
};

/* core/v1 TestCompareNumericValues, through the public matcher. */
static const struct numeric_case NUMERIC_CASES[] = {
    {"100", "200", GT, true},
    {"200", "100", GT, false},
    {"100", "100", GT, false},
    {"-100", "-50", GT, true},
    {"-50", "-100", GT, false},
    {"0", "1", GT, true},
    {"9223372036854775806", "9223372036854775807", GT, true},
    {"200", "100", LT, true},
    {"100", "200", LT, false},
    {"100", "100", LT, false},
    {"-50", "-100", LT, true},
    {"-100", "-50", LT, false},
    {"0", "-1", LT, true},
    {"abc", "100", GT, false},
    {"", "100", GT, false},
    {"0100", "200", GT, false},
    {"+100", "200", GT, false},
    {"100.5", "200", GT, false},
    {"-", "100", GT, false},
    {"100", "xyz", GT, false},
    {"100", "", GT, false},
    {"100", "0200", GT, false},
    {"100", "+200", LT, false},
    {"100", " 200 ", LT, false},
    {"0", "0", GT, false},
    {"0", "0", LT, false},
    {"0", "9223372036854775807", GT, true},
    {"0", "-9223372036854775808", LT, true},
    /* beyond the table: int64 overflow, "-0", and the other end */
    {"0", "9223372036854775808", GT, false},
    {"0", "-9223372036854775809", LT, false},
    {"99999999999999999999", "1", LT, false},
    {"1", "-0", LT, false},
    {"-9223372036854775808", "-9223372036854775807", GT, true},
    {"-1", "-9223372036854775808", GT, false},
};

Test(tolerations, numeric_comparisons)
{
    for (size_t i = 0; i < sizeof(NUMERIC_CASES) / sizeof(NUMERIC_CASES[0]); i++) {
        const struct numeric_case *c = &NUMERIC_CASES[i];
        kp_toleration t = {"k", c->toleration_value, c->op, NS, false, 0};
        kp_taint taint = {"k", c->taint_value, NS};
        cr_expect_eq(kp_toleration_tolerates(&t, &taint), c->want, "%s %s %s", c->taint_value,
                     c->op == LT ? "<" : ">", c->toleration_value);
    }
}

Test(tolerations, unknown_operator_tolerates_nothing)
{
    kp_toleration t = {"", "", (enum kp_toleration_op)42, ANY, false, 0};
    kp_taint taint = {"foo", "", NS};
    cr_assert_not(kp_toleration_tolerates(&t, &taint));
}

Test(taints, every_taint_must_be_tolerated)
{
    kp_taint taints[] = {
        {"dedicated", "gpu", NS},
        {"spot", "", PNS},
        {"karpenter.sh/disrupted", "", NS},
    };
    kp_toleration gpu = {"dedicated", "gpu", EQ, NS, false, 0};
    kp_toleration spot = {"spot", "", EX, ANY, false, 0};
    kp_toleration all = {"", "", EX, ANY, false, 0};
    kp_toleration two[] = {gpu, spot};

    cr_assert_eq(kp_taints_first_untolerated(taints, 3, NULL, 0), 0);
    cr_assert_eq(kp_taints_first_untolerated(taints, 3, &gpu, 1), 1); /* PreferNoSchedule counts */
    cr_assert_eq(kp_taints_first_untolerated(taints, 3, two, 2), 2);
    cr_assert_not(kp_taints_tolerated(taints, 3, two, 2));
    cr_assert_eq(kp_taints_first_untolerated(taints, 2, two, 2), -1);
    cr_assert(kp_taints_tolerated(taints, 3, &all, 1));
    cr_assert(kp_taints_tolerated(NULL, 0, NULL, 0));
    cr_assert(kp_taints_tolerated(taints, 0, &gpu, 1));
}

Test(taints, match_compares_key_and_effect_only)
{
    kp_taint a = {"foo", "1", NS};
    kp_taint b = {"foo", "2", NS};
    kp_taint c = {"foo", "1", NE};
    kp_taint d = {"bar", "1", NS};
    cr_assert(kp_taint_matches(&a, &b));
    cr_assert_not(kp_taint_matches(&a, &c));
    cr_assert_not(kp_taint_matches(&a, &d));
}

struct ephemeral_case {
    kp_taint taint;
    bool want;
};

Test(taints, known_ephemeral)
{
    static const struct ephemeral_case cases[] = {
        {{"node.kubernetes.io/not-ready", "", NS}, true},
        {{"node.kubernetes.io/not-ready", "", NE}, true},
        {{"node.kubernetes.io/not-ready", "", PNS}, false},
        {{"node.kubernetes.io/unreachable", "", NS}, true},
        {{"node.kubernetes.io/unreachable", "", NE}, false},
        {{"node.cloudprovider.kubernetes.io/uninitialized", "true", NS}, true},
        /* matched like Karpenter, on key and effect: the value does not matter */
        {{"node.cloudprovider.kubernetes.io/uninitialized", "", NS}, true},
        {{"node.cloudprovider.kubernetes.io/uninitialized", "true", NE}, false},
        {{"karpenter.sh/unregistered", "", NE}, true},
        {{"karpenter.sh/unregistered", "", NS}, false},
        {{"readiness.k8s.io/my-rule", "", NS}, true},
        {{"readiness.k8s.io/another", "", NE}, true},
        {{"readiness.k8s.io/", "", PNS}, true},
        {{"readiness.k8s.io", "", NS}, false},
        {{"foo/readiness.k8s.io/bar", "", NS}, false},
        {{"example.com/some-taint", "", NS}, false},
        {{"karpenter.sh/disrupted", "", NS}, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(kp_taint_is_known_ephemeral(&cases[i].taint), cases[i].want, "%s:%s",
                     cases[i].taint.key, kp_taint_effect_name(cases[i].taint.effect));
    cr_assert_not(kp_taint_is_known_ephemeral(NULL));
}

Test(taints, effect_and_operator_names)
{
    cr_assert_eq(kp_taint_effect_parse("NoSchedule"), NS);
    cr_assert_eq(kp_taint_effect_parse("PreferNoSchedule"), PNS);
    cr_assert_eq(kp_taint_effect_parse("NoExecute"), NE);
    cr_assert_eq(kp_taint_effect_parse(""), ANY);
    cr_assert_eq(kp_taint_effect_parse("noschedule"), -1);
    cr_assert_eq(kp_taint_effect_parse("NoScheduleX"), -1);
    for (int e = ANY; e <= NE; e++)
        cr_assert_eq(kp_taint_effect_parse(kp_taint_effect_name((enum kp_taint_effect)e)), e);
    cr_assert_str_eq(kp_taint_effect_name((enum kp_taint_effect)99), "");

    cr_assert_eq(kp_toleration_op_parse(""), EQ);
    cr_assert_eq(kp_toleration_op_parse("Equal"), EQ);
    cr_assert_eq(kp_toleration_op_parse("Exists"), EX);
    cr_assert_eq(kp_toleration_op_parse("Lt"), LT);
    cr_assert_eq(kp_toleration_op_parse("Gt"), GT);
    cr_assert_eq(kp_toleration_op_parse("exists"), -1);
    cr_assert_eq(kp_toleration_op_parse("In"), -1);
    cr_assert_str_eq(kp_toleration_op_name(GT), "Gt");
    cr_assert_str_eq(kp_toleration_op_name(EX), "Exists");
    cr_assert_str_eq(kp_toleration_op_name((enum kp_toleration_op)7), "");
}

/* The lists validation and decoding print as "supported values" are the
 * parse tables themselves, in the API's order and without the empty effect. */
Test(taints, name_lists)
{
    const char *const *effects = kp_taint_effect_names();
    const char *want_effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
    for (size_t i = 0; want_effects[i]; i++) {
        cr_assert_str_eq(effects[i], want_effects[i]);
        cr_assert_eq(kp_taint_effect_parse(effects[i]), (int)i + NS);
    }
    cr_assert_null(effects[3]);
    const char *const *ops = kp_toleration_op_names();
    const char *want_ops[] = {"Equal", "Exists", "Lt", "Gt", NULL};
    for (size_t i = 0; want_ops[i]; i++)
        cr_assert_str_eq(ops[i], want_ops[i]);
    cr_assert_null(ops[4]);
}

Test(taints, format)
{
    char buf[64];
    kp_taint with_value = {"dedicated", "gpu", NS};
    kp_taint without = {"karpenter.sh/disrupted", "", NE};
    cr_assert_str_eq(kp_taint_format(&with_value, buf, sizeof(buf)), "dedicated=gpu:NoSchedule");
    cr_assert_str_eq(kp_taint_format(&without, buf, sizeof(buf)),
                     "karpenter.sh/disrupted:NoExecute");
    kp_taint prefer = {"spot", NULL, PNS};
    cr_assert_str_eq(kp_taint_format(&prefer, buf, sizeof(buf)), "spot:PreferNoSchedule");

    char small[8];
    cr_assert_eq(kp_taint_format(&with_value, small, sizeof(small)), small);
    cr_assert_str_eq(small, "dedicat");
    char untouched[2] = {'x', 'y'};
    kp_taint_format(&with_value, untouched, 0);
    cr_assert_eq(untouched[0], 'x');
}
