/*
 * api/defaults: the JSON Patch kp_admission_default returns gives an object
 * exactly the defaults of Karpenter's CRD schemas (applying it yields the
 * expected object), adds nothing that is present, and replaces nulls.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "api/jsonpatch.h"
#include "base/error.h"

typedef struct default_case {
    const char *name;
    enum kp_admission_kind kind;
    const char *in;
    const char *want; /* the object after the patch; NULL: no patch at all */
    int ops;          /* how many operations the patch has */
} default_case;

#define NODEPOOL_DISRUPTION                                                                        \
    "\"disruption\":{\"consolidateAfter\":\"0s\",\"consolidationPolicy\":"                         \
    "\"WhenEmptyOrUnderutilized\",\"budgets\":[{\"nodes\":\"10%\"}]}"
#define TEMPLATE(extra)                                                                            \
    "\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":"          \
    "\"EC2NodeClass\",\"name\":\"default\"},\"requirements\":[]" extra "}}"
#define METADATA_OPTIONS                                                                           \
    "\"metadataOptions\":{\"httpEndpoint\":\"enabled\",\"httpProtocolIPv6\":\"disabled\","         \
    "\"httpPutResponseHopLimit\":1,\"httpTokens\":\"required\"}"

static const default_case cases[] = {
    {"a bare NodePool gets disruption and expireAfter", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE("") "}}",
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"720h\"") "," NODEPOOL_DISRUPTION "}}", 4},
    {"a fully set NodePool gets nothing", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE(
         ",\"expireAfter\":\"Never\"") ",\"disruption\":{\"consolidateAfter\":"
                                       "\"1m\",\"consolidationPolicy\":\"WhenEmpty\",\"budgets\":[{"
                                       "\"nodes\":\"1\"}]}}}",
     NULL, 0},
    {"an empty disruption block is filled in", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"1h\"") ",\"disruption\":{}}}",
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"1h\"") "," NODEPOOL_DISRUPTION "}}", 3},
    {"a null disruption block is replaced", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"1h\"") ",\"disruption\":null}}",
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"1h\"") "," NODEPOOL_DISRUPTION "}}", 3},
    {"a budget without nodes gets 10%", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE(
         ",\"expireAfter\":\"1h\"") ",\"disruption\":{\"consolidateAfter\":"
                                    "\"0s\",\"consolidationPolicy\":\"WhenEmpty\",\"budgets\":[{"
                                    "\"nodes\":\"5\"},{\"schedule\":"
                                    "\"@daily\",\"duration\":\"1h\"}]}}}",
     "{\"spec\":{" TEMPLATE(
         ",\"expireAfter\":\"1h\"") ",\"disruption\":{\"consolidateAfter\":"
                                    "\"0s\",\"consolidationPolicy\":\"WhenEmpty\",\"budgets\":[{"
                                    "\"nodes\":\"5\"},{\"schedule\":"
                                    "\"@daily\",\"duration\":\"1h\",\"nodes\":\"10%\"}]}}}",
     1},
    {"an empty budget list stays empty", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"1h\"") ",\"disruption\":{\"consolidateAfter\":"
                                                       "\"0s\",\"consolidationPolicy\":"
                                                       "\"WhenEmpty\",\"budgets\":[]}}}",
     NULL, 0},
    {"budgets that are not objects are left alone", KP_ADMIT_NODEPOOL,
     "{\"spec\":{" TEMPLATE(",\"expireAfter\":\"1h\"") ",\"disruption\":{\"consolidateAfter\":"
                                                       "\"0s\",\"consolidationPolicy\":"
                                                       "\"WhenEmpty\",\"budgets\":[\"10%\"]}}}",
     NULL, 0},
    {"a NodePool without a template spec only gets disruption", KP_ADMIT_NODEPOOL,
     "{\"spec\":{\"template\":{}}}", "{\"spec\":{\"template\":{}," NODEPOOL_DISRUPTION "}}", 3},
    {"a NodePool without spec gets nothing", KP_ADMIT_NODEPOOL, "{\"metadata\":{}}", NULL, 0},
    {"a spec that is not an object gets nothing", KP_ADMIT_NODEPOOL, "{\"spec\":[]}", NULL, 0},
    {"a static NodePool is defaulted the same way", KP_ADMIT_NODEPOOL,
     "{\"spec\":{\"replicas\":3," TEMPLATE(",\"expireAfter\":\"1h\"") "}}",
     "{\"spec\":{\"replicas\":3," TEMPLATE(",\"expireAfter\":\"1h\"") "," NODEPOOL_DISRUPTION "}}",
     3},
    {"a NodeClaim gets expireAfter", KP_ADMIT_NODECLAIM, "{\"spec\":{\"requirements\":[]}}",
     "{\"spec\":{\"requirements\":[],\"expireAfter\":\"720h\"}}", 1},
    {"a NodeClaim with expireAfter gets nothing", KP_ADMIT_NODECLAIM,
     "{\"spec\":{\"expireAfter\":\"Never\"}}", NULL, 0},
    {"a null expireAfter is replaced", KP_ADMIT_NODECLAIM, "{\"spec\":{\"expireAfter\":null}}",
     "{\"spec\":{\"expireAfter\":\"720h\"}}", 1},
    {"an EC2NodeClass gets metadata options", KP_ADMIT_EC2NODECLASS, "{\"spec\":{\"role\":\"r\"}}",
     "{\"spec\":{\"role\":\"r\"," METADATA_OPTIONS "}}", 1},
    {"partial metadata options are completed", KP_ADMIT_EC2NODECLASS,
     "{\"spec\":{\"metadataOptions\":{\"httpTokens\":\"optional\"}}}",
     "{\"spec\":{\"metadataOptions\":{\"httpTokens\":\"optional\",\"httpEndpoint\":\"enabled\","
     "\"httpProtocolIPv6\":\"disabled\",\"httpPutResponseHopLimit\":1}}}",
     3},
    {"complete metadata options get nothing", KP_ADMIT_EC2NODECLASS,
     "{\"spec\":{\"metadataOptions\":{\"httpEndpoint\":\"disabled\",\"httpProtocolIPv6\":"
     "\"enabled\",\"httpPutResponseHopLimit\":2,\"httpTokens\":\"optional\"}}}",
     NULL, 0},
    {"null metadata options are replaced", KP_ADMIT_EC2NODECLASS,
     "{\"spec\":{\"metadataOptions\":null}}", "{\"spec\":{" METADATA_OPTIONS "}}", 1},
    {"status is not defaulted", KP_ADMIT_EC2NODECLASS,
     "{\"spec\":{" METADATA_OPTIONS "},\"status\":{\"capacityReservations\":[{\"id\":\"cr-1\"}]}}",
     NULL, 0},
};

