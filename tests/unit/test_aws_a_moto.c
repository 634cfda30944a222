/*
 * Instance types, prices and interruption notices against moto's server.
 *
 * tests/integration/test_aws_provider_a_moto.sh installs and starts moto and
 * runs this program with KP_AWS_MOTO_URL set. Run on its own, the program
 * installs (when root) and starts moto itself through scripts/moto-server.sh,
 * and fails loudly if it cannot: it never skips.
 *
 * What moto lacks, and where it is covered instead: the Price List API (the
 * on-demand update fails here and the static prices stay: the answers are in
 * test_aws_pricing_provider.c), real spot prices (moto prices every offering
 * at 0.00001), CPU manufacturers and GPU details in DescribeInstanceTypes
 * (test_aws_instancetypes.c uses recorded answers for those).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/decode.h"
#include "api/quantity.h"
#include "base/error.h"
#include "cloud/aws/instancetypes.h"
#include "cloud/aws/interruption.h"
#include "cloud/aws/sqs.h"

#define DATA        KP_SOURCE_DIR "/tests/unit/data/aws/"

#define MOTO_PROGRAM "test_aws_a_moto"
#include "moto_hooks.h"
#include "helpers/assert.h"

static kp_aws_client *client;
static kp_arena *arena;
static kp_aws_prices *prices;
static kp_aws_ice_cache *ice;
static kp_aws_instancetypes *types;

static void connect_moto(void)
{
    const char *url = getenv("KP_AWS_MOTO_URL");
    cr_assert_not_null(url, "KP_AWS_MOTO_URL is not set and moto was not started");
    setenv("AWS_ACCESS_KEY_ID", "AKIDMOTOTEST", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "moto-secret", 1);
    unsetenv("AWS_SESSION_TOKEN");
    kp_aws_client_options o = {
        .region = "us-east-1", .endpoint_url = url, .max_attempts = 1, .timeout_ms = 60000};
    KP_ASSERT_OK(kp_aws_client_new(&client, &o));
    arena = kp_arena_new();
    kp_aws_prices_opts po = {.ec2 = client, .pricing = client};
    KP_ASSERT_OK(kp_aws_prices_new(&prices, &po));
    ice = kp_aws_ice_cache_new(NULL);
    cr_assert_eq(kp_aws_instancetypes_new(&types, client, prices, ice, NULL), 0);
}

static void disconnect(void)
{
    types = kp_aws_instancetypes_free(types);
    ice = kp_aws_ice_cache_free(ice);
    prices = kp_aws_prices_free(prices);
    client = kp_aws_client_free(client);
    arena = kp_arena_free(arena);
}

TestSuite(aws_a_moto, .init = connect_moto, .fini = disconnect, .timeout = 180);

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "missing %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)len + 1);
    cr_assert_eq(fread(data, 1, (size_t)len, f), (size_t)len);
    data[len] = '\0';
    fclose(f);
    return data;
}

static const kp_ec2nodeclass *two_zone_class(void)
{
    cJSON *doc = cJSON_Parse(
        "{\"metadata\":{\"name\":\"moto\"},\"spec\":{\"amiSelectorTerms\":[{\"alias\":"
        "\"al2023@latest\"}]},\"status\":{\"subnets\":[{\"id\":\"subnet-1\",\"zone\":"
        "\"us-east-1a\",\"zoneID\":\"use1-az6\"},{\"id\":\"subnet-2\",\"zone\":\"us-east-1b\","
        "\"zoneID\":\"use1-az1\"}]}}");
    kp_ec2nodeclass *nc = KP_ARENA_NEW(arena, kp_ec2nodeclass, 1);
    KP_ASSERT_OK(kp_decode_ec2nodeclass(arena, doc, nc));
    cJSON_Delete(doc);
    return nc;
}

static int64_t alloc_of(const kp_instance_type *t, const char *res)
{
    return kp_it_capacity(t, res) - kp_it_overhead(t, res);
}

Test(aws_a_moto, instance_types_to_catalog)
{
    KP_ASSERT_OK(kp_aws_instancetypes_refresh(types));
    const char **zones = NULL;
    uint32_t n_zones = 0;
    cr_assert_eq(kp_aws_instancetypes_zones(types, arena, &zones, &n_zones), 0);
    cr_expect_geq(n_zones, 3, "moto offers types in several us-east-1 zones");
    const kp_catalog *cat = NULL;
    KP_ASSERT_OK(kp_aws_instancetypes_catalog(types, two_zone_class(), &cat));
    cr_expect_gt(cat->count, 100);
    /* core resources of the types Karpenter publishes figures for */
    char *text = read_file(DATA "instancetypes/karpenter-allocatable-al2023.json");
    cJSON *expected = cJSON_Parse(text);
    const char *core[] = {"cpu", "memory", "pods", "ephemeral-storage"};
    int compared = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, expected)
    {
        const kp_instance_type *t = kp_catalog_find(cat, entry->string);
        if (!t) continue; /* moto's list is older than Karpenter's */
        for (size_t i = 0; i < 4; i++) {
            kp_quantity q;
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(entry, core[i]);
            cr_assert_eq(kp_quantity_parse(v->valuestring, &q), 0);
            cr_expect_eq(alloc_of(t, core[i]), q.milli, "%s %s: Karpenter says %s", t->name,
                         core[i], v->valuestring);
        }
        compared++;
    }
    cr_expect_geq(compared, 15, "only %d of the fixture's types are known to moto", compared);
    cJSON_Delete(expected);
    free(text);
    const kp_instance_type *m5 = kp_catalog_find(cat, "m5.large");
    cr_assert_not_null(m5);
    bool any_available = false;
    for (uint32_t i = 0; i < m5->n_offerings; i++) {
        const kp_offering *o = &m5->offerings[i];
        bool ours = strcmp(o->zone, "us-east-1a") == 0 || strcmp(o->zone, "us-east-1b") == 0;
        if (!ours) cr_expect_not(o->available, "%s is not a zone of the class", o->zone);
        any_available |= o->available;
    }
    cr_expect(any_available);
}

