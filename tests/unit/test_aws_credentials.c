/*
 * The credential chain: environment, shared files with profiles (and a
 * malformed file), web identity through a recorded STS answer, EKS Pod
 * Identity, IMDSv2, caching and refresh before expiry. Remote sources talk to
 * the in-process double (test_aws_double.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "cloud/aws/credentials.h"
#include "cloud/aws/shared_config.h"
#include "test_aws_double.h"
#include "helpers/assert.h"

static char tmpdir[256];

static void clean_env(void)
{
    static const char *const vars[] = {
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
        "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_SESSION_NAME",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS",
        "AWS_REGION", "AWS_DEFAULT_REGION",
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kp-aws-creds-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    setenv("HOME", tmpdir, 1); /* no ~/.aws of the machine running the tests */
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

static void remove_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_expect_eq(system(cmd), 0);
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

TestSuite(aws_credentials, .init = clean_env, .fini = remove_tmp);

Test(aws_credentials, environment)
{
    kp_aws_creds c;
    cr_expect_eq(kp_aws_creds_from_env(&c), KP_ENOTFOUND);
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    cr_expect_eq(kp_aws_creds_from_env(&c), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "AWS_SECRET_ACCESS_KEY") != NULL);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    setenv("AWS_SESSION_TOKEN", "envtoken", 1);
    cr_assert_eq(kp_aws_creds_from_env(&c), 0);
    cr_expect_str_eq(c.access_key_id, "AKIDENV");
    cr_expect_str_eq(c.secret_access_key, "envsecret");
    cr_expect_str_eq(c.session_token, "envtoken");
    cr_expect_eq(c.expires_ns, 0);
    cr_expect_str_eq(c.source, "environment");
}

static void write_profiles(void)
{
    setenv("AWS_SHARED_CREDENTIALS_FILE",
           write_tmp("credentials", "# keys\n[default]\naws_access_key_id = AKIDDEFAULT\n"
                                    "aws_secret_access_key = defaultsecret\n\n"
                                    "[dev]\naws_access_key_id=AKIDDEV\n"
                                    "aws_secret_access_key= devsecret \n"
                                    "aws_session_token = devtoken\n"),
           1);
    setenv("AWS_CONFIG_FILE",
           write_tmp("config", "[default]\nregion = us-west-2\n; comment\n"
                               "[profile dev]\nregion = eu-west-1\n"
                               "aws_access_key_id = AKIDIGNORED\n"
                               "s3 =\n  max_concurrent_requests = 20\n"
                               "[profile cfgonly]\naws_access_key_id = AKIDCFG\n"
                               "aws_secret_access_key = cfgsecret\n"
                               "[profile empty]\nregion = ap-south-1\n"),
           1);
}

Test(aws_credentials, shared_files_default_profile)
{
    write_profiles();
    kp_aws_creds c;
    KP_ASSERT_OK(kp_aws_creds_from_files(&c, NULL));
    cr_expect_str_eq(c.access_key_id, "AKIDDEFAULT");
    cr_expect_str_eq(c.secret_access_key, "defaultsecret");
    cr_expect_str_eq(c.session_token, "");
    cr_expect_str_eq(c.source, "shared-files");
}

Test(aws_credentials, shared_files_named_profiles)
{
    write_profiles();
    kp_aws_creds c;
    setenv("AWS_PROFILE", "dev", 1);
    KP_ASSERT_OK(kp_aws_creds_from_files(&c, NULL));
    /* The credentials file wins over the config file, key by key. */
    cr_expect_str_eq(c.access_key_id, "AKIDDEV");
    cr_expect_str_eq(c.secret_access_key, "devsecret");
    cr_expect_str_eq(c.session_token, "devtoken");
    kp_aws_credentials_options o = {.profile = "cfgonly"};
    cr_assert_eq(kp_aws_creds_from_files(&c, &o), 0);
    cr_expect_str_eq(c.access_key_id, "AKIDCFG");
    o.profile = "empty";
    cr_expect_eq(kp_aws_creds_from_files(&c, &o), KP_ENOTFOUND);
    o.profile = "missing";
    cr_expect_eq(kp_aws_creds_from_files(&c, &o), KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "missing") != NULL);

    kp_arena *a = kp_arena_new();
    kp_aws_profile p;
    cr_assert_eq(kp_aws_profile_load(&p, a, NULL), 0);
    cr_expect_str_eq(p.name, "dev");
    cr_expect_str_eq(p.region, "eu-west-1");
    kp_arena_free(a);
}

