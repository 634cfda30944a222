/*
 * The AWS provider's EC2NodeClass launch settings end to end through the
 * cloud-provider table, on the in-process double (moto has no capacity
 * reservations, placement groups or DryRun): a claim launched into a
 * capacity reservation (the reserved offering is the cheapest in the
 * class's catalog and the one launched; its count goes down with the launch
 * and up with the termination; the node is labelled), CapacityReservationDrift,
 * placement groups (template, labels, PlacementGroupDrift), and
 * ValidationSucceeded from the dry-run checks (and DISABLE_DRY_RUN).
 */
#include <math.h>

#include "cloud/aws/capacityreservation.h"
#include "test_aws_provider_env.h"

#define CR_STATUS                                                                                  \
    "\"capacityReservations\":[{\"id\":\"cr-1\",\"availabilityZone\":\"us-west-2a\","              \
    "\"instanceType\":\"m5.large\",\"ownerID\":\"123456789012\",\"instanceMatchCriteria\":"         \
    "\"targeted\"}],"

/* READY_STATUS with the reservation listed first. */
static const char *reserved_class(const char *name, const char *spec)
{
    const char *ready = READY_STATUS;
    const char *body = strchr(ready, '{') + 1; /* after "status":{ */
    return fmt("{\"metadata\":{\"name\":\"%s\",\"generation\":1},\"spec\":{\"amiFamily\":"
               "\"AL2023\",\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}]%s},\"status\":{"
               CR_STATUS "%s}",
               name, spec, body);
}

static void setup(void)
{
    fx_init();
    memset(classes, 0, sizeof(classes));
    cp = NULL;
}

static void teardown(void)
{
    cp = kp_cloud_free(cp);
    fx_fini();
}

TestSuite(aws_provider_features, .init = setup, .fini = teardown);

static const kp_nodeclaim *claim_for(const char *klass, const char *cts)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"claim-1\",\"labels\":{\"karpenter.sh/"
                         "nodepool\":\"pool\"}},\"spec\":{\"nodeClassRef\":{\"group\":"
                         "\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"%s\"},"
                         "\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\","
                         "\"operator\":\"In\",\"values\":[\"m5.large\",\"c5.large\"]},{\"key\":"
                         "\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[%s]}]}}",
                         klass, cts));
}

static const char *label(const kp_cloud_instance *in, const char *key)
{
    const char *v = kp_labels_get(&in->labels, key);
    return v ? v : "<absent>";
}

static void answer_launch(const char *zone, const char *subnet_id)
{
    answer(200, subnets(fmt("%s%s", subnet("subnet-a", "us-west-2a", "usw2-az1", 10),
                            subnet("subnet-b", "us-west-2b", "usw2-az2", 20))));
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-1"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    answer(200, fleet(fleet_instance("i-0abc", "m5.large", zone, subnet_id, "on-demand"), ""));
}

/* A DescribeInstances answer: i-0abc launched into reservation `cr` (NULL: none). */
static const char *reserved_instance(const char *cr, const char *pref, const char *extra)
{
    return instances(fmt(
        "<item><instanceId>i-0abc</instanceId><imageId>ami-x86</imageId><instanceState><name>"
        "running</name></instanceState><instanceType>m5.large</instanceType><launchTime>"
        "2026-01-01T00:00:00.000Z</launchTime><placement><availabilityZone>us-west-2a"
        "</availabilityZone>%s</placement><subnetId>subnet-a</subnetId>%s%s<tagSet>%s</tagSet>"
        "</item>",
        extra, cr ? fmt("<capacityReservationId>%s</capacityReservationId>", cr) : "",
        pref ? fmt("<capacityReservationSpecification><capacityReservationPreference>%s"
                   "</capacityReservationPreference></capacityReservationSpecification>",
                   pref)
             : "",
        ours("claim-1")));
}

static const kp_offering *cheapest(const kp_instance_type *t)
{
    const kp_offering *best = NULL;
    for (uint32_t i = 0; i < t->n_offerings; i++)
        if (t->offerings[i].available && (!best || t->offerings[i].price < best->price))
            best = &t->offerings[i];
    return best;
}

