/*
 * NodePool policy rules. The allow-lists work on what a NodePool's
 * requirements permit, not on what they mention: for each label key the
 * requirements (In, NotIn, DoesNotExist) are folded into the set of values a
 * launched node could carry. A key left open (no requirement, Exists, or NotIn
 * over an open-ended set) permits anything, which an allow-list refuses.
 * Instance families follow from instance types ("c6i.large" is c6i) and
 * categories from families ("c6i" is c), so a pool pinned to instance types
 * needs no separate category requirement.
 */
#include "webhook/policy_internal.h"

#include "api/quantity.h"
#include "api/requirements.h"
#include "api/wellknown.h"

#include <stdio.h>
#include <string.h>

typedef struct value_set {
    const char **items;
    size_t count;
    bool bounded;
    long at; /* index of the requirement that bounded it, or -1 */
} value_set;

static const char *const capacity_universe[] = {KP_CAPACITY_ON_DEMAND, KP_CAPACITY_SPOT,
                                                KP_CAPACITY_RESERVED};
static const char *const arch_universe[] = {"amd64", "arm64"};

static const cJSON *get(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static bool set_has(const value_set *s, const char *v)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->items[i], v) == 0) return true;
    return false;
}

static void set_add(kp_arena *a, value_set *s, const char *v, size_t cap)
{
    if (set_has(s, v)) return;
    if (!s->items) s->items = KP_ARENA_NEW(a, const char *, cap ? cap : 1);
    s->items[s->count++] = v;
}

/* In: intersect with the listed values. */
static void set_restrict(kp_arena *a, value_set *s, const cJSON *values, long index)
{
    value_set next = {NULL, 0, true, s->bounded ? s->at : index};
    size_t cap = (size_t)cJSON_GetArraySize(values) + 1;
    for (const cJSON *v = values ? values->child : NULL; v; v = v->next)
        if (cJSON_IsString(v) && (!s->bounded || set_has(s, v->valuestring)))
            set_add(a, &next, v->valuestring, cap);
    if (!next.items) next.items = KP_ARENA_NEW(a, const char *, 1);
    *s = next;
}

static bool values_have(const cJSON *values, const char *v)
{
    for (const cJSON *x = values ? values->child : NULL; x; x = x->next)
        if (cJSON_IsString(x) && strcmp(x->valuestring, v) == 0) return true;
    return false;
}

/* NotIn: remove the listed values; over an open set only a known universe bounds it. */
static void set_exclude(kp_arena *a, value_set *s, const cJSON *values, const char *const *universe,
                        size_t n_universe, long index)
{
    if (!s->bounded && !universe) return;
    value_set next = {NULL, 0, true, s->bounded ? s->at : index};
    const char *const *from = s->bounded ? s->items : universe;
    size_t n = s->bounded ? s->count : n_universe;
    for (size_t i = 0; i < n; i++)
        if (!values_have(values, from[i])) set_add(a, &next, from[i], n + 1);
    if (!next.items) next.items = KP_ARENA_NEW(a, const char *, 1);
    *s = next;
}

static value_set key_set(kp_arena *a, const cJSON *reqs, const char *key,
                         const char *const *universe, size_t n_universe)
{
    value_set s = {NULL, 0, false, -1};
    long index = 0;
    for (const cJSON *r = reqs ? reqs->child : NULL; r; r = r->next, index++) {
        const cJSON *k = get(r, "key"), *op = get(r, "operator");
        if (!cJSON_IsString(k) || !cJSON_IsString(op) || strcmp(k->valuestring, key) != 0) continue;
        const cJSON *values = get(r, "values");
        switch (kp_selector_op_parse(op->valuestring)) {
        case KP_OP_IN:
            set_restrict(a, &s, values, index);
            break;
        case KP_OP_NOT_IN:
            set_exclude(a, &s, values, universe, n_universe, index);
            break;
        case KP_OP_DOES_NOT_EXIST:
            s = (value_set){KP_ARENA_NEW(a, const char *, 1), 0, true, index};
            break;
        default:
            break;
        }
    }
    return s;
}

