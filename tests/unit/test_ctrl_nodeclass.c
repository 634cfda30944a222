/* The EC2NodeClass controller (controller/nodeclass_ctrl.c) against the fake
 * API server and the AWS provider on the in-process EC2/IAM double: the
 * finalizer and hash annotations, the resolved status written through the
 * status subresource, the refresh interval, and deletion — waiting for the
 * class's NodeClaims, then the launch templates, then the finalizer. */
#include "controller/nodeclass_ctrl.h"
#include "kube/objutil.h"
#include "helpers/ctrl_harness.h"
#include "test_aws_provider_env.h"
#include "helpers/assert.h"

#define CLASSES HARNESS_CLASSES
#define CLAIMS  HARNESS_CLAIMS

static harness h;

static void setup(void)
{
    fx_init();
    cp = NULL;
    harness_start(&h, HARNESS_T0);
    harness_add_informer(&h, KP_CK_NODECLASS, KP_RES_EC2NODECLASS);
    h.c.opts.ami_refresh_ms = 300000;
    h.c.opts.subnet_refresh_ms = 60000;
}

static void teardown(void)
{
    harness_stop(&h);
    cp = kp_cloud_free(cp);
    fx_fini();
}

TestSuite(nodeclass_ctrl, .init = setup, .fini = teardown, .timeout = 60);

static void no_dry_run(kp_aws_provider_opts *o)
{
    o->disable_dry_run = true;
}

/* Start the double with the answers queued so far and use the provider. */
static void aws(void)
{
    start();
    provider_with(no_dry_run);
    h.c.cloud = cp;
}

#define SPEC                                                                                       \
    "\"spec\":{\"instanceProfile\":\"ip\",\"subnetSelectorTerms\":[{\"id\":\"subnet-1\"}],"        \
    "\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"amiSelectorTerms\":[{\"id\":\"ami-1\"}]" \
    "}"

static void put_class(const char *meta_extra)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.k8s.aws/"
             "v1\",\"kind\":\"EC2NodeClass\",\"metadata\":{\"name\":\"nc\","
             "\"uid\":\"u-nc\",\"generation\":1%s},%s}",
             meta_extra, SPEC);
    harness_put(&h, KP_CK_NODECLASS, CLASSES, "nc", json);
}

