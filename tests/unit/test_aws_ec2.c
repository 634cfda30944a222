/*
 * The EC2 client on recorded answers (tests/unit/data/aws/ec2/) served by the
 * in-process double: XML parsing, pagination, CreateFleet's errorSet, EC2
 * error documents, and the form fields sent.
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
static kp_aws_credentials *creds_of_test;

static const char *fx(const char *name)
{
    cr_assert_lt(n_fixtures, 8);
    return fixtures[n_fixtures++] = dbl_fixture(name);
}

/* Serve `script` and make a client for it (fast retries, static keys). */
static void serve(const dbl_response *script, size_t n)
{
    dbl_start(&server, script, n);
    kp_aws_creds creds = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    kp_aws_credentials *cp = NULL;
    cr_assert_eq(kp_aws_credentials_new_static(&cp, &creds), 0);
    kp_aws_client_options o = {.region = "us-west-2", .endpoint_url = server.url,
                               .credentials = cp, .backoff_base_ms = 1, .backoff_max_ms = 5};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0, "%s", kp_error_last());
    creds_of_test = cp; /* borrowed by the client, freed after it */
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
    creds_of_test = kp_aws_credentials_free(creds_of_test);
}

TestSuite(aws_ec2, .fini = teardown);

static bool body_has(size_t req, const char *needle)
{
    return strstr(server.requests[req].body, needle) != NULL;
}

Test(aws_ec2, describe_instance_types_follows_next_token)
{
    dbl_response script[] = {{200, NULL, fx("ec2/describe-instance-types-page1.xml")},
                             {200, NULL, fx("ec2/describe-instance-types-page2.xml")}};
    serve(script, 2);
    const char *arch[] = {"x86_64", "arm64"}, *virt[] = {"hvm"};
    kp_ec2_filter filters[] = {{"supported-virtualization-type", virt, 1},
                               {"processor-info.supported-architecture", arch, 2}};
    kp_ec2_describe_instance_types_input in = {.filters = filters, .n_filters = 2,
                                               .max_results = 100};
    kp_ec2_instance_type_list types;
    cr_assert_eq(kp_ec2_describe_instance_types(client, arena, &in, &types), 0, "%s",
                 kp_error_last());
    dbl_stop(&server);
    cr_assert_eq(types.n, 4);
    cr_expect_str_eq(types.items[0].name, "g5.xlarge");
    cr_expect_str_eq(types.items[3].name, "m6g.metal");
    /* The first page went without a token, the second carried it; both kept the filters. */
    cr_assert_eq(server.n_requests, 2);
    cr_expect(body_has(0, "Action=DescribeInstanceTypes&Version=2016-11-15"));
    cr_expect(!body_has(0, "NextToken"));
    cr_expect(body_has(1, "NextToken=token-page-2"));
    cr_expect(body_has(1, "Filter.2.Name=processor-info.supported-architecture"));
    cr_expect(body_has(1, "Filter.2.Value.2=arm64"));
    cr_expect(body_has(0, "MaxResults=100"));
    char h[512];
    cr_expect(strstr(dbl_header(&server.requests[0], "Authorization", h, sizeof(h)),
                     "Credential=AKIDTEST/") != NULL);
    cr_expect(strstr(h, "/us-west-2/ec2/aws4_request") != NULL, "%s", h);
}

