/*
 * format/yaml and format/json_out: YAML -> JSON as kubectl converts it
 * (sigs.k8s.io/yaml over go-yaml v2), errors with positions, limits, and the
 * JSON -> YAML emitter's round trip.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/json_out.h"
#include "format/yaml.h"

/* Criterion runs each case in a fresh process, where pointers into this
 * binary's tables would not hold: cases are passed as indexes. */
static struct criterion_test_params index_params(size_t count)
{
    size_t *idx = cr_malloc(count * sizeof(*idx));
    for (size_t i = 0; i < count; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, count, NULL);
}

#define TABLE_PARAMS(table) index_params(sizeof(table) / sizeof((table)[0]))

/* The compact JSON of a single-document YAML text, or NULL (error set). */
static char *to_json(const char *yaml)
{
    cJSON *root = NULL;
    if (kp_yaml_parse_one(&root, yaml, strlen(yaml), "t.yaml", NULL) < 0) return NULL;
    kp_buf buf = KP_BUF_INIT(1 << 20);
    int err = root ? kp_json_out_json(&buf, root, 0) : kp_buf_puts(&buf, "<none>");
    cJSON_Delete(root);
    if (err < 0) {
        kp_buf_free(&buf);
        return NULL;
    }
    return kp_buf_detach(&buf);
}

static void expect_json(const char *yaml, const char *json)
{
    char *got = to_json(yaml);
    cr_assert_not_null(got, "%s: unexpected error: %s", yaml, kp_error_last());
    cr_expect_str_eq(got, json, "YAML %s", yaml);
    free(got);
}

/* ---- scalars: what kubectl gets ---------------------------------------------- */

struct conv_case {
    const char *yaml;
    const char *json;
};

static struct conv_case scalar_cases[] = {
    /* YAML 1.1 booleans and nulls, as go-yaml v2 reads them */
    {"v: true", "{\"v\":true}"},
    {"v: True", "{\"v\":true}"},
    {"v: FALSE", "{\"v\":false}"},
    {"v: yes", "{\"v\":true}"},
    {"v: No", "{\"v\":false}"},
    {"v: on", "{\"v\":true}"},
    {"v: OFF", "{\"v\":false}"},
    {"v: y", "{\"v\":true}"},
    {"v: n", "{\"v\":false}"},
    {"v: tRUE", "{\"v\":\"tRUE\"}"},
    {"v: ~", "{\"v\":null}"},
    {"v: null", "{\"v\":null}"},
    {"v: NULL", "{\"v\":null}"},
    {"v:", "{\"v\":null}"},
    {"v: nil", "{\"v\":\"nil\"}"},
    /* quoted and block scalars stay strings */
    {"v: ''", "{\"v\":\"\"}"},
    {"v: \"\"", "{\"v\":\"\"}"},
    {"v: \"true\"", "{\"v\":\"true\"}"},
    {"v: 'yes'", "{\"v\":\"yes\"}"},
    {"v: \"1\"", "{\"v\":\"1\"}"},
    {"v: '1.5'", "{\"v\":\"1.5\"}"},
    {"v: \"~\"", "{\"v\":\"~\"}"},
    {"v: |\n  a\n  b\n", "{\"v\":\"a\\nb\\n\"}"},
    {"v: >\n  a\n  b\n", "{\"v\":\"a b\\n\"}"},
    {"v: |-\n  123\n", "{\"v\":\"123\"}"},
    {"v: \"a\\tb\\u00e9\"", "{\"v\":\"a\\tb\xc3\xa9\"}"},
    {"v: 'it''s'", "{\"v\":\"it's\"}"},
    /* integers: Go's base-prefix syntax, underscores dropped */
    {"v: 1", "{\"v\":1}"},
    {"v: -42", "{\"v\":-42}"},
    {"v: +7", "{\"v\":7}"},
    {"v: -0", "{\"v\":0}"},
    {"v: 0x10", "{\"v\":16}"},
    {"v: -0x10", "{\"v\":-16}"},
    {"v: 0xFF_FF", "{\"v\":65535}"},
    {"v: 0o17", "{\"v\":15}"},
    {"v: 017", "{\"v\":15}"},
    {"v: 007", "{\"v\":7}"},
    {"v: 08", "{\"v\":8}"},
    {"v: 0b101", "{\"v\":5}"},
    {"v: 1_000", "{\"v\":1000}"},
    {"v: 137438953472", "{\"v\":137438953472}"},
    {"v: 9007199254740993", "{\"v\":9007199254740993}"},
    {"v: 9223372036854775807", "{\"v\":9223372036854775807}"},
    {"v: -9223372036854775808", "{\"v\":-9223372036854775808}"},
    {"v: 18446744073709551615", "{\"v\":18446744073709551615}"},
    /* beyond uint64: go-yaml falls back to a float */
    {"v: 18446744073709551616", "{\"v\":18446744073709552000}"},
    {"v: 1000000000000000000000000000000000000", "{\"v\":1e+36}"},
    {"v: 0x1FFFFFFFFFFFFFFFF", "{\"v\":\"0x1FFFFFFFFFFFFFFFF\"}"},
    /* floats */
    {"v: 1.5", "{\"v\":1.5}"},
    {"v: 0.1", "{\"v\":0.1}"},
    {"v: 1e3", "{\"v\":1000}"},
    {"v: 1E-7", "{\"v\":1e-7}"},
    {"v: .5", "{\"v\":0.5}"},
    {"v: -.5", "{\"v\":-0.5}"},
    {"v: 1.", "{\"v\":1}"},
    {"v: 1_0.5", "{\"v\":10.5}"},
    {"v: 1e-400", "{\"v\":0}"},
    {"v: 1e400", "{\"v\":\"1e400\"}"},
    /* everything else is a string */
    {"v: 0x", "{\"v\":\"0x\"}"},
    {"v: 1.2.3", "{\"v\":\"1.2.3\"}"},
    {"v: 123abc", "{\"v\":\"123abc\"}"},
    {"v: 0x1p-2", "{\"v\":\"0x1p-2\"}"},
    {"v: 1:30", "{\"v\":\"1:30\"}"},
    {"v: 2001-12-14", "{\"v\":\"2001-12-14\"}"},
    {"v: 2001-12-14T21:59:43.10Z", "{\"v\":\"2001-12-14T21:59:43.10Z\"}"},
    {"v: 500m", "{\"v\":\"500m\"}"},
    {"v: _1", "{\"v\":\"_1\"}"},
    {"v: Inf", "{\"v\":\"Inf\"}"},
    /* tags */
    {"v: !!str 123", "{\"v\":\"123\"}"},
    {"v: !!str true", "{\"v\":\"true\"}"},
    {"v: !!int '12'", "{\"v\":12}"},
    {"v: !!int 0x1F", "{\"v\":31}"},
    {"v: !!float 3", "{\"v\":3}"},
    {"v: !!bool \"yes\"", "{\"v\":true}"},
    {"v: !!null ''", "{\"v\":null}"},
    {"v: !!timestamp 2001-12-14", "{\"v\":\"2001-12-14\"}"},
    {"v: ! 12", "{\"v\":\"12\"}"},
    {"v: !custom 12", "{\"v\":\"12\"}"},
    {"v: !<tag:yaml.org,2002:int> 3", "{\"v\":3}"},
    {"v: !!binary aGVsbG8=", "{\"v\":\"hello\"}"},
    {"v: !!binary aGk=", "{\"v\":\"hi\"}"},
    {"v: !!binary ''", "{\"v\":\"\"}"},
    {"v: !!binary |\n  aGVs\n  bG8=\n", "{\"v\":\"hello\"}"},
    {"v: !!binary gIGC", "{\"v\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}"},
    /* keys that are not strings */
    {"1: a", "{\"1\":\"a\"}"},
    {"-3: a", "{\"-3\":\"a\"}"},
    {"1.5: a", "{\"1.5\":\"a\"}"},
    {"1.0: a", "{\"1\":\"a\"}"},
    {"True: a", "{\"true\":\"a\"}"},
    {"no: a", "{\"false\":\"a\"}"},
    {"0x10: a", "{\"16\":\"a\"}"},
    {"1e3: a", "{\"1000\":\"a\"}"},
    {"1e6: a", "{\"1e+06\":\"a\"}"},
    {"0.00001: a", "{\"1e-05\":\"a\"}"},
    {"123456789.0: a", "{\"1.2345679e+08\":\"a\"}"},
    {"1000000000000000000000000000000000000: a", "{\"1e+36\":\"a\"}"},
    {"1e+36: a", "{\"1e+36\":\"a\"}"},
    {"\"1e+36\": a", "{\"1e+36\":\"a\"}"},
    {".inf: a", "{\".inf\":\"a\"}"},
    {"1e300: a", "{\".inf\":\"a\"}"},
    {"&k 7: a\nb: *k\nc: *k", "{\"7\":\"a\",\"b\":7,\"c\":7}"},
    /* root scalars and sequences */
    {"42", "42"},
    {"hello", "\"hello\""},
    {"- a\n- 1\n- ~", "[\"a\",1,null]"},
};

