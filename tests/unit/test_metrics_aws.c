/*
 * The AWS provider's share of Karpenter's cloud provider metrics: every
 * CreateFleet error counts karpenter_cloudprovider_instance_launch_failures_total
 * with its zone, the zone's ID (from the class's subnets), the capacity
 * type and Karpenter's reason for the error code.
 */
#include "cloud/aws/launch.h"
#include "test_aws_provider_fixture.h"

static kp_catalog *cat;
static kp_aws_ice_cache *ice;
static kp_aws_nc_resolver *resolver;
static kp_aws_lts *lts;
static kp_aws_launcher *launcher;
static kp_metrics *registry;
static kp_metric *failures;

static void setup(void)
{
    fx_init();
    cat = kp_catalog_new("test");
    ice = kp_aws_ice_cache_new(&fx.clock.base);
    kp_aws_nc_resolver_opts ro = {.region = "us-west-2", .cluster_name = "c1", .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&resolver, &ro), 0);
    kp_aws_lt_opts lo = {.cluster_name = "c1",
                         .cluster_endpoint = "https://api",
                         .cluster_cidr = "10.100.0.0/16",
                         .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_lts_new(&lts, &lo), 0);
    kp_aws_launcher_opts o = {"c1", lts, resolver, ice, &fx.clock.base, NULL};
    cr_assert_eq(kp_aws_launcher_new(&launcher, &o), 0);
    registry = kp_metrics_new();
    const char *labels[] = {"zone", "zone_id", "capacity_type", "reason"};
    cr_assert_eq(kp_metrics_counter(&failures, registry, "karpenter_cloudprovider_instance_launch_failures_total",
                                    "", labels, 4),
                 0);
    kp_aws_launcher_count_failures(launcher, failures);
}

static void teardown(void)
{
    launcher = kp_aws_launcher_free(launcher);
    lts = kp_aws_lts_free(lts);
    resolver = kp_aws_nc_resolver_free(resolver);
    cat = kp_catalog_free(cat);
    ice = kp_aws_ice_cache_free(ice);
    registry = kp_metrics_free(registry);
    fx_fini();
}

TestSuite(metrics_aws, .init = setup, .fini = teardown);

static double count(const char *zone, const char *zone_id, const char *ct, const char *reason)
{
    const char *v[] = {zone, zone_id, ct, reason};
    return kp_metric_series_value(kp_metric_with(failures, v));
}

Test(metrics_aws, each_fleet_error_is_one_launch_failure)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    answer(200, subnets(fmt("%s%s", subnet("subnet-a", "us-west-2a", "usw2-az1", 10),
                            subnet("subnet-b", "us-west-2b", "usw2-az2", 50))));
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-1</launchTemplateId>"
                "<launchTemplateName>x</launchTemplateName></launchTemplate></CreateLaunchTemplateResponse>");
    answer(200, fleet("", fmt("%s%s", fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a", "subnet-a"),
                              fleet_error("MaxSpotInstanceCountExceeded", "m5.large", "us-west-2b", "subnet-b"))));
    start();
    const kp_ec2nodeclass *nc = nodeclass(
        "{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":{\"amiFamily\":\"AL2023\","
        "\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}]},\"status\":{\"instanceProfile\":\"prof\","
        "\"securityGroups\":[{\"id\":\"sg-1\"}],\"subnets\":[{\"id\":\"subnet-a\",\"zone\":\"us-west-2a\"},"
        "{\"id\":\"subnet-b\",\"zone\":\"us-west-2b\"}],\"amis\":[{\"id\":\"ami-x86\",\"requirements\":[{\"key\":"
        "\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"amd64\"]}]}]}}");
    const kp_nodeclaim *claim = nodeclaim(
        "{\"metadata\":{\"name\":\"claim-1\",\"labels\":{\"karpenter.sh/nodepool\":\"pool\"}},\"spec\":{"
        "\"requirements\":[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"spot\"]}]}}");
    kp_aws_nc_clients cl = {fx.ec2, fx.ssm, fx.iam};
    kp_aws_launched out;
    cr_expect_lt(kp_aws_launch(launcher, &cl, nc, claim, cat, fx.arena, &out), 0, "nothing launched");
    cr_expect_eq(count("us-west-2a", "usw2-az1", "spot", "LaunchFailed"), 1, "capacity errors are Karpenter's default");
    cr_expect_eq(count("us-west-2b", "usw2-az2", "spot", "SpotQuotaExceeded"), 1);
    cr_expect_eq(kp_metric_series_count(failures), 2);
}

Test(metrics_aws, karpenter_reasons_for_error_codes)
{
    static const struct {
        const char *code, *message, *reason;
    } cases[] = {
        {"AuthFailure.ServiceLinkedRoleCreationNotPermitted", "", "SpotSLRCreationFailed"},
        {"UnauthorizedOperation", "You are not authorized", "Unauthorized"},
        {"AuthFailure", "Not authorized for images: [ami-1]", "AMIAuthorizationFailure"},
        {"InvalidParameter", "Security group sg-1 and subnet subnet-1 belong to different networks.",
         "SecurityGroupSubnetVPCMismatch"},
        {"InvalidLaunchTemplateId.NotFound", "", "LaunchTemplateNotFound"},
        {"InvalidAMIID.NotFound", "", "AMINotFound"},
        {"RequestLimitExceeded", "", "RequestLimitExceeded"},
        {"MaxFleetCountExceeded", "", "FleetQuotaExceeded"},
        {"VcpuLimitExceeded", "", "VCPULimitExceeded"},
        {"InsufficientFreeAddressesInSubnet", "", "InsufficientFreeAddressesInSubnet"},
        {"InsufficientInstanceCapacity", "", "LaunchFailed"},
        {NULL, NULL, "LaunchFailed"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_str_eq(kp_aws_launch_failure_reason(cases[i].code, cases[i].message), cases[i].reason, "%s",
                         cases[i].code ? cases[i].code : "(null)");
}
