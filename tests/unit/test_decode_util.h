/*
 * Helpers for the decode test suites: fixtures from tests/unit/data/decode,
 * JSON written with single quotes (so table rows stay readable in C), and a
 * table runner for decode errors.
 */
#ifndef KP_TEST_DECODE_UTIL_H
#define KP_TEST_DECODE_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "base/arena.h"
#include "base/error.h"

/* Parse JSON written with ' for ". */
static inline cJSON *sq_json(const char *text)
{
    char *copy = strdup(text);
    for (char *p = copy; *p; p++) {
        if (*p == '\'') *p = '"';
    }
    cJSON *json = cJSON_Parse(copy);
    free(copy);
    cr_assert_not_null(json, "test JSON does not parse: %s", text);
    return json;
}

static inline cJSON *load_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/unit/data/decode/%s", KP_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open fixture %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = '\0';
    cJSON *json = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(json, "fixture %s does not parse", name);
    return json;
}

/* Decode a fixture with kp_decode_object, asserting success. */
static inline void decode_fixture(kp_arena *arena, const char *name, kp_object *out)
{
    cJSON *json = load_fixture(name);
    int err = kp_decode_object(arena, json, out);
    cJSON_Delete(json);
    cr_assert_eq(err, 0, "decoding %s: %s", name, kp_error_last());
}

/* One expected decode failure: the body (single-quoted JSON, apiVersion and
 * kind added by the runner) and the exact message; a message ending in "..."
 * is matched as a prefix. */
typedef struct decode_error_case {
    const char *json;
    const char *message;
} decode_error_case;

static inline bool message_matches(const char *got, const char *want)
{
    size_t n = strlen(want);
    if (n > 3 && strcmp(want + n - 3, "...") == 0) return strncmp(got, want, n - 3) == 0;
    return strcmp(got, want) == 0;
}

/* Run every row; returns how many rows ran (each row checked with cr_expect). */
static inline size_t run_error_cases(const char *api_version, const char *kind,
                                     const decode_error_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kp_arena *arena = kp_arena_new();
        cJSON *json = sq_json(cases[i].json);
        if (!cJSON_GetObjectItemCaseSensitive(json, "apiVersion"))
            cJSON_AddStringToObject(json, "apiVersion", api_version);
        if (!cJSON_GetObjectItemCaseSensitive(json, "kind"))
            cJSON_AddStringToObject(json, "kind", kind);
        kp_object obj;
        kp_error_clear();
        int err = kp_decode_object(arena, json, &obj);
        cr_expect_eq(err, KP_EINVALID, "row %zu (%s): expected KP_EINVALID, got %d", i,
                     cases[i].json, err);
        cr_expect(message_matches(kp_error_last(), cases[i].message),
                  "row %zu (%s):\n  want: %s\n  got:  %s", i, cases[i].json, cases[i].message,
                  kp_error_last());
        cJSON_Delete(json);
        kp_arena_free(arena);
    }
    return n;
}

#define RUN_ERROR_CASES(api_version, kind, cases)                                                  \
    run_error_cases((api_version), (kind), (cases), sizeof(cases) / sizeof((cases)[0]))

/* Decode single-quoted JSON with kp_decode_object; asserts success. */
static inline void decode_sq(kp_arena *arena, const char *text, kp_object *out)
{
    cJSON *json = sq_json(text);
    int err = kp_decode_object(arena, json, out);
    cJSON_Delete(json);
    cr_assert_eq(err, 0, "decoding %s: %s", text, kp_error_last());
}

#define MILLI(list, name) kp_resource_list_milli((list), (name))

#endif
