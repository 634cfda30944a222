/*
 * Reading the policy file: YAML (or JSON) through format/yaml into the
 * struct in policy_internal.h. Strict on purpose: an unknown key, a wrong
 * type or a bad quantity is an error naming the key, because a misspelt rule
 * would otherwise be a rule silently not enforced.
 */
#include "webhook/policy_internal.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "format/yaml.h"
#include "webhook/filewatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POLICY_MAX_BYTES = 1 << 20 };

typedef int (*field_fn)(kp_policy *p, const cJSON *item, const char *path);

typedef struct field {
    const char *key;
    field_fn read;
} field;

static int fail(const char *path, const char *what)
{
    return kp_error_set(KP_EINVALID, "%s: %s", path, what);
}

static const char *child_path(kp_policy *p, const char *path, const char *key)
{
    return kp_arena_printf(p->arena, "%s.%s", path, key);
}

static int read_fields(kp_policy *p, const cJSON *obj, const char *path, const field *fields,
                       size_t n)
{
    if (!cJSON_IsObject(obj)) return fail(path, "must be a mapping");
    for (const cJSON *item = obj->child; item; item = item->next) {
        size_t i = 0;
        while (i < n && strcmp(fields[i].key, item->string) != 0)
            i++;
        if (i == n) return kp_error_set(KP_EINVALID, "%s: unknown key %s", path, item->string);
        int err = fields[i].read(p, item, child_path(p, path, item->string));
        if (err < 0) return err;
    }
    return 0;
}

static int read_list(kp_policy *p, kp_policy_list *list, const cJSON *item, const char *path)
{
    if (!cJSON_IsArray(item)) return fail(path, "must be a list of strings");
    size_t n = (size_t)cJSON_GetArraySize(item), i = 0;
    list->items = KP_ARENA_NEW(p->arena, const char *, n ? n : 1);
    for (const cJSON *v = item->child; v; v = v->next, i++) {
        if (!cJSON_IsString(v) || !*v->valuestring)
            return fail(path, "must be a list of non-empty strings");
        list->items[i] = kp_arena_strdup(p->arena, v->valuestring);
    }
    list->count = n;
    list->set = true;
    return 0;
}

static int read_bool(bool *out, const cJSON *item, const char *path)
{
    if (!cJSON_IsBool(item)) return fail(path, "must be true or false");
    *out = cJSON_IsTrue(item);
    return 0;
}

/* Quantities may be written as numbers (cpu: 8) or strings (memory: 64Gi). */
static int read_quantity(kp_policy *p, kp_policy_quantity *q, const cJSON *item, const char *path)
{
    char number[64];
    const char *text = NULL;
    if (cJSON_IsString(item)) {
        text = item->valuestring;
    } else if (cJSON_IsNumber(item)) {
        snprintf(number, sizeof(number), "%.15g", item->valuedouble);
        text = number;
    }
    if (!text) return fail(path, "must be a quantity such as 100m, 2 or 64Gi");
    int err = kp_quantity_parse(text, &q->value);
    if (err < 0) return kp_error_wrap(err, "%s", path);
    if (q->value.milli < 0) return fail(path, "must not be negative");
    /* Kept as written: messages and patches then show the user's own spelling. */
    q->text = kp_arena_strdup(p->arena, text);
    q->resource = kp_arena_strdup(p->arena, item->string);
    return 0;
}

static int read_quantity_map(kp_policy *p, kp_policy_quantity **out, size_t *n_out,
                             const cJSON *item, const char *path)
{
    if (!cJSON_IsObject(item))
        return fail(path, "must be a mapping of resource names to quantities");
    size_t n = (size_t)cJSON_GetArraySize(item), i = 0;
    kp_policy_quantity *qs = KP_ARENA_NEW(p->arena, kp_policy_quantity, n ? n : 1);
    for (const cJSON *v = item->child; v; v = v->next, i++) {
        int err = read_quantity(p, &qs[i], v, child_path(p, path, v->string));
        if (err < 0) return err;
    }
    *out = qs;
    *n_out = n;
    return 0;
}

/* ---- nodePools ---- */

static int np_require_limits(kp_policy *p, const cJSON *item, const char *path)
{
    return read_list(p, &p->nodepools.require_limits, item, path);
}

static int np_max_limits(kp_policy *p, const cJSON *item, const char *path)
{
    return read_quantity_map(p, &p->nodepools.max_limits, &p->nodepools.n_max_limits, item, path);
}

static int np_capacity_types(kp_policy *p, const cJSON *item, const char *path)
{
    return read_list(p, &p->nodepools.capacity_types, item, path);
}

static int np_categories(kp_policy *p, const cJSON *item, const char *path)
{
    return read_list(p, &p->nodepools.categories, item, path);
}

static int np_families(kp_policy *p, const cJSON *item, const char *path)
{
    return read_list(p, &p->nodepools.families, item, path);
}

static int np_architectures(kp_policy *p, const cJSON *item, const char *path)
{
    return read_list(p, &p->nodepools.architectures, item, path);
}

