/*
 * Which instance types a launch asks for, on hand-built catalogs: the claim's
 * requirements and resource requests, availability and the ICE cache,
 * Karpenter's exotic and dear-spot filters, the capacity type, the
 * cheapest-first order and the cap of 60, and the copy launches work on.
 */
#include "cloud/aws/launch.h"
#include "test_aws_provider_fixture.h"

static kp_catalog *cat;
static kp_aws_ice_cache *ice;

static void setup(void)
{
    fx_init();
    cat = kp_catalog_new("test");
    ice = kp_aws_ice_cache_new(&fx.clock.base);
}

static void teardown(void)
{
    cat = kp_catalog_free(cat);
    ice = kp_aws_ice_cache_free(ice);
    fx_fini();
}

TestSuite(aws_launch_select, .init = setup, .fini = teardown);

/* A claim with the given requirements (JSON array) and requests (object). */
static const kp_nodeclaim *claim_with(const char *reqs, const char *requests)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"requirements\":%s,"
                         "\"resources\":{\"requests\":%s}}}",
                         reqs, requests));
}

static const kp_nodeclaim *any_claim(void)
{
    return claim_with("[]", "{}");
}

static kp_aws_launch_choice pick(const kp_nodeclaim *c, const char *ct)
{
    kp_aws_launch_choice ch;
    cr_assert_eq(kp_aws_launch_select(cat, c, ice, NULL, ct, fx.arena, &ch), 0, "%s", kp_error_last());
    return ch;
}

static const char *names(const kp_aws_launch_choice *ch)
{
    const char *s = "";
    for (uint32_t i = 0; i < ch->n_types; i++)
        s = fmt("%s%s%s", s, i ? " " : "", ch->types[i]->name);
    return s;
}

/* How many offerings of type i the launch may use. */
static int usable(const kp_aws_launch_choice *ch, uint32_t i)
{
    int n = 0;
    for (uint32_t j = 0; j < ch->types[i]->n_offerings; j++)
        n += ch->usable[i][j];
    return n;
}

Test(aws_launch_select, cheapest_first_and_spot_when_there_is_spot)
{
    cat_type(cat, "m5.xlarge", "amd64", 0.192, 0.08, 4, 58);
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    cat_type(cat, "c5.large", "amd64", 0.085, 0.05, 2, 29);
    cat_type(cat, "t3.large", "amd64", 0.083, 0.04, 2, 35);
    kp_aws_launch_choice ch = pick(any_claim(), NULL);
    cr_expect_str_eq(ch.capacity_type, "spot");
    /* by the cheapest offering of any allowed capacity type; ties keep catalog order */
    cr_expect_str_eq(names(&ch), "m5.large t3.large c5.large m5.xlarge");
    cr_expect_eq(usable(&ch, 0), 2, "both zones, spot only");
    cr_expect_str_eq(ch.types[0]->offerings[ch.usable[0][1] ? 1 : 3].capacity_type, "spot");
}

Test(aws_launch_select, at_most_sixty_types)
{
    for (int i = 0; i < 70; i++)
        cat_type(cat, fmt("t%d.large", i), "amd64", 1.0 - i * 0.01, -1, 2, 29);
    kp_aws_launch_choice ch = pick(any_claim(), NULL);
    cr_assert_eq(ch.n_types, 60);
    cr_expect_str_eq(ch.types[0]->name, "t69.large");
    cr_expect_str_eq(ch.types[59]->name, "t10.large");
    cr_expect_str_eq(ch.capacity_type, "on-demand", "no spot offerings at all");
}

Test(aws_launch_select, the_claims_requirements_and_requests)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    cat_type(cat, "m6g.large", "arm64", 0.077, 0.03, 2, 29);
    cat_type(cat, "m6g.xlarge", "arm64", 0.154, 0.06, 4, 58);
    kp_aws_launch_choice ch = pick(
        claim_with("[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"arm64\"]},"
                   "{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\",\"values\":"
                   "[\"us-west-2b\"]},{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\","
                   "\"values\":[\"on-demand\"]}]",
                   "{\"cpu\":\"2\"}"),
        NULL);
    /* m6g.large has 1.9 cpu allocatable: too small for 2 */
    cr_expect_str_eq(names(&ch), "m6g.xlarge");
    cr_expect_str_eq(ch.capacity_type, "on-demand");
    cr_expect_eq(usable(&ch, 0), 1, "on-demand in us-west-2b only");
    cr_expect(ch.usable[0][2], "offering 2 is us-west-2b on-demand");
    ch = pick(claim_with("[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"NotIn\","
                         "\"values\":[\"m6g.large\"]},{\"key\":\"team\",\"operator\":\"In\","
                         "\"values\":[\"a\"]}]",
                         "{}"),
              NULL);
    cr_expect_str_eq(names(&ch), "m5.large m6g.xlarge",
                     "NotIn excludes; labels the types do not define do not");
}

