/*
 * The EC2 and SQS clients against moto's server, a real AWS emulator.
 *
 * tests/integration/test_aws_moto.sh installs and starts moto and runs this
 * program with KP_AWS_MOTO_URL set. Run on its own (as the unit tier does),
 * the program installs (when root) and starts moto itself through
 * scripts/moto-server.sh, and fails loudly if it cannot: it never skips.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "cloud/aws/ec2.h"
#include "cloud/aws/sqs.h"


#define MOTO_PROGRAM "test_aws_moto"
#include "moto_hooks.h"

static kp_aws_client *client;
static kp_arena *arena;

static void connect_moto(void)
{
    const char *url = getenv("KP_AWS_MOTO_URL");
    cr_assert_not_null(url, "KP_AWS_MOTO_URL is not set and moto was not started");
    /* moto accepts any key; the signature path is exercised all the same. */
    setenv("AWS_ACCESS_KEY_ID", "AKIDMOTOTEST", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "moto-secret", 1);
    unsetenv("AWS_SESSION_TOKEN");
    kp_aws_client_options o = {.region = "us-east-1", .endpoint_url = url, .max_attempts = 2,
                               .backoff_base_ms = 10, .timeout_ms = 30000};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0, "%s", kp_error_last());
    arena = kp_arena_new();
}

static void disconnect(void)
{
    client = kp_aws_client_free(client);
    arena = kp_arena_free(arena);
}

TestSuite(aws_moto, .init = connect_moto, .fini = disconnect, .timeout = 120);

/* Unique names: moto's state lives as long as the server. */
static const char *unique(const char *prefix)
{
    return kp_arena_printf(arena, "%s-%d-%ld", prefix, (int)getpid(), (long)time(NULL));
}

static kp_ec2_subnet_list default_subnets(void)
{
    const char *yes[] = {"true"};
    kp_ec2_filter f = {"default-for-az", yes, 1};
    kp_ec2_subnet_list subnets;
    cr_assert_eq(kp_ec2_describe_subnets(client, arena, NULL, 0, &f, 1, &subnets), 0, "%s",
                 kp_error_last());
    cr_assert_gt(subnets.n, 0, "moto's default VPC has subnets");
    return subnets;
}

Test(aws_moto, describe_subnets_of_the_default_vpc)
{
    kp_ec2_subnet_list subnets = default_subnets();
    for (size_t i = 0; i < subnets.n; i++) {
        kp_ec2_subnet *s = &subnets.items[i];
        cr_expect(strncmp(s->id, "subnet-", 7) == 0, "%s", s->id);
        cr_expect(s->default_for_az);
        cr_expect(strncmp(s->availability_zone, "us-east-1", 9) == 0);
        cr_expect_not_null(s->availability_zone_id);
        cr_expect_gt(s->available_ip_count, 0);
        cr_expect_str_eq(s->vpc_id, subnets.items[0].vpc_id);
    }
    kp_ec2_availability_zone_list zones;
    cr_assert_eq(kp_ec2_describe_availability_zones(client, arena, NULL, 0, &zones), 0);
    cr_expect_geq(zones.n, subnets.n);
}

Test(aws_moto, instance_types_and_offerings)
{
    const char *names[] = {"m5.large", "m6g.xlarge"};
    kp_ec2_describe_instance_types_input in = {.instance_types = names, .n_instance_types = 2};
    kp_ec2_instance_type_list types;
    cr_assert_eq(kp_ec2_describe_instance_types(client, arena, &in, &types), 0, "%s",
                 kp_error_last());
    cr_assert_eq(types.n, 2);
    for (size_t i = 0; i < types.n; i++) {
        kp_ec2_instance_type *t = &types.items[i];
        bool arm = strcmp(t->name, "m6g.xlarge") == 0;
        cr_expect_eq(t->vcpus, arm ? 4 : 2, "%s", t->name);
        cr_expect_eq(t->memory_mib, arm ? 16384 : 8192, "%s", t->name);
        cr_expect_str_eq(t->architectures[0], arm ? "arm64" : "x86_64");
        cr_expect_gt(t->max_network_interfaces, 0);
    }
    const char *type[] = {"m5.large"};
    kp_ec2_filter f = {"instance-type", type, 1};
    kp_ec2_offering_list offers;
    cr_assert_eq(kp_ec2_describe_instance_type_offerings(client, arena, NULL, &f, 1, &offers), 0,
                 "%s", kp_error_last());
    cr_expect_gt(offers.n, 0);
    for (size_t i = 0; i < offers.n; i++)
        cr_expect_str_eq(offers.items[i].instance_type, "m5.large");
}

