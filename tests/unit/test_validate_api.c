/*
 * api/admission's interface: kind names and lookup, results and warnings,
 * inputs validation cannot run on, UPDATE without the old object, and how a
 * denial with several errors reads.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "base/error.h"
#include "format/load.h"
#include "helpers/assert.h"

static cJSON *parse(const char *json)
{
    cJSON *v = cJSON_Parse(json);
    cr_assert_not_null(v, "bad test JSON: %s", json);
    return v;
}

Test(admission, kind_names_and_lookup)
{
    cr_expect_str_eq(kp_admission_kind_name(KP_ADMIT_NODEPOOL), "NodePool");
    cr_expect_str_eq(kp_admission_kind_name(KP_ADMIT_NODECLAIM), "NodeClaim");
    cr_expect_str_eq(kp_admission_kind_name(KP_ADMIT_EC2NODECLASS), "EC2NodeClass");
    cr_expect_str_eq(kp_admission_kind_name((enum kp_admission_kind)9), "");
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1", "NodePool"), KP_ADMIT_NODEPOOL);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1", "NodeClaim"), KP_ADMIT_NODECLAIM);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.k8s.aws", "v1", "EC2NodeClass"),
                 KP_ADMIT_EC2NODECLASS);
    cr_expect_str_eq(kp_admission_kind_name(KP_ADMIT_NODEOVERLAY), "NodeOverlay");
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1alpha1", "NodeOverlay"),
                 KP_ADMIT_NODEOVERLAY);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1", "NodeOverlay"), -1);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1alpha1", "NodePool"), -1);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1beta1", "NodePool"), -1);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.k8s.aws", "v1", "NodePool"), -1);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", "v1", "EC2NodeClass"), -1);
    cr_expect_eq(kp_admission_kind_lookup("", "v1", "Pod"), -1);
    cr_expect_eq(kp_admission_kind_lookup(NULL, "v1", "NodePool"), -1);
    cr_expect_eq(kp_admission_kind_lookup("karpenter.sh", NULL, "NodePool"), -1);
}

Test(admission, warnings_grow_and_live_in_the_arena)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cr_expect_eq(res.n_warnings, 0);
    cr_expect_null(res.patch);
    for (int i = 0; i < 20; i++)
        kp_admission_warn(&res, "warning %d of %s", i, "twenty");
    cr_assert_eq(res.n_warnings, 20);
    cr_expect_str_eq(res.warnings[0], "warning 0 of twenty");
    cr_expect_str_eq(res.warnings[19], "warning 19 of twenty");
    cr_expect_geq(res.cap_warnings, 20);
    kp_admission_result_clear(&res);
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
}

Test(admission, inputs_that_cannot_be_validated)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cJSON *str = cJSON_CreateString("NodePool");
    cr_expect_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, str, NULL, &res),
                 KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "not a JSON object") != NULL, "%s", kp_error_last());
    cr_expect_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, NULL, NULL, &res),
                 KP_EINVALID);
    cJSON *obj = parse("{\"spec\":{}}");
    cr_expect_eq(kp_admission_validate((enum kp_admission_kind)9, KP_ADMIT_CREATE, obj, NULL, &res),
                 KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "unknown admission kind 9") != NULL, "%s", kp_error_last());
    cr_expect_eq(res.errors.count, 0);
    cJSON_Delete(obj);
    cJSON_Delete(str);
    kp_arena_free(arena);
}

#define NODEPOOL(extra)                                                                            \
    "{\"spec\":{" extra                                                                            \
    "\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\","                   \
    "\"kind\":\"EC2NodeClass\",\"name\":\"default\"},\"requirements\":[]}}}}"

Test(admission, update_without_the_old_object_skips_transition_rules)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cJSON *obj = parse(NODEPOOL("\"replicas\":3,"));
    cJSON *old = parse(NODEPOOL(""));
    cr_assert_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_UPDATE, obj, NULL, &res), 0);
    cr_expect_eq(res.errors.count, 0, "%s", kp_field_errors_string(arena, &res.errors));
    cr_assert_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_UPDATE, obj, old, &res), 0);
    cr_expect_eq(res.errors.count, 1, "%s", kp_field_errors_string(arena, &res.errors));
    /* On CREATE the old object is ignored even when given. */
    kp_admission_result_init(&res, arena);
    cr_assert_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, obj, old, &res), 0);
    cr_expect_eq(res.errors.count, 0, "%s", kp_field_errors_string(arena, &res.errors));
    cJSON_Delete(old);
    cJSON_Delete(obj);
    kp_arena_free(arena);
}

