/*
 * Launch templates: rendering (AMI, security groups on the interface,
 * profile, block devices per family and from the class, metadata options,
 * tags, user data), deterministic names, and the EC2 side on the double:
 * describe-then-create, the cache and its re-arming, invalidation, the
 * create race, sweeping unused templates, hydration and a class's deletion.
 */
#include "base/base64.h"
#include "cloud/aws/launchtemplate.h"
#include "kube/config.h"
#include "test_aws_provider_fixture.h"

static kp_aws_lts *lts;

static void make_lts(const char *region, const char *dns)
{
    kp_aws_lt_opts o = {.cluster_name = "c1",
                        .cluster_endpoint = "https://api.example",
                        .ca_bundle = "Q0E=",
                        .cluster_cidr = "10.100.0.0/16",
                        .kube_dns_ip = dns,
                        .region = region,
                        .clock = &fx.clock.base};
    kp_aws_lts_free(lts);
    cr_assert_eq(kp_aws_lts_new(&lts, &o), 0);
}

static void setup(void)
{
    fx_init();
    lts = NULL;
    make_lts("us-west-2", "10.100.0.10");
}

static void teardown(void)
{
    lts = kp_aws_lts_free(lts);
    fx_fini();
}

TestSuite(aws_launchtemplate, .init = setup, .fini = teardown);

#define STATUS                                                                                     \
    "\"status\":{\"instanceProfile\":\"prof\",\"securityGroups\":[{\"id\":\"sg-1\"},{\"id\":"      \
    "\"sg-2\"}],\"amis\":[{\"id\":\"ami-1\"}]}"

static const kp_ec2nodeclass *class_spec(const char *spec)
{
    return nodeclass(fmt("{\"metadata\":{\"name\":\"nc\"},\"spec\":{%s}," STATUS "}", spec));
}

static const kp_nodeclaim *claim(void)
{
    return nodeclaim("{\"metadata\":{\"name\":\"claim-1\",\"labels\":{\"karpenter.sh/nodepool\":"
                     "\"pool\",\"team\":\"a\"}},\"spec\":{\"taints\":[{\"key\":\"t\",\"effect\":"
                     "\"NoSchedule\"}]}}");
}

static const kp_ec2_tag tags[] = {{"eks:eks-cluster-name", "c1"},
                                  {"karpenter.k8s.aws/ec2nodeclass", "nc"}};

static kp_aws_lt_params params(const kp_ec2nodeclass *nc, const char *ct, int32_t max_pods)
{
    return (kp_aws_lt_params){.nc = nc, .claim = claim(), .image_id = "ami-1", .capacity_type = ct,
                              .max_pods = max_pods, .tags = tags, .n_tags = 2};
}

static const char *render(const kp_aws_lt_params *p, kp_ec2_launch_template_data *d)
{
    const char *name = NULL;
    cr_assert_eq(kp_aws_lt_render(lts, fx.arena, p, &name, d), 0, "%s", kp_error_last());
    return name;
}

static const char *decoded_user_data(const kp_ec2_launch_template_data *d)
{
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(kp_base64_decode(&text, &len, d->user_data), 0);
    const char *copy = kp_arena_strndup(fx.arena, text, len);
    free(text);
    return copy;
}

/* ------------------------------------------------------------- rendering */

