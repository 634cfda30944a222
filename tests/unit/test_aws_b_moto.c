/*
 * Node classes, launch templates and launches against moto's server: an
 * EC2NodeClass resolved from moto's default VPC (subnets and security groups
 * by tags, ids and name; AMIs by tags and an SSM parameter; an instance
 * profile made for a role), then the AWS provider launching through
 * CreateFleet, describing, listing by tags, judging drift, sweeping
 * templates and terminating.
 *
 * tests/integration/test_aws_provider_b_moto.sh installs and starts moto and
 * runs this program with KP_AWS_MOTO_URL set. Run on its own, the program
 * installs (when root) and starts moto itself through scripts/moto-server.sh,
 * and fails loudly if it cannot: it never skips.
 *
 * What moto lacks, and where it is covered instead: capacity errors (moto
 * always launches; the ICE paths run on the HTTP double in test_aws_launch.c
 * and test_aws_provider.c), spot (moto answers a spot fleet with an on-demand
 * instance), the EKS-optimised AMI parameters of SSM aliases (recorded
 * answers in test_aws_nodeclass_amis.c), and two things EC2 does that moto
 * does not: naming the override in CreateFleet's answer and tagging the
 * instance as the fleet asked — the launch describes and tags the instance
 * then, which this program relies on.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/decode.h"
#include "base/error.h"
#include "cloud/aws/ec2.h"
#include "cloud/aws/iam.h"
#include "cloud/aws/instancestatus.h"
#include "cloud/aws/nodeclass.h"
#include "cloud/aws/provider.h"
#include "controller/cloud_aws.h"


#define MOTO_PROGRAM "test_aws_b_moto"
#include "moto_hooks.h"

static kp_aws_client *ec2, *iam, *ssm;
static kp_arena *arena;
static kp_fake_clock clock_;

static void connect_moto(void)
{
    const char *url = getenv("KP_AWS_MOTO_URL");
    cr_assert_not_null(url, "KP_AWS_MOTO_URL is not set and moto was not started");
    setenv("AWS_ACCESS_KEY_ID", "AKIDMOTOTEST", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "moto-secret", 1);
    unsetenv("AWS_SESSION_TOKEN");
    kp_fake_clock_init(&clock_, (int64_t)time(NULL) * KP_NS_PER_SEC);
    kp_aws_client_options o = {
        .region = "us-east-1", .endpoint_url = url, .max_attempts = 1, .timeout_ms = 60000};
    cr_assert_eq(kp_aws_client_new(&ec2, &o), 0, "%s", kp_error_last());
    cr_assert_eq(kp_aws_client_new(&iam, &o), 0);
    cr_assert_eq(kp_aws_client_new(&ssm, &o), 0);
    arena = kp_arena_new();
}

static void disconnect(void)
{
    ec2 = kp_aws_client_free(ec2);
    iam = kp_aws_client_free(iam);
    ssm = kp_aws_client_free(ssm);
    arena = kp_arena_free(arena);
}

TestSuite(aws_b_moto, .init = connect_moto, .fini = disconnect, .timeout = 180);

/* ------------------------------------------------------------- set-up */

static const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = kp_arena_vprintf(arena, f, ap);
    va_end(ap);
    return s;
}

/* Calls our clients do not make (creating the account's contents). */
static void raw(kp_aws_client *c, const char *service, enum kp_aws_protocol proto,
                const char *action, const char *body)
{
    kp_aws_request req = {service, action,       proto, proto == KP_AWS_QUERY ? NULL : "AmazonSSM",
                          body,    strlen(body), NULL,  0, NULL, NULL};
    kp_buf out = KP_BUF_INIT(1 << 20);
    cr_assert_eq(kp_aws_client_send(c, &req, &out), 0, "%s: %s", action, kp_error_last());
    kp_buf_free(&out);
}

