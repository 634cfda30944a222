/*
 * The provider's halves of Karpenter's AWS-side controllers, on the
 * in-process double (moto has no DescribeInstanceStatus health or capacity
 * reservations): the Name tag once a node registered, expiring capacity
 * blocks, garbage collection of orphaned instance profiles, SSM answers of
 * deprecated AMIs, the memory registered nodes report, EC2 instance-status
 * health and the interruption source it feeds, and the upkeep schedule.
 */
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/instancestatus.h"
#include "test_aws_provider_env.h"

static void setup(void)
{
    fx_init();
    memset(classes, 0, sizeof(classes));
    cp = NULL;
    add_class("default", "{\"metadata\":{\"name\":\"default\",\"generation\":1},\"spec\":{"
                         "\"amiFamily\":\"AL2023\",\"subnetSelectorTerms\":[{\"tags\":{\"k\":"
                         "\"v\"}}]}," READY_STATUS "}");
}

static void teardown(void)
{
    cp = kp_cloud_free(cp);
    fx_fini();
}

TestSuite(aws_provider_controllers, .init = setup, .fini = teardown);

static const char *instance_with_tags(const char *tags)
{
    return instances(instance_xml("i-0abc", "m5.large", "running", "ami-x86", "subnet-a", tags));
}

Test(aws_provider_controllers, name_tag_after_registration)
{
    answer(200, instance_with_tags(tagxml("karpenter.sh/nodeclaim", "claim-1")));
    answer(200, "<CreateTagsResponse><return>true</return></CreateTagsResponse>");
    answer(200, instance_with_tags(fmt("%s%s%s", tagxml("Name", "ip-10-0-0-1.ec2.internal"),
                                       tagxml("karpenter.sh/nodeclaim", "claim-1"),
                                       tagxml("eks:eks-cluster-name", "c1"))));
    answer(400, ec2_error("InvalidInstanceID.NotFound", "The instance ID 'i-0abc' does not exist"));
    start();
    provider();
    const char *pid = "aws:///us-west-2a/i-0abc";
    cr_expect_eq(kp_aws_provider_tag_instance(cp, pid, "ip-10-0-0-1.ec2.internal", "claim-1"), 1,
                 "%s", kp_error_last());
    cr_expect_str_eq(action(1), "CreateTags");
    cr_expect_str_eq(sent(1, "ResourceId.1"), "i-0abc");
    const char *tags = "";
    for (int i = 1; sent(1, fmt("Tag.%d.Key", i)); i++)
        tags = fmt("%s%s=%s;", tags, sent(1, fmt("Tag.%d.Key", i)), sent(1, fmt("Tag.%d.Value", i)));
    cr_expect_str_eq(tags, "Name=ip-10-0-0-1.ec2.internal;eks:eks-cluster-name=c1;",
                     "only the tags the instance lacks");
    cr_expect_eq(kp_aws_provider_tag_instance(cp, pid, "ip-10-0-0-1.ec2.internal", "claim-1"), 0,
                 "all there: no CreateTags");
    cr_expect_eq(kp_aws_provider_tag_instance(cp, pid, "n", "claim-1"), KP_ENOTFOUND);
    cr_expect_eq(requests(), 4);
    cr_expect_eq(kp_aws_provider_tag_instance(cp, pid, "", "claim-1"), KP_EINVALID,
                 "not registered yet");
}

static const char *cr_item(const char *id, const char *type, const char *end)
{
    return fmt("<item><capacityReservationId>%s</capacityReservationId><ownerId>123456789012"
               "</ownerId><availabilityZone>us-west-2a</availabilityZone><instanceType>m5.large"
               "</instanceType><availableInstanceCount>0</availableInstanceCount><state>active"
               "</state><instanceMatchCriteria>targeted</instanceMatchCriteria><reservationType>%s"
               "</reservationType>%s</item>",
               id, type, end ? fmt("<endDate>%s</endDate>", end) : "");
}

