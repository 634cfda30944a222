/*
 * webhook/review and webhook/handler: AdmissionReview parsing (valid,
 * malformed, oversized, missing uid, wrong apiVersion or kind), response
 * building (denials, warnings, base64 JSON Patch), and the handler's
 * dispatch, which must fail closed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/arena.h"
#include "base/error.h"
#include "webhook/handler.h"
#include "webhook/review.h"
#include "helpers/assert.h"

#include <openssl/evp.h>

/* An AdmissionReview around `request_members` (JSON object members). */
static char *review_json(const char *request_members)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    fprintf(
        f, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{%s}}",
        request_members);
    fclose(f);
    return out;
}

static const char nodepool_request[] =
    "\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
    "\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"kind\":\"NodePool\"},"
    "\"resource\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"resource\":\"nodepools\"},"
    "\"name\":\"default\",\"operation\":\"CREATE\",\"dryRun\":true,"
    "\"userInfo\":{\"username\":\"admin\"},"
    "\"object\":{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":"
    "\"default\"},\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s."
    "aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"},\"expireAfter\":\"720h\","
    "\"requirements\":[]}},\"disruption\":{\"consolidationPolicy\":\"WhenEmptyOrUnderutilized\","
    "\"consolidateAfter\":\"0s\",\"budgets\":[{\"nodes\":\"10%\"}]}}},"
    "\"oldObject\":null";

/* ---- parsing ------------------------------------------------------------------------ */

Test(review_parse, valid_request)
{
    char *body = review_json(nodepool_request);
    kp_review r;
    KP_ASSERT_OK(kp_review_parse(&r, body, strlen(body)));
    cr_expect_str_eq(r.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    cr_expect_str_eq(r.group, "karpenter.sh");
    cr_expect_str_eq(r.version, "v1");
    cr_expect_str_eq(r.kind, "NodePool");
    cr_expect_str_eq(r.operation, "CREATE");
    cr_expect_eq(r.op, KP_REVIEW_OP_CREATE);
    cr_expect_str_eq(r.name, "default");
    cr_expect_null(r.namespace_);
    cr_expect(cJSON_IsObject(r.object));
    cr_expect_null(r.old_object); /* JSON null reads as absent */
    cr_expect(r.dry_run);
    kp_review_clear(&r);
    cr_expect_null(r.root);
    free(body);
}

Test(review_parse, body_need_not_be_terminated_and_may_end_in_whitespace)
{
    char *body = review_json("\"uid\":\"u\"");
    size_t n = strlen(body);
    char *copy = malloc(n + 3);
    memcpy(copy, body, n);
    memcpy(copy + n, " \nX", 3); /* the X is past the length given */
    kp_review r;
    KP_ASSERT_OK(kp_review_parse(&r, copy, n + 2));
    kp_review_clear(&r);
    free(copy);
    free(body);
}

static const struct {
    const char *body;
    const char *message;
} malformed[] = {
    {"{", "not valid JSON"},
    {"[]", "not a JSON object"},
    {"null", "not a JSON object"},
    {"\"x\"", "not a JSON object"},
    {"{} {}", "data after the JSON value"},
    /* as strict as the manifest loader */
    {"{\"kind\":\"Admission\xffReview\"}", "invalid UTF-8"},
    {"{\"kind\":\"Admission\xc0\xafReview\"}", "invalid UTF-8"},
    {"{\"kind\":\"AdmissionReview\\u0000\"}", "strings containing NUL are not supported"},
    {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "]]]",
     "nesting too deep"},
    {"{\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}", "apiVersion none"},
    {"{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{"
     "\"uid\":\"u\"}}",
     "unsupported AdmissionReview apiVersion admission.k8s.io/v1beta1"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\",\"request\":{\"uid\":\"u\"}}",
     "expected kind AdmissionReview, got Pod"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", "has no request"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":[]}",
     "has no request"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
     "request.uid is missing"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"
     "\"\"}}",
     "request.uid is missing"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"
     "7}}",
     "request.uid is missing"},
};

