/*
 * The AWS provider through the cloud-provider table, on the in-process
 * double: create (labels, resources, provider ID; missing, unready and
 * misconfigured classes; ICE), get and list (filters, labels from the
 * catalog, terminating instances), delete (terminate, shutting down, gone,
 * found by tag), instance types per pool, drift (hash, AMI, subnet), and the
 * functions outside the table.
 */
#include <inttypes.h>

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

TestSuite(aws_provider, .init = setup, .fini = teardown);

static const kp_nodeclaim *claim(const char *name, const char *types, const char *ct)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"%s\",\"labels\":{\"karpenter.sh/nodepool\":"
                         "\"pool\"}},\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\","
                         "\"kind\":\"EC2NodeClass\",\"name\":\"default\"},\"requirements\":["
                         "{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\","
                         "\"values\":[%s]},{\"key\":\"karpenter.sh/capacity-type\",\"operator\":"
                         "\"In\",\"values\":[\"%s\"]}]}}",
                         name, types, ct));
}

static void answer_launch_prelude(void)
{
    answer(200, subnets(fmt("%s%s", subnet("subnet-a", "us-west-2a", "usw2-az1", 10),
                            subnet("subnet-b", "us-west-2b", "usw2-az2", 20))));
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-1"
                "</launchTemplateId><launchTemplateName>x</launchTemplateName></launchTemplate>"
                "</CreateLaunchTemplateResponse>");
}

static const char *label(const kp_cloud_instance *in, const char *key)
{
    const char *v = kp_labels_get(&in->labels, key);
    return v ? v : "<absent>";
}

/* ----------------------------------------------------------------- create */

Test(aws_provider, create_launches_and_describes_the_node)
{
    answer_launch_prelude();
    answer(200,
           fleet(fleet_instance("i-0abc", "m5.large", "us-west-2b", "subnet-b", "on-demand"), ""));
    start();
    provider();
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, claim("claim-1", "\"m5.large\"", "on-demand"), fx.arena, &in),
                 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_cloud_name(cp), "aws");
    cr_expect_str_eq(in.provider_id, "aws:///us-west-2b/i-0abc");
    cr_expect_str_eq(in.nodeclaim, "claim-1");
    cr_expect_str_eq(in.nodepool, "pool");
    cr_expect_str_eq(in.instance_type, "m5.large");
    cr_expect_str_eq(in.zone, "us-west-2b");
    cr_expect_str_eq(in.capacity_type, "on-demand");
    cr_expect_str_eq(in.image_id, "ami-x86");
    cr_expect_str_eq(label(&in, "node.kubernetes.io/instance-type"), "m5.large");
    cr_expect_str_eq(label(&in, "topology.kubernetes.io/zone"), "us-west-2b");
    cr_expect_str_eq(label(&in, "topology.k8s.aws/zone-id"), "usw2-az2");
    cr_expect_str_eq(label(&in, "karpenter.sh/capacity-type"), "on-demand");
    cr_expect_str_eq(label(&in, "karpenter.sh/nodepool"), "pool");
    cr_expect_str_eq(label(&in, "kubernetes.io/arch"), "amd64");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/instance-family"), "m5");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/instance-tenancy"), "default");
    cr_expect_str_eq(label(&in, "topology.kubernetes.io/region"), "us-west-2");
    cr_expect_eq(kp_resource_list_milli(&in.capacity, "cpu"), 2000);
    cr_expect_eq(kp_resource_list_milli(&in.allocatable, "cpu"), 1930, "70m kube-reserved");
    cr_expect_gt(kp_resource_list_milli(&in.capacity, "memory"),
                 kp_resource_list_milli(&in.allocatable, "memory"));
    cr_expect_eq(kp_resource_list_milli(&in.capacity, "pods"), 29000);
    cr_expect_null(kp_resource_list_get(&in.capacity, "nvidia.com/gpu"), "zero values dropped");
    cr_expect_gt(in.created_ns, 0);
    cr_expect_not(in.terminating);
    size_t f = requests() - 1;
    cr_expect_str_eq(action(f), "CreateFleet");
    cr_expect_str_eq(sent(f, "LaunchTemplateConfigs.1.Overrides.1.InstanceType"), "m5.large");
}

