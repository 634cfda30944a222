/* Rendering plans: JSON for programs, a table for people. */
#include "scheduling/plan_output.h"
#include "api/wellknown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kp_plan_claim_name(const kp_plan *plan, const kp_snapshot *snap, uint32_t claim, char *buf,
                               size_t size)
{
    uint32_t tmpl = plan->claims[claim].template_index, n = 0;
    for (uint32_t i = 0; i <= claim; i++)
        n += plan->claims[i].template_index == tmpl;
    snprintf(buf, size, "%s-%u", snap->templates[tmpl].name, n);
    return buf;
}

static const char *sym(const kp_snapshot *snap, kp_sym s)
{
    return kp_sym_str(snap->symtab, s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static cJSON *values_json(const kp_snapshot *snap, const kp_requirement *r)
{
    const char **v = calloc(r->n_values ? r->n_values : 1, sizeof(char *));
    for (uint32_t i = 0; i < r->n_values; i++)
        v[i] = sym(snap, r->values[i]);
    qsort(v, r->n_values, sizeof(char *), cmp_str);
    cJSON *arr = cJSON_CreateStringArray(v, (int)r->n_values);
    free(v);
    return arr;
}

static void add_requirement(cJSON *arr, const kp_snapshot *snap, kp_sym key, const char *op, cJSON *values)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", sym(snap, key));
    cJSON_AddStringToObject(o, "operator", op);
    cJSON_AddItemToObject(o, "values", values ? values : cJSON_CreateArray());
    cJSON_AddItemToArray(arr, o);
}

static cJSON *bound_json(int64_t v)
{
    char text[24];
    snprintf(text, sizeof(text), "%lld", (long long)v);
    cJSON *arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_CreateString(text));
    return arr;
}

static bool simulation_only(const kp_snapshot *snap, kp_sym key)
{
    const char *k = sym(snap, key);
    return strcmp(k, KP_LABEL_REGISTERED) == 0 || strcmp(k, KP_LABEL_INITIALIZED) == 0;
}

static cJSON *requirements_json(const kp_snapshot *snap, const kp_requirements *reqs)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < reqs->count; i++) {
        const kp_requirement *r = &reqs->items[i];
        if (simulation_only(snap, r->key))
            continue;
        if (r->has_gte)
            add_requirement(arr, snap, r->key, "Gte", bound_json(r->gte));
        if (r->has_lte)
            add_requirement(arr, snap, r->key, "Lte", bound_json(r->lte));
        if (r->has_gte || r->has_lte)
            continue;
        enum kp_selector_op op = kp_requirement_operator(r);
        cJSON *values = op == KP_OP_IN || op == KP_OP_NOT_IN ? values_json(snap, r) : NULL;
        add_requirement(arr, snap, r->key, kp_selector_op_name(op), values);
        if (r->min_values > 0)
            cJSON_AddNumberToObject(cJSON_GetArrayItem(arr, cJSON_GetArraySize(arr) - 1), "minValues",
                                    r->min_values);
    }
    return arr;
}

static void format_amount(const kp_snapshot *snap, uint32_t r, int64_t milli, char *buf, size_t size)
{
    const char *name = snap->restab.names[r];
    bool bytes = strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0 ||
                 strncmp(name, "hugepages-", 10) == 0;
    kp_quantity_format(kp_quantity_from_milli(milli, bytes ? KP_QUANTITY_BINARY_SI : KP_QUANTITY_DECIMAL_SI),
                       buf, size);
}

static cJSON *resources_json(const kp_snapshot *snap, const kp_resvec *v)
{
    cJSON *o = cJSON_CreateObject();
    for (uint32_t r = 0; r < snap->restab.count; r++) {
        if (v->v[r] == 0)
            continue;
        char q[KP_QUANTITY_STRLEN];
        format_amount(snap, r, v->v[r], q, sizeof(q));
        cJSON_AddStringToObject(o, snap->restab.names[r], q);
    }
    return o;
}

static cJSON *pods_json(const kp_snapshot *snap, const uint32_t *pods, uint32_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(snap->pods[pods[i]].ns_name));
    return arr;
}

/* An integer the requirement allows, for NotIn / Exists with or without
 * bounds: the lower bound (or 0, or the upper bound when that is negative),
 * stepping past excluded values. Karpenter's Requirement.Any() draws one at
 * random from the same range; ours is the smallest, so plans repeat. */
static bool any_integer(const kp_snapshot *snap, const kp_requirement *r, char *buf, size_t size)
{
    int64_t v = r->has_gte ? r->gte : r->has_lte && r->lte < 0 ? r->lte : 0;
    for (uint32_t step = 0; step <= r->n_values; step++, v++) {
        if ((r->has_lte && v > r->lte) || (r->has_gte && v < r->gte))
            return false;
        snprintf(buf, size, "%lld", (long long)v);
        kp_sym s = kp_sym_lookup(snap->symtab, buf);
        if (s == KP_SYM_NONE || kp_requirement_has(snap->symtab, r, s))
            return true;
        if (v == INT64_MAX)
            return false;
    }
    return false;
}