Test(aws_credentials, malformed_ini_names_file_and_line)
{
    const char *path = write_tmp("credentials", "[default]\naws_access_key_id = A\n"
                                                "this line is wrong\n");
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    kp_aws_creds c;
    cr_expect_eq(kp_aws_creds_from_files(&c, NULL), KP_EINVALID);
    char want[600];
    snprintf(want, sizeof(want), "%s:3:", path);
    cr_expect(strstr(kp_error_last(), want) != NULL, "message: %s", kp_error_last());

    kp_arena *a = kp_arena_new();
    kp_aws_ini ini;
    static const struct {
        const char *text;
        const char *message;
    } bad[] = {
        {"[default\nk = v\n", "f:1: section header without ']'"},
        {"k = v\n", "f:1: 'key = value' before any [section]"},
        {"[a]\n = v\n", "f:2: empty key"},
        {"[ ]\n", "f:1: empty section name"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(kp_aws_ini_parse(&ini, a, bad[i].text, strlen(bad[i].text), "f"),
                     KP_EINVALID);
        cr_expect_str_eq(kp_error_last(), bad[i].message);
    }
    const char *good = "[a]\nk = 1\nk = 2\n\t# indented comment\n";
    cr_assert_eq(kp_aws_ini_parse(&ini, a, good, strlen(good), "f"), 0);
    cr_expect_str_eq(kp_aws_ini_get(&ini, "a", "k"), "2");
    kp_arena_free(a);
}

Test(aws_credentials, web_identity_through_sts)
{
    char *xml = dbl_fixture("sts/assume-role-with-web-identity.xml");
    dbl_response script[] = {{200, "x-amzn-RequestId: ad4156e9\r\n", xml}};
    dbl_server s;
    dbl_start(&s, script, 1);
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/KarpenterController", 1);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", write_tmp("token", "eyJhbGciOiJSUzI1NiJ9.e30.sig\n"), 1);
    setenv("AWS_ROLE_SESSION_NAME", "karpenter-test", 1);
    kp_aws_credentials_options o = {.sts_endpoint = s.url, .region = "us-west-2"};
    kp_aws_credentials *p = NULL;
    cr_assert_eq(kp_aws_credentials_new(&p, &o), 0);
    kp_aws_creds c;
    KP_ASSERT_OK(kp_aws_credentials_get(p, &c));
    dbl_stop(&s);
    cr_expect_str_eq(c.access_key_id, "ASIAIOSFODNN7EXAMPLE");
    cr_expect_str_eq(c.secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    cr_expect_str_eq(c.session_token, "IQoJb3JpZ2luX2VjEXAMPLETOKEN/web+identity==");
    cr_expect_str_eq(c.source, "web-identity");
    int64_t exp;
    kp_time_parse_rfc3339("2026-11-21T13:00:00Z", &exp);
    cr_expect_eq(c.expires_ns, exp);
    cr_assert_eq(s.n_requests, 1);
    const char *body = s.requests[0].body;
    cr_expect(strstr(body, "Action=AssumeRoleWithWebIdentity") != NULL, "%s", body);
    cr_expect(strstr(body, "RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2FKarpenter") != NULL);
    cr_expect(strstr(body, "RoleSessionName=karpenter-test") != NULL);
    cr_expect(strstr(body, "WebIdentityToken=eyJhbGciOiJSUzI1NiJ9.e30.sig&") != NULL ||
              strstr(body, "WebIdentityToken=eyJhbGciOiJSUzI1NiJ9.e30.sig") != NULL);
    char h[256];
    cr_expect_null(dbl_header(&s.requests[0], "Authorization", h, sizeof(h)),
                   "the STS call must be unsigned");
    kp_aws_credentials_free(p);
    dbl_free(&s);
    free(xml);
}

Test(aws_credentials, web_identity_error_stops_the_chain)
{
    char *xml = dbl_fixture("sts/error-invalid-identity-token.xml");
    dbl_response script[] = {{400, NULL, xml}};
    dbl_server s;
    dbl_start(&s, script, 1);
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/R", 1);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", write_tmp("token", "tok"), 1);
    write_profiles(); /* would answer, but a configured web identity that fails must not */
    kp_aws_credentials_options o = {.sts_endpoint = s.url, .region = "us-west-2"};
    kp_aws_credentials *p = NULL;
    kp_aws_credentials_new(&p, &o);
    kp_aws_creds c;
    cr_expect_eq(kp_aws_credentials_get(p, &c), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "InvalidIdentityToken") != NULL, "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "No OpenIDConnect provider") != NULL);
    dbl_stop(&s);
    kp_aws_credentials_free(p);
    dbl_free(&s);
    free(xml);
}