Test(aws_provider, classes_that_cannot_launch)
{
    add_class("unready", "{\"metadata\":{\"name\":\"unready\",\"generation\":2}," READY_STATUS "}");
    add_class("tagged", "{\"metadata\":{\"name\":\"tagged\",\"generation\":1},\"spec\":{\"tags\":{"
                        "\"karpenter.sh/nodepool\":\"x\"}}," READY_STATUS "}");
    start();
    provider();
    kp_cloud_instance in;
    const char *base = "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"nodeClassRef\":{\"name\":"
                       "\"%s\"}}}";
    cr_expect_eq(cp->ops->create(cp, nodeclaim(fmt(base, "missing")), fx.arena, &in),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect(strstr(kp_error_last(), "ec2nodeclass missing not found") != NULL, "%s",
              kp_error_last());
    cr_expect_eq(cp->ops->create(cp, nodeclaim(fmt(base, "unready")), fx.arena, &in), KP_ENOTREADY);
    cr_expect_eq(cp->ops->create(cp, nodeclaim(fmt(base, "tagged")), fx.arena, &in), KP_ENOTREADY);
    cr_expect(strstr(kp_error_last(), "reserved") != NULL, "%s", kp_error_last());
    cr_expect_eq(cp->ops->create(cp, nodeclaim("{\"metadata\":{\"name\":\"c\"}}"), fx.arena, &in),
                 KP_EINSUFFICIENT_CAPACITY, "no nodeClassRef");
    cr_expect_eq(requests(), 0);
}

Test(aws_provider, no_catalog_before_the_first_refresh)
{
    start();
    kp_aws_provider_opts o = KP_AWS_PROVIDER_OPTS_INIT;
    o.region = "us-west-2";
    o.cluster_name = "c1";
    o.endpoint_url = fx.server.url;
    o.credentials = fx.creds;
    o.lookup = lookup;
    cr_assert_eq(kp_aws_provider_new(&o, &cp), 0);
    kp_cloud_instance in;
    cr_expect_eq(cp->ops->create(cp, claim("c", "\"m5.large\"", "spot"), fx.arena, &in),
                 KP_ENOTREADY);
    const kp_catalog *cat = NULL;
    cr_expect_eq(cp->ops->instance_types(cp, NULL, &cat), KP_ENOTREADY);
}

Test(aws_provider, create_on_ice_is_insufficient_capacity)
{
    answer_launch_prelude();
    answer(200, fleet("", fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a",
                                      "subnet-a")));
    start();
    provider();
    kp_cloud_instance in;
    cr_expect_eq(cp->ops->create(cp, claim("c", "\"m5.large\"", "on-demand"), fx.arena, &in),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect(strstr(kp_error_last(), "nodeclaim c") != NULL, "%s", kp_error_last());
    cr_expect(
        kp_aws_ice_unavailable(kp_aws_provider_ice(cp), "on-demand", "m5.large", "us-west-2a"));
    /* the next catalog knows */
    const kp_catalog *cat = NULL;
    kp_nodepool pool;
    memset(&pool, 0, sizeof(pool));
    pool.template.has_node_class_ref = true;
    pool.template.node_class_ref.name = "default";
    cr_assert_eq(cp->ops->instance_types(cp, &pool, &cat), 0, "%s", kp_error_last());
    cr_expect_not(offering(kp_catalog_find(cat, "m5.large"), "us-west-2a", "on-demand")->available);
    cr_expect(offering(kp_catalog_find(cat, "m5.large"), "us-west-2b", "on-demand")->available);
}

/* ------------------------------------------------------------- get, list */

Test(aws_provider, get_reads_the_instance_back)
{
    answer(200, instances(instance_xml("i-1", "c5.large", "running", "ami-x86", "subnet-a",
                                       ours("claim-1"))));
    answer(200, instances(""));
    answer(400, ec2_error("InvalidInstanceID.NotFound", "gone"));
    start();
    provider();
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->get(cp, "aws:///us-west-2a/i-1", fx.arena, &in), 0, "%s",
                 kp_error_last());
    cr_expect_str_eq(sent(0, "InstanceId.1"), "i-1");
    cr_expect_str_eq(filter(0, "instance-state-name"),
                     "pending,running,stopping,stopped,shutting-down");
    cr_expect_str_eq(in.provider_id, "aws:///us-west-2a/i-1");
    cr_expect_str_eq(in.nodeclaim, "claim-1");
    cr_expect_str_eq(in.capacity_type, "on-demand");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/instance-family"), "c5", "from the catalog");
    cr_expect_str_eq(label(&in, "topology.k8s.aws/zone-id"), "usw2-az1");
    cr_expect_eq(kp_resource_list_milli(&in.capacity, "cpu"), 2000);
    cr_expect_eq(in.created_ns, INT64_C(1767225600) * KP_NS_PER_SEC);
    cr_expect_eq(cp->ops->get(cp, "aws:///us-west-2a/i-2", fx.arena, &in), KP_ENOTFOUND);
    cr_expect_eq(cp->ops->get(cp, "aws:///us-west-2a/i-3", fx.arena, &in), KP_ENOTFOUND);
    cr_expect_eq(cp->ops->get(cp, "kwok://node", fx.arena, &in), KP_ENOTFOUND);
    cr_expect_eq(requests(), 3, "a foreign provider ID asks nothing");
}