/* A value that satisfies `r` (Karpenter's Requirement.Any()): one of an In
 * set (the first by name), an integer for NotIn and Exists, none for
 * DoesNotExist. */
static const char *any_value(const kp_snapshot *snap, const kp_requirement *r, char *buf, size_t size)
{
    switch (kp_requirement_operator(r)) {
    case KP_OP_IN: {
        const char *best = NULL;
        for (uint32_t i = 0; i < r->n_values; i++)
            if (!best || strcmp(sym(snap, r->values[i]), best) < 0)
                best = sym(snap, r->values[i]);
        return best;
    }
    case KP_OP_NOT_IN:
    case KP_OP_EXISTS:
        return any_integer(snap, r, buf, size) ? buf : NULL;
    default:
        return NULL;
    }
}

/* Template labels plus a concrete value for every custom key the claim's
 * requirements constrain (Karpenter's resolveCustomLabelsFromRequirements):
 * kube-scheduler needs the label to place the pods that selected the key.
 * Well-known keys (the provider's, the catalog's) are left to the instance
 * type, restricted and simulation-only keys out. */
static cJSON *labels_json(const kp_snapshot *snap, const kp_plan_claim *c)
{
    const kp_template *t = &snap->templates[c->template_index];
    cJSON *o = cJSON_CreateObject();
    char buf[32];
    for (uint32_t i = 0; i < t->labels.count; i++)
        cJSON_AddStringToObject(o, sym(snap, t->labels.items[i].key), sym(snap, t->labels.items[i].value));
    for (uint32_t i = 0; i < c->reqs.count; i++) {
        const kp_requirement *r = &c->reqs.items[i];
        const char *key = sym(snap, r->key);
        if (kp_sym_is_well_known(snap->symtab, r->key) || kp_label_is_well_known(key) ||
            kp_label_is_restricted(key) || simulation_only(snap, r->key) || cJSON_HasObjectItem(o, key))
            continue;
        const char *value = any_value(snap, r, buf, sizeof(buf));
        if (value)
            cJSON_AddStringToObject(o, key, value);
    }
    return o;
}

static cJSON *taints_json(const kp_template *t)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < t->n_taints; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", t->taints[i].key);
        if (t->taints[i].value && *t->taints[i].value)
            cJSON_AddStringToObject(o, "value", t->taints[i].value);
        cJSON_AddStringToObject(o, "effect", kp_taint_effect_name(t->taints[i].effect));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

cJSON *kp_plan_claim_json(const kp_plan *plan, const kp_snapshot *snap, uint32_t i)
{
    const kp_plan_claim *c = &plan->claims[i];
    const kp_template *t = &snap->templates[c->template_index];
    char name[160];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", kp_plan_claim_name(plan, snap, i, name, sizeof(name)));
    cJSON_AddStringToObject(o, "nodePool", t->name);
    if (t->is_static) /* a replica of a static NodePool, launched whatever the pods */
        cJSON_AddBoolToObject(o, "static", true);
    cJSON *its = cJSON_AddArrayToObject(o, "instanceTypes");
    for (uint32_t k = 0; k < c->n_its; k++)
        cJSON_AddItemToArray(its, cJSON_CreateString(sym(snap, snap->its[c->its[k]].name)));
    cJSON_AddItemToObject(o, "requirements", requirements_json(snap, &c->reqs));
    cJSON_AddItemToObject(o, "labels", labels_json(snap, c));
    cJSON_AddItemToObject(o, "taints", taints_json(t));
    cJSON_AddItemToObject(o, "requests", resources_json(snap, &c->requests));
    cJSON_AddNumberToObject(o, "price", c->price);
    cJSON *launch = cJSON_AddObjectToObject(o, "launch");
    cJSON_AddStringToObject(launch, "instanceType", c->n_its ? sym(snap, snap->its[c->its[0]].name) : "");
    cJSON_AddStringToObject(launch, "zone", c->zone ? sym(snap, c->zone) : "");
    cJSON_AddStringToObject(launch, "capacityType", c->capacity_type ? sym(snap, c->capacity_type) : "");
    cJSON_AddItemToObject(o, "pods", pods_json(snap, c->pods, c->n_pods));
    return o;
}

