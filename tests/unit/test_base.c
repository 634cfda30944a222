#include <criterion/criterion.h>
#include <string.h>

#include "api/field_errors.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/path.h"
#include "helpers/assert.h"

Test(arena, allocations_are_aligned_and_distinct)
{
    kp_arena *a = kp_arena_new();
    char *p = kp_arena_alloc(a, 3);
    char *q = kp_arena_alloc(a, 5);
    cr_assert_neq(p, q);
    cr_assert_eq((uintptr_t)q % 16, 0);
    memset(p, 'x', 3);
    memset(q, 'y', 5);
    cr_assert_eq(p[2], 'x');
    cr_assert_geq(kp_arena_used(a), 8);
    cr_assert_null(kp_arena_free(a));
}

Test(arena, large_blocks_and_strings)
{
    kp_arena *a = kp_arena_new();
    char *big = kp_arena_calloc(a, 1, 1 << 20);
    cr_assert_eq(big[(1 << 20) - 1], 0);
    cr_assert_str_eq(kp_arena_strdup(a, "hello"), "hello");
    cr_assert_str_eq(kp_arena_strndup(a, "hello", 2), "he");
    cr_assert_str_eq(kp_arena_printf(a, "%d-%s", 42, "x"), "42-x");
    cr_assert_null(kp_arena_strdup(a, NULL));
    int src[3] = {1, 2, 3};
    int *grown = kp_arena_grow(a, src, 3, 6, sizeof(int));
    cr_assert_eq(grown[2], 3);
    cr_assert_eq(grown[5], 0);
    kp_arena_free(a);
    cr_assert_null(kp_arena_free(NULL));
}

Test(arena, join_is_as_long_as_its_parts)
{
    kp_arena *a = kp_arena_new();
    const char *items[] = {"a", "", "ccc"};
    cr_assert_str_eq(kp_arena_join(a, items, 3, ", "), "a, , ccc");
    cr_assert_str_eq(kp_arena_join(a, items, 1, ", "), "a");
    cr_assert_str_eq(kp_arena_join(a, items, 0, ", "), "");
    char *long_item = kp_arena_calloc(a, 1, 100001);
    memset(long_item, 'x', 100000);
    const char *two[] = {long_item, long_item};
    cr_assert_eq(strlen(kp_arena_join(a, two, 2, "-")), 200001, "no cap: nothing is cut");
    kp_arena_free(a);
}

Test(buf, appends_until_cap_then_refuses)
{
    kp_buf b = KP_BUF_INIT(8);
    cr_assert_eq(kp_buf_puts(&b, "12345"), 0);
    cr_assert_eq(kp_buf_puts(&b, "678"), 0);
    cr_assert_eq(kp_buf_putc(&b, '9'), KP_ETOOLARGE);
    cr_assert_str_eq(kp_buf_cstr(&b), "12345678");
    cr_assert(strstr(kp_error_last(), "8 bytes"));
    kp_buf_free(&b);
}

Test(buf, printf_and_json_strings)
{
    kp_buf b = KP_BUF_INIT(1024);
    KP_ASSERT_OK(kp_buf_printf(&b, "%s=%d ", "n", 7));
    KP_ASSERT_OK(kp_buf_json_string(&b, "a\"b\\c\n\x01"));
    cr_assert_str_eq(kp_buf_cstr(&b), "n=7 \"a\\\"b\\\\c\\n\\u0001\"");
    char *s = kp_buf_detach(&b);
    cr_assert_eq(b.len, 0);
    free(s);
    kp_buf_free(&b);
}

Test(error, set_wrap_and_names)
{
    cr_assert_eq(kp_error_set(KP_EINVALID, "bad %s", "thing"), KP_EINVALID);
    kp_error_wrap(KP_EINVALID, "reading %s", "x.yaml");
    cr_assert_str_eq(kp_error_last(), "reading x.yaml: bad thing");
    kp_error_clear();
    cr_assert_str_eq(kp_error_last(), "");
    cr_assert_str_eq(kp_error_name(KP_ENOTFOUND), "not found");
}

