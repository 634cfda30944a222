/* Objects as JSON (shared/kube/objutil): paths, conditions, Node readiness,
 * finalizers, labels and annotations. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/clock.h"
#include "kube/objutil.h"

static cJSON *parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "bad test JSON");
    return o;
}

Test(kube_objutil, paths)
{
    cJSON *o = parse("{\"spec\":{\"providerID\":\"kwok://a\",\"n\":3,\"list\":[1]},\"x\":null}");
    cr_expect_str_eq(kp_obj_str(o, "spec.providerID"), "kwok://a");
    cr_expect_null(kp_obj_str(o, "spec.n"), "a number is not a string");
    cr_expect_null(kp_obj_str(o, "spec.missing"));
    cr_expect_null(kp_obj_str(o, "spec.providerID.deeper"));
    cr_expect(cJSON_IsArray(kp_obj_get(o, "spec.list")));
    cr_expect(cJSON_IsNull(kp_obj_get(o, "x")));
    cr_expect_eq(kp_obj_get(o, ""), o);
    cr_expect_null(kp_obj_get(NULL, "spec"));
    cr_expect_null(kp_obj_str(NULL, "spec.providerID"));
    char long_field[300];
    memset(long_field, 'a', sizeof(long_field) - 1);
    long_field[sizeof(long_field) - 1] = '\0';
    cr_expect_null(kp_obj_get(o, long_field), "a field longer than the buffer finds nothing");
    cJSON_Delete(o);
}

Test(kube_objutil, conditions)
{
    cJSON *o = parse("{\"status\":{\"conditions\":["
                     "{\"type\":\"Ready\",\"status\":\"True\","
                     "\"lastTransitionTime\":\"2024-01-02T03:04:05Z\"},"
                     "{\"type\":\"Launched\",\"status\":\"False\",\"lastTransitionTime\":\"bad\"},"
                     "{\"type\":\"Registered\",\"status\":\"Unknown\"},"
                     "{\"type\":\"Odd\",\"status\":true},"
                     "{\"status\":\"True\"}]}}");
    cr_expect_str_eq(kp_obj_str(kp_obj_condition_get(o, "Launched"), "status"), "False");
    cr_expect_null(kp_obj_condition_get(o, "Initialized"));
    cr_expect_str_eq(kp_obj_condition(o, "Registered"), "Unknown");
    cr_expect_null(kp_obj_condition(o, "Odd"), "a status that is not a string is none");
    cr_expect(kp_obj_condition_is_true(o, "Ready"));
    cr_expect_not(kp_obj_condition_is_true(o, "Launched"));
    cr_expect_not(kp_obj_condition_is_true(o, "Registered"));
    cr_expect_not(kp_obj_condition_is_true(o, "Odd"));
    cr_expect_not(kp_obj_condition_is_true(o, "Initialized"));
    int64_t want = 0;
    cr_assert_eq(kp_time_parse_rfc3339("2024-01-02T03:04:05Z", &want), 0);
    cr_expect_eq(kp_obj_condition_since(o, "Ready"), want);
    cr_expect_eq(kp_obj_condition_since(o, "Launched"), 0, "an unreadable time is 0");
    cr_expect_eq(kp_obj_condition_since(o, "Registered"), 0);
    cr_expect_not(kp_obj_condition_is_true(NULL, "Ready"));
    cJSON_Delete(o);
}

Test(kube_objutil, node_ready)
{
    static const struct {
        const char *json;
        bool ready;
    } cases[] = {
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}", true},
        {"{\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
         "{\"type\":\"Ready\",\"status\":\"True\"}]}}",
         true},
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}", false},
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}", false},
        {"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"true\"}]}}", false},
        {"{\"status\":{\"conditions\":[{\"type\":\"ready\",\"status\":\"True\"}]}}", false},
        {"{\"status\":{\"conditions\":[]}}", false},
        {"{\"status\":{}}", false},
        {"{}", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *n = parse(cases[i].json);
        cr_expect_eq(kp_node_is_ready(n), cases[i].ready, "%s", cases[i].json);
        cJSON_Delete(n);
    }
    cr_expect_not(kp_node_is_ready(NULL));
}

Test(kube_objutil, disrupted_taint_on_and_off)
{
    /* Another effect under the same key is someone else's: kept, and not the taint. */
    cJSON *n = parse("{\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
                     "{\"key\":\"karpenter.sh/disrupted\",\"effect\":\"NoExecute\"}]}}");
    cr_expect_not(kp_node_has_disrupted_taint(n));
    cr_expect_not(kp_node_set_disrupted_taint(n, false));
    cr_expect(kp_node_set_disrupted_taint(n, true));
    cr_expect(kp_node_has_disrupted_taint(n));
    cr_expect_not(kp_node_set_disrupted_taint(n, true), "added once");
    cr_expect_eq(cJSON_GetArraySize(kp_obj_get(n, "spec.taints")), 3);
    cr_expect(kp_node_set_disrupted_taint(n, false));
    cr_expect_not(kp_node_has_disrupted_taint(n));
    const cJSON *left = kp_obj_get(n, "spec.taints");
    cr_expect_eq(cJSON_GetArraySize(left), 2);
    cr_expect_str_eq(kp_obj_str(cJSON_GetArrayItem(left, 1), "effect"), "NoExecute");
    cJSON_Delete(n);
    /* No spec, or taints that are not a list: made into one. */
    n = parse("{\"spec\":{\"taints\":\"x\"}}");
    cr_expect(kp_node_set_disrupted_taint(n, true));
    cr_expect_eq(cJSON_GetArraySize(kp_obj_get(n, "spec.taints")), 1);
    cJSON_Delete(n);
    n = parse("{}");
    cr_expect(kp_node_set_disrupted_taint(n, true));
    cr_expect(kp_node_has_disrupted_taint(n));
    cJSON_Delete(n);
    cr_expect_not(kp_node_has_disrupted_taint(NULL));
}

