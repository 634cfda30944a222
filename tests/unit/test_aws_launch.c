/*
 * Launching through CreateFleet on the in-process double: the request
 * (instant, one instance, allocation strategies, templates per AMI and pod
 * count, overrides with one subnet per zone, tags), the answer (instance,
 * partial errors), ICE handling (marks, KP_EINSUFFICIENT_CAPACITY, spot to
 * on-demand fallback, the spot service-linked role, full subnets), vanished
 * templates, and what cannot be launched.
 */
#include "cloud/aws/launch.h"
#include "test_aws_provider_fixture.h"
#include "helpers/assert.h"

static kp_catalog *cat;
static kp_aws_ice_cache *ice;
static kp_aws_nc_resolver *resolver;
static kp_aws_lts *lts;
static kp_aws_launcher *launcher;

static void setup(void)
{
    fx_init();
    cat = kp_catalog_new("test");
    ice = kp_aws_ice_cache_new(&fx.clock.base);
    kp_aws_nc_resolver_opts ro = {
        .region = "us-west-2", .cluster_name = "c1", .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&resolver, &ro), 0);
    kp_aws_lt_opts lo = {.cluster_name = "c1",
                         .cluster_endpoint = "https://api",
                         .cluster_cidr = "10.100.0.0/16",
                         .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_lts_new(&lts, &lo), 0);
    kp_aws_launcher_opts o = {"c1", lts, resolver, ice, &fx.clock.base, NULL};
    cr_assert_eq(kp_aws_launcher_new(&launcher, &o), 0);
}

static void teardown(void)
{
    launcher = kp_aws_launcher_free(launcher);
    lts = kp_aws_lts_free(lts);
    resolver = kp_aws_nc_resolver_free(resolver);
    cat = kp_catalog_free(cat);
    ice = kp_aws_ice_cache_free(ice);
    fx_fini();
}

TestSuite(aws_launch, .init = setup, .fini = teardown);

static const kp_ec2nodeclass *the_class(const char *extra_spec)
{
    return nodeclass(fmt(
        "{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":{\"amiFamily\":\"AL2023\","
        "\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}],\"tags\":{\"team\":\"a\"}%s},"
        "\"status\":{\"instanceProfile\":\"prof\",\"securityGroups\":[{\"id\":\"sg-1\"}],"
        "\"subnets\":[{\"id\":\"subnet-a1\",\"zone\":\"us-west-2a\"},{\"id\":\"subnet-a2\","
        "\"zone\":\"us-west-2a\"},{\"id\":\"subnet-b\",\"zone\":\"us-west-2b\"}],\"amis\":["
        "{\"id\":\"ami-arm\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\","
        "\"values\":[\"arm64\"]}]},{\"id\":\"ami-x86\",\"requirements\":[{\"key\":"
        "\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"amd64\"]}]}]}}",
        extra_spec));
}

static const kp_nodeclaim *claim_allowing(const char *capacity_types)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"claim-1\",\"labels\":{"
                         "\"karpenter.sh/nodepool\":\"pool\"}},\"spec\":{\"requirements\":[{"
                         "\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":"
                         "[%s]}]}}",
                         capacity_types));
}

static void three_types(void)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    cat_type(cat, "m6g.large", "arm64", 0.077, 0.03, 2, 29);
    cat_type(cat, "c5.large", "amd64", 0.085, 0.05, 2, 29);
}

/* The subnets answer: subnet-a2 has more free IPs than subnet-a1. */
static void answer_subnets(void)
{
    answer(200, subnets(fmt("%s%s%s", subnet("subnet-a1", "us-west-2a", "usw2-az1", 10),
                            subnet("subnet-a2", "us-west-2a", "usw2-az1", 100),
                            subnet("subnet-b", "us-west-2b", "usw2-az2", 50))));
}

static const char *lt_created(const char *id)
{
    return fmt("<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>%s"
               "</launchTemplateId><launchTemplateName>x</launchTemplateName></launchTemplate>"
               "</CreateLaunchTemplateResponse>",
               id);
}

/* A template that does not exist yet, then is created. */
static void answer_new_template(const char *id)
{
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, lt_created(id));
}

static int launch(const kp_ec2nodeclass *nc, const kp_nodeclaim *c, kp_aws_launched *out)
{
    kp_aws_nc_clients cl = {fx.ec2, fx.ssm, fx.iam};
    return kp_aws_launch(launcher, &cl, nc, c, cat, fx.arena, out);
}