Test(review_parse, malformed_bodies_are_invalid_with_a_message)
{
    for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
        kp_review r;
        memset(&r, 0x5a, sizeof(r));
        int err = kp_review_parse(&r, malformed[i].body, strlen(malformed[i].body));
        cr_expect_eq(err, KP_EINVALID, "accepted %s", malformed[i].body);
        cr_expect(strstr(kp_error_last(), malformed[i].message) != NULL, "%s: %s",
                  malformed[i].body, kp_error_last());
    }
    kp_review r;
    cr_expect_eq(kp_review_parse(&r, "", 0), KP_EINVALID);
    cr_expect_eq(kp_review_parse(&r, NULL, 0), KP_EINVALID);
    /* a NUL byte inside the body, where a C string would end */
    static const char nul[] = "{\"kind\":\"AdmissionReview\"}\0{}";
    cr_expect_eq(kp_review_parse(&r, nul, sizeof(nul) - 1), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "NUL byte") != NULL, "%s", kp_error_last());
}

/* Go's encoding/json keeps the last of repeated keys: so must we, or a
 * review could be judged on a value the API server does not store. */
Test(review_parse, repeated_keys_keep_the_last_as_go_does)
{
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"first\",\"operation\":\"DELETE\",\"uid\":\"last\","
                       "\"operation\":\"CREATE\",\"object\":{\"spec\":{\"a\":1},\"spec\":{\"b\":2}}}}";
    kp_review r;
    KP_ASSERT_OK(kp_review_parse(&r, body, strlen(body)));
    cr_expect_str_eq(r.uid, "last");
    cr_expect_eq(r.op, KP_REVIEW_OP_CREATE);
    const cJSON *spec = cJSON_GetObjectItem(r.object, "spec");
    cr_expect_eq(cJSON_GetArraySize(r.object), 1);
    cr_expect_not_null(cJSON_GetObjectItem(spec, "b"));
    kp_review_clear(&r);
}

Test(review_parse, oversized_bodies_are_refused_before_parsing)
{
    size_t n = KP_REVIEW_MAX_BYTES + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    kp_review r;
    cr_expect_eq(kp_review_parse(&r, big, n), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "over the limit") != NULL);
    free(big);
}

Test(review_parse, operations)
{
    cr_expect_eq(kp_review_op_parse("CREATE"), KP_REVIEW_OP_CREATE);
    cr_expect_eq(kp_review_op_parse("UPDATE"), KP_REVIEW_OP_UPDATE);
    cr_expect_eq(kp_review_op_parse("DELETE"), KP_REVIEW_OP_DELETE);
    cr_expect_eq(kp_review_op_parse("CONNECT"), KP_REVIEW_OP_CONNECT);
    cr_expect_eq(kp_review_op_parse("create"), KP_REVIEW_OP_UNKNOWN);
    cr_expect_eq(kp_review_op_parse(NULL), KP_REVIEW_OP_UNKNOWN);
}

/* ---- responses --------------------------------------------------------------------- */

Test(review_response, base64_rfc4648_vectors)
{
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        kp_buf b = KP_BUF_INIT(64);
        cr_assert_eq(kp_base64_append(&b, in[i], strlen(in[i])), 0);
        cr_expect_str_eq(kp_buf_cstr(&b), out[i]);
        kp_buf_free(&b);
    }
}

Test(review_response, allowed_with_warnings_and_patch)
{
    cJSON *patch = cJSON_Parse("[{\"op\":\"add\",\"path\":\"/spec/weight\",\"value\":10}]");
    const char *warnings[] = {"one \"quoted\"", "two\nlines"};
    kp_review_response resp = {"u-1", true, 0, NULL, NULL, warnings, 2, patch};
    kp_buf out = KP_BUF_INIT(1 << 16);
    cr_assert_eq(kp_review_response_write(&out, &resp), 0);
    cJSON *root = cJSON_Parse(kp_buf_cstr(&out));
    cr_assert_not_null(root, "not JSON: %s", kp_buf_cstr(&out));
    cr_expect_str_eq(cJSON_GetObjectItem(root, "apiVersion")->valuestring, "admission.k8s.io/v1");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "kind")->valuestring, "AdmissionReview");
    cJSON *r = cJSON_GetObjectItem(root, "response");
    cr_expect_str_eq(cJSON_GetObjectItem(r, "uid")->valuestring, "u-1");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(r, "allowed")));
    cr_expect_null(cJSON_GetObjectItem(r, "status"));
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 0)->valuestring,
                     "one \"quoted\"");
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 1)->valuestring,
                     "two\nlines");
    cr_expect_str_eq(cJSON_GetObjectItem(r, "patchType")->valuestring, "JSONPatch");
    const char *b64 = cJSON_GetObjectItem(r, "patch")->valuestring;
    unsigned char decoded[256];
    int n = EVP_DecodeBlock(decoded, (const unsigned char *)b64, (int)strlen(b64));
    cr_assert_gt(n, 0);
    while (n > 0 && decoded[n - 1] == '\0') /* EVP_DecodeBlock counts padding as NULs */
        n--;
    decoded[n] = '\0';
    cr_expect_str_eq((char *)decoded, "[{\"op\":\"add\",\"path\":\"/spec/weight\",\"value\":10}]");
    cJSON_Delete(root);
    cJSON_Delete(patch);
    kp_buf_free(&out);
}