static void tag(const char *id, const char *key, const char *value)
{
    kp_ec2_tag t = {key, value};
    cr_assert_eq(kp_ec2_create_tags(ec2, &id, 1, &t, 1), 0, "%s", kp_error_last());
}

typedef struct account {
    const char *subnet_a, *subnet_b, *subnet_c, *group, *ami_x86, *ami_arm;
} account;

static const kp_ec2_subnet *subnet_in(const kp_ec2_subnet_list *l, const char *zone)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].availability_zone, zone) == 0) return &l->items[i];
    cr_assert_fail("moto has no default subnet in %s", zone);
    return NULL;
}

static const char *first_image(const char *arch)
{
    const char *owners[] = {"amazon"}, *archs[] = {arch}, *names[] = {"al2023-ami-*"};
    kp_ec2_filter f[] = {{"architecture", archs, 1}, {"name", names, 1}};
    kp_ec2_describe_images_input in = {
        .owners = owners, .n_owners = 1, .filters = f, .n_filters = 2};
    kp_ec2_image_list l = {0};
    cr_assert_eq(kp_ec2_describe_images(ec2, arena, &in, &l), 0, "%s", kp_error_last());
    cr_assert_gt(l.n, 0, "moto has %s AL2023 images", arch);
    return l.items[0].id;
}

/* Tag moto's default resources with `mark` for this test. */
static account prepare(const char *mark)
{
    account a;
    kp_ec2_subnet_list subnets = {0};
    cr_assert_eq(kp_ec2_describe_subnets(ec2, arena, NULL, 0, NULL, 0, &subnets), 0);
    a.subnet_a = subnet_in(&subnets, "us-east-1a")->id;
    a.subnet_b = subnet_in(&subnets, "us-east-1b")->id;
    a.subnet_c = subnet_in(&subnets, "us-east-1c")->id;
    tag(a.subnet_a, "kp-b/discovery", mark);
    tag(a.subnet_b, "kp-b/discovery", mark);
    kp_ec2_security_group_list groups = {0};
    cr_assert_eq(kp_ec2_describe_security_groups(ec2, arena, NULL, 0, NULL, 0, &groups), 0);
    cr_assert_gt(groups.n, 0);
    a.group = groups.items[0].id;
    tag(a.group, "kp-b/discovery", mark);
    a.ami_x86 = first_image("x86_64");
    a.ami_arm = first_image("arm64");
    tag(a.ami_x86, "kp-b/ami", mark);
    raw(ssm, "ssm", KP_AWS_JSON_1_1, "PutParameter",
        fmt("{\"Name\":\"/kp-b/%s/ami\",\"Value\":\"%s\",\"Type\":\"String\",\"Overwrite\":true}",
            mark, a.ami_arm));
    raw(iam, "iam", KP_AWS_QUERY, "CreateRole",
        fmt("Action=CreateRole&Version=2010-05-08&RoleName=node-%s&AssumeRolePolicyDocument="
            "%%7B%%7D",
            mark));
    return a;
}

static const char *spec_json(const char *mark)
{
    return fmt("{\"amiFamily\":\"AL2023\",\"role\":\"node-%s\",\"tags\":{\"team\":\"b\"},"
               "\"subnetSelectorTerms\":[{\"tags\":{\"kp-b/discovery\":\"%s\"}}],"
               "\"securityGroupSelectorTerms\":[{\"tags\":{\"kp-b/discovery\":\"%s\"}}],"
               "\"amiSelectorTerms\":[{\"tags\":{\"kp-b/ami\":\"%s\"}},{\"ssmParameter\":"
               "\"/kp-b/%s/ami\"}]}",
               mark, mark, mark, mark, mark);
}

