/*
 * Tests for shared/api/requirements.c. The operator-pair tables are
 * Karpenter's (pkg/scheduling/requirement_test.go and requirements_test.go),
 * kept as data: the same inputs, and the expected results written the way
 * Karpenter's String() prints them (without the leading "key ").
 */
#include "requirements_fixture.h"

TestSuite(requirement, .init = setup, .fini = teardown);

/* Row `a` intersected with each column `b`, columns in intersect_columns
 * order (with a '*' appended in the table where both sides have minValues).
 * "DNE" abbreviates "DoesNotExist". */
struct intersect_row {
    const char *a;
    const char *want[14];
};

static const char *const intersect_columns[14] = {"ex",   "dne", "inA", "inB",  "inAB",
                                                  "ninA", "in1", "in9", "in19", "nin12",
                                                  "gt1",  "gt9", "lt1", "lt9"};

struct has_row {
    const char *req, *has; /* '+' where the value is allowed */
};

// clang-format off
/* Karpenter: "should intersect two requirements without minValues". */
static const struct intersect_row intersect_plain[] = {
    {"ex", {"Exists", "DNE", "In [A]", "In [B]", "In [A B]", "NotIn [A]", "In [1]", "In [9]",
            "In [1 9]", "NotIn [1 2]", "Exists >=2", "Exists >=10", "Exists <=0", "Exists <=8"}},
    {"dne", {"DNE", "DNE", "DNE", "DNE", "DNE", "DNE", "DNE", "DNE", "DNE", "DNE", "DNE", "DNE",
             "DNE", "DNE"}},
    {"inA", {"In [A]", "DNE", "In [A]", "DNE", "In [A]", "DNE", "DNE", "DNE", "DNE", "In [A]",
             "DNE", "DNE", "DNE", "DNE"}},
    {"inB", {"In [B]", "DNE", "DNE", "In [B]", "In [B]", "In [B]", "DNE", "DNE", "DNE", "In [B]",
             "DNE", "DNE", "DNE", "DNE"}},
    {"inAB", {"In [A B]", "DNE", "In [A]", "In [B]", "In [A B]", "In [B]", "DNE", "DNE", "DNE",
              "In [A B]", "DNE", "DNE", "DNE", "DNE"}},
    {"ninA", {"NotIn [A]", "DNE", "DNE", "In [B]", "In [B]", "NotIn [A]", "In [1]", "In [9]",
              "In [1 9]", "NotIn [1 2 A]", "Exists >=2", "Exists >=10", "Exists <=0",
              "Exists <=8"}},
    {"in1", {"In [1]", "DNE", "DNE", "DNE", "DNE", "In [1]", "In [1]", "DNE", "In [1]", "DNE",
             "DNE", "DNE", "DNE", "In [1]"}},
    {"in9", {"In [9]", "DNE", "DNE", "DNE", "DNE", "In [9]", "DNE", "In [9]", "In [9]", "In [9]",
             "In [9]", "DNE", "DNE", "DNE"}},
    {"in19", {"In [1 9]", "DNE", "DNE", "DNE", "DNE", "In [1 9]", "In [1]", "In [9]", "In [1 9]",
              "In [9]", "In [9]", "DNE", "DNE", "In [1]"}},
    {"nin12", {"NotIn [1 2]", "DNE", "In [A]", "In [B]", "In [A B]", "NotIn [1 2 A]", "DNE",
               "In [9]", "In [9]", "NotIn [1 2]", "NotIn [2] >=2", "Exists >=10", "Exists <=0",
               "NotIn [1 2] <=8"}},
    {"gt1", {"Exists >=2", "DNE", "DNE", "DNE", "DNE", "Exists >=2", "DNE", "In [9]", "In [9]",
             "NotIn [2] >=2", "Exists >=2", "Exists >=10", "DNE", "Exists >=2 <=8"}},
    {"gt9", {"Exists >=10", "DNE", "DNE", "DNE", "DNE", "Exists >=10", "DNE", "DNE", "DNE",
             "Exists >=10", "Exists >=10", "Exists >=10", "DNE", "DNE"}},
    {"lt1", {"Exists <=0", "DNE", "DNE", "DNE", "DNE", "Exists <=0", "DNE", "DNE", "DNE",
             "Exists <=0", "DNE", "DNE", "Exists <=0", "Exists <=0"}},
    {"lt9", {"Exists <=8", "DNE", "DNE", "DNE", "DNE", "Exists <=8", "In [1]", "DNE", "In [1]",
             "NotIn [1 2] <=8", "Exists >=2 <=8", "DNE", "Exists <=0", "Exists <=8"}},
};

