/*
 * AMI resolution against the in-process double: aliases through SSM (paths
 * per family and version, variants and their requirements, missing
 * parameters, aliases the Kubernetes version rules out), ids and SSM
 * parameters in one image-id query, name/owner/tag queries, which image wins
 * per requirement set (deprecated last, then newest, then name), the status
 * order, caching, and failures.
 */
#include "cloud/aws/nodeclass.h"
#include "test_aws_provider_fixture.h"
#include "helpers/assert.h"

static kp_aws_nc_resolver *resolver;

static kp_aws_nc_resolver *new_resolver(const char *k8s)
{
    kp_aws_nc_resolver *r = NULL;
    kp_aws_nc_resolver_opts o = {.region = "us-west-2",
                                 .cluster_name = "c1",
                                 .kubernetes_version = k8s,
                                 .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&r, &o), 0);
    return r;
}

static void setup(void)
{
    fx_init();
    resolver = new_resolver("1.32");
}

static void teardown(void)
{
    resolver = kp_aws_nc_resolver_free(resolver);
    fx_fini();
}

TestSuite(aws_nodeclass_amis, .init = setup, .fini = teardown);

static const kp_ec2nodeclass *terms(const char *ami_terms)
{
    return nodeclass(fmt("{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":"
                         "{\"instanceProfile\":\"ip\",\"amiSelectorTerms\":%s}}",
                         ami_terms));
}

static cJSON *resolve_with(kp_aws_nc_resolver *r, const kp_ec2nodeclass *nc)
{
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    KP_ASSERT_OK(kp_aws_nc_resolve(r, &c, nc, &st));
    return st;
}

static cJSON *resolve(const kp_ec2nodeclass *nc)
{
    return resolve_with(resolver, nc);
}

static const cJSON *amis_ready(const cJSON *st)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(st, "conditions"))
    {
        if (strcmp(jstr_at(c, "type"), "AMIsReady") == 0) return c;
    }
    cr_assert_fail("no AMIsReady");
    return NULL;
}

/* An AMI's requirements as "key op values; ..." in status order. */
static const char *reqs(const cJSON *st, int i)
{
    const char *out = "";
    const cJSON *r;
    cJSON_ArrayForEach(r, jpath(st, fmt("amis.%d.requirements", i)))
    {
        const char *vals = "";
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(r, "values")) vals =
            fmt("%s %s", vals, v->valuestring);
        out = fmt("%s%s%s %s%s", out, *out ? "; " : "", jstr_at(r, "key"), jstr_at(r, "operator"),
                  vals);
    }
    return out;
}

#define STD                                                                                        \
    "karpenter.k8s.aws/instance-gpu-count DoesNotExist; "                                          \
    "karpenter.k8s.aws/instance-accelerator-count DoesNotExist"

/* ----------------------------------------------------------------- aliases */

Test(aws_nodeclass_amis, al2023_latest_asks_ssm_per_variant)
{
    answer(200, ssm_value("ami-xstd"));
    answer(200, ssm_value("ami-xnv"));
    answer(400, ssm_not_found()); /* no neuron AMI: skipped */
    answer(200, ssm_value("ami-astd"));
    answer(200, ssm_value("ami-anv"));
    answer(200, images(fmt("%s%s%s%s",
                           image("ami-xstd", "std-x", "x86_64", "2025-10-01T00:00:00.000Z", NULL),
                           image("ami-xnv", "nv-x", "x86_64", "2025-10-03T00:00:00.000Z", NULL),
                           image("ami-astd", "std-a", "arm64", "2025-10-02T00:00:00.000Z", NULL),
                           image("ami-anv", "nv-a", "arm64", "2025-10-01T00:00:00.000Z", NULL))));
    start();
    cJSON *st = resolve(terms("[{\"alias\":\"al2023@latest\"}]"));
    cr_assert_eq(requests(), 6);
    const char *base = "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/";
    cr_expect_str_eq(ssm_asked(0), fmt("%sx86_64/standard/recommended/image_id", base));
    cr_expect_str_eq(ssm_asked(1), fmt("%sx86_64/nvidia/recommended/image_id", base));
    cr_expect_str_eq(ssm_asked(2), fmt("%sx86_64/neuron/recommended/image_id", base));
    cr_expect_str_eq(ssm_asked(3), fmt("%sarm64/standard/recommended/image_id", base));
    cr_expect_str_eq(ssm_asked(4), fmt("%sarm64/nvidia/recommended/image_id", base));
    cr_expect_str_eq(action(5), "DescribeImages");
    cr_expect_str_eq(filter(5, "image-id"), "ami-xstd,ami-xnv,ami-astd,ami-anv");
    cr_expect_str_eq(filter(5, "state"), "available");
    cr_expect_str_eq(sent(5, "IncludeDeprecated"), "true");
    cr_expect_null(sent(5, "Owner.1"));
    /* newest first */
    cr_assert_eq(cJSON_GetArraySize(jpath(st, "amis")), 4);
    cr_expect_str_eq(jstr_at(st, "amis.0.id"), "ami-xnv");
    cr_expect_str_eq(jstr_at(st, "amis.1.id"), "ami-astd");
    cr_expect_str_eq(jstr_at(st, "amis.2.id"), "ami-anv", "same date as ami-xstd: by id");
    cr_expect_str_eq(jstr_at(st, "amis.3.id"), "ami-xstd");
    cr_expect_str_eq(jstr_at(st, "amis.1.name"), "std-a");
    cr_expect_str_eq(reqs(st, 0), "kubernetes.io/arch In amd64; "
                                  "karpenter.k8s.aws/instance-gpu-count Exists");
    cr_expect_str_eq(reqs(st, 1), "kubernetes.io/arch In arm64; " STD);
    cr_expect_null(jpath(st, "amis.0.deprecated"));
    cr_expect_null(jpath(st, "amis.0.creationDate"), "used for choosing only");
    cr_expect_str_eq(jstr_at(amis_ready(st), "status"), "True");
    cJSON_Delete(st);
}