static const kp_ec2nodeclass *decode(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    cr_assert_not_null(doc, "%s", json);
    kp_ec2nodeclass *nc = KP_ARENA_NEW(arena, kp_ec2nodeclass, 1);
    cr_assert_eq(kp_decode_ec2nodeclass(arena, doc, nc), 0, "%s", kp_error_last());
    cJSON_Delete(doc);
    return nc;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

/* ------------------------------------------------------------ resolving */

static cJSON *resolve(kp_aws_nc_resolver *r, const kp_ec2nodeclass *nc)
{
    kp_aws_nc_clients c = {ec2, ssm, iam};
    cJSON *st = NULL;
    cr_assert_eq(kp_aws_nc_resolve(r, &c, nc, &st), 0, "%s", kp_error_last());
    return st;
}

static kp_aws_nc_resolver *resolver(void)
{
    kp_aws_nc_resolver *r = NULL;
    kp_aws_nc_resolver_opts o = {.region = "us-east-1",
                                 .cluster_name = "c1",
                                 .kubernetes_version = "1.32",
                                 .clock = &clock_.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&r, &o), 0);
    return r;
}

Test(aws_b_moto, a_node_class_resolves_against_the_account)
{
    account a = prepare("resolve");
    kp_aws_nc_resolver *r = resolver();
    const kp_ec2nodeclass *nc =
        decode(fmt("{\"metadata\":{\"name\":\"b\",\"uid\":\"u-b\",\"generation\":2},\"spec\":%s}",
                   spec_json("resolve")));
    cJSON *st = resolve(r, nc);
    const cJSON *subnets = cJSON_GetObjectItem(st, "subnets");
    cr_assert_eq(cJSON_GetArraySize(subnets), 2, "the two tagged subnets");
    const char *ids = fmt("%s %s", jstr(cJSON_GetArrayItem(subnets, 0), "id"),
                          jstr(cJSON_GetArrayItem(subnets, 1), "id"));
    cr_expect(strstr(ids, a.subnet_a) && strstr(ids, a.subnet_b), "%s", ids);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(subnets, 0), "zoneID")[0] ? "set" : "", "set");
    const cJSON *groups = cJSON_GetObjectItem(st, "securityGroups");
    cr_assert_eq(cJSON_GetArraySize(groups), 1);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(groups, 0), "id"), a.group);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(groups, 0), "name"), "default");
    const cJSON *amis = cJSON_GetObjectItem(st, "amis");
    cr_assert_eq(cJSON_GetArraySize(amis), 2, "one per architecture");
    const char *ami_ids = fmt("%s %s", jstr(cJSON_GetArrayItem(amis, 0), "id"),
                              jstr(cJSON_GetArrayItem(amis, 1), "id"));
    cr_expect(strstr(ami_ids, a.ami_x86) && strstr(ami_ids, a.ami_arm), "%s", ami_ids);
    /* the profile exists in IAM and holds the role */
    const char *profile = jstr(st, "instanceProfile");
    cr_assert(strncmp(profile, "c1_", 3) == 0, "%s", profile);
    kp_iam_instance_profile p;
    cr_assert_eq(kp_iam_get_instance_profile(iam, arena, profile, &p), 0, "%s", kp_error_last());
    cr_assert_eq(p.n_roles, 1);
    cr_expect_str_eq(p.roles[0], "node-resolve");
    cr_expect_str_eq(p.path, "/karpenter/us-east-1/c1/u-b/");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(st, "conditions"))
    {
        cr_expect_str_eq(jstr(c, "status"), "True", "%s: %s", jstr(c, "type"), jstr(c, "message"));
    }
    cJSON_Delete(st);
    /* by ids and by name */
    const kp_ec2nodeclass *by_id = decode(fmt(
        "{\"metadata\":{\"name\":\"b2\"},\"spec\":{\"instanceProfile\":\"x\","
        "\"subnetSelectorTerms\":"
        "[{\"id\":\"%s\"},{\"id\":\"%s\"}],\"securityGroupSelectorTerms\":[{\"name\":\"default\"}],"
        "\"amiSelectorTerms\":[{\"id\":\"%s\"}]}}",
        a.subnet_c, a.subnet_a, a.ami_arm));
    st = resolve(r, by_id);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "subnets")), 2);
    cr_expect_geq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "securityGroups")), 1);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "amis"), 0), "id"), a.ami_arm);
    cJSON_Delete(st);
    kp_aws_nc_resolver_free(r);
}

