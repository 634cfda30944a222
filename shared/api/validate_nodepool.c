/*
 * NodePool (karpenter.sh/v1) validation: the CRD schema's types, enums,
 * patterns and bounds, its CEL rules (transition rules included), and
 * Karpenter's RuntimeValidate (labels, taints, requirements), plus warnings
 * for settings that are legal but probably not what the user meant. The
 * schema's enums, patterns, bounds and defaults are read from api/crd_tables.h.
 */
#include "api/caps.h"
#include "api/crd_tables.h"
#include "api/cron.h"
#include "api/names.h"
#include "api/validate_internal.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <stdint.h>
#include <string.h>

/* KP_CRD_BUDGET_NODES_PATTERN: a count, or a percentage of at most 100 with 1-3 digits. */
static bool budget_nodes(const char *s)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0) return false;
    if (s[n] == '\0') return true;
    return strcmp(s + n, "%") == 0 && (n <= 2 || (n == 3 && strncmp(s, "100", 3) == 0));
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* KP_CRD_BUDGET_SCHEDULE_PATTERN. Its first branch is anchored only at the start and its
 * second only at the end, as in Karpenter's CRD; the cron parser rejects
 * what slips through. The second branch needs four blanks that leave
 * something before, between and after them. */
static bool schedule_shape(const char *s)
{
    static const char *const macros[] = {"@annually", "@yearly",   "@monthly", "@weekly",
                                         "@daily",    "@midnight", "@hourly",  NULL};
    for (size_t i = 0; macros[i]; i++)
        if (strncmp(s, macros[i], strlen(macros[i])) == 0) return true;
    size_t len = strlen(s), need = 4;
    size_t limit = len; /* a separator must sit below limit - 1 */
    for (size_t i = len; i-- > 0 && need > 0;) {
        if (is_blank(s[i]) && i + 1 < limit) {
            need--;
            limit = i;
        }
    }
    return need == 0 && limit > 0;
}

static bool is_zero_budget(const char *nodes)
{
    return nodes && strspn(nodes, "0") > 0 &&
           (nodes[strspn(nodes, "0")] == '\0' || strcmp(nodes + strspn(nodes, "0"), "%") == 0);
}

static void schedule(kp_vctx *v, const char *s)
{
    kp_v_push(v, "schedule");
    kp_cron cron;
    if (!schedule_shape(s))
        kp_v_pattern(v, s, KP_CRD_BUDGET_SCHEDULE_PATTERN);
    else if (kp_cron_parse(s, &cron) < 0)
        kp_v_invalid_str(v, s, "%s", kp_error_last());
    else if (cron.tz[0])
        kp_v_invalid_str(v, s, "time zones are not supported in budget schedules; they run in UTC");
    kp_v_pop(v);
}

static void budget_reasons(kp_vctx *v, const cJSON *b)
{
    const cJSON *arr = kp_v_array(v, b, "reasons", KP_CRD_BUDGET_REASONS_MAX_ITEMS);
    kp_v_push(v, "reasons");
    size_t i = 0;
    const cJSON *r, *earlier;
    cJSON_ArrayForEach(r, arr)
    {
        kp_v_push_index(v, i);
        size_t j = 0;
        if (!cJSON_IsString(r)) {
            kp_v_type(v, r, "string");
        } else {
            const char *allowed = NULL;
            for (size_t k = 0; kp_crd_budget_reason_names[k]; k++)
                if (strcmp(r->valuestring, kp_crd_budget_reason_names[k]) == 0)
                    allowed = kp_crd_budget_reason_names[k];
            if (!allowed) kp_v_not_supported(v, r->valuestring, kp_crd_budget_reason_names);
            cJSON_ArrayForEach(earlier, arr)
            {
                if (j++ == i) break;
                if (cJSON_IsString(earlier) && strcmp(earlier->valuestring, r->valuestring) == 0) {
                    kp_v_duplicate(v, r->valuestring);
                    break;
                }
            }
        }
        kp_v_pop(v);
        i++;
    }
    kp_v_pop(v);
}

