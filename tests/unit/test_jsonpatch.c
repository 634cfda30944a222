/*
 * api/jsonpatch: JSON Pointer escaping and lookup (RFC 6901's own examples)
 * and JSON Patch application (RFC 6902 appendix A), plus the builders the
 * defaulting code uses.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonpatch.h"
#include "base/error.h"
#include "helpers/assert.h"

static cJSON *parse(const char *json)
{
    cJSON *v = cJSON_Parse(json);
    cr_assert_not_null(v, "bad test JSON: %s", json);
    return v;
}

static void expect_json(const cJSON *got, const char *want, const char *what)
{
    cJSON *w = parse(want);
    char *text = cJSON_PrintUnformatted(got);
    cr_expect(cJSON_Compare(got, w, 1), "%s: got %s, want %s", what, text, want);
    free(text);
    cJSON_Delete(w);
}

Test(jsonpointer, escape_tokens)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a/b", "a~1b"}, {"m~n", "m~0n"},    {"~/", "~0~1"},
        {"", ""},        {"plain", "plain"}, {"karpenter.sh/nodepool", "karpenter.sh~1nodepool"},
        {"~1", "~01"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[64];
        size_t n = kp_jsonpointer_escape(cases[i].in, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[i].out, "escape %s", cases[i].in);
        cr_expect_eq(n, strlen(cases[i].out));
    }
    char small[4];
    cr_expect_eq(kp_jsonpointer_escape("a/b/c", small, sizeof(small)), 7);
    cr_expect_str_eq(small, "a~1");
}

Test(jsonpointer, build_push_pop)
{
    kp_jsonpointer p;
    kp_jsonpointer_init(&p);
    cr_expect_str_eq(kp_jsonpointer_cstr(&p), "");
    kp_jsonpointer_push(&p, "metadata");
    kp_jsonpointer_push(&p, "labels");
    kp_jsonpointer_push(&p, "karpenter.sh/nodepool");
    cr_expect_str_eq(kp_jsonpointer_cstr(&p), "/metadata/labels/karpenter.sh~1nodepool");
    kp_jsonpointer_pop(&p);
    kp_jsonpointer_pop(&p);
    kp_jsonpointer_push(&p, "finalizers");
    kp_jsonpointer_push_index(&p, 12);
    cr_expect_str_eq(kp_jsonpointer_cstr(&p), "/metadata/finalizers/12");
    for (int i = 0; i < 10; i++)
        kp_jsonpointer_pop(&p);
    cr_expect_str_eq(kp_jsonpointer_cstr(&p), "");
}

Test(jsonpointer, overlong_pointer_is_marked_truncated)
{
    kp_jsonpointer p;
    kp_jsonpointer_init(&p);
    char big[700];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    kp_jsonpointer_push(&p, big);
    cr_expect_not(p.truncated);
    kp_jsonpointer_push(&p, big);
    cr_expect(p.truncated);
    kp_jsonpointer_pop(&p);
    cr_expect_not(p.truncated);
    cr_expect_eq(strlen(kp_jsonpointer_cstr(&p)), 700);
}

/* RFC 6901 section 5. */
Test(jsonpointer, rfc6901_examples)
{
    cJSON *doc = parse("{\"foo\":[\"bar\",\"baz\"],\"\":0,\"a/b\":1,\"c%d\":2,\"e^f\":3,\"g|h\":4,"
                       "\"i\\\\j\":5,\"k\\\"l\":6,\" \":7,\"m~n\":8}");
    static const struct {
        const char *ptr, *want;
    } cases[] = {
        {"", NULL},
        {"/foo", "[\"bar\",\"baz\"]"},
        {"/foo/0", "\"bar\""},
        {"/", "0"},
        {"/a~1b", "1"},
        {"/c%d", "2"},
        {"/e^f", "3"},
        {"/g|h", "4"},
        {"/i\\j", "5"},
        {"/k\"l", "6"},
        {"/ ", "7"},
        {"/m~0n", "8"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const cJSON *got = kp_jsonpointer_get(doc, cases[i].ptr);
        cr_assert_not_null(got, "%s", cases[i].ptr);
        if (cases[i].want)
            expect_json(got, cases[i].want, cases[i].ptr);
        else
            cr_expect_eq(got, doc);
    }
    static const char *const missing[] = {"/foo/01",  "/foo/-", "/foo/2",  "foo",    "/~2",
                                          "/foo/0/x", "/nope",  "/foo/-1", "/foo/ 1"};
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
        cr_expect_null(kp_jsonpointer_get(doc, missing[i]), "%s", missing[i]);
    cJSON_Delete(doc);
}

typedef struct patch_case {
    const char *name, *doc, *patch, *want; /* want NULL: must fail */
    const char *error;                     /* a fragment of the message on failure */
} patch_case;

/* RFC 6902 appendix A, then our own edge cases. */
static const patch_case patch_cases[] = {
    {"A.1 add an object member", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
     NULL},
    {"A.2 add an array element", "{\"foo\":[\"bar\",\"baz\"]}",
     "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
     "{\"foo\":[\"bar\",\"qux\",\"baz\"]}", NULL},
    {"A.3 remove an object member", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
     "[{\"op\":\"remove\",\"path\":\"/baz\"}]", "{\"foo\":\"bar\"}", NULL},
    {"A.4 remove an array element", "{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
     "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]", "{\"foo\":[\"bar\",\"baz\"]}", NULL},
    {"A.5 replace a value", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
     "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
     "{\"baz\":\"boo\",\"foo\":\"bar\"}", NULL},
    {"A.6 move a value",
     "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
     "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
     "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}", NULL},
    {"A.7 move an array element", "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
     "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
     "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}", NULL},
    {"A.8 test a value: success", "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
     "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},{\"op\":\"test\",\"path\":\"/foo/1\","
     "\"value\":2}]",
     "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}", NULL},
    {"A.9 test a value: error", "{\"baz\":\"qux\"}",
     "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", NULL,
     "operation 0 (test /baz): test failed"},
    {"A.10 add a nested member object", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
     "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}", NULL},
    {"A.12 add to a nonexistent target", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", NULL, "parent does not exist"},
    {"A.14 ~ escape ordering", "{\"/\":9,\"~1\":10}",
     "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]", "{\"/\":9,\"~1\":10}", NULL},
    {"A.15 comparing strings and numbers", "{\"/\":9,\"~1\":10}",
     "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]", NULL, "test failed"},
    {"A.16 add an array value", "{\"foo\":[\"bar\"]}",
     "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
     "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}", NULL},
    {"add replaces an existing member", "{\"a\":1}",
     "[{\"op\":\"add\",\"path\":\"/a\",\"value\":2}]", "{\"a\":2}", NULL},
    {"add at the end index of an array", "{\"a\":[1]}",
     "[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":2}]", "{\"a\":[1,2]}", NULL},
    {"add beyond the end of an array", "{\"a\":[1]}",
     "[{\"op\":\"add\",\"path\":\"/a/3\",\"value\":2}]", NULL, "array index out of range"},
    {"replace needs an existing member", "{\"a\":1}",
     "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]", NULL, "path does not exist"},
    {"replace an array element", "{\"a\":[1,2]}",
     "[{\"op\":\"replace\",\"path\":\"/a/1\",\"value\":3}]", "{\"a\":[1,3]}", NULL},
    {"replace cannot use -", "{\"a\":[1]}", "[{\"op\":\"replace\",\"path\":\"/a/-\",\"value\":3}]",
     NULL, "array index out of range"},
    {"remove a missing member", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", NULL,
     "operation 0 (remove /b): path does not exist"},
    {"copy a value", "{\"a\":{\"x\":1}}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"}]",
     "{\"a\":{\"x\":1},\"b\":{\"x\":1}}", NULL},
    {"move into its own child", "{\"a\":{\"b\":{}}}",
     "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]", NULL,
     "cannot move a value into itself"},
    {"move from a missing path", "{\"a\":1}", "[{\"op\":\"move\",\"from\":\"/x\",\"path\":\"/b\"}]",
     NULL, "\"from\" does not exist"},
    {"an unknown operation", "{}", "[{\"op\":\"merge\",\"path\":\"/a\",\"value\":1}]", NULL,
     "unknown operation"},
    {"add without a value", "{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", NULL,
     "\"value\" is missing"},
    {"the whole document cannot be replaced", "{}",
     "[{\"op\":\"replace\",\"path\":\"\",\"value\":1}]", NULL, "the whole document"},
    {"a later failing operation names its index", "{}",
     "[{\"op\":\"add\",\"path\":\"/a\",\"value\":1},{\"op\":\"add\",\"path\":\"/b/"
     "c\",\"value\":1}]",
     NULL, "operation 1 (add /b/c)"},
    {"operations need op and path", "{}", "[{\"path\":\"/a\"}]", NULL, "must be strings"},
    {"a patch must be an array", "{}", "{\"op\":\"add\"}", NULL, "must be an array"},
    {"escaped member names", "{\"metadata\":{\"labels\":{}}}",
     "[{\"op\":\"add\",\"path\":\"/metadata/labels/karpenter.sh~1nodepool\",\"value\":\"d\"}]",
     "{\"metadata\":{\"labels\":{\"karpenter.sh/nodepool\":\"d\"}}}", NULL},
    {"a scalar has no members", "{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]",
     NULL, "parent is not an object or array"},
};

