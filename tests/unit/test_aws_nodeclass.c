/*
 * Node-class resolution against the in-process double: subnet and security
 * group selectors (tags with wildcards, ids, names; terms ORed and merged),
 * the order the status lists them in, the answer cache, instance profiles
 * from a role through IAM, and AWS failures and malformed answers.
 */
#include "cloud/aws/nodeclass.h"
#include "test_aws_provider_fixture.h"
#include "helpers/assert.h"

static kp_aws_nc_resolver *resolver;

static void setup(void)
{
    fx_init();
    kp_aws_nc_resolver_opts o = {.region = "us-west-2",
                                 .cluster_name = "c1",
                                 .kubernetes_version = "1.32",
                                 .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&resolver, &o), 0);
}

static void teardown(void)
{
    resolver = kp_aws_nc_resolver_free(resolver);
    fx_fini();
}

TestSuite(aws_nodeclass, .init = setup, .fini = teardown);

/* A class with the given spec members; an instance profile so IAM stays quiet. */
static const kp_ec2nodeclass *spec(const char *members)
{
    return nodeclass(fmt("{\"metadata\":{\"name\":\"nc\",\"uid\":\"u-1\",\"generation\":3},"
                         "\"spec\":{\"instanceProfile\":\"ip\"%s%s}}",
                         *members ? "," : "", members));
}

static cJSON *resolve(const kp_ec2nodeclass *nc)
{
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    KP_ASSERT_OK(kp_aws_nc_resolve(resolver, &c, nc, &st));
    return st;
}

static int resolve_err(const kp_ec2nodeclass *nc)
{
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    int err = kp_aws_nc_resolve(resolver, &c, nc, &st);
    cr_assert_null(st, "no status on error");
    return err;
}

/* The condition of `type` in a status. */
static const cJSON *condition(const cJSON *st, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(st, "conditions"))
    {
        if (strcmp(jstr_at(c, "type"), type) == 0) return c;
    }
    cr_assert_fail("no condition %s", type);
    return NULL;
}

/* ----------------------------------------------------------------- subnets */

Test(aws_nodeclass, subnets_by_tags_with_a_wildcard)
{
    answer(200, subnets(fmt("%s%s", subnet("subnet-1", "us-west-2a", "usw2-az1", 10),
                            subnet("subnet-2", "us-west-2b", "usw2-az2", 200))));
    start();
    cJSON *st = resolve(spec("\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":"
                             "\"c1\",\"Name\":\"*\"}}]"));
    cr_assert_eq(requests(), 1);
    cr_expect_str_eq(action(0), "DescribeSubnets");
    cr_expect_str_eq(filter(0, "tag:karpenter.sh/discovery"), "c1");
    cr_expect_str_eq(filter(0, "tag-key"), "Name", "a * value asks for the key only");
    cr_expect_null(filter(0, "tag:Name"));
    cr_expect_str_eq(sent(0, "MaxResults"), "500");
    /* most free IPs first; the IP count is not part of the status */
    cr_expect_str_eq(jstr_at(st, "subnets.0.id"), "subnet-2");
    cr_expect_str_eq(jstr_at(st, "subnets.0.zone"), "us-west-2b");
    cr_expect_str_eq(jstr_at(st, "subnets.0.zoneID"), "usw2-az2");
    cr_expect_str_eq(jstr_at(st, "subnets.1.id"), "subnet-1");
    cr_expect_null(jpath(st, "subnets.0.availableIPs"));
    cr_expect_str_eq(jstr_at(condition(st, "SubnetsReady"), "status"), "True");
    cJSON_Delete(st);
}