Test(aws_launchtemplate, al2023_defaults)
{
    kp_aws_lt_params p = params(class_spec("\"amiFamily\":\"AL2023\""), "on-demand", 29);
    kp_ec2_launch_template_data d;
    const char *name = render(&p, &d);
    cr_expect(strncmp(name, "karpenter.k8s.aws/", 18) == 0, "%s", name);
    cr_expect_str_eq(d.image_id, "ami-1");
    cr_expect_str_eq(d.iam_instance_profile_name, "prof");
    cr_expect_eq(d.n_security_group_ids, 0, "groups go on the interface");
    cr_assert_eq(d.n_network_interfaces, 1);
    cr_expect_eq(d.network_interfaces[0].device_index, 0);
    cr_expect_eq(d.network_interfaces[0].n_security_group_ids, 2);
    cr_expect_str_eq(d.network_interfaces[0].security_group_ids[1], "sg-2");
    cr_expect_eq(d.network_interfaces[0].associate_public_ip, -1);
    cr_assert_eq(d.n_block_devices, 1);
    cr_expect_str_eq(d.block_devices[0].device_name, "/dev/xvda");
    cr_expect_eq(d.block_devices[0].volume_size_gib, 20);
    cr_expect_str_eq(d.block_devices[0].volume_type, "gp3");
    cr_expect(d.block_devices[0].encrypted);
    cr_expect(d.block_devices[0].delete_on_termination);
    cr_expect_str_eq(d.metadata.http_endpoint, "enabled");
    cr_expect_str_eq(d.metadata.http_tokens, "required");
    cr_expect_str_eq(d.metadata.http_protocol_ipv6, "disabled");
    cr_expect_eq(d.metadata.http_put_response_hop_limit, 1);
    cr_expect_str_eq(d.metadata.instance_metadata_tags, "disabled");
    cr_expect_not(d.monitoring);
    cr_assert_eq(d.n_tag_specs, 1, "on-demand: network interfaces only");
    cr_expect_str_eq(d.tag_specs[0].resource_type, "network-interface");
    cr_expect_eq(d.tag_specs[0].n_tags, 2);
    const char *ud = decoded_user_data(&d);
    cr_expect(strstr(ud, "apiServerEndpoint: https://api.example") != NULL, "%s", ud);
    cr_expect(strstr(ud, "maxPods: 29") != NULL, "%s", ud);
    cr_expect(strstr(ud, "karpenter.sh/capacity-type=on-demand") != NULL, "%s", ud);
    cr_expect(strstr(ud, "team=a") != NULL);
    cr_expect(strstr(ud, "karpenter.sh/unregistered") != NULL);
}

Test(aws_launchtemplate, spot_templates_also_tag_the_spot_request)
{
    kp_aws_lt_params p = params(class_spec("\"amiFamily\":\"AL2023\""), "spot", 29);
    kp_ec2_launch_template_data d;
    render(&p, &d);
    cr_assert_eq(d.n_tag_specs, 2);
    cr_expect_str_eq(d.tag_specs[1].resource_type, "spot-instances-request");
    cr_expect(strstr(decoded_user_data(&d), "karpenter.sh/capacity-type=spot") != NULL);
}

Test(aws_launchtemplate, names_follow_the_inputs)
{
    const kp_ec2nodeclass *nc = class_spec("\"amiFamily\":\"AL2023\"");
    kp_aws_lt_params p = params(nc, "on-demand", 29);
    kp_ec2_launch_template_data d;
    const char *name = render(&p, &d);
    kp_aws_lt_params same = params(class_spec("\"amiFamily\":\"AL2023\""), "on-demand", 29);
    cr_expect_str_eq(render(&same, &d), name, "equal inputs, equal names");
    kp_aws_lt_params q = p;
    q.image_id = "ami-2";
    cr_expect_str_neq(render(&q, &d), name, "AMI");
    q = p, q.max_pods = 58;
    cr_expect_str_neq(render(&q, &d), name, "maxPods");
    q = p, q.capacity_type = "spot";
    cr_expect_str_neq(render(&q, &d), name, "capacity type");
    q = p, q.n_tags = 1;
    cr_expect_str_neq(render(&q, &d), name, "tags");
    const char *changed[] = {"\"detailedMonitoring\":true", "\"associatePublicIPAddress\":true",
                             "\"metadataOptions\":{\"httpTokens\":\"optional\"}",
                             "\"userData\":\"#!/bin/sh\\necho hi\\n\""};
    for (size_t i = 0; i < sizeof(changed) / sizeof(*changed); i++) {
        q = params(class_spec(fmt("\"amiFamily\":\"AL2023\",%s", changed[i])), "on-demand", 29);
        cr_expect_str_neq(render(&q, &d), name, "%s", changed[i]);
    }
    /* a class maxPods wins over the group's, so the group no longer matters */
    kp_aws_lt_params a = params(class_spec("\"kubelet\":{\"maxPods\":10}"), "on-demand", 29);
    kp_aws_lt_params b = params(class_spec("\"kubelet\":{\"maxPods\":10}"), "on-demand", 58);
    cr_expect_str_eq(render(&a, &d), render(&b, &d));
    cr_expect(strstr(decoded_user_data(&d), "maxPods: 10") != NULL);
}