Test(aws_credentials, web_identity_missing_token_file)
{
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/R", 1);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", 1);
    kp_aws_credentials *p = NULL;
    kp_aws_credentials_new(&p, NULL);
    kp_aws_creds c;
    cr_expect_eq(kp_aws_credentials_get(p, &c), KP_EIO);
    cr_expect(strstr(kp_error_last(), "/nonexistent/token") != NULL);
    kp_aws_credentials_free(p);
}

Test(aws_credentials, eks_pod_identity)
{
    char *json = dbl_fixture("credentials/pod-identity.json");
    dbl_response script[] = {{200, "Content-Type: application/json\r\n", json}};
    dbl_server s;
    dbl_start(&s, script, 1);
    char uri[128];
    snprintf(uri, sizeof(uri), "%s/v1/credentials", s.url);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, 1);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", write_tmp("eks-token", "pod-jwt\n"), 1);
    kp_aws_creds c;
    KP_ASSERT_OK(kp_aws_creds_from_container(&c, 2000));
    dbl_stop(&s);
    cr_expect_str_eq(c.access_key_id, "ASIAPODIDENTITYEXAMPLE");
    cr_expect_str_eq(c.session_token, "pod-identity-session-token-EXAMPLE");
    cr_expect_str_eq(c.source, "container");
    cr_assert_eq(s.n_requests, 1);
    cr_expect_str_eq(s.requests[0].path, "/v1/credentials");
    char h[256];
    cr_expect_str_eq(dbl_header(&s.requests[0], "Authorization", h, sizeof(h)), "pod-jwt");
    dbl_free(&s);
    free(json);
}

Test(aws_credentials, container_uri_must_be_local_or_https)
{
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.0.0.1/creds", 1);
    kp_aws_creds c;
    cr_expect_eq(kp_aws_creds_from_container(&c, 100), KP_EINVALID);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1.evil.example/creds", 1);
    cr_expect_eq(kp_aws_creds_from_container(&c, 100), KP_EINVALID);
    unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    cr_expect_eq(kp_aws_creds_from_container(&c, 100), KP_ENOTFOUND);
}

Test(aws_credentials, imds_v2)
{
    char *json = dbl_fixture("credentials/imds-role.json");
    dbl_response script[] = {
        {200, NULL, "TOKEN-1"}, {200, NULL, "KarpenterNodeRole\n"},
        {200, NULL, "TOKEN-2"}, {200, NULL, json},
    };
    dbl_server s;
    dbl_start(&s, script, 4);
    unsetenv("AWS_EC2_METADATA_DISABLED");
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.url, 1);
    kp_aws_creds c;
    KP_ASSERT_OK(kp_aws_creds_from_imds(&c, NULL));
    dbl_stop(&s);
    cr_expect_str_eq(c.access_key_id, "ASIAIMDSEXAMPLE");
    cr_expect_str_eq(c.source, "imds");
    cr_assert_eq(s.n_requests, 4);
    char h[256];
    cr_expect_str_eq(s.requests[0].method, "PUT");
    cr_expect_str_eq(s.requests[0].path, "/latest/api/token");
    cr_expect_str_eq(dbl_header(&s.requests[0], "X-aws-ec2-metadata-token-ttl-seconds", h,
                                sizeof(h)),
                     "21600");
    cr_expect_str_eq(s.requests[1].path, "/latest/meta-data/iam/security-credentials/");
    cr_expect_str_eq(dbl_header(&s.requests[1], "X-aws-ec2-metadata-token", h, sizeof(h)),
                     "TOKEN-1");
    cr_expect_str_eq(s.requests[3].path,
                     "/latest/meta-data/iam/security-credentials/KarpenterNodeRole");
    dbl_free(&s);
    free(json);
}

Test(aws_credentials, imds_unreachable_means_not_found)
{
    unsetenv("AWS_EC2_METADATA_DISABLED");
    dbl_server s;
    dbl_start(&s, NULL, 0); /* a port nobody serves once stopped */
    char url[64];
    snprintf(url, sizeof(url), "%s", s.url);
    dbl_free(&s);
    kp_aws_credentials_options o = {.imds_endpoint = url, .imds_timeout_ms = 300};
    kp_aws_creds c;
    cr_expect_eq(kp_aws_creds_from_imds(&c, &o), KP_ENOTFOUND);
}