cJSON *kp_plan_to_json(const kp_plan *plan, const kp_snapshot *snap, uint32_t n_pending)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *claims = cJSON_AddArrayToObject(root, "nodeClaims");
    for (uint32_t i = 0; i < plan->n_claims; i++)
        cJSON_AddItemToArray(claims, kp_plan_claim_json(plan, snap, i));
    cJSON *nodes = cJSON_AddArrayToObject(root, "existingNodes");
    for (uint32_t i = 0; i < plan->n_nodes; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", snap->nodes[plan->nodes[i].node].name);
        cJSON_AddItemToObject(o, "pods", pods_json(snap, plan->nodes[i].pods, plan->nodes[i].n_pods));
        cJSON_AddItemToArray(nodes, o);
    }
    cJSON *pending = cJSON_AddArrayToObject(root, "unschedulable");
    for (uint32_t i = 0; i < plan->n_errors; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "pod", snap->pods[plan->errors[i].pod].ns_name);
        cJSON_AddStringToObject(o, "reason", plan->errors[i].reason);
        cJSON_AddItemToArray(pending, o);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "pods", n_pending);
    cJSON_AddNumberToObject(sum, "scheduled", plan->n_scheduled);
    cJSON_AddNumberToObject(sum, "newNodeClaims", plan->n_claims);
    cJSON_AddNumberToObject(sum, "hourlyCost", plan->hourly_cost);
    cJSON_AddNumberToObject(sum, "lowerBoundHourlyCost", plan->lower_bound_cost);
    cJSON_AddNumberToObject(sum, "solveMillis", (double)plan->solve_ns / 1e6);
    return root;
}

static int percent(int64_t used, int64_t total)
{
    return total > 0 ? (int)((used * 100 + total / 2) / total) : 0;
}

static int table_claims(const kp_plan *plan, const kp_snapshot *snap, kp_buf *out)
{
    int err = kp_buf_printf(out, "%-24s %-14s %-18s %-12s %-10s %9s %5s %5s %7s\n", "NODECLAIM", "NODEPOOL",
                            "INSTANCE TYPE", "ZONE", "CAPACITY", "$/HOUR", "PODS", "CPU", "MEMORY");
    for (uint32_t i = 0; err == 0 && i < plan->n_claims; i++) {
        const kp_plan_claim *c = &plan->claims[i];
        const kp_sit *it = c->n_its ? &snap->its[c->its[0]] : NULL;
        char name[160];
        err = kp_buf_printf(out, "%-24s %-14s %-18s %-12s %-10s %9.4f %5u %4d%% %6d%%\n",
                            kp_plan_claim_name(plan, snap, i, name, sizeof(name)),
                            snap->templates[c->template_index].name, it ? sym(snap, it->name) : "-",
                            c->zone ? sym(snap, c->zone) : "-", c->capacity_type ? sym(snap, c->capacity_type) : "-",
                            c->price, c->n_pods,
                            it ? percent(c->requests.v[KP_RES_CPU], it->allocatable.v[KP_RES_CPU]) : 0,
                            it ? percent(c->requests.v[KP_RES_MEMORY], it->allocatable.v[KP_RES_MEMORY]) : 0);
        if (err == 0 && c->n_its > 1)
            err = kp_buf_printf(out, "%-24s %-14s (or %u other instance types)\n", "", "", c->n_its - 1);
    }
    return err;
}

static uint32_t existing_pods(const kp_plan *plan)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < plan->n_nodes; i++)
        n += plan->nodes[i].n_pods;
    return n;
}

int kp_plan_write_table(const kp_plan *plan, const kp_snapshot *snap, uint32_t n_pending, kp_buf *out)
{
    int err = plan->n_claims ? table_claims(plan, snap, out) : 0;
    if (err == 0 && plan->n_nodes) {
        err = kp_buf_printf(out, "%s%-40s %5s\n", plan->n_claims ? "\n" : "", "EXISTING NODE", "PODS");
        for (uint32_t i = 0; err == 0 && i < plan->n_nodes; i++)
            err = kp_buf_printf(out, "%-40s %5u\n", snap->nodes[plan->nodes[i].node].name, plan->nodes[i].n_pods);
    }
    if (err == 0 && plan->n_errors) {
        err = kp_buf_printf(out, "%s%-40s %s\n", plan->n_claims || plan->n_nodes ? "\n" : "", "PENDING POD",
                            "REASON");
        for (uint32_t i = 0; err == 0 && i < plan->n_errors; i++)
            err = kp_buf_printf(out, "%-40s %s\n", snap->pods[plan->errors[i].pod].ns_name, plan->errors[i].reason);
    }
    if (err == 0)
        err = kp_buf_printf(out,
                            "%s%u of %u pending pods scheduled: %u to existing nodes, %u new NodeClaims at "
                            "$%.4f/hour (lower bound $%.4f/hour); solved in %.2f ms\n",
                            plan->n_claims || plan->n_nodes || plan->n_errors ? "\n" : "", plan->n_scheduled,
                            n_pending, existing_pods(plan), plan->n_claims, plan->hourly_cost,
                            plan->lower_bound_cost, (double)plan->solve_ns / 1e6);
    return err;
}