ParameterizedTestParameters(yaml, scalars)
{
    return TABLE_PARAMS(scalar_cases);
}

ParameterizedTest(size_t *i, yaml, scalars)
{
    const struct conv_case *c = &scalar_cases[*i];
    expect_json(c->yaml, c->json);
}

/* ---- structure ---------------------------------------------------------------- */

static struct conv_case structure_cases[] = {
    {"a:\n  b:\n    c: [1, {d: e}]\n  f: []\ng: {}\n",
     "{\"a\":{\"b\":{\"c\":[1,{\"d\":\"e\"}]},\"f\":[]},\"g\":{}}"},
    {"items:\n- name: x\n  ports:\n  - 80\n  - 443\n- name: z\n",
     "{\"items\":[{\"name\":\"x\",\"ports\":[80,443]},{\"name\":\"z\"}]}"},
    {"{a: 1, b: [x, 'y', \"z\"], c: {d: ~}}",
     "{\"a\":1,\"b\":[\"x\",\"y\",\"z\"],\"c\":{\"d\":null}}"},
    {"- - 1\n  - 2\n- - 3\n", "[[1,2],[3]]"},
    {"{\"json\": [1, 2.5, true, null, \"s\"]}", "{\"json\":[1,2.5,true,null,\"s\"]}"},
    /* anchors and aliases */
    {"a: &x {k: 1}\nb: *x\n", "{\"a\":{\"k\":1},\"b\":{\"k\":1}}"},
    {"a: &s text\nb: [*s, *s]\n", "{\"a\":\"text\",\"b\":[\"text\",\"text\"]}"},
    {"a: &x 1\nb: &x 2\nc: *x\n", "{\"a\":1,\"b\":2,\"c\":2}"},
    {"a: &x [1]\nb: [2, *x]\nc: &x [3]\nd: *x\n", "{\"a\":[1],\"b\":[2,[1]],\"c\":[3],\"d\":[3]}"},
    /* merge keys, applied in order, last assignment wins (go-yaml v2) */
    {"base: &b {x: 1, q: 2}\nd:\n  <<: *b\n  q: 3\n",
     "{\"base\":{\"x\":1,\"q\":2},\"d\":{\"x\":1,\"q\":3}}"},
    {"base: &b {x: 1, q: 2}\nd:\n  q: 3\n  <<: *b\n",
     "{\"base\":{\"x\":1,\"q\":2},\"d\":{\"x\":1,\"q\":2}}"},
    {"a: &a {x: 1}\nb: &b {x: 2, z: 2}\nc: {<<: [*a, *b], w: 1}\n",
     "{\"a\":{\"x\":1},\"b\":{\"x\":2,\"z\":2},\"c\":{\"z\":2,\"x\":1,\"w\":1}}"},
    {"c: {<<: {x: 1}, q: 2}", "{\"c\":{\"x\":1,\"q\":2}}"},
    {"c: {<<: [{x: 1}, {x: 2, q: 2}]}", "{\"c\":{\"q\":2,\"x\":1}}"},
    {"c: {<<: &m {x: 1}}\nd: *m\n", "{\"c\":{\"x\":1},\"d\":{\"x\":1}}"},
    {"c: {\"<<\": 1}", "{\"c\":{\"<<\":1}}"},
    {"c: {!!merge <<: {x: 1}}", "{\"c\":{\"x\":1}}"},
    {"c: [<<]", "{\"c\":[\"<<\"]}"},
    /* 1 and "1" are different YAML keys, one JSON key: the last wins */
    {"1: a\n\"1\": b\n", "{\"1\":\"b\"}"},
    /* a merged key may be overridden, before or after the merge */
    {"base: &b {q: 2}\nd: {q: 1, <<: *b, q2: 3}\n", "{\"base\":{\"q\":2},\"d\":{\"q\":2,\"q2\":3}}"},
};