/* ------------------------------------------------------------ launching */

static const char *ready_class; /* JSON the lookup decodes */

static int lookup(void *ctx, const char *name, kp_arena *a, const kp_ec2nodeclass **out)
{
    (void)ctx;
    if (strcmp(name, "b") != 0 || !ready_class) return KP_ENOTFOUND;
    cJSON *doc = cJSON_Parse(ready_class);
    kp_ec2nodeclass *nc = KP_ARENA_NEW(a, kp_ec2nodeclass, 1);
    int err = kp_decode_ec2nodeclass(a, doc, nc);
    cJSON_Delete(doc);
    if (err == 0) *out = nc;
    return err;
}

static kp_cloud_provider *provider_unfetched(void)
{
    kp_aws_provider_opts o = KP_AWS_PROVIDER_OPTS_INIT;
    o.region = "us-east-1";
    o.cluster_name = "c1";
    o.cluster_endpoint = "https://c1.example";
    o.cluster_cidr = "10.100.0.0/16";
    o.cluster_dns_ip = "10.100.0.10";
    o.kubernetes_version = "1.32";
    o.endpoint_url = getenv("KP_AWS_MOTO_URL");
    o.max_attempts = 1;
    o.lookup = lookup;
    o.clock = &clock_.base;
    o.disable_dry_run = true; /* moto performs CreateFleet with DryRun=true */
    kp_cloud_provider *cp = NULL;
    cr_assert_eq(kp_aws_provider_new(&o, &cp), 0, "%s", kp_error_last());
    return cp;
}

static kp_cloud_provider *provider(void)
{
    kp_cloud_provider *cp = provider_unfetched();
    /* moto has no Price List API: that half fails, the static prices stay */
    kp_aws_provider_refresh(cp);
    cr_assert(kp_aws_instancetypes_ready(kp_aws_provider_instancetypes(cp)), "%s", kp_error_last());
    return cp;
}

/* The class with the status the provider resolved for it. */
static void make_ready(kp_cloud_provider *cp, const char *mark)
{
    const char *meta = "{\"name\":\"b\",\"uid\":\"u-launch\",\"generation\":1}";
    const kp_ec2nodeclass *nc = decode(fmt("{\"metadata\":%s,\"spec\":%s}", meta, spec_json(mark)));
    cJSON *st = NULL;
    cr_assert_eq(kp_aws_provider_resolve_nodeclass(cp, nc, arena, &st), 0, "%s", kp_error_last());
    char *status = cJSON_PrintUnformatted(st);
    ready_class = fmt("{\"metadata\":%s,\"spec\":%s,\"status\":%s}", meta, spec_json(mark), status);
    free(status);
    cJSON_Delete(st);
    cr_assert_eq(kp_aws_nodeclass_check_ready(decode(ready_class)), 0, "%s", kp_error_last());
}

static const kp_nodeclaim *claim(const char *name)
{
    cJSON *doc = cJSON_Parse(
        fmt("{\"metadata\":{\"name\":\"%s\",\"labels\":{\"karpenter.sh/nodepool\":\"pool-b\"}},"
            "\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\","
            "\"name\":\"b\"},\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\","
            "\"operator\":\"In\",\"values\":[\"m5.large\",\"c5.large\",\"m6g.large\"]},{\"key\":"
            "\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"on-demand\"]}],"
            "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}}",
            name));
    kp_nodeclaim *c = KP_ARENA_NEW(arena, kp_nodeclaim, 1);
    cr_assert_eq(kp_decode_nodeclaim(arena, doc, c), 0, "%s", kp_error_last());
    cJSON_Delete(doc);
    return c;
}

