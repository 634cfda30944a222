/* Conditions, finalizers and merge patches on objects as JSON (controller/objutil). */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/objutil.h"

static cJSON *parse(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "bad test JSON");
    return o;
}

#define T0 INT64_C(1700000000000000000)

Test(objutil, set_condition_moves_the_time_only_on_a_new_status)
{
    cJSON *o = parse("{\"metadata\":{\"name\":\"a\",\"generation\":3}}");
    cr_expect(kp_obj_set_condition(o, "Launched", "Unknown", "Pending", "waiting", T0));
    cr_expect_str_eq(kp_obj_condition(o, "Launched"), "Unknown");
    int64_t first = kp_obj_condition_since(o, "Launched");
    cr_expect_eq(first, T0);
    /* Same status, new message: changed, but the transition time stays. */
    cr_expect(kp_obj_set_condition(o, "Launched", "Unknown", "Pending", "still waiting", T0 + 5 * KP_NS_PER_SEC));
    cr_expect_eq(kp_obj_condition_since(o, "Launched"), first);
    /* Nothing new: unchanged. */
    cr_expect(!kp_obj_set_condition(o, "Launched", "Unknown", "Pending", "still waiting", T0 + 9 * KP_NS_PER_SEC));
    /* New status: new transition time; observedGeneration follows metadata.generation. */
    cr_expect(kp_obj_set_condition(o, "Launched", "True", NULL, NULL, T0 + 10 * KP_NS_PER_SEC));
    cr_expect_eq(kp_obj_condition_since(o, "Launched"), T0 + 10 * KP_NS_PER_SEC);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions"), 0);
    cr_expect_str_eq(kp_obj_str(c, "reason"), "Launched", "a True condition without a reason takes its type");
    cr_expect_eq(cJSON_GetObjectItem(c, "observedGeneration")->valueint, 3);
    cr_expect_null(kp_obj_condition(o, "Registered"));
    cJSON_Delete(o);
}

Test(objutil, finalizers_labels_annotations)
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

Test(objutil, paths)
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
