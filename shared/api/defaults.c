/*
 * Defaulting: the JSON Patch that gives an object the defaults its CRD schema
 * declares (the +kubebuilder:default markers of Karpenter's Go types), as an
 * API server applies them. A default applies where its field is absent (or
 * null, which a structural schema prunes first) and its parent object exists;
 * defaults inside a defaulted value apply too, so rules run parent first and
 * each sees the object as the earlier rules left it.
 *
 * The defaults themselves are the CRD schemas' (scripts/gen-crds.py writes
 * them to api/crd_tables.c); this file only applies them.
 *
 * Status defaults (NodePool status.nodes, EC2NodeClass capacity reservation
 * state) are left to the API server: status is a subresource, and a patch from
 * a webhook on the main resource cannot change it.
 */
#include "api/admission.h"
#include "api/crd_tables.h"
#include "api/jsonpatch.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rules, parents first, come from the CRD schemas (api/crd_tables.h). */
typedef kp_crd_default default_rule;

static cJSON *parse_default(const char *json)
{
    cJSON *value = cJSON_Parse(json);
    if (!value) {
        /* The table is constant: this is out of memory (or a typo the tests catch). */
        fputs("fatal: cannot build a default value\n", stderr);
        abort();
    }
    return value;
}

/* Set member `token` of `node` to the default, in the working copy and as a
 * patch operation. */
static void set_default(cJSON *node, const char *token, kp_jsonpointer *ptr, const char *json,
                        cJSON *patch)
{
    cJSON *existing = cJSON_GetObjectItemCaseSensitive(node, token);
    if (existing && !cJSON_IsNull(existing)) return;
    kp_jsonpointer_push(ptr, token);
    if (!ptr->truncated) {
        if (existing) {
            kp_jsonpatch_replace(patch, kp_jsonpointer_cstr(ptr), parse_default(json));
            cJSON_ReplaceItemInObjectCaseSensitive(node, token, parse_default(json));
        } else {
            kp_jsonpatch_add(patch, kp_jsonpointer_cstr(ptr), parse_default(json));
            cJSON_AddItemToObject(node, token, parse_default(json));
        }
    }
    kp_jsonpointer_pop(ptr);
}

static void apply_rule(cJSON *node, const char *rest, kp_jsonpointer *ptr, const char *json,
                       cJSON *patch)
{
    char token[256];
    size_t n = strcspn(rest, "/");
    if (n >= sizeof(token)) return;
    memcpy(token, rest, n);
    token[n] = '\0';
    if (rest[n] == '\0') {
        if (cJSON_IsObject(node)) set_default(node, token, ptr, json, patch);
        return;
    }
    if (strcmp(token, "*") == 0) {
        size_t i = 0;
        cJSON *item, *array = cJSON_IsArray(node) ? node : NULL;
        cJSON_ArrayForEach(item, array)
        {
            kp_jsonpointer_push_index(ptr, i++);
            apply_rule(item, rest + n + 1, ptr, json, patch);
            kp_jsonpointer_pop(ptr);
        }
        return;
    }
    cJSON *child = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, token) : NULL;
    if (!child) return;
    kp_jsonpointer_push(ptr, token);
    apply_rule(child, rest + n + 1, ptr, json, patch);
    kp_jsonpointer_pop(ptr);
}

static const default_rule *rules_for(enum kp_admission_kind kind)
{
    switch (kind) {
    case KP_ADMIT_NODEPOOL:
        return kp_crd_nodepool_defaults;
    case KP_ADMIT_NODECLAIM:
        return kp_crd_nodeclaim_defaults;
    case KP_ADMIT_EC2NODECLASS:
        return kp_crd_ec2nodeclass_defaults;
    case KP_ADMIT_NODEOVERLAY:
        return kp_crd_nodeoverlay_defaults;
    }
    return NULL;
}

static void apply_rules(const default_rule *rules, cJSON *work, cJSON *patch)
{
    for (const default_rule *r = rules; r->path; r++) {
        kp_jsonpointer ptr;
        kp_jsonpointer_init(&ptr);
        apply_rule(work, r->path, &ptr, r->json, patch);
    }
}

int kp_admission_apply_defaults(enum kp_admission_kind kind, cJSON *obj)
{
    const default_rule *rules = rules_for(kind);
    if (!rules) return kp_error_set(KP_EINVALID, "unknown admission kind %d", (int)kind);
    if (!cJSON_IsObject(obj)) return 0;
    cJSON *patch = kp_jsonpatch_new();
    apply_rules(rules, obj, patch);
    cJSON_Delete(patch);
    return 0;
}

int kp_admission_default(enum kp_admission_kind kind, const cJSON *obj, kp_admission_result *res)
{
    const default_rule *rules = rules_for(kind);
    if (!rules) return kp_error_set(KP_EINVALID, "unknown admission kind %d", (int)kind);
    if (!cJSON_IsObject(obj))
        return kp_error_set(KP_EINVALID, "%s: the object is not a JSON object",
                            kp_admission_kind_name(kind));
    cJSON *work = cJSON_Duplicate(obj, true);
    if (!work) {
        fputs("fatal: out of memory copying an object\n", stderr);
        abort();
    }
    cJSON *patch = res->patch ? res->patch : kp_jsonpatch_new();
    apply_rules(rules, work, patch);
    cJSON_Delete(work);
    if (!patch->child && patch != res->patch) {
        cJSON_Delete(patch);
        patch = NULL;
    }
    res->patch = patch;
    return 0;
}