ParameterizedTestParameters(yaml, structure)
{
    return TABLE_PARAMS(structure_cases);
}

ParameterizedTest(size_t *i, yaml, structure)
{
    const struct conv_case *c = &structure_cases[*i];
    expect_json(c->yaml, c->json);
}

/* ---- errors, with positions ------------------------------------------------ */

struct error_case {
    const char *yaml;
    int code;
    const char *message;
};

static struct error_case error_cases[] = {
    {"a: 1\n b: 2\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 3: mapping values are not allowed in this context"},
    {"a:\n  b: 1\n c: 2\n", KP_EINVALID,
     "t.yaml: document 1, line 3 column 2: did not find expected key (while parsing a block "
     "mapping at line 1 column 1)"},
    {"a: b: c\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 5: mapping values are not allowed in this context"},
    {"- a\nb: 1\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 1: did not find expected '-' indicator (while parsing a "
     "block collection at line 1 column 1)"},
    {"a: \"unclosed\nb: 2\n", KP_EINVALID,
     "t.yaml: document 1, line 3 column 1: found unexpected end of stream (while scanning a "
     "quoted scalar at line 1 column 4)"},
    {"a: 'x", KP_EINVALID,
     "t.yaml: document 1, line 1 column 6: found unexpected end of stream (while scanning a "
     "quoted scalar at line 1 column 4)"},
    {"a:\n\tb: 1\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 1: found character that cannot start any token (while "
     "scanning for the next token at line 2 column 1)"},
    {"a: [1, 2\nb: 3\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 2: did not find expected ',' or ']' (while parsing a flow "
     "sequence at line 1 column 4)"},
    {"{a: 1", KP_EINVALID,
     "t.yaml: document 1, line 2 column 1: did not find expected ',' or '}' (while parsing a flow "
     "mapping at line 1 column 1)"},
    {"key: @x\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 6: found character that cannot start any token (while "
     "scanning for the next token at line 1 column 6)"},
    {"a: \"\xff\"\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 5: invalid leading UTF-8 octet: #FF at byte offset 4"},
    {"ok: 1\nb: \xc3\x28\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 5: invalid trailing UTF-8 octet: #28 at byte offset 10"},
    {"a: *x\n", KP_EINVALID, "t.yaml: document 1, line 1 column 4: unknown anchor 'x' referenced"},
    {"a: &x [1, *x]\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 11: anchor 'x' value contains itself"},
    {"a: &x {b: *x}\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 11: anchor 'x' value contains itself"},
    {"a: 1\n---\nb: [1\n---\nc: 3\n", KP_EINVALID,
     "t.yaml: document 2, line 4 column 1: did not find expected ',' or ']' (while parsing a "
     "flow sequence at line 3 column 4)"},
    {"a: &x 1\n---\nb: *x\n", KP_EINVALID,
     "t.yaml: document 2, line 3 column 4: unknown anchor 'x' referenced"},
    {"x: .inf\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: .inf cannot be represented in JSON"},
    {"x: [-.Inf]\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 5: -.inf cannot be represented in JSON"},
    {"x: .nan\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: .nan cannot be represented in JSON"},
    {"x: !!int abc\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: cannot decode !!str `abc` as a !!int"},
    {"x: !!bool 1\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: cannot decode !!int `1` as a !!bool"},
    {"x: !!float 18446744073709551615\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: cannot decode !!int `18446744073709551615` as a "
     "!!float"},
    {"x: !!null no\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: cannot decode !!bool `no` as a !!null"},
    {"x: !!timestamp 2001-13-01\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: cannot decode !!str `2001-13-01` as a !!timestamp"},
    {"x: !!binary 'not base64!'\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: !!binary value contains invalid base64 data"},
    {"x: !!binary '===='\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: !!binary value contains invalid base64 data"},
    {"x: !!binary aGVsbG8\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: !!binary value contains invalid base64 data"},
    {"x: !!binary aGk=aGk=\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: !!binary value contains invalid base64 data"},
    {"~: a\n", KP_EINVALID, "t.yaml: document 1, line 1 column 1: unsupported map key: null"},
    {"a: {? : b}\n", KP_EINVALID, "t.yaml: document 1, line 1 column 7: unsupported map key: null"},
    {"?\n: b\n", KP_EINVALID, "t.yaml: document 1, line 1 column 2: unsupported map key: null"},
    {"a: 1\n: b\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 1: did not find expected key (while parsing a block "
     "mapping at line 1 column 1)"},
    {"18446744073709551615: a\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 1: unsupported map key: 18446744073709551615 is out of "
     "the int64 range"},
    {"[a]: 1\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 1: invalid map key: a sequence cannot be a key"},
    {"? {a: 1}\n: b\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 3: invalid map key: a mapping cannot be a key"},
    {"a: &m {x: 1}\n*m : 2\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 1: invalid map key: alias 'm' is a mapping"},
    {"<<: 1\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 5: map merge requires map or sequence of maps as the "
     "value"},
    {"a: {<<: [{x: 1}, 2]}\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 9: map merge requires map or sequence of maps as the "
     "value"},
    {"s: &s [{x: 1}]\na: {<<: *s}\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 9: map merge requires map or sequence of maps as the "
     "value"},
    {"a: \"x\\0y\"\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 4: strings containing NUL are not supported"},
    {"a: 1\n...\nb: 2\n", KP_EINVALID,
     "t.yaml: document 2, line 3 column 1: did not find expected <document start>"},
    {"a: &x [1]\nb: &x [2, *x]\n", KP_EINVALID,
     "t.yaml: document 1, line 2 column 11: anchor 'x' value contains itself"},
    /* duplicate keys are refused, as kubectl refuses them (aliases included) */
    {"&k 7: a\nb: *k\n*k : c", KP_EINVALID,
     "t.yaml: document 1, line 3 column 1: mapping key \"7\" already defined at line 1"},
    {"a: 1\nb: 2\na: 3\n", KP_EINVALID,
     "t.yaml: document 1, line 3 column 1: mapping key \"a\" already defined at line 1"},
    {"m: {k: 1, k: {x: 1}}\n", KP_EINVALID,
     "t.yaml: document 1, line 1 column 11: mapping key \"k\" already defined at line 1"},
    {"x:\n  a: 1\n  a: 2\n  a: 3\n", KP_EINVALID,
     "t.yaml: document 1, line 3 column 3: mapping key \"a\" already defined at line 2"},
    {"---\nok: 1\n---\nspec:\n  replicas: 1\n  replicas: 2\n", KP_EINVALID,
     "t.yaml: document 2, line 6 column 3: mapping key \"replicas\" already defined at line 5"},
};