Test(review_response, denial_carries_a_status_and_no_patch)
{
    cJSON *patch = cJSON_Parse("[{\"op\":\"add\",\"path\":\"/a\",\"value\":1}]");
    kp_review_response resp = {"u-2", false, 403, "Forbidden", "refused: \"why\"", NULL, 0, patch};
    kp_buf out = KP_BUF_INIT(1 << 16);
    cr_assert_eq(kp_review_response_write(&out, &resp), 0);
    cr_expect_str_eq(kp_buf_cstr(&out),
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"response\":{\"uid\":\"u-2\",\"allowed\":false,\"status\":{\"metadata\":{},"
                     "\"status\":\"Failure\",\"message\":\"refused: \\\"why\\\"\",\"reason\":"
                     "\"Forbidden\",\"code\":403}}}");
    cJSON_Delete(patch);
    kp_buf_free(&out);
}

Test(review_response, too_small_a_buffer_is_an_error_and_leaves_it)
{
    kp_review_response resp = {"u", true, 0, NULL, NULL, NULL, 0, NULL};
    kp_buf out = KP_BUF_INIT(20);
    KP_ASSERT_OK(kp_buf_puts(&out, "x"));
    cr_expect_eq(kp_review_response_write(&out, &resp), KP_ETOOLARGE);
    cr_expect_str_eq(kp_buf_cstr(&out), "x");
    kp_buf_free(&out);
}

Test(review_response, status_for_http_errors)
{
    kp_buf out = KP_BUF_INIT(1 << 10);
    cr_assert_eq(kp_review_status_write(&out, 413, "RequestEntityTooLarge", "too big"), 0);
    cr_expect_str_eq(kp_buf_cstr(&out),
                     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                     "\"Failure\",\"message\":\"too big\",\"reason\":\"RequestEntityTooLarge\","
                     "\"code\":413}");
    kp_buf_free(&out);
}

/* ---- the handler ------------------------------------------------------------------- */

typedef struct handled {
    kp_webhook_outcome outcome;
    cJSON *root;     /* the body, parsed */
    cJSON *response; /* root.response, when 200 */
} handled;

static void handle_with(handled *h, const char *policy_yaml, enum kp_webhook_endpoint ep,
                        const char *body, size_t len)
{
    kp_policy *policy = NULL;
    KP_ASSERT_OK(kp_policy_parse(&policy, policy_yaml, strlen(policy_yaml), NULL));
    kp_arena *arena = kp_arena_new();
    kp_buf out = KP_BUF_INIT(KP_WEBHOOK_MAX_RESPONSE);
    kp_webhook_handle(policy, ep, body, len, arena, &out, &h->outcome);
    h->root = cJSON_Parse(kp_buf_cstr(&out));
    cr_assert_not_null(h->root, "response is not JSON: %s", kp_buf_cstr(&out));
    h->response = cJSON_GetObjectItem(h->root, "response");
    kp_buf_free(&out);
    kp_arena_free(arena);
    kp_policy_unref(policy);
}

static void handle(handled *h, enum kp_webhook_endpoint ep, const char *request_members)
{
    char *body = review_json(request_members);
    handle_with(h, "{}", ep, body, strlen(body));
    free(body);
}

static bool allowed(const handled *h)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(h->response, "allowed"));
}

static const char *status_message(const handled *h)
{
    const cJSON *status = cJSON_GetObjectItem(h->response, "status");
    const cJSON *m = cJSON_GetObjectItem(status, "message");
    return cJSON_IsString(m) ? m->valuestring : "";
}