static bool listed(kp_cloud_provider *cp, const char *pid)
{
    kp_cloud_instance *all = NULL;
    uint32_t n = 0;
    cr_assert_eq(cp->ops->list(cp, arena, &all, &n), 0, "%s", kp_error_last());
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(all[i].provider_id, pid) == 0) return true;
    return false;
}

Test(aws_b_moto, launch_describe_list_drift_terminate)
{
    account a = prepare("launch");
    kp_cloud_provider *cp = provider();
    make_ready(cp, "launch");
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, claim("claim-b"), arena, &in), 0, "%s", kp_error_last());
    cr_expect(strncmp(in.provider_id, "aws:///us-east-1", 16) == 0, "%s", in.provider_id);
    cr_expect(strcmp(in.zone, "us-east-1a") == 0 || strcmp(in.zone, "us-east-1b") == 0,
              "a zone of the class's subnets: %s", in.zone);
    cr_expect_str_eq(in.capacity_type, "on-demand");
    const char *arch = kp_labels_get(&in.labels, "kubernetes.io/arch");
    cr_assert_not_null(arch);
    cr_expect_str_eq(in.image_id, strcmp(arch, "arm64") == 0 ? a.ami_arm : a.ami_x86,
                     "the class's AMI for the type's architecture");
    cr_expect_gt(kp_resource_list_milli(&in.allocatable, "cpu"), 1000);
    /* moto kept the launch template, tagged for the cluster */
    const char *cluster[] = {"c1"};
    kp_ec2_filter f = {"tag:eks:eks-cluster-name", cluster, 1};
    kp_ec2_launch_template_list lts = {0};
    cr_assert_eq(kp_ec2_describe_launch_templates(ec2, arena, NULL, 0, &f, 1, &lts), 0);
    cr_expect_geq(lts.n, 1);
    cr_expect(strncmp(lts.items[0].name, "karpenter.k8s.aws/", 18) == 0);
    /* read back */
    kp_cloud_instance got;
    cr_assert_eq(cp->ops->get(cp, in.provider_id, arena, &got), 0, "%s", kp_error_last());
    cr_expect_str_eq(got.instance_type, in.instance_type);
    cr_expect_str_eq(got.nodeclaim, "claim-b", "tagged karpenter.sh/nodeclaim");
    cr_expect_str_eq(got.nodepool, "pool-b");
    cr_expect_str_eq(kp_labels_get(&got.labels, "kubernetes.io/arch"), arch);
    cr_expect(listed(cp, in.provider_id));
    kp_nodeclaim launched = *claim("claim-b");
    launched.provider_id = in.provider_id;
    const char *why = "unset";
    cr_assert_eq(cp->ops->is_drifted(cp, &launched, arena, &why), 0, "%s", kp_error_last());
    cr_expect_null(why, "just launched: %s", why ? why : "");
    /* a class whose AMIs moved on */
    const char *saved = ready_class;
    ready_class = fmt("%.*s", (int)strlen(saved), saved);
    char *at = strstr((char *)ready_class, in.image_id);
    cr_assert_not_null(at);
    memcpy(at, "ami-00000000", 12);
    cr_assert_eq(cp->ops->is_drifted(cp, &launched, arena, &why), 0, "%s", kp_error_last());
    cr_expect_str_eq(why, "AMIDrift");
    ready_class = saved;
    /* nodeclaim.tagging once the node registered: moto keeps the tags */
    cr_expect_eq(kp_aws_provider_tag_instance(cp, in.provider_id, "ip-10-0-1-7.ec2.internal",
                                              "claim-b"),
                 1, "%s", kp_error_last());
    const char *id = strrchr(in.provider_id, '/') + 1;
    kp_ec2_instance_list tagged = {0};
    cr_assert_eq(kp_ec2_describe_instances(ec2, arena, &id, 1, NULL, 0, &tagged), 0);
    cr_assert_eq(tagged.n, 1);
    cr_expect_str_eq(kp_ec2_tag_get(tagged.items[0].tags, tagged.items[0].n_tags, "Name"),
                     "ip-10-0-1-7.ec2.internal");
    cr_expect_eq(kp_aws_provider_tag_instance(cp, in.provider_id, "ip-10-0-1-7.ec2.internal",
                                              "claim-b"),
                 0, "already tagged");
    /* interruption.instancestatus: moto's instances are healthy */
    kp_aws_unhealthy *sick = NULL;
    size_t n_sick = 0;
    cr_expect_eq(kp_aws_instance_health(ec2, arena, clock_.ns, &sick, &n_sick), 0, "%s",
                 kp_error_last());
    cr_expect_eq(n_sick, 0);
    /* terminate; gone afterwards */
    cr_assert_eq(cp->ops->delete_instance(cp, &launched), 0, "%s", kp_error_last());
    cr_expect_eq(cp->ops->get(cp, in.provider_id, arena, &got), KP_ENOTFOUND);
    cr_expect_eq(cp->ops->delete_instance(cp, &launched), KP_ENOTFOUND);
    cr_expect_not(listed(cp, in.provider_id));
    kp_cloud_free(cp);
}

