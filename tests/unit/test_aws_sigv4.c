/*
 * SigV4 against AWS's published signing test suite (tests/unit/data/aws/sigv4/,
 * one folder per case: context.json, request.txt and the expected canonical
 * request, string to sign and signature for header signing).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/clock.h"
#include "base/error.h"
#include "cloud/aws/sigv4.h"

#define SUITE_DIR KP_SOURCE_DIR "/tests/unit/data/aws/sigv4"

static char *slurp(const char *dir, const char *name, size_t *len_out)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)len + 1);
    cr_assert_eq(fread(data, 1, (size_t)len, f), (size_t)len);
    data[len] = '\0';
    fclose(f);
    if (len_out)
        *len_out = (size_t)len;
    return data;
}

/* A parsed request.txt: request line, headers (continuation lines joined), body. */
typedef struct raw_request {
    char method[16];
    char *path;
    char *query;
    kp_sigv4_header headers[32];
    size_t n_headers;
    const char *body;
    size_t body_len;
} raw_request;

static void parse_request(raw_request *r, kp_arena *a, char *text, size_t len)
{
    memset(r, 0, sizeof(*r));
    char *eol = strchr(text, '\n');
    cr_assert_not_null(eol);
    *eol = '\0';
    char *sp = strchr(text, ' ');
    char *proto = strstr(text, " HTTP/");
    cr_assert(sp && proto && sp < proto);
    snprintf(r->method, sizeof(r->method), "%.*s", (int)(sp - text), text);
    char *target = kp_arena_strndup(a, sp + 1, (size_t)(proto - sp - 1));
    char *q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    r->path = target;
    r->query = q;
    char *line = eol + 1;
    while (line < text + len && *line != '\n' && *line) {
        char *end = strchr(line, '\n');
        size_t ll = end ? (size_t)(end - line) : strlen(line);
        if ((*line == ' ' || *line == '\t') && r->n_headers > 0) {
            kp_sigv4_header *h = &r->headers[r->n_headers - 1];
            h->value = kp_arena_printf(a, "%s\n%.*s", h->value, (int)ll, line);
        } else {
            char *colon = memchr(line, ':', ll);
            cr_assert_not_null(colon, "header line without ':'");
            r->headers[r->n_headers].name = kp_arena_strndup(a, line, (size_t)(colon - line));
            r->headers[r->n_headers++].value =
                kp_arena_strndup(a, colon + 1, ll - (size_t)(colon + 1 - line));
        }
        line += ll + (end ? 1 : 0);
    }
    if (line < text + len && *line == '\n') {
        r->body = line + 1;
        r->body_len = len - (size_t)(line + 1 - text);
    }
}

static const char *json_str(cJSON *obj, const char *name)
{
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static void run_case(const char *name)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", SUITE_DIR, name);
    kp_arena *a = kp_arena_new();
    char *ctx_text = slurp(dir, "context.json", NULL);
    cJSON *ctx = cJSON_Parse(ctx_text);
    cr_assert_not_null(ctx, "%s: context.json", name);
    cJSON *creds = cJSON_GetObjectItemCaseSensitive(ctx, "credentials");
    int64_t when = 0;
    cr_assert_eq(kp_time_parse_rfc3339(json_str(ctx, "timestamp"), &when), 0);
    kp_sigv4_params p = {
        .access_key_id = json_str(creds, "access_key_id"),
        .secret_access_key = json_str(creds, "secret_access_key"),
        .session_token = json_str(creds, "token"),
        .region = json_str(ctx, "region"),
        .service = json_str(ctx, "service"),
        .time_ns = when,
        .keep_path = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "normalize")),
        .add_content_sha256 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "sign_body")),
        .token_unsigned =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "omit_session_token")),
    };
    size_t req_len = 0;
    char *req_text = slurp(dir, "request.txt", &req_len);
    raw_request raw;
    parse_request(&raw, a, req_text, req_len);
    kp_sigv4_request req = {raw.method, raw.path,      raw.query,   raw.headers,
                            raw.n_headers, raw.body, raw.body_len};
    kp_sigv4_result out;
    cr_assert_eq(kp_sigv4_sign(&out, a, &req, &p), 0, "%s: %s", name, kp_error_last());

    char *creq = slurp(dir, "header-canonical-request.txt", NULL);
    char *sts = slurp(dir, "header-string-to-sign.txt", NULL);
    char *sig = slurp(dir, "header-signature.txt", NULL);
    cr_expect_str_eq(out.canonical_request, creq, "%s: canonical request", name);
    cr_expect_str_eq(out.string_to_sign, sts, "%s: string to sign", name);
    cr_expect_str_eq(out.signature, sig, "%s: signature", name);
    const char *auth = out.added[out.n_added - 1].value;
    cr_expect_str_eq(out.added[out.n_added - 1].name, "Authorization");
    cr_expect(strstr(auth, sig) != NULL, "%s: Authorization carries the signature", name);
    cr_expect(strstr(auth, "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request") !=
                  NULL,
              "%s: credential scope in %s", name, auth);
    free(creq);
    free(sts);
    free(sig);
    free(req_text);
    cJSON_Delete(ctx);
    free(ctx_text);
    kp_arena_free(a);
}

