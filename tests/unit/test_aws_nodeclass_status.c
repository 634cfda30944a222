/*
 * The node class's status and what launches read back from a decoded class:
 * conditions (all True, lastTransitionTime kept or moved, observedGeneration),
 * the readiness gate, the class hash (stable, sensitive to the fields that
 * change nodes, blind to selectors and status), drift reasons, and AMI
 * compatibility with instance types.
 */
#include "cloud/aws/nodeclass.h"
#include "test_aws_provider_fixture.h"
#include "helpers/assert.h"

static kp_aws_nc_resolver *resolver;

static void setup(void)
{
    fx_init();
    kp_aws_nc_resolver_opts o = {.region = "us-west-2",
                                 .cluster_name = "c1",
                                 .kubernetes_version = "1.32",
                                 .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&resolver, &o), 0);
}

static void teardown(void)
{
    resolver = kp_aws_nc_resolver_free(resolver);
    fx_fini();
}

TestSuite(aws_nodeclass_status, .init = setup, .fini = teardown);

static const cJSON *condition(const cJSON *st, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(st, "conditions"))
    {
        if (strcmp(jstr_at(c, "type"), type) == 0) return c;
    }
    return NULL;
}

#define FULL_SPEC                                                                                  \
    "\"instanceProfile\":\"ip\",\"subnetSelectorTerms\":[{\"id\":\"subnet-1\"}],"                  \
    "\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"amiSelectorTerms\":[{\"id\":\"ami-1\"}]"

static void answer_full(void)
{
    answer(200, subnets(subnet("subnet-1", "us-west-2a", "usw2-az1", 9)));
    answer(200, groups(group("sg-1", "g")));
    answer(200, images(image("ami-1", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
}

Test(aws_nodeclass_status, a_resolvable_class_is_ready)
{
    answer_full();
    start();
    const kp_ec2nodeclass *nc = nodeclass("{\"metadata\":{\"name\":\"nc\",\"generation\":4},"
                                          "\"spec\":{" FULL_SPEC "}}");
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    KP_ASSERT_OK(kp_aws_nc_resolve(resolver, &c, nc, &st));
    static const char *types[] = {"AMIsReady",
                                  "SubnetsReady",
                                  "SecurityGroupsReady",
                                  "InstanceProfileReady",
                                  "CapacityReservationsReady",
                                  "PlacementGroupReady",
                                  "ValidationSucceeded",
                                  "Ready"};
    for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
        const cJSON *cond = condition(st, types[i]);
        cr_assert_not_null(cond, "%s", types[i]);
        cr_expect_str_eq(jstr_at(cond, "status"), "True", "%s", types[i]);
        cr_expect_str_eq(jstr_at(cond, "reason"), types[i]);
        cr_expect_str_eq(jstr_at(cond, "lastTransitionTime"), "2026-01-01T00:00:00Z");
        cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cond, "observedGeneration")), 4);
    }
    cr_expect_str_eq(jstr_at(st, "instanceProfile"), "ip");
    cr_expect_str_eq(jstr_at(st, "amis.0.requirements.0.key"), "kubernetes.io/arch");
    cr_expect_str_eq(jstr_at(st, "amis.0.requirements.0.values.0"), "amd64");
    /* the status decodes back into a class that launches may use */
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "metadata", cJSON_Parse("{\"name\":\"nc\",\"generation\":4}"));
    cJSON_AddItemToObject(doc, "status", st);
    char *text = cJSON_PrintUnformatted(doc);
    const kp_ec2nodeclass *back = nodeclass(text);
    free(text);
    cJSON_Delete(doc);
    KP_EXPECT_OK(kp_aws_nodeclass_check_ready(back));
    cr_assert_eq(back->n_status_amis, 1);
    cr_expect_str_eq(back->status_amis[0].id, "ami-1");
    cr_expect_str_eq(back->status_subnets[0].zone_id, "usw2-az1");
}

Test(aws_nodeclass_status, transition_times_move_only_on_change)
{
    answer_full();
    start();
    fx.clock.ns += 3600 * KP_NS_PER_SEC;
    const kp_ec2nodeclass *nc = nodeclass(
        "{\"metadata\":{\"name\":\"nc\",\"generation\":2},\"spec\":{" FULL_SPEC "},\"status\":"
        "{\"conditions\":[{\"type\":\"AMIsReady\",\"status\":\"True\",\"reason\":\"AMIsReady\","
        "\"lastTransitionTime\":\"2025-05-05T05:05:05Z\"},{\"type\":\"SubnetsReady\",\"status\":"
        "\"False\",\"reason\":\"SubnetsNotFound\",\"lastTransitionTime\":"
        "\"2025-05-05T05:05:05Z\"}]}}");
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    KP_ASSERT_OK(kp_aws_nc_resolve(resolver, &c, nc, &st));
    cr_expect_str_eq(jstr_at(condition(st, "AMIsReady"), "lastTransitionTime"),
                     "2025-05-05T05:05:05Z", "still True: kept");
    cr_expect_str_eq(jstr_at(condition(st, "SubnetsReady"), "lastTransitionTime"),
                     "2026-01-01T01:00:00Z", "False to True: now");
    cr_expect_str_eq(jstr_at(condition(st, "Ready"), "lastTransitionTime"), "2026-01-01T01:00:00Z",
                     "new: now");
    cJSON_Delete(st);
}

