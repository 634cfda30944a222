/*
 * The pricing provider: the static fallback, Price List API updates merged
 * over old prices, spot history with Karpenter's "no record after the first
 * update means no price" rule, and old data kept on errors. AWS answers come
 * from the in-process double (moto has no Price List API).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/pricing_provider.h"
#include "cloud/aws_catalog.h"
#include "test_aws_double.h"
#include "helpers/assert.h"

static kp_aws_credentials *creds;
static kp_aws_client *client;
static kp_aws_prices *prices;
static dbl_server server;
static kp_fake_clock clk;
static char *owned[8];
static size_t n_owned;

static void serve(const dbl_response *script, size_t n, const char *region, bool isolated)
{
    dbl_start(&server, script, n);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
    kp_aws_client_options o = {
        .region = region, .endpoint_url = server.url, .credentials = creds, .max_attempts = 1};
    KP_ASSERT_OK(kp_aws_client_new(&client, &o));
    kp_fake_clock_init(&clk, 1787227200 * KP_NS_PER_SEC); /* 2026-08-20T12:00:00Z */
    kp_aws_prices_opts po = {
        .ec2 = client, .pricing = client, .isolated_vpc = isolated, .clock = &clk.base};
    KP_ASSERT_OK(kp_aws_prices_new(&prices, &po));
}

static void teardown(void)
{
    prices = kp_aws_prices_free(prices);
    client = kp_aws_client_free(client);
    creds = kp_aws_credentials_free(creds);
    dbl_free(&server);
    for (size_t i = 0; i < n_owned; i++)
        free(owned[i]);
    n_owned = 0;
}

TestSuite(prices, .fini = teardown);

/* A GetProducts answer: one PriceList entry per (type, price), in `currency`. */
static const char *products(const char *currency, const char *const *types, const char **amounts,
                            size_t n)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    KP_ASSERT_OK(kp_buf_puts(&b, "{\"FormatVersion\":\"aws_v1\",\"PriceList\":["));
    for (size_t i = 0; i < n; i++) {
        char inner[1024];
        snprintf(
            inner, sizeof(inner),
            "{\"product\":{\"productFamily\":\"Compute Instance\",\"attributes\":"
            "{\"instanceType\":\"%s\",\"operatingSystem\":\"Linux\"}},\"terms\":"
            "{\"OnDemand\":{\"X.JRTCKXETXF\":{\"priceDimensions\":{\"X.JRTCKXETXF.6YS6EN2CT7\":"
            "{\"unit\":\"Hrs\",\"pricePerUnit\":{\"%s\":\"%s\"}}}}}}}",
            types[i], currency, amounts[i]);
        KP_ASSERT_OK(kp_buf_puts(&b, i ? "," : ""));
        KP_ASSERT_OK(kp_buf_json_string(&b, inner));
    }
    KP_ASSERT_OK(kp_buf_puts(&b, "]}"));
    return owned[n_owned++] = kp_buf_detach(&b);
}

static double builtin(const char *type)
{
    const kp_aws_type_info *row = kp_aws_catalog_find(type);
    cr_assert_not_null(row, "%s is in the built-in table", type);
    return (double)row->price_micro_usd / 1e6;
}

Test(prices, static_prices_before_any_update)
{
    serve(NULL, 0, "us-west-2", false);
    double p = 0;
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &p));
    cr_expect_float_eq(p, builtin("m5.large"), 1e-12);
    cr_expect_not(kp_aws_prices_on_demand(prices, "zz9.huge", &p));
    cr_expect_not(kp_aws_prices_on_demand(prices, NULL, &p));
    /* before the first spot update every zone uses the static price */
    cr_assert_not(kp_aws_prices_spot_updated(prices));
    cr_assert(kp_aws_prices_spot(prices, "c5.xlarge", "us-west-2a", &p));
    cr_expect_float_eq(p, builtin("c5.xlarge"), 1e-12);
    cr_assert(kp_aws_prices_spot(prices, "c5.xlarge", "us-west-2d", &p));
    cr_expect_not(kp_aws_prices_spot(prices, "zz9.huge", "us-west-2a", &p));
}

