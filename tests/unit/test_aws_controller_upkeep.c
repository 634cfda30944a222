/*
 * The controller's AWS upkeep loop (controller/cloud_aws.c) with a fake API
 * server and the AWS double (moto has no capacity reservations): over this
 * provider's NodeClaims only, the instance of a registered node gets its
 * Name tag and the claim the tagged annotations, a claim in a capacity block
 * about to end is deleted, a reserved claim and node whose instance is
 * on-demand again lose the reservation labels, the node's real memory
 * reaches the catalog, and an orphaned instance profile goes. A claim of
 * another provider is left alone.
 */
#include "cloud/aws/capacityreservation.h"
#include "controller/cloud_aws.h"
#include "controller/nodeclass_ctrl.h"
#include "helpers/fake_apiserver.h"
#include "kube/informer.h"
#include "test_aws_provider_fixture.h"

#include "cloud/aws/provider.h"

static fake_api *fa;
static kp_kube_client *kube;
static kp_ctrl c;

#define CLAIMS  "/apis/karpenter.sh/v1/nodeclaims"
#define NODES   "/api/v1/nodes"
#define CLASSES "/apis/karpenter.k8s.aws/v1/ec2nodeclasses"

static void setup(void)
{
    fx_init();
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&kube, &cfg, &o), 0);
    memset(&c, 0, sizeof(c));
    kp_ctrl_opts_init(&c.opts);
    c.kube = kube;
    c.clock = &fx.clock.base;
}

static void teardown(void)
{
    for (int k = 0; k < KP_CK_COUNT; k++)
        c.informers[k] = kp_informer_free(c.informers[k]);
    c.cloud = kp_cloud_free(c.cloud);
    kp_kube_client_free(kube);
    fake_api_stop(fa);
    fx_fini();
}

TestSuite(aws_controller_upkeep, .init = setup, .fini = teardown, .timeout = 60);

static void watch(enum kp_ctrl_kind kind, enum kp_kube_res res)
{
    kp_informer_opts io = KP_INFORMER_OPTS_INIT;
    c.informers[kind] = kp_informer_new(kube, res, &io);
    cr_assert_eq(kp_informer_start(c.informers[kind]), 0);
    cr_assert_eq(kp_informer_wait_synced(c.informers[kind], 10000), 0);
}

static void objects(void)
{
    fake_api_put(fa, CLASSES,
                 "{\"metadata\":{\"name\":\"default\",\"uid\":\"u-live\",\"generation\":1},"
                 "\"spec\":{\"amiFamily\":\"AL2023\"},\"status\":{\"subnets\":[{\"id\":"
                 "\"subnet-a\",\"zone\":\"us-west-2a\"}],\"amis\":[{\"id\":\"ami-x86\","
                 "\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\","
                 "\"values\":[\"amd64\"]}]}]}}");
    const char *claim = "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"karpenter.sh/nodepool\":"
                        "\"pool\",\"karpenter.sh/capacity-type\":\"reserved\","
                        "\"karpenter.k8s.aws/capacity-reservation-id\":\"%s\","
                        "\"karpenter.k8s.aws/capacity-reservation-type\":\"%s\","
                        "\"node.kubernetes.io/instance-type\":\"m5.large\"}%s},"
                        "\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":"
                        "\"EC2NodeClass\",\"name\":\"default\"}},\"status\":{\"providerID\":"
                        "\"aws:///us-west-2a/%s\",\"nodeName\":\"%s\"}}";
    const char *tagged = ",\"annotations\":{\"karpenter.k8s.aws/tagged\":\"true\","
                         "\"compatibility.karpenter.k8s.aws/cluster-name-tagged\":\"true\"}";
    fake_api_put(fa, CLAIMS, fmt(claim, "block", "cr-b", "capacity-block", "", "i-0abc", "n-block"));
    fake_api_put(fa, CLAIMS, fmt(claim, "ended", "cr-old", "default", tagged, "i-0def", "n-ended"));
    fake_api_put(fa, CLAIMS,
                 "{\"metadata\":{\"name\":\"foreign\",\"labels\":{\"karpenter.sh/capacity-type\":"
                 "\"reserved\",\"karpenter.k8s.aws/capacity-reservation-id\":\"cr-b\"}},\"spec\":{"
                 "\"nodeClassRef\":{\"group\":\"karpenter.kwok.sh\",\"kind\":\"KWOKNodeClass\","
                 "\"name\":\"k\"}},\"status\":{\"providerID\":\"kwok://x\",\"nodeName\":\"x\"}}");
    const char *node = "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"karpenter.sh/registered\":"
                       "\"true\",\"karpenter.sh/capacity-type\":\"reserved\","
                       "\"karpenter.k8s.aws/capacity-reservation-id\":\"%s\"}},\"status\":{"
                       "\"capacity\":{\"memory\":\"7000Mi\"}}}";
    fake_api_put(fa, NODES, fmt(node, "n-block", "cr-b"));
    fake_api_put(fa, NODES, fmt(node, "n-ended", "cr-old"));
}