Test(aws_provider, list_finds_the_clusters_instances)
{
    answer(
        200,
        instances(fmt(
            "%s%s%s", instance_xml("i-1", "m5.large", "running", "ami-x86", "subnet-a", ours("a")),
            instance_xml("i-2", "m6g.large", "shutting-down", "ami-arm", "subnet-b", ours("b")),
            instance_xml("i-3", "x9.huge", "pending", "ami-x", "subnet-b",
                         fmt("%s%s", tagxml("karpenter.sh/nodepool", "p2"),
                             tagxml("karpenter.k8s.aws/ec2nodeclass", "gone"))))));
    start();
    provider();
    kp_cloud_instance *all = NULL;
    uint32_t n = 0;
    cr_assert_eq(cp->ops->list(cp, fx.arena, &all, &n), 0, "%s", kp_error_last());
    cr_expect_null(sent(0, "InstanceId.1"));
    cr_expect_str_eq(filter(0, "tag:eks:eks-cluster-name"), "c1");
    cr_expect_str_eq(sent(0, "Filter.2.Name"), "tag-key");
    cr_expect_str_eq(sent(0, "Filter.2.Value.1"), "karpenter.sh/nodepool");
    cr_expect_str_eq(sent(0, "Filter.3.Value.1"), "karpenter.k8s.aws/ec2nodeclass");
    cr_assert_eq(n, 3);
    cr_expect_not(all[0].terminating);
    cr_expect(all[1].terminating);
    cr_expect_str_eq(label(&all[1], "kubernetes.io/arch"), "arm64");
    cr_expect_str_eq(all[2].nodepool, "p2");
    cr_expect_null(all[2].nodeclaim);
    cr_expect_str_eq(label(&all[2], "node.kubernetes.io/instance-type"), "x9.huge",
                     "unknown class: the basic labels");
    cr_expect_eq(all[2].capacity.count, 0);
}

/* ----------------------------------------------------------------- delete */

Test(aws_provider, delete_terminates_once)
{
    answer(200, instances(instance_xml("i-1", "m5.large", "running", "ami-x86", "subnet-a",
                                       ours("claim-1"))));
    answer(200, "<TerminateInstancesResponse><instancesSet><item><instanceId>i-1</instanceId>"
                "<currentState><name>shutting-down</name></currentState></item></instancesSet>"
                "</TerminateInstancesResponse>");
    answer(200, instances(instance_xml("i-1", "m5.large", "shutting-down", "ami-x86", "subnet-a",
                                       ours("claim-1"))));
    answer(200, instances(""));
    answer(200, instances(instance_xml("i-9", "m5.large", "pending", "ami-x86", "subnet-a",
                                       ours("lost"))));
    answer(200, "<TerminateInstancesResponse><instancesSet/></TerminateInstancesResponse>");
    start();
    provider();
    kp_nodeclaim c = *claim("claim-1", "\"m5.large\"", "spot");
    c.provider_id = "aws:///us-west-2a/i-1";
    cr_assert_eq(cp->ops->delete_instance(cp, &c), 0, "%s", kp_error_last());
    cr_expect_str_eq(action(1), "TerminateInstances");
    cr_expect_str_eq(sent(1, "InstanceId.1"), "i-1");
    cr_expect_eq(cp->ops->delete_instance(cp, &c), 0, "shutting down: nothing more to do");
    cr_expect_eq(requests(), 3);
    cr_expect_eq(cp->ops->delete_instance(cp, &c), KP_ENOTFOUND, "gone");
    /* no provider ID: found by its nodeclaim tag */
    kp_nodeclaim lost = *claim("lost", "\"m5.large\"", "spot");
    cr_assert_eq(cp->ops->delete_instance(cp, &lost), 0, "%s", kp_error_last());
    cr_expect_str_eq(filter(4, "tag:karpenter.sh/nodeclaim"), "lost");
    cr_expect_str_eq(filter(4, "tag:eks:eks-cluster-name"), "c1");
    cr_expect_str_eq(sent(5, "InstanceId.1"), "i-9");
}