ParameterizedTestParameters(yaml, errors)
{
    return TABLE_PARAMS(error_cases);
}

static int drop_doc(void *ctx, cJSON *root, const kp_yaml_doc_info *info)
{
    (void)ctx;
    (void)info;
    cJSON_Delete(root);
    return 0;
}

ParameterizedTest(size_t *i, yaml, errors)
{
    const struct error_case *c = &error_cases[*i];
    int err = kp_yaml_parse_stream(c->yaml, strlen(c->yaml), "t.yaml", NULL, drop_doc, NULL);
    cr_assert_eq(err, c->code, "YAML %s: got %d (%s)", c->yaml, err, kp_error_last());
    cr_expect_str_eq(kp_error_last(), c->message);
}

Test(yaml, errors_without_a_name_start_with_the_document)
{
    cJSON *root = NULL;
    cr_assert_eq(kp_yaml_parse_one(&root, "a: *nope", 8, NULL, NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(),
                     "document 1, line 1 column 4: unknown anchor 'nope' referenced");
    cr_expect_null(root);
}

/* ---- streams ---------------------------------------------------------------- */

struct collected {
    cJSON *docs[16];
    kp_yaml_doc_info info[16];
    size_t count;
    int stop_after; /* return an error after this many documents, 0 = never */
};

static int collect(void *ctx, cJSON *root, const kp_yaml_doc_info *info)
{
    struct collected *c = ctx;
    if (c->count == 16) {
        cJSON_Delete(root);
        return kp_error_set(KP_ETOOLARGE, "too many");
    }
    c->docs[c->count] = root;
    c->info[c->count++] = *info;
    if (c->stop_after && c->count == (size_t)c->stop_after)
        return kp_error_set(KP_ECONFLICT, "stop here");
    return 0;
}

static void collected_free(struct collected *c)
{
    for (size_t i = 0; i < c->count; i++)
        cJSON_Delete(c->docs[i]);
}

Test(yaml, multi_document_stream_skips_empty_documents)
{
    const char *text = "# leading comment\n"
                       "a: 1\n"
                       "---\n"
                       "---\n"
                       "# only a comment\n"
                       "---\n"
                       "null\n"
                       "--- ~\n"
                       "---\n"
                       "b: 2\n"
                       "...\n"
                       "---\n"
                       "- c\n";
    struct collected c = {0};
    int err = kp_yaml_parse_stream(text, strlen(text), "m.yaml", NULL, collect, &c);
    cr_assert_eq(err, 0, "%s", kp_error_last());
    cr_assert_eq(c.count, 3);
    cr_expect_eq(c.info[0].index, 0);
    cr_expect_eq(c.info[0].line, 2);
    cr_expect_eq(c.info[1].index, 5);
    cr_expect_eq(c.info[1].line, 10);
    cr_expect_eq(c.info[2].index, 6);
    cr_expect_eq(c.info[2].line, 13);
    cr_expect_eq(cJSON_GetObjectItem(c.docs[1], "b")->valuedouble, 2);
    cr_expect(cJSON_IsArray(c.docs[2]));
    collected_free(&c);
}

Test(yaml, empty_input_and_comments_only_give_no_documents)
{
    struct collected c = {0};
    cr_assert_eq(kp_yaml_parse_stream("", 0, "e", NULL, collect, &c), 0);
    cr_assert_eq(kp_yaml_parse_stream("# nothing\n\n", 11, "e", NULL, collect, &c), 0);
    cr_assert_eq(kp_yaml_parse_stream("---\n...\n", 8, "e", NULL, collect, &c), 0);
    cr_expect_eq(c.count, 0);
    cJSON *root = (cJSON *)1;
    cr_assert_eq(kp_yaml_parse_one(&root, "---\n", 4, "e", NULL), 0);
    cr_expect_null(root);
}

Test(yaml, callback_error_stops_the_stream_and_is_returned)
{
    const char *text = "a: 1\n---\nb: 2\n---\nc: 3\n";
    struct collected c = {.stop_after = 2};
    cr_assert_eq(kp_yaml_parse_stream(text, strlen(text), "s", NULL, collect, &c), KP_ECONFLICT);
    cr_expect_str_eq(kp_error_last(), "stop here");
    cr_expect_eq(c.count, 2);
    collected_free(&c);
}

Test(yaml, parse_one_refuses_a_second_document)
{
    cJSON *root = NULL;
    cr_assert_eq(kp_yaml_parse_one(&root, "a: 1\n---\nb: 2\n", 14, "one.yaml", NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "one.yaml: document 2: expected a single document");
    cr_expect_null(root);
}

Test(yaml, input_need_not_be_nul_terminated)
{
    const char text[] = {'a', ':', ' ', '1', '2', '3'};
    cJSON *root = NULL;
    cr_assert_eq(kp_yaml_parse_one(&root, text, 5, "n", NULL), 0, "%s", kp_error_last());
    cr_expect_eq(cJSON_GetObjectItem(root, "a")->valuedouble, 12);
    cJSON_Delete(root);
}

/* ---- limits ------------------------------------------------------------------- */

static int parse_with(const char *text, size_t len, kp_yaml_limits lim)
{
    struct collected c = {0};
    int err = kp_yaml_parse_stream(text, len, "lim.yaml", &lim, collect, &c);
    collected_free(&c);
    return err;
}

Test(yaml, oversized_input_is_refused_before_parsing)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    lim.max_bytes = 16;
    cr_assert_eq(parse_with("a: 1\nb: 2\nc: 3\n", 15, lim), 0);
    cr_assert_eq(parse_with("a: 1\nb: 2\nc: 3\nd: 4\n", 20, lim), KP_ETOOLARGE);
    cr_expect_str_eq(kp_error_last(), "lim.yaml: input is 20 bytes, more than the limit of 16");
}

Test(yaml, default_size_limit_is_64_mib)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    cr_expect_eq(lim.max_bytes, (size_t)64 << 20);
    /* The length alone decides: the bytes are never read. */
    const char *text = "a: 1";
    cr_assert_eq(kp_yaml_parse_stream(text, ((size_t)64 << 20) + 1, "big", NULL, drop_doc, NULL),
                 KP_ETOOLARGE);
}