Test(aws_ec2, instance_type_fields)
{
    dbl_response script[] = {{200, NULL, fx("ec2/describe-instance-types-page1.xml")},
                             {200, NULL, fx("ec2/describe-instance-types-page2.xml")}};
    serve(script, 2);
    kp_ec2_instance_type_list types;
    cr_assert_eq(kp_ec2_describe_instance_types(client, arena, NULL, &types), 0);
    const kp_ec2_instance_type *g5 = &types.items[0], *p5 = &types.items[1];
    const kp_ec2_instance_type *inf2 = &types.items[2], *metal = &types.items[3];
    cr_expect_eq(g5->vcpus, 4);
    cr_expect_eq(g5->memory_mib, 16384);
    cr_expect_str_eq(g5->architectures[0], "x86_64");
    cr_expect_eq(g5->n_usage_classes, 2);
    cr_expect_str_eq(g5->usage_classes[1], "spot");
    cr_expect_str_eq(g5->hypervisor, "nitro");
    cr_expect_str_eq(g5->cpu_manufacturer, "AMD");
    cr_expect_float_eq(g5->clock_ghz, 3.3, 1e-9);
    cr_assert_eq(g5->n_gpus, 1);
    cr_expect_str_eq(g5->gpus[0].name, "A10G");
    cr_expect_str_eq(g5->gpus[0].manufacturer, "NVIDIA");
    cr_expect_eq(g5->gpus[0].memory_mib, 24576);
    cr_expect_eq(g5->instance_storage_gb, 250);
    cr_expect_str_eq(g5->instance_storage_nvme, "required");
    cr_expect_str_eq(g5->ebs_optimized_support, "default");
    cr_expect_eq(g5->ebs_max_bandwidth_mbps, 3500);
    cr_expect(g5->encryption_in_transit);
    cr_expect_str_eq(g5->nitro_enclaves_support, "supported");
    cr_expect_eq(g5->ipv4_per_interface, 15);
    /* p5: the default card has 2 ENIs of the 64 in total. */
    cr_expect_eq(p5->max_network_interfaces, 64);
    cr_assert_eq(p5->n_network_cards, 2);
    cr_expect_eq(p5->network_cards[p5->default_network_card_index].max_interfaces, 2);
    cr_expect(p5->efa_supported);
    cr_expect_eq(p5->max_efa_interfaces, 32);
    cr_expect_eq(p5->gpus[0].count, 8);
    cr_expect_eq(p5->n_usage_classes, 3);
    cr_assert_eq(inf2->n_neuron_devices, 1);
    cr_expect_str_eq(inf2->neuron_devices[0].name, "Inferentia2");
    cr_expect_eq(inf2->neuron_devices[0].core_count, 2);
    cr_expect_eq(inf2->n_gpus, 0);
    cr_expect(metal->bare_metal);
    cr_expect_null(metal->hypervisor);
    cr_expect_str_eq(metal->architectures[0], "arm64");
    cr_expect_eq(metal->instance_storage_gb, 0);
}

Test(aws_ec2, create_fleet_surfaces_the_error_set)
{
    dbl_response script[] = {{200, NULL, fx("ec2/create-fleet-partial.xml")}};
    serve(script, 1);
    kp_ec2_fleet_override ovs[] = {
        {"c6i.large", "subnet-0a1", "us-west-2a", NULL, 0.085, true},
        {"m5.large", "subnet-0c3", "us-west-2c", "ami-override", 0, false},
    };
    kp_ec2_fleet_template_config cfg = {NULL, "karpenter.k8s.aws/1234567890", NULL, ovs, 2};
    kp_ec2_tag tags[] = {{"karpenter.sh/nodepool", "default"}};
    kp_ec2_tag_spec specs[] = {{"instance", tags, 1}, {"volume", tags, 1}};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1,
                                    .default_target_capacity_type = "spot",
                                    .spot_allocation_strategy = "price-capacity-optimized",
                                    .tag_specs = specs, .n_tag_specs = 2};
    kp_ec2_fleet_result r;
    cr_assert_eq(kp_ec2_create_fleet(client, arena, &in, &r), 0, "%s", kp_error_last());
    dbl_stop(&server);
    cr_expect_str_eq(r.fleet_id, "fleet-3a7c1e2f-0000-4000-8000-00000000abcd");
    cr_assert_eq(r.n_instances, 1);
    cr_expect_str_eq(r.instances[0].instance_type, "m5.large");
    cr_expect_str_eq(r.instances[0].availability_zone, "us-west-2c");
    cr_expect_str_eq(r.instances[0].lifecycle, "spot");
    cr_assert_eq(r.instances[0].n_instance_ids, 1);
    cr_expect_str_eq(r.instances[0].instance_ids[0], "i-0f1e2d3c4b5a69788");
    cr_assert_eq(r.n_errors, 2);
    cr_expect_str_eq(r.errors[0].code, "InsufficientInstanceCapacity");
    cr_expect_str_eq(r.errors[0].instance_type, "c6i.large");
    cr_expect_str_eq(r.errors[0].availability_zone, "us-west-2a");
    cr_expect_str_eq(r.errors[0].subnet_id, "subnet-0a1");
    cr_expect(strstr(r.errors[0].message, "sufficient c6i.large capacity") != NULL);
    cr_expect_str_eq(r.errors[1].code, "UnfulfillableCapacity");
    cr_expect(kp_aws_code_is_insufficient_capacity(r.errors[0].code));
    cr_expect(kp_aws_code_is_insufficient_capacity(r.errors[1].code));
    /* The form Karpenter's launches need. */
    cr_expect(body_has(0, "Type=instant"));
    cr_expect(body_has(0, "LaunchTemplateConfigs.1.LaunchTemplateSpecification."
                          "LaunchTemplateName=karpenter.k8s.aws%2F1234567890"));
    cr_expect(body_has(0, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version=%24Latest"));
    cr_expect(body_has(0, "LaunchTemplateConfigs.1.Overrides.1.Priority=0.085"));
    cr_expect(body_has(0, "LaunchTemplateConfigs.1.Overrides.2.ImageId=ami-override"));
    cr_expect(!body_has(0, "Overrides.2.Priority"));
    cr_expect(body_has(0, "TargetCapacitySpecification.DefaultTargetCapacityType=spot"));
    cr_expect(body_has(0, "SpotOptions.AllocationStrategy=price-capacity-optimized"));
    cr_expect(body_has(0, "TagSpecification.2.ResourceType=volume"));
    cr_expect(body_has(0, "TagSpecification.1.Tag.1.Key=karpenter.sh%2Fnodepool"));
}

Test(aws_ec2, create_fleet_needs_one_template_reference)
{
    serve(NULL, 0);
    kp_ec2_fleet_template_config cfg = {NULL, NULL, NULL, NULL, 0};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1};
    kp_ec2_fleet_result r;
    cr_expect_eq(kp_ec2_create_fleet(client, arena, &in, &r), KP_EINVALID);
    cr_expect_eq(kp_ec2_delete_launch_template(client, NULL, NULL), KP_EINVALID);
    cr_expect_eq(kp_ec2_terminate_instances(client, arena, NULL, 0, NULL), KP_EINVALID);
}