/* ------------------------------------------------------ types and drift */

Test(aws_provider, instance_types_per_pool)
{
    start();
    provider();
    kp_nodepool pool;
    memset(&pool, 0, sizeof(pool));
    pool.meta.name = "p";
    pool.template.has_node_class_ref = true;
    pool.template.node_class_ref.name = "default";
    const kp_catalog *cat = NULL;
    cr_assert_eq(cp->ops->instance_types(cp, &pool, &cat), 0, "%s", kp_error_last());
    cr_expect_eq(cat->count, 3);
    cr_expect_not_null(kp_catalog_find(cat, "m6g.large"));
    pool.template.node_class_ref.name = "missing";
    cr_expect_eq(cp->ops->instance_types(cp, &pool, &cat), KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "nodepool p") != NULL, "%s", kp_error_last());
    cr_assert_eq(cp->ops->instance_types(cp, NULL, &cat), 0, "%s", kp_error_last());
    cr_expect_eq(cat->count, 3);
}

static const char *hash_tags(const char *hash)
{
    return fmt(
        "%s%s%s", ours("c"), tagxml("karpenter.k8s.aws/ec2nodeclass-hash", hash),
        tagxml("karpenter.k8s.aws/ec2nodeclass-hash-version", KP_AWS_NODECLASS_HASH_VERSION));
}

Test(aws_provider, drift_reasons)
{
    /* the class carries its current hash, as the hash controller writes it */
    const char *current = NULL;
    {
        cJSON *doc = cJSON_Parse(classes[0][1]);
        kp_ec2nodeclass nc;
        cr_assert_eq(kp_decode_ec2nodeclass(fx.arena, doc, &nc), 0);
        cJSON_Delete(doc);
        current = fmt("%" PRIu64, kp_aws_nodeclass_hash(&nc));
    }
    classes[0][1] = fmt("{\"metadata\":{\"name\":\"default\",\"generation\":1,\"annotations\":{"
                        "\"karpenter.k8s.aws/ec2nodeclass-hash\":\"%s\","
                        "\"karpenter.k8s.aws/ec2nodeclass-hash-version\":\"%s\"}},\"spec\":{"
                        "\"amiFamily\":\"AL2023\"}," READY_STATUS "}",
                        current, KP_AWS_NODECLASS_HASH_VERSION);
    answer(200, instances(instance_xml("i-1", "m5.large", "running", "ami-x86", "subnet-a",
                                       hash_tags(current))));
    answer(200, instances(instance_xml("i-1", "m5.large", "running", "ami-x86", "subnet-a",
                                       hash_tags("12345"))));
    answer(200, instances(instance_xml("i-1", "m5.large", "running", "ami-old", "subnet-a",
                                       hash_tags(current))));
    answer(200, instances(instance_xml("i-1", "m5.large", "running", "ami-x86", "subnet-z",
                                       hash_tags(current))));
    const char *with_groups = instance_xml("i-1", "m5.large", "running", "ami-x86", "subnet-a", hash_tags(current));
    const char *at = strstr(with_groups, "<tagSet>");
    answer(200, instances(fmt("%.*s<groupSet><item><groupId>sg-1</groupId></item></groupSet>%s",
                              (int)(at - with_groups), with_groups, at)));
    answer(200, instances(fmt("%.*s<groupSet><item><groupId>sg-9</groupId></item></groupSet>%s",
                              (int)(at - with_groups), with_groups, at)));
    start();
    provider();
    kp_nodeclaim c = *claim("c", "\"m5.large\"", "spot");
    c.provider_id = "aws:///us-west-2a/i-1";
    const char *why = "unset";
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0, "%s", kp_error_last());
    cr_expect_null(why);
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0);
    cr_expect_str_eq(why, "NodeClassDrift");
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0);
    cr_expect_str_eq(why, "AMIDrift");
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0);
    cr_expect_str_eq(why, "SubnetDrift");
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0);
    cr_expect_null(why, "the class's own security group: no drift");
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0);
    cr_expect_str_eq(why, "SecurityGroupDrift");
    kp_nodeclaim orphan = c;
    orphan.spec.node_class_ref.name = "missing";
    cr_assert_eq(cp->ops->is_drifted(cp, &orphan, fx.arena, &why), 0);
    cr_expect_null(why, "no class: not drifted");
    cr_expect_eq(requests(), 6);
}

