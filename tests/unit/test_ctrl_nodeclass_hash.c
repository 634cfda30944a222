/* Adopting Karpenter's NodeClaims (controller/nodeclass_ctrl.h,
 * kp_nodeclass_restamp_claims): claims stamped with Karpenter's class-hash
 * version take the class's current hash and our version, so drift of the
 * class is seen on them from then on; the rest is left as it is. Against the
 * fake API server, through a real informer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud/aws/nodeclass.h"
#include "controller/nodeclass_ctrl.h"
#include "helpers/fake_apiserver.h"
#include "kube/informer.h"

#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"

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

/* A claim of class `cls` (group/kind from `ref`), annotations as JSON members. */
static void put_claim(fake_api *fa, const char *name, const char *ref, const char *annotations, const char *conds)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"annotations\":{%s}},\"spec\":{\"nodeClassRef\":%s},"
             "\"status\":{\"providerID\":\"aws:///us-east-1a/i-%s\",\"conditions\":[%s]}}",
             name, annotations, ref, name, conds);
    fake_api_put(fa, CLAIMS, json);
}

static char *annotation(fake_api *fa, const char *claim, const char *key)
{
    char path[256];
    snprintf(path, sizeof(path), CLAIMS "/%s", claim);
    cJSON *o = fake_api_get(fa, path);
    cr_assert_not_null(o, "%s is gone", claim);
    cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"), "annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
    char *out = cJSON_IsString(v) ? strdup(v->valuestring) : strdup("<none>");
    cJSON_Delete(o);
    return out;
}

static void expect_annotations(fake_api *fa, const char *claim, const char *hash, const char *version)
{
    char *h = annotation(fa, claim, KP_AWS_ANNOTATION_NODECLASS_HASH);
    char *v = annotation(fa, claim, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION);
    cr_expect_str_eq(h, hash, "%s: hash %s, want %s", claim, h, hash);
    cr_expect_str_eq(v, version, "%s: version %s, want %s", claim, v, version);
    free(h);
    free(v);
}

#define EC2 "{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"}"
#define KARPENTERS "\"karpenter.k8s.aws/ec2nodeclass-hash\":\"111\",\"karpenter.k8s.aws/ec2nodeclass-hash-version\":\"v4\""
#define DRIFTED "{\"type\":\"Drifted\",\"status\":\"True\",\"reason\":\"AMIDrift\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}"

Test(nodeclass_hash, karpenters_claims_take_our_hash_and_version)
{
    fake_api *fa = fake_api_start();
    cr_assert_not_null(fa);
    put_claim(fa, "adopted", EC2, KARPENTERS, "");
    put_claim(fa, "drifted", EC2, KARPENTERS, DRIFTED);
    put_claim(fa, "ours", EC2, "", "");
    put_claim(fa, "current", EC2, "\"karpenter.k8s.aws/ec2nodeclass-hash\":\"222\","
                                  "\"karpenter.k8s.aws/ec2nodeclass-hash-version\":\"" KP_AWS_NODECLASS_HASH_VERSION "\"", "");
    put_claim(fa, "other-class", "{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"gpu\"}",
              KARPENTERS, "");
    put_claim(fa, "foreign", "{\"group\":\"example.com\",\"kind\":\"WidgetNodeClass\",\"name\":\"default\"}",
              KARPENTERS, "");

    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    kp_ctrl c;
    memset(&c, 0, sizeof(c));
    c.cloud = &aws;
    cr_assert_eq(kp_kube_client_new(&c.kube, &cfg, &o), 0);
    kp_informer *claims = kp_informer_new(c.kube, KP_RES_NODECLAIM, NULL);
    c.informers[KP_CK_NODECLAIM] = claims;
    cr_assert_eq(kp_informer_start(claims), 0);
    cr_assert_eq(kp_informer_wait_synced(claims, 10000), 0);

    cr_expect_eq(kp_nodeclass_restamp_claims(&c, "default", "999"), 0);
    expect_annotations(fa, "adopted", "999", KP_AWS_NODECLASS_HASH_VERSION);
    expect_annotations(fa, "drifted", "111", KP_AWS_NODECLASS_HASH_VERSION);
    expect_annotations(fa, "ours", "<none>", "<none>");
    expect_annotations(fa, "current", "222", KP_AWS_NODECLASS_HASH_VERSION);
    expect_annotations(fa, "other-class", "111", "v4");
    expect_annotations(fa, "foreign", "111", "v4");
    cr_expect_eq(fake_api_count(fa, "PATCH", CLAIMS), 2, "only the two of Karpenter's version are written");

    kp_informer_stop(claims);
    kp_informer_free(claims);
    kp_kube_client_free(c.kube);
    fake_api_stop(fa);
}