static int np_max_instance_types(kp_policy *p, const cJSON *item, const char *path)
{
    if (!cJSON_IsNumber(item) || item->valuedouble < 1 || item->valuedouble > 100000 ||
        item->valuedouble != (double)(long)item->valuedouble)
        return fail(path, "must be a whole number from 1 to 100000");
    p->nodepools.max_instance_types = (long)item->valuedouble;
    return 0;
}

static int np_require_budget(kp_policy *p, const cJSON *item, const char *path)
{
    return read_bool(&p->nodepools.require_budget, item, path);
}

static const field nodepool_fields[] = {
    {"requireLimits", np_require_limits},        {"maxLimits", np_max_limits},
    {"allowedCapacityTypes", np_capacity_types}, {"allowedInstanceCategories", np_categories},
    {"allowedInstanceFamilies", np_families},    {"allowedArchitectures", np_architectures},
    {"maxInstanceTypes", np_max_instance_types}, {"requireDisruptionBudget", np_require_budget},
};

/* ---- ec2NodeClasses ---- */

static int nc_imdsv2(kp_policy *p, const cJSON *item, const char *path)
{
    return read_bool(&p->nodeclasses.require_imdsv2, item, path);
}

static int nc_encrypted(kp_policy *p, const cJSON *item, const char *path)
{
    return read_bool(&p->nodeclasses.require_encrypted, item, path);
}

static int nc_aliases(kp_policy *p, const cJSON *item, const char *path)
{
    return read_list(p, &p->nodeclasses.ami_aliases, item, path);
}

static const field nodeclass_fields[] = {
    {"requireIMDSv2", nc_imdsv2},
    {"requireEncryptedVolumes", nc_encrypted},
    {"allowedAMIAliases", nc_aliases},
};

/* ---- pods ---- */

static int pod_defaults(kp_policy *p, const cJSON *item, const char *path)
{
    return read_quantity_map(p, &p->pods.default_requests, &p->pods.n_default_requests, item, path);
}

static int pod_warn(kp_policy *p, const cJSON *item, const char *path)
{
    return read_bool(&p->pods.warn_missing_requests, item, path);
}

static int read_labels(kp_policy *p, kp_policy_selector *sel, const cJSON *item, const char *path)
{
    if (!cJSON_IsObject(item)) return fail(path, "must be a mapping of label keys to values");
    size_t n = (size_t)cJSON_GetArraySize(item), i = 0;
    sel->label_keys = KP_ARENA_NEW(p->arena, const char *, n ? n : 1);
    sel->label_values = KP_ARENA_NEW(p->arena, const char *, n ? n : 1);
    for (const cJSON *v = item->child; v; v = v->next, i++) {
        if (!cJSON_IsString(v))
            return fail(child_path(p, path, v->string), "must be a string (quote numbers)");
        sel->label_keys[i] = kp_arena_strdup(p->arena, v->string);
        sel->label_values[i] = kp_arena_strdup(p->arena, v->valuestring);
    }
    sel->n_labels = n;
    return 0;
}

static int read_selector(kp_policy *p, kp_policy_selector *sel, const cJSON *term, const char *path)
{
    if (!cJSON_IsObject(term) || !term->child)
        return fail(path, "must be a non-empty mapping (an empty term would match every Pod)");
    for (const cJSON *item = term->child; item; item = item->next) {
        const char *sub = child_path(p, path, item->string);
        int err;
        if (strcmp(item->string, "matchLabels") == 0)
            err = read_labels(p, sel, item, sub);
        else if (strcmp(item->string, "ownerKinds") == 0)
            err = read_list(p, &sel->owner_kinds, item, sub);
        else if (strcmp(item->string, "resources") == 0)
            err = read_list(p, &sel->resources, item, sub);
        else if (strcmp(item->string, "namespaces") == 0)
            err = read_list(p, &sel->namespaces, item, sub);
        else
            err = kp_error_set(KP_EINVALID, "%s: unknown key %s", path, item->string);
        if (err < 0) return err;
    }
    return 0;
}

static int pod_do_not_disrupt(kp_policy *p, const cJSON *item, const char *path)
{
    if (!cJSON_IsArray(item)) return fail(path, "must be a list of selector terms");
    size_t n = (size_t)cJSON_GetArraySize(item), i = 0;
    p->pods.do_not_disrupt = KP_ARENA_NEW(p->arena, kp_policy_selector, n ? n : 1);
    for (const cJSON *term = item->child; term; term = term->next, i++) {
        const char *sub = kp_arena_printf(p->arena, "%s[%zu]", path, i);
        int err = read_selector(p, &p->pods.do_not_disrupt[i], term, sub);
        if (err < 0) return err;
    }
    p->pods.n_do_not_disrupt = n;
    return 0;
}

static const field pod_fields[] = {
    {"defaultRequests", pod_defaults},
    {"warnMissingRequests", pod_warn},
    {"doNotDisrupt", pod_do_not_disrupt},
};

#define N_FIELDS(a) (sizeof(a) / sizeof((a)[0]))

