/*
 * The JSON-protocol clients on recorded answers: SQS ReceiveMessage with
 * attributes, SQS errors, SSM GetParameter and Pricing GetProducts. moto has
 * no Pricing API and none of the public EKS AMI parameters, so these answers
 * are recorded in the shape AWS documents.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/pricing.h"
#include "cloud/aws/sqs.h"
#include "cloud/aws/ssm.h"
#include "test_aws_double.h"
#include "helpers/assert.h"

static kp_aws_credentials *creds;
static kp_aws_client *client;
static kp_arena *arena;
static dbl_server server;
static char *fixtures[4];
static size_t n_fixtures;

static const char *fx(const char *name)
{
    return fixtures[n_fixtures++] = dbl_fixture(name);
}

static void serve(const dbl_response *script, size_t n, const char *region)
{
    dbl_start(&server, script, n);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
    kp_aws_client_options o = {.region = region, .endpoint_url = server.url, .credentials = creds,
                               .backoff_base_ms = 1, .backoff_max_ms = 2};
    KP_ASSERT_OK(kp_aws_client_new(&client, &o));
    arena = kp_arena_new();
}

static void teardown(void)
{
    client = kp_aws_client_free(client);
    creds = kp_aws_credentials_free(creds);
    arena = kp_arena_free(arena);
    dbl_free(&server);
    for (size_t i = 0; i < n_fixtures; i++)
        free(fixtures[i]);
    n_fixtures = 0;
}

TestSuite(aws_json, .fini = teardown);

Test(aws_json, sqs_receive_message_long_poll)
{
    dbl_response script[] = {{200, NULL, fx("sqs/receive-message.json")}};
    serve(script, 1, "us-west-2");
    const char *attrs[] = {"SentTimestamp"}, *all[] = {"All"};
    kp_sqs_receive_input in = {"https://sqs.us-west-2.amazonaws.com/123456789012/karpenter",
                               10, 20, 20, attrs, 1, all, 1};
    kp_sqs_message_list got;
    KP_ASSERT_OK(kp_sqs_receive_message(client, arena, &in, &got));
    dbl_stop(&server);
    cr_assert_eq(got.n, 1);
    const kp_sqs_message *m = &got.items[0];
    cr_expect_str_eq(m->message_id, "5fea7756-0ea4-451a-a703-a558b933e274");
    cr_expect(strncmp(m->receipt_handle, "MbZj6wDWli", 10) == 0);
    cr_expect(strstr(m->body, "\"detail-type\":\"EC2 Spot Instance Interruption Warning\"") !=
              NULL);
    cr_expect_eq(m->sent_timestamp_ms, 1763726400000LL);
    cr_assert_eq(m->n_message_attributes, 1, "binary attributes are skipped");
    cr_expect_str_eq(m->message_attributes[0].name, "origin");
    cr_expect_str_eq(m->message_attributes[0].value, "eventbridge");
    const char *body = server.requests[0].body;
    static const char *const want[] = {"\"MaxNumberOfMessages\":10", "\"VisibilityTimeout\":20",
                                       "\"WaitTimeSeconds\":20",
                                       "\"AttributeNames\":[\"SentTimestamp\"]",
                                       "\"MessageAttributeNames\":[\"All\"]"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(strstr(body, want[i]) != NULL, "%s not in %s", want[i], body);
}

Test(aws_json, sqs_errors)
{
    dbl_response script[] = {{400, NULL, fx("sqs/queue-does-not-exist.json")},
                             {200, NULL, "{\"Messages\":[{\"MessageId\":\"x\"}]}"},
                             {200, NULL, "not json"}};
    serve(script, 3, "us-west-2");
    const char *url = "unset";
    cr_expect_eq(kp_sqs_get_queue_url(client, arena, "missing", &url), KP_ENOTFOUND);
    cr_expect_str_eq(url, "unset");
    cr_expect_str_eq(kp_aws_client_error(client)->code, "QueueDoesNotExist");
    kp_sqs_receive_input in = {"q", 1, -1, 0, NULL, 0, NULL, 0};
    kp_sqs_message_list got = {.n = 7};
    cr_expect_eq(kp_sqs_receive_message(client, arena, &in, &got), KP_EINVALID);
    cr_expect_eq(got.n, 7);
    cr_expect_eq(kp_sqs_delete_message(client, "q", "h"), KP_EINVALID);
    dbl_stop(&server);
    cr_expect(strstr(server.requests[1].body, "VisibilityTimeout") == NULL);
}

Test(aws_json, ssm_get_parameter)
{
    dbl_response script[] = {{200, NULL, fx("ssm/get-parameter.json")},
                             {400, NULL, fx("ssm/parameter-not-found.json")}};
    serve(script, 2, "us-west-2");
    const char *name = "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/"
                       "recommended/image_id";
    kp_ssm_parameter p;
    KP_ASSERT_OK(kp_ssm_get_parameter(client, arena, name, &p));
    cr_expect_str_eq(p.value, "ami-0e1d2c3b4a5968778");
    cr_expect_str_eq(p.name, name);
    cr_expect_str_eq(p.type, "String");
    cr_expect_eq(p.version, 42);
    cr_expect_eq(kp_ssm_get_parameter(client, arena, "/missing", &p), KP_ENOTFOUND);
    cr_expect_str_eq(kp_aws_client_error(client)->code, "ParameterNotFound");
    dbl_stop(&server);
    char h[128];
    cr_expect_str_eq(dbl_header(&server.requests[0], "X-Amz-Target", h, sizeof(h)),
                     "AmazonSSM.GetParameter");
    cr_expect_str_eq(dbl_header(&server.requests[0], "Content-Type", h, sizeof(h)),
                     "application/x-amz-json-1.1");
}

Test(aws_json, pricing_get_products_pages)
{
    dbl_response script[] = {{200, NULL, fx("pricing/get-products-page1.json")},
                             {200, NULL, fx("pricing/get-products-page2.json")}};
    serve(script, 2, "eu-west-1");
    kp_pricing_filter filters[] = {{"regionCode", "eu-west-1"},    {"tenancy", "Shared"},
                                   {"operatingSystem", "Linux"},    {"capacitystatus", "Used"},
                                   {"preInstalledSw", "NA"},        {"marketoption", "OnDemand"}};
    kp_pricing_price_list prices;
    KP_ASSERT_OK(kp_pricing_get_products(client, arena, filters, 6, NULL, &prices));
    dbl_stop(&server);
    cr_assert_eq(prices.n, 3, "the zero-priced entry is left out");
    cr_expect_str_eq(prices.items[0].instance_type, "m5.large");
    cr_expect_float_eq(prices.items[0].price, 0.096, 1e-12);
    cr_expect_str_eq(prices.items[1].instance_type, "c6g.xlarge");
    cr_expect_str_eq(prices.items[2].instance_type, "p5.48xlarge");
    cr_expect_float_eq(prices.items[2].price, 98.32, 1e-9);
    const char *b0 = server.requests[0].body, *b1 = server.requests[1].body;
    cr_expect(strstr(b0, "\"ServiceCode\":\"AmazonEC2\"") != NULL);
    cr_expect(strstr(b0, "{\"Type\":\"TERM_MATCH\",\"Field\":\"regionCode\",\"Value\":"
                         "\"eu-west-1\"}") != NULL, "%s", b0);
    cr_expect(strstr(b0, "NextToken") == NULL);
    cr_expect(strstr(b1, "\"NextToken\":\"pricing-page-2\"") != NULL);
    char h[512];
    cr_expect_str_eq(dbl_header(&server.requests[0], "X-Amz-Target", h, sizeof(h)),
                     "AWSPriceListService.GetProducts");
    /* eu-* prices come from the eu-central-1 Pricing endpoint. */
    cr_expect(strstr(dbl_header(&server.requests[0], "Authorization", h, sizeof(h)),
                     "/eu-central-1/pricing/aws4_request") != NULL, "%s", h);
}

