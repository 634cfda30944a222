/*
 * Name and label syntax against Kubernetes' own tables (apimachinery's
 * validation and validate/content tests), with the exact messages users see.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/field_errors.h"
#include "api/names.h"
#include "base/arena.h"

/* Kubernetes' messages, written out in full here (not shared with the
 * implementation) so a typo on either side fails a test. */
#define NAME_FORMAT                                                                                \
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "  \
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define NAME_EMPTY      "name part must be non-empty"
#define NAME_TOO_LONG   "name part must be no more than 63 bytes"
#define PREFIX_EMPTY    "prefix part must be non-empty"
#define PREFIX_TOO_LONG "prefix part must be no more than 253 bytes"
#define PREFIX_FORMAT                                                                              \
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "          \
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "         \
    "'example.com', regex used for validation is "                                                 \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define KEY_SLASHES                                                                                \
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start "  \
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "  \
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "     \
    "subdomain prefix and '/' (e.g. 'example.com/MyName')"
#define VALUE_TOO_LONG "must be no more than 63 bytes"
#define VALUE_FORMAT                                                                               \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define LABEL_TOO_LONG "must be no more than 63 characters"
#define LABEL_DOTS     "must not contain dots"
#define LABEL_FORMAT                                                                               \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define SUBDOMAIN_TOO_LONG "must be no more than 253 characters"
#define SUBDOMAIN_FORMAT                                                                           \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

typedef size_t (*check_fn)(const char *, kp_msgs *);

struct name_case {
    check_fn fn;
    const char *input; /* "{a*63}" stands for 63 'a's */
    const char *want[4];
};

/* Expand "{c*N}" runs so long boundary inputs fit in a table row. */
static char *expand(kp_arena *arena, const char *pattern)
{
    size_t cap = strlen(pattern) + 1;
    for (const char *p = strchr(pattern, '{'); p; p = strchr(p + 1, '{'))
        cap += strtoul(p + 3, NULL, 10);
    char *out = kp_arena_alloc(arena, cap);
    size_t j = 0;
    for (const char *p = pattern; *p;) {
        if (p[0] == '{' && p[2] == '*') {
            char *end;
            unsigned long n = strtoul(p + 3, &end, 10);
            memset(out + j, p[1], n);
            j += n;
            p = end + 1;
        } else {
            out[j++] = *p++;
        }
    }
    out[j] = '\0';
    return out;
}

static void run_cases(const struct name_case *cases, size_t n)
{
    kp_arena *arena = kp_arena_new();
    for (size_t i = 0; i < n; i++) {
        const char *input = expand(arena, cases[i].input);
        kp_msgs msgs;
        kp_msgs_init(&msgs, arena);
        size_t got = cases[i].fn(input, &msgs);
        size_t want = 0;
        while (want < 4 && cases[i].want[want])
            want++;
        cr_expect_eq(got, want, "case %zu %s: %zu messages, want %zu", i, cases[i].input, got,
                     want);
        cr_expect_eq(msgs.count, got, "case %zu: count and list disagree", i);
        cr_expect_eq(cases[i].fn(input, NULL), got, "case %zu: counting-only differs", i);
        for (size_t k = 0; k < got && k < want; k++)
            cr_expect_str_eq(msgs.items[k], cases[i].want[k], "case %zu %s message %zu", i,
                             cases[i].input, k);
    }
    kp_arena_free(arena);
}

#define Q kp_is_qualified_name
#define V kp_is_valid_label_value
#define L kp_is_dns1123_label
#define S kp_is_dns1123_subdomain