static int sec_nodepools(kp_policy *p, const cJSON *item, const char *path)
{
    return read_fields(p, item, path, nodepool_fields, N_FIELDS(nodepool_fields));
}

static int sec_nodeclasses(kp_policy *p, const cJSON *item, const char *path)
{
    return read_fields(p, item, path, nodeclass_fields, N_FIELDS(nodeclass_fields));
}

static int sec_pods(kp_policy *p, const cJSON *item, const char *path)
{
    return read_fields(p, item, path, pod_fields, N_FIELDS(pod_fields));
}

/* apiVersion and kind are optional; when present they must be ours. */
static int sec_header(kp_policy *p, const cJSON *item, const char *path)
{
    (void)p;
    const char *want =
        strcmp(path + strlen(path) - 4, "kind") == 0 ? "AdmissionPolicy" : "karpenter.sh/v1alpha1";
    if (!cJSON_IsString(item) || strcmp(item->valuestring, want) != 0)
        return kp_error_set(KP_EINVALID, "%s: must be %s", path, want);
    return 0;
}

static const field top_fields[] = {
    {"apiVersion", sec_header},          {"kind", sec_header}, {"nodePools", sec_nodepools},
    {"ec2NodeClasses", sec_nodeclasses}, {"pods", sec_pods},
};

kp_policy *kp_policy_new_empty(void)
{
    kp_policy *p = kp_xcalloc(1, sizeof(*p));
    atomic_init(&p->refs, 1);
    p->arena = kp_arena_new();
    p->pods.warn_missing_requests = true;
    return p;
}

/* Top-level keys are read with an empty parent path ("nodePools", not ".nodePools"). */
static int read_top(kp_policy *p, const cJSON *root)
{
    if (!cJSON_IsObject(root)) return kp_error_set(KP_EINVALID, "the policy must be a mapping");
    for (const cJSON *item = root->child; item; item = item->next) {
        size_t i = 0;
        while (i < N_FIELDS(top_fields) && strcmp(top_fields[i].key, item->string) != 0)
            i++;
        if (i == N_FIELDS(top_fields))
            return kp_error_set(KP_EINVALID, "unknown key %s", item->string);
        int err = top_fields[i].read(p, item, kp_arena_strdup(p->arena, item->string));
        if (err < 0) return err;
    }
    return 0;
}

/* No rule section at all: what a file truncated before being rewritten, or
 * emptied by mistake, reads as. apiVersion and kind alone set no rule. */
static bool sets_no_rule(const cJSON *root)
{
    for (const cJSON *item = cJSON_IsObject(root) ? root->child : NULL; item; item = item->next)
        if (strcmp(item->string, "apiVersion") != 0 && strcmp(item->string, "kind") != 0)
            return false;
    return true;
}

int kp_policy_parse(kp_policy **out, const char *data, size_t len, const char *name)
{
    cJSON *root = NULL;
    kp_yaml_limits limits = KP_YAML_LIMITS_INIT;
    limits.max_bytes = POLICY_MAX_BYTES;
    int err = kp_yaml_parse_one(&root, data, len, name, &limits);
    if (err < 0) return err;
    kp_policy *p = kp_policy_new_empty();
    p->empty = sets_no_rule(root);
    if (root) err = read_top(p, root);
    cJSON_Delete(root);
    if (err < 0) {
        kp_policy_unref(p);
        return name ? kp_error_wrap(err, "%s", name) : err;
    }
    *out = p;
    return 0;
}

int kp_policy_load(kp_policy **out, const char *path, bool allow_empty)
{
    kp_buf text = KP_BUF_INIT(POLICY_MAX_BYTES);
    int err = kp_file_read_regular(&text, path);
    kp_policy *p = NULL;
    if (err == 0) err = kp_policy_parse(&p, kp_buf_cstr(&text), text.len, path);
    if (err == 0 && !allow_empty && p->empty) {
        p = kp_policy_unref(p);
        err = kp_error_set(KP_EINVALID,
                           "%s: the policy sets no rule (the file is empty, comments only, null "
                           "or {}); refusing to switch every rule off (start the webhook with "
                           "--allow-empty-policy to run without rules)",
                           path);
    }
    kp_buf_free(&text);
    if (err == 0) *out = p;
    return err;
}

kp_policy *kp_policy_ref(kp_policy *policy)
{
    if (policy) atomic_fetch_add(&policy->refs, 1);
    return policy;
}

kp_policy *kp_policy_unref(kp_policy *policy)
{
    if (policy && atomic_fetch_sub(&policy->refs, 1) == 1) {
        kp_arena_free(policy->arena);
        free(policy);
    }
    return NULL;
}

bool kp_policy_list_has(const kp_policy_list *list, const char *value)
{
    for (size_t i = 0; value && i < list->count; i++)
        if (strcmp(list->items[i], value) == 0) return true;
    return false;
}

const char *kp_policy_list_string(kp_arena *arena, const char *const *items, size_t count)
{
    return kp_arena_printf(arena, "[%s]", kp_arena_join(arena, items, count, ", "));
}