static void free_params(struct criterion_test_params *p)
{
    cr_free(p->params);
}

/* Parameters are indices: test processes may map the table elsewhere. */
ParameterizedTestParameters(jsonpatch, apply)
{
    size_t n = sizeof(patch_cases) / sizeof(patch_cases[0]);
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, n, free_params);
}

ParameterizedTest(size_t *i, jsonpatch, apply)
{
    const patch_case *c = &patch_cases[*i];
    cJSON *doc = parse(c->doc), *patch = parse(c->patch);
    int err = kp_jsonpatch_apply(doc, patch);
    if (c->want) {
        cr_expect_eq(err, 0, "%s: %s", c->name, kp_error_last());
        expect_json(doc, c->want, c->name);
    } else {
        cr_expect_eq(err, KP_EINVALID, "%s: should fail", c->name);
        cr_expect(strstr(kp_error_last(), c->error) != NULL, "%s: message \"%s\" lacks \"%s\"",
                  c->name, kp_error_last(), c->error);
    }
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}

Test(jsonpatch, builders_make_rfc6902_operations)
{
    cJSON *patch = kp_jsonpatch_new();
    kp_jsonpatch_add(patch, "/spec/weight", cJSON_CreateNumber(10));
    kp_jsonpatch_replace(patch, "/spec/x", cJSON_CreateString("y"));
    kp_jsonpatch_remove(patch, "/spec/z");
    expect_json(patch,
                "[{\"op\":\"add\",\"path\":\"/spec/weight\",\"value\":10},"
                "{\"op\":\"replace\",\"path\":\"/spec/x\",\"value\":\"y\"},"
                "{\"op\":\"remove\",\"path\":\"/spec/z\"}]",
                "built patch");
    cJSON *doc = parse("{\"spec\":{\"x\":\"a\",\"z\":1}}");
    KP_EXPECT_OK(kp_jsonpatch_apply(doc, patch));
    expect_json(doc, "{\"spec\":{\"x\":\"y\",\"weight\":10}}", "applied");
    cJSON_Delete(doc);
    cJSON_Delete(patch);
}