Test(names, qualified_names)
{
    static const struct name_case cases[] = {
        /* valid (validation_test.go TestIsQualifiedName) */
        {Q, "simple", {0}},
        {Q, "now-with-dashes", {0}},
        {Q, "1-starts-with-num", {0}},
        {Q, "1234", {0}},
        {Q, "simple/simple", {0}},
        {Q, "now-with-dashes/simple", {0}},
        {Q, "now-with-dashes/now-with-dashes", {0}},
        {Q, "now.with.dots/simple", {0}},
        {Q, "now-with.dashes-and.dots/simple", {0}},
        {Q, "1-num.2-num/3-num", {0}},
        {Q, "1234/5678", {0}},
        {Q, "1.2.3.4/5678", {0}},
        {Q, "Uppercase_Is_OK_123", {0}},
        {Q, "example.com/Uppercase_Is_OK_123", {0}},
        {Q, "requests.storage-foo", {0}},
        {Q, "{a*63}", {0}},
        {Q, "{a*253}/{b*63}", {0}},
        {Q, "a", {0}},
        {Q, "karpenter.sh/nodepool", {0}},
        {Q, "a.b_c-d", {0}},
        /* invalid */
        {Q, "nospecialchars%^=@", {NAME_FORMAT}},
        {Q, "cantendwithadash-", {NAME_FORMAT}},
        {Q, "-cantstartwithadash-", {NAME_FORMAT}},
        {Q, "_underscore", {NAME_FORMAT}},
        {Q, "ends.", {NAME_FORMAT}},
        {Q, "only/one/slash", {KEY_SLASHES}},
        {Q, "a//b", {KEY_SLASHES}},
        {Q, "Example.com/abc", {PREFIX_FORMAT}},
        {Q, "example_com/abc", {PREFIX_FORMAT}},
        {Q, "example..com/abc", {PREFIX_FORMAT}},
        {Q, "-example.com/abc", {PREFIX_FORMAT}},
        {Q, "example.com/", {NAME_EMPTY, NAME_FORMAT}},
        {Q, "/simple", {PREFIX_EMPTY}},
        {Q, "/", {PREFIX_EMPTY, NAME_EMPTY, NAME_FORMAT}},
        {Q, "", {NAME_EMPTY, NAME_FORMAT}},
        {Q, "{a*64}", {NAME_TOO_LONG}},
        {Q, "{a*254}/abc", {PREFIX_TOO_LONG}},
        {Q, "{a*253}/{b*64}", {NAME_TOO_LONG}},
        {Q, "{a*254}-/{b*63}-", {PREFIX_TOO_LONG, PREFIX_FORMAT, NAME_TOO_LONG, NAME_FORMAT}},
        {Q, "x/{b*63}-", {NAME_TOO_LONG, NAME_FORMAT}},
        {Q, "with space", {NAME_FORMAT}},
        {Q, "caf\xc3\xa9", {NAME_FORMAT}},
        {Q, "r\xc3\xa4.example/x", {PREFIX_FORMAT}},
        {Q, "trailing\n", {NAME_FORMAT}},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(names, label_values)
{
    static const struct name_case cases[] = {
        /* valid (content/kube_test.go TestIsLabelValue) */
        {V, "simple", {0}},
        {V, "now-with-dashes", {0}},
        {V, "1-starts-with-num", {0}},
        {V, "end-with-num-1", {0}},
        {V, "1234", {0}},
        {V, "{a*63}", {0}},
        {V, "", {0}},
        {V, "My_Value.1", {0}},
        /* invalid */
        {V, "nospecialchars%^=@", {VALUE_FORMAT}},
        {V, "Tama-nui-te-r\xc4\x81.is.M\xc4\x81ori.sun", {VALUE_FORMAT}},
        {V, "\\backslashes\\are\\bad", {VALUE_FORMAT}},
        {V, "-starts-with-dash", {VALUE_FORMAT}},
        {V, "ends-with-dash-", {VALUE_FORMAT}},
        {V, ".starts.with.dot", {VALUE_FORMAT}},
        {V, "ends.with.dot.", {VALUE_FORMAT}},
        {V, "{a*64}", {VALUE_TOO_LONG}},
        {V, "{a*63}-", {VALUE_TOO_LONG, VALUE_FORMAT}},
        {V, "a/b", {VALUE_FORMAT}},
        {V, "-", {VALUE_FORMAT}},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(names, dns1123_labels)
{
    static const struct name_case cases[] = {
        /* valid (validation_test.go TestIsDNS1123Label) */
        {L, "a", {0}},
        {L, "ab", {0}},
        {L, "abc", {0}},
        {L, "a1", {0}},
        {L, "a-1", {0}},
        {L, "a--1--2--b", {0}},
        {L, "0", {0}},
        {L, "01", {0}},
        {L, "1-a", {0}},
        {L, "1--a--b--2", {0}},
        {L, "{a*63}", {0}},
        /* invalid */
        {L, "", {LABEL_FORMAT}},
        {L, "A", {LABEL_FORMAT}},
        {L, "aBc", {LABEL_FORMAT}},
        {L, "1-A", {LABEL_FORMAT}},
        {L, "-", {LABEL_FORMAT}},
        {L, "a-", {LABEL_FORMAT}},
        {L, "-a", {LABEL_FORMAT}},
        {L, "_", {LABEL_FORMAT}},
        {L, "a_b", {LABEL_FORMAT}},
        {L, ".", {LABEL_FORMAT}},
        {L, "a.", {LABEL_FORMAT}},
        {L, ".a", {LABEL_FORMAT}},
        {L, "a.b", {LABEL_DOTS}},
        {L, "1.2", {LABEL_DOTS}},
        {L, "a..b", {LABEL_FORMAT}},
        {L, "a b", {LABEL_FORMAT}},
        {L, " 1", {LABEL_FORMAT}},
        {L, "{a*64}", {LABEL_TOO_LONG}},
        {L, "{a*62}.{b*10}", {LABEL_TOO_LONG, LABEL_DOTS}},
        {L, "{a*64}-", {LABEL_TOO_LONG, LABEL_FORMAT}},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(names, dns1123_subdomains)
{
    static const struct name_case cases[] = {
        /* valid (validation_test.go TestIsDNS1123Subdomain) */
        {S, "a", {0}},
        {S, "a--1--2--b", {0}},
        {S, "a.a", {0}},
        {S, "a-1.a", {0}},
        {S, "0.a", {0}},
        {S, "1--a--b--2.1", {0}},
        {S, "a.b.c.d.e", {0}},
        {S, "11.22.33.44.55", {0}},
        {S, "{a*253}", {0}},
        {S, "{a*100}.{b*100}.{c*51}", {0}},
        /* invalid */
        {S, "", {SUBDOMAIN_FORMAT}},
        {S, "A", {SUBDOMAIN_FORMAT}},
        {S, "aBc", {SUBDOMAIN_FORMAT}},
        {S, "-", {SUBDOMAIN_FORMAT}},
        {S, "a-", {SUBDOMAIN_FORMAT}},
        {S, "_a", {SUBDOMAIN_FORMAT}},
        {S, ".", {SUBDOMAIN_FORMAT}},
        {S, "a.", {SUBDOMAIN_FORMAT}},
        {S, ".a", {SUBDOMAIN_FORMAT}},
        {S, "a..b", {SUBDOMAIN_FORMAT}},
        {S, "a.-b", {SUBDOMAIN_FORMAT}},
        {S, "a-.b", {SUBDOMAIN_FORMAT}},
        {S, "ab.A", {SUBDOMAIN_FORMAT}},
        {S, "A.B.C.D.E", {SUBDOMAIN_FORMAT}},
        {S, "a@b", {SUBDOMAIN_FORMAT}},
        {S, "a:b", {SUBDOMAIN_FORMAT}},
        {S, "a/b", {SUBDOMAIN_FORMAT}},
        {S, "1 2", {SUBDOMAIN_FORMAT}},
        {S, "{a*254}", {SUBDOMAIN_TOO_LONG}},
        {S, "{a*254}.", {SUBDOMAIN_TOO_LONG, SUBDOMAIN_FORMAT}},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(names, messages_live_in_the_list_in_order)
{
    kp_arena *arena = kp_arena_new();
    kp_msgs msgs;
    kp_msgs_init(&msgs, arena);
    cr_assert_eq(kp_is_dns1123_label("A", &msgs), 1);
    cr_assert_eq(kp_is_qualified_name("/", &msgs), 3);
    cr_assert_eq(msgs.count, 4);
    cr_assert_str_eq(msgs.items[0], LABEL_FORMAT);
    cr_assert_str_eq(msgs.items[1], PREFIX_EMPTY);
    cr_assert_str_eq(msgs.items[3], NAME_FORMAT);
    for (int i = 0; i < 20; i++)
        kp_is_valid_label_value("-", &msgs);
    cr_assert_eq(msgs.count, 24);
    cr_assert_str_eq(msgs.items[23], VALUE_FORMAT);
    kp_arena_free(arena);
}

static const char *errors_string(kp_arena *arena,
                                 bool (*check)(kp_field_errors *, const char *, const char *),
                                 const char *input, bool *ok)
{
    kp_field_errors errs;
    kp_field_errors_init(&errs, arena);
    *ok = check(&errs, "metadata.labels", input);
    return kp_field_errors_string(arena, &errs);
}

Test(names, field_errors_quote_the_value)
{
    kp_arena *arena = kp_arena_new();
    bool ok;
    cr_assert_str_eq(errors_string(arena, kp_validate_label_key, "karpenter.sh/nodepool", &ok), "");
    cr_assert(ok);
    cr_assert_str_eq(errors_string(arena, kp_validate_label_key, "Example.com/abc", &ok),
                     "metadata.labels: Invalid value: \"Example.com/abc\": " PREFIX_FORMAT);
    cr_assert_not(ok);
    cr_assert_str_eq(errors_string(arena, kp_validate_label_key, "a\"b/", &ok),
                     "[metadata.labels: Invalid value: \"a\\\"b/\": " PREFIX_FORMAT ", "
                     "metadata.labels: Invalid value: \"a\\\"b/\": " NAME_EMPTY ", "
                     "metadata.labels: Invalid value: \"a\\\"b/\": " NAME_FORMAT "]");
    cr_assert_not(ok);
    cr_assert_str_eq(errors_string(arena, kp_validate_label_value, "bad value", &ok),
                     "metadata.labels: Invalid value: \"bad value\": " VALUE_FORMAT);
    cr_assert_not(ok);
    cr_assert_str_eq(errors_string(arena, kp_validate_label_value, "", &ok), "");
    cr_assert(ok);
    kp_arena_free(arena);
}

Test(names, annotation_keys_are_checked_lowered)
{
    kp_arena *arena = kp_arena_new();
    bool ok;
    /* Uppercase prefixes are fine in annotations, not in labels. */
    cr_assert_str_eq(errors_string(arena, kp_validate_annotation_key, "Example.COM/Abc", &ok), "");
    cr_assert(ok);
    errors_string(arena, kp_validate_label_key, "Example.COM/Abc", &ok);
    cr_assert_not(ok);
    /* The error shows the key as written. */
    cr_assert_str_eq(errors_string(arena, kp_validate_annotation_key, "Example.COM/a b", &ok),
                     "metadata.labels: Invalid value: \"Example.COM/a b\": " NAME_FORMAT);
    /* U+212A (Kelvin sign) lowers to ASCII 'k' in Go: a valid annotation key. */
    const char *kelvin = expand(arena, "\xe2\x84\xaa{a*62}");
    cr_assert_str_eq(errors_string(arena, kp_validate_annotation_key, kelvin, &ok), "");
    cr_assert(ok);
    cr_assert_eq(kp_is_qualified_name(kelvin, NULL), 2); /* too long and not ASCII as a label */
    /* U+0130 lowers to 'i'. */
    cr_assert(kp_validate_annotation_key(&(kp_field_errors){.arena = arena}, "p", "\xc4\xb0o/x"));
    /* An invalid byte becomes U+FFFD (3 bytes): 61 + 3 is past the 63-byte limit. */
    const char *invalid = expand(arena, "{a*61}\xff");
    cr_assert_eq(kp_is_qualified_name(invalid, NULL), 1);
    kp_field_errors errs;
    kp_field_errors_init(&errs, arena);
    cr_assert_not(kp_validate_annotation_key(&errs, "metadata.annotations", invalid));
    cr_assert_eq(errs.count, 2);
    cr_assert_str_eq(errs.items[0].detail, NAME_TOO_LONG);
    cr_assert_str_eq(errs.items[1].detail, NAME_FORMAT);
    /* A truncated sequence at the end is read safely. */
    cr_assert_not(kp_validate_annotation_key(&errs, "p", "ab\xe2\x84"));
    kp_arena_free(arena);
}

Test(names, label_maps)
{
    kp_arena *arena = kp_arena_new();
    kp_field_errors errs;
    kp_field_errors_init(&errs, arena);
    const char *keys[] = {"app", "team/x", "-bad"};
    const char *values[] = {"web", "", "ok"};
    cr_assert(kp_validate_labels(&errs, "metadata.labels", keys, values, 2));
    cr_assert_eq(errs.count, 0);
    cr_assert_not(kp_validate_labels(&errs, "metadata.labels", keys, values, 3));
    cr_assert_eq(errs.count, 1);
    cr_assert_str_eq(kp_field_error_string(arena, &errs.items[0]),
                     "metadata.labels: Invalid value: \"-bad\": " NAME_FORMAT);
    const char *bad_values[] = {"web", "x-", "ok"};
    kp_field_errors_init(&errs, arena);
    cr_assert_not(kp_validate_labels(&errs, "spec.template.metadata.labels", keys, bad_values, 2));
    cr_assert_str_eq(kp_field_errors_string(arena, &errs),
                     "spec.template.metadata.labels: Invalid value: \"x-\": " VALUE_FORMAT);
    kp_arena_free(arena);
}

Test(names, annotation_maps_and_total_size)
{
    kp_arena *arena = kp_arena_new();
    kp_field_errors errs;
    kp_field_errors_init(&errs, arena);
    size_t limit = KP_ANNOTATIONS_TOTAL_MAX;
    char *big = kp_arena_alloc(arena, limit + 1);
    memset(big, 'v', limit);
    big[limit - 1] = '\0'; /* key "k" + value = exactly the limit */
    const char *keys[] = {"k"};
    const char *values[] = {big};
    cr_assert(kp_validate_annotations(&errs, "metadata.annotations", keys, values, 1));
    big[limit - 1] = 'v';
    big[limit] = '\0'; /* one byte over */
    cr_assert_not(kp_validate_annotations(&errs, "metadata.annotations", keys, values, 1));
    cr_assert_eq(errs.count, 1);
    cr_assert_str_eq(kp_field_errors_string(arena, &errs),
                     "metadata.annotations: Too long: may not be more than 262144 bytes");
    const char *bad_keys[] = {"Fine.Example/Key", "a/b/c"};
    const char *small[] = {"", ""};
    kp_field_errors_init(&errs, arena);
    cr_assert_not(kp_validate_annotations(&errs, "metadata.annotations", bad_keys, small, 2));
    cr_assert_eq(errs.count, 1);
    cr_assert_str_eq(errs.items[0].detail, KEY_SLASHES);
    cr_assert_str_eq(errs.items[0].value, "\"a/b/c\"");
    kp_arena_free(arena);
}