Test(aws_sigv4, published_suite)
{
    DIR *d = opendir(SUITE_DIR);
    cr_assert_not_null(d);
    struct dirent *e;
    size_t ran = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        run_case(e->d_name);
        ran++;
    }
    closedir(d);
    cr_assert_geq(ran, 30, "only %zu vectors found", ran);
}

/* The named cases the brief calls out, each its own test so a failure names it. */
#define VECTOR(name, dir)                                                                          \
    Test(aws_sigv4_vector, name) { run_case(dir); }
VECTOR(get_vanilla, "get-vanilla")
VECTOR(get_vanilla_query_order_key_case, "get-vanilla-query-order-key-case")
VECTOR(post_x_www_form_urlencoded, "post-x-www-form-urlencoded")
VECTOR(get_header_value_trim, "get-header-value-trim")
VECTOR(get_unreserved, "get-unreserved")
VECTOR(get_utf8, "get-utf8")
VECTOR(get_slashes_normalized, "get-slashes-normalized")
VECTOR(get_relative_relative_normalized, "get-relative-relative-normalized")
VECTOR(get_vanilla_with_session_token, "get-vanilla-with-session-token")
VECTOR(get_header_key_duplicate, "get-header-key-duplicate")
VECTOR(get_vanilla_query_order_encoded, "get-vanilla-query-order-encoded")
VECTOR(post_sts_header_after, "post-sts-header-after")

Test(aws_sigv4, session_token_is_sent_even_when_unsigned)
{
    kp_arena *a = kp_arena_new();
    kp_sigv4_header h[] = {{"Host", "example.amazonaws.com"}};
    kp_sigv4_request req = {"POST", "/", NULL, h, 1, NULL, 0};
    kp_sigv4_params p = {"AKID", "SECRET", "TOKEN", "us-east-1", "service", 0, false, false, true};
    kp_sigv4_result out;
    cr_assert_eq(kp_sigv4_sign(&out, a, &req, &p), 0);
    cr_expect_str_eq(out.signed_headers, "host;x-amz-date");
    bool sent = false;
    for (size_t i = 0; i < out.n_added; i++)
        sent |= strcmp(out.added[i].name, "X-Amz-Security-Token") == 0;
    cr_expect(sent);
    kp_arena_free(a);
}

Test(aws_sigv4, rejects_incomplete_input)
{
    kp_arena *a = kp_arena_new();
    kp_sigv4_header h[] = {{"Host", "example.amazonaws.com"}};
    kp_sigv4_request req = {"GET", "/", NULL, h, 1, NULL, 0};
    kp_sigv4_params p = {"AKID", "SECRET", NULL, "us-east-1", "service", 0, false, false, false};
    kp_sigv4_result out;
    kp_sigv4_request no_host = {"GET", "/", NULL, NULL, 0, NULL, 0};
    cr_expect_eq(kp_sigv4_sign(&out, a, &no_host, &p), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "Host") != NULL);
    kp_sigv4_params no_key = p;
    no_key.secret_access_key = "";
    cr_expect_eq(kp_sigv4_sign(&out, a, &req, &no_key), KP_EINVALID);
    kp_sigv4_params no_region = p;
    no_region.region = NULL;
    cr_expect_eq(kp_sigv4_sign(&out, a, &req, &no_region), KP_EINVALID);
    kp_sigv4_params bad_time = p;
    bad_time.time_ns = -1;
    cr_expect_eq(kp_sigv4_sign(&out, a, &req, &bad_time), KP_EINVALID);
    kp_arena_free(a);
}

Test(aws_sigv4, query_encoding_edges)
{
    kp_arena *a = kp_arena_new();
    /* A bare key gets '=', a broken escape is encoded literally, spaces become %20. */
    cr_expect_str_eq(kp_sigv4_canonical_query(a, "b&a=1%2"), "a=1%252&b=");
    cr_expect_str_eq(kp_sigv4_canonical_query(a, "k=a b&k=a%20a"), "k=a%20a&k=a%20b");
    cr_expect_str_eq(kp_sigv4_canonical_query(a, "&&x=%7e"), "x=~");
    cr_expect_str_eq(kp_sigv4_canonical_query(a, NULL), "");
    cr_expect_str_eq(kp_sigv4_canonical_uri(a, "", false), "/");
    cr_expect_str_eq(kp_sigv4_canonical_uri(a, "/a/./b/../c/", false), "/a/c/");
    cr_expect_str_eq(kp_sigv4_canonical_uri(a, "/a b//c", true), "/a%20b//c");
    cr_expect_str_eq(kp_sigv4_uri_encode(a, "a/b+c=", 6, false), "a%2Fb%2Bc%3D");
    kp_arena_free(a);
}

Test(aws_sigv4, sha256_and_date)
{
    char hex[65];
    kp_sigv4_sha256_hex("", 0, hex);
    cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    char date[17];
    cr_assert_eq(kp_sigv4_amz_date(INT64_C(1440938160) * KP_NS_PER_SEC, date), 0);
    cr_expect_str_eq(date, "20150830T123600Z");
}