Test(prices, new_needs_a_region)
{
    kp_aws_prices *p = NULL;
    kp_aws_prices_opts o = KP_AWS_PRICES_OPTS_INIT;
    cr_assert_eq(kp_aws_prices_new(&p, &o), KP_EINVALID);
    cr_assert_null(p);
    o.region = "eu-west-1";
    cr_assert_eq(kp_aws_prices_new(&p, &o), 0);
    cr_expect_eq(kp_aws_prices_update_on_demand(p), 0, "no pricing client: nothing to do");
    cr_expect_eq(kp_aws_prices_update_spot(p), KP_EINVALID);
    kp_aws_prices_free(p);
}

Test(prices, on_demand_update_merges_both_queries_over_old_prices)
{
    const char *t1[] = {"m5.large", "zz1.new"}, *a1[] = {"0.5", "1.25"};
    const char *t2[] = {"m5.metal"}, *a2[] = {"7.0"};
    dbl_response script[] = {{200, NULL, products("USD", t1, a1, 2)},
                             {200, NULL, products("USD", t2, a2, 1)}};
    serve(script, 2, "us-west-2", false);
    uint64_t seq = kp_aws_prices_seqnum(prices);
    KP_ASSERT_OK(kp_aws_prices_update_on_demand(prices));
    cr_expect_neq(kp_aws_prices_seqnum(prices), seq);
    double p = 0;
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &p));
    cr_expect_float_eq(p, 0.5, 1e-12);
    cr_assert(kp_aws_prices_on_demand(prices, "zz1.new", &p));
    cr_expect_float_eq(p, 1.25, 1e-12);
    cr_assert(kp_aws_prices_on_demand(prices, "m5.metal", &p));
    cr_expect_float_eq(p, 7.0, 1e-12);
    /* a type neither answer lists keeps its old price */
    cr_assert(kp_aws_prices_on_demand(prices, "c5.large", &p));
    cr_expect_float_eq(p, builtin("c5.large"), 1e-12);
    dbl_stop(&server);
    const char *b0 = server.requests[0].body, *b1 = server.requests[1].body;
    cr_expect(strstr(b0, "\"Field\":\"regionCode\",\"Value\":\"us-west-2\"") != NULL, "%s", b0);
    cr_expect(strstr(b0, "\"Field\":\"tenancy\",\"Value\":\"Shared\"") != NULL);
    cr_expect(strstr(b0, "\"Field\":\"productFamily\",\"Value\":\"Compute Instance\"") != NULL);
    cr_expect(strstr(b0, "\"Field\":\"capacitystatus\",\"Value\":\"Used\"") != NULL);
    cr_expect(strstr(b0, "\"Field\":\"preInstalledSw\",\"Value\":\"NA\"") != NULL);
    cr_expect(strstr(b0, "\"Field\":\"marketoption\",\"Value\":\"OnDemand\"") != NULL);
    cr_expect(strstr(b1, "\"Field\":\"tenancy\",\"Value\":\"Dedicated\"") != NULL);
    cr_expect(strstr(b1, "\"Value\":\"Compute Instance (bare metal)\"") != NULL, "%s", b1);
}

Test(prices, on_demand_update_with_an_empty_query_keeps_old_prices)
{
    const char *t1[] = {"m5.large"}, *a1[] = {"0.5"};
    dbl_response script[] = {{200, NULL, products("USD", t1, a1, 1)},
                             {200, NULL, "{\"FormatVersion\":\"aws_v1\",\"PriceList\":[]}"}};
    serve(script, 2, "us-west-2", false);
    uint64_t seq = kp_aws_prices_seqnum(prices);
    cr_assert_eq(kp_aws_prices_update_on_demand(prices), KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "no on-demand pricing found") != NULL, "%s", kp_error_last());
    cr_expect_eq(kp_aws_prices_seqnum(prices), seq);
    double p = 0;
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &p));
    cr_expect_float_eq(p, builtin("m5.large"), 1e-12);
}

Test(prices, on_demand_update_error_keeps_old_prices)
{
    dbl_response script[] = {
        {400, NULL, "{\"__type\":\"AccessDeniedException\",\"message\":\"no\"}"}};
    serve(script, 1, "us-west-2", false);
    cr_assert_lt(kp_aws_prices_update_on_demand(prices), 0);
    cr_expect(strstr(kp_error_last(), "retrieving on-demand pricing data") != NULL, "%s",
              kp_error_last());
    double p = 0;
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &p));
    cr_expect_float_eq(p, builtin("m5.large"), 1e-12);
}