static char *nested(size_t depth, int block)
{
    char *s = calloc(depth * (depth + 8) + 16, 1);
    size_t o = 0;
    for (size_t i = 0; i < depth; i++) {
        if (block) {
            for (size_t k = 0; k < i; k++)
                s[o++] = ' ';
            memcpy(s + o, "k:\n", 3);
            o += 3;
        } else {
            s[o++] = '[';
        }
    }
    if (block) {
        for (size_t k = 0; k < depth; k++)
            s[o++] = ' ';
        memcpy(s + o, "leaf\n", 5);
    } else {
        memset(s + o, ']', depth);
    }
    return s;
}

Test(yaml, nesting_depth_is_capped)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    char *ok = nested(256, 0), *deep = nested(257, 0), *block = nested(300, 1);
    cr_assert_eq(parse_with(ok, strlen(ok), lim), 0, "%s", kp_error_last());
    cr_assert_eq(parse_with(deep, strlen(deep), lim), KP_ETOOLARGE);
    cr_expect_str_eq(kp_error_last(),
                     "lim.yaml: document 1, line 1 column 257: nesting deeper than 256 levels");
    cr_assert_eq(parse_with(block, strlen(block), lim), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "nesting deeper than 256 levels"));
    free(ok);
    free(deep);
    free(block);
}

Test(yaml, alias_cannot_nest_past_the_depth_cap)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    lim.max_depth = 4;
    const char *fits = "a: &a [[1]]\nb: [*a]\n";
    const char *too_deep = "a: &a [[[1]]]\nb: [*a]\n";
    cr_assert_eq(parse_with(fits, strlen(fits), lim), 0, "%s", kp_error_last());
    cr_assert_eq(parse_with(too_deep, strlen(too_deep), lim), KP_ETOOLARGE);
    cr_expect_str_eq(kp_error_last(),
                     "lim.yaml: document 1, line 2 column 5: alias 'a' nests deeper than 4 levels");
}

/* The classic "billion laughs": nine levels of nine aliases each. */
static char *alias_bomb(int levels)
{
    kp_buf b = KP_BUF_INIT(1 << 16);
    kp_buf_puts(&b, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (int i = 1; i < levels; i++) {
        kp_buf_printf(&b, "a%d: &a%d [", i, i);
        for (int k = 0; k < 9; k++)
            kp_buf_printf(&b, "%s*a%d", k ? ", " : "", i - 1);
        kp_buf_puts(&b, "]\n");
    }
    return kp_buf_detach(&b);
}

Test(yaml, alias_bomb_is_stopped)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    char *small = alias_bomb(3), *bomb = alias_bomb(9);
    cr_assert_eq(parse_with(small, strlen(small), lim), 0, "%s", kp_error_last());
    cr_assert_eq(parse_with(bomb, strlen(bomb), lim), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "aliases and merges expand to more than 100000 values"), "%s",
              kp_error_last());
    free(small);
    free(bomb);
}

Test(yaml, merge_bomb_is_stopped)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    lim.max_alias_nodes = 1000;
    kp_buf b = KP_BUF_INIT(1 << 16);
    kp_buf_puts(&b, "m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n");
    for (int i = 1; i < 40; i++)
        kp_buf_printf(&b, "m%d: &m%d {<<: *m%d, k%d: %d}\n", i, i, i - 1, i, i);
    cr_assert_eq(parse_with(b.data, b.len, lim), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "expand to more than 1000 values"), "%s", kp_error_last());
    kp_buf_free(&b);
}