static size_t class_templates(void)
{
    const char *cluster[] = {"c1"}, *cls[] = {"b"};
    kp_ec2_filter f[] = {{"tag:eks:eks-cluster-name", cluster, 1},
                         {"tag:karpenter.k8s.aws/ec2nodeclass", cls, 1}};
    kp_ec2_launch_template_list lts = {0};
    cr_assert_eq(kp_ec2_describe_launch_templates(ec2, arena, NULL, 0, f, 2, &lts), 0);
    return lts.n;
}

/* Counted here, not by PathPrefix: moto's ListInstanceProfiles ignores it. */
static size_t profiles_under(const char *path)
{
    kp_iam_instance_profile_list all = {0};
    cr_assert_eq(kp_iam_list_instance_profiles(iam, arena, NULL, &all), 0, "%s", kp_error_last());
    size_t n = 0;
    for (size_t i = 0; i < all.n; i++)
        if (all.items[i].path && strncmp(all.items[i].path, path, strlen(path)) == 0) n++;
    return n;
}

Test(aws_b_moto, templates_are_reused_then_swept)
{
    prepare("sweep");
    kp_cloud_provider *cp = provider();
    make_ready(cp, "sweep");
    kp_cloud_instance one, two;
    cr_assert_eq(cp->ops->create(cp, claim("claim-1"), arena, &one), 0, "%s", kp_error_last());
    cr_assert_eq(cp->ops->create(cp, claim("claim-2"), arena, &two), 0, "%s", kp_error_last());
    cr_expect_str_neq(one.provider_id, two.provider_id);
    cr_expect_eq(kp_aws_provider_maintain(cp), 0, "in use: nothing to delete");
    clock_.ns += 61 * KP_NS_PER_SEC;
    int swept = kp_aws_provider_maintain(cp);
    cr_expect_gt(swept, 0, "%s", kp_error_last());
    cr_expect_eq(kp_aws_provider_maintain(cp), 0);
    /* the next launch makes its template again */
    kp_cloud_instance three;
    cr_assert_eq(cp->ops->create(cp, claim("claim-3"), arena, &three), 0, "%s", kp_error_last());
    cr_assert_gt(profiles_under("/karpenter/us-east-1/c1/u-launch/"), 0, "resolving made one");
    cr_expect_eq(kp_aws_provider_delete_nodeclass(cp, "b", "u-launch"), 0, "%s", kp_error_last());
    cr_expect_eq(class_templates(), 0, "the class's templates are gone");
    cr_expect_eq(profiles_under("/karpenter/us-east-1/c1/u-launch/"), 0,
                 "the class's instance profiles are gone");
    cr_expect_gt(profiles_under("/karpenter/us-east-1/c1/u-b/"), 0,
                 "another class's profile (made by the first test) stays");
    const kp_nodeclaim *claims[] = {claim("claim-1"), claim("claim-2"), claim("claim-3")};
    const char *pids[] = {one.provider_id, two.provider_id, three.provider_id};
    for (int i = 0; i < 3; i++) {
        kp_nodeclaim c = *claims[i];
        c.provider_id = pids[i];
        cr_expect_eq(cp->ops->delete_instance(cp, &c), 0, "%s", kp_error_last());
    }
    kp_cloud_free(cp);
}