Test(prices, isolated_vpc_and_govcloud_never_call_the_price_list_api)
{
    serve(NULL, 0, "us-west-2", true);
    cr_expect_eq(kp_aws_prices_update_on_demand(prices), 0);
    kp_aws_prices *gov = NULL;
    kp_aws_prices_opts o = {.region = "us-gov-west-1", .pricing = client};
    cr_assert_eq(kp_aws_prices_new(&gov, &o), 0);
    cr_expect_eq(kp_aws_prices_update_on_demand(gov), 0);
    kp_aws_prices_free(gov);
    dbl_stop(&server);
    cr_expect_eq(server.n_requests, 0);
}

Test(prices, china_prices_are_read_in_yuan)
{
    const char *t[] = {"m5.large"}, *a[] = {"0.7"};
    dbl_response script[] = {{200, NULL, products("CNY", t, a, 1)},
                             {200, NULL, products("CNY", t, a, 1)}};
    serve(script, 2, "cn-north-1", false);
    KP_ASSERT_OK(kp_aws_prices_update_on_demand(prices));
    double p = 0;
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &p));
    cr_expect_float_eq(p, 0.7, 1e-12);
}

static const char SPOT_ANSWER[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<DescribeSpotPriceHistoryResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
    "<requestId>r1</requestId><spotPriceHistorySet>"
    "<item><instanceType>m5.large</instanceType><productDescription>Linux/UNIX</productDescription>"
    "<spotPrice>0.041000</spotPrice><timestamp>2026-08-20T09:00:00.000Z</timestamp>"
    "<availabilityZone>us-west-2a</availabilityZone></item>"
    "<item><instanceType>m5.large</instanceType><productDescription>Linux/UNIX (Amazon "
    "VPC)</productDescription>"
    "<spotPrice>0.038000</spotPrice><timestamp>2026-08-20T11:00:00.000Z</timestamp>"
    "<availabilityZone>us-west-2a</availabilityZone></item>"
    "<item><instanceType>m5.large</instanceType><productDescription>Linux/UNIX</productDescription>"
    "<spotPrice>0.044000</spotPrice><timestamp>2026-08-20T10:00:00.000Z</timestamp>"
    "<availabilityZone>us-west-2b</availabilityZone></item>"
    "<item><instanceType>c5.large</instanceType><productDescription>Linux/UNIX</productDescription>"
    "<spotPrice>not-a-price</spotPrice><timestamp>2026-08-20T10:00:00.000Z</timestamp>"
    "<availabilityZone>us-west-2a</availabilityZone></item>"
    "</spotPriceHistorySet><nextToken></nextToken></DescribeSpotPriceHistoryResponse>";

static const char SPOT_ANSWER_2[] =
    "<DescribeSpotPriceHistoryResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
    "<spotPriceHistorySet>"
    "<item><instanceType>m5.large</instanceType><productDescription>Linux/UNIX</productDescription>"
    "<spotPrice>0.050000</spotPrice><timestamp>2026-08-20T08:00:00.000Z</timestamp>"
    "<availabilityZone>us-west-2b</availabilityZone></item>"
    "</spotPriceHistorySet></DescribeSpotPriceHistoryResponse>";

Test(prices, spot_update_keeps_the_newest_record_and_then_missing_zones_have_no_price)
{
    dbl_response script[] = {{200, NULL, SPOT_ANSWER}};
    serve(script, 1, "us-west-2", false);
    KP_ASSERT_OK(kp_aws_prices_update_spot(prices));
    cr_assert(kp_aws_prices_spot_updated(prices));
    double p = 0;
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2a", &p));
    cr_expect_float_eq(p, 0.038, 1e-12, "the 11:00 record wins over the 09:00 one");
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2b", &p));
    cr_expect_float_eq(p, 0.044, 1e-12);
    cr_expect_not(kp_aws_prices_spot(prices, "m5.large", "us-west-2c", &p),
                  "after an update, a zone without a record has no spot price");
    cr_expect_not(kp_aws_prices_spot(prices, "c5.large", "us-west-2a", &p),
                  "an unparseable record is skipped");
    dbl_stop(&server);
    const char *body = server.requests[0].body;
    cr_expect(strstr(body, "Action=DescribeSpotPriceHistory") != NULL);
    cr_expect(strstr(body, "ProductDescription.1=Linux%2FUNIX&") != NULL, "%s", body);
    cr_expect(strstr(body, "ProductDescription.2=Linux%2FUNIX%20%28Amazon%20VPC%29") != NULL, "%s",
              body);
    cr_expect(strstr(body, "StartTime=2026-08-20T12%3A00%3A00Z") != NULL, "%s", body);
    cr_expect(strstr(body, "MaxResults=2000") != NULL);
}

Test(prices, a_later_spot_update_merges_over_the_earlier_one)
{
    dbl_response script[] = {{200, NULL, SPOT_ANSWER}, {200, NULL, SPOT_ANSWER_2}};
    serve(script, 2, "us-west-2", false);
    KP_ASSERT_OK(kp_aws_prices_update_spot(prices));
    uint64_t seq = kp_aws_prices_seqnum(prices);
    KP_ASSERT_OK(kp_aws_prices_update_spot(prices));
    cr_expect_neq(kp_aws_prices_seqnum(prices), seq);
    double p = 0;
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2b", &p));
    cr_expect_float_eq(p, 0.05, 1e-12, "the newer answer replaces the zone's price");
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2a", &p));
    cr_expect_float_eq(p, 0.038, 1e-12, "zones the newer answer omits keep their price");
}

Test(prices, failed_or_empty_spot_updates_keep_the_static_defaults)
{
    dbl_response script[] = {
        {500, NULL,
         "<Response><Errors><Error><Code>InternalError</Code><Message>x</Message>"
         "</Error></Errors></Response>"},
        {200, NULL,
         "<DescribeSpotPriceHistoryResponse><spotPriceHistorySet/>"
         "</DescribeSpotPriceHistoryResponse>"}};
    serve(script, 2, "us-west-2", false);
    uint64_t seq = kp_aws_prices_seqnum(prices);
    cr_assert_lt(kp_aws_prices_update_spot(prices), 0);
    cr_expect(strstr(kp_error_last(), "retrieving spot pricing data") != NULL, "%s",
              kp_error_last());
    cr_assert_eq(kp_aws_prices_update_spot(prices), KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "no spot pricing found") != NULL);
    cr_expect_not(kp_aws_prices_spot_updated(prices));
    cr_expect_eq(kp_aws_prices_seqnum(prices), seq);
    double p = 0;
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2c", &p));
    cr_expect_float_eq(p, builtin("m5.large"), 1e-12);
}