Test(aws_nodeclass_status, readiness_gate)
{
    const kp_ec2nodeclass *none = nodeclass("{\"metadata\":{\"name\":\"a\",\"generation\":1}}");
    cr_expect_eq(kp_aws_nodeclass_check_ready(none), KP_ENOTREADY);
    cr_expect_str_eq(kp_error_last(), "ec2nodeclass a is not ready");
    const kp_ec2nodeclass *no = nodeclass(
        "{\"metadata\":{\"name\":\"b\",\"generation\":1},\"status\":{\"conditions\":[{\"type\":"
        "\"Ready\",\"status\":\"False\",\"message\":\"SubnetsReady=False\","
        "\"observedGeneration\":1}]}}");
    cr_expect_eq(kp_aws_nodeclass_check_ready(no), KP_ENOTREADY);
    cr_expect_str_eq(kp_error_last(), "ec2nodeclass b is not ready: SubnetsReady=False");
    const kp_ec2nodeclass *old = nodeclass(
        "{\"metadata\":{\"name\":\"c\",\"generation\":5},\"status\":{\"conditions\":[{\"type\":"
        "\"Ready\",\"status\":\"True\",\"observedGeneration\":4}]}}");
    cr_expect_eq(kp_aws_nodeclass_check_ready(old), KP_ENOTREADY);
    cr_expect(strstr(kp_error_last(), "generation 4, not 5") != NULL, "%s", kp_error_last());
    const kp_ec2nodeclass *ok = nodeclass(
        "{\"metadata\":{\"name\":\"d\",\"generation\":5},\"status\":{\"conditions\":[{\"type\":"
        "\"Ready\",\"status\":\"True\",\"observedGeneration\":5}]}}");
    cr_expect_eq(kp_aws_nodeclass_check_ready(ok), 0);
}

/* ---------------------------------------------------------------- the hash */

static uint64_t hash_of(const char *spec)
{
    return kp_aws_nodeclass_hash(
        nodeclass(fmt("{\"metadata\":{\"name\":\"nc\"},\"spec\":{%s}}", spec)));
}

Test(aws_nodeclass_status, hash_follows_what_changes_nodes)
{
    const char *base = "\"role\":\"r\",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                       "\"tags\":{\"a\":\"1\",\"b\":\"2\"}";
    uint64_t h = hash_of(base);
    cr_expect_eq(hash_of(base), h, "stable");
    cr_expect_eq(hash_of("\"tags\":{\"b\":\"2\",\"a\":\"1\"},\"role\":\"r\",\"amiSelectorTerms\":"
                         "[{\"alias\":\"al2023@latest\"}]"),
                 h, "map order does not matter");
    /* selectors drift through the status, not the hash */
    cr_expect_eq(hash_of(fmt("%s,\"subnetSelectorTerms\":[{\"id\":\"s\"}]", base)), h);
    cr_expect_eq(hash_of("\"role\":\"r\",\"amiSelectorTerms\":[{\"alias\":\"al2023@v2\"}],"
                         "\"tags\":{\"a\":\"1\",\"b\":\"2\"}"),
                 h, "the alias version is a selector");
    cr_expect_neq(hash_of("\"role\":\"r2\",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                          "\"tags\":{\"a\":\"1\",\"b\":\"2\"}"),
                  h, "role");
    cr_expect_neq(hash_of("\"role\":\"r\",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                          "\"tags\":{\"a\":\"1\"}"),
                  h, "tags");
    const char *changes[] = {
        "\"userData\":\"x\"",
        "\"kubelet\":{\"maxPods\":10}",
        "\"blockDeviceMappings\":[{\"deviceName\":\"/dev/"
        "xvda\",\"ebs\":{\"volumeSize\":\"30Gi\"}}]",
        "\"metadataOptions\":{\"httpTokens\":\"optional\"}",
        "\"detailedMonitoring\":true",
        "\"associatePublicIPAddress\":false",
        "\"instanceStorePolicy\":\"RAID0\"",
        "\"amiFamily\":\"Bottlerocket\"",
        "\"context\":\"c\"",
    };
    for (size_t i = 0; i < sizeof(changes) / sizeof(*changes); i++)
        cr_expect_neq(hash_of(fmt("%s,%s", base, changes[i])), h, "%s", changes[i]);
    const kp_ec2nodeclass *with_status = nodeclass(
        fmt("{\"metadata\":{\"name\":\"other\",\"generation\":9},\"spec\":{%s},\"status\":"
            "{\"amis\":[{\"id\":\"ami-1\"}]}}",
            base));
    cr_expect_eq(kp_aws_nodeclass_hash(with_status), h, "name, generation, status: ignored");
}

/* --------------------------------------------------------------- drift */