Test(aws_provider_controllers, capacity_block_expiring_ahead_of_its_end)
{
    answer(200, ec2_response("DescribeCapacityReservations", "capacityReservationSet",
                             cr_item("cr-b", "capacity-block", "2026-01-01T00:39:00.000Z")));
    answer(200, ec2_response("DescribeCapacityReservations", "capacityReservationSet",
                             cr_item("cr-late", "capacity-block", "2026-01-01T02:00:00.000Z")));
    answer(200, ec2_response("DescribeCapacityReservations", "capacityReservationSet",
                             cr_item("cr-d", "default", "2026-01-01T00:10:00.000Z")));
    start();
    provider();
    const char *ids[] = {"cr-b", "cr-late", "cr-d"};
    bool expiring[3];
    cr_assert_eq(kp_aws_provider_expiring_reservations(cp, ids, 3, expiring), 0, "%s",
                 kp_error_last());
    cr_expect(expiring[0], "a capacity block 39 minutes from its end");
    cr_expect_not(expiring[1], "two hours left");
    cr_expect_not(expiring[2], "an ODCR that ends is not a capacity block");
    cr_expect_str_eq(sent(0, "CapacityReservationId.1"), "cr-b");
}

static const char *profiles(const char *members)
{
    return fmt("<ListInstanceProfilesResponse><ListInstanceProfilesResult><IsTruncated>false"
               "</IsTruncated><InstanceProfiles>%s</InstanceProfiles></ListInstanceProfilesResult>"
               "</ListInstanceProfilesResponse>",
               members);
}

static const char *profile(const char *path, const char *name, const char *role)
{
    return fmt("<member><Path>%s</Path><InstanceProfileName>%s</InstanceProfileName><Roles>%s"
               "</Roles></member>",
               path, name,
               role ? fmt("<member><RoleName>%s</RoleName></member>", role) : "");
}

Test(aws_provider_controllers, orphan_instance_profile_garbage_collection)
{
    /* the cluster's instances: one wears profile c1_worn */
    answer(200, instances(fmt("<item><instanceId>i-1</instanceId><iamInstanceProfile><arn>"
                              "arn:aws:iam::1:instance-profile/c1_worn</arn></iamInstanceProfile>"
                              "<placement><availabilityZone>us-west-2a</availabilityZone>"
                              "</placement></item>")));
    answer(200, profiles(fmt("%s%s%s%s", profile("/karpenter/us-west-2/c1/live-uid/", "c1_live", "r"),
                             profile("/karpenter/us-west-2/c1/gone-uid/", "c1_gone", "r"),
                             profile("/karpenter/us-west-2/c1/gone-uid2/", "c1_worn", "r"),
                             profile("/other/", "someone_elses", NULL))));
    answer(200, iam_ok("RemoveRoleFromInstanceProfile"));
    answer(200, iam_ok("DeleteInstanceProfile"));
    start();
    provider();
    const char *live[] = {"live-uid"};
    cr_expect_eq(kp_aws_provider_gc_instance_profiles(cp, live, 1), 1, "%s", kp_error_last());
    cr_expect_str_eq(filter(0, "tag:eks:eks-cluster-name"), "c1");
    cr_expect_str_eq(sent(1, "PathPrefix"), "/karpenter/us-west-2/c1/");
    cr_expect_str_eq(sent(2, "Action"), "RemoveRoleFromInstanceProfile");
    cr_expect_str_eq(sent(2, "InstanceProfileName"), "c1_gone");
    cr_expect_str_eq(sent(3, "Action"), "DeleteInstanceProfile");
    cr_expect_str_eq(sent(3, "InstanceProfileName"), "c1_gone");
    cr_expect_eq(requests(), 4, "the live class's, the worn and another tool's profile stay");
}

