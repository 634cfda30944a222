/*
 * The AWS provider on the in-process double, for the provider-level tests:
 * node classes looked up from JSON text (add_class), the provider with
 * m5.large, c5.large and m6g.large in two zones (provider_with lets a test
 * change options first), and DescribeInstances answers. Test-only.
 */
#ifndef KP_TEST_AWS_PROVIDER_ENV_H
#define KP_TEST_AWS_PROVIDER_ENV_H

#include "cloud/aws/nodeclass.h"
#include "cloud/aws/provider.h"
#include "test_aws_provider_fixture.h"

static kp_cloud_provider *cp;
static const char *classes[4][2]; /* name, JSON */

static __attribute__((unused)) int lookup(void *ctx, const char *name, kp_arena *arena, const kp_ec2nodeclass **out)
{
    (void)ctx;
    for (size_t i = 0; i < 4 && classes[i][0]; i++) {
        if (strcmp(classes[i][0], name) != 0) continue;
        cJSON *doc = cJSON_Parse(classes[i][1]);
        kp_ec2nodeclass *nc = KP_ARENA_NEW(arena, kp_ec2nodeclass, 1);
        int err = kp_decode_ec2nodeclass(arena, doc, nc);
        cJSON_Delete(doc);
        if (err == 0) *out = nc;
        return err;
    }
    return KP_ENOTFOUND;
}

#define READY_STATUS                                                                               \
    "\"status\":{\"instanceProfile\":\"prof\",\"securityGroups\":[{\"id\":\"sg-1\"}],"             \
    "\"subnets\":[{\"id\":\"subnet-a\",\"zone\":\"us-west-2a\",\"zoneID\":\"usw2-az1\"},"          \
    "{\"id\":\"subnet-b\",\"zone\":\"us-west-2b\",\"zoneID\":\"usw2-az2\"}],\"amis\":[{\"id\":"    \
    "\"ami-x86\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\","           \
    "\"values\":[\"amd64\"]}]}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","          \
    "\"observedGeneration\":1}]}"

static __attribute__((unused)) void add_class(const char *name, const char *json)
{
    for (size_t i = 0; i < 4; i++)
        if (!classes[i][0]) {
            classes[i][0] = name;
            classes[i][1] = json;
            return;
        }
}

/* The provider on the double, with m5.large, c5.large and m6g.large in two
 * zones; `tweak` (may be NULL) changes the options first. */
static __attribute__((unused)) void provider_with(void (*tweak)(kp_aws_provider_opts *))
{
    kp_aws_provider_opts o = KP_AWS_PROVIDER_OPTS_INIT;
    o.region = "us-west-2";
    o.cluster_name = "c1";
    o.cluster_endpoint = "https://api";
    o.cluster_cidr = "10.100.0.0/16";
    o.endpoint_url = fx.server.url;
    o.credentials = fx.creds;
    o.max_attempts = 1;
    o.lookup = lookup;
    o.clock = &fx.clock.base;
    if (tweak) tweak(&o);
    cr_assert_eq(kp_aws_provider_new(&o, &cp), 0, "%s", kp_error_last());
    static const char *const zones[] = {"us-west-2a", "us-west-2b"};
    const char *names[] = {"m5.large", "c5.large", "m6g.large"};
    kp_aws_type_row rows[3];
    for (int i = 0; i < 3; i++) {
        const kp_aws_type_info *info = kp_aws_catalog_find(names[i]);
        cr_assert_not_null(info, "%s in the built-in table", names[i]);
        rows[i] = (kp_aws_type_row){.info = *info, .zones = zones, .n_zones = 2, .on_demand = true,
                                    .spot = true};
    }
    kp_aws_instancetypes_set_rows(kp_aws_provider_instancetypes(cp), rows, 3);
}

static __attribute__((unused)) void provider(void)
{
    provider_with(NULL);
}

static __attribute__((unused)) const char *instance_xml(const char *id, const char *type, const char *state,
                                const char *image, const char *subnet_id, const char *tags)
{
    return fmt("<item><instanceId>%s</instanceId><imageId>%s</imageId><instanceState><name>%s"
               "</name></instanceState><instanceType>%s</instanceType><launchTime>"
               "2026-01-01T00:00:00.000Z</launchTime><placement><availabilityZone>us-west-2a"
               "</availabilityZone></placement><subnetId>%s</subnetId><tagSet>%s</tagSet></item>",
               id, image, state, type, subnet_id, tags);
}

static __attribute__((unused)) const char *instances(const char *items)
{
    return fmt("<DescribeInstancesResponse><reservationSet><item><instancesSet>%s</instancesSet>"
               "</item></reservationSet></DescribeInstancesResponse>",
               items);
}

static __attribute__((unused)) const char *tagxml(const char *key, const char *value)
{
    return fmt("<item><key>%s</key><value>%s</value></item>", key, value);
}

static __attribute__((unused)) const char *ours(const char *claim_name)
{
    return fmt("%s%s%s", tagxml("karpenter.sh/nodepool", "pool"),
               tagxml("karpenter.sh/nodeclaim", claim_name),
               tagxml("karpenter.k8s.aws/ec2nodeclass", "default"));
}


#endif