Test(yaml, node_count_is_capped)
{
    kp_yaml_limits lim = KP_YAML_LIMITS_INIT;
    lim.max_nodes = 5;
    cr_assert_eq(parse_with("[1, 2, 3, 4]", 12, lim), 0, "%s", kp_error_last());
    cr_assert_eq(parse_with("[1, 2, 3, 4, 5]", 15, lim), KP_ETOOLARGE);
    cr_expect_str_eq(kp_error_last(),
                     "lim.yaml: document 1, line 1 column 14: more than 5 values in one stream");
}

/* ---- exact integers -------------------------------------------------------- */

Test(yaml, big_integers_keep_their_exact_value)
{
    cJSON *root = NULL;
    const char *text = "a: 9007199254740993\nb: -9007199254740993\nc: 42\nd: 1.5\n"
                       "e: 18446744073709551615\n";
    cr_assert_eq(kp_yaml_parse_one(&root, text, strlen(text), "n", NULL), 0, "%s", kp_error_last());
    int64_t v = 0;
    cr_assert_eq(kp_json_int64(&v, cJSON_GetObjectItem(root, "a")), 0);
    cr_expect_eq(v, INT64_C(9007199254740993));
    cr_assert_eq(kp_json_int64(&v, cJSON_GetObjectItem(root, "b")), 0);
    cr_expect_eq(v, INT64_C(-9007199254740993));
    cr_assert_eq(kp_json_int64(&v, cJSON_GetObjectItem(root, "c")), 0);
    cr_expect_eq(v, 42);
    cr_expect_null(kp_json_number_text(cJSON_GetObjectItem(root, "c")));
    cr_expect_eq(kp_json_int64(&v, cJSON_GetObjectItem(root, "d")), KP_EINVALID);
    cr_expect_eq(kp_json_int64(&v, cJSON_GetObjectItem(root, "e")), KP_EOVERFLOW);
    cr_expect_eq(kp_json_int64(&v, root), KP_EINVALID);
    /* Changing the number makes the stale text invisible. */
    cJSON_SetNumberValue(cJSON_GetObjectItem(root, "a"), 7);
    cr_expect_null(kp_json_number_text(cJSON_GetObjectItem(root, "a")));
    cr_assert_eq(kp_json_int64(&v, cJSON_GetObjectItem(root, "a")), 0);
    cr_expect_eq(v, 7);
    /* Copies keep the text. */
    cJSON *copy = cJSON_Duplicate(cJSON_GetObjectItem(root, "b"), 1);
    cr_expect_str_eq(kp_json_number_text(copy), "-9007199254740993");
    cJSON_Delete(copy);
    cJSON_Delete(root);
}

Test(json_out, int64_of_plain_doubles)
{
    int64_t v = 0;
    cJSON *n = cJSON_CreateNumber(1e19);
    cr_expect_eq(kp_json_int64(&v, n), KP_EOVERFLOW);
    cJSON_SetNumberValue(n, -9223372036854775808.0);
    cr_assert_eq(kp_json_int64(&v, n), 0);
    cr_expect_eq(v, INT64_MIN);
    cJSON_Delete(n);
}

Test(json_out, dedupe_keeps_the_last_of_each_key)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < 40; i++) {
        char key[8];
        snprintf(key, sizeof(key), "k%d", i % 10);
        cJSON_AddNumberToObject(o, key, i);
    }
    cJSON *inner = cJSON_AddObjectToObject(o, "inner");
    cJSON_AddNumberToObject(inner, "x", 1);
    cJSON_AddNumberToObject(inner, "x", 2);
    kp_json_dedupe_keys(o);
    cr_expect_eq(cJSON_GetArraySize(o), 11);
    cr_expect_eq(cJSON_GetObjectItem(o, "k3")->valuedouble, 33);
    cr_expect_str_eq(o->child->string, "k0");
    cr_expect_eq(o->child->valuedouble, 30);
    cr_expect_eq(cJSON_GetArraySize(inner), 1);
    cr_expect_eq(cJSON_GetObjectItem(inner, "x")->valuedouble, 2);
    kp_json_dedupe_keys(NULL);
    cJSON_Delete(o);
}

/* ---- number spelling ------------------------------------------------------- */

struct float_case {
    double v;
    enum kp_float_style style;
    const char *text;
};

static struct float_case float_cases[] = {
    {1.5, KP_FLOAT_JSON, "1.5"},
    {100000, KP_FLOAT_JSON, "100000"},
    {1e20, KP_FLOAT_JSON, "100000000000000000000"},
    {1e21, KP_FLOAT_JSON, "1e+21"},
    {0.000001, KP_FLOAT_JSON, "0.000001"},
    {1e-7, KP_FLOAT_JSON, "1e-7"},
    {-2.5e-10, KP_FLOAT_JSON, "-2.5e-10"},
    {0.1, KP_FLOAT_JSON, "0.1"},
    {0, KP_FLOAT_JSON, "0"},
    {1.5, KP_FLOAT_YAML, "1.5"},
    {1000000, KP_FLOAT_YAML, "1000000"},
    {1e20, KP_FLOAT_YAML, "1e+20"},
    {1000000.5, KP_FLOAT_YAML, "1.0000005e+06"},
    {0.0001, KP_FLOAT_YAML, "0.0001"},
    {0.00001, KP_FLOAT_YAML, "1e-05"},
    {-3, KP_FLOAT_YAML, "-3"},
    {1.0 / 0.0, KP_FLOAT_YAML, ".inf"},
    {1000, KP_FLOAT_KEY32, "1000"},
    {1e6, KP_FLOAT_KEY32, "1e+06"},
    {0.1, KP_FLOAT_KEY32, "0.1"},
    {123456789, KP_FLOAT_KEY32, "1.2345679e+08"},
    {1e300, KP_FLOAT_KEY32, ".inf"},
    {-1e300, KP_FLOAT_KEY32, "-.inf"},
};