Test(aws_ec2, describe_instances_pages_and_fields)
{
    dbl_response script[] = {{200, NULL, fx("ec2/describe-instances.xml")},
                             {200, NULL, fx("ec2/describe-instances-page2.xml")}};
    serve(script, 2);
    const char *states[] = {"pending", "running"};
    kp_ec2_filter f = {"instance-state-name", states, 2};
    kp_ec2_instance_list list;
    cr_assert_eq(kp_ec2_describe_instances(client, arena, NULL, 0, &f, 1, &list), 0, "%s",
                 kp_error_last());
    dbl_stop(&server);
    cr_assert_eq(list.n, 3);
    const kp_ec2_instance *a = &list.items[0], *b = &list.items[1];
    cr_expect_str_eq(a->id, "i-0aaa");
    cr_expect_str_eq(a->state, "running");
    cr_expect_str_eq(a->availability_zone, "us-west-2a");
    cr_expect_str_eq(a->private_dns_name, "ip-10-0-1-5.us-west-2.compute.internal");
    cr_expect_str_eq(a->lifecycle, "spot");
    cr_expect_str_eq(kp_ec2_tag_get(a->tags, a->n_tags, "eks:eks-cluster-name"), "prod");
    int64_t want;
    kp_time_parse_rfc3339("2026-11-21T10:00:00Z", &want);
    cr_expect_eq(a->launch_time_ns, want);
    cr_assert_eq(a->n_security_group_ids, 2);
    cr_expect_str_eq(a->security_group_ids[0], "sg-0one");
    cr_expect_str_eq(a->security_group_ids[1], "sg-0two");
    cr_expect_eq(b->n_security_group_ids, 0);
    cr_expect_str_eq(b->state, "shutting-down");
    cr_expect_null(b->lifecycle);
    cr_expect_str_eq(b->capacity_reservation_id, "cr-0123");
    cr_expect_eq(b->n_tags, 0);
    cr_expect_str_eq(list.items[2].id, "i-0ccc");
    cr_expect(body_has(1, "NextToken=instances-page-2"));
    cr_expect(body_has(0, "MaxResults=1000"));
}

Test(aws_ec2, error_document_is_kept)
{
    dbl_response script[] = {{403, NULL, fx("ec2/error-unauthorized.xml")}};
    serve(script, 1);
    kp_ec2_fleet_template_config cfg = {"lt-0123", NULL, "1", NULL, 0};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1};
    kp_ec2_fleet_result r = {.fleet_id = "untouched"};
    cr_expect_eq(kp_ec2_create_fleet(client, arena, &in, &r), KP_EFORBIDDEN);
    cr_expect_str_eq(r.fleet_id, "untouched");
    const kp_aws_error *e = kp_aws_client_error(client);
    cr_expect_eq(e->http_status, 403);
    cr_expect_str_eq(e->code, "UnauthorizedOperation");
    cr_expect(strstr(e->message, "ec2:CreateFleet") != NULL);
    cr_expect_str_eq(e->request_id, "7a62c49f-347e-4fc4-9331-6e8eEXAMPLE");
    cr_expect_eq(e->attempts, 1, "an authorisation failure is not retried");
    cr_expect(strstr(kp_error_last(), "UnauthorizedOperation") != NULL, "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "CreateFleet") != NULL);
}

Test(aws_ec2, dry_run_probe)
{
    dbl_response script[] = {{412, NULL, fx("ec2/error-dry-run.xml")},
                             {403, NULL, fx("ec2/error-unauthorized.xml")}};
    serve(script, 2);
    cr_expect_eq(kp_ec2_dry_run_describe_instance_types(client), 0, "%s", kp_error_last());
    cr_expect_eq(kp_ec2_dry_run_describe_instance_types(client), KP_EFORBIDDEN);
    dbl_stop(&server);
    cr_expect(body_has(0, "DryRun=true"));
}