Test(prices, refresh_runs_both_updates_and_reports_the_first_error)
{
    dbl_response script[] = {{400, NULL, "{\"__type\":\"ThrottledNot\",\"message\":\"x\"}"},
                             {200, NULL, SPOT_ANSWER}};
    serve(script, 2, "us-west-2", false);
    cr_assert_lt(kp_aws_prices_refresh(prices), 0);
    cr_expect(strstr(kp_error_last(), "on-demand") != NULL, "%s", kp_error_last());
    cr_expect(kp_aws_prices_spot_updated(prices), "the spot update still ran");
}

Test(prices, put_spot_keeps_newer_records)
{
    serve(NULL, 0, "us-west-2", false);
    kp_aws_prices_put_spot(prices, "m5.large", "us-west-2a", 0.03, 200);
    kp_aws_prices_put_spot(prices, "m5.large", "us-west-2a", 0.09, 100);
    double p = 0;
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2a", &p));
    cr_expect_float_eq(p, 0.03, 1e-12);
    kp_aws_prices_put_spot(prices, "m5.large", "us-west-2a", 0.02, 300);
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-west-2a", &p));
    cr_expect_float_eq(p, 0.02, 1e-12);
    const char *types[] = {"a1.test", "m5.large", "a1.test"};
    double ps[] = {1.0, 2.0, 3.0};
    kp_aws_prices_merge_on_demand(prices, types, ps, 3);
    cr_assert(kp_aws_prices_on_demand(prices, "a1.test", &p));
    cr_expect_float_eq(p, 3.0, 1e-12, "the last of a batch wins");
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &p));
    cr_expect_float_eq(p, 2.0, 1e-12);
}