Test(path, renders_kubernetes_field_paths)
{
    kp_path p;
    kp_path_init(&p, NULL);
    kp_path_push_field(&p, "spec");
    kp_path_push_field(&p, "requirements");
    kp_path_push_index(&p, 2);
    kp_path_push_field(&p, "values");
    cr_assert_str_eq(kp_path_cstr(&p), "spec.requirements[2].values");
    kp_path_pop(&p);
    kp_path_pop(&p);
    kp_path_push_key(&p, "app");
    cr_assert_str_eq(kp_path_cstr(&p), "spec.requirements[app]");
}

Test(path, truncates_instead_of_overflowing)
{
    kp_path p;
    char name[200];
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    kp_path_init(&p, "root");
    for (int i = 0; i < 10; i++)
        kp_path_push_field(&p, name);
    cr_assert(strlen(kp_path_cstr(&p)) < KP_PATH_MAX);
    cr_assert(strstr(kp_path_cstr(&p), "..."));
    for (int i = 0; i < 10; i++)
        kp_path_pop(&p);
    cr_assert_str_eq(kp_path_cstr(&p), "root");
}

Test(field_errors, render_like_kubernetes)
{
    kp_arena *a = kp_arena_new();
    kp_field_errors errs;
    kp_field_errors_init(&errs, a);
    kp_field_errors_invalid_str(&errs, "spec.weight", "x\"y", "must be a number");
    cr_assert_str_eq(kp_field_errors_string(a, &errs),
                     "spec.weight: Invalid value: \"x\\\"y\": must be a number");
    kp_field_errors_required(&errs, "spec.template", NULL);
    kp_field_errors_add(&errs, KP_FIELD_NOT_SUPPORTED, "spec.op", "\"Foo\"",
                        "supported values: %s", "\"In\", \"NotIn\"");
    cr_assert_str_eq(kp_field_errors_string(a, &errs),
                     "[spec.weight: Invalid value: \"x\\\"y\": must be a number, "
                     "spec.template: Required value, "
                     "spec.op: Unsupported value: \"Foo\": supported values: \"In\", \"NotIn\"]");
    kp_arena_free(a);
}

Test(clock, rfc3339_round_trip_and_errors)
{
    int64_t ns;
    char out[32];
    cr_assert_eq(kp_time_parse_rfc3339("2026-11-21T10:00:00Z", &ns), 0);
    kp_time_format_rfc3339(ns, out, sizeof(out));
    cr_assert_str_eq(out, "2026-11-21T10:00:00Z");
    cr_assert_eq(kp_time_parse_rfc3339("2026-11-21T12:00:00.5+02:00", &ns), 0);
    kp_time_format_rfc3339(ns, out, sizeof(out));
    cr_assert_str_eq(out, "2026-11-21T10:00:00Z");
    cr_assert_eq(ns % KP_NS_PER_SEC, 500000000);
    cr_assert_eq(kp_time_parse_rfc3339("2026-13-01T00:00:00Z", &ns), KP_EINVALID);
    cr_assert_eq(kp_time_parse_rfc3339("2026-11-21", &ns), KP_EINVALID);
    cr_assert_eq(kp_time_parse_rfc3339("2026-11-21T10:00:00", &ns), KP_EINVALID);
}

Test(clock, fake_clock_stands_still)
{
    kp_fake_clock c;
    kp_fake_clock_init(&c, 42);
    cr_assert_eq(c.base.now(&c.base), 42);
    c.ns += 10;
    cr_assert_eq(c.base.monotonic(&c.base), 52);
}

Test(arena, rewind_frees_what_came_after_the_mark)
{
    kp_arena *a = kp_arena_new();
    char *keep = kp_arena_strdup(a, "keep");
    kp_arena_mark m = kp_arena_mark_get(a);
    size_t used = kp_arena_used(a);
    for (int i = 0; i < 1000; i++)
        kp_arena_alloc(a, (size_t)(i % 7 == 0 ? 40000 : 100));
    cr_assert_gt(kp_arena_used(a), used);
    kp_arena_rewind(a, m);
    cr_assert_eq(kp_arena_used(a), used);
    cr_assert_str_eq(keep, "keep");
    char *again = kp_arena_strdup(a, "again");
    cr_assert_str_eq(again, "again");
    kp_arena_free(a);
}