/* The first request whose Action is `name`, from request `from` on. */
static size_t find(const char *name, size_t from)
{
    for (size_t i = from; i < requests(); i++)
        if (strcmp(action(i), name) == 0) return i;
    cr_assert_fail("no %s request after %zu", name, from);
    return 0;
}

/* Overrides of config `cfg` as "type/subnet/zone/image" joined by ' '. */
static const char *overrides(size_t req, int cfg)
{
    const char *s = "";
    for (int i = 1;; i++) {
        const char *p = fmt("LaunchTemplateConfigs.%d.Overrides.%d.", cfg, i);
        const char *type = sent(req, fmt("%sInstanceType", p));
        if (!type) return s;
        s = fmt("%s%s%s/%s/%s/%s", s, i > 1 ? " " : "", type, sent(req, fmt("%sSubnetId", p)),
                sent(req, fmt("%sAvailabilityZone", p)), sent(req, fmt("%sImageId", p)));
    }
}

/* The value of tag `key` in tag specification `spec` of request `req`. */
static const char *tag(size_t req, int spec, const char *key)
{
    for (int i = 1;; i++) {
        const char *k = sent(req, fmt("TagSpecification.%d.Tag.%d.Key", spec, i));
        if (!k) return NULL;
        if (strcmp(k, key) == 0) return sent(req, fmt("TagSpecification.%d.Tag.%d.Value", spec, i));
    }
}