Test(aws_json, pricing_product_parsing)
{
    kp_arena *a = kp_arena_new();
    kp_pricing_price p;
    const char *cny = "{\"product\":{\"attributes\":{\"instanceType\":\"m5.large\"}},"
                      "\"terms\":{\"OnDemand\":{\"t\":{\"priceDimensions\":{\"d\":"
                      "{\"pricePerUnit\":{\"CNY\":\"0.7\"}}}}}}}";
    cr_assert_eq(kp_pricing_parse_product(a, cny, "CNY", &p), 0);
    cr_expect_float_eq(p.price, 0.7, 1e-12);
    cr_expect_eq(kp_pricing_parse_product(a, cny, "USD", &p), KP_ENOTFOUND);
    cr_expect_eq(kp_pricing_parse_product(a, "[]", "USD", &p), KP_EINVALID);
    cr_expect_eq(kp_pricing_parse_product(a, "{\"product\":{}}", "USD", &p), KP_ENOTFOUND);
    cr_expect_str_eq(kp_pricing_region("ap-northeast-1"), "ap-south-1");
    cr_expect_str_eq(kp_pricing_region("eu-west-3"), "eu-central-1");
    cr_expect_str_eq(kp_pricing_region("cn-north-1"), "cn-northwest-1");
    cr_expect_str_eq(kp_pricing_region("us-west-2"), "us-east-1");
    kp_arena_free(a);
}
