/*
 * EC2NodeClass policy rules. Where Karpenter's CRD has a default, an absent
 * field reads as that default (metadataOptions.httpTokens defaults to
 * "required"; the block device mappings Karpenter picks for an AMI family when
 * none are given are encrypted), so only what a user wrote can break a rule.
 */
#include "webhook/policy_internal.h"

#include <fnmatch.h>
#include <string.h>

static const cJSON *get(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static void check_imdsv2(const kp_policy *p, const cJSON *spec, kp_admission_result *res)
{
    if (!p->nodeclasses.require_imdsv2) return;
    const cJSON *tokens = get(get(spec, "metadataOptions"), "httpTokens");
    if (!tokens || cJSON_IsNull(tokens) ||
        (cJSON_IsString(tokens) && strcmp(tokens->valuestring, "required") == 0))
        return;
    kp_field_errors_add(&res->errors, KP_FIELD_FORBIDDEN, "spec.metadataOptions.httpTokens", NULL,
                        "policy rule ec2NodeClasses.requireIMDSv2: instances must require IMDSv2 "
                        "session tokens; to comply, set spec.metadataOptions.httpTokens to "
                        "\"required\"");
}

static void check_encrypted(const kp_policy *p, const cJSON *spec, kp_admission_result *res)
{
    if (!p->nodeclasses.require_encrypted) return;
    const cJSON *mappings = get(spec, "blockDeviceMappings");
    size_t i = 0;
    for (const cJSON *m = cJSON_IsArray(mappings) ? mappings->child : NULL; m; m = m->next, i++) {
        const cJSON *ebs = get(m, "ebs");
        if (!ebs || cJSON_IsTrue(get(ebs, "encrypted"))) continue;
        const char *path =
            kp_arena_printf(res->errors.arena, "spec.blockDeviceMappings[%zu].ebs.encrypted", i);
        kp_field_errors_add(&res->errors, KP_FIELD_FORBIDDEN, path, NULL,
                            "policy rule ec2NodeClasses.requireEncryptedVolumes: EBS volumes "
                            "must be encrypted; to comply, set %s to true",
                            path);
    }
}

static bool alias_allowed(const kp_policy_list *allowed, const char *alias)
{
    for (size_t i = 0; i < allowed->count; i++)
        if (fnmatch(allowed->items[i], alias, 0) == 0) return true;
    return false;
}

static void check_aliases(const kp_policy *p, const cJSON *spec, kp_admission_result *res)
{
    const kp_policy_list *allowed = &p->nodeclasses.ami_aliases;
    if (!allowed->set) return;
    kp_arena *a = res->errors.arena;
    const char *list = kp_policy_list_string(a, allowed->items, allowed->count);
    const cJSON *terms = get(spec, "amiSelectorTerms");
    size_t i = 0;
    for (const cJSON *t = cJSON_IsArray(terms) ? terms->child : NULL; t; t = t->next, i++) {
        const cJSON *alias = get(t, "alias");
        if (cJSON_IsString(alias) && alias_allowed(allowed, alias->valuestring)) continue;
        const char *path = kp_arena_printf(a, "spec.amiSelectorTerms[%zu]", i);
        if (cJSON_IsString(alias))
            kp_field_errors_add(&res->errors, KP_FIELD_FORBIDDEN, path, NULL,
                                "policy rule ec2NodeClasses.allowedAMIAliases: AMI alias \"%s\" "
                                "is not allowed; to comply, use an alias matching one of %s",
                                alias->valuestring, list);
        else
            kp_field_errors_add(&res->errors, KP_FIELD_FORBIDDEN, path, NULL,
                                "policy rule ec2NodeClasses.allowedAMIAliases: AMIs must be "
                                "chosen by alias; to comply, replace this term with "
                                "{alias: ...} matching one of %s",
                                list);
    }
}

int kp_policy_check_nodeclass(const kp_policy *policy, const cJSON *nodeclass,
                              kp_admission_result *res)
{
    const cJSON *spec = get(nodeclass, "spec");
    check_imdsv2(policy, spec, res);
    check_encrypted(policy, spec, res);
    check_aliases(policy, spec, res);
    return 0;
}
