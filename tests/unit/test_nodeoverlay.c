/*
 * api/nodeoverlay: the price forms and their arithmetic (Karpenter's
 * AdjustedPrice), decoding, the weight order, and validation flagged on
 * decoded overlays.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/decode.h"
#include "api/nodeoverlay.h"
#include "base/error.h"
#include "format/yaml.h"

static const kp_yaml_limits limits = {1 << 20, 64, 200000, 20000};

static cJSON *yaml(const char *text)
{
    cJSON *root = NULL;
    cr_assert_eq(kp_yaml_parse_one(&root, text, strlen(text), "test", &limits), 0, "%s", kp_error_last());
    return root;
}

static double changed(const char *text, bool adjustment, double price)
{
    kp_price_change c;
    cr_assert_eq(kp_price_change_parse(text, adjustment, &c), 0, "%s: %s", text, kp_error_last());
    return kp_price_change_apply(&c, price);
}

Test(nodeoverlay, price_sets_the_price)
{
    cr_expect_float_eq(changed("13234.223", false, 1.02), 13234.223, 1e-9);
    cr_expect_float_eq(changed("0", false, 1.02), 0.0, 1e-12);
    cr_expect_float_eq(changed("43", false, 0.5), 43.0, 1e-12);
}

Test(nodeoverlay, adjustments_add_or_scale_and_never_go_below_zero)
{
    cr_expect_float_eq(changed("+1000", true, 1.02), 1001.02, 1e-9);
    cr_expect_float_eq(changed("-0.5", true, 1.0), 0.5, 1e-12);
    cr_expect_float_eq(changed("+.5", true, 1.0), 1.5, 1e-12);
    cr_expect_float_eq(changed("+10%", true, 2.0), 2.2, 1e-12);
    cr_expect_float_eq(changed("-15%", true, 2.0), 1.7, 1e-12);
    cr_expect_float_eq(changed("+100.102%", true, 1.0), 2.00102, 1e-12);
    cr_expect_float_eq(changed("-100%", true, 3.0), 0.0, 1e-12);
    cr_expect_float_eq(changed("-129", true, 3.0), 0.0, 1e-12, "clamped at 0");
}

Test(nodeoverlay, malformed_prices_are_refused_with_what_is_expected)
{
    static const char *const prices[] = {"+42", ".5", "42.", "42%", "3,14", "1e10", "0x42", "forty-two",
                                         "42a", "42 ", " 42", "42.0.0", "-", ".", "-.42", "", "inf", "nan"};
    static const char *const adjustments[] = {"1%", "1", "1.3", "-100.0%", "-101.1%", "+", "-", "+5.", "+-5",
                                              "-5.5.5%", "10%", "+10%%", "-5.%", "+1e3", "+0x1", "", "+inf"};
    kp_price_change c;
    for (size_t i = 0; i < sizeof(prices) / sizeof(*prices); i++) {
        cr_expect_eq(kp_price_change_parse(prices[i], false, &c), KP_EINVALID, "price %s", prices[i]);
        cr_expect(strstr(kp_error_last(), "non-negative decimal"), "%s", kp_error_last());
    }
    for (size_t i = 0; i < sizeof(adjustments) / sizeof(*adjustments); i++) {
        cr_expect_eq(kp_price_change_parse(adjustments[i], true, &c), KP_EINVALID, "adjustment %s", adjustments[i]);
        cr_expect(strstr(kp_error_last(), "priceAdjustment"), "%s", kp_error_last());
    }
}

Test(nodeoverlay, decodes_every_field)
{
    cJSON *j = yaml("apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: o, generation: 3}\n"
                    "spec:\n  weight: 7\n  priceAdjustment: '-10%'\n"
                    "  capacity: {example.com/fuse: 2, hugepages-2Mi: 100Mi}\n"
                    "  requirements:\n  - {key: node.kubernetes.io/instance-type, operator: In, values: [a, b]}\n"
                    "  - {key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ['4']}\n"
                    "status:\n  conditions:\n  - {type: Ready, status: 'True', reason: Ready, message: '',"
                    " lastTransitionTime: '2024-01-01T00:00:00Z'}\n");
    kp_arena *a = kp_arena_new();
    kp_object obj;
    cr_assert_eq(kp_decode_object(a, j, &obj), 0, "%s", kp_error_last());
    cr_assert_eq(obj.kind, KP_KIND_NODEOVERLAY);
    const kp_nodeoverlay *o = &obj.u.nodeoverlay;
    cr_expect_str_eq(o->meta.name, "o");
    cr_expect(o->has_weight && o->weight == 7);
    cr_expect(o->has_price_adjustment && !o->has_price);
    cr_expect_str_eq(o->price_adjustment, "-10%");
    cr_expect_eq(o->n_requirements, 2);
    cr_expect_eq(o->requirements[1].op, KP_OP_GTE);
    cr_expect_eq(kp_resource_list_milli(&o->capacity, "example.com/fuse"), 2000);
    cr_expect_eq(kp_resource_list_milli(&o->capacity, "hugepages-2Mi"), 100LL * 1024 * 1024 * 1000);
    cr_expect(kp_conditions_is_true(&o->conditions, "Ready"));
    cr_expect_null(o->invalid);
    kp_price_change c;
    cr_expect(kp_nodeoverlay_price_change(o, &c));
    cr_expect_eq(c.kind, KP_PRICE_PERCENT);
    cr_expect_str_eq(kp_object_get_meta(&obj)->name, "o");
    kp_arena_free(a);
    cJSON_Delete(j);
}

Test(nodeoverlay, decoding_errors_name_the_field)
{
    static const struct {
        const char *spec, *want;
    } cases[] = {
        {"{price: '+1', requirements: []}", "spec.price: price \"+1\""},
        {"{priceAdjustment: '10%', requirements: []}", "spec.priceAdjustment: priceAdjustment \"10%\""},
        {"{capacity: {a/b: lots}, requirements: []}", "spec.capacity"},
        {"{weight: 'heavy', requirements: []}", "spec.weight"},
        {"{requirements: {key: a}}", "spec.requirements"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char text[256];
        snprintf(text, sizeof(text), "metadata: {name: o}\nspec: %s\n", cases[i].spec);
        cJSON *j = yaml(text);
        kp_arena *a = kp_arena_new();
        kp_nodeoverlay o;
        cr_expect_eq(kp_decode_nodeoverlay(a, j, &o), KP_EINVALID, "%s", cases[i].spec);
        cr_expect(strstr(kp_error_last(), cases[i].want), "%s: %s", cases[i].want, kp_error_last());
        kp_arena_free(a);
        cJSON_Delete(j);
    }
}

Test(nodeoverlay, from_json_flags_what_validation_refuses)
{
    cJSON *j = yaml("metadata: {name: o}\nspec:\n  capacity: {cpu: '1'}\n  requirements:\n"
                    "  - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}\n");
    kp_arena *a = kp_arena_new();
    kp_nodeoverlay o;
    cr_assert_eq(kp_nodeoverlay_from_json(a, j, &o), 0, "%s", kp_error_last());
    cr_assert_not_null(o.invalid);
    cr_expect(strstr(o.invalid, "spec.capacity[cpu]") && strstr(o.invalid, "invalid resource restricted"), "%s",
              o.invalid);
    cJSON_Delete(j);
    j = yaml("metadata: {name: o}\nspec: {requirements: [], priceAdjustment: '+5%'}\n");
    cr_assert_eq(kp_nodeoverlay_from_json(a, j, &o), 0);
    cr_expect_null(o.invalid, "%s", o.invalid);
    kp_arena_free(a);
    cJSON_Delete(j);
}

Test(nodeoverlay, order_is_weight_then_the_later_name)
{
    kp_nodeoverlay o[5];
    memset(o, 0, sizeof(o));
    const char *names[] = {"a", "b", "c", "d", "e"};
    int32_t weights[] = {0, 10, 10, 0, 20};
    const kp_nodeoverlay *p[5];
    for (int i = 0; i < 5; i++) {
        o[i].meta.name = names[i];
        o[i].has_weight = weights[i] != 0;
        o[i].weight = weights[i];
        p[i] = &o[i];
    }
    kp_nodeoverlay_sort(p, 5);
    const char *want[] = {"e", "c", "b", "d", "a"};
    for (int i = 0; i < 5; i++)
        cr_expect_str_eq(p[i]->meta.name, want[i], "position %d", i);
}

Test(nodeoverlay, restricted_resources)
{
    cr_expect(kp_nodeoverlay_resource_restricted("cpu"));
    cr_expect(kp_nodeoverlay_resource_restricted("memory"));
    cr_expect(kp_nodeoverlay_resource_restricted("ephemeral-storage"));
    cr_expect(kp_nodeoverlay_resource_restricted("pods"));
    cr_expect_not(kp_nodeoverlay_resource_restricted("nvidia.com/gpu"));
    cr_expect_not(kp_nodeoverlay_resource_restricted("hugepages-1Gi"));
}