Test(aws_launchtemplate, class_block_devices)
{
    kp_aws_lt_params p = params(
        class_spec("\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"rootVolume\":true,"
                   "\"ebs\":{\"volumeSize\":\"100G\",\"volumeType\":\"io2\",\"iops\":3000,"
                   "\"throughput\":250,\"kmsKeyID\":\"k\",\"encrypted\":true}},{\"deviceName\":"
                   "\"/dev/xvdb\",\"ebs\":{\"volumeSize\":\"1.5Gi\",\"deleteOnTermination\":"
                   "false}}]"),
        "on-demand", 29);
    kp_ec2_launch_template_data d;
    render(&p, &d);
    cr_assert_eq(d.n_block_devices, 2);
    cr_expect_eq(d.block_devices[0].volume_size_gib, 94, "100e9 bytes, rounded up to GiB");
    cr_expect_str_eq(d.block_devices[0].volume_type, "io2");
    cr_expect_eq(d.block_devices[0].iops, 3000);
    cr_expect_eq(d.block_devices[0].throughput, 250);
    cr_expect_str_eq(d.block_devices[0].kms_key_id, "k");
    cr_expect(d.block_devices[0].encrypted);
    cr_expect(d.block_devices[0].delete_on_termination, "unset: EC2's default");
    cr_expect_eq(d.block_devices[1].volume_size_gib, 2);
    cr_expect_not(d.block_devices[1].delete_on_termination);
    cr_expect_not(d.block_devices[1].encrypted);
    cr_expect_null(d.block_devices[1].volume_type);
}

Test(aws_launchtemplate, family_block_devices)
{
    kp_ec2_launch_template_data d;
    kp_aws_lt_params p = params(class_spec("\"amiFamily\":\"Bottlerocket\""), "on-demand", 29);
    render(&p, &d);
    cr_assert_eq(d.n_block_devices, 2);
    cr_expect_eq(d.block_devices[0].volume_size_gib, 4);
    cr_expect_str_eq(d.block_devices[1].device_name, "/dev/xvdb");
    cr_expect_eq(d.block_devices[1].volume_size_gib, 20);
    p = params(class_spec("\"amiFamily\":\"Windows2022\""), "on-demand", 29);
    render(&p, &d);
    cr_assert_eq(d.n_block_devices, 1);
    cr_expect_str_eq(d.block_devices[0].device_name, "/dev/sda1");
    cr_expect_eq(d.block_devices[0].volume_size_gib, 50);
    p = params(class_spec("\"amiFamily\":\"Custom\",\"userData\":\"x\""), "on-demand", 29);
    render(&p, &d);
    cr_expect_eq(d.n_block_devices, 0, "Custom: the AMI's volumes");
}

Test(aws_launchtemplate, metadata_options)
{
    kp_ec2_launch_template_data d;
    kp_aws_lt_params p =
        params(class_spec("\"metadataOptions\":{\"httpEndpoint\":\"disabled\",\"httpProtocolIPv6\":"
                          "\"enabled\",\"httpPutResponseHopLimit\":3,\"httpTokens\":\"optional\"},"
                          "\"detailedMonitoring\":true,\"associatePublicIPAddress\":false"),
               "on-demand", 29);
    render(&p, &d);
    cr_expect_str_eq(d.metadata.http_endpoint, "disabled");
    cr_expect_str_eq(d.metadata.http_protocol_ipv6, "enabled");
    cr_expect_eq(d.metadata.http_put_response_hop_limit, 3);
    cr_expect_str_eq(d.metadata.http_tokens, "optional");
    cr_expect(d.monitoring);
    cr_expect_eq(d.network_interfaces[0].associate_public_ip, 0);
    make_lts("us-iso-east-1", "fd00::a");
    p = params(class_spec(""), "on-demand", 29);
    render(&p, &d);
    cr_expect_null(d.metadata.http_protocol_ipv6, "not sent in isolated regions");
    make_lts("us-west-2", "fd00::a");
    render(&p, &d);
    cr_expect_str_eq(d.metadata.http_protocol_ipv6, "enabled", "IPv6 cluster DNS");
}