/* Map each value through `derive` ("c6i.large" -> "c6i"), when `s` is open. */
static void derive_from(kp_arena *a, value_set *s, const value_set *from,
                        const char *(*derive)(kp_arena *, const char *))
{
    if (s->bounded || !from->bounded) return;
    value_set next = {NULL, 0, true, from->at};
    for (size_t i = 0; i < from->count; i++)
        set_add(a, &next, derive(a, from->items[i]), from->count + 1);
    if (!next.items) next.items = KP_ARENA_NEW(a, const char *, 1);
    *s = next;
}

static const char *family_of_type(kp_arena *a, const char *type)
{
    const char *dot = strchr(type, '.');
    return dot ? kp_arena_strndup(a, type, (size_t)(dot - type)) : type;
}

/* AWS names a family <category letters><generation...>: c6i, inf2, u-6tb1. */
static const char *category_of_family(kp_arena *a, const char *family)
{
    size_t n = 0;
    while (family[n] >= 'a' && family[n] <= 'z')
        n++;
    return n ? kp_arena_strndup(a, family, n) : family;
}

static const char *req_path(kp_arena *a, long at)
{
    if (at < 0) return "spec.template.spec.requirements";
    return kp_arena_printf(a, "spec.template.spec.requirements[%ld]", at);
}

/* One allow-list rule over one key's permitted set. */
static void check_allowed(kp_admission_result *res, const char *rule, const char *key,
                          const char *what, const kp_policy_list *allowed, const value_set *s)
{
    kp_arena *a = res->errors.arena;
    const char *list = kp_policy_list_string(a, allowed->items, allowed->count);
    if (!s->bounded) {
        kp_field_errors_add(&res->errors, KP_FIELD_REQUIRED, req_path(a, -1), NULL,
                            "policy rule %s: the NodePool allows any %s; to comply, add a "
                            "requirement on %s with operator In and values from %s",
                            rule, what, key, list);
        return;
    }
    for (size_t i = 0; i < s->count; i++) {
        if (kp_policy_list_has(allowed, s->items[i])) continue;
        kp_field_errors_add(&res->errors, KP_FIELD_FORBIDDEN, req_path(a, s->at), NULL,
                            "policy rule %s: %s \"%s\" (%s) is not allowed; to comply, use "
                            "only values from %s",
                            rule, what, s->items[i], key, list);
    }
}

static void check_requirements(const kp_policy *p, const cJSON *reqs, kp_admission_result *res)
{
    kp_arena *a = res->errors.arena;
    if (p->nodepools.capacity_types.set) {
        value_set s = key_set(a, reqs, KP_LABEL_CAPACITY_TYPE, capacity_universe, 3);
        check_allowed(res, "nodePools.allowedCapacityTypes", KP_LABEL_CAPACITY_TYPE,
                      "capacity type", &p->nodepools.capacity_types, &s);
    }
    if (p->nodepools.architectures.set) {
        value_set s = key_set(a, reqs, KP_LABEL_ARCH, arch_universe, 2);
        check_allowed(res, "nodePools.allowedArchitectures", KP_LABEL_ARCH, "architecture",
                      &p->nodepools.architectures, &s);
    }
    if (!p->nodepools.families.set && !p->nodepools.categories.set) return;
    value_set types = key_set(a, reqs, KP_LABEL_INSTANCE_TYPE, NULL, 0);
    value_set families = key_set(a, reqs, KP_LABEL_INSTANCE_FAMILY, NULL, 0);
    derive_from(a, &families, &types, family_of_type);
    if (p->nodepools.families.set)
        check_allowed(res, "nodePools.allowedInstanceFamilies", KP_LABEL_INSTANCE_FAMILY,
                      "instance family", &p->nodepools.families, &families);
    if (p->nodepools.categories.set) {
        value_set categories = key_set(a, reqs, KP_LABEL_INSTANCE_CATEGORY, NULL, 0);
        derive_from(a, &categories, &families, category_of_family);
        check_allowed(res, "nodePools.allowedInstanceCategories", KP_LABEL_INSTANCE_CATEGORY,
                      "instance category", &p->nodepools.categories, &categories);
    }
}