Test(aws_nodeclass, subnet_ids_share_one_query_and_terms_are_merged)
{
    answer(200, subnets(subnet("subnet-t", "us-west-2a", "usw2-az1", 5)));
    answer(200, subnets(fmt("%s%s", subnet("subnet-t", "us-west-2a", "usw2-az1", 5),
                            subnet("subnet-b", "us-west-2c", "usw2-az3", 5))));
    start();
    cJSON *st = resolve(spec("\"subnetSelectorTerms\":[{\"id\":\"subnet-t\"},{\"tags\":{\"a\":"
                             "\"b\"}},{\"id\":\"subnet-b\"}]"));
    cr_assert_eq(requests(), 2, "one query per tag term, one for all ids");
    cr_expect_str_eq(filter(0, "tag:a"), "b");
    cr_expect_str_eq(filter(1, "subnet-id"), "subnet-t,subnet-b");
    cr_expect_null(sent(1, "SubnetId.1"), "ids go in a filter, as Karpenter sends them");
    cr_assert_eq(cJSON_GetArraySize(jpath(st, "subnets")), 2, "subnet-t once");
    /* equal IP counts: by id */
    cr_expect_str_eq(jstr_at(st, "subnets.0.id"), "subnet-b");
    cr_expect_str_eq(jstr_at(st, "subnets.1.id"), "subnet-t");
    cJSON_Delete(st);
}

Test(aws_nodeclass, answers_are_cached_for_a_minute)
{
    answer(200, subnets(subnet("subnet-1", "us-west-2a", "usw2-az1", 10)));
    answer(200, subnets(subnet("subnet-9", "us-west-2a", "usw2-az1", 10)));
    start();
    const kp_ec2nodeclass *nc = spec("\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}]");
    cJSON *a = resolve(nc), *b = resolve(nc);
    cr_expect_eq(requests(), 1);
    cr_expect_str_eq(jstr_at(b, "subnets.0.id"), "subnet-1");
    fx.clock.ns += 61 * KP_NS_PER_SEC;
    cJSON *c = resolve(nc);
    cr_expect_eq(requests(), 2, "expired: asked again");
    cr_expect_str_eq(jstr_at(c, "subnets.0.id"), "subnet-9");
    kp_aws_nc_resolver_flush(resolver);
    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c);
}

Test(aws_nodeclass, no_matching_subnet_is_a_condition_not_an_error)
{
    answer(200, subnets(""));
    start();
    cJSON *st = resolve(spec("\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}]"));
    const cJSON *c = condition(st, "SubnetsReady");
    cr_expect_str_eq(jstr_at(c, "status"), "False");
    cr_expect_str_eq(jstr_at(c, "reason"), "SubnetsNotFound");
    cr_expect_str_eq(jstr_at(c, "message"), "SubnetSelector did not match any Subnets");
    cr_expect_eq(cJSON_GetArraySize(jpath(st, "subnets")), 0);
    const cJSON *ready = condition(st, "Ready");
    cr_expect_str_eq(jstr_at(ready, "status"), "False");
    cr_expect_str_eq(jstr_at(ready, "reason"), "UnhealthyDependents");
    cr_expect(strstr(jstr_at(ready, "message"), "SubnetsReady=False") != NULL, "%s",
              jstr_at(ready, "message"));
    cJSON_Delete(st);
}

/* --------------------------------------------------------- security groups */

Test(aws_nodeclass, security_groups_by_name_tags_and_id)
{
    answer(200, groups(group("sg-9", "nodes")));
    answer(200, groups(group("sg-5", "tagged")));
    answer(200, groups(group("sg-1", "by-id")));
    start();
    cJSON *st = resolve(spec("\"securityGroupSelectorTerms\":[{\"name\":\"nodes\"},{\"tags\":"
                             "{\"team\":\"*\"}},{\"id\":\"sg-1\"}]"));
    cr_assert_eq(requests(), 3);
    cr_expect_str_eq(action(0), "DescribeSecurityGroups");
    cr_expect_str_eq(filter(0, "group-name"), "nodes");
    cr_expect_str_eq(filter(1, "tag-key"), "team");
    cr_expect_str_eq(filter(2, "group-id"), "sg-1");
    /* listed by id */
    cr_expect_str_eq(jstr_at(st, "securityGroups.0.id"), "sg-1");
    cr_expect_str_eq(jstr_at(st, "securityGroups.0.name"), "by-id");
    cr_expect_str_eq(jstr_at(st, "securityGroups.1.id"), "sg-5");
    cr_expect_str_eq(jstr_at(st, "securityGroups.2.id"), "sg-9");
    cr_expect_str_eq(jstr_at(condition(st, "SecurityGroupsReady"), "status"), "True");
    cJSON_Delete(st);
}

