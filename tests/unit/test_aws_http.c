/*
 * The request layer: retries with backoff on throttling and 5xx (three
 * attempts), no retry on other errors, transport failures, AWS error
 * documents of each protocol, endpoint and region resolution.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/aws_http.h"
#include "test_aws_double.h"

static kp_aws_credentials *creds;
static kp_aws_client *client;
static dbl_server server;
static char *fixture;

static void clean_env(void)
{
    static const char *const vars[] = {"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                                       "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_SQS",
                                       "AWS_PROFILE", "AWS_CONFIG_FILE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    setenv("HOME", "/nonexistent", 1);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret",
                      .session_token = "session-token"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
}

static void teardown(void)
{
    client = kp_aws_client_free(client);
    creds = kp_aws_credentials_free(creds);
    dbl_free(&server);
    free(fixture);
    fixture = NULL;
}

TestSuite(aws_http, .init = clean_env, .fini = teardown);

static void serve(const dbl_response *script, size_t n)
{
    dbl_start(&server, script, n);
    kp_aws_client_options o = {.region = "us-east-1", .endpoint_url = server.url,
                               .credentials = creds, .backoff_base_ms = 1, .backoff_max_ms = 4};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0, "%s", kp_error_last());
}

static int send_query(kp_buf *answer)
{
    static const char form[] = "Action=DescribeSubnets&Version=2016-11-15";
    kp_aws_request req = {"ec2", "DescribeSubnets", KP_AWS_QUERY, NULL, form, strlen(form),
                          NULL, 0, NULL, NULL};
    return kp_aws_client_send(client, &req, answer);
}

Test(aws_http, throttling_is_retried_then_succeeds)
{
    fixture = dbl_fixture("ec2/error-request-limit-exceeded.xml");
    dbl_response script[] = {{503, NULL, fixture}, {503, NULL, fixture}, {200, NULL, "<ok/>"}};
    serve(script, 3);
    kp_buf answer = KP_BUF_INIT(1 << 20);
    cr_assert_eq(send_query(&answer), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_buf_cstr(&answer), "<ok/>");
    cr_expect_eq(kp_aws_client_error(client)->http_status, 0, "cleared after success");
    dbl_stop(&server);
    cr_expect_eq(server.n_requests, 3);
    char h[256];
    cr_expect_str_eq(dbl_header(&server.requests[2], "X-Amz-Security-Token", h, sizeof(h)),
                     "session-token");
    cr_expect_str_eq(dbl_header(&server.requests[0], "Content-Type", h, sizeof(h)),
                     "application/x-www-form-urlencoded; charset=utf-8");
    kp_buf_free(&answer);
}

Test(aws_http, gives_up_after_three_attempts)
{
    fixture = dbl_fixture("ec2/error-request-limit-exceeded.xml");
    dbl_response script[] = {{503, NULL, fixture}, {503, NULL, fixture}, {503, NULL, fixture},
                             {200, NULL, "<never/>"}};
    serve(script, 4);
    kp_buf answer = KP_BUF_INIT(1 << 20);
    cr_expect_eq(send_query(&answer), KP_ERETRY);
    const kp_aws_error *e = kp_aws_client_error(client);
    cr_expect_str_eq(e->code, "RequestLimitExceeded");
    cr_expect_eq(e->http_status, 503);
    cr_expect_eq(e->attempts, 3);
    cr_expect_str_eq(e->request_id, "0b5a4d3c-throttle-EXAMPLE");
    cr_expect(strstr(kp_error_last(), "RequestLimitExceeded") != NULL, "%s", kp_error_last());
    cr_expect_eq(answer.len, 0);
    dbl_stop(&server);
    cr_expect_eq(server.n_requests, 3);
    kp_buf_free(&answer);
}

Test(aws_http, server_errors_are_retried_client_errors_are_not)
{
    const char *bad = "<Response><Errors><Error><Code>InvalidParameterValue</Code>"
                      "<Message>bad filter</Message></Error></Errors></Response>";
    dbl_response script[] = {{500, NULL, "<Response><Errors><Error><Code>InternalError</Code>"
                                         "</Error></Errors></Response>"},
                             {400, NULL, bad}, {200, NULL, "<unused/>"}};
    serve(script, 3);
    kp_buf answer = KP_BUF_INIT(1 << 20);
    cr_expect_eq(send_query(&answer), KP_EINVALID);
    cr_expect_str_eq(kp_aws_client_error(client)->code, "InvalidParameterValue");
    cr_expect_eq(kp_aws_client_error(client)->attempts, 2);
    dbl_stop(&server);
    cr_expect_eq(server.n_requests, 2);
    kp_buf_free(&answer);
}

Test(aws_http, json_errors_and_headers)
{
    dbl_response script[] = {{429, "x-amzn-RequestId: rid-1\r\n",
                              "{\"__type\":\"com.amazonaws.sqs#ThrottlingException\"}"},
                             {400, "x-amzn-RequestId: rid-2\r\n",
                              "{\"__type\":\"com.amazonaws.sqs#QueueDoesNotExist\","
                              "\"message\":\"The specified queue does not exist.\"}"}};
    serve(script, 2);
    const char *body = "{\"QueueName\":\"q\"}";
    kp_aws_request req = {"sqs", "GetQueueUrl", KP_AWS_JSON_1_0, "AmazonSQS", body, strlen(body),
                          NULL, 0, NULL, NULL};
    kp_buf answer = KP_BUF_INIT(1 << 20);
    cr_expect_eq(kp_aws_client_send(client, &req, &answer), KP_ENOTFOUND);
    const kp_aws_error *e = kp_aws_client_error(client);
    cr_expect_str_eq(e->code, "QueueDoesNotExist");
    cr_expect_str_eq(e->message, "The specified queue does not exist.");
    cr_expect_str_eq(e->request_id, "rid-2");
    dbl_stop(&server);
    char h[256];
    cr_expect_str_eq(dbl_header(&server.requests[0], "X-Amz-Target", h, sizeof(h)),
                     "AmazonSQS.GetQueueUrl");
    cr_expect_str_eq(dbl_header(&server.requests[0], "Content-Type", h, sizeof(h)),
                     "application/x-amz-json-1.0");
    cr_expect(strstr(dbl_header(&server.requests[0], "Authorization", h, sizeof(h)),
                     "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;"
                     "x-amz-target") != NULL,
              "%s", h);
    kp_buf_free(&answer);
}

Test(aws_http, transport_failure_is_retried_and_reported)
{
    dbl_start(&server, NULL, 0);
    char url[64];
    snprintf(url, sizeof(url), "%s", server.url);
    dbl_free(&server); /* nothing listens there now */
    kp_aws_client_options o = {.region = "us-east-1", .endpoint_url = url, .credentials = creds,
                               .backoff_base_ms = 1, .backoff_max_ms = 2};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0);
    kp_buf answer = KP_BUF_INIT(1 << 20);
    cr_expect_eq(send_query(&answer), KP_ERETRY);
    cr_expect_eq(kp_aws_client_error(client)->http_status, 0);
    cr_expect_eq(kp_aws_client_error(client)->attempts, 3);
    cr_expect(strstr(kp_error_last(), "after 3 attempts") != NULL, "%s", kp_error_last());
    kp_buf_free(&answer);
}