Test(aws_provider_controllers, discovered_capacity_replaces_the_memory_estimate)
{
    start();
    provider();
    kp_nodepool pool = {0};
    pool.template.has_node_class_ref = true;
    pool.template.node_class_ref.name = "default";
    const kp_catalog *cat = NULL;
    cr_assert_eq(cp->ops->instance_types(cp, &pool, &cat), 0, "%s", kp_error_last());
    const kp_instance_type *m5 = kp_catalog_find(cat, "m5.large");
    int64_t estimate = kp_it_capacity(m5, "memory");
    int64_t alloc = estimate - kp_it_overhead(m5, "memory");
    int64_t real = estimate / 1000 - INT64_C(200) * 1024 * 1024; /* 200Mi less than estimated */
    cr_assert_eq(kp_aws_provider_observe_node(cp, "default", "m5.large", real), 0);
    cr_assert_eq(cp->ops->instance_types(cp, &pool, &cat), 0);
    m5 = kp_catalog_find(cat, "m5.large");
    cr_expect_eq(kp_it_capacity(m5, "memory"), real * 1000);
    cr_expect_eq(kp_it_capacity(m5, "memory") - kp_it_overhead(m5, "memory"),
                 alloc - INT64_C(200) * 1024 * 1024 * 1000, "allocatable drops as much");
    cr_assert_eq(kp_aws_provider_observe_node(cp, "default", "m5.large", real + 1024), 0);
    cr_assert_eq(cp->ops->instance_types(cp, &pool, &cat), 0);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(cat, "m5.large"), "memory"), real * 1000,
                 "only ever lowered");
    cr_expect_eq(kp_aws_provider_observe_node(cp, "missing", "m5.large", real), KP_ENOTFOUND);
}

/* ------------------------------------------------------------ instance status */

static const char *statuses(const char *items)
{
    return ec2_response("DescribeInstanceStatus", "instanceStatusSet", items);
}

static const char *status_item(const char *id, const char *sys, const char *ins, const char *since,
                               const char *event)
{
    const char *detail = fmt("<details><item><name>reachability</name><status>%%s</status>%s"
                             "</item></details>",
                             since ? fmt("<impairedSince>%s</impairedSince>", since) : "");
    return fmt("<item><instanceId>%s</instanceId><availabilityZone>us-west-2a</availabilityZone>"
               "<instanceState><name>running</name></instanceState><systemStatus><status>%s"
               "</status>%s</systemStatus><instanceStatus><status>%s</status>%s</instanceStatus>"
               "%s</item>",
               id, sys, fmt(detail, !strcmp(sys, "impaired") ? "failed" : "passed"), ins,
               fmt(detail, !strcmp(ins, "impaired") ? "failed" : "passed"),
               event ? fmt("<eventsSet><item><code>%s</code><description>d</description>"
                           "</item></eventsSet>",
                           event)
                     : "");
}

/* The three queries: instance impaired, system impaired, scheduled events. */
static void answer_health(void)
{
    /* failing for 5 minutes: counts; failing for 1 minute: not yet */
    answer(200, statuses(fmt("%s%s",
                             status_item("i-old", "ok", "impaired", "2025-12-31T23:55:00.000Z", NULL),
                             status_item("i-new", "ok", "impaired", "2025-12-31T23:59:00.000Z",
                                         NULL))));
    answer(200, statuses(status_item("i-old", "impaired", "impaired", "2025-12-31T23:50:00.000Z",
                                     NULL)));
    answer(200, statuses(status_item("i-ev", "ok", "ok", NULL, "instance-retirement")));
}

Test(aws_provider_controllers, instance_status_unhealthy_instances)
{
    answer_health();
    start();
    kp_aws_unhealthy *u = NULL;
    size_t n = 0;
    cr_assert_eq(kp_aws_instance_health(fx.ec2, fx.arena, fx.clock.ns, &u, &n), 0, "%s",
                 kp_error_last());
    const char *got = "";
    for (size_t i = 0; i < n; i++)
        got = fmt("%s%s/%s ", got, u[i].instance_id, u[i].category);
    cr_expect_str_eq(got, "i-old/instance_status i-old/system_status i-ev/event_status ");
    cr_expect_str_eq(filter(0, "instance-status.status"), "impaired");
    cr_expect_str_eq(filter(1, "system-status.status"), "impaired");
    cr_expect_str_eq(filter(2, "event.code"), "instance-reboot,system-reboot,system-maintenance,"
                                              "instance-retirement,instance-stop");
}