Test(aws_launchtemplate, what_cannot_be_rendered)
{
    const char *name = NULL;
    kp_ec2_launch_template_data d;
    kp_aws_lt_params p = params(nodeclass("{\"metadata\":{\"name\":\"nc\"},\"status\":"
                                          "{\"instanceProfile\":\"p\"}}"),
                                "on-demand", 29);
    cr_expect_eq(kp_aws_lt_render(lts, fx.arena, &p, &name, &d), KP_ENOTREADY);
    cr_expect(strstr(kp_error_last(), "security groups") != NULL, "%s", kp_error_last());
    p = params(nodeclass("{\"metadata\":{\"name\":\"nc\"},\"status\":{\"securityGroups\":"
                         "[{\"id\":\"sg\"}]}}"),
               "on-demand", 29);
    cr_expect_eq(kp_aws_lt_render(lts, fx.arena, &p, &name, &d), KP_ENOTREADY);
    cr_expect(strstr(kp_error_last(), "instance profile") != NULL);
    p = params(class_spec("\"amiFamily\":\"Bottlerocket\",\"userData\":\"[settings\""), "on-demand",
               29);
    cr_expect_eq(kp_aws_lt_render(lts, fx.arena, &p, &name, &d), KP_EINVALID, "bad TOML");
    p = params(class_spec(""), "on-demand", 29);
    p.image_id = NULL;
    cr_expect_eq(kp_aws_lt_render(lts, fx.arena, &p, &name, &d), KP_EINVALID);
    kp_aws_lt_opts o = {.cluster_name = "c1", .clock = &fx.clock.base};
    kp_aws_lts *no_cidr = NULL;
    cr_assert_eq(kp_aws_lts_new(&no_cidr, &o), 0);
    p = params(class_spec("\"amiFamily\":\"AL2023\""), "on-demand", 29);
    cr_expect_eq(kp_aws_lt_render(no_cidr, fx.arena, &p, &name, &d), KP_ENOTREADY);
    kp_aws_lts_free(no_cidr);
    o.cluster_name = "";
    cr_expect_eq(kp_aws_lts_new(&no_cidr, &o), KP_EINVALID);
    cr_expect_null(kp_aws_lts_free(NULL));
}

/* --------------------------------------------------------------- in EC2 */

static const char *lt_set(const char *id, const char *name)
{
    return ec2_response("DescribeLaunchTemplates", "launchTemplates",
                        fmt("<item><launchTemplateId>%s</launchTemplateId><launchTemplateName>%s"
                            "</launchTemplateName></item>",
                            id, name));
}

static const char *lt_one(const char *action_name, const char *id, const char *name)
{
    return fmt("<%sResponse><launchTemplate><launchTemplateId>%s</launchTemplateId>"
               "<launchTemplateName>%s</launchTemplateName></launchTemplate></%sResponse>",
               action_name, id, name, action_name);
}

static const char *not_found(void)
{
    return ec2_error("InvalidLaunchTemplateName.NotFoundException", "not found");
}

static kp_aws_lt ensure(const kp_aws_lt_params *p)
{
    kp_aws_lt lt;
    cr_assert_eq(kp_aws_lt_ensure(lts, fx.ec2, fx.arena, p, &lt), 0, "%s", kp_error_last());
    return lt;
}