Test(aws_http, error_classes)
{
    static const struct {
        long status;
        const char *code;
        int want;
    } cases[] = {
        {400, "RequestLimitExceeded", KP_ERETRY}, {400, "Throttling", KP_ERETRY},
        {400, "ThrottlingException", KP_ERETRY},  {429, "TooManyRequests", KP_ERETRY},
        {503, "", KP_ERETRY},                     {400, "InvalidInstanceID.NotFound", KP_ENOTFOUND},
        {400, "ParameterNotFound", KP_ENOTFOUND}, {403, "UnauthorizedOperation", KP_EFORBIDDEN},
        {403, "AccessDenied", KP_EFORBIDDEN},     {400, "ExpiredToken", KP_EUNAUTHORIZED},
        {400, "InsufficientInstanceCapacity", KP_EINSUFFICIENT_CAPACITY},
        {400, "InvalidParameterValue", KP_EINVALID}, {0, "", KP_ERETRY},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_aws_error e = {.http_status = cases[i].status};
        snprintf(e.code, sizeof(e.code), "%s", cases[i].code);
        cr_expect_eq(kp_aws_error_class(&e), cases[i].want, "%s", cases[i].code);
    }
    kp_aws_error e = {0};
    kp_aws_error_parse(&e, KP_AWS_QUERY, "<html>Bad Gateway</html>", 24);
    cr_expect_str_eq(e.code, "");
    cr_expect_str_eq(e.message, "<html>Bad Gateway</html>");
    kp_aws_error j = {0};
    const char *typed = "{\"__type\":\"InvalidSignatureException:http://internal\",\"Message\":\"m\"}";
    kp_aws_error_parse(&j, KP_AWS_JSON_1_1, typed, strlen(typed));
    cr_expect_str_eq(j.code, "InvalidSignatureException");
    cr_expect_str_eq(j.message, "m");
}