Test(aws_ec2, malformed_answer)
{
    dbl_response script[] = {{200, NULL, "<DescribeSubnetsResponse><subnetSet>"}};
    serve(script, 1);
    kp_ec2_subnet_list subnets = {.n = 99};
    cr_expect_eq(kp_ec2_describe_subnets(client, arena, NULL, 0, NULL, 0, &subnets), KP_EINVALID);
    cr_expect_eq(subnets.n, 99, "outputs are untouched on failure");
    cr_expect(strstr(kp_error_last(), "DescribeSubnets") != NULL, "%s", kp_error_last());
}

Test(aws_ec2, launch_template_form)
{
    const char *answer = "<CreateLaunchTemplateResponse><launchTemplate>"
                         "<launchTemplateId>lt-0abc</launchTemplateId>"
                         "<launchTemplateName>karpenter.k8s.aws/42</launchTemplateName>"
                         "<defaultVersionNumber>1</defaultVersionNumber>"
                         "<latestVersionNumber>1</latestVersionNumber>"
                         "</launchTemplate></CreateLaunchTemplateResponse>";
    dbl_response script[] = {{200, NULL, answer}};
    serve(script, 1);
    const char *sgs[] = {"sg-1", "sg-2"};
    kp_ec2_block_device bdm = {.device_name = "/dev/xvda", .volume_size_gib = 20,
                               .volume_type = "gp3", .encrypted = true, .kms_key_id = "kms-1",
                               .delete_on_termination = true};
    kp_ec2_lt_network_interface nic = {.interface_type = "efa", .security_group_ids = sgs,
                                       .n_security_group_ids = 2, .associate_public_ip = -1};
    kp_ec2_tag tags[] = {{"karpenter.k8s.aws/cluster", "prod"}};
    kp_ec2_tag_spec spec = {"network-interface", tags, 1};
    kp_ec2_param extra = {"EnclaveOptions.Enabled", "true"};
    kp_ec2_launch_template_data d = {
        .image_id = "ami-1", .user_data = "IyEvYmluL2Jhc2g=", .iam_instance_profile_name = "prof",
        .block_devices = &bdm, .n_block_devices = 1, .network_interfaces = &nic,
        .n_network_interfaces = 1, .monitoring = true,
        .metadata = {"enabled", "required", "disabled", "disabled", 1},
        .tag_specs = &spec, .n_tag_specs = 1, .placement_tenancy = "default",
        .capacity_reservation_preference = "none", .extra = &extra, .n_extra = 1};
    kp_ec2_launch_template lt;
    cr_assert_eq(kp_ec2_create_launch_template(client, arena, "karpenter.k8s.aws/42", &d, tags, 1,
                                               &lt),
                 0, "%s", kp_error_last());
    dbl_stop(&server);
    cr_expect_str_eq(lt.id, "lt-0abc");
    static const char *const want[] = {
        "LaunchTemplateName=karpenter.k8s.aws%2F42",
        "LaunchTemplateData.ImageId=ami-1",
        "LaunchTemplateData.UserData=IyEvYmluL2Jhc2g%3D",
        "LaunchTemplateData.IamInstanceProfile.Name=prof",
        "LaunchTemplateData.BlockDeviceMapping.1.DeviceName=%2Fdev%2Fxvda",
        "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize=20",
        "LaunchTemplateData.BlockDeviceMapping.1.Ebs.Encrypted=true",
        "LaunchTemplateData.BlockDeviceMapping.1.Ebs.KmsKeyId=kms-1",
        "LaunchTemplateData.NetworkInterface.1.InterfaceType=efa",
        "LaunchTemplateData.NetworkInterface.1.SecurityGroupId.2=sg-2",
        "LaunchTemplateData.Monitoring.Enabled=true",
        "LaunchTemplateData.MetadataOptions.HttpTokens=required",
        "LaunchTemplateData.MetadataOptions.HttpPutResponseHopLimit=1",
        "LaunchTemplateData.TagSpecification.1.ResourceType=network-interface",
        "LaunchTemplateData.Placement.Tenancy=default",
        "LaunchTemplateData.CapacityReservationSpecification.CapacityReservationPreference=none",
        "LaunchTemplateData.EnclaveOptions.Enabled=true",
        "TagSpecification.1.ResourceType=launch-template",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(body_has(0, want[i]), "missing %s", want[i]);
    cr_expect(!body_has(0, "AssociatePublicIpAddress"));
    cr_expect(!body_has(0, "Ebs.Iops"));
}