ParameterizedTestParameters(json_out, float_spelling)
{
    return TABLE_PARAMS(float_cases);
}

ParameterizedTest(size_t *i, json_out, float_spelling)
{
    const struct float_case *c = &float_cases[*i];
    char buf[64];
    cr_expect_str_eq(kp_json_format_float(buf, sizeof(buf), c->v, c->style), c->text,
                     "%.17g style %d", c->v, c->style);
}

/* ---- JSON output ----------------------------------------------------------- */

Test(json_out, pretty_json_is_indented_like_kubectl)
{
    cJSON *root = NULL;
    const char *text = "a: 1\nb: [x, {c: null}]\nd: {}\ne: []\nf: 9007199254740993\n";
    cr_assert_eq(kp_yaml_parse_one(&root, text, strlen(text), "p", NULL), 0);
    kp_buf b = KP_BUF_INIT(4096);
    cr_assert_eq(kp_json_out_json(&b, root, 1), 0);
    cr_expect_str_eq(kp_buf_cstr(&b), "{\n"
                                      "    \"a\": 1,\n"
                                      "    \"b\": [\n"
                                      "        \"x\",\n"
                                      "        {\n"
                                      "            \"c\": null\n"
                                      "        }\n"
                                      "    ],\n"
                                      "    \"d\": {},\n"
                                      "    \"e\": [],\n"
                                      "    \"f\": 9007199254740993\n"
                                      "}\n");
    kp_buf_free(&b);
    cJSON_Delete(root);
}

Test(json_out, json_output_respects_the_cap_and_keeps_earlier_content)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "long", "0123456789012345678901234567890123456789");
    kp_buf b = KP_BUF_INIT(32);
    kp_buf_puts(&b, "before;");
    cr_assert_eq(kp_json_out_json(&b, root, 0), KP_ETOOLARGE);
    cr_expect_str_eq(kp_buf_cstr(&b), "before;");
    cr_assert_eq(kp_json_out_yaml(&b, root, 0), KP_ETOOLARGE);
    cr_expect_str_eq(kp_buf_cstr(&b), "before;");
    cr_expect(strstr(kp_error_last(), "32 bytes"), "%s", kp_error_last());
    kp_buf_free(&b);
    cJSON_Delete(root);
}

/* ---- YAML output --------------------------------------------------------------- */

struct quote_case {
    const char *value;
    const char *yaml; /* the document `v: <value>` as emitted */
};

static struct quote_case quote_cases[] = {
    {"plain", "v: plain\n"},
    {"true", "v: \"true\"\n"},
    {"yes", "v: \"yes\"\n"},
    {"Off", "v: \"Off\"\n"},
    {"y", "v: \"y\"\n"},
    {"1", "v: \"1\"\n"},
    {"1.5", "v: \"1.5\"\n"},
    {"0x10", "v: \"0x10\"\n"},
    {"007", "v: \"007\"\n"},
    {"1e3", "v: \"1e3\"\n"},
    {"1_000", "v: \"1_000\"\n"},
    {".inf", "v: \".inf\"\n"},
    {"1:30", "v: \"1:30\"\n"},
    {"~", "v: \"~\"\n"},
    {"null", "v: \"null\"\n"},
    {"", "v: \"\"\n"},
    {"<<", "v: \"<<\"\n"},
    {"500m", "v: 500m\n"},
    {"2001-12-14", "v: 2001-12-14\n"},
    {"- dash", "v: '- dash'\n"},
    {"a: b", "v: 'a: b'\n"},
    {"#hash", "v: '#hash'\n"},
    {" lead", "v: ' lead'\n"},
    {"line1\nline2", "v: |-\n  line1\n  line2\n"},
    {"caf\xc3\xa9", "v: caf\xc3\xa9\n"},
    {"tab\there", "v: \"tab\\there\"\n"},
};

ParameterizedTestParameters(json_out, yaml_quoting)
{
    return TABLE_PARAMS(quote_cases);
}

ParameterizedTest(size_t *i, json_out, yaml_quoting)
{
    const struct quote_case *c = &quote_cases[*i];
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "v", c->value);
    kp_buf b = KP_BUF_INIT(4096);
    cr_assert_eq(kp_json_out_yaml(&b, root, 0), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_buf_cstr(&b), c->yaml);
    /* and it reads back as the same string */
    cJSON *back = NULL;
    cr_assert_eq(kp_yaml_parse_one(&back, b.data, b.len, "q", NULL), 0, "%s", kp_error_last());
    cr_expect(cJSON_Compare(root, back, 1), "%s", b.data);
    cJSON_Delete(back);
    kp_buf_free(&b);
    cJSON_Delete(root);
}

Test(json_out, yaml_of_a_document_reads_like_kubectl_output)
{
    cJSON *root = NULL;
    const char *text = "{\"kind\": \"Pod\", \"metadata\": {\"labels\": {}, \"name\": \"p\"}, "
                       "\"spec\": {\"containers\": [{\"name\": \"c\", \"ports\": [80, 443]}], "
                       "\"x\": [], \"n\": null, \"f\": 0.5, \"b\": false}}";
    cr_assert_eq(kp_yaml_parse_one(&root, text, strlen(text), "k", NULL), 0);
    kp_buf b = KP_BUF_INIT(4096);
    cr_assert_eq(kp_json_out_yaml(&b, root, 0), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_buf_cstr(&b), "kind: Pod\n"
                                      "metadata:\n"
                                      "  labels: {}\n"
                                      "  name: p\n"
                                      "spec:\n"
                                      "  containers:\n"
                                      "  - name: c\n"
                                      "    ports:\n"
                                      "    - 80\n"
                                      "    - 443\n"
                                      "  x: []\n"
                                      "  \"n\": null\n"
                                      "  f: 0.5\n"
                                      "  b: false\n");
    kp_buf_free(&b);
    cJSON_Delete(root);
}