static const char *instance(const char *id, const char *cr, const char *tags)
{
    return fmt("<item><instanceId>%s</instanceId><instanceType>m5.large</instanceType>"
               "<instanceState><name>running</name></instanceState><placement><availabilityZone>"
               "us-west-2a</availabilityZone></placement>%s<tagSet>%s</tagSet></item>",
               id,
               cr ? fmt("<capacityReservationId>%s</capacityReservationId>"
                        "<capacityReservationSpecification><capacityReservationPreference>"
                        "capacity-reservations-only</capacityReservationPreference>"
                        "</capacityReservationSpecification>",
                        cr)
                  : "",
               tags);
}

static const char *reservations(void)
{
    return ec2_response(
        "DescribeCapacityReservations", "capacityReservationSet",
        "<item><capacityReservationId>cr-b</capacityReservationId><ownerId>123456789012"
        "</ownerId><availabilityZone>us-west-2a</availabilityZone><instanceType>m5.large"
        "</instanceType><availableInstanceCount>0</availableInstanceCount><state>active</state>"
        "<instanceMatchCriteria>targeted</instanceMatchCriteria><reservationType>capacity-block"
        "</reservationType><endDate>2026-01-01T00:30:00.000Z</endDate></item>");
}

static void answer_aws(void)
{
    const char *described = fmt("<DescribeInstancesResponse><reservationSet><item><instancesSet>"
                                "%s</instancesSet></item></reservationSet>"
                                "</DescribeInstancesResponse>",
                                instance("i-0abc", "cr-b", ""));
    answer(200, described);                                                   /* tagging */
    answer(200, "<CreateTagsResponse><return>true</return></CreateTagsResponse>");
    answer(200, reservations()); /* expiration: one query per reservation id */
    answer(200, reservations());
    answer(200, fmt("<DescribeInstancesResponse><reservationSet><item><instancesSet>%s%s"
                    "</instancesSet></item></reservationSet></DescribeInstancesResponse>",
                    instance("i-0abc", "cr-b", ""), instance("i-0def", NULL, "")));
    answer(200, "<DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>");
    answer(200, "<ListInstanceProfilesResponse><ListInstanceProfilesResult><IsTruncated>false"
                "</IsTruncated><InstanceProfiles><member><Path>/karpenter/us-west-2/c1/u-gone/"
                "</Path><InstanceProfileName>c1_gone</InstanceProfileName><Roles/></member>"
                "<member><Path>/karpenter/us-west-2/c1/u-live/</Path><InstanceProfileName>"
                "c1_live</InstanceProfileName><Roles/></member></InstanceProfiles>"
                "</ListInstanceProfilesResult></ListInstanceProfilesResponse>");
    answer(200, iam_ok("DeleteInstanceProfile"));
}