static int status_code(const handled *h)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(h->response, "status"), "code")->valueint;
}

Test(handler, malformed_and_oversized_are_http_errors)
{
    handled h;
    handle_with(&h, "{}", KP_WEBHOOK_VALIDATE, "{nope", 5);
    cr_expect_eq(h.outcome.http_status, 400);
    cr_expect_str_eq(h.outcome.result, "rejected");
    cr_expect_str_eq(cJSON_GetObjectItem(h.root, "kind")->valuestring, "Status");
    cr_expect_eq(cJSON_GetObjectItem(h.root, "code")->valueint, 400);
    cJSON_Delete(h.root);

    size_t n = KP_REVIEW_MAX_BYTES + 10;
    char *big = malloc(n);
    memset(big, ' ', n);
    handle_with(&h, "{}", KP_WEBHOOK_MUTATE, big, n);
    cr_expect_eq(h.outcome.http_status, 413);
    cJSON_Delete(h.root);
    free(big);

    const char *no_uid = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                         "\"request\":{\"operation\":\"CREATE\"}}";
    handle_with(&h, "{}", KP_WEBHOOK_VALIDATE, no_uid, strlen(no_uid));
    cr_expect_eq(h.outcome.http_status, 400);
    cr_expect(strstr(cJSON_GetObjectItem(h.root, "message")->valuestring, "uid") != NULL);
    cJSON_Delete(h.root);
}

static const struct {
    enum kp_webhook_endpoint ep;
    const char *request;
    const char *message;
} denials[] = {
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\"},"
     "\"operation\":\"CREATE\",\"object\":{}",
     "unsupported kind apps/v1, Kind=Deployment"},
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1beta1\",\"kind\":"
     "\"NodePool\"},\"operation\":\"CREATE\",\"object\":{}",
     "unsupported kind karpenter.sh/v1beta1"},
    {KP_WEBHOOK_VALIDATE, "\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{}",
     "unsupported kind"},
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"kind\":\"NodePool\"},"
     "\"operation\":\"PATCH\",\"object\":{}",
     "unsupported operation PATCH"},
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"kind\":\"NodePool\"},"
     "\"operation\":\"CREATE\"",
     "request.object is missing"},
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"kind\":\"NodePool\"},"
     "\"operation\":\"CREATE\",\"object\":[1]",
     "request.object is missing"},
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"kind\":\"NodePool\"},"
     "\"operation\":\"UPDATE\",\"object\":{}",
     "request.oldObject is missing on UPDATE"},
    {KP_WEBHOOK_VALIDATE,
     "\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
     "\"operation\":\"CREATE\",\"object\":{}",
     "send them to /mutate"},
};

Test(handler, requests_it_cannot_judge_are_denied_not_allowed)
{
    for (size_t i = 0; i < sizeof(denials) / sizeof(denials[0]); i++) {
        handled h;
        handle(&h, denials[i].ep, denials[i].request);
        cr_expect_eq(h.outcome.http_status, 200);
        cr_expect_not(allowed(&h), "case %zu allowed", i);
        cr_expect_str_eq(h.outcome.result, "denied");
        cr_expect_str_eq(cJSON_GetObjectItem(h.response, "uid")->valuestring, "u");
        cr_expect(strstr(status_message(&h), denials[i].message) != NULL, "case %zu: %s", i,
                  status_message(&h));
        cr_expect_eq(status_code(&h), 400);
        cJSON_Delete(h.root);
    }
}

Test(handler, delete_is_allowed_untouched)
{
    handled h;
    handle(&h, KP_WEBHOOK_VALIDATE,
           "\"uid\":\"d\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1\",\"kind\":"
           "\"NodeClaim\"},\"operation\":\"DELETE\",\"oldObject\":{}");
    cr_expect(allowed(&h));
    cr_expect_str_eq(h.outcome.kind, "NodeClaim");
    cr_expect_str_eq(h.outcome.operation, "DELETE");
    cr_expect_str_eq(h.outcome.result, "allowed");
    cJSON_Delete(h.root);
}