static void budget(kp_vctx *v, const cJSON *b)
{
    if (!cJSON_IsObject(b)) {
        kp_v_type(v, b, "object");
        return;
    }
    /* `nodes` is required but defaulted (KP_CRD_BUDGET_NODES_DEFAULT) first, so absent is fine. */
    const char *nodes = kp_v_string(v, b, "nodes");
    if (nodes && !budget_nodes(nodes)) {
        kp_v_push(v, "nodes");
        kp_v_pattern(v, nodes, KP_CRD_BUDGET_NODES_PATTERN);
        kp_v_pop(v);
    }
    const char *sched = kp_v_string(v, b, "schedule");
    if (sched) schedule(v, sched);
    kp_v_duration(v, b, "duration", KP_VDUR_BUDGET, NULL, NULL);
    if (kp_v_has(b, "schedule") != kp_v_has(b, "duration"))
        kp_v_invalid(v, b, "'schedule' must be set with 'duration'");
    budget_reasons(v, b);
    if (is_zero_budget(nodes) && !kp_v_has(b, "schedule"))
        kp_v_warn(v, "nodes: \"%s\" with no schedule blocks %s disruption forever", nodes,
                  kp_v_has(b, "reasons") ? "the listed reasons'" : "all voluntary");
}

static void disruption(kp_vctx *v, const cJSON *spec, bool is_static)
{
    const cJSON *d = kp_v_object(v, spec, "disruption");
    if (!d) return;
    kp_v_push(v, "disruption");
    bool has_policy = kp_v_has(d, "consolidationPolicy");
    const char *policy = kp_v_enum(v, d, "consolidationPolicy", kp_crd_consolidation_policy_names);
    bool never = false;
    kp_v_duration(v, d, "consolidateAfter", KP_VDUR_NILLABLE, NULL, &never);
    const cJSON *budgets = kp_v_array(v, d, "budgets", KP_CRD_BUDGETS_MAX_ITEMS);
    kp_v_push(v, "budgets");
    size_t i = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, budgets)
    {
        kp_v_push_index(v, i++);
        budget(v, b);
        kp_v_pop(v);
    }
    kp_v_pop(v);
    if (!has_policy) policy = KP_CRD_CONSOLIDATION_POLICY_DEFAULT;
    if (never && !is_static && policy && strcmp(policy, "WhenEmpty") != 0)
        kp_v_warn(v,
                  "consolidateAfter: Never turns consolidation off, so consolidationPolicy "
                  "%s has no effect",
                  policy);
    kp_v_pop(v);
}

static void labels(kp_vctx *v, const cJSON *meta)
{
    const cJSON *map = kp_v_string_map(v, meta, "labels", KP_CRD_NODEPOOL_LABELS_MAX_PROPERTIES);
    if (!map) return;
    size_t n = (size_t)cJSON_GetArraySize(map), k = 0;
    const char **keys = KP_ARENA_NEW(v->arena, const char *, n + 1);
    const char **values = KP_ARENA_NEW(v->arena, const char *, n + 1);
    const cJSON *e;
    cJSON_ArrayForEach(e, map)
    {
        if (!cJSON_IsString(e)) continue;
        keys[k] = e->string;
        values[k++] = e->valuestring;
    }
    kp_v_push(v, "labels");
    kp_validate_labels(v->errs, kp_v_here(v), keys, values, k);
    for (size_t i = 0; i < k; i++) {
        const char *why = kp_v_restricted_label(keys[i], KP_V_NODEPOOL, true);
        if (why) kp_v_invalid_str(v, keys[i], "%s", why);
    }
    kp_v_pop(v);
}

static void template_spec(kp_vctx *v, const cJSON *t, const cJSON *old_t)
{
    const cJSON *ts = kp_v_required_object(v, t, "spec");
    if (!ts) return;
    const cJSON *old_ts = kp_v_get(old_t, "spec");
    kp_v_push(v, "spec");
    kp_v_node_class_ref(v, ts, cJSON_IsObject(old_ts) ? old_ts : NULL);
    kp_v_requirements(v, ts, KP_V_NODEPOOL);
    kp_v_taints(v, ts, KP_V_NODEPOOL);
    kp_v_duration(v, ts, "expireAfter", KP_VDUR_NILLABLE, NULL, NULL);
    kp_v_duration(v, ts, "terminationGracePeriod", KP_VDUR_PLAIN, NULL, NULL);
    kp_v_pop(v);
}