static const kp_ec2nodeclass *drift_class(const char *hash, const char *version)
{
    return nodeclass(fmt(
        "{\"metadata\":{\"name\":\"nc\",\"annotations\":{\"karpenter.k8s.aws/ec2nodeclass-hash\":"
        "\"%s\",\"karpenter.k8s.aws/ec2nodeclass-hash-version\":\"%s\"}},\"status\":{\"amis\":"
        "[{\"id\":\"ami-1\"},{\"id\":\"ami-2\"}],\"subnets\":[{\"id\":\"subnet-1\",\"zone\":"
        "\"z\"}]}}",
        hash, version));
}

static const kp_nodeclaim *drift_claim(const char *hash, const char *version)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"c\",\"annotations\":{"
                         "\"karpenter.k8s.aws/ec2nodeclass-hash\":\"%s\","
                         "\"karpenter.k8s.aws/ec2nodeclass-hash-version\":\"%s\"}}}",
                         hash, version));
}

Test(aws_nodeclass_status, drift_reasons)
{
    const char *v = KP_AWS_NODECLASS_HASH_VERSION;
    const kp_ec2nodeclass *nc = drift_class("1", v);
    cr_expect_null(kp_aws_nodeclass_drift(nc, drift_claim("1", v), "ami-2", "subnet-1"));
    cr_expect_str_eq(kp_aws_nodeclass_drift(nc, drift_claim("2", v), "ami-2", "subnet-1"),
                     "NodeClassDrift");
    cr_expect_null(kp_aws_nodeclass_drift(nc, drift_claim("2", "v6"), "ami-2", "subnet-1"),
                   "a claim hashed by another version is not compared");
    cr_expect_null(
        kp_aws_nodeclass_drift(drift_class("1", "v6"), drift_claim("2", "v6"), NULL, NULL),
        "versions equal but not ours");
    cr_expect_str_eq(kp_aws_nodeclass_drift(nc, drift_claim("1", v), "ami-9", "subnet-1"),
                     "AMIDrift");
    cr_expect_str_eq(kp_aws_nodeclass_drift(nc, drift_claim("1", v), "ami-1", "subnet-9"),
                     "SubnetDrift");
    cr_expect_null(kp_aws_nodeclass_drift(nc, drift_claim("1", v), NULL, ""), "unknown: skipped");
    const kp_ec2nodeclass *empty = nodeclass("{\"metadata\":{\"name\":\"e\"}}");
    cr_expect_null(kp_aws_nodeclass_drift(empty, drift_claim("1", v), "ami-9", "subnet-9"),
                   "no status yet: nothing to compare");
}

/* ------------------------------------------------------- AMIs and types */

static kp_catalog *types(void)
{
    kp_catalog *cat = kp_catalog_new("test");
    kp_instance_type *m5 = kp_catalog_add_type(cat, "m5.large");
    kp_it_add_label(cat, m5, "kubernetes.io/arch", "amd64");
    kp_it_add_req(cat, m5, "karpenter.k8s.aws/instance-gpu-count", KP_OP_DOES_NOT_EXIST, NULL, 0);
    kp_instance_type *g5 = kp_catalog_add_type(cat, "g5.xlarge");
    kp_it_add_label(cat, g5, "kubernetes.io/arch", "amd64");
    kp_it_add_label(cat, g5, "karpenter.k8s.aws/instance-gpu-count", "1");
    kp_instance_type *m7g = kp_catalog_add_type(cat, "m7g.large");
    kp_it_add_label(cat, m7g, "kubernetes.io/arch", "arm64");
    return cat;
}

Test(aws_nodeclass_status, each_type_takes_the_first_ami_it_can_run)
{
    const kp_ec2nodeclass *nc = nodeclass(
        "{\"metadata\":{\"name\":\"nc\"},\"status\":{\"amis\":["
        "{\"id\":\"ami-gpu\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":"
        "\"In\",\"values\":[\"amd64\"]},{\"key\":\"karpenter.k8s.aws/instance-gpu-count\","
        "\"operator\":\"Exists\"}]},"
        "{\"id\":\"ami-x86\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":"
        "\"In\",\"values\":[\"amd64\"]},{\"key\":\"karpenter.k8s.aws/instance-gpu-count\","
        "\"operator\":\"DoesNotExist\"}]},"
        "{\"id\":\"ami-not-arm\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":"
        "\"NotIn\",\"values\":[\"arm64\"]}]}]}}");
    kp_catalog *cat = types();
    const kp_nc_ami *a = kp_aws_nodeclass_ami_for(nc, kp_catalog_find(cat, "m5.large"));
    cr_assert_not_null(a);
    cr_expect_str_eq(a->id, "ami-x86");
    cr_expect_str_eq(kp_aws_nodeclass_ami_for(nc, kp_catalog_find(cat, "g5.xlarge"))->id,
                     "ami-gpu");
    cr_expect_null(kp_aws_nodeclass_ami_for(nc, kp_catalog_find(cat, "m7g.large")));
    cr_expect(kp_aws_ami_fits(&nc->status_amis[2], kp_catalog_find(cat, "m5.large")));
    cr_expect_not(kp_aws_ami_fits(&nc->status_amis[2], kp_catalog_find(cat, "m7g.large")));
    kp_catalog_free(cat);
}
