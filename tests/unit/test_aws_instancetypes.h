/*
 * Shared set-up for the instance-type provider tests: an in-process EC2 double
 * answering DescribeInstanceTypes (two pages) and DescribeInstanceTypeOfferings
 * from tests/unit/data/aws/instancetypes/, prices from the static table, an
 * ICE cache on a fake clock, and EC2NodeClasses decoded from JSON text.
 */
#ifndef KP_TEST_AWS_INSTANCETYPES_H
#define KP_TEST_AWS_INSTANCETYPES_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "base/error.h"
#include "cloud/aws/instancetypes.h"
#include "test_aws_double.h"
#include "helpers/assert.h"

typedef struct it_env {
    dbl_server server;
    dbl_response script[8];
    char *bodies[8];
    kp_aws_credentials *creds;
    kp_aws_client *client;
    kp_aws_prices *prices;
    kp_aws_ice_cache *ice;
    kp_fake_clock clock;
    kp_aws_instancetypes *it;
    kp_arena *arena;
} it_env;

static it_env env;

/* Serve the fixtures, then `extra` (n_extra responses), and refresh once. */
static __attribute__((unused)) void it_env_start(const dbl_response *extra, size_t n_extra)
{
    memset(&env, 0, sizeof(env));
    const char *files[] = {"instancetypes/describe-instance-types-1.xml",
                           "instancetypes/describe-instance-types-2.xml",
                           "instancetypes/describe-instance-type-offerings.xml"};
    for (size_t i = 0; i < 3; i++) {
        env.bodies[i] = dbl_fixture(files[i]);
        env.script[i] = (dbl_response){200, NULL, env.bodies[i]};
    }
    for (size_t i = 0; i < n_extra && i < 5; i++)
        env.script[3 + i] = extra[i];
    dbl_start(&env.server, env.script, 3 + n_extra);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&env.creds, &c), 0);
    kp_aws_client_options o = {.region = "eu-west-1",
                               .endpoint_url = env.server.url,
                               .credentials = env.creds,
                               .max_attempts = 1};
    KP_ASSERT_OK(kp_aws_client_new(&env.client, &o));
    kp_fake_clock_init(&env.clock, 1000 * KP_NS_PER_SEC);
    kp_aws_prices_opts po = {.region = "eu-west-1", .clock = &env.clock.base};
    cr_assert_eq(kp_aws_prices_new(&env.prices, &po), 0);
    env.ice = kp_aws_ice_cache_new(&env.clock.base);
    cr_assert_eq(
        kp_aws_instancetypes_new(&env.it, env.client, env.prices, env.ice, &env.clock.base), 0);
    env.arena = kp_arena_new();
    KP_ASSERT_OK(kp_aws_instancetypes_refresh(env.it));
}

static __attribute__((unused)) void it_env_stop(void)
{
    env.it = kp_aws_instancetypes_free(env.it);
    env.ice = kp_aws_ice_cache_free(env.ice);
    env.prices = kp_aws_prices_free(env.prices);
    env.client = kp_aws_client_free(env.client);
    env.creds = kp_aws_credentials_free(env.creds);
    env.arena = kp_arena_free(env.arena);
    dbl_free(&env.server);
    for (size_t i = 0; i < 8; i++)
        free(env.bodies[i]);
}

/* An EC2NodeClass from JSON text (its spec and status), decoded into env.arena. */
static __attribute__((unused)) const kp_ec2nodeclass *nodeclass(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    cr_assert_not_null(doc, "bad test JSON: %s", json);
    kp_ec2nodeclass *nc = KP_ARENA_NEW(env.arena, kp_ec2nodeclass, 1);
    KP_ASSERT_OK(kp_decode_ec2nodeclass(env.arena, doc, nc));
    cJSON_Delete(doc);
    return nc;
}

#define THREE_ZONES                                                                                \
    "\"status\":{\"subnets\":[{\"id\":\"subnet-a\",\"zone\":\"eu-west-1a\",\"zoneID\":"            \
    "\"euw1-az1\"},{\"id\":\"subnet-b\",\"zone\":\"eu-west-1b\",\"zoneID\":\"euw1-az2\"},"         \
    "{\"id\":\"subnet-c\",\"zone\":\"eu-west-1c\",\"zoneID\":\"euw1-az3\"}]}"

/* A class named `name` with spec `spec_json` (the object's members) in three zones. */
static __attribute__((unused)) const kp_ec2nodeclass *class_with(const char *name,
                                                                 const char *spec_json)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s}," THREE_ZONES "}",
             name, spec_json);
    return nodeclass(buf);
}

static __attribute__((unused)) const kp_instance_type *type_of(const kp_catalog *cat,
                                                               const char *name)
{
    const kp_instance_type *t = kp_catalog_find(cat, name);
    cr_assert_not_null(t, "%s is in the catalog", name);
    return t;
}

static __attribute__((unused)) const kp_it_requirement *req_of(const kp_instance_type *t,
                                                               const char *key)
{
    for (uint32_t i = 0; i < t->n_reqs; i++)
        if (strcmp(t->reqs[i].key, key) == 0) return &t->reqs[i];
    return NULL;
}

/* The single value of `key` ("" for present-and-empty), NULL when DoesNotExist or absent. */
static __attribute__((unused)) const char *label_of(const kp_instance_type *t, const char *key)
{
    const kp_it_requirement *r = req_of(t, key);
    if (!r || r->op != KP_OP_IN || r->n_values != 1) return NULL;
    return r->values[0];
}

/* Values of `key` joined with ' ' (empty for DoesNotExist). */
static __attribute__((unused)) const char *values_of(const kp_instance_type *t, const char *key)
{
    static char buf[512];
    buf[0] = '\0';
    const kp_it_requirement *r = req_of(t, key);
    for (uint32_t i = 0; r && i < r->n_values; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "", r->values[i]);
    return buf;
}

static __attribute__((unused)) const kp_offering *offering_of(const kp_instance_type *t,
                                                              const char *zone, const char *ct)
{
    for (uint32_t i = 0; i < t->n_offerings; i++)
        if (strcmp(t->offerings[i].zone, zone) == 0 &&
            strcmp(t->offerings[i].capacity_type, ct) == 0)
            return &t->offerings[i];
    return NULL;
}

static __attribute__((unused)) int64_t alloc_of(const kp_instance_type *t, const char *res)
{
    return kp_it_capacity(t, res) - kp_it_overhead(t, res);
}

#endif
