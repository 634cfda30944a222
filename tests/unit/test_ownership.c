/* What a provider owns (cloud/ownership.h) and how the controllers read it
 * off cached objects (controller/ownership.h): the rule that keeps a kwok
 * controller away from AWS NodeClaims and the reverse. */
#include <criterion/criterion.h>
#include <string.h>

#include "cloud/ownership.h"
#include "controller/lifecycle.h"
#include "controller/ownership.h"
#include "helpers/fake_apiserver.h"
#include "kube/informer.h"

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

/* ---- a Node of our scheme whose NodeClaim or NodePool is another provider's ---- */

#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define POOLS  "/apis/karpenter.sh/v1/nodepools"

static kp_informer *cached(fake_api *fa, kp_kube_client *client, enum kp_kube_res res)
{
    kp_informer *inf = kp_informer_new(client, res, NULL);
    cr_assert_not_null(inf);
    if (res == KP_RES_NODECLAIM)
        cr_assert_eq(kp_informer_add_index(inf, KP_INDEX_PROVIDER_ID, kp_index_claim_provider_id), 0);
    cr_assert_eq(kp_informer_start(inf), 0);
    cr_assert_eq(kp_informer_wait_synced(inf, 10000), 0, "%s", fake_api_url(fa));
    return inf;
}

static cJSON *node_of(const char *provider_id, const char *pool)
{
    cJSON *n = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(n, "metadata");
    cJSON_AddStringToObject(meta, "name", "n");
    if (pool)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), "karpenter.sh/nodepool", pool);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(n, "spec"), "providerID", provider_id);
    return n;
}

static bool owns(const kp_ctrl *c, const char *provider_id, const char *pool, const char *reason_has)
{
    char buf[320];
    cJSON *n = node_of(provider_id, pool);
    const char *why = kp_ctrl_node_foreign(c, n, buf, sizeof(buf));
    cJSON_Delete(n);
    if (why && reason_has)
        cr_expect(strstr(why, reason_has), "reason \"%s\" lacks \"%s\"", why, reason_has);
    return !why;
}

/* Another provider on the same cloud launches EC2 instances for its own node
 * class: its Nodes have aws:// IDs. Deleting one must not make the AWS
 * controller drain it, terminate its instance and delete its claim. */
Test(ownership, a_node_of_our_scheme_belongs_to_the_provider_of_its_claim)
{
    fake_api *fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client *client = NULL;
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
    fake_api_put(fa, CLAIMS, "{\"metadata\":{\"name\":\"widgets-1\"},\"spec\":{\"nodeClassRef\":{\"group\":"
                             "\"example.com\",\"kind\":\"WidgetNodeClass\",\"name\":\"w\"}},"
                             "\"status\":{\"providerID\":\"aws:///us-east-1a/i-0aaaa\"}}");
    fake_api_put(fa, CLAIMS, "{\"metadata\":{\"name\":\"general-1\"},\"spec\":{\"nodeClassRef\":{\"group\":"
                             "\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"d\"}},"
                             "\"status\":{\"providerID\":\"aws:///us-east-1a/i-0bbbb\"}}");
    fake_api_put(fa, POOLS, "{\"metadata\":{\"name\":\"widgets\"},\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":"
                            "{\"group\":\"example.com\",\"kind\":\"WidgetNodeClass\",\"name\":\"w\"}}}}}");
    fake_api_put(fa, POOLS, "{\"metadata\":{\"name\":\"general\"},\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":"
                            "{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"d\"}}}}}");
    kp_ctrl c;
    memset(&c, 0, sizeof(c));
    c.cloud = &aws;
    c.informers[KP_CK_NODECLAIM] = cached(fa, client, KP_RES_NODECLAIM);
    c.informers[KP_CK_NODEPOOL] = cached(fa, client, KP_RES_NODEPOOL);

    cr_expect(!owns(&c, "aws:///us-east-1a/i-0aaaa", "widgets", "NodeClaim widgets-1"),
              "its claim is of example.com/WidgetNodeClass");
    cr_expect(!owns(&c, "aws:///us-east-1a/i-0aaaa", NULL, "example.com/WidgetNodeClass"), "even without a label");
    cr_expect(!owns(&c, "aws:///us-east-1a/i-0cccc", "widgets", "NodePool widgets"),
              "no claim (gone already): its NodePool tells");
    cr_expect(owns(&c, "aws:///us-east-1a/i-0bbbb", "general", NULL), "our claim");
    cr_expect(owns(&c, "aws:///us-east-1a/i-0bbbb", "widgets", NULL), "the claim decides before the label");
    cr_expect(owns(&c, "aws:///us-east-1a/i-0dddd", "general", NULL), "no claim, our pool");
    cr_expect(owns(&c, "aws:///us-east-1a/i-0dddd", "nosuchpool", NULL), "nothing says otherwise: the scheme");
    cr_expect(!owns(&c, "kwok://general-1", "general", "kwok://"), "another scheme stays foreign");

    for (int k = 0; k < KP_CK_COUNT; k++) {
        if (c.informers[k]) {
            kp_informer_stop(c.informers[k]);
            kp_informer_free(c.informers[k]);
        }
    }
    kp_kube_client_free(client);
    fake_api_stop(fa);
}