Test(handler, labels_and_dry_run_are_reported)
{
    handled h;
    handle(&h, KP_WEBHOOK_VALIDATE, nodepool_request);
    cr_expect_str_eq(h.outcome.kind, "NodePool");
    cr_expect_str_eq(h.outcome.operation, "CREATE");
    cr_expect(h.outcome.dry_run);
    cr_expect_str_eq(cJSON_GetObjectItem(h.response, "uid")->valuestring,
                     "705ab4f5-6393-11e8-b7cc-42010a800002");
    cJSON_Delete(h.root);
}

Test(handler, policy_denial_names_the_rule_with_code_403)
{
    char *body = review_json(nodepool_request);
    handled h;
    handle_with(&h, "nodePools: {requireLimits: [cpu]}", KP_WEBHOOK_VALIDATE, body, strlen(body));
    cr_expect_not(allowed(&h));
    cr_expect_eq(status_code(&h), 403);
    cr_expect(strstr(status_message(&h), "NodePool \"default\" is refused by policy") != NULL, "%s",
              status_message(&h));
    cr_expect(strstr(status_message(&h), "nodePools.requireLimits") != NULL, "%s",
              status_message(&h));
    cJSON_Delete(h.root);
    free(body);
}

Test(handler, pod_mutation_patches_on_create_only)
{
    const char *pod = "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                      "\"namespace\":\"default\",\"object\":{\"metadata\":{\"name\":\"p\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}";
    char members[1024];
    snprintf(members, sizeof(members), "\"uid\":\"p1\",\"operation\":\"CREATE\",%s", pod);
    char *body = review_json(members);
    handled h;
    handle_with(&h, "pods: {defaultRequests: {cpu: 100m}}", KP_WEBHOOK_MUTATE, body, strlen(body));
    cr_expect(allowed(&h));
    cr_expect_str_eq(h.outcome.result, "patched");
    cr_expect_str_eq(cJSON_GetObjectItem(h.response, "patchType")->valuestring, "JSONPatch");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(h.response, "warnings")), 1);
    cJSON_Delete(h.root);
    free(body);

    snprintf(members, sizeof(members),
             "\"uid\":\"p2\",\"operation\":\"UPDATE\",\"oldObject\":{},%s", pod);
    body = review_json(members);
    handle_with(&h, "pods: {defaultRequests: {cpu: 100m}}", KP_WEBHOOK_MUTATE, body, strlen(body));
    cr_expect(allowed(&h));
    cr_expect_str_eq(h.outcome.result, "allowed");
    cr_expect_null(cJSON_GetObjectItem(h.response, "patch"));
    cJSON_Delete(h.root);
    free(body);
}

/* A Pod whose mutation would not fit the reply: one summary warning and the
 * Pod admitted as sent, rather than an HTTP 500 the API server would turn
 * into a failed (or, with failurePolicy Ignore, silently unmutated) Pod. */
Test(handler, pod_mutation_too_large_for_the_reply_is_one_summary_warning)
{
    enum { N = 40000 };
    kp_buf body = KP_BUF_INIT((size_t)8 << 20);
    KP_ASSERT_OK(kp_buf_puts(&body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"big\",\"operation\":\"CREATE\",\"kind\":"
                       "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"namespace\":\"d\","
                       "\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["));
    for (int i = 0; i < N; i++)
        KP_ASSERT_OK(kp_buf_printf(&body, "%s{\"name\":\"c%d\"}", i ? "," : "", i));
    KP_ASSERT_OK(kp_buf_puts(&body, "]}}}}"));
    cr_assert_lt(body.len, KP_REVIEW_MAX_BYTES);
    handled h;
    handle_with(&h, "pods: {defaultRequests: {cpu: 100m, memory: 128Mi}}", KP_WEBHOOK_MUTATE,
                body.data, body.len);
    cr_expect_eq(h.outcome.http_status, 200);
    cr_expect(allowed(&h));
    cr_expect_str_eq(h.outcome.result, "allowed");
    cr_expect_null(cJSON_GetObjectItem(h.response, "patch"));
    const cJSON *warnings = cJSON_GetObjectItem(h.response, "warnings");
    cr_assert_eq(cJSON_GetArraySize(warnings), 1);
    const char *w = cJSON_GetArrayItem(warnings, 0)->valuestring;
    cr_expect(strstr(w, "were not applied") != NULL, "%s", w);
    cJSON_Delete(h.root);
    kp_buf_free(&body);
}