Test(aws_provider_controllers, instance_status_feeds_the_interruption_source)
{
    answer_health();
    answer(403, ec2_error("UnauthorizedOperation", "not allowed: ec2:DescribeInstanceStatus"));
    start();
    kp_aws_client *ec2 = NULL;
    kp_aws_client_options o = {.region = "us-west-2", .endpoint_url = fx.server.url,
                               .credentials = fx.creds, .max_attempts = 1};
    cr_assert_eq(kp_aws_client_new(&ec2, &o), 0);
    kp_interruption_source *src = NULL;
    cr_assert_eq(kp_aws_health_source_new(NULL, ec2, &fx.clock.base, &src), 0);
    kp_interruption *m = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, fx.arena, &m, &n, 0), 0, "%s", kp_error_last());
    cr_assert_eq(n, 3);
    cr_expect_str_eq(m[0].kind_name, "instance_status");
    cr_expect_eq(m[0].kind, KP_INTERRUPT_SCHEDULED_CHANGE, "the node is replaced");
    cr_expect(kp_interruption_kind_deletes(m[0].kind));
    cr_expect_str_eq(m[0].instance_ids[0], "i-old");
    cr_expect_str_eq(m[2].kind_name, "event_status");
    cr_expect_eq(src->ops->ack(src, &m[0]), 0, "nothing to acknowledge");
    cr_expect_eq(src->ops->receive(src, fx.arena, &m, &n, 0), 0);
    cr_expect_eq(n, 0, "not due for a minute");
    cr_expect_eq(requests(), 3);
    fx.clock.ns += KP_AWS_HEALTH_PERIOD_NS;
    cr_expect_eq(src->ops->receive(src, fx.arena, &m, &n, 0), KP_EFORBIDDEN,
                 "a missing permission is reported");
    cr_expect_str_eq(src->ops->name(src), "ec2:DescribeInstanceStatus");
    kp_interruption_source_free(src);
}

Test(aws_provider_controllers, upkeep_schedule)
{
    start();
    provider();
    cr_expect(kp_aws_provider_due(cp, KP_AWS_TASK_SSM_INVALIDATION, 100));
    cr_expect_not(kp_aws_provider_due(cp, KP_AWS_TASK_SSM_INVALIDATION, 100));
    cr_expect(kp_aws_provider_due(cp, KP_AWS_TASK_INSTANCE_PROFILE_GC, 100), "tasks are apart");
    fx.clock.ns += 100;
    cr_expect(kp_aws_provider_due(cp, KP_AWS_TASK_SSM_INVALIDATION, 100));
    cr_expect_not(kp_aws_provider_due(cp, KP_AWS_TASK_COUNT, 1));
    cr_expect_not(kp_aws_provider_eks_control_plane(cp));
    kp_aws_cluster_info info;
    cr_expect_eq(kp_aws_provider_discover(cp, fx.arena, &info), KP_EINVALID);
}

static void eks_on(kp_aws_provider_opts *o)
{
    o->eks_control_plane = true;
    o->cluster_endpoint = NULL;
    o->cluster_cidr = NULL;
}

Test(aws_provider_controllers, describe_cluster_discovery_fills_what_was_not_given)
{
    answer(200, "{\"cluster\":{\"name\":\"c1\",\"version\":\"1.33\",\"endpoint\":"
                "\"https://ABC.gr7.us-west-2.eks.amazonaws.com\",\"certificateAuthority\":{"
                "\"data\":\"Q0E=\"},\"kubernetesNetworkConfig\":{\"serviceIpv4Cidr\":"
                "\"172.20.0.0/16\"},\"status\":\"ACTIVE\"}}");
    answer(404, "{\"message\":\"No cluster found for name: c1.\"}");
    start();
    provider_with(eks_on);
    cr_expect(kp_aws_provider_eks_control_plane(cp));
    kp_aws_cluster_info info;
    cr_assert_eq(kp_aws_provider_discover(cp, fx.arena, &info), 0, "%s", kp_error_last());
    cr_expect_str_eq(info.endpoint, "https://ABC.gr7.us-west-2.eks.amazonaws.com");
    cr_expect_str_eq(info.ca_bundle, "Q0E=");
    cr_expect_str_eq(info.service_cidr, "172.20.0.0/16");
    cr_expect_str_eq(info.kubernetes_version, "1.33");
    cr_expect_str_eq(fx.server.requests[0].method, "GET");
    cr_expect_str_eq(fx.server.requests[0].path, "/clusters/c1");
    cr_expect_lt(kp_aws_provider_discover(cp, fx.arena, &info), 0);
    cr_expect(strstr(kp_error_last(), "discovering cluster c1 from EKS") != NULL, "%s",
              kp_error_last());
}