Test(admission, every_error_is_reported_and_rendered_like_kubernetes)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cJSON *obj =
        parse(NODEPOOL("\"weight\":0,\"disruption\":{\"consolidationPolicy\":\"Sometimes\"},"));
    char *before = cJSON_PrintUnformatted(obj);
    cr_assert_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, obj, NULL, &res), 0);
    cr_assert_eq(res.errors.count, 2);
    cr_expect_str_eq(
        kp_field_errors_string(arena, &res.errors),
        "[spec.weight: Invalid value: 0: should be greater than or equal to 1, "
        "spec.disruption.consolidationPolicy: Unsupported value: \"Sometimes\": "
        "supported values: \"WhenEmpty\", \"WhenEmptyOrUnderutilized\", \"Balanced\"]");
    char *after = cJSON_PrintUnformatted(obj);
    cr_expect_str_eq(after, before, "validation must not change the object");
    free(after);
    free(before);
    cJSON_Delete(obj);
    kp_arena_free(arena);
}

Test(admission, warnings_name_their_field)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cJSON *obj = parse(NODEPOOL("\"disruption\":{\"budgets\":[{\"nodes\":\"0\"}]},"));
    cr_assert_eq(kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, obj, NULL, &res), 0);
    cr_expect_eq(res.errors.count, 0);
    cr_assert_eq(res.n_warnings, 2);
    cr_expect_str_eq(res.warnings[0], "spec: no limits are set, so this NodePool can launch nodes "
                                      "without bound");
    cr_expect_str_eq(res.warnings[1], "spec.disruption.budgets[0]: nodes: \"0\" with no schedule "
                                      "blocks all voluntary disruption forever");
    cJSON_Delete(obj);
    kp_arena_free(arena);
}

/* The manifests we ship as examples are valid, so users who start from them
 * are not refused by the webhook. */
Test(admission, shipped_examples_are_valid)
{
    kp_doc_list *list = kp_doc_list_new();
    KP_ASSERT_OK(kp_load_path(list, KP_SOURCE_DIR "/examples", NULL));
    kp_arena *arena = kp_arena_new();
    size_t checked = 0;
    for (size_t i = 0; i < kp_doc_list_count(list); i++) {
        const kp_doc *d = kp_doc_list_at(list, i);
        const char *api =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d->obj, "apiVersion"));
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d->obj, "kind"));
        const char *slash = api ? strchr(api, '/') : NULL;
        if (!slash || !kind) continue;
        char group[128];
        snprintf(group, sizeof(group), "%.*s", (int)(slash - api), api);
        int k = kp_admission_kind_lookup(group, slash + 1, kind);
        if (k < 0) continue;
        kp_admission_result res;
        kp_admission_result_init(&res, arena);
        char origin[256];
        kp_doc_origin(d, origin, sizeof(origin));
        cr_assert_eq(
            kp_admission_validate((enum kp_admission_kind)k, KP_ADMIT_CREATE, d->obj, NULL, &res),
            0);
        cr_expect_eq(res.errors.count, 0, "%s: %s", origin,
                     kp_field_errors_string(arena, &res.errors));
        checked++;
    }
    cr_expect_geq(checked, 4, "only %zu Karpenter objects found in examples/", checked);
    kp_arena_free(arena);
    kp_doc_list_free(list);
}
