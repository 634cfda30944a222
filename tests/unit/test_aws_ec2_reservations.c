/*
 * The EC2 calls moto does not have, on the in-process double with AWS's
 * documented answers (tests/unit/data/aws/ec2/): DescribeCapacityReservations,
 * DescribePlacementGroups, DescribeInstanceStatus, RunInstances and
 * CreateFleet dry runs; and the launch-template and CreateFleet form fields
 * of reserved launches, EFA interfaces, IPv6, prefixes, volume
 * initialization, nested virtualization and enclaves (golden form fields).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/ec2.h"
#include "test_aws_double.h"

static kp_aws_client *client;
static kp_arena *arena;
static dbl_server server;
static char *fixtures[8];
static size_t n_fixtures;
static kp_aws_credentials *creds;

static const char *fx(const char *name)
{
    cr_assert_lt(n_fixtures, 8);
    return fixtures[n_fixtures++] = dbl_fixture(name);
}

static void serve(const dbl_response *script, size_t n)
{
    dbl_start(&server, script, n);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
    kp_aws_client_options o = {.region = "us-west-2", .endpoint_url = server.url,
                               .credentials = creds, .max_attempts = 1};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0, "%s", kp_error_last());
    arena = kp_arena_new();
}

static void teardown(void)
{
    client = kp_aws_client_free(client);
    arena = kp_arena_free(arena);
    dbl_free(&server);
    for (size_t i = 0; i < n_fixtures; i++)
        free(fixtures[i]);
    n_fixtures = 0;
    creds = kp_aws_credentials_free(creds);
}

TestSuite(aws_ec2_reservations, .fini = teardown);

static bool body_has(size_t req, const char *needle)
{
    return strstr(server.requests[req].body, needle) != NULL;
}

Test(aws_ec2_reservations, describe_capacity_reservation_by_filters)
{
    dbl_response script[] = {{200, NULL, fx("ec2/describe-capacity-reservations.xml")}};
    serve(script, 1);
    const char *active[] = {"active"}, *crit[] = {"targeted"};
    kp_ec2_filter f[] = {{"state", active, 1}, {"instance-match-criteria", crit, 1}};
    kp_ec2_capacity_reservation_list l = {0};
    cr_assert_eq(kp_ec2_describe_capacity_reservations(client, arena, NULL, 0, f, 2, &l), 0, "%s",
                 kp_error_last());
    dbl_stop(&server);
    cr_assert_eq(l.n, 2);
    const kp_ec2_capacity_reservation *r = &l.items[0];
    cr_expect_str_eq(r->id, "cr-1234abcd56EXAMPLE");
    cr_expect_str_eq(r->owner_id, "123456789012");
    cr_expect_str_eq(r->availability_zone, "us-west-2a");
    cr_expect_str_eq(r->availability_zone_id, "usw2-az1");
    cr_expect_str_eq(r->instance_type, "m5.large");
    cr_expect_str_eq(r->instance_match_criteria, "targeted");
    cr_expect_str_eq(r->reservation_type, "default");
    cr_expect_eq(r->total_instance_count, 4);
    cr_expect_eq(r->available_instance_count, 3);
    cr_expect_eq(r->end_date_ns, 0, "unlimited");
    cr_expect_eq(r->n_tags, 1);
    cr_expect_str_eq(l.items[1].reservation_type, "capacity-block");
    cr_expect_eq(l.items[1].end_date_ns, INT64_C(1767353400) * 1000000000);
    cr_expect(body_has(0, "Action=DescribeCapacityReservations"));
    cr_expect(body_has(0, "Filter.1.Name=state&Filter.1.Value.1=active"));
    cr_expect(body_has(0, "Filter.2.Name=instance-match-criteria"));
    cr_expect(body_has(0, "MaxResults=1000"));
}

Test(aws_ec2_reservations, describe_capacity_reservation_by_id_not_found)
{
    dbl_response script[] = {
        {200, NULL, fx("ec2/describe-capacity-reservations.xml")},
        {400, NULL,
         "<Response><Errors><Error><Code>InvalidCapacityReservationId.NotFound</Code><Message>"
         "The capacity reservation ID 'cr-0000' does not exist</Message></Error></Errors>"
         "<RequestID>r</RequestID></Response>"},
        {400, NULL,
         "<Response><Errors><Error><Code>InvalidCapacityReservationId.Malformed</Code><Message>"
         "Invalid id: \"x\"</Message></Error></Errors><RequestID>r</RequestID></Response>"}};
    serve(script, 3);
    const char *ids[] = {"cr-1234abcd56EXAMPLE"};
    kp_ec2_capacity_reservation_list l = {0};
    cr_assert_eq(kp_ec2_describe_capacity_reservations(client, arena, ids, 1, NULL, 0, &l), 0);
    cr_expect_eq(kp_ec2_describe_capacity_reservations(client, arena, ids, 1, NULL, 0, &l),
                 KP_ENOTFOUND);
    cr_expect_eq(kp_ec2_describe_capacity_reservations(client, arena, ids, 1, NULL, 0, &l),
                 KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "InvalidCapacityReservationId.Malformed") != NULL);
    dbl_stop(&server);
    cr_expect(body_has(0, "CapacityReservationId.1=cr-1234abcd56EXAMPLE"));
    cr_expect(!body_has(0, "MaxResults"), "EC2 refuses MaxResults with ids");
}

Test(aws_ec2_reservations, describe_placement_group_by_name_and_id)
{
    dbl_response script[] = {
        {200, NULL, fx("ec2/describe-placement-groups.xml")},
        {400, NULL,
         "<Response><Errors><Error><Code>InvalidPlacementGroup.Unknown</Code><Message>The "
         "Placement Group 'nope' is unknown.</Message></Error></Errors><RequestID>r</RequestID>"
         "</Response>"}};
    serve(script, 2);
    const char *avail[] = {"available"};
    kp_ec2_filter f = {"state", avail, 1};
    kp_ec2_placement_group_list l = {0};
    cr_assert_eq(kp_ec2_describe_placement_groups(client, arena, NULL, "training", &f, 1, &l), 0);
    cr_assert_eq(l.n, 1);
    cr_expect_str_eq(l.items[0].id, "pg-0123456789abcdef0");
    cr_expect_str_eq(l.items[0].strategy, "cluster");
    cr_expect_str_eq(l.items[0].state, "available");
    cr_expect_eq(kp_ec2_describe_placement_groups(client, arena, "pg-1", NULL, &f, 1, &l),
                 KP_EINVALID);
    cr_expect_str_eq(kp_aws_client_error(client)->code, "InvalidPlacementGroup.Unknown");
    dbl_stop(&server);
    cr_expect(body_has(0, "GroupName.1=training"));
    cr_expect(body_has(0, "Filter.1.Name=state&Filter.1.Value.1=available"));
    cr_expect(body_has(1, "GroupId.1=pg-1"));
}

Test(aws_ec2_reservations, describe_instance_status_health_and_events)
{
    dbl_response script[] = {{200, NULL, fx("ec2/describe-instance-status.xml")}};
    serve(script, 1);
    const char *impaired[] = {"impaired"};
    kp_ec2_filter f = {"system-status.status", impaired, 1};
    kp_ec2_instance_status_list l = {0};
    cr_assert_eq(kp_ec2_describe_instance_status(client, arena, &f, 1, &l), 0, "%s",
                 kp_error_last());
    dbl_stop(&server);
    cr_assert_eq(l.n, 2);
    cr_expect_str_eq(l.items[0].instance_id, "i-1234567890abcdef0");
    cr_expect_str_eq(l.items[0].system_status, "impaired");
    cr_expect_str_eq(l.items[0].instance_status, "impaired");
    cr_expect_eq(l.items[0].impaired_since_ns, INT64_C(1767225000) * 1000000000, "the earlier");
    cr_expect_eq(l.items[0].n_events, 0);
    cr_expect_eq(l.items[1].impaired_since_ns, 0);
    cr_assert_eq(l.items[1].n_events, 1);
    cr_expect_str_eq(l.items[1].events[0].code, "instance-retirement");
    cr_expect(body_has(0, "IncludeAllInstances=true"));
    cr_expect(body_has(0, "Filter.1.Name=system-status.status"));
}

Test(aws_ec2_reservations, dry_run_run_instances_and_create_fleet)
{
    const char *dry = fx("ec2/error-dry-run.xml"), *denied = fx("ec2/error-unauthorized.xml");
    dbl_response script[] = {{412, NULL, dry}, {403, NULL, denied}, {412, NULL, dry},
                             {403, NULL, denied}};
    serve(script, 4);
    kp_ec2_tag tags[] = {{"eks:eks-cluster-name", "c1"}};
    kp_ec2_lt_network_interface nis[] = {{.interface_type = "interface"},
                                         {.network_card_index = 1, .device_index = 1,
                                          .interface_type = "efa-only"}};
    kp_ec2_run_instances_dry_run run = {"karpenter.k8s.aws/1", "m5.large", "subnet-a", NULL, 0,
                                        tags, 1};
    cr_expect_eq(kp_ec2_dry_run_run_instances(client, &run), 0, "%s", kp_error_last());
    run.interfaces = nis, run.n_interfaces = 2;
    cr_expect_eq(kp_ec2_dry_run_run_instances(client, &run), KP_EFORBIDDEN);
    cr_expect_str_eq(kp_aws_client_error(client)->code, "UnauthorizedOperation");
    cr_expect(strstr(kp_aws_client_error(client)->message, "ec2:CreateFleet") != NULL);
    kp_ec2_fleet_override ov = {"m5.large", "subnet-a", NULL, NULL, 0, false};
    kp_ec2_fleet_template_config cfg = {NULL, "karpenter.k8s.aws/1", "$Latest", &ov, 1};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1,
                                    .default_target_capacity_type = "on-demand"};
    cr_expect_eq(kp_ec2_dry_run_create_fleet(client, &in), 0, "%s", kp_error_last());
    cr_expect_eq(kp_ec2_dry_run_create_fleet(client, &in), KP_EFORBIDDEN);
    dbl_stop(&server);
    cr_expect(body_has(0, "Action=RunInstances"));
    cr_expect(body_has(0, "DryRun=true"));
    cr_expect(body_has(0, "LaunchTemplate.LaunchTemplateName=karpenter.k8s.aws%2F1"));
    cr_expect(body_has(0, "LaunchTemplate.Version=%24Latest"));
    cr_expect(body_has(0, "SubnetId=subnet-a"));
    cr_expect(body_has(0, "TagSpecification.3.ResourceType=network-interface"));
    cr_expect(body_has(1, "NetworkInterface.2.SubnetId=subnet-a"));
    cr_expect(body_has(1, "NetworkInterface.2.InterfaceType=efa-only"));
    cr_expect(body_has(1, "NetworkInterface.2.NetworkCardIndex=1"));
    cr_expect(body_has(2, "Action=CreateFleet"));
    cr_expect(body_has(2, "DryRun=true"));
}

/* Golden: every new launch-template field as EC2's form names it. */
Test(aws_ec2_reservations, launch_template_golden_efa_ipv6_ip_prefix_volume_initialization)
{
    dbl_response script[] = {{200, NULL,
                              "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>"
                              "lt-1</launchTemplateId></launchTemplate>"
                              "</CreateLaunchTemplateResponse>"}};
    serve(script, 1);
    const char *sgs[] = {"sg-1"};
    kp_ec2_block_device bdm = {.device_name = "/dev/xvdb", .volume_type = "gp3",
                               .snapshot_id = "snap-1", .volume_initialization_rate = 200};
    kp_ec2_lt_network_interface nis[] = {
        {.interface_type = "interface", .security_group_ids = sgs, .n_security_group_ids = 1,
         .associate_public_ip = -1, .has_ipv6_prefix_count = true, .ipv6_prefix_count = 2,
         .primary_ipv6 = true, .ipv6_address_count = 1, .tcp_established_timeout = 3600,
         .udp_timeout = 30},
        {.network_card_index = 1, .device_index = 1, .interface_type = "efa-only",
         .security_group_ids = sgs, .n_security_group_ids = 1, .associate_public_ip = -1}};
    kp_ec2_launch_template_data d = {
        .image_id = "ami-1", .block_devices = &bdm, .n_block_devices = 1,
        .network_interfaces = nis, .n_network_interfaces = 2, .placement_tenancy = "default",
        .placement_group_id = "pg-0123456789abcdef0",
        .capacity_reservation_preference = "capacity-reservations-only",
        .capacity_reservation_id = "cr-1", .market_type = "capacity-block",
        .nested_virtualization = "enabled", .enclave = 1};
    kp_ec2_launch_template lt;
    cr_assert_eq(kp_ec2_create_launch_template(client, arena, "n", &d, NULL, 0, &lt), 0, "%s",
                 kp_error_last());
    dbl_stop(&server);
#define LTD "LaunchTemplateData."
    static const char *const want[] = {
        LTD "BlockDeviceMapping.1.Ebs.SnapshotId=snap-1",
        LTD "BlockDeviceMapping.1.Ebs.VolumeInitializationRate=200",
        LTD "NetworkInterface.1.Ipv6PrefixCount=2",
        LTD "NetworkInterface.1.PrimaryIpv6=true",
        LTD "NetworkInterface.1.Ipv6AddressCount=1",
        LTD "NetworkInterface.1.ConnectionTrackingSpecification.TcpEstablishedTimeout=3600",
        LTD "NetworkInterface.1.ConnectionTrackingSpecification.UdpTimeout=30",
        LTD "NetworkInterface.2.NetworkCardIndex=1",
        LTD "NetworkInterface.2.DeviceIndex=1",
        LTD "NetworkInterface.2.InterfaceType=efa-only",
        LTD "Placement.GroupId=pg-0123456789abcdef0",
        LTD "CapacityReservationSpecification.CapacityReservationPreference="
            "capacity-reservations-only",
        LTD "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId="
            "cr-1",
        LTD "InstanceMarketOptions.MarketType=capacity-block",
        LTD "CpuOptions.NestedVirtualization=enabled",
        LTD "EnclaveOptions.Enabled=true",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(body_has(0, want[i]), "missing %s", want[i]);
    cr_expect(!body_has(0, "Ipv4PrefixCount"), "no IPv4 prefixes were asked for");
    cr_expect(!body_has(0, "NetworkInterface.2.PrimaryIpv6"));
    cr_expect(!body_has(0, "UdpStreamTimeout"));
#undef LTD
}

Test(aws_ec2_reservations, create_fleet_interruptible_capacity_reservation_form)
{
    dbl_response script[] = {{200, NULL, "<CreateFleetResponse><fleetId>f</fleetId>"
                                         "</CreateFleetResponse>"}};
    serve(script, 1);
    kp_ec2_fleet_override ov = {"m5.large", "subnet-a", "us-west-2a", "ami-1", 1e-8, true};
    kp_ec2_fleet_template_config cfg = {NULL, "lt", NULL, &ov, 1};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1,
                                    .default_target_capacity_type = "reserved-capacity",
                                    .reserved_capacity_type =
                                        "interruptible-capacity-reservation"};
    kp_ec2_fleet_result r;
    cr_assert_eq(kp_ec2_create_fleet(client, arena, &in, &r), 0, "%s", kp_error_last());
    dbl_stop(&server);
    cr_expect(body_has(0, "TargetCapacitySpecification.DefaultTargetCapacityType="
                          "reserved-capacity"));
    cr_expect(body_has(0, "ReservedCapacityOptions.ReservationType.1="
                          "interruptible-capacity-reservation"));
    cr_expect(!body_has(0, "OnDemandOptions"));
}