static void check_instance_type_count(const kp_policy *p, const cJSON *reqs,
                                      kp_admission_result *res)
{
    long max = p->nodepools.max_instance_types, index = 0;
    if (max <= 0) return;
    for (const cJSON *r = reqs ? reqs->child : NULL; r; r = r->next, index++) {
        const cJSON *k = get(r, "key"), *op = get(r, "operator");
        if (!cJSON_IsString(k) || strcmp(k->valuestring, KP_LABEL_INSTANCE_TYPE) != 0 ||
            !cJSON_IsString(op) || kp_selector_op_parse(op->valuestring) != KP_OP_IN)
            continue;
        int n = cJSON_GetArraySize(get(r, "values"));
        if (n <= max) continue;
        kp_field_errors_add(&res->errors, KP_FIELD_TOO_MANY,
                            kp_arena_printf(res->errors.arena,
                                            "spec.template.spec.requirements[%ld].values", index),
                            NULL,
                            "policy rule nodePools.maxInstanceTypes: %d instance types listed, "
                            "at most %ld allowed; to comply, list at most %ld or select by %s "
                            "or %s instead",
                            n, max, max, KP_LABEL_INSTANCE_FAMILY, KP_LABEL_INSTANCE_CATEGORY);
    }
}

/* A limit may be written as a string or a number (int-or-string). */
static int limit_value(const cJSON *item, kp_quantity *out)
{
    char number[64];
    if (cJSON_IsString(item)) return kp_quantity_parse(item->valuestring, out);
    if (!cJSON_IsNumber(item)) return -1;
    snprintf(number, sizeof(number), "%.15g", item->valuedouble);
    return kp_quantity_parse(number, out);
}

static void check_limits(const kp_policy *p, const cJSON *limits, kp_admission_result *res)
{
    kp_arena *a = res->errors.arena;
    const kp_policy_list *req = &p->nodepools.require_limits;
    for (size_t i = 0; i < req->count; i++) {
        if (get(limits, req->items[i])) continue;
        kp_field_errors_add(&res->errors, KP_FIELD_REQUIRED,
                            kp_arena_printf(a, "spec.limits.%s", req->items[i]), NULL,
                            "policy rule nodePools.requireLimits: a limit on %s is required; to "
                            "comply, set spec.limits.%s",
                            req->items[i], req->items[i]);
    }
    for (size_t i = 0; i < p->nodepools.n_max_limits; i++) {
        const kp_policy_quantity *max = &p->nodepools.max_limits[i];
        const char *path = kp_arena_printf(a, "spec.limits.%s", max->resource);
        const cJSON *item = get(limits, max->resource);
        kp_quantity q;
        if (item && limit_value(item, &q) == 0 && kp_quantity_cmp(q, max->value) <= 0) continue;
        kp_field_errors_add(&res->errors, item ? KP_FIELD_FORBIDDEN : KP_FIELD_REQUIRED, path, NULL,
                            "policy rule nodePools.maxLimits: %s must be at most %s%s; to "
                            "comply, set %s to %s or less",
                            max->resource, max->text, item ? "" : " (no limit is unbounded)", path,
                            max->text);
    }
}

static void check_budgets(const kp_policy *p, const cJSON *spec, kp_admission_result *res)
{
    if (!p->nodepools.require_budget) return;
    const cJSON *budgets = get(get(spec, "disruption"), "budgets");
    if (cJSON_IsArray(budgets) && cJSON_GetArraySize(budgets) > 0) return;
    kp_field_errors_add(&res->errors, KP_FIELD_REQUIRED, "spec.disruption.budgets", NULL,
                        "policy rule nodePools.requireDisruptionBudget: at least one disruption "
                        "budget is required; to comply, add one such as {nodes: \"10%%\"}");
}

int kp_policy_check_nodepool(const kp_policy *policy, const cJSON *nodepool,
                             kp_admission_result *res)
{
    const cJSON *spec = get(nodepool, "spec");
    const cJSON *reqs = get(get(get(spec, "template"), "spec"), "requirements");
    if (!cJSON_IsArray(reqs)) reqs = NULL;
    check_requirements(policy, reqs, res);
    check_instance_type_count(policy, reqs, res);
    check_limits(policy, get(spec, "limits"), res);
    check_budgets(policy, spec, res);
    return 0;
}