static const char *an_image(void)
{
    const char *owners[] = {"amazon"};
    kp_ec2_describe_images_input in = {.owners = owners, .n_owners = 1};
    kp_ec2_image_list images;
    cr_assert_eq(kp_ec2_describe_images(client, arena, &in, &images), 0, "%s", kp_error_last());
    for (size_t i = 0; i < images.n; i++)
        if (images.items[i].architecture && strcmp(images.items[i].architecture, "x86_64") == 0)
            return images.items[i].id;
    cr_assert_fail("moto has no x86_64 image");
    return NULL;
}

Test(aws_moto, launch_template_lifecycle)
{
    const char *name = unique("kp-lt");
    kp_ec2_block_device bdm = {"/dev/xvda", 20, "gp3", 3000, 125, true, NULL, NULL, true, 0};
    kp_ec2_launch_template_data data = {.image_id = an_image(), .block_devices = &bdm,
                                        .n_block_devices = 1,
                                        .metadata = {"enabled", "required", "disabled", NULL, 1}};
    kp_ec2_tag tags[] = {{"karpenter.k8s.aws/ec2nodeclass", "default"}};
    kp_ec2_launch_template lt;
    cr_assert_eq(kp_ec2_create_launch_template(client, arena, name, &data, tags, 1, &lt), 0, "%s",
                 kp_error_last());
    cr_expect(strncmp(lt.id, "lt-", 3) == 0, "%s", lt.id);
    cr_expect_str_eq(lt.name, name);
    cr_expect_eq(lt.latest_version, 1);

    kp_ec2_launch_template_list found;
    cr_assert_eq(kp_ec2_describe_launch_templates(client, arena, &name, 1, NULL, 0, &found), 0);
    cr_assert_eq(found.n, 1);
    cr_expect_str_eq(found.items[0].id, lt.id);
    cr_expect_str_eq(kp_ec2_tag_get(found.items[0].tags, found.items[0].n_tags,
                                    "karpenter.k8s.aws/ec2nodeclass"),
                     "default");

    cr_assert_eq(kp_ec2_delete_launch_template(client, NULL, name), 0, "%s", kp_error_last());
    int err = kp_ec2_describe_launch_templates(client, arena, &name, 1, NULL, 0, &found);
    cr_expect_eq(err, KP_ENOTFOUND, "%s", kp_error_last());
    cr_expect_str_eq(kp_aws_client_error(client)->code,
                     "InvalidLaunchTemplateName.NotFoundException");
}

/* CreateFleet (instant) -> DescribeInstances by tag -> CreateTags -> TerminateInstances. */
Test(aws_moto, fleet_instances_tags_terminate)
{
    kp_ec2_subnet_list subnets = default_subnets();
    const char *claim = unique("claim");
    kp_ec2_tag tags[] = {{"karpenter.sh/nodepool", "default"}, {"karpenter.sh/nodeclaim", claim}};
    kp_ec2_tag_spec spec = {"instance", tags, 2};
    /* moto applies only the launch template's instance tags to fleet instances,
     * not CreateFleet's own TagSpecification (AWS applies both), so the tags go
     * in both places. */
    const char *lt_name = unique("kp-fleet-lt");
    kp_ec2_launch_template_data data = {.image_id = an_image(), .tag_specs = &spec,
                                        .n_tag_specs = 1};
    kp_ec2_launch_template lt;
    cr_assert_eq(kp_ec2_create_launch_template(client, arena, lt_name, &data, NULL, 0, &lt), 0,
                 "%s", kp_error_last());
    kp_ec2_fleet_override ov = {"m5.large", subnets.items[0].id, subnets.items[0].availability_zone,
                                NULL, 0.096, true};
    kp_ec2_fleet_template_config cfg = {NULL, lt_name, NULL, &ov, 1};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1,
                                    .default_target_capacity_type = "on-demand",
                                    .on_demand_allocation_strategy = "lowest-price",
                                    .tag_specs = &spec, .n_tag_specs = 1};
    kp_ec2_fleet_result fleet;
    cr_assert_eq(kp_ec2_create_fleet(client, arena, &in, &fleet), 0, "%s", kp_error_last());
    cr_expect(strncmp(fleet.fleet_id, "fleet-", 6) == 0, "%s", fleet.fleet_id);
    cr_assert_eq(fleet.n_instances, 1, "errors: %zu", fleet.n_errors);
    cr_assert_eq(fleet.instances[0].n_instance_ids, 1);
    const char *id = fleet.instances[0].instance_ids[0];
    cr_expect(strncmp(id, "i-", 2) == 0, "%s", id);

    const char *claim_v[] = {claim};
    kp_ec2_filter by_tag = {"tag:karpenter.sh/nodeclaim", claim_v, 1};
    kp_ec2_instance_list found;
    cr_assert_eq(kp_ec2_describe_instances(client, arena, NULL, 0, &by_tag, 1, &found), 0, "%s",
                 kp_error_last());
    cr_assert_eq(found.n, 1);
    cr_expect_str_eq(found.items[0].id, id);
    cr_expect_str_eq(found.items[0].instance_type, "m5.large");
    cr_expect_str_eq(found.items[0].subnet_id, subnets.items[0].id);
    cr_expect_gt(found.items[0].launch_time_ns, 0);

    kp_ec2_tag name_tag[] = {{"Name", "ip-10-0-0-1.ec2.internal"}};
    cr_assert_eq(kp_ec2_create_tags(client, &id, 1, name_tag, 1), 0, "%s", kp_error_last());
    cr_assert_eq(kp_ec2_describe_instances(client, arena, &id, 1, NULL, 0, &found), 0);
    cr_assert_eq(found.n, 1);
    cr_expect_str_eq(kp_ec2_tag_get(found.items[0].tags, found.items[0].n_tags, "Name"),
                     "ip-10-0-0-1.ec2.internal");

    kp_ec2_state_change_list changes;
    cr_assert_eq(kp_ec2_terminate_instances(client, arena, &id, 1, &changes), 0, "%s",
                 kp_error_last());
    cr_assert_eq(changes.n, 1);
    cr_expect_str_eq(changes.items[0].instance_id, id);
    cr_expect(strcmp(changes.items[0].current_state, "shutting-down") == 0 ||
                  strcmp(changes.items[0].current_state, "terminated") == 0,
              "%s", changes.items[0].current_state);
    kp_ec2_delete_launch_template(client, lt.id, NULL);
}