#define T0 INT64_C(1700000000000000000)

Test(kube_objutil, set_condition_moves_the_time_only_on_a_new_status)
{
    cJSON *o = parse("{\"metadata\":{\"name\":\"a\",\"generation\":3}}");
    cr_expect(kp_obj_set_condition(o, "Launched", "Unknown", "Pending", "waiting", T0));
    cr_expect_str_eq(kp_obj_condition(o, "Launched"), "Unknown");
    int64_t first = kp_obj_condition_since(o, "Launched");
    cr_expect_eq(first, T0);
    /* Same status, new message: changed, but the transition time stays. */
    cr_expect(kp_obj_set_condition(o, "Launched", "Unknown", "Pending", "still waiting",
                                   T0 + 5 * KP_NS_PER_SEC));
    cr_expect_eq(kp_obj_condition_since(o, "Launched"), first);
    /* Nothing new: unchanged. */
    cr_expect(!kp_obj_set_condition(o, "Launched", "Unknown", "Pending", "still waiting",
                                    T0 + 9 * KP_NS_PER_SEC));
    /* New status: new transition time; observedGeneration follows metadata.generation. */
    cr_expect(kp_obj_set_condition(o, "Launched", "True", NULL, NULL, T0 + 10 * KP_NS_PER_SEC));
    cr_expect_eq(kp_obj_condition_since(o, "Launched"), T0 + 10 * KP_NS_PER_SEC);
    const cJSON *c =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions"), 0);
    cr_expect_str_eq(kp_obj_str(c, "reason"), "Launched",
                     "a True condition without a reason takes its type");
    cr_expect_eq(cJSON_GetObjectItem(c, "observedGeneration")->valueint, 3);
    cr_expect_null(kp_obj_condition(o, "Registered"));
    cJSON_Delete(o);
}

Test(kube_objutil, finalizers_labels_annotations)
{
    cJSON *o = parse("{\"metadata\":{\"finalizers\":[\"other\"]}}");
    cr_expect(kp_obj_add_finalizer(o, "karpenter.sh/termination"));
    cr_expect(!kp_obj_add_finalizer(o, "karpenter.sh/termination"));
    cr_expect(kp_obj_has_finalizer(o, "other"));
    cr_expect(kp_obj_remove_finalizer(o, "other"));
    cr_expect(!kp_obj_remove_finalizer(o, "other"));
    cr_expect(kp_obj_has_finalizer(o, "karpenter.sh/termination"));
    cr_expect(kp_obj_set_label(o, "a", "1"));
    cr_expect(!kp_obj_set_label(o, "a", "1"));
    cr_expect(kp_obj_set_annotation(o, "b", "2"));
    cr_expect_str_eq(kp_obj_label(o, "a"), "1");
    cr_expect_str_eq(kp_obj_annotation(o, "b"), "2");
    cr_expect_null(kp_obj_label(o, "b"));
    cJSON_Delete(o);
}

Test(kube_objutil, ensure_makes_the_path)
{
    cJSON *o = parse("{\"spec\":{\"providerID\":\"kwok://a\",\"n\":1}}");
    cr_expect_str_eq(kp_obj_str(o, "spec.providerID"), "kwok://a");
    cr_expect_null(kp_obj_str(o, "spec.n"), "not a string");
    cr_expect_null(kp_obj_str(o, "spec.missing.deeper"));
    cJSON *made = kp_obj_ensure(o, "status.deep");
    cr_assert(cJSON_IsObject(made));
    cr_expect(cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "deep")));
    cJSON_Delete(o);
}
