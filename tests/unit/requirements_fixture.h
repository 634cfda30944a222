/*
 * Shared fixtures of test_requirement.c and test_requirements.c: a symbol
 * table and arena per test, and Karpenter's named test requirements.
 */
#ifndef KP_TEST_REQUIREMENTS_FIXTURE_H
#define KP_TEST_REQUIREMENTS_FIXTURE_H

#include "api/requirements.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static kp_symtab *st;
static kp_arena *arena;

__attribute__((unused)) static void setup(void)
{
    st = kp_symtab_new();
    arena = kp_arena_new();
}

__attribute__((unused)) static void teardown(void)
{
    st = kp_symtab_free(st);
    arena = kp_arena_free(arena);
}


/* Karpenter's test requirements; a trailing '*' marks the variant built with
 * minValues (its "...OperatorWithFlexibility"). */
static const struct named_req {
    const char *name;
    enum kp_selector_op op;
    const char *values[2];
    size_t n;
    int32_t min_values;
} named_reqs[] = {
    {"ex", KP_OP_EXISTS, {NULL}, 0, 0},    {"dne", KP_OP_DOES_NOT_EXIST, {NULL}, 0, 0},
    {"inA", KP_OP_IN, {"A"}, 1, 0},        {"inB", KP_OP_IN, {"B"}, 1, 0},
    {"inAB", KP_OP_IN, {"A", "B"}, 2, 0},  {"ninA", KP_OP_NOT_IN, {"A"}, 1, 0},
    {"in1", KP_OP_IN, {"1"}, 1, 0},        {"in9", KP_OP_IN, {"9"}, 1, 0},
    {"in19", KP_OP_IN, {"1", "9"}, 2, 0},  {"nin12", KP_OP_NOT_IN, {"1", "2"}, 2, 0},
    {"gt1", KP_OP_GT, {"1"}, 1, 0},        {"gt9", KP_OP_GT, {"9"}, 1, 0},
    {"lt1", KP_OP_LT, {"1"}, 1, 0},        {"lt9", KP_OP_LT, {"9"}, 1, 0},
    {"ex*", KP_OP_EXISTS, {NULL}, 0, 1},   {"dne*", KP_OP_DOES_NOT_EXIST, {NULL}, 0, 1},
    {"inA*", KP_OP_IN, {"A"}, 1, 1},       {"inB*", KP_OP_IN, {"B"}, 1, 1},
    {"inAB*", KP_OP_IN, {"A", "B"}, 2, 2}, {"ninA*", KP_OP_NOT_IN, {"A"}, 1, 1},
    {"in1*", KP_OP_IN, {"1"}, 1, 1},       {"in9*", KP_OP_IN, {"9"}, 1, 1},
    {"in19*", KP_OP_IN, {"1", "9"}, 2, 2}, {"nin12*", KP_OP_NOT_IN, {"1", "2"}, 2, 2},
    {"gt1*", KP_OP_GT, {"1"}, 1, 1},       {"gt9*", KP_OP_GT, {"9"}, 1, 1},
    {"lt1*", KP_OP_LT, {"1"}, 1, 1},       {"lt9*", KP_OP_LT, {"9"}, 1, 1},
};

__attribute__((unused)) static kp_requirement named_on(const char *name, const char *key)
{
    kp_requirement r;
    for (size_t i = 0; i < COUNT(named_reqs); i++) {
        const struct named_req *n = &named_reqs[i];
        if (strcmp(n->name, name) != 0) continue;
        int err = kp_requirement_new(&r, st, arena, key, n->op, n->values, n->n, n->min_values);
        cr_assert_eq(err, 0, "%s: %s", name, kp_error_last());
        return r;
    }
    cr_assert_fail("no requirement named %s", name);
    return r;
}

__attribute__((unused)) static kp_requirement named(const char *name)
{
    return named_on(name, "key");
}

__attribute__((unused)) static const char *str(const kp_requirement *r)
{
    return kp_requirement_string(st, arena, r);
}

__attribute__((unused)) static kp_requirement make(const char *key, enum kp_selector_op op, const char *const *values,
                           size_t n, int32_t min_values)
{
    kp_requirement r;
    int err = kp_requirement_new(&r, st, arena, key, op, values, n, min_values);
    cr_assert_eq(err, 0, "%s: %s", key, kp_error_last());
    return r;
}


/* Values sorted ascending and unique: what every check relies on. */
__attribute__((unused)) static void assert_well_formed(const kp_requirement *r)
{
    for (uint32_t i = 1; i < r->n_values; i++)
        cr_assert_lt(r->values[i - 1], r->values[i], "values out of order");
    cr_assert(r->n_values == 0 || r->values != NULL);
}

#endif