Test(aws_launch_select, unavailable_and_ice_offerings_are_not_used)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    kp_instance_type *c5 = cat_type(cat, "c5.large", "amd64", 0.085, 0.05, 2, 29);
    offering(m5, "us-west-2a", "spot")->available = false;
    kp_aws_ice_mark(ice, "spot", "m5.large", "us-west-2b", "InsufficientInstanceCapacity");
    kp_aws_launch_choice ch = pick(any_claim(), NULL);
    cr_expect_str_eq(ch.capacity_type, "spot");
    cr_expect_str_eq(names(&ch), "c5.large m5.large", "m5's only offerings left are on-demand");
    cr_expect_eq(usable(&ch, 1), 0, "m5.large has no spot offering left");
    kp_aws_ice_mark(ice, "spot", "c5.large", "us-west-2a", "InsufficientInstanceCapacity");
    kp_aws_ice_mark(ice, "spot", "c5.large", "us-west-2b", "InsufficientInstanceCapacity");
    ch = pick(any_claim(), NULL);
    cr_expect_str_eq(ch.capacity_type, "on-demand", "every spot offering is ICE");
    fx.clock.ns += KP_AWS_ICE_TTL_NS;
    cr_expect_str_eq(pick(any_claim(), NULL).capacity_type, "spot", "ICE expired");
    for (uint32_t i = 0; i < c5->n_offerings; i++)
        c5->offerings[i].available = m5->offerings[i].available = false;
    kp_aws_launch_choice none;
    cr_expect_eq(kp_aws_launch_select(cat, any_claim(), ice, NULL, NULL, fx.arena, &none),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect_str_eq(kp_error_last(),
                     "nodeclaim c: all requested instance types were unavailable during launch");
}

Test(aws_launch_select, exotic_types_only_when_nothing_else_fits)
{
    cat_type(cat, "m5.metal", "amd64", 0.01, 0.01, 96, 737);
    kp_instance_type *g5 = cat_type(cat, "g5.xlarge", "amd64", 0.02, 0.01, 4, 58);
    kp_it_set_capacity(cat, g5, "nvidia.com/gpu", 1000);
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    kp_aws_launch_choice ch = pick(any_claim(), NULL);
    cr_expect_str_eq(names(&ch), "m5.large");
    ch = pick(claim_with("[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\","
                         "\"values\":[\"g5.xlarge\",\"m5.metal\"]}]",
                         "{}"),
              NULL);
    cr_expect_str_eq(names(&ch), "m5.metal g5.xlarge", "only exotic types fit: kept");
    ch = pick(claim_with("[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"Exists\","
                         "\"minValues\":2}]",
                         "{}"),
              NULL);
    cr_expect_eq(ch.n_types, 3, "minValues turns the filters off");
}

Test(aws_launch_select, spot_dearer_than_on_demand_is_dropped)
{
    kp_instance_type *x = cat_type(cat, "x.large", "amd64", 0.60, 0.50, 2, 29);
    cat_type(cat, "y.large", "amd64", 0.20, -1, 2, 29);
    offering(x, "us-west-2b", "spot")->price = 0.15;
    kp_aws_launch_choice ch = pick(any_claim(), NULL);
    cr_expect_str_eq(ch.capacity_type, "spot");
    cr_expect_str_eq(names(&ch), "x.large y.large");
    cr_expect_eq(usable(&ch, 0), 1, "the 0.50 spot offering costs more than y's 0.20");
    cr_expect(ch.usable[0][3], "us-west-2b spot");
    /* only spot allowed: nothing to compare with */
    ch = pick(claim_with("[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\","
                         "\"values\":[\"spot\"]}]",
                         "{}"),
              NULL);
    cr_expect_eq(usable(&ch, 0), 2);
    /* forced on-demand (the fallback) */
    ch = pick(any_claim(), "on-demand");
    cr_expect_str_eq(ch.capacity_type, "on-demand");
    cr_expect_str_eq(names(&ch), "y.large x.large");
}

Test(aws_launch_select, bad_requirements)
{
    cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    kp_aws_launch_choice ch;
    const kp_nodeclaim *c = claim_with("[{\"key\":\"karpenter.k8s.aws/instance-cpu\",\"operator\":"
                                       "\"Gt\",\"values\":[\"many\"]}]",
                                       "{}");
    cr_expect_eq(kp_aws_launch_select(cat, c, ice, NULL, NULL, fx.arena, &ch), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "nodeclaim c: spec.requirements[0]") != NULL, "%s",
              kp_error_last());
}

Test(aws_launch_select, candidates_are_a_deep_copy)
{
    cat_type(cat, "m5.metal", "amd64", 0.01, 0.01, 96, 737);
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    cat_type(cat, "c5.large", "amd64", 0.085, 0.05, 2, 29);
    offering(m5, "us-west-2a", "spot")->available = false;
    kp_catalog *copy = NULL;
    cr_assert_eq(kp_aws_launch_candidates(cat, any_claim(), ice, NULL, &copy), 0);
    cr_assert_eq(copy->count, 2, "what selection keeps");
    cr_expect_str_eq(copy->types[0].name, "m5.large", "spot 0.04 beats 0.05");
    const kp_instance_type *c = kp_catalog_find(copy, "m5.large");
    cr_assert_eq(c->n_offerings, 4);
    cr_expect_not(offering(c, "us-west-2a", "spot")->available);
    cr_expect_eq(kp_it_capacity(c, "pods"), 29000);
    cr_expect_eq(kp_it_overhead(c, "cpu"), 100);
    cr_expect_eq(c->n_reqs, m5->n_reqs);
    kp_catalog_free(copy);
    copy = NULL;
    cr_expect_eq(kp_aws_launch_candidates(cat, claim_with("[]", "{\"cpu\":\"500\"}"), ice, NULL, &copy),
                 KP_EINSUFFICIENT_CAPACITY);
    cr_expect_null(copy);
}