Test(aws_launch, spot_fleet_request_and_answer)
{
    three_types();
    answer_subnets();
    answer_new_template("lt-arm");
    answer_new_template("lt-x86");
    answer(200, fleet(fleet_instance("i-0c5", "c5.large", "us-west-2b", "subnet-b", "spot"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(the_class(""), claim_allowing("\"spot\",\"on-demand\""), &out));
    cr_assert_eq(requests(), 6);
    cr_expect_str_eq(action(0), "DescribeSubnets");
    size_t f = find("CreateFleet", 0);
    cr_expect_str_eq(sent(f, "Type"), "instant");
    cr_expect_str_eq(sent(f, "TargetCapacitySpecification.TotalTargetCapacity"), "1");
    cr_expect_str_eq(sent(f, "TargetCapacitySpecification.DefaultTargetCapacityType"), "spot");
    cr_expect_str_eq(sent(f, "SpotOptions.AllocationStrategy"), "price-capacity-optimized");
    cr_expect_null(sent(f, "OnDemandOptions.AllocationStrategy"));
    /* one template per AMI, cheapest type first; the subnet with most free IPs per zone */
    cr_expect_str_eq(sent(f, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version"),
                     "$Latest");
    cr_expect(strncmp(sent(f, "LaunchTemplateConfigs.1.LaunchTemplateSpecification."
                              "LaunchTemplateName"),
                      "karpenter.k8s.aws/", 18) == 0);
    cr_expect_str_eq(overrides(f, 1), "m6g.large/subnet-a2/us-west-2a/ami-arm "
                                      "m6g.large/subnet-b/us-west-2b/ami-arm");
    cr_expect_str_eq(overrides(f, 2), "m5.large/subnet-a2/us-west-2a/ami-x86 "
                                      "m5.large/subnet-b/us-west-2b/ami-x86 "
                                      "c5.large/subnet-a2/us-west-2a/ami-x86 "
                                      "c5.large/subnet-b/us-west-2b/ami-x86");
    cr_expect_str_eq(sent(f, "LaunchTemplateConfigs.2.Overrides.1.Priority"), "0.04");
    cr_expect_str_eq(sent(f, "TagSpecification.1.ResourceType"), "instance");
    cr_expect_str_eq(sent(f, "TagSpecification.2.ResourceType"), "volume");
    cr_expect_str_eq(sent(f, "TagSpecification.3.ResourceType"), "fleet");
    cr_expect_str_eq(tag(f, 1, "karpenter.sh/nodepool"), "pool");
    cr_expect_str_eq(tag(f, 1, "karpenter.sh/nodeclaim"), "claim-1");
    cr_expect_str_eq(tag(f, 1, "karpenter.k8s.aws/ec2nodeclass"), "nc");
    cr_expect_str_eq(tag(f, 1, "eks:eks-cluster-name"), "c1");
    cr_expect_str_eq(tag(f, 1, "kubernetes.io/cluster/c1"), "owned");
    cr_expect_str_eq(tag(f, 1, "team"), "a");
    cr_expect_str_eq(tag(f, 3, "karpenter.k8s.aws/ec2nodeclass-hash-version"),
                     KP_AWS_NODECLASS_HASH_VERSION);
    cr_expect_null(sent(f, "Context"));
    /* the templates carry the class's tags but nothing per claim */
    size_t create = find("CreateLaunchTemplate", 0);
    cr_expect_str_eq(tag(create, 1, "karpenter.sh/nodepool"), "pool");
    cr_expect_null(tag(create, 1, "karpenter.sh/nodeclaim"));
    cr_expect_str_eq(out.instance_id, "i-0c5");
    cr_expect_str_eq(out.type->name, "c5.large");
    cr_expect_str_eq(out.zone, "us-west-2b");
    cr_expect_str_eq(out.subnet_id, "subnet-b");
    cr_expect_str_eq(out.capacity_type, "spot");
    cr_expect_str_eq(out.image_id, "ami-x86");
    cr_expect_str_eq(out.fleet_id, "fleet-1");
}

Test(aws_launch, on_demand_uses_lowest_price_and_the_context)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200,
           fleet(fleet_instance("i-1", "m5.large", "us-west-2a", "subnet-a2", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(
        launch(the_class(",\"context\":\"ctx-1\""), claim_allowing("\"on-demand\""), &out));
    size_t f = find("CreateFleet", 0);
    cr_expect_str_eq(sent(f, "TargetCapacitySpecification.DefaultTargetCapacityType"), "on-demand");
    cr_expect_str_eq(sent(f, "OnDemandOptions.AllocationStrategy"), "lowest-price");
    cr_expect_null(sent(f, "SpotOptions.AllocationStrategy"));
    cr_expect_str_eq(sent(f, "Context"), "ctx-1");
    cr_expect_str_eq(out.capacity_type, "on-demand");
}

Test(aws_launch, types_with_different_pod_counts_get_their_own_templates)
{
    cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    cat_type(cat, "m5.xlarge", "amd64", 0.192, -1, 4, 58);
    answer_subnets();
    answer_new_template("lt-29");
    answer_new_template("lt-58");
    answer(200,
           fleet(fleet_instance("i-1", "m5.xlarge", "us-west-2a", "subnet-a2", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(the_class(""), claim_allowing("\"on-demand\""), &out));
    size_t f = find("CreateFleet", 0);
    cr_expect_str_eq(overrides(f, 1), "m5.large/subnet-a2/us-west-2a/ami-x86 "
                                      "m5.large/subnet-b/us-west-2b/ami-x86");
    cr_expect_str_eq(overrides(f, 2), "m5.xlarge/subnet-a2/us-west-2a/ami-x86 "
                                      "m5.xlarge/subnet-b/us-west-2b/ami-x86");
    cr_expect_str_neq(sent(f, "LaunchTemplateConfigs.1.LaunchTemplateSpecification."
                              "LaunchTemplateName"),
                      sent(f, "LaunchTemplateConfigs.2.LaunchTemplateSpecification."
                              "LaunchTemplateName"));
    cr_expect_str_eq(out.type->name, "m5.xlarge");
}

Test(aws_launch, partial_answers_launch_and_still_mark_ice)
{
    three_types();
    answer_subnets();
    answer_new_template("lt-arm");
    answer_new_template("lt-x86");
    answer(200, fleet(fleet_instance("i-1", "m5.large", "us-west-2b", "subnet-b", "spot"),
                      fleet_error("InsufficientInstanceCapacity", "m6g.large", "us-west-2a",
                                  "subnet-a2")));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(the_class(""), claim_allowing("\"spot\""), &out));
    cr_expect_str_eq(out.instance_id, "i-1");
    cr_expect(kp_aws_ice_unavailable(ice, "spot", "m6g.large", "us-west-2a"));
    cr_expect_not(kp_aws_ice_unavailable(ice, "spot", "m6g.large", "us-west-2b"));
}

Test(aws_launch, nothing_launched_on_ice_is_insufficient_capacity)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200, fleet("", fmt("%s%s",
                              fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a",
                                          "subnet-a2"),
                              fleet_error("UnfulfillableCapacity", "m5.large", "us-west-2b",
                                          "subnet-b"))));
    start();
    kp_aws_launched out;
    cr_expect_eq(launch(the_class(""), claim_allowing("\"spot\""), &out),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect(strstr(kp_error_last(), "InsufficientInstanceCapacity: no m5.large in us-west-2a") !=
                  NULL,
              "%s", kp_error_last());
    cr_expect(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-west-2a"));
    cr_expect(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-west-2b"));
    cr_expect_not(kp_aws_ice_unavailable(ice, "on-demand", "m5.large", "us-west-2a"));
    cr_expect_eq(requests(), 4, "spot only: no fallback");
}

Test(aws_launch, spot_ice_falls_back_to_on_demand)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    answer_subnets();
    answer_new_template("lt-spot");
    answer(200, fleet("", fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a",
                                      "subnet-a2")));
    answer_new_template("lt-od");
    answer(200,
           fleet(fleet_instance("i-od", "m5.large", "us-west-2b", "subnet-b", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(the_class(""), claim_allowing("\"spot\",\"on-demand\""), &out));
    size_t first = find("CreateFleet", 0), second = find("CreateFleet", first + 1);
    cr_expect_str_eq(sent(first, "TargetCapacitySpecification.DefaultTargetCapacityType"), "spot");
    cr_expect_str_eq(sent(second, "TargetCapacitySpecification.DefaultTargetCapacityType"),
                     "on-demand");
    cr_expect_eq(requests(), 7, "subnets cached; an on-demand template of its own");
    cr_expect_str_eq(out.instance_id, "i-od");
    cr_expect_str_eq(out.capacity_type, "on-demand");
}

Test(aws_launch, the_fallback_keeps_the_spot_error_when_on_demand_is_impossible)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    answer_subnets();
    answer_new_template("lt-spot");
    answer(200, fleet("", fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a",
                                      "subnet-a2")));
    start();
    kp_aws_launched out;
    cr_expect_eq(launch(the_class(""), claim_allowing("\"spot\""), &out),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect(strstr(kp_error_last(), "InsufficientInstanceCapacity") != NULL, "%s",
              kp_error_last());
}

Test(aws_launch, other_fleet_errors_are_plain_failures)
{
    cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200, fleet("", fmt("%s%s",
                              fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a",
                                          "subnet-a2"),
                              fleet_error("InvalidParameterValue", "m5.large", "us-west-2b",
                                          "subnet-b"))));
    answer(403, ec2_error("UnauthorizedOperation", "not allowed to CreateFleet"));
    start();
    kp_aws_launched out;
    const kp_ec2nodeclass *nc = the_class("");
    cr_expect_eq(launch(nc, claim_allowing("\"on-demand\""), &out), KP_ERROR);
    cr_expect(strstr(kp_error_last(), "InvalidParameterValue") != NULL, "%s", kp_error_last());
    kp_aws_ice_flush(ice);
    cr_expect_eq(launch(nc, claim_allowing("\"on-demand\""), &out), KP_EFORBIDDEN);
    cr_expect(strstr(kp_error_last(), "creating fleet request") != NULL, "%s", kp_error_last());
}

Test(aws_launch, the_spot_service_linked_role)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200, fleet("", fleet_error("AuthFailure.ServiceLinkedRoleCreationNotPermitted",
                                      "m5.large", "us-west-2a", "subnet-a2")));
    start();
    kp_aws_launched out;
    cr_expect_eq(launch(the_class(""), claim_allowing("\"spot\""), &out),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect(kp_aws_ice_unavailable(ice, "spot", "c7i.large", "us-west-2c"),
              "spot as a whole is off");
}

Test(aws_launch, a_full_subnet_goes_last)
{
    cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200, fleet("", fleet_error("InsufficientFreeAddressesInSubnet", "m5.large", "us-west-2a",
                                      "subnet-a2")));
    answer(200,
           fleet(fleet_instance("i-1", "m5.large", "us-west-2a", "subnet-a1", "on-demand"), ""));
    start();
    kp_aws_launched out;
    const kp_ec2nodeclass *nc = the_class("");
    cr_expect_eq(launch(nc, claim_allowing("\"on-demand\""), &out), KP_EINSUFFICIENT_CAPACITY, "%s",
                 kp_error_last());
    cr_expect(kp_aws_ice_unavailable(ice, "on-demand", "m5.large", "us-west-2a"));
    /* without the ICE mark, the subnet mark is still read: a1 now */
    kp_aws_ice_flush(ice);
    KP_ASSERT_OK(launch(nc, claim_allowing("\"on-demand\""), &out));
    cr_expect_str_eq(overrides(find("CreateFleet", 4), 1),
                     "m5.large/subnet-a1/us-west-2a/ami-x86 m5.large/subnet-b/us-west-2b/ami-x86");
}