Test(aws_launchtemplate, created_when_missing_then_cached)
{
    answer(400, not_found());
    answer(200, lt_one("CreateLaunchTemplate", "lt-1", "x"));
    answer(200, lt_set("lt-1", "x"));
    start();
    kp_aws_lt_params p = params(class_spec("\"amiFamily\":\"AL2023\""), "spot", 29);
    kp_aws_lt lt = ensure(&p);
    cr_assert_eq(requests(), 2);
    cr_expect_str_eq(action(0), "DescribeLaunchTemplates");
    cr_expect_str_eq(sent(0, "LaunchTemplateName.1"), lt.name);
    cr_expect_str_eq(action(1), "CreateLaunchTemplate");
    cr_expect_str_eq(sent(1, "LaunchTemplateName"), lt.name);
    cr_expect_str_eq(lt.id, "lt-1");
    cr_expect_str_eq(sent(1, "LaunchTemplateData.ImageId"), "ami-1");
    cr_expect_str_eq(sent(1, "LaunchTemplateData.IamInstanceProfile.Name"), "prof");
    cr_expect_str_eq(sent(1, "LaunchTemplateData.NetworkInterface.1.SecurityGroupId.2"), "sg-2");
    cr_expect_null(sent(1, "LaunchTemplateData.SecurityGroupId.1"));
    cr_expect_str_eq(sent(1, "LaunchTemplateData.MetadataOptions.InstanceMetadataTags"),
                     "disabled");
    cr_expect_str_eq(sent(1, "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize"), "20");
    cr_expect_str_eq(sent(1, "LaunchTemplateData.TagSpecification.2.ResourceType"),
                     "spot-instances-request");
    cr_expect_str_eq(sent(1, "TagSpecification.1.ResourceType"), "launch-template");
    cr_expect_str_eq(sent(1, "TagSpecification.1.Tag.1.Key"), "eks:eks-cluster-name");
    cr_expect_str_eq(sent(1, "LaunchTemplateData.CapacityReservationSpecification."
                             "CapacityReservationPreference"),
                     "none");
    cr_expect_not_null(sent(1, "LaunchTemplateData.UserData"));
    /* cached and re-armed by use: 50 s + 50 s later it is still known */
    fx.clock.ns += 50 * KP_NS_PER_SEC;
    cr_expect_str_eq(ensure(&p).id, "lt-1");
    fx.clock.ns += 50 * KP_NS_PER_SEC;
    ensure(&p);
    cr_expect_eq(requests(), 2);
    cr_expect_eq(kp_aws_lt_cached(lts), 1);
    /* forgotten: described again, found, not created */
    kp_aws_lt_invalidate(lts, lt.name);
    cr_expect_eq(kp_aws_lt_cached(lts), 0);
    ensure(&p);
    cr_expect_eq(requests(), 3);
    cr_expect_str_eq(action(2), "DescribeLaunchTemplates");
}

Test(aws_launchtemplate, a_create_race_reads_the_winner)
{
    answer(400, not_found());
    answer(400, ec2_error("InvalidLaunchTemplateName.AlreadyExistsException", "exists"));
    answer(200, lt_set("lt-9", "x"));
    start();
    kp_aws_lt_params p = params(class_spec(""), "on-demand", 29);
    cr_expect_str_eq(ensure(&p).id, "lt-9");
    cr_expect_eq(requests(), 3);
}

Test(aws_launchtemplate, ec2_failures)
{
    answer(503, ec2_error("RequestLimitExceeded", "slow down"));
    answer(400, not_found());
    answer(403, ec2_error("UnauthorizedOperation", "no"));
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates", ""));
    start();
    kp_aws_lt_params p = params(class_spec(""), "on-demand", 29);
    kp_aws_lt lt;
    cr_expect_eq(kp_aws_lt_ensure(lts, fx.ec2, fx.arena, &p, &lt), KP_ERETRY);
    cr_expect_eq(kp_aws_lt_ensure(lts, fx.ec2, fx.arena, &p, &lt), KP_EFORBIDDEN);
    cr_expect(strstr(kp_error_last(), "creating launch template") != NULL, "%s", kp_error_last());
    cr_expect_eq(kp_aws_lt_ensure(lts, fx.ec2, fx.arena, &p, &lt), KP_ERROR, "an empty answer");
    cr_expect_eq(kp_aws_lt_cached(lts), 0, "nothing remembered");
}