Test(aws_provider_features, capacity_reservation_launch_preferred_and_count_tracked)
{
    add_class("default", reserved_class("default", ""));
    answer_launch("us-west-2a", "subnet-a");
    answer(200, reserved_instance("cr-1", "capacity-reservations-only", ""));
    answer(200, "<TerminateInstancesResponse><instancesSet><item><instanceId>i-0abc</instanceId>"
                "<currentState><name>shutting-down</name></currentState></item></instancesSet>"
                "</TerminateInstancesResponse>");
    start();
    provider();
    kp_aws_reservations *crs = kp_aws_provider_reservations(cp);
    cr_assert_not_null(crs);
    kp_aws_crs_set_available(crs, "cr-1", 2);
    /* the catalog the solver reads: the reservation is m5.large's cheapest offering */
    kp_nodepool pool = {0};
    pool.meta.name = "pool";
    pool.template.has_node_class_ref = true;
    pool.template.node_class_ref.name = "default";
    const kp_catalog *cat = NULL;
    cr_assert_eq(cp->ops->instance_types(cp, &pool, &cat), 0, "%s", kp_error_last());
    const kp_offering *best = cheapest(kp_catalog_find(cat, "m5.large"));
    cr_assert_not_null(best);
    cr_expect_str_eq(best->capacity_type, "reserved");
    cr_expect_str_eq(best->reservation_id, "cr-1");
    cr_expect_lt(best->price, 1e-6);
    /* the launch takes the reservation */
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, claim_for("default", "\"reserved\",\"on-demand\""), fx.arena,
                                 &in),
                 0, "%s", kp_error_last());
    cr_expect_str_eq(in.capacity_type, "reserved");
    cr_expect_str_eq(label(&in, "karpenter.sh/capacity-type"), "reserved");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/capacity-reservation-id"), "cr-1");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/capacity-reservation-type"), "default");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/capacity-reservation-interruptible"), "false");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 1, "one place taken");
    size_t f = requests() - 1;
    cr_expect_str_eq(action(f), "CreateFleet");
    cr_expect_str_eq(sent(f, "LaunchTemplateConfigs.1.Overrides.1.InstanceType"), "m5.large");
    cr_expect_str_eq(sent(f, "LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone"),
                     "us-west-2a");
    cr_expect_null(sent(f, "LaunchTemplateConfigs.1.Overrides.2.InstanceType"));
    /* termination gives the place back */
    kp_nodeclaim c = *claim_for("default", "\"reserved\"");
    c.provider_id = in.provider_id;
    cr_assert_eq(cp->ops->delete_instance(cp, &c), 0, "%s", kp_error_last());
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 2);
}

Test(aws_provider_features, capacity_reservation_get_labels_and_drift)
{
    add_class("default", reserved_class("default", ""));
    add_class("gone", "{\"metadata\":{\"name\":\"gone\",\"generation\":1},\"spec\":{"
                      "\"amiFamily\":\"AL2023\"}," READY_STATUS "}");
    answer(200, reserved_instance("cr-1", "capacity-reservations-only", ""));
    answer(200, reserved_instance("cr-1", "capacity-reservations-only", ""));
    answer(200, reserved_instance("cr-1", "open", "")); /* landed in an open ODCR: on-demand */
    answer(200, reserved_instance("cr-1", "capacity-reservations-only", ""));
    start();
    provider();
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->get(cp, "aws:///us-west-2a/i-0abc", fx.arena, &in), 0, "%s",
                 kp_error_last());
    cr_expect_str_eq(in.capacity_type, "reserved");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/capacity-reservation-id"), "cr-1");
    kp_nodeclaim c = *claim_for("default", "\"reserved\"");
    c.provider_id = "aws:///us-west-2a/i-0abc";
    const char *why = NULL;
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0, "%s", kp_error_last());
    cr_expect_null(why, "the class still selects cr-1");
    cr_assert_eq(cp->ops->get(cp, "aws:///us-west-2a/i-0abc", fx.arena, &in), 0);
    cr_expect_str_eq(in.capacity_type, "on-demand");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/capacity-reservation-id"), "<absent>");
    c.spec.node_class_ref.name = "gone";
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0, "%s", kp_error_last());
    cr_expect_str_eq(why, "CapacityReservationDrift");
}

/* ------------------------------------------------------- placement groups */

static const char *pg_answer(const char *id, const char *strategy)
{
    return ec2_response("DescribePlacementGroups", "placementGroupSet",
                        fmt("<item><groupName>training</groupName><strategy>%s</strategy><state>"
                            "available</state><groupId>%s</groupId></item>",
                            strategy, id));
}