/* Metadata of the wrong shape is refused (the API server could not have
 * stored it), not skipped by rules that look for strings. */
Test(handler, wrong_typed_metadata_is_denied)
{
    static const char *const metas[] = {
        "\"metadata\":\"np\"",
        "\"metadata\":{\"name\":7}",
        "\"metadata\":{\"name\":\"np\",\"labels\":{\"app\":5}}",
        "\"metadata\":{\"name\":\"np\",\"annotations\":[\"a\"]}",
    };
    for (size_t i = 0; i < sizeof(metas) / sizeof(metas[0]); i++) {
        char members[1024];
        snprintf(members, sizeof(members),
                 "\"uid\":\"m\",\"operation\":\"CREATE\",\"kind\":{\"group\":\"karpenter.sh\","
                 "\"version\":\"v1\",\"kind\":\"NodePool\"},\"object\":{%s,\"spec\":{}}",
                 metas[i]);
        handled h;
        handle(&h, KP_WEBHOOK_VALIDATE, members);
        cr_expect_not(allowed(&h), "allowed %s", metas[i]);
        const cJSON *status = cJSON_GetObjectItem(h.response, "status");
        cr_expect_eq(cJSON_GetObjectItem(status, "code")->valueint, 400, "%s", metas[i]);
        cr_expect(strstr(cJSON_GetObjectItem(status, "message")->valuestring,
                         "request.object.metadata") != NULL);
        cJSON_Delete(h.root);
    }
}

/* NodeOverlays (karpenter.sh/v1alpha1) go through the same door: validated,
 * with the alpha warning, and a bad one denied with the rule's message. */
static const char overlay_request_head[] =
    "\"uid\":\"o\",\"kind\":{\"group\":\"karpenter.sh\",\"version\":\"v1alpha1\",\"kind\":\"NodeOverlay\"},"
    "\"resource\":{\"group\":\"karpenter.sh\",\"version\":\"v1alpha1\",\"resource\":\"nodeoverlays\"},"
    "\"name\":\"o\",\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"karpenter.sh/v1alpha1\","
    "\"kind\":\"NodeOverlay\",\"metadata\":{\"name\":\"o\"},\"spec\":";

static void handle_overlay(handled *h, enum kp_webhook_endpoint ep, const char *spec)
{
    char members[1024];
    snprintf(members, sizeof(members), "%s%s}", overlay_request_head, spec);
    handle(h, ep, members);
}

Test(handler, nodeoverlays_are_validated)
{
    handled h;
    handle_overlay(&h, KP_WEBHOOK_VALIDATE,
                   "{\"weight\":10,\"priceAdjustment\":\"-10%\",\"requirements\":[{\"key\":"
                   "\"node.kubernetes.io/instance-type\",\"operator\":\"In\",\"values\":[\"m5.large\"]}]}");
    cr_expect(allowed(&h), "%s", status_message(&h));
    cr_expect_str_eq(h.outcome.kind, "NodeOverlay");
    const cJSON *warnings = cJSON_GetObjectItem(h.response, "warnings");
    cr_expect(cJSON_GetArraySize(warnings) == 1 &&
                  strstr(cJSON_GetArrayItem(warnings, 0)->valuestring, "NodeOverlay feature gate"),
              "the alpha warning");
    cJSON_Delete(h.root);

    handle_overlay(&h, KP_WEBHOOK_VALIDATE,
                   "{\"price\":\"1\",\"priceAdjustment\":\"+1%\",\"capacity\":{\"memory\":\"1Gi\"},"
                   "\"requirements\":[]}");
    cr_expect_not(allowed(&h));
    cr_expect(strstr(status_message(&h), "NodeOverlay \"o\"") != NULL, "%s", status_message(&h));
    cr_expect(strstr(status_message(&h), "cannot set both 'price' and 'priceAdjustment'") != NULL, "%s",
              status_message(&h));
    cr_expect(strstr(status_message(&h), "spec.capacity[memory]") != NULL, "%s", status_message(&h));
    cJSON_Delete(h.root);

    handle_overlay(&h, KP_WEBHOOK_MUTATE, "{\"requirements\":[]}");
    cr_expect(allowed(&h), "no defaults, nothing to refuse");
    cr_expect_null(cJSON_GetObjectItem(h.response, "patch"));
    cJSON_Delete(h.root);
}