Test(aws_launch, a_vanished_template_is_created_again)
{
    cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "gone"));
    answer_new_template("lt-2");
    answer(200,
           fleet(fleet_instance("i-1", "m5.large", "us-west-2a", "subnet-a2", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(the_class(""), claim_allowing("\"on-demand\""), &out));
    cr_expect_eq(requests(), 7);
    cr_expect_str_eq(action(4), "DescribeLaunchTemplates", "asked again, not from the cache");
    cr_expect_str_eq(out.instance_id, "i-1");
}

Test(aws_launch, what_cannot_be_launched)
{
    cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    answer_subnets();
    start();
    kp_aws_launched out;
    const kp_ec2nodeclass *arm_only = nodeclass(
        "{\"metadata\":{\"name\":\"nc\"},\"spec\":{\"subnetSelectorTerms\":[{\"tags\":{\"k\":"
        "\"v\"}}]},\"status\":{\"instanceProfile\":\"p\",\"securityGroups\":[{\"id\":\"sg\"}],"
        "\"amis\":[{\"id\":\"ami-arm\",\"requirements\":[{\"key\":\"kubernetes.io/arch\","
        "\"operator\":\"In\",\"values\":[\"arm64\"]}]}]}}");
    cr_expect_eq(launch(arm_only, claim_allowing("\"on-demand\""), &out), KP_ERROR);
    cr_expect(strstr(kp_error_last(), "no instance types satisfy requirements of the amis") != NULL,
              "%s", kp_error_last());
    cr_expect_eq(launch(the_class(""), claim_allowing("\"reserved\""), &out),
                 KP_EINSUFFICIENT_CAPACITY, "no reserved offerings");
    kp_aws_launcher *l = NULL;
    kp_aws_launcher_opts o = {"c1", NULL, resolver, ice, NULL, NULL};
    cr_expect_eq(kp_aws_launcher_new(&l, &o), KP_EINVALID);
    cr_expect_null(kp_aws_launcher_free(NULL));
}

Test(aws_launch, an_answer_without_placement_is_completed_from_ec2)
{
    cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200, fleet("<item><lifecycle>on-demand</lifecycle><instanceIds><item>i-7</item>"
                      "</instanceIds><instanceType>m5.large</instanceType></item>",
                      ""));
    answer(200, "<DescribeInstancesResponse><reservationSet><item><instancesSet><item>"
                "<instanceId>i-7</instanceId><instanceType>m5.large</instanceType><placement>"
                "<availabilityZone>us-west-2b</availabilityZone></placement><subnetId>subnet-b"
                "</subnetId><tagSet><item><key>team</key><value>a</value></item></tagSet></item>"
                "</instancesSet></item></reservationSet></DescribeInstancesResponse>");
    answer(200, "<CreateTagsResponse><return>true</return></CreateTagsResponse>");
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(the_class(""), claim_allowing("\"on-demand\""), &out));
    cr_expect_str_eq(out.zone, "us-west-2b");
    cr_expect_str_eq(out.subnet_id, "subnet-b");
    cr_expect_str_eq(action(4), "DescribeInstances");
    cr_expect_str_eq(sent(4, "InstanceId.1"), "i-7");
    cr_expect_str_eq(action(5), "CreateTags");
    cr_expect_str_eq(sent(5, "ResourceId.1"), "i-7");
    /* the tags it lacks, not the one it has */
    const char *all = "";
    for (int i = 1; sent(5, fmt("Tag.%d.Key", i)); i++)
        all = fmt("%s %s", all, sent(5, fmt("Tag.%d.Key", i)));
    cr_expect(strstr(all, "karpenter.sh/nodeclaim") != NULL, "%s", all);
    cr_expect(strstr(all, "eks:eks-cluster-name") != NULL, "%s", all);
    cr_expect(strstr(all, " team") == NULL, "%s", all);
}