Test(aws_provider_features, placement_group_launch_label_and_drift)
{
    add_class("pg", reserved_class("pg", ",\"placementGroupSelector\":{\"name\":\"training\"}"));
    answer(200, pg_answer("pg-0123", "cluster"));
    answer_launch("us-west-2b", "subnet-b");
    answer(200, reserved_instance(NULL, NULL, "<groupId>pg-0123</groupId>"));
    answer(200, reserved_instance(NULL, NULL, "<groupId>pg-0123</groupId>"));
    start();
    provider();
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, claim_for("pg", "\"on-demand\""), fx.arena, &in), 0, "%s",
                 kp_error_last());
    cr_expect_str_eq(action(0), "DescribePlacementGroups");
    cr_expect_str_eq(sent(0, "GroupName.1"), "training");
    cr_expect_str_eq(label(&in, "karpenter.k8s.aws/placement-group-id"), "pg-0123");
    size_t lt = 3;
    cr_expect_str_eq(action(lt), "CreateLaunchTemplate");
    cr_expect_str_eq(sent(lt, "LaunchTemplateData.Placement.GroupId"), "pg-0123");
    kp_nodeclaim c = *claim_for("pg", "\"on-demand\"");
    c.provider_id = "aws:///us-west-2a/i-0abc";
    kp_label l[] = {{"karpenter.k8s.aws/placement-group-id", "pg-0123"},
                    {"karpenter.sh/nodepool", "pool"}};
    c.meta.labels = (kp_labels){l, 2};
    const char *why = NULL;
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0, "%s", kp_error_last());
    cr_expect_null(why);
    l[0].value = "pg-old";
    cr_assert_eq(cp->ops->is_drifted(cp, &c, fx.arena, &why), 0, "%s", kp_error_last());
    cr_expect_str_eq(why, "PlacementGroupDrift");
    cr_expect_eq(requests(), 7, "the group was looked up once (cached)");
}

/* --------------------------------------------------------------- dry run */

#define DRY_RUN_CLASS                                                                              \
    "{\"metadata\":{\"name\":\"v\",\"generation\":1},\"spec\":{\"amiFamily\":\"AL2023\","          \
    "\"instanceProfile\":\"prof\",\"subnetSelectorTerms\":[{\"id\":\"subnet-a\"}],"                \
    "\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"amiSelectorTerms\":[{\"id\":"            \
    "\"ami-x86\"}]}}"

static void answer_resolution(void)
{
    answer(200, subnets(subnet("subnet-a", "us-west-2a", "usw2-az1", 10)));
    answer(200, groups(group("sg-1", "g")));
    answer(200, images(image("ami-x86", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
}

static const cJSON *condition(const cJSON *st, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(st, "conditions"))
    {
        if (strcmp(jstr_at(c, "type"), type) == 0) return c;
    }
    cr_assert_fail("no %s condition", type);
    return NULL;
}

static cJSON *resolve_class(const char *json)
{
    cJSON *st = NULL;
    cr_assert_eq(kp_aws_provider_resolve_nodeclass(cp, nodeclass(json), fx.arena, &st), 0, "%s",
                 kp_error_last());
    return st;
}

static const char *dry_run_ok(void)
{
    return ec2_error("DryRunOperation", "Request would have succeeded, but DryRun flag is set.");
}

Test(aws_provider_features, dry_run_checks_pass_and_are_cached)
{
    answer_resolution();
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-v"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    answer(412, dry_run_ok());
    answer(412, dry_run_ok());
    start();
    provider();
    cJSON *st = resolve_class(DRY_RUN_CLASS);
    const cJSON *v = condition(st, "ValidationSucceeded");
    cr_expect_str_eq(jstr_at(v, "status"), "True", "%s", jstr_at(v, "message"));
    cr_expect_str_eq(jstr_at(condition(st, "Ready"), "status"), "True");
    cJSON_Delete(st);
    cr_expect_str_eq(action(4), "CreateLaunchTemplate");
    cr_expect_str_eq(action(5), "CreateFleet");
    cr_expect_str_eq(sent(5, "DryRun"), "true");
    cr_expect_str_eq(sent(5, "LaunchTemplateConfigs.1.Overrides.1.InstanceType"), "m5.large");
    cr_expect_str_eq(sent(5, "LaunchTemplateConfigs.1.Overrides.1.SubnetId"), "subnet-a");
    cr_expect_str_eq(action(6), "RunInstances");
    cr_expect_str_eq(sent(6, "DryRun"), "true");
    cr_expect_str_eq(sent(6, "SubnetId"), "subnet-a");
    st = resolve_class(DRY_RUN_CLASS);
    cr_expect_str_eq(jstr_at(condition(st, "ValidationSucceeded"), "status"), "True");
    cJSON_Delete(st);
    cr_expect_eq(requests(), 7, "the result is cached");
}

Test(aws_provider_features, dry_run_create_fleet_refused_with_aws_code_and_message)
{
    answer_resolution();
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-v"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    answer(403, ec2_error("UnauthorizedOperation",
                          "You are not authorized to perform this operation. User: arn:aws:sts::1"
                          ":assumed-role/K is not authorized to perform: ec2:CreateFleet"));
    start();
    provider();
    cJSON *st = resolve_class(DRY_RUN_CLASS);
    const cJSON *v = condition(st, "ValidationSucceeded");
    cr_expect_str_eq(jstr_at(v, "status"), "False");
    cr_expect_str_eq(jstr_at(v, "reason"), "CreateFleetAuthCheckFailed");
    cr_expect(strstr(jstr_at(v, "message"), "Controller isn't authorized to call ec2:CreateFleet: "
                                            "UnauthorizedOperation: You are not authorized") !=
                  NULL,
              "%s", jstr_at(v, "message"));
    cr_expect_str_eq(jstr_at(condition(st, "Ready"), "status"), "False");
    cJSON_Delete(st);
}