Test(aws_a_moto, spot_price_history_and_missing_price_list_api)
{
    KP_ASSERT_OK(kp_aws_prices_update_spot(prices));
    double p = 0;
    cr_assert(kp_aws_prices_spot(prices, "m5.large", "us-east-1a", &p));
    cr_expect_float_eq(p, 0.00001, 1e-12, "moto's fixed spot price");
    cr_expect_not(kp_aws_prices_spot(prices, "m5.large", "us-west-2a", &p));
    /* moto has no Price List API: the update fails and the static prices stay */
    double before = 0, after = 0;
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &before));
    cr_expect_lt(kp_aws_prices_update_on_demand(prices), 0);
    cr_assert(kp_aws_prices_on_demand(prices, "m5.large", &after));
    cr_expect_float_eq(before, after, 1e-12);
    /* and the catalog prices spot offerings from the history */
    KP_ASSERT_OK(kp_aws_instancetypes_refresh(types));
    const kp_catalog *cat = NULL;
    cr_assert_eq(kp_aws_instancetypes_catalog(types, two_zone_class(), &cat), 0);
    const kp_instance_type *m5 = kp_catalog_find(cat, "m5.large");
    cr_assert_not_null(m5);
    for (uint32_t i = 0; i < m5->n_offerings; i++)
        if (strcmp(m5->offerings[i].capacity_type, "spot") == 0 &&
            strcmp(m5->offerings[i].zone, "us-east-1a") == 0)
            cr_expect_float_eq(m5->offerings[i].price, 0.00001, 1e-12);
}

static const char *const MESSAGES[] = {
    "spot-warning.json",
    "rebalance.json",
    "state-stopping.json",
    "state-terminated.json",
    "state-running.json",
    "capacity-reservation.json",
    "health-scheduled-change.json",
    "truncated.json",
};
static const enum kp_interruption_kind KINDS[] = {
    KP_INTERRUPT_SPOT,
    KP_INTERRUPT_REBALANCE,
    KP_INTERRUPT_STOPPING,
    KP_INTERRUPT_TERMINATING,
    KP_INTERRUPT_NOOP,
    KP_INTERRUPT_CAPACITY_RESERVATION,
    KP_INTERRUPT_SCHEDULED_CHANGE,
    KP_INTERRUPT_NOOP,
};
enum { N_MESSAGES = sizeof(MESSAGES) / sizeof(MESSAGES[0]) };

/* Receive until `want` notices came or a few polls returned nothing. */
static uint32_t receive_all(kp_interruption_source *src, kp_interruption *got, uint32_t want)
{
    uint32_t total = 0;
    for (int empty = 0; total < want && empty < 3;) {
        kp_interruption *batch = NULL;
        uint32_t n = 0;
        cr_assert_eq(src->ops->receive(src, arena, &batch, &n, 1), 0, "%s", kp_error_last());
        empty = n ? 0 : empty + 1;
        for (uint32_t i = 0; i < n && total < want; i++)
            got[total++] = batch[i];
    }
    return total;
}

Test(aws_a_moto, sqs_interruption_round_trip)
{
    char queue[64];
    snprintf(queue, sizeof(queue), "kp-interruption-%ld-%d", (long)time(NULL), (int)getpid());
    const char *url = NULL;
    KP_ASSERT_OK(kp_sqs_create_queue(client, arena, queue, &url));
    for (size_t i = 0; i < N_MESSAGES; i++) {
        char path[512];
        snprintf(path, sizeof(path), DATA "interruption/%s", MESSAGES[i]);
        char *body = read_file(path);
        const char *id = NULL;
        KP_ASSERT_OK(kp_sqs_send_message(client, arena, url, body, &id));
        free(body);
    }
    kp_interruption_source *src = NULL;
    kp_aws_interruption_opts o = {.sqs = client, .queue_name = queue, .ice = ice};
    cr_assert_eq(kp_aws_interruption_source_new(&o, &src), 0);
    kp_interruption got[N_MESSAGES];
    uint32_t n = receive_all(src, got, N_MESSAGES);
    cr_assert_eq(n, N_MESSAGES, "received %u of %d", n, N_MESSAGES);
    int seen[7] = {0};
    for (uint32_t i = 0; i < n; i++) {
        seen[got[i].kind]++;
        cr_expect_not_null(got[i].handle);
        if (got[i].kind == KP_INTERRUPT_SPOT)
            src->ops->observe(src, &got[i], "m5.large", "us-east-1a", "spot", NULL);
        cr_assert_eq(src->ops->ack(src, &got[i]), 0, "%s", kp_error_last());
    }
    int want[7] = {0};
    for (size_t i = 0; i < N_MESSAGES; i++)
        want[KINDS[i]]++;
    for (int k = 0; k < 7; k++)
        cr_expect_eq(seen[k], want[k], "%s: %d, want %d", kp_interruption_kind_name(k), seen[k],
                     want[k]);
    cr_expect(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
    kp_interruption *left = NULL;
    uint32_t n_left = 9;
    cr_assert_eq(src->ops->receive(src, arena, &left, &n_left, 1), 0);
    cr_expect_eq(n_left, 0, "acknowledged notices are gone");
    kp_interruption_source_free(src);
    KP_EXPECT_OK(kp_sqs_delete_queue(client, url));
}