Test(json_out, yaml_stream_separates_documents)
{
    cJSON *docs[3] = {cJSON_CreateObject(), cJSON_CreateArray(), cJSON_CreateString("s")};
    cJSON_AddNumberToObject(docs[0], "a", 1);
    cJSON_AddItemToArray(docs[1], cJSON_CreateNumber(2));
    kp_buf b = KP_BUF_INIT(4096);
    cr_assert_eq(kp_json_out_yaml_stream(&b, docs, 3), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_buf_cstr(&b), "a: 1\n---\n- 2\n--- s\n");
    struct collected c = {0};
    cr_assert_eq(kp_yaml_parse_stream(b.data, b.len, "s", NULL, collect, &c), 0);
    cr_assert_eq(c.count, 3);
    for (int i = 0; i < 3; i++)
        cr_expect(cJSON_Compare(docs[i], c.docs[i], 1), "document %d", i);
    collected_free(&c);
    kp_buf_free(&b);
    for (int i = 0; i < 3; i++)
        cJSON_Delete(docs[i]);
}

Test(json_out, yaml_refuses_what_it_cannot_carry)
{
    kp_buf b = KP_BUF_INIT(4096);
    cJSON *raw = cJSON_CreateObject();
    cJSON_AddRawToObject(raw, "r", "{\"x\":1}");
    cr_expect_eq(kp_json_out_yaml(&b, raw, 0), KP_EINVALID);
    cJSON *bad = cJSON_CreateString("\xff\xfe");
    cr_expect_eq(kp_json_out_yaml(&b, bad, 0), KP_EINVALID);
    cr_expect_str_eq(kp_buf_cstr(&b), "");
    /* JSON output passes raw text through */
    cr_assert_eq(kp_json_out_json(&b, raw, 0), 0);
    cr_expect_str_eq(kp_buf_cstr(&b), "{\"r\":{\"x\":1}}");
    cJSON_Delete(raw);
    cJSON_Delete(bad);
    kp_buf_free(&b);
}

/* YAML -> JSON -> YAML -> JSON gives the same tree. */
static const char *round_trips[] = {
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n"
    "  template:\n    spec:\n      requirements:\n      - key: kubernetes.io/arch\n"
    "        operator: In\n        values: [amd64, arm64]\n      expireAfter: 720h\n"
    "  limits:\n    cpu: 1000\n    memory: 1000Gi\n  disruption:\n"
    "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m\n",
    "strings: ['true', 'no', '1', '0x1F', '1e3', '', '~', 'null', '<<', '1:20', '.5', '+1',"
    " ' x', 'x ', '- y', '? z', '#c', 'a #b', '%p', '@at', '`tick', '{}', '[]', '*star',"
    " '&amp', '!bang', '|pipe', '>gt', \"it's\", '\"dq\"', 'back\\slash']\n",
    "multi: \"line1\\nline2\\n\"\ntrail: \"x\\n\\n\"\nlead: \"\\n  indented\"\n"
    "spaces: \"a  \\n  b\"\nonlynl: \"\\n\"\nctrl: \"\\x01\\x7f\"\nbom: \"\\ufeff\"\n"
    "uni: \"\\u2028 \\U0001F600 \\u00e9\"\n",
    "numbers: [0, -1, 1.5, 1e+36, 9007199254740993, -9223372036854775808, 18446744073709551615,"
    " 0.000001, 1e-7, 123456.789, 100000000000000000000]\n",
    "nested: {a: [{b: [[], {}]}, [[[1]]]], \"key with spaces\": {\"\": empty-key}}\n",
    "\"true\": 1\n\"1\": 2\n\"null\": 3\n\"\": 4\nlong: " /* long line, no folding */
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb "
    "ccccccccccccccccccccccccccccccc\n",
    "b: &b {x: 1}\nm: {<<: *b, y: 2}\nl: [*b, *b]\n",
};

Test(json_out, round_trip_yaml_json_yaml_json)
{
    for (size_t i = 0; i < sizeof(round_trips) / sizeof(round_trips[0]); i++) {
        cJSON *first = NULL, *second = NULL;
        cr_assert_eq(kp_yaml_parse_one(&first, round_trips[i], strlen(round_trips[i]), "rt", NULL),
                     0, "case %zu: %s", i, kp_error_last());
        kp_buf b = KP_BUF_INIT(1 << 16);
        cr_assert_eq(kp_json_out_yaml(&b, first, 0), 0, "case %zu: %s", i, kp_error_last());
        cr_assert_eq(kp_yaml_parse_one(&second, b.data, b.len, "rt2", NULL), 0, "case %zu: %s\n%s",
                     i, kp_error_last(), b.data);
        cr_expect(cJSON_Compare(first, second, 1), "case %zu differs:\n%s", i, b.data);
        kp_buf c = KP_BUF_INIT(1 << 16), d = KP_BUF_INIT(1 << 16);
        kp_json_out_json(&c, first, 0);
        kp_json_out_json(&d, second, 0);
        cr_expect_str_eq(kp_buf_cstr(&c), kp_buf_cstr(&d), "case %zu (exact numbers)", i);
        kp_buf_free(&b);
        kp_buf_free(&c);
        kp_buf_free(&d);
        cJSON_Delete(first);
        cJSON_Delete(second);
    }
}

Test(yaml, plain_is_string_matches_the_reader)
{
    static const char *strings[] = {"abc", "500m", "1.2.3", "0x", "v1", "-", "2001-12-14"};
    static const char *others[] = {"",   "~",   "null", "true", "Y",     "off", "0",
                                   "-1", "0o7", "1e3",  ".5",   "+.inf", "<<",  "1_0"};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        cr_expect(kp_yaml_plain_is_string(strings[i], strlen(strings[i])), "%s", strings[i]);
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        cr_expect(!kp_yaml_plain_is_string(others[i], strlen(others[i])), "%s", others[i]);
}