Test(aws_nodeclass, a_name_and_tags_in_one_term_are_anded)
{
    answer(200, groups(""));
    start();
    cJSON *st = resolve(spec("\"securityGroupSelectorTerms\":[{\"name\":\"n*\",\"tags\":{\"a\":"
                             "\"b\"}}]"));
    cr_assert_eq(requests(), 1);
    cr_expect_str_eq(filter(0, "group-name"), "n*", "EC2 expands the glob");
    cr_expect_str_eq(filter(0, "tag:a"), "b");
    const cJSON *c = condition(st, "SecurityGroupsReady");
    cr_expect_str_eq(jstr_at(c, "reason"), "SecurityGroupsNotFound");
    cr_expect_str_eq(jstr_at(c, "message"),
                     "SecurityGroupSelector did not match any SecurityGroups");
    cJSON_Delete(st);
}

/* --------------------------------------------------------- instance profile */

static const kp_ec2nodeclass *with_role(const char *role)
{
    return nodeclass(fmt("{\"metadata\":{\"name\":\"nc\",\"uid\":\"u-1\"},\"spec\":{\"role\":"
                         "\"%s\",\"tags\":{\"team\":\"a\"}}}",
                         role));
}

Test(aws_nodeclass, a_role_gets_a_managed_instance_profile)
{
    answer(404, iam_error("NoSuchEntity"));
    answer(200, iam_profile("CreateInstanceProfile", "x", NULL));
    answer(200, iam_ok("AddRoleToInstanceProfile"));
    start();
    cJSON *st = resolve(with_role("arn:aws:iam::1:role/path/KarpenterNode"));
    cr_assert_eq(requests(), 3);
    cr_expect_str_eq(action(0), "GetInstanceProfile");
    const char *name = sent(0, "InstanceProfileName");
    cr_expect(strncmp(name, "c1_", 3) == 0, "%s", name);
    cr_expect_str_eq(action(1), "CreateInstanceProfile");
    cr_expect_str_eq(sent(1, "InstanceProfileName"), name);
    cr_expect_str_eq(sent(1, "Path"), "/karpenter/us-west-2/c1/u-1/");
    /* the class's tags, then Karpenter's */
    cr_expect_str_eq(sent(1, "Tags.member.1.Key"), "team");
    cr_expect_str_eq(sent(1, "Tags.member.2.Key"), "kubernetes.io/cluster/c1");
    cr_expect_str_eq(sent(1, "Tags.member.2.Value"), "owned");
    cr_expect_str_eq(sent(1, "Tags.member.3.Value"), "c1");
    cr_expect_str_eq(sent(1, "Tags.member.4.Value"), "nc");
    cr_expect_str_eq(sent(1, "Tags.member.5.Value"), "us-west-2");
    cr_expect_str_eq(action(2), "AddRoleToInstanceProfile");
    cr_expect_str_eq(sent(2, "RoleName"), "KarpenterNode", "the role's name, not its ARN");
    cr_expect_str_eq(jstr_at(st, "instanceProfile"), name);
    cr_expect_str_eq(jstr_at(condition(st, "InstanceProfileReady"), "status"), "True");
    /* cached: no IAM traffic the second time */
    cJSON *again = resolve(with_role("arn:aws:iam::1:role/path/KarpenterNode"));
    cr_expect_eq(requests(), 3);
    cr_expect_str_eq(jstr_at(again, "instanceProfile"), name);
    cJSON_Delete(st), cJSON_Delete(again);
}

Test(aws_nodeclass, the_profile_name_changes_with_the_role)
{
    answer(200, iam_profile("GetInstanceProfile", "x", "r1"));
    answer(200, iam_profile("GetInstanceProfile", "y", "r2"));
    start();
    cJSON *a = resolve(with_role("r1")), *b = resolve(with_role("r2"));
    cr_assert_eq(requests(), 2, "profiles holding the right role are left alone");
    cr_expect_str_neq(jstr_at(a, "instanceProfile"), jstr_at(b, "instanceProfile"));
    cJSON_Delete(a), cJSON_Delete(b);
}