Test(aws_b_moto, orphan_instance_profile_gc_against_moto)
{
    prepare("gc");
    kp_cloud_provider *cp = provider();
    make_ready(cp, "gc"); /* makes the instance profile of class u-launch */
    cr_assert_gt(profiles_under("/karpenter/us-east-1/c1/u-launch/"), 0);
    const char *live[] = {"u-launch", "u-b"};
    cr_expect_eq(kp_aws_provider_gc_instance_profiles(cp, live, 2), 0, "%s", kp_error_last());
    cr_expect_gt(profiles_under("/karpenter/us-east-1/c1/u-launch/"), 0, "its class exists");
    cr_expect_gt(kp_aws_provider_gc_instance_profiles(cp, live + 1, 1), 0, "%s", kp_error_last());
    cr_expect_eq(profiles_under("/karpenter/us-east-1/c1/u-launch/"), 0,
                 "the class is gone: so is its profile");
    kp_cloud_free(cp);
}

/* The controller's aws.upkeep loop body: the first call fetches types and prices
 * (moto's missing Price List API makes it a failure, tried again 5 minutes on,
 * not every minute); every call sweeps unused launch templates. */
Test(aws_b_moto, the_upkeep_loop_fetches_retries_and_sweeps)
{
    prepare("upkeep");
    kp_cloud_provider *cp = provider_unfetched();
    cr_assert(!kp_aws_instancetypes_ready(kp_aws_provider_instancetypes(cp)));
    kp_ctrl c;
    memset(&c, 0, sizeof(c));
    c.clock = &clock_.base;
    c.cloud = cp;
    int64_t due = 0, start = clock_.ns;
    cr_expect_lt(kp_cloud_aws_upkeep(&c, &due), 0, "moto has no Price List API");
    cr_expect(kp_aws_instancetypes_ready(kp_aws_provider_instancetypes(cp)), "%s", kp_error_last());
    cr_expect_eq(due, start + 5 * 60 * KP_NS_PER_SEC, "a failed fetch is retried in 5 minutes");
    make_ready(cp, "upkeep");
    kp_cloud_instance one;
    cr_assert_eq(cp->ops->create(cp, claim("claim-u"), arena, &one), 0, "%s", kp_error_last());
    cr_assert_gt(class_templates(), 0);
    clock_.ns += 61 * KP_NS_PER_SEC;
    cr_expect_eq(kp_cloud_aws_upkeep(&c, &due), 0, "%s: no fetch due, the sweep succeeds",
                 kp_error_last());
    cr_expect_eq(class_templates(), 0, "the template unused for a minute is swept");
    cr_expect_eq(due, start + 5 * 60 * KP_NS_PER_SEC, "unchanged");
    clock_.ns = start + 5 * 60 * KP_NS_PER_SEC;
    cr_expect_lt(kp_cloud_aws_upkeep(&c, &due), 0, "fetched again: moto still has no prices");
    cr_expect_eq(due, clock_.ns + 5 * 60 * KP_NS_PER_SEC);
    kp_nodeclaim nc = *claim("claim-u");
    nc.provider_id = one.provider_id;
    cr_expect_eq(cp->ops->delete_instance(cp, &nc), 0, "%s", kp_error_last());
    kp_cloud_free(cp);
}