Test(aws_provider_features, dry_run_run_instances_and_create_launch_template_refused)
{
    answer_resolution();
    answer(403, ec2_error("UnauthorizedOperation", "not allowed: ec2:DescribeLaunchTemplates"));
    start();
    provider();
    cJSON *st = resolve_class(DRY_RUN_CLASS);
    const cJSON *v = condition(st, "ValidationSucceeded");
    cr_expect_str_eq(jstr_at(v, "reason"), "CreateLaunchTemplateAuthCheckFailed");
    cJSON_Delete(st);
}

Test(aws_provider_features, dry_run_run_instances_refused)
{
    answer_resolution();
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-v"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    answer(412, dry_run_ok());
    answer(403, ec2_error("UnauthorizedOperation", "not authorized to perform: ec2:RunInstances"));
    start();
    provider();
    cJSON *st = resolve_class(DRY_RUN_CLASS);
    const cJSON *v = condition(st, "ValidationSucceeded");
    cr_expect_str_eq(jstr_at(v, "reason"), "RunInstancesAuthCheckFailed");
    cr_expect(strstr(jstr_at(v, "message"), "ec2:RunInstances") != NULL);
    cJSON_Delete(st);
}

Test(aws_provider_features, dry_run_throttled_is_retried)
{
    answer_resolution();
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-v"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    answer(503, ec2_error("RequestLimitExceeded", "Request limit exceeded."));
    start();
    provider();
    cJSON *st = NULL;
    cr_expect_eq(kp_aws_provider_resolve_nodeclass(cp, nodeclass(DRY_RUN_CLASS), fx.arena, &st),
                 KP_ERETRY);
    cr_expect_null(st);
}

static void no_dry_run(kp_aws_provider_opts *o)
{
    o->disable_dry_run = true;
}

Test(aws_provider_features, dry_run_disabled)
{
    answer_resolution();
    start();
    provider_with(no_dry_run);
    cJSON *st = resolve_class(DRY_RUN_CLASS);
    cr_expect_str_eq(jstr_at(condition(st, "ValidationSucceeded"), "status"), "True");
    cJSON_Delete(st);
    cr_expect_eq(requests(), 3, "no launch template, no dry runs");
}

Test(aws_provider_features, dry_run_not_honored_by_an_emulator)
{
    answer_resolution();
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-v"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    answer(200, fleet(fleet_instance("i-oops", "m5.large", "us-west-2a", "subnet-a", "on-demand"),
                      ""));
    start();
    provider();
    cJSON *st = resolve_class(DRY_RUN_CLASS);
    const cJSON *v = condition(st, "ValidationSucceeded");
    cr_expect_str_eq(jstr_at(v, "reason"), "DryRunNotHonored");
    cr_expect(strstr(jstr_at(v, "message"), "DISABLE_DRY_RUN") != NULL, "%s", jstr_at(v, "message"));
    cJSON_Delete(st);
    st = resolve_class(DRY_RUN_CLASS);
    cJSON_Delete(st);
    cr_expect_eq(requests(), 6, "said once, not retried every minute");
}