Test(aws_nodeclass_amis, pinned_versions_and_other_families)
{
    for (int i = 0; i < 5; i++)
        answer(400, ssm_not_found());
    for (int i = 0; i < 3; i++)
        answer(400, ssm_not_found());
    answer(200, ssm_value("ami-br"));
    for (int i = 0; i < 3; i++)
        answer(400, ssm_not_found());
    answer(200, images(image("ami-br", "br", "x86_64", "2025-01-01T00:00:00Z", NULL)));
    answer(200, ssm_value("ami-win"));
    answer(200, images(image("ami-win", "win", "x86_64", "2025-01-01T00:00:00Z", NULL)));
    start();
    cJSON *st = resolve(terms("[{\"alias\":\"al2023@v20240807\"}]"));
    cr_expect_str_eq(ssm_asked(0), "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/"
                                   "standard/amazon-eks-node-al2023-x86_64-standard-1.32-"
                                   "v20240807/image_id");
    cr_expect_str_eq(ssm_asked(4), "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/"
                                   "nvidia/amazon-eks-node-al2023-arm64-nvidia-1.32-v20240807/"
                                   "image_id");
    const cJSON *c = amis_ready(st);
    cr_expect_str_eq(jstr_at(c, "status"), "False");
    cr_expect_str_eq(jstr_at(c, "reason"), "AMINotFound");
    cr_expect_str_eq(jstr_at(c, "message"),
                     "failed to discover any AMIs for alias al2023@v20240807");
    cJSON_Delete(st);
    cr_expect_eq(requests(), 5, "nothing to describe");

    st = resolve(terms("[{\"alias\":\"al2@v20240807\"}]"));
    cr_expect_str_eq(ssm_asked(5), "/aws/service/eks/optimized-ami/1.32/amazon-linux-2/"
                                   "amazon-eks-node-1.32-v20240807/image_id");
    cr_expect_str_eq(ssm_asked(6), "/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/"
                                   "amazon-eks-arm64-node-1.32-v20240807/image_id");
    cr_expect_str_eq(ssm_asked(7), "/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/"
                                   "amazon-eks-gpu-node-1.32-v20240807/image_id");
    cJSON_Delete(st);

    st = resolve(terms("[{\"alias\":\"bottlerocket@v1.20.0\"}]"));
    cr_expect_str_eq(ssm_asked(8), "/aws/service/bottlerocket/aws-k8s-1.32/x86_64/1.20.0/image_id",
                     "the leading v goes");
    cr_expect_str_eq(ssm_asked(10), "/aws/service/bottlerocket/aws-k8s-1.32-nvidia/x86_64/1.20.0/"
                                    "image_id");
    /* Bottlerocket's standard x86 image also serves Neuron types */
    cr_assert_eq(cJSON_GetArraySize(jpath(st, "amis")), 2);
    cr_expect_str_eq(jstr_at(st, "amis.0.id"), "ami-br");
    cr_expect_str_eq(jstr_at(st, "amis.1.id"), "ami-br");
    cr_expect_str_neq(reqs(st, 0), reqs(st, 1));
    cJSON_Delete(st);

    st = resolve(terms("[{\"alias\":\"windows2022@latest\"}]"));
    cr_expect_str_eq(ssm_asked(13), "/aws/service/ami-windows-latest/Windows_Server-2022-English-"
                                    "Core-EKS_Optimized-1.32/image_id");
    cr_expect_str_eq(reqs(st, 0), "kubernetes.io/os In windows; kubernetes.io/arch In amd64; "
                                  "node.kubernetes.io/windows-build In 10.0.20348");
    cJSON_Delete(st);
}