static void answer_resolution(void)
{
    answer(200, subnets(subnet("subnet-1", "us-west-2a", "usw2-az1", 9)));
    answer(200, groups(group("sg-1", "g")));
    answer(200, images(image("ami-1", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
}

static int64_t reconcile(void)
{
    int64_t requeue = 0;
    KP_ASSERT_OK(kp_nodeclass_reconcile(&h.c, NULL, "nc", &requeue));
    return requeue;
}

/* The class as the server has it now. */
static cJSON *stored(void)
{
    cJSON *o = fake_api_get(h.fa, CLASSES "/nc");
    cr_assert_not_null(o);
    return o;
}

static const char *status_of(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, jpath(obj, "status.conditions"))
    {
        if (!strcmp(kp_obj_str(c, "type"), type)) return kp_obj_str(c, "status");
    }
    return NULL;
}

/* A claim of class `class_ref` (JSON); `annotations` as JSON members. */
static void put_claim(const char *name, const char *class_ref, const char *pid,
                      const char *annotations)
{
    harness_put_claim(&h, (harness_obj){.name = name,
                                        .class_ref = class_ref,
                                        .provider_id = pid,
                                        .annotations = annotations});
}

#define OUR_REF  "{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"nc\"}"
#define FAKE_REF "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"nc\"}"

Test(nodeclass_ctrl, a_class_gets_its_finalizer_hash_and_resolved_status)
{
    answer_resolution();
    aws();
    put_class("");
    cr_expect_eq(reconcile(), 60000, "resolved again at the shorter refresh interval");
    cr_expect_str_eq(action(0), "DescribeSubnets");
    cr_expect_str_eq(action(1), "DescribeSecurityGroups");
    cr_expect_str_eq(action(2), "DescribeImages");
    cr_expect_eq(requests(), 3);
    cJSON *nc = stored();
    cr_expect(kp_obj_has_finalizer(nc, KP_NODECLASS_FINALIZER));
    cr_expect_not_null(kp_obj_annotation(nc, KP_AWS_ANNOTATION_NODECLASS_HASH));
    cr_expect_str_eq(kp_obj_annotation(nc, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION),
                     KP_AWS_NODECLASS_HASH_VERSION);
    cr_expect_str_eq(status_of(nc, "Ready"), "True");
    cr_expect_str_eq(status_of(nc, "SubnetsReady"), "True");
    cr_expect_str_eq(jstr_at(nc, "status.subnets.0.id"), "subnet-1");
    cr_expect_str_eq(jstr_at(nc, "status.amis.0.id"), "ami-1");
    cJSON_Delete(nc);
    cr_expect_eq(fake_api_count(h.fa, "PATCH", CLASSES "/nc/status"), 1,
                 "the status through its subresource");
}

Test(nodeclass_ctrl, a_class_that_does_not_resolve_is_not_ready)
{
    answer(200, subnets(""));
    answer(200, groups(group("sg-1", "g")));
    answer(200, images(image("ami-1", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
    aws();
    put_class("");
    reconcile();
    cJSON *nc = stored();
    cr_expect_str_eq(status_of(nc, "SubnetsReady"), "False");
    cr_expect_str_eq(status_of(nc, "Ready"), "False");
    cJSON_Delete(nc);
}

Test(nodeclass_ctrl, deleting_waits_for_claims_then_cleans_up_and_releases)
{
    answer(200, ec2_response("DescribeLaunchTemplates", "launchTemplates",
                             "<item><launchTemplateId>lt-a</launchTemplateId><launchTemplateName>"
                             "karpenter.k8s.aws/1</launchTemplateName></item>"));
    answer(200, "<DeleteLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-a"
                "</launchTemplateId></launchTemplate></DeleteLaunchTemplateResponse>");
    answer(
        200,
        "<ListInstanceProfilesResponse><ListInstanceProfilesResult><IsTruncated>false</IsTruncated>"
        "<InstanceProfiles/></ListInstanceProfilesResult></ListInstanceProfilesResponse>");
    aws();
    put_class(",\"finalizers\":[\"karpenter.k8s.aws/"
              "termination\"],\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"");
    put_claim("user", OUR_REF, "aws:///us-west-2a/i-0abc", "");
    cr_expect_eq(reconcile(), 5000, "a NodeClaim still uses it: looked at again in 5 s");
    cr_expect_eq(requests(), 0, "nothing deleted in AWS yet");
    cJSON *nc = stored();
    cr_expect(kp_obj_has_finalizer(nc, KP_NODECLASS_FINALIZER));
    cJSON_Delete(nc);
    fake_api_remove(h.fa, CLAIMS "/user");
    cr_assert(harness_wait(&h, KP_CK_NODECLAIM, "user", false));
    reconcile();
    cr_expect_str_eq(action(0), "DescribeLaunchTemplates");
    cr_expect_str_eq(action(1), "DeleteLaunchTemplate");
    cr_expect_str_eq(action(2), "ListInstanceProfiles");
    nc = stored();
    cr_expect_not(kp_obj_has_finalizer(nc, KP_NODECLASS_FINALIZER), "released last");
    cJSON_Delete(nc);
}

Test(nodeclass_ctrl, restamping_leaves_other_providers_claims_alone)
{
    answer_resolution();
    aws();
    const char *theirs = "\"karpenter.k8s.aws/ec2nodeclass-hash\":\"1\",\"karpenter.k8s.aws/"
                         "ec2nodeclass-hash-version\""
                         ":\"v0\"";
    put_claim("adopted", OUR_REF, "aws:///us-west-2a/i-0abc", theirs);
    put_claim("foreign", FAKE_REF, "fake://foreign", theirs);
    put_class("");
    reconcile();
    cJSON *nc = stored();
    const char *hash = kp_obj_annotation(nc, KP_AWS_ANNOTATION_NODECLASS_HASH);
    cJSON *adopted = fake_api_get(h.fa, CLAIMS "/adopted"),
          *foreign = fake_api_get(h.fa, CLAIMS "/foreign");
    cr_expect_str_eq(kp_obj_annotation(adopted, KP_AWS_ANNOTATION_NODECLASS_HASH), hash);
    cr_expect_str_eq(kp_obj_annotation(adopted, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION),
                     KP_AWS_NODECLASS_HASH_VERSION);
    cr_expect_str_eq(kp_obj_annotation(foreign, KP_AWS_ANNOTATION_NODECLASS_HASH), "1");
    cr_expect_eq(fake_api_count(h.fa, "PATCH", CLAIMS "/foreign"), 0);
    cJSON_Delete(adopted);
    cJSON_Delete(foreign);
    cJSON_Delete(nc);
}