/* ---------------------------------------------------- outside the table */

Test(aws_provider, node_class_status_and_upkeep)
{
    answer(200, subnets(subnet("subnet-a", "us-west-2a", "usw2-az1", 10)));
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates",
                             "<item><launchTemplateId>lt-a</launchTemplateId><launchTemplateName>"
                             "karpenter.k8s.aws/1</launchTemplateName></item>"));
    answer(200, "<DeleteLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-a"
                "</launchTemplateId></launchTemplate></DeleteLaunchTemplateResponse>");
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates", ""));
    start();
    provider();
    cJSON *st = NULL;
    const kp_ec2nodeclass *nc =
        nodeclass("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"instanceProfile\":\"p\","
                  "\"subnetSelectorTerms\":[{\"id\":\"subnet-a\"}]}}");
    cr_assert_eq(kp_aws_provider_resolve_nodeclass(cp, nc, fx.arena, &st), 0, "%s",
                 kp_error_last());
    cr_expect_str_eq(jstr_at(st, "subnets.0.zoneID"), "usw2-az1");
    cJSON_Delete(st);
    cr_assert_eq(kp_aws_provider_hydrate(cp), 0, "%s", kp_error_last());
    cr_expect_eq(kp_aws_provider_maintain(cp), 0, "just hydrated: in use");
    fx.clock.ns += 61 * KP_NS_PER_SEC;
    cr_expect_eq(kp_aws_provider_maintain(cp), 1);
    cr_expect_str_eq(sent(2, "LaunchTemplateId"), "lt-a");
    cr_expect_eq(kp_aws_provider_delete_nodeclass(cp, "n", NULL), 0);
    cr_expect_str_eq(filter(3, "tag:karpenter.k8s.aws/ec2nodeclass"), "n");
    cr_expect_eq(requests(), 4, "no uid: no instance profile is looked for");
    kp_interruption_source *src = NULL;
    cr_expect_eq(kp_aws_provider_interruption_source(cp, &src), KP_ENOTFOUND, "no queue");
    cr_expect_not_null(kp_aws_provider_prices(cp));
}

/* A ListInstanceProfiles answer with profiles `name` (holding `role`, NULL: none)
 * under the path of class uid-1, and one under another class's path. */
static const char *iam_listed(const char *name1, const char *role1, const char *name2,
                              const char *role2)
{
    const char *member = "<member><Path>/karpenter/us-west-2/c1/uid-1/</Path>"
                         "<InstanceProfileName>%s</InstanceProfileName><Roles>%s</Roles></member>"
                         "<member><Path>/karpenter/us-west-2/c1/uid-10/</Path>"
                         "<InstanceProfileName>other</InstanceProfileName><Roles><member>"
                         "<RoleName>x</RoleName></member></Roles></member>";
    const char *roles1 = role1 ? fmt("<member><RoleName>%s</RoleName></member>", role1) : "";
    const char *roles2 = role2 ? fmt("<member><RoleName>%s</RoleName></member>", role2) : "";
    const char *items = fmt(member, name1, roles1);
    if (name2) items = fmt("%s%s", items, fmt(member, name2, roles2));
    return fmt("<ListInstanceProfilesResponse><ListInstanceProfilesResult><IsTruncated>false"
               "</IsTruncated><InstanceProfiles>%s</InstanceProfiles></ListInstanceProfilesResult>"
               "</ListInstanceProfilesResponse>",
               items);
}

/* The finalizer deletes the templates, then every profile under the class's path:
 * roles out first (IAM refuses to delete a profile that holds one). A profile the
 * answer has under another path (an emulator ignoring PathPrefix) is left alone. */