Test(aws_nodeclass, a_profile_holding_another_role_is_fixed)
{
    answer(200, iam_profile("GetInstanceProfile", "x", "old"));
    answer(200, iam_ok("RemoveRoleFromInstanceProfile"));
    answer(200, iam_ok("AddRoleToInstanceProfile"));
    start();
    cJSON *st = resolve(with_role("new"));
    cr_assert_eq(requests(), 3);
    cr_expect_str_eq(action(1), "RemoveRoleFromInstanceProfile");
    cr_expect_str_eq(sent(1, "RoleName"), "old");
    cr_expect_str_eq(sent(2, "RoleName"), "new");
    cJSON_Delete(st);
}

Test(aws_nodeclass, no_role_and_no_profile)
{
    start();
    cJSON *st = resolve(nodeclass("{\"metadata\":{\"name\":\"nc\"},\"spec\":{}}"));
    cr_expect_eq(requests(), 0);
    cr_expect_null(jpath(st, "instanceProfile"));
    const cJSON *c = condition(st, "InstanceProfileReady");
    cr_expect_str_eq(jstr_at(c, "status"), "False");
    cr_expect_str_eq(jstr_at(c, "reason"), "InstanceProfileNotFound");
    cJSON_Delete(st);
}

Test(aws_nodeclass, iam_errors_are_errors)
{
    answer(403, iam_error("AccessDenied"));
    start();
    int err = resolve_err(with_role("r"));
    cr_expect_eq(err, KP_EFORBIDDEN, "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "ec2nodeclass nc") != NULL, "%s", kp_error_last());
    /* a failure is not cached */
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, NULL};
    cJSON *st = NULL;
    cr_expect_eq(kp_aws_nc_resolve(resolver, &c, with_role("r"), &st), KP_EINVALID,
                 "a role without an IAM client");
}

/* ------------------------------------------------------- failures, garbage */

Test(aws_nodeclass, ec2_errors_are_classified)
{
    answer(403, ec2_error("UnauthorizedOperation", "You are not authorized"));
    answer(503, ec2_error("RequestLimitExceeded", "Request limit exceeded."));
    answer(400, ec2_error("InvalidSubnetID.NotFound", "no such subnet"));
    start();
    const kp_ec2nodeclass *nc = spec("\"subnetSelectorTerms\":[{\"id\":\"subnet-x\"}]");
    cr_expect_eq(resolve_err(nc), KP_EFORBIDDEN);
    cr_expect(strstr(kp_error_last(), "UnauthorizedOperation") != NULL, "%s", kp_error_last());
    cr_expect_eq(resolve_err(nc), KP_ERETRY);
    cr_expect_eq(resolve_err(nc), KP_ENOTFOUND);
}

Test(aws_nodeclass, malformed_answers)
{
    answer(200, "<DescribeSubnetsResponse><subnetSet><item><subnetId>");
    answer(200, "not xml at all");
    /* an answer without the set: nothing found, not a crash */
    answer(200, ec2_response("DescribeSubnets", "somethingElse", "<item/>"));
    /* items without an id are dropped; other missing fields read as empty */
    answer(200, subnets("<item><subnetId>subnet-q</subnetId></item><item/>"));
    start();
    const kp_ec2nodeclass *nc = spec("\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}]");
    cr_expect_lt(resolve_err(nc), 0);
    cr_expect_lt(resolve_err(nc), 0);
    cJSON *st = resolve(nc);
    cr_expect_eq(cJSON_GetArraySize(jpath(st, "subnets")), 0);
    cJSON_Delete(st);
    fx.clock.ns += 61 * KP_NS_PER_SEC;
    st = resolve(nc);
    cr_expect_str_eq(jstr_at(st, "subnets.0.id"), "subnet-q");
    cr_expect_str_eq(jstr_at(st, "subnets.0.zone"), "");
    cJSON_Delete(st);
}

Test(aws_nodeclass, resolver_options_are_checked)
{
    kp_aws_nc_resolver *r = NULL;
    kp_aws_nc_resolver_opts o = {.region = "us-west-2"};
    cr_expect_eq(kp_aws_nc_resolver_new(&r, &o), KP_EINVALID);
    o = (kp_aws_nc_resolver_opts){.cluster_name = "c"};
    cr_expect_eq(kp_aws_nc_resolver_new(&r, &o), KP_EINVALID);
    cr_expect_null(r);
    cr_expect_null(kp_aws_nc_resolver_free(NULL));
}
