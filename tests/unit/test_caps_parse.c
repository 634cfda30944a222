/* The caps as users write them (shared/api/caps): flags, variables, the NodePool annotation. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/caps.h"
#include "api/admission.h"
#include "api/decode.h"
#include "base/error.h"

static void expect_refused(int (*parse)(kp_caps *, const char *, const char *), const char *text, const char *needle)
{
    kp_caps c = KP_CAPS_INIT;
    cr_expect_eq(parse(&c, text, "--x"), KP_EINVALID, "%s was accepted", text);
    cr_expect(strstr(kp_error_last(), needle) != NULL, "%s: %s", text, kp_error_last());
    cr_expect_not(kp_caps_any(&c), "%s: a refused value leaves no cap", text);
}

Test(caps_parse, nothing_set_is_no_cap)
{
    kp_caps c = KP_CAPS_INIT;
    cr_expect_not(kp_caps_any(&c));
    cr_expect_not(kp_caps_any(NULL));
    char buf[128];
    cr_expect_str_eq(kp_caps_describe(&c, buf, sizeof(buf)), "");
}

Test(caps_parse, each_flag_sets_its_cap)
{
    kp_caps c = KP_CAPS_INIT;
    cr_assert_eq(kp_caps_parse_setting(&c, "max-nodes-total", "50", "--max-nodes-total"), 0, "%s", kp_error_last());
    cr_assert_eq(kp_caps_parse_setting(&c, "cores-total", "320", "CORES_TOTAL"), 0, "%s", kp_error_last());
    cr_assert_eq(kp_caps_parse_setting(&c, "memory-total", "512Gi", "--memory-total"), 0, "%s", kp_error_last());
    cr_assert_eq(kp_caps_parse_setting(&c, "max-hourly-cost", "7.50", "--max-hourly-cost"), 0, "%s",
                 kp_error_last());
    cr_expect_eq(c.max_nodes, 50);
    cr_expect(c.has_cores && c.cores == (kp_milli128)320000, "cores in milli-cores");
    cr_expect(c.has_memory && c.memory == (kp_milli128)512 * 1024 * 1024 * 1024 * 1000, "memory in milli-bytes");
    cr_expect_float_eq(c.max_hourly_cost, 7.5, 1e-12);
    char buf[256];
    cr_expect_str_eq(kp_caps_describe(&c, buf, sizeof(buf)),
                     "--max-nodes-total=50, --cores-total=320, --memory-total=512Gi, --max-hourly-cost=7.5");
    cr_expect_eq(kp_caps_parse_setting(&c, "gpus-total", "1", "--gpus-total"), KP_EINVALID);
}

Test(caps_parse, zero_is_a_cap)
{
    kp_caps c = KP_CAPS_INIT;
    cr_assert_eq(kp_caps_parse_max_nodes(&c, "0", "--max-nodes-total"), 0);
    cr_expect(kp_caps_any(&c), "0 allows no new node: it is a cap, not its absence");
}

Test(caps_parse, cluster_autoscalers_min_max_form_is_refused_with_what_to_write)
{
    expect_refused(kp_caps_parse_max_nodes, "0:50", "give the maximum only (--max-nodes-total 50)");
    expect_refused(kp_caps_parse_cores, "8:320", "Cluster Autoscaler's MIN:MAX form");
    expect_refused(kp_caps_parse_memory, "0:512", "--memory-total 512Gi");
}

Test(caps_parse, counts_are_whole_numbers)
{
    static const char *const bad[] = {"", "-1", "1.5", "ten", " 5", "5 ", "+5", "1e3", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_refused(kp_caps_parse_max_nodes, bad[i], "want a whole number");
        expect_refused(kp_caps_parse_cores, bad[i], "want a whole number");
    }
}

Test(caps_parse, memory_needs_a_unit_and_a_quantity)
{
    expect_refused(kp_caps_parse_memory, "256", "give a unit (256Gi, 256G)");
    expect_refused(kp_caps_parse_memory, "12x", "unexpected character 'x'");
    expect_refused(kp_caps_parse_memory, "-1Gi", "want a quantity of 0 or more");
    kp_caps c = KP_CAPS_INIT;
    cr_assert_eq(kp_caps_parse_memory(&c, "1.5Ti", "--memory-total"), 0, "%s", kp_error_last());
    cr_expect(c.memory == (kp_milli128)1536 * 1024 * 1024 * 1024 * 1000);
}

Test(caps_parse, dollars_are_plain_decimals)
{
    static const struct {
        const char *text;
        double want;
    } good[] = {{"12", 12}, {"0.50", 0.5}, {".5", 0.5}, {"5.", 5}, {"0", 0}, {"1000000000", 1e9}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        double v = -1;
        cr_expect_eq(kp_caps_parse_dollars(good[i].text, "--max-hourly-cost", &v), 0, "%s: %s", good[i].text,
                     kp_error_last());
        cr_expect_float_eq(v, good[i].want, 1e-12, "%s", good[i].text);
    }
    static const char *const bad[] = {"",    ".",   "-1",  "+1",  "1e3", "inf",  "nan",        "0x10",
                                      "$5",  " 5",  "5 ",  "1,5", "1.2.3", "1000000001", "1000000000.5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double v = -7;
        cr_expect_eq(kp_caps_parse_dollars(bad[i], "--max-hourly-cost", &v), KP_EINVALID, "%s was accepted", bad[i]);
        cr_expect(strstr(kp_error_last(), "want dollars an hour") != NULL, "%s: %s", bad[i], kp_error_last());
        cr_expect_float_eq(v, -7, 0, "%s: the output is set only on success", bad[i]);
    }
}

static int pool_cost(const char *annotations, double *out)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"batch\"%s},"
             "\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":"
             "\"EC2NodeClass\",\"name\":\"default\"},\"requirements\":[]}}}}",
             annotations);
    cJSON *obj = cJSON_Parse(json);
    cr_assert_not_null(obj);
    kp_arena *a = kp_arena_new();
    kp_nodepool np;
    cr_assert_eq(kp_decode_nodepool(a, obj, &np), 0, "%s", kp_error_last());
    int err = kp_caps_nodepool_cost(&np, out);
    kp_arena_free(a);
    cJSON_Delete(obj);
    return err;
}

Test(caps_parse, the_nodepool_annotation)
{
    double v = 0;
    cr_assert_eq(pool_cost("", &v), 0);
    cr_expect_lt(v, 0, "no annotation: no cap");
    cr_assert_eq(pool_cost(",\"annotations\":{\"karpenter-c.dev/max-hourly-cost\":\"2.5\"}", &v), 0, "%s",
                 kp_error_last());
    cr_expect_float_eq(v, 2.5, 1e-12);
    cr_expect_eq(pool_cost(",\"annotations\":{\"karpenter-c.dev/max-hourly-cost\":\"lots\"}", &v), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "NodePool batch: annotation karpenter-c.dev/max-hourly-cost lots: want "
                                      "dollars an hour") != NULL,
              "%s", kp_error_last());
}

static int validate_pool(const char *cost, kp_arena *arena, kp_admission_result *res)
{
    char json[768];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"batch\","
             "\"annotations\":{\"karpenter-c.dev/max-hourly-cost\":\"%s\"}},\"spec\":{\"template\":{\"spec\":{"
             "\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"},"
             "\"requirements\":[]}},\"limits\":{\"cpu\":\"10\"}}}",
             cost);
    cJSON *obj = cJSON_Parse(json);
    cr_assert_not_null(obj);
    kp_admission_result_init(res, arena);
    int err = kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, obj, NULL, res);
    cJSON_Delete(obj);
    return err;
}

Test(caps_parse, the_webhook_refuses_an_annotation_the_provisioner_cannot_read)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    cr_assert_eq(validate_pool("7.50", arena, &res), 0);
    cr_expect_eq(res.errors.count, 0, "%s", kp_field_errors_string(arena, &res.errors));
    kp_admission_result_clear(&res);
    cr_assert_eq(validate_pool("$7", arena, &res), 0);
    cr_assert_eq(res.errors.count, 1);
    cr_expect_str_eq(kp_field_errors_string(arena, &res.errors),
                     "metadata.annotations[karpenter-c.dev/max-hourly-cost]: Invalid value: \"$7\": want dollars an "
                     "hour, a decimal number from 0 to 1000000000 (\"25\", \"7.50\")");
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
}