Test(aws_http, endpoints_and_region)
{
    setenv("AWS_REGION", "eu-west-1", 1);
    setenv("AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:4566/", 1);
    kp_aws_endpoint ssm = {"ssm", "http://ssm.test:1"};
    kp_aws_client_options o = {.credentials = creds, .endpoints = &ssm, .n_endpoints = 1};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_aws_client_region(client), "eu-west-1");
    char url[256];
    cr_assert_eq(kp_aws_client_endpoint(client, "ec2", NULL, url, sizeof(url)), 0);
    cr_expect_str_eq(url, "https://ec2.eu-west-1.amazonaws.com");
    cr_assert_eq(kp_aws_client_endpoint(client, "sqs", NULL, url, sizeof(url)), 0);
    cr_expect_str_eq(url, "http://127.0.0.1:4566");
    cr_assert_eq(kp_aws_client_endpoint(client, "ssm", NULL, url, sizeof(url)), 0);
    cr_expect_str_eq(url, "http://ssm.test:1");
    cr_assert_eq(kp_aws_client_endpoint(client, "pricing", "us-east-1", url, sizeof(url)), 0);
    cr_expect_str_eq(url, "https://api.pricing.us-east-1.amazonaws.com");
    cr_assert_eq(kp_aws_client_endpoint(client, "iam", NULL, url, sizeof(url)), 0);
    cr_expect_str_eq(url, "https://iam.amazonaws.com");
    cr_assert_eq(kp_aws_client_endpoint(client, "ec2", "cn-north-1", url, sizeof(url)), 0);
    cr_expect_str_eq(url, "https://ec2.cn-north-1.amazonaws.com.cn");
    setenv("AWS_ENDPOINT_URL", "http://all.test", 1);
    cr_assert_eq(kp_aws_client_endpoint(client, "ec2", NULL, url, sizeof(url)), 0);
    cr_expect_str_eq(url, "http://all.test");
    cr_expect_eq(kp_aws_client_endpoint(client, "nosuch", NULL, url, sizeof(url)), 0,
                 "AWS_ENDPOINT_URL serves any service");
    unsetenv("AWS_ENDPOINT_URL");
    cr_expect_eq(kp_aws_client_endpoint(client, "nosuch", NULL, url, sizeof(url)), KP_EINVALID);
}

Test(aws_http, region_is_required)
{
    kp_aws_client_options o = {.credentials = creds};
    cr_expect_eq(kp_aws_client_new(&client, &o), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "AWS_REGION") != NULL);
    setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
    cr_assert_eq(kp_aws_client_new(&client, &o), 0);
    cr_expect_str_eq(kp_aws_client_region(client), "ap-south-1");
}

Test(aws_http, form_encoding)
{
    kp_buf f = KP_BUF_INIT(1024);
    cr_assert_eq(kp_aws_form_add(&f, "Filter.1.Name", "tag:karpenter.sh/nodepool"), 0);
    cr_assert_eq(kp_aws_form_addf(&f, "a b+c~", "Filter.%d.Value.%d", 1, 1), 0);
    cr_expect_str_eq(kp_buf_cstr(&f),
                     "Filter.1.Name=tag%3Akarpenter.sh%2Fnodepool&Filter.1.Value.1=a%20b%2Bc~");
    kp_buf_free(&f);
}