Test(aws_credentials, chain_order_and_nothing_found)
{
    kp_aws_credentials *p = NULL;
    kp_aws_credentials_new(&p, NULL);
    kp_aws_creds c;
    cr_expect_eq(kp_aws_credentials_get(p, &c), KP_ENOTFOUND);
    const char *msg = kp_error_last();
    cr_expect(strstr(msg, "environment") && strstr(msg, "web identity") &&
                  strstr(msg, "shared files") && strstr(msg, "container") && strstr(msg, "imds"),
              "%s", msg);
    write_profiles();
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
    cr_assert_eq(kp_aws_credentials_get(p, &c), 0);
    cr_expect_str_eq(c.access_key_id, "AKIDENV", "the environment comes before the files");
    kp_aws_credentials_invalidate(p);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    cr_assert_eq(kp_aws_credentials_get(p, &c), 0);
    cr_expect_str_eq(c.access_key_id, "AKIDDEFAULT");
    kp_aws_credentials_free(p);
}

Test(aws_credentials, refreshed_five_minutes_before_expiry)
{
    char *json = dbl_fixture("credentials/pod-identity.json");
    dbl_response script[] = {{200, NULL, json}, {200, NULL, json}};
    dbl_server s;
    dbl_start(&s, script, 2);
    char uri[128];
    snprintf(uri, sizeof(uri), "%s/v1/credentials", s.url);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, 1);
    int64_t exp;
    kp_time_parse_rfc3339("2026-11-21T13:00:00Z", &exp);
    kp_fake_clock clock;
    kp_fake_clock_init(&clock, exp - 60 * 60 * KP_NS_PER_SEC);
    kp_aws_credentials_options o = {.clock = &clock.base};
    kp_aws_credentials *p = NULL;
    kp_aws_credentials_new(&p, &o);
    kp_aws_creds c;
    KP_ASSERT_OK(kp_aws_credentials_get(p, &c));
    clock.ns = exp - 6 * 60 * KP_NS_PER_SEC;
    cr_assert_eq(kp_aws_credentials_get(p, &c), 0);
    cr_expect_eq(s.n_requests, 1, "still fresh six minutes before expiry");
    clock.ns = exp - 4 * 60 * KP_NS_PER_SEC;
    cr_assert_eq(kp_aws_credentials_get(p, &c), 0);
    cr_expect_eq(s.n_requests, 2, "refreshed inside the five-minute window");
    /* The endpoint is gone now: the old credentials serve until they expire. */
    dbl_stop(&s);
    cr_expect_eq(kp_aws_credentials_get(p, &c), 0);
    cr_expect_str_eq(c.access_key_id, "ASIAPODIDENTITYEXAMPLE");
    clock.ns = exp + 1;
    cr_expect_neq(kp_aws_credentials_get(p, &c), 0);
    kp_aws_credentials_free(p);
    dbl_free(&s);
    free(json);
}

Test(aws_credentials, static_provider)
{
    kp_aws_creds in = {.access_key_id = "AKID", .secret_access_key = "S"};
    kp_aws_credentials *p = NULL;
    cr_assert_eq(kp_aws_credentials_new_static(&p, &in), 0);
    kp_aws_creds c;
    cr_assert_eq(kp_aws_credentials_get(p, &c), 0);
    cr_expect_str_eq(c.access_key_id, "AKID");
    cr_expect_str_eq(c.source, "static");
    kp_aws_credentials_free(p);
    kp_aws_creds empty = {0};
    cr_expect_eq(kp_aws_credentials_new_static(&p, &empty), KP_EINVALID);
}

Test(aws_credentials, parsers_reject_garbage)
{
    kp_aws_creds c;
    cr_expect_eq(kp_aws_creds_parse_json(&c, "[1]", 3), KP_EINVALID);
    const char *failed = "{\"Code\":\"Failed\",\"Message\":\"no role\"}";
    cr_expect_eq(kp_aws_creds_parse_json(&c, failed, strlen(failed)), KP_ERROR);
    const char *bad_exp = "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":\"soon\"}";
    cr_expect_eq(kp_aws_creds_parse_json(&c, bad_exp, strlen(bad_exp)), KP_EINVALID);
    const char *no_secret = "{\"AccessKeyId\":\"A\"}";
    cr_expect_eq(kp_aws_creds_parse_json(&c, no_secret, strlen(no_secret)), KP_EINVALID);
    cr_expect_eq(kp_aws_creds_parse_sts(&c, "<x>", 3), KP_EINVALID);
    const char *empty = "<AssumeRoleWithWebIdentityResponse/>";
    cr_expect_eq(kp_aws_creds_parse_sts(&c, empty, strlen(empty)), KP_EINVALID);
}