static void nodeclaim_template(kp_vctx *v, const cJSON *spec, const cJSON *old_spec)
{
    const cJSON *t = kp_v_required_object(v, spec, "template");
    if (!t) return;
    kp_v_push(v, "template");
    const cJSON *meta = kp_v_object(v, t, "metadata");
    if (meta) {
        kp_v_push(v, "metadata");
        labels(v, meta);
        kp_v_string_map(v, meta, "annotations", 0);
        kp_v_pop(v);
    }
    template_spec(v, t, kp_v_get(old_spec, "template"));
    kp_v_pop(v);
}

/* The CEL rules for static NodePools (spec.replicas set), and the transition
 * rule that keeps a NodePool static or dynamic for life. */
static void static_rules(kp_vctx *v, const cJSON *spec, const cJSON *old_spec)
{
    bool is_static = kp_v_has(spec, "replicas");
    const cJSON *limits = kp_v_get(spec, "limits");
    if (is_static && cJSON_IsObject(limits) && cJSON_GetArraySize(limits) > 0 &&
        !(cJSON_GetArraySize(limits) == 1 && cJSON_GetObjectItemCaseSensitive(limits, "nodes"))) {
        kp_v_push(v, "limits");
        kp_v_invalid(v, limits, "only 'limits.nodes' is supported on static NodePools");
        kp_v_pop(v);
    }
    if (is_static && kp_v_has(spec, "weight")) {
        kp_v_push(v, "weight");
        kp_v_invalid(v, kp_v_get(spec, "weight"), "'weight' is not supported on static NodePools");
        kp_v_pop(v);
    }
    if (old_spec && is_static != kp_v_has(old_spec, "replicas")) {
        kp_v_push(v, "replicas");
        kp_v_forbidden(v, "Cannot transition NodePool between static (replicas set) and dynamic "
                          "(replicas unset) provisioning modes");
        kp_v_pop(v);
    }
    if (is_static)
        kp_v_warn(v, "replicas (a static NodePool) is an alpha feature of Karpenter: its nodes are "
                     "kept only "
                     "while the controller runs with FEATURE_GATES StaticCapacity=true");
    else if (!cJSON_IsObject(limits) || cJSON_GetArraySize(limits) == 0)
        kp_v_warn(v, "no limits are set, so this NodePool can launch nodes without bound");
}

/* The project's dollar cap (api/caps.h): a value the provisioner cannot
 * read would stop the NodePool launching anything, so it is refused here. */
static void cost_cap(kp_vctx *v, const cJSON *obj)
{
    const cJSON *value =
        kp_v_get(kp_v_get(kp_v_get(obj, "metadata"), "annotations"), KP_ANNOTATION_MAX_HOURLY_COST);
    double dollars;
    if (!cJSON_IsString(value) || kp_caps_parse_dollars(value->valuestring, "", &dollars) == 0)
        return;
    kp_v_push(v, "metadata");
    kp_v_push(v, "annotations");
    kp_v_push_key(v, KP_ANNOTATION_MAX_HOURLY_COST);
    kp_v_invalid_str(v, value->valuestring,
                     "want dollars an hour, a decimal number from 0 to %.0f (\"25\", \"7.50\")",
                     KP_CAPS_MAX_DOLLARS);
    kp_v_pop(v);
    kp_v_pop(v);
    kp_v_pop(v);
}

void kp_validate_nodepool(kp_vctx *v, const cJSON *obj, const cJSON *old)
{
    kp_v_name_as_label(v, obj, KP_LABEL_NODEPOOL);
    cost_cap(v, obj);
    const cJSON *spec = kp_v_required_object(v, obj, "spec");
    if (!spec) return;
    const cJSON *old_spec = kp_v_get(old, "spec");
    if (!cJSON_IsObject(old_spec)) old_spec = NULL;
    kp_v_push(v, "spec");
    nodeclaim_template(v, spec, old_spec);
    kp_v_int(v, spec, "replicas", KP_CRD_NODEPOOL_REPLICAS_MIN, INT64_MAX, NULL);
    kp_v_int(v, spec, "weight", KP_CRD_NODEPOOL_WEIGHT_MIN, KP_CRD_NODEPOOL_WEIGHT_MAX, NULL);
    kp_v_quantity_map(v, spec, "limits", true);
    static_rules(v, spec, old_spec);
    disruption(v, spec, kp_v_has(spec, "replicas"));
    kp_v_pop(v);
}
