/* What a provider owns (cloud/ownership.h) and how the controllers read it
 * off cached objects (controller/ownership.h): the rule that keeps a kwok
 * controller away from AWS NodeClaims and the reverse. */
#include <criterion/criterion.h>
#include <string.h>

#include "cloud/ownership.h"
#include "controller/ownership.h"

static const char *name_of(const kp_cloud_provider *cp)
{
    (void)cp;
    return "aws";
}

static const kp_cloud_provider_ops aws_like = {.name = name_of,
                                               .node_class_group = "karpenter.k8s.aws",
                                               .node_class_kind = "EC2NodeClass",
                                               .provider_id_scheme = "aws"};
static kp_cloud_provider aws = {&aws_like};

Test(ownership, provider_ids_by_scheme)
{
    cr_expect(kp_cloud_owns_provider_id(&aws, "aws:///us-east-1a/i-0123456789abcdef0"));
    cr_expect(!kp_cloud_owns_provider_id(&aws, "kwok://default-abc"));
    cr_expect(!kp_cloud_owns_provider_id(&aws, "awsx:///us-east-1a/i-1"), "a longer scheme is another one");
    cr_expect(!kp_cloud_owns_provider_id(&aws, "aws"), "no separator");
    cr_expect(!kp_cloud_owns_provider_id(&aws, ""));
    cr_expect(!kp_cloud_owns_provider_id(&aws, NULL));
    cr_expect(!kp_cloud_owns_provider_id(NULL, "aws:///x/i-1"));
}

Test(ownership, node_classes_by_group_and_kind)
{
    char buf[320];
    cr_expect(kp_cloud_serves_node_class(&aws, "karpenter.k8s.aws", "EC2NodeClass"));
    cr_expect(!kp_cloud_serves_node_class(&aws, "karpenter.kwok.sh", "KWOKNodeClass"));
    cr_expect(!kp_cloud_serves_node_class(&aws, "karpenter.k8s.aws", "OtherNodeClass"));
    cr_expect(!kp_cloud_serves_node_class(&aws, NULL, "EC2NodeClass"));
    const char *why = kp_cloud_pool_foreign(&aws, "example.com", "Widget", buf, sizeof(buf));
    cr_assert_not_null(why);
    cr_expect(strstr(why, "example.com/Widget") && strstr(why, "karpenter.k8s.aws/EC2NodeClass"), "%s", why);
}

Test(ownership, a_claim_needs_both_its_class_and_its_provider_id)
{
    char buf[320];
    cr_expect_null(kp_cloud_claim_foreign(&aws, "karpenter.k8s.aws", "EC2NodeClass", NULL, buf, sizeof(buf)),
                   "not launched yet: ours by its class");
    cr_expect_null(kp_cloud_claim_foreign(&aws, "karpenter.k8s.aws", "EC2NodeClass", "aws:///z/i-1", buf, sizeof(buf)));
    const char *why = kp_cloud_claim_foreign(&aws, "karpenter.k8s.aws", "EC2NodeClass", "kwok://n", buf, sizeof(buf));
    cr_assert_not_null(why, "our class but another provider's instance");
    cr_expect(strstr(why, "kwok://n"), "%s", why);
    cr_expect_not_null(kp_cloud_claim_foreign(&aws, "karpenter.kwok.sh", "KWOKNodeClass", "aws:///z/i-1", buf,
                                              sizeof(buf)));
}

static cJSON *parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o);
    return o;
}

Test(ownership, controllers_read_it_off_cached_objects)
{
    kp_ctrl c;
    memset(&c, 0, sizeof(c));
    c.cloud = &aws;
    cJSON *claim = parse("{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\","
                         "\"kind\":\"EC2NodeClass\",\"name\":\"default\"}},\"status\":{\"providerID\":"
                         "\"aws:///us-east-1a/i-0123456789abcdef0\"}}");
    cJSON *kwok_claim = parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"nodeClassRef\":{\"group\":"
                              "\"karpenter.kwok.sh\",\"kind\":\"KWOKNodeClass\",\"name\":\"default\"}}}");
    cJSON *pool = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":"
                        "{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"d\"}}}}}");
    cJSON *node = parse("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"providerID\":\"aws:///us-east-1a/i-1\"}}");
    cJSON *bare = parse("{\"metadata\":{\"name\":\"cp\"},\"spec\":{}}");
    cr_expect(kp_ctrl_owns_claim(&c, claim));
    cr_expect(!kp_ctrl_owns_claim(&c, kwok_claim));
    cr_expect(kp_ctrl_owns_pool(&c, pool));
    cr_expect(!kp_ctrl_owns_pool(&c, claim), "a claim has no template: not a pool of ours");
    cr_expect(kp_ctrl_owns_node(&c, node));
    cr_expect(!kp_ctrl_owns_node(&c, bare), "a Node without a provider ID was never launched by us");
    cr_expect(!kp_ctrl_owns_claim(&c, NULL));
    cJSON_Delete(claim), cJSON_Delete(kwok_claim), cJSON_Delete(pool), cJSON_Delete(node), cJSON_Delete(bare);
}