Test(aws_provider, deleting_a_class_deletes_its_instance_profiles)
{
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates", ""));
    answer(200, iam_listed("c1_1", "old", "c1_2", "node"));
    answer(200, iam_ok("RemoveRoleFromInstanceProfile"));
    answer(200, iam_ok("DeleteInstanceProfile"));
    answer(404, iam_error("NoSuchEntity")); /* someone removed the role meanwhile */
    answer(404, iam_error("NoSuchEntity")); /* ... and the profile */
    start();
    provider();
    cr_assert_eq(kp_aws_provider_delete_nodeclass(cp, "n", "uid-1"), 0, "%s", kp_error_last());
    cr_assert_eq(requests(), 6);
    cr_expect_str_eq(action(1), "ListInstanceProfiles");
    cr_expect_str_eq(sent(1, "PathPrefix"), "/karpenter/us-west-2/c1/uid-1/");
    cr_expect_str_eq(action(2), "RemoveRoleFromInstanceProfile");
    cr_expect_str_eq(sent(2, "InstanceProfileName"), "c1_1");
    cr_expect_str_eq(sent(2, "RoleName"), "old");
    cr_expect_str_eq(action(3), "DeleteInstanceProfile");
    cr_expect_str_eq(sent(3, "InstanceProfileName"), "c1_1");
    cr_expect_str_eq(sent(4, "RoleName"), "node");
    cr_expect_str_eq(action(5), "DeleteInstanceProfile");
    cr_expect_str_eq(sent(5, "InstanceProfileName"), "c1_2");
}

/* Not allowed to look: the finalizer stays, with IAM's words. */
Test(aws_provider, a_profile_that_cannot_be_deleted_keeps_the_finalizer)
{
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates", ""));
    answer(403, iam_error("AccessDenied"));
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates", ""));
    answer(200, iam_listed("c1_1", NULL, NULL, NULL));
    answer(409, iam_error("DeleteConflict"));
    start();
    provider();
    int err = kp_aws_provider_delete_nodeclass(cp, "n", "uid-1");
    cr_expect_lt(err, 0);
    cr_expect(strstr(kp_error_last(), "AccessDenied"), "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "/karpenter/us-west-2/c1/uid-1/"), "%s", kp_error_last());
    err = kp_aws_provider_delete_nodeclass(cp, "n", "uid-1");
    cr_expect_lt(err, 0);
    cr_expect(strstr(kp_error_last(), "c1_1"), "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "DeleteConflict"), "%s", kp_error_last());
    cr_expect_str_eq(action(4), "DeleteInstanceProfile",
                     "a profile without roles is deleted at once");
}

Test(aws_provider, interruption_source_for_the_queue)
{
    start();
    kp_aws_provider_opts o = KP_AWS_PROVIDER_OPTS_INIT;
    o.region = "us-west-2";
    o.cluster_name = "c1";
    o.endpoint_url = fx.server.url;
    o.credentials = fx.creds;
    o.lookup = lookup;
    o.interruption_queue = "karpenter-c1";
    cr_assert_eq(kp_aws_provider_new(&o, &cp), 0);
    kp_interruption_source *src = NULL;
    cr_assert_eq(kp_aws_provider_interruption_source(cp, &src), 0, "%s", kp_error_last());
    cr_expect_not_null(src->ops->name(src));
    kp_interruption_source_free(src);
    cr_expect_eq(requests(), 0, "no network until the first receive");
}

Test(aws_provider, options_and_provider_ids)
{
    kp_aws_provider_opts o = KP_AWS_PROVIDER_OPTS_INIT;
    o.region = "us-west-2";
    o.lookup = lookup;
    cr_expect_eq(kp_aws_provider_new(&o, &cp), KP_EINVALID, "no cluster name");
    o.cluster_name = "c1";
    o.lookup = NULL;
    cr_expect_eq(kp_aws_provider_new(&o, &cp), KP_EINVALID, "no lookup");
    cr_expect_null(cp);
    cr_expect_str_eq(kp_aws_provider_id(fx.arena, "us-west-2a", "i-1"), "aws:///us-west-2a/i-1");
    const char *zone = NULL, *id = NULL;
    cr_assert_eq(kp_aws_parse_provider_id(fx.arena, "aws:///us-west-2a/i-0abc", &zone, &id), 0);
    cr_expect_str_eq(zone, "us-west-2a");
    cr_expect_str_eq(id, "i-0abc");
    const char *bad[] = {"aws://us-west-2a/i-1",
                         "aws:///i-1",
                         "aws:////i-1",
                         "aws:///z/",
                         "aws:///z/i-1/x",
                         "kwok://n",
                         ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        cr_expect_eq(kp_aws_parse_provider_id(fx.arena, bad[i], &zone, &id), KP_EINVALID, "%s",
                     bad[i]);
    cr_expect_eq(kp_aws_parse_provider_id(fx.arena, NULL, &zone, &id), KP_EINVALID);
}