static void aws_provider(void)
{
    kp_aws_provider_opts o = KP_AWS_PROVIDER_OPTS_INIT;
    o.region = "us-west-2";
    o.cluster_name = "c1";
    o.cluster_endpoint = "https://api";
    o.cluster_cidr = "10.100.0.0/16";
    o.endpoint_url = fx.server.url;
    o.credentials = fx.creds;
    o.max_attempts = 1;
    o.lookup = kp_nodeclass_lookup;
    o.lookup_ctx = &c;
    o.clock = &fx.clock.base;
    cr_assert_eq(kp_aws_provider_new(&o, &c.cloud), 0, "%s", kp_error_last());
    static const char *const zones[] = {"us-west-2a"};
    const kp_aws_type_info *info = kp_aws_catalog_find("m5.large");
    kp_aws_type_row row = {.info = *info, .zones = zones, .n_zones = 1, .on_demand = true};
    kp_aws_instancetypes_set_rows(kp_aws_provider_instancetypes(c.cloud), &row, 1);
}

static const char *label_of(const char *path, const char *key)
{
    cJSON *o = fake_api_get(fa, path);
    const char *v = o ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(o, "metadata"), "labels"),
                            key))
                      : NULL;
    const char *copy = v ? fmt("%s", v) : "<absent>";
    cJSON_Delete(o);
    return copy;
}

Test(aws_controller_upkeep, name_tag_capacity_block_expiry_capacity_type_and_orphan_instance_profile)
{
    objects();
    answer_aws();
    start();
    aws_provider();
    watch(KP_CK_NODECLAIM, KP_RES_NODECLAIM);
    watch(KP_CK_NODE, KP_RES_NODE);
    watch(KP_CK_NODECLASS, KP_RES_EC2NODECLASS);
    int64_t due = INT64_MAX; /* no instance type fetch in this pass */
    int err = kp_cloud_aws_upkeep(&c, &due);
    cr_expect_eq(err, 0, "%s", kp_error_last());
    /* nodeclaim.tagging */
    size_t t = 1;
    cr_expect_str_eq(action(t), "CreateTags");
    cr_expect_str_eq(sent(t, "ResourceId.1"), "i-0abc");
    cr_expect_str_eq(sent(t, "Tag.1.Key"), "Name");
    cr_expect_str_eq(sent(t, "Tag.1.Value"), "n-block");
    cJSON *block = fake_api_get(fa, CLAIMS "/block");
    /* capacityreservation.expiration: the claim in the expiring block is gone */
    cr_expect_null(block, "deleted ahead of the capacity block's end");
    cJSON_Delete(block);
    fake_logged del;
    cr_expect(fake_api_find(fa, "DELETE", CLAIMS "/block", 0, &del));
    /* capacityreservation.capacitytype */
    cr_expect_str_eq(label_of(CLAIMS "/ended", "karpenter.sh/capacity-type"), "on-demand");
    cr_expect_str_eq(label_of(CLAIMS "/ended", "karpenter.k8s.aws/capacity-reservation-id"),
                     "<absent>");
    cr_expect_str_eq(label_of(NODES "/n-ended", "karpenter.sh/capacity-type"), "on-demand");
    cr_expect_str_eq(label_of(NODES "/n-ended", "karpenter.k8s.aws/capacity-reservation-id"),
                     "<absent>");
    /* the other provider's claim: never touched */
    cr_expect_eq(fake_api_count(fa, "PATCH", CLAIMS "/foreign"), 0);
    cr_expect_eq(fake_api_count(fa, "DELETE", CLAIMS "/foreign"), 0);
    cr_expect_str_eq(label_of(CLAIMS "/foreign", "karpenter.sh/capacity-type"), "reserved");
    /* instanceprofile.garbagecollection: only the gone class's profile */
    size_t last = requests() - 1;
    cr_expect_str_eq(sent(last, "Action"), "DeleteInstanceProfile");
    cr_expect_str_eq(sent(last, "InstanceProfileName"), "c1_gone");
    /* providers.instancetype.capacity: 7000Mi is less than the estimate for m5.large (7577Mi) */
    const kp_catalog *cat = NULL;
    kp_nodepool pool = {0};
    pool.template.has_node_class_ref = true;
    pool.template.node_class_ref.name = "default";
    cr_assert_eq(c.cloud->ops->instance_types(c.cloud, &pool, &cat), 0, "%s", kp_error_last());
    cr_expect_eq(kp_it_capacity(kp_catalog_find(cat, "m5.large"), "memory"),
                 INT64_C(7000) * 1024 * 1024 * 1000);
}