Test(aws_nodeclass_amis, aliases_the_kubernetes_version_rules_out)
{
    start();
    kp_aws_nc_resolver *v133 = new_resolver("1.33");
    cJSON *st = resolve_with(v133, terms("[{\"alias\":\"al2@latest\"}]"));
    const cJSON *c = amis_ready(st);
    cr_expect_str_eq(jstr_at(c, "reason"), "UnsupportedAlias");
    cr_expect(
        strncmp(jstr_at(c, "message"), "AL2 aliases are no longer supported on EKS 1.33+", 48) == 0,
        "%s", jstr_at(c, "message"));
    cJSON_Delete(st);
    st = resolve(terms("[{\"alias\":\"windows2025@latest\"}]"));
    c = amis_ready(st);
    cr_expect_str_eq(jstr_at(c, "reason"), "UnsupportedAlias");
    cr_expect_str_eq(jstr_at(c, "message"), "Windows Server 2025 requires EKS version 1.35 or "
                                            "higher, current version: 1.32");
    cJSON_Delete(st);
    kp_aws_nc_resolver *none = new_resolver(NULL);
    st = resolve_with(none, terms("[{\"alias\":\"al2023@latest\"}]"));
    c = amis_ready(st);
    cr_expect_str_eq(jstr_at(c, "reason"), "AMINotFound");
    cr_expect(strstr(jstr_at(c, "message"), "Kubernetes version") != NULL);
    cJSON_Delete(st);
    cr_expect_eq(requests(), 0);
    kp_aws_nc_resolver_free(v133);
    kp_aws_nc_resolver_free(none);
}

/* ------------------------------------------------------------ other terms */

Test(aws_nodeclass_amis, ids_and_ssm_parameters_share_one_query)
{
    answer(200, ssm_value("ami-2"));
    answer(200, ssm_value("not-an-ami"));
    answer(400, ssm_not_found());
    answer(200, images(fmt("%s%s", image("ami-1", "a", "x86_64", "2025-01-01T00:00:00Z", NULL),
                           image("ami-2", "b", "arm64", "2025-02-01T00:00:00Z", NULL))));
    start();
    cJSON *st = resolve(terms("[{\"id\":\"ami-1\"},{\"ssmParameter\":\"/my/ami\"},"
                              "{\"ssmParameter\":\"/bad\"},{\"ssmParameter\":\"/gone\"}]"));
    cr_assert_eq(requests(), 4);
    cr_expect_str_eq(ssm_asked(0), "/my/ami");
    cr_expect_str_eq(filter(3, "image-id"), "ami-1,ami-2", "values not starting ami- are skipped");
    cr_expect_null(sent(3, "Owner.1"));
    cr_expect_str_eq(jstr_at(st, "amis.0.id"), "ami-2");
    cr_expect_str_eq(reqs(st, 0), "kubernetes.io/arch In arm64", "no variants outside aliases");
    cJSON_Delete(st);
}

Test(aws_nodeclass_amis, names_owners_and_tags)
{
    answer(200, images(""));
    answer(200, images(""));
    answer(200, images(""));
    start();
    cJSON *st = resolve(terms("[{\"name\":\"my-ami-*\"},{\"name\":\"x\",\"owner\":\"123\"},"
                              "{\"tags\":{\"team\":\"a\",\"os\":\"*\"}}]"));
    cr_assert_eq(requests(), 3);
    cr_expect_str_eq(filter(0, "name"), "my-ami-*");
    cr_expect_str_eq(sent(0, "Owner.1"), "self", "a name alone: own and Amazon's images");
    cr_expect_str_eq(sent(0, "Owner.2"), "amazon");
    cr_expect_str_eq(sent(1, "Owner.1"), "123");
    cr_expect_null(sent(1, "Owner.2"));
    cr_expect_null(sent(2, "Owner.1"), "tags alone: no owners");
    cr_expect_str_eq(filter(2, "tag:team"), "a");
    cr_expect_str_eq(filter(2, "tag-key"), "os");
    cr_expect_str_eq(sent(2, "MaxResults"), "1000");
    cr_expect_str_eq(jstr_at(amis_ready(st), "message"), "AMISelector did not match any AMIs");
    cJSON_Delete(st);
}