Test(aws_moto, unknown_instance_is_not_found)
{
    const char *id = "i-0123456789abcdef0";
    kp_ec2_instance_list found;
    int err = kp_ec2_describe_instances(client, arena, &id, 1, NULL, 0, &found);
    cr_expect_eq(err, KP_ENOTFOUND, "%s", kp_error_last());
    cr_expect_str_eq(kp_aws_client_error(client)->code, "InvalidInstanceID.NotFound");
    cr_expect_eq(kp_aws_client_error(client)->http_status, 400);
}

Test(aws_moto, spot_price_history)
{
    const char *types[] = {"m5.large"};
    const char *products[] = {"Linux/UNIX", "Linux/UNIX (Amazon VPC)"};
    kp_ec2_spot_price_input in = {types, 1, products, 2, 0, NULL, 0, 1000};
    kp_ec2_spot_price_list prices;
    cr_assert_eq(kp_ec2_describe_spot_price_history(client, arena, &in, &prices), 0, "%s",
                 kp_error_last());
    for (size_t i = 0; i < prices.n; i++) {
        cr_expect_str_eq(prices.items[i].instance_type, "m5.large");
        cr_expect_gt(prices.items[i].price_usd, 0);
    }
}

Test(aws_moto, sqs_round_trip)
{
    const char *name = unique("kp-interruption");
    const char *url = NULL, *looked_up = NULL, *msg_id = NULL;
    cr_assert_eq(kp_sqs_create_queue(client, arena, name, &url), 0, "%s", kp_error_last());
    cr_assert_eq(kp_sqs_get_queue_url(client, arena, name, &looked_up), 0, "%s", kp_error_last());
    cr_expect_str_eq(looked_up, url);
    const char *event = "{\"version\":\"0\",\"source\":\"aws.ec2\",\"detail-type\":"
                        "\"EC2 Spot Instance Interruption Warning\"}";
    cr_assert_eq(kp_sqs_send_message(client, arena, url, event, &msg_id), 0, "%s",
                 kp_error_last());
    const char *attrs[] = {"SentTimestamp"}, *all[] = {"All"};
    kp_sqs_receive_input in = {url, 10, 20, 1, attrs, 1, all, 1};
    kp_sqs_message_list got;
    cr_assert_eq(kp_sqs_receive_message(client, arena, &in, &got), 0, "%s", kp_error_last());
    cr_assert_eq(got.n, 1);
    cr_expect_str_eq(got.items[0].message_id, msg_id);
    cr_expect_str_eq(got.items[0].body, event);
    cr_expect_gt(got.items[0].sent_timestamp_ms, 0);
    cr_assert_eq(kp_sqs_delete_message(client, url, got.items[0].receipt_handle), 0, "%s",
                 kp_error_last());
    in.wait_time_seconds = 0;
    cr_assert_eq(kp_sqs_receive_message(client, arena, &in, &got), 0);
    cr_expect_eq(got.n, 0, "the deleted message does not come back");
    cr_expect_eq(kp_sqs_delete_queue(client, url), 0);
    int err = kp_sqs_get_queue_url(client, arena, name, &looked_up);
    cr_expect_eq(err, KP_ENOTFOUND, "%s", kp_error_last());
}