/* Karpenter: "should intersect requirement with minValues with a requirement without". */
static const struct intersect_row intersect_mixed[] = {
    {"ex*", {"Exists minValues 1", "DNE minValues 1", "In [A] minValues 1", "In [B] minValues 1",
             "In [A B] minValues 1", "NotIn [A] minValues 1", "In [1] minValues 1",
             "In [9] minValues 1", "In [1 9] minValues 1", "NotIn [1 2] minValues 1",
             "Exists >=2 minValues 1", "Exists >=10 minValues 1", "Exists <=0 minValues 1",
             "Exists <=8 minValues 1"}},
    {"dne*", {"DNE minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"inA*", {"In [A] minValues 1", "DNE minValues 1", "In [A] minValues 1", "DNE minValues 1",
              "In [A] minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "In [A] minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"inB*", {"In [B] minValues 1", "DNE minValues 1", "DNE minValues 1", "In [B] minValues 1",
              "In [B] minValues 1", "In [B] minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "In [B] minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"inAB*", {"In [A B] minValues 2", "DNE minValues 2", "In [A] minValues 2",
               "In [B] minValues 2", "In [A B] minValues 2", "In [B] minValues 2",
               "DNE minValues 2", "DNE minValues 2", "DNE minValues 2", "In [A B] minValues 2",
               "DNE minValues 2", "DNE minValues 2", "DNE minValues 2", "DNE minValues 2"}},
    {"ninA*", {"NotIn [A] minValues 1", "DNE minValues 1", "DNE minValues 1", "In [B] minValues 1",
               "In [B] minValues 1", "NotIn [A] minValues 1", "In [1] minValues 1",
               "In [9] minValues 1", "In [1 9] minValues 1", "NotIn [1 2 A] minValues 1",
               "Exists >=2 minValues 1", "Exists >=10 minValues 1", "Exists <=0 minValues 1",
               "Exists <=8 minValues 1"}},
    {"in1*", {"In [1] minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "In [1] minValues 1", "In [1] minValues 1", "DNE minValues 1",
              "In [1] minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "In [1] minValues 1"}},
    {"in9*", {"In [9] minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "In [9] minValues 1", "DNE minValues 1", "In [9] minValues 1",
              "In [9] minValues 1", "In [9] minValues 1", "In [9] minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"in19*", {"In [1 9] minValues 2", "DNE minValues 2", "DNE minValues 2", "DNE minValues 2",
               "DNE minValues 2", "In [1 9] minValues 2", "In [1] minValues 2",
               "In [9] minValues 2", "In [1 9] minValues 2", "In [9] minValues 2",
               "In [9] minValues 2", "DNE minValues 2", "DNE minValues 2", "In [1] minValues 2"}},
    {"nin12*", {"NotIn [1 2] minValues 2", "DNE minValues 2", "In [A] minValues 2",
                "In [B] minValues 2", "In [A B] minValues 2", "NotIn [1 2 A] minValues 2",
                "DNE minValues 2", "In [9] minValues 2", "In [9] minValues 2",
                "NotIn [1 2] minValues 2", "NotIn [2] >=2 minValues 2", "Exists >=10 minValues 2",
                "Exists <=0 minValues 2", "NotIn [1 2] <=8 minValues 2"}},
    {"gt1*", {"Exists >=2 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "Exists >=2 minValues 1", "DNE minValues 1", "In [9] minValues 1",
              "In [9] minValues 1", "NotIn [2] >=2 minValues 1", "Exists >=2 minValues 1",
              "Exists >=10 minValues 1", "DNE minValues 1", "Exists >=2 <=8 minValues 1"}},
    {"gt9*", {"Exists >=10 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "Exists >=10 minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "Exists >=10 minValues 1", "Exists >=10 minValues 1",
              "Exists >=10 minValues 1", "DNE minValues 1", "DNE minValues 1"}},
    {"lt1*", {"Exists <=0 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "Exists <=0 minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "Exists <=0 minValues 1", "DNE minValues 1", "DNE minValues 1",
              "Exists <=0 minValues 1", "Exists <=0 minValues 1"}},
    {"lt9*", {"Exists <=8 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "Exists <=8 minValues 1", "In [1] minValues 1", "DNE minValues 1",
              "In [1] minValues 1", "NotIn [1 2] <=8 minValues 1", "Exists >=2 <=8 minValues 1",
              "DNE minValues 1", "Exists <=0 minValues 1", "Exists <=8 minValues 1"}},
};

/* Karpenter: "should intersect two requirements with minValues". */
static const struct intersect_row intersect_flexible[] = {
    {"ex*", {"Exists minValues 1", "DNE minValues 1", "In [A] minValues 1", "In [B] minValues 1",
             "In [A B] minValues 2", "NotIn [A] minValues 1", "In [1] minValues 1",
             "In [9] minValues 1", "In [1 9] minValues 2", "NotIn [1 2] minValues 2",
             "Exists >=2 minValues 1", "Exists >=10 minValues 1", "Exists <=0 minValues 1",
             "Exists <=8 minValues 1"}},
    {"dne*", {"DNE minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "DNE minValues 2", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"inA*", {"In [A] minValues 1", "DNE minValues 1", "In [A] minValues 1", "DNE minValues 1",
              "In [A] minValues 2", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "In [A] minValues 2", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"inB*", {"In [B] minValues 1", "DNE minValues 1", "DNE minValues 1", "In [B] minValues 1",
              "In [B] minValues 2", "In [B] minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "In [B] minValues 2", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"inAB*", {"In [A B] minValues 2", "DNE minValues 2", "In [A] minValues 2",
               "In [B] minValues 2", "In [A B] minValues 2", "In [B] minValues 2",
               "DNE minValues 2", "DNE minValues 2", "DNE minValues 2", "In [A B] minValues 2",
               "DNE minValues 2", "DNE minValues 2", "DNE minValues 2", "DNE minValues 2"}},
    {"ninA*", {"NotIn [A] minValues 1", "DNE minValues 1", "DNE minValues 1", "In [B] minValues 1",
               "In [B] minValues 2", "NotIn [A] minValues 1", "In [1] minValues 1",
               "In [9] minValues 1", "In [1 9] minValues 2", "NotIn [1 2 A] minValues 2",
               "Exists >=2 minValues 1", "Exists >=10 minValues 1", "Exists <=0 minValues 1",
               "Exists <=8 minValues 1"}},
    {"in1*", {"In [1] minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "In [1] minValues 1", "In [1] minValues 1", "DNE minValues 1",
              "In [1] minValues 2", "DNE minValues 2", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 1", "In [1] minValues 1"}},
    {"in9*", {"In [9] minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "In [9] minValues 1", "DNE minValues 1", "In [9] minValues 1",
              "In [9] minValues 2", "In [9] minValues 2", "In [9] minValues 1", "DNE minValues 1",
              "DNE minValues 1", "DNE minValues 1"}},
    {"in19*", {"In [1 9] minValues 2", "DNE minValues 2", "DNE minValues 2", "DNE minValues 2",
               "DNE minValues 2", "In [1 9] minValues 2", "In [1] minValues 2",
               "In [9] minValues 2", "In [1 9] minValues 2", "In [9] minValues 2",
               "In [9] minValues 2", "DNE minValues 2", "DNE minValues 2", "In [1] minValues 2"}},
    {"nin12*", {"NotIn [1 2] minValues 2", "DNE minValues 2", "In [A] minValues 2",
                "In [B] minValues 2", "In [A B] minValues 2", "NotIn [1 2 A] minValues 2",
                "DNE minValues 2", "In [9] minValues 2", "In [9] minValues 2",
                "NotIn [1 2] minValues 2", "NotIn [2] >=2 minValues 2", "Exists >=10 minValues 2",
                "Exists <=0 minValues 2", "NotIn [1 2] <=8 minValues 2"}},
    {"gt1*", {"Exists >=2 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "Exists >=2 minValues 1", "DNE minValues 1", "In [9] minValues 1",
              "In [9] minValues 2", "NotIn [2] >=2 minValues 2", "Exists >=2 minValues 1",
              "Exists >=10 minValues 1", "DNE minValues 1", "Exists >=2 <=8 minValues 1"}},
    {"gt9*", {"Exists >=10 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "Exists >=10 minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "Exists >=10 minValues 2", "Exists >=10 minValues 1",
              "Exists >=10 minValues 1", "DNE minValues 1", "DNE minValues 1"}},
    {"lt1*", {"Exists <=0 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "Exists <=0 minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "Exists <=0 minValues 2", "DNE minValues 1", "DNE minValues 1",
              "Exists <=0 minValues 1", "Exists <=0 minValues 1"}},
    {"lt9*", {"Exists <=8 minValues 1", "DNE minValues 1", "DNE minValues 1", "DNE minValues 1",
              "DNE minValues 2", "Exists <=8 minValues 1", "In [1] minValues 1", "DNE minValues 1",
              "In [1] minValues 2", "NotIn [1 2] <=8 minValues 2", "Exists >=2 <=8 minValues 1",
              "DNE minValues 1", "Exists <=0 minValues 1", "Exists <=8 minValues 1"}},
};

/* Karpenter: "should have the right values"; columns A B 1 2 9. */
static const struct has_row has_table[] = {
    {"ex", "+++++"},
    {"dne", "-----"},
    {"inA", "+----"},
    {"inB", "-+---"},
    {"inAB", "++---"},
    {"ninA", "-++++"},
    {"in1", "--+--"},
    {"in9", "----+"},
    {"in19", "--+-+"},
    {"nin12", "++--+"},
    {"gt1", "---++"},
    {"gt9", "-----"},
    {"lt1", "-----"},
    {"lt9", "--++-"},
};


static void check_intersection(const char *a_name, const char *b_name, const char *expected)
{
    kp_requirement a = named(a_name), b = named(b_name), r;
    const char *a_before = str(&a), *b_before = str(&b);
    kp_requirement_intersect(&r, st, arena, &a, &b);
    char want[128];
    bool dne = strncmp(expected, "DNE", 3) == 0;
    snprintf(want, sizeof(want), "key %s%s", dne ? "DoesNotExist" : "", expected + (dne ? 3 : 0));
    cr_expect_str_eq(str(&r), want, "%s AND %s", a_name, b_name);
    cr_expect_eq(r.key, a.key);
    assert_well_formed(&r);
    /* Inputs are left alone. */
    cr_expect_str_eq(str(&a), a_before);
    cr_expect_str_eq(str(&b), b_before);
    /* The allocation-free check agrees with the built result, both ways. */
    bool nonempty = kp_requirement_operator(&r) != KP_OP_DOES_NOT_EXIST;
    cr_expect_eq(kp_requirement_intersects(st, &a, &b), nonempty, "%s ~ %s", a_name, b_name);
    cr_expect_eq(kp_requirement_intersects(st, &b, &a), nonempty, "%s ~ %s", b_name, a_name);
}

static void check_intersections(const struct intersect_row *rows, size_t n, bool flexible_b)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 14; j++) {
            char b[16];
            snprintf(b, sizeof(b), "%s%s", intersect_columns[j], flexible_b ? "*" : "");
            check_intersection(rows[i].a, b, rows[i].want[j]);
        }
    }
}

Test(requirement, intersect_without_min_values)
{
    check_intersections(intersect_plain, COUNT(intersect_plain), false);
}

Test(requirement, intersect_with_min_values_on_one_side)
{
    check_intersections(intersect_mixed, COUNT(intersect_mixed), false);
}

Test(requirement, intersect_with_min_values_on_both_sides)
{
    check_intersections(intersect_flexible, COUNT(intersect_flexible), true);
}

Test(requirement, has)
{
    static const char *const values[] = {"A", "B", "1", "2", "9"};
    for (size_t i = 0; i < COUNT(has_table); i++) {
        kp_requirement r = named(has_table[i].req);
        for (size_t v = 0; v < 5; v++) {
            bool want = has_table[i].has[v] == '+';
            kp_sym sym = kp_sym_intern(st, values[v]);
            cr_expect_eq(kp_requirement_has(st, &r, sym), want, "%s has %s", has_table[i].req,
                         values[v]);
        }
    }
}

/* Karpenter: "should return the right operator", "should have the correct
 * length" and "should print the right string". */
Test(requirement, operator_len_and_string)
{
    static const struct {
        const char *req;
        enum kp_selector_op op;
        size_t len;
        const char *string;
    } cases[] = {
        {"ex", KP_OP_EXISTS, SIZE_MAX, "key Exists"},
        {"dne", KP_OP_DOES_NOT_EXIST, 0, "key DoesNotExist"},
        {"inA", KP_OP_IN, 1, "key In [A]"},
        {"inB", KP_OP_IN, 1, "key In [B]"},
        {"inAB", KP_OP_IN, 2, "key In [A B]"},
        {"ninA", KP_OP_NOT_IN, SIZE_MAX, "key NotIn [A]"},
        {"in1", KP_OP_IN, 1, "key In [1]"},
        {"in9", KP_OP_IN, 1, "key In [9]"},
        {"in19", KP_OP_IN, 2, "key In [1 9]"},
        {"nin12", KP_OP_NOT_IN, SIZE_MAX, "key NotIn [1 2]"},
        {"gt1", KP_OP_EXISTS, SIZE_MAX, "key Exists >=2"},
        {"gt9", KP_OP_EXISTS, SIZE_MAX, "key Exists >=10"},
        {"lt1", KP_OP_EXISTS, SIZE_MAX, "key Exists <=0"},
        {"lt9", KP_OP_EXISTS, SIZE_MAX, "key Exists <=8"},
        {"inAB*", KP_OP_IN, 2, "key In [A B] minValues 2"},
        {"gt1*", KP_OP_EXISTS, SIZE_MAX, "key Exists >=2 minValues 1"},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        kp_requirement r = named(cases[i].req);
        cr_expect_eq(kp_requirement_operator(&r), cases[i].op, "%s", cases[i].req);
        cr_expect_eq(kp_requirement_len(&r), cases[i].len, "%s", cases[i].req);
        cr_expect_str_eq(str(&r), cases[i].string);
    }
    kp_requirement gt1 = named("gt1"), lt9 = named("lt9"), gt9 = named("gt9"), lt1 = named("lt1");
    kp_requirement r;
    kp_requirement_intersect(&r, st, arena, &gt1, &lt9);
    cr_expect_str_eq(str(&r), "key Exists >=2 <=8");
    kp_requirement_intersect(&r, st, arena, &gt9, &lt1);
    cr_expect_str_eq(str(&r), "key DoesNotExist");
}

Test(requirement, string_lists_five_values_sorted_by_string)
{
    /* Interned in an order unlike the string order: symbol ids must not leak. */
    const char *vals[] = {"z", "h", "b", "y", "a", "c", "x", "g"};
    kp_requirement r = make("key", KP_OP_IN, vals, 8, 0);
    cr_expect_str_eq(str(&r), "key In [a b c g h and 3 others]");
    kp_requirement n = make("key", KP_OP_NOT_IN, vals, 6, 3);
    cr_expect_str_eq(str(&n), "key NotIn [a b c h y and 1 others] minValues 3");
    const char *ten[] = {"10", "9", "1", "100", "2"};
    kp_requirement t = make("key", KP_OP_IN, ten, 5, 0);
    cr_expect_str_eq(str(&t), "key In [1 10 100 2 9]");
    /* A complement with values and a bound prints as NotIn with the bound. */
    kp_requirement nin12 = named("nin12"), gt1 = named("gt1"), both;
    kp_requirement_intersect(&both, st, arena, &nin12, &gt1);
    cr_expect_str_eq(str(&both), "key NotIn [2] >=2");
}

/* Karpenter: "Gte and Lte Operators". */
Test(requirement, gte_and_lte)
{
    const char *two[] = {"2"}, *eight[] = {"8"}, *four[] = {"4"}, *five[] = {"5"};
    const char *zero[] = {"0"};
    kp_requirement gte2 = make("key", KP_OP_GTE, two, 1, 0);
    kp_requirement lte8 = make("key", KP_OP_LTE, eight, 1, 0);
    static const struct {
        const char *v;
        bool gte2, lte8, both;
    } cases[] = {
        {"0", false, true, false},   {"1", false, true, false},  {"2", true, true, true},
        {"3", true, true, true},     {"5", true, true, true},    {"7", true, true, true},
        {"8", true, true, true},     {"9", true, false, false},  {"10", true, false, false},
        {"100", true, false, false}, {"A", false, false, false}, {"+5", true, true, true},
    };
    kp_requirement both;
    kp_requirement_intersect(&both, st, arena, &gte2, &lte8);
    for (size_t i = 0; i < COUNT(cases); i++) {
        kp_sym v = kp_sym_intern(st, cases[i].v);
        cr_expect_eq(kp_requirement_has(st, &gte2, v), cases[i].gte2, "gte2 has %s", cases[i].v);
        cr_expect_eq(kp_requirement_has(st, &lte8, v), cases[i].lte8, "lte8 has %s", cases[i].v);
        cr_expect_eq(kp_requirement_has(st, &both, v), cases[i].both, "both has %s", cases[i].v);
    }
    /* Redundant bounds collapse to the tighter one. */
    kp_requirement gt4 = make("key", KP_OP_GT, four, 1, 0),
                   gte5 = make("key", KP_OP_GTE, five, 1, 0);
    kp_requirement gt5 = make("key", KP_OP_GT, five, 1, 0), lt5 = make("key", KP_OP_LT, five, 1, 0);
    kp_requirement lte5 = make("key", KP_OP_LTE, five, 1, 0), r;
    kp_requirement_intersect(&r, st, arena, &gt4, &gte5);
    cr_expect_str_eq(str(&r), "key Exists >=5");
    kp_requirement_intersect(&r, st, arena, &gt5, &gte5);
    cr_expect_str_eq(str(&r), "key Exists >=6");
    kp_requirement_intersect(&r, st, arena, &lt5, &lte5);
    cr_expect_str_eq(str(&r), "key Exists <=4");
    kp_requirement gte0 = make("key", KP_OP_GTE, zero, 1, 0);
    cr_expect(kp_requirement_has(st, &gte0, kp_sym_intern(st, "0")));
    cr_expect_not(kp_requirement_has(st, &gte0, kp_sym_intern(st, "-1")));
    kp_requirement lte0 = make("key", KP_OP_LTE, zero, 1, 0);
    cr_expect(kp_requirement_has(st, &lte0, kp_sym_intern(st, "-0")));
    cr_expect_not(kp_requirement_has(st, &lte0, kp_sym_intern(st, "1")));
}

Test(requirement, gt_max_and_lt_min_match_nothing)
{
    const char *max[] = {"9223372036854775807"}, *min[] = {"-9223372036854775808"};
    kp_requirement gt = make("key", KP_OP_GT, max, 1, 3);
    cr_expect_eq(kp_requirement_operator(&gt), KP_OP_DOES_NOT_EXIST);
    cr_expect_eq(kp_requirement_len(&gt), 0);
    cr_expect_str_eq(str(&gt), "key DoesNotExist", "Karpenter drops minValues here");
    kp_requirement lt = make("key", KP_OP_LT, min, 1, 0);
    cr_expect_str_eq(str(&lt), "key DoesNotExist");
    kp_requirement gte = make("key", KP_OP_GTE, max, 1, 0);
    cr_expect_str_eq(str(&gte), "key Exists >=9223372036854775807");
    cr_expect(kp_requirement_has(st, &gte, kp_sym_intern(st, max[0])));
    kp_requirement lte = make("key", KP_OP_LTE, min, 1, 0);
    cr_expect_str_eq(str(&lte), "key Exists <=-9223372036854775808");
    kp_requirement gtneg = make("key", KP_OP_GT, min, 1, 0);
    cr_expect_str_eq(str(&gtneg), "key Exists >=-9223372036854775807");
}

Test(requirement, min_values)
{
    const char *five[] = {"5"}, *two[] = {"2"}, *abc[] = {"a", "b", "c"};
    kp_requirement gte5 = make("key", KP_OP_GTE, five, 1, 3);
    kp_requirement lte2 = make("key", KP_OP_LTE, two, 1, 1), r;
    /* Empty bounds give DoesNotExist, keeping the larger minValues. */
    kp_requirement_intersect(&r, st, arena, &lte2, &gte5);
    cr_expect_str_eq(str(&r), "key DoesNotExist minValues 3");
    cr_expect_not(r.has_gte || r.has_lte);
    kp_requirement in = make("key", KP_OP_IN, abc, 3, 2), ex = named("ex*");
    kp_requirement_intersect(&r, st, arena, &ex, &in);
    cr_expect_eq(r.min_values, 2);
    kp_requirement_intersect(&r, st, arena, &in, &ex);
    cr_expect_eq(r.min_values, 2);
    kp_requirement plain = named("ex");
    cr_expect_eq(plain.min_values, 0);
}

static void expect_invalid(const char *key, enum kp_selector_op op, const char *const *values,
                           size_t n, int32_t min_values, const char *needle)
{
    kp_requirement r;
    memset(&r, 0xab, sizeof(r));
    kp_requirement before = r;
    kp_error_clear();
    int err = kp_requirement_new(&r, st, arena, key, op, values, n, min_values);
    cr_expect_eq(err, KP_EINVALID, "%s %d: want KP_EINVALID, got %d", key, (int)op, err);
    cr_expect(strstr(kp_error_last(), needle) != NULL, "message \"%s\" lacks \"%s\"",
              kp_error_last(), needle);
    cr_expect(memcmp(&r, &before, sizeof(r)) == 0, "output untouched on failure");
}

Test(requirement, malformed_construction)
{
    const char *one[] = {"1"}, *two[] = {"1", "2"}, *word[] = {"abc"}, *huge[] = {"1e3"};
    const char *big[] = {"9223372036854775808"}, *null_value[] = {NULL};
    expect_invalid("k", KP_OP_GT, word, 1, 0, "integer");
    expect_invalid("k", KP_OP_GT, huge, 1, 0, "integer");
    expect_invalid("k", KP_OP_LT, big, 1, 0, "integer");
    expect_invalid("k", KP_OP_GTE, word, 1, 0, "integer");
    expect_invalid("k", KP_OP_GT, two, 2, 0, "exactly one value");
    expect_invalid("k", KP_OP_LT, NULL, 0, 0, "exactly one value");
    expect_invalid("k", KP_OP_LTE, two, 2, 0, "exactly one value");
    expect_invalid("k", KP_OP_IN, NULL, 0, 0, "at least one value");
    expect_invalid("k", KP_OP_EXISTS, one, 1, 0, "takes no values");
    expect_invalid("k", KP_OP_DOES_NOT_EXIST, one, 1, 0, "takes no values");
    expect_invalid("k", (enum kp_selector_op)42, one, 1, 0, "unsupported operator");
    expect_invalid("k", KP_OP_IN, null_value, 1, 0, "missing");
    expect_invalid("k", KP_OP_IN, one, 1, -1, "minValues");
    expect_invalid(NULL, KP_OP_EXISTS, NULL, 0, 0, "no key");
}

Test(requirement, construction_details)
{
    const char *dup[] = {"b", "a", "b", "a"};
    kp_requirement r = make("key", KP_OP_IN, dup, 4, 0);
    cr_expect_eq(r.n_values, 2, "duplicates fold");
    assert_well_formed(&r);
    kp_requirement nin = make("key", KP_OP_NOT_IN, NULL, 0, 0);
    cr_expect_eq(kp_requirement_operator(&nin), KP_OP_EXISTS, "NotIn [] is Exists");
    static const char *const names[] = {"inA", "inAB", "ninA", "ex", "dne"};
    for (size_t i = 0; i < COUNT(names); i++) {
        kp_requirement n = named(names[i]);
        kp_sym want = i == 0 ? kp_sym_lookup(st, "A") : KP_SYM_NONE;
        cr_expect_eq(kp_requirement_single_value(&n), want, "%s", names[i]);
    }
}

Test(requirement, operator_names)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist",
                                        "Gt", "Lt",    "Gte",    "Lte"};
    cr_assert_eq(KP_SELECTOR_OP_COUNT, 8);
    for (int op = 0; op < 8; op++) {
        cr_expect_eq(kp_selector_op_parse(names[op]), op);
        cr_expect_str_eq(kp_selector_op_name((enum kp_selector_op)op), names[op]);
        cr_expect_str_eq(kp_selector_op_names()[op], names[op]);
    }
    cr_expect_null(kp_selector_op_names()[8]);
    cr_expect_eq(kp_selector_op_parse("in"), -1);
    cr_expect_eq(kp_selector_op_parse("Equals"), -1);
    cr_expect_eq(kp_selector_op_parse(""), -1);
    cr_expect_eq(kp_selector_op_parse(NULL), -1);
    cr_expect_str_eq(kp_selector_op_name((enum kp_selector_op)99), "");
}

Test(requirement, key_normalisation)
{
    static const struct {
        const char *alias, *key;
    } cases[] = {
        {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"},
        {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
        {"beta.kubernetes.io/arch", "kubernetes.io/arch"},
        {"beta.kubernetes.io/os", "kubernetes.io/os"},
        {"beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type"},
    };
    kp_requirements labels, selector;
    kp_requirements_init(&labels);
    kp_requirements_init(&selector);
    const char *test[] = {"test"};
    for (size_t i = 0; i < COUNT(cases); i++) {
        kp_requirement r = make(cases[i].alias, KP_OP_IN, test, 1, 0);
        cr_expect_str_eq(kp_sym_str(st, r.key), cases[i].key);
        kp_requirements_add(&selector, st, arena, &r);
        kp_requirements_add_label(&labels, st, arena, cases[i].alias, "test");
    }
    for (kp_requirements *set = &labels; set; set = set == &labels ? &selector : NULL) {
        cr_expect_eq(set->count, 5);
        for (size_t i = 0; i < COUNT(cases); i++) {
            cr_expect_eq(kp_sym_lookup(st, cases[i].alias), KP_SYM_NONE, "alias never interned");
            const kp_requirement *r = kp_requirements_get(set, kp_sym_lookup(st, cases[i].key));
            cr_assert_not_null(r, "%s", cases[i].key);
            cr_expect(kp_requirement_has(st, r, kp_sym_lookup(st, "test")));
        }
    }
}