/* ----------------------------------------------------------- choosing one */

Test(aws_nodeclass_amis, deprecated_images_lose_to_current_ones)
{
    /* now is 2026-01-01 */
    answer(200,
           images(fmt(
               "%s%s%s%s%s%s",
               image("ami-new-dep", "n", "x86_64", "2025-06-01T00:00:00Z", "2025-12-01T00:00:00Z"),
               image("ami-old-ok", "o", "x86_64", "2025-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
               image("ami-a-dep1", "a1", "arm64", "2025-03-01T00:00:00Z", "2025-04-01T00:00:00Z"),
               image("ami-a-dep2", "a2", "arm64", "2025-05-01T00:00:00Z", "2025-06-01T00:00:00Z"),
               image("ami-i386", "old", "i386", "2025-09-01T00:00:00Z", NULL),
               image("", "no-id", "x86_64", "2025-09-01T00:00:00Z", NULL))));
    start();
    cJSON *st = resolve(terms("[{\"tags\":{\"k\":\"v\"}}]"));
    cr_assert_eq(cJSON_GetArraySize(jpath(st, "amis")), 2, "one per arch; i386 and no id dropped");
    /* arm64: both deprecated, the newer one stays and says so */
    cr_expect_str_eq(jstr_at(st, "amis.0.id"), "ami-a-dep2");
    cr_expect(cJSON_IsTrue(jpath(st, "amis.0.deprecated")));
    /* amd64: the older current image beats the newer deprecated one; a future
     * deprecation time is not deprecated yet */
    cr_expect_str_eq(jstr_at(st, "amis.1.id"), "ami-old-ok");
    cr_expect_null(jpath(st, "amis.1.deprecated"));
    cJSON_Delete(st);
}

Test(aws_nodeclass_amis, equal_dates_go_to_the_greater_name)
{
    answer(200,
           images(fmt("%s%s%s", image("ami-1", "build-2", "x86_64", "2025-01-01T00:00:00Z", NULL),
                      image("ami-2", "build-10", "x86_64", "2025-01-01T00:00:00Z", NULL),
                      image("ami-3", "build-3", "x86_64", "not a date", NULL))));
    start();
    cJSON *st = resolve(terms("[{\"name\":\"build-*\"}]"));
    cr_assert_eq(cJSON_GetArraySize(jpath(st, "amis")), 1);
    cr_expect_str_eq(jstr_at(st, "amis.0.id"), "ami-1", "\"build-2\" > \"build-10\" as text");
    cJSON_Delete(st);
}

/* --------------------------------------------------------- cache, failure */

Test(aws_nodeclass_amis, alias_parameters_outlive_image_answers)
{
    for (int i = 0; i < 5; i++)
        answer(200, ssm_value(fmt("ami-%d", i)));
    answer(200, images(image("ami-0", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
    answer(200, images(image("ami-0", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
    start();
    const kp_ec2nodeclass *nc = terms("[{\"alias\":\"al2023@latest\"}]");
    cJSON *a = resolve(nc), *b = resolve(nc);
    cr_expect_eq(requests(), 6);
    fx.clock.ns += 61 * KP_NS_PER_SEC;
    cJSON *c = resolve(nc);
    cr_expect_eq(requests(), 7, "images again after a minute, SSM not for a day");
    cr_expect_str_eq(action(6), "DescribeImages");
    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c);
}

Test(aws_nodeclass_amis, failures)
{
    answer(400, "{\"__type\":\"ThrottlingException\",\"message\":\"Rate exceeded\"}");
    answer(200, "{\"Parameter\":");
    answer(403, ec2_error("UnauthorizedOperation", "no"));
    answer(200, "<DescribeImagesResponse><imagesSet><item>");
    start();
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    const kp_ec2nodeclass *ssm = terms("[{\"ssmParameter\":\"/p\"}]");
    cr_expect_eq(kp_aws_nc_resolve(resolver, &c, ssm, &st), KP_ERETRY, "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "/p") != NULL, "%s", kp_error_last());
    cr_expect_lt(kp_aws_nc_resolve(resolver, &c, ssm, &st), 0, "truncated JSON");
    const kp_ec2nodeclass *ids = terms("[{\"id\":\"ami-1\"}]");
    cr_expect_eq(kp_aws_nc_resolve(resolver, &c, ids, &st), KP_EFORBIDDEN);
    cr_expect_lt(kp_aws_nc_resolve(resolver, &c, ids, &st), 0, "truncated XML");
    cr_expect_null(st);
}