Test(aws_launchtemplate, unused_templates_are_swept)
{
    answer(200, lt_set("lt-1", "x"));
    answer(200, lt_one("DeleteLaunchTemplate", "lt-1", "x"));
    answer(200, lt_set("lt-2", "y"));
    answer(503, ec2_error("InternalError", "boom"));
    answer(400, ec2_error("InvalidLaunchTemplateId.NotFound", "gone"));
    start();
    kp_aws_lt_params p = params(class_spec(""), "on-demand", 29);
    ensure(&p);
    cr_expect_eq(kp_aws_lt_sweep(lts, fx.ec2), 0, "still in use");
    fx.clock.ns += KP_AWS_LT_TTL_NS;
    cr_expect_eq(kp_aws_lt_sweep(lts, fx.ec2), 1);
    cr_expect_str_eq(action(1), "DeleteLaunchTemplate");
    cr_expect_str_eq(sent(1, "LaunchTemplateId"), "lt-1");
    cr_expect_eq(kp_aws_lt_cached(lts), 0);
    p.max_pods = 11;
    ensure(&p);
    fx.clock.ns += KP_AWS_LT_TTL_NS;
    cr_expect_eq(kp_aws_lt_sweep(lts, fx.ec2), KP_ERETRY);
    cr_expect_eq(kp_aws_lt_cached(lts), 1, "kept for the next sweep");
    cr_expect_eq(kp_aws_lt_sweep(lts, fx.ec2), 1, "already gone counts as deleted");
    cr_expect_eq(kp_aws_lt_cached(lts), 0);
}

Test(aws_launchtemplate, hydrate_and_delete_a_class)
{
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates",
                             "<item><launchTemplateId>lt-a</launchTemplateId><launchTemplateName>"
                             "karpenter.k8s.aws/1</launchTemplateName></item><item>"
                             "<launchTemplateId>lt-b</launchTemplateId><launchTemplateName>"
                             "karpenter.k8s.aws/2</launchTemplateName></item>"));
    answer(200, lt_set("lt-a", "karpenter.k8s.aws/1"));
    answer(200, lt_one("DeleteLaunchTemplate", "lt-a", "karpenter.k8s.aws/1"));
    start();
    cr_assert_eq(kp_aws_lt_hydrate(lts, fx.ec2), 0, "%s", kp_error_last());
    cr_expect_str_eq(filter(0, "tag:eks:eks-cluster-name"), "c1");
    cr_expect_str_eq(sent(0, "MaxResults"), "200");
    cr_expect_eq(kp_aws_lt_cached(lts), 2);
    cr_assert_eq(kp_aws_lt_delete_all(lts, fx.ec2, "nc"), 0, "%s", kp_error_last());
    cr_expect_str_eq(filter(1, "tag:karpenter.k8s.aws/ec2nodeclass"), "nc");
    cr_expect_str_eq(filter(1, "tag:eks:eks-cluster-name"), "c1");
    cr_expect_str_eq(sent(2, "LaunchTemplateName"), "karpenter.k8s.aws/1");
    cr_expect_eq(kp_aws_lt_cached(lts), 1);
}

/* EKS_CONTROL_PLANE discovery replaces what nodes join; unset values stay. */
Test(aws_launchtemplate, describe_cluster_values_reach_user_data)
{
    kp_aws_lts_set_cluster(lts, "https://ABC.eks.amazonaws.com", NULL, "172.20.0.0/16");
    kp_aws_lt_params p = params(class_spec("\"amiFamily\":\"AL2023\""), "on-demand", 29);
    kp_ec2_launch_template_data d;
    render(&p, &d);
    const char *ud = decoded_user_data(&d);
    cr_expect(strstr(ud, "apiServerEndpoint: https://ABC.eks.amazonaws.com") != NULL, "%s", ud);
    cr_expect(strstr(ud, "cidr: 172.20.0.0/16") != NULL, "%s", ud);
    cr_expect(strstr(ud, "certificateAuthority: Q0E=") != NULL, "the CA given stays: %s", ud);
}