static void free_params(struct criterion_test_params *p)
{
    cr_free(p->params);
}

ParameterizedTestParameters(defaults, table)
{
    size_t n = sizeof(cases) / sizeof(cases[0]);
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, n, free_params);
}

ParameterizedTest(size_t *i, defaults, table)
{
    const default_case *c = &cases[*i];
    cJSON *in = cJSON_Parse(c->in);
    cr_assert_not_null(in, "%s: bad input", c->name);
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cr_assert_eq(kp_admission_default(c->kind, in, &res), 0, "%s: %s", c->name, kp_error_last());
    if (!c->want) {
        char *text = res.patch ? cJSON_PrintUnformatted(res.patch) : NULL;
        cr_expect_null(res.patch, "%s: expected no patch, got %s", c->name, text);
        free(text);
    } else {
        cr_assert_not_null(res.patch, "%s: expected a patch", c->name);
        cr_expect_eq(cJSON_GetArraySize(res.patch), c->ops, "%s: operations", c->name);
        cJSON *doc = cJSON_Duplicate(in, 1);
        cr_assert_eq(kp_jsonpatch_apply(doc, res.patch), 0, "%s: %s", c->name, kp_error_last());
        cJSON *want = cJSON_Parse(c->want);
        char *got = cJSON_PrintUnformatted(doc);
        cr_expect(cJSON_Compare(doc, want, 1), "%s: got %s", c->name, got);
        free(got);
        cJSON_Delete(want);
        cJSON_Delete(doc);
    }
    cJSON *again = cJSON_Parse(c->in);
    cr_expect(cJSON_Compare(in, again, 1), "%s: the input was changed", c->name);
    cJSON_Delete(again);
    kp_admission_result_clear(&res);
    cr_expect_null(res.patch);
    kp_arena_free(arena);
    cJSON_Delete(in);
}

Test(defaults, patch_operations_are_exact)
{
    cJSON *in = cJSON_Parse("{\"spec\":{\"disruption\":null," TEMPLATE("") "}}");
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cr_assert_eq(kp_admission_default(KP_ADMIT_NODEPOOL, in, &res), 0);
    cJSON *want = cJSON_Parse(
        "[{\"op\":\"replace\",\"path\":\"/spec/"
        "disruption\",\"value\":{\"consolidateAfter\":\"0s\"}},"
        "{\"op\":\"add\",\"path\":\"/spec/disruption/consolidationPolicy\",\"value\":"
        "\"WhenEmptyOrUnderutilized\"},"
        "{\"op\":\"add\",\"path\":\"/spec/disruption/budgets\",\"value\":[{\"nodes\":\"10%\"}]},"
        "{\"op\":\"add\",\"path\":\"/spec/template/spec/expireAfter\",\"value\":\"720h\"}]");
    char *got = cJSON_PrintUnformatted(res.patch);
    cr_expect(cJSON_Compare(res.patch, want, 1), "got %s", got);
    free(got);
    cJSON_Delete(want);
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    cJSON_Delete(in);
}

Test(defaults, appends_to_an_existing_patch)
{
    cJSON *in = cJSON_Parse("{\"spec\":{}}");
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    res.patch = kp_jsonpatch_new();
    kp_jsonpatch_add(res.patch, "/metadata", cJSON_CreateObject());
    cr_assert_eq(kp_admission_default(KP_ADMIT_NODECLAIM, in, &res), 0);
    cr_expect_eq(cJSON_GetArraySize(res.patch), 2);
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    cJSON_Delete(in);
}

Test(defaults, refuses_what_is_not_an_object)
{
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cJSON *arr = cJSON_CreateArray();
    cr_expect_eq(kp_admission_default(KP_ADMIT_NODEPOOL, arr, &res), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "NodePool: the object is not a JSON object") != NULL, "%s",
              kp_error_last());
    cr_expect_eq(kp_admission_default((enum kp_admission_kind)7, arr, &res), KP_EINVALID);
    cr_expect_null(res.patch);
    cJSON_Delete(arr);
    kp_arena_free(arena);
}
