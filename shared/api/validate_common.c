/*
 * Rules NodePools and NodeClaims share: requirements, taints, nodeClassRef,
 * durations, resource quantities and restricted label keys. Each rule is
 * Karpenter's CRD rule (pattern, bound or CEL expression) and, where
 * Karpenter also checks at runtime (NodePool RuntimeValidate), that check as
 * well; messages carry the CEL rule's text and say what is allowed. The
 * schema's patterns and bounds are read from api/crd_tables.h.
 */
#include "api/crd_tables.h"
#include "api/duration.h"
#include "api/names.h"
#include "api/quantity.h"
#include "api/requirements.h"
#include "api/taints.h"
#include "api/validate_internal.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- durations */

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

/* One or more <digits><unit> groups, units from `units`, nothing else. */
static bool unit_groups(const char *s, size_t len, const char *units)
{
    size_t i = 0;
    if (len == 0) return false;
    while (i < len) {
        size_t start = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == start || i == len || !strchr(units, s[i])) return false;
        i++;
    }
    return true;
}

/* Exactly one <digits><unit> group. */
static bool one_group(const char *s, size_t len, const char *units)
{
    return len >= 2 && all_digits(s, len - 1) && strchr(units, s[len - 1]) != NULL;
}

/* KP_CRD_BUDGET_DURATION_PATTERN: ^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$ */
static bool budget_duration(const char *s)
{
    size_t len = strlen(s);
    if (len > 2 && strcmp(s + len - 2, "0s") == 0) len -= 2;
    if (one_group(s, len, "hm")) return true;
    const char *h = memchr(s, 'h', len);
    if (!h) return false;
    size_t head = (size_t)(h - s) + 1;
    return one_group(s, head, "h") && one_group(h + 1, len - head, "m");
}

static const char *const duration_patterns[] = {
    [KP_VDUR_NILLABLE] = KP_CRD_NILLABLE_DURATION_PATTERN,
    [KP_VDUR_PLAIN] = KP_CRD_DURATION_PATTERN,
    [KP_VDUR_BUDGET] = KP_CRD_BUDGET_DURATION_PATTERN,
};

bool kp_v_duration(kp_vctx *v, const cJSON *obj, const char *name, enum kp_v_duration_form form,
                   int64_t *out_ns, bool *never)
{
    const char *s = kp_v_string(v, obj, name);
    if (!s) return false;
    bool is_never = form == KP_VDUR_NILLABLE && strcmp(s, "Never") == 0;
    bool ok = is_never ||
              (form == KP_VDUR_BUDGET ? budget_duration(s) : unit_groups(s, strlen(s), "smh"));
    kp_duration d = {0, is_never};
    kp_v_push(v, name);
    if (!ok)
        kp_v_pattern(v, s, duration_patterns[form]);
    else if (!is_never && kp_duration_parse(s, &d) < 0)
        kp_v_invalid_str(v, s, "%s", kp_error_last()), ok = false;
    kp_v_pop(v);
    if (ok && out_ns) *out_ns = d.ns;
    if (ok && never) *never = is_never;
    return ok;
}

/* ---------------------------------------------------------------- quantities */

void kp_v_quantity_map(kp_vctx *v, const cJSON *obj, const char *name, bool warn_negative)
{
    const cJSON *map = kp_v_object(v, obj, name);
    if (!map) return;
    kp_v_push(v, name);
    const cJSON *e;
    cJSON_ArrayForEach(e, map)
    {
        kp_v_push_key(v, e->string);
        kp_quantity q = kp_quantity_from_milli(0, KP_QUANTITY_DECIMAL_SI);
        if (cJSON_IsString(e)) {
            if (kp_quantity_parse(e->valuestring, &q) < 0)
                kp_v_invalid(v, e, "%s", kp_error_last());
        } else if (strcmp(kp_v_type_name(e), "integer") == 0) {
            /* Beyond +-2^53 a JSON number is no longer exact; quantities saturate far below. */
            double d = e->valuedouble;
            if (d >= 9007199254740992.0 || d <= -9007199254740992.0)
                kp_v_invalid(v, e, "quantity too large");
            else
                q = kp_quantity_from_int((int64_t)d, KP_QUANTITY_DECIMAL_SI);
        } else {
            kp_v_type(v, e, "integer or string");
        }
        if (warn_negative && q.milli < 0) kp_v_warn(v, "a negative amount can never be satisfied");
        kp_v_pop(v);
    }
    kp_v_pop(v);
}

/* ---------------------------------------------------------------- date-time */

/* 2006-01-02T15:04:05[.frac](Z|+07:00) */
bool kp_v_is_date_time(const char *s)
{
    if (strlen(s) < 20 || !all_digits(s, 4) || s[4] != '-' || !all_digits(s + 5, 2) ||
        s[7] != '-' || !all_digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') ||
        !all_digits(s + 11, 2) || s[13] != ':' || !all_digits(s + 14, 2) || s[16] != ':' ||
        !all_digits(s + 17, 2))
        return false;
    int mon = (s[5] - '0') * 10 + s[6] - '0', day = (s[8] - '0') * 10 + s[9] - '0';
    int hour = (s[11] - '0') * 10 + s[12] - '0', min = (s[14] - '0') * 10 + s[15] - '0';
    int sec = (s[17] - '0') * 10 + s[18] - '0';
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
        return false;
    const char *p = s + 19;
    if (*p == '.') {
        size_t n = strspn(p + 1, "0123456789");
        if (!n) return false;
        p += 1 + n;
    }
    if ((p[0] == 'Z' || p[0] == 'z') && !p[1]) return true;
    return (p[0] == '+' || p[0] == '-') && strlen(p) == 6 && all_digits(p + 1, 2) && p[3] == ':' &&
           all_digits(p + 4, 2);
}

/* ---------------------------------------------------------------- label keys */

/* The CEL rules take a key's domain as everything before the first '/' (the
 * whole key when there is none) and test it with endsWith, so they also catch
 * "foo.karpenter.sh" and "xkarpenter.sh"; Karpenter's Go check only the domain
 * itself and its subdomains. Both are enforced. */
static bool domain_ends_with(const char *key, const char *suffix)
{
    const char *slash = strchr(key, '/');
    size_t len = slash ? (size_t)(slash - key) : strlen(key), n = strlen(suffix);
    return len >= n && memcmp(key + len - n, suffix, n) == 0;
}

static bool listed(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0) return true;
    return false;
}

const char *kp_v_restricted_label(const char *key, enum kp_v_owner owner, bool go_rules)
{
    if (domain_ends_with(key, KP_GROUP) && strcmp(key, KP_LABEL_CAPACITY_TYPE) != 0 &&
        strcmp(key, KP_LABEL_NODEPOOL) != 0)
        return owner == KP_V_NODEPOOL
                   ? "label domain \"karpenter.sh\" is restricted; of that domain only "
                     "karpenter.sh/capacity-type may be used"
                   : "label domain \"karpenter.sh\" is restricted; of that domain only "
                     "karpenter.sh/capacity-type and karpenter.sh/nodepool may be used";
    if (owner == KP_V_NODEPOOL && strcmp(key, KP_LABEL_NODEPOOL) == 0)
        return "label \"karpenter.sh/nodepool\" is restricted; Karpenter sets it to the "
               "NodePool's name";
    if (strcmp(key, KP_LABEL_HOSTNAME) == 0)
        return "label \"kubernetes.io/hostname\" is restricted; the kubelet sets it";
    if (domain_ends_with(key, KP_AWS_GROUP) && !listed(kp_crd_aws_label_names, key))
        return "label domain \"karpenter.k8s.aws\" is restricted; of that domain only "
               "Karpenter's well-known labels (such as karpenter.k8s.aws/instance-family) may "
               "be used";
    if (go_rules && kp_label_is_restricted(kp_label_normalize(key)))
        return "using this label is not allowed as it might interfere with the internal "
               "provisioning logic; specify a well known label, or a custom label that does "
               "not use a restricted domain (karpenter.sh, karpenter.k8s.aws)";
    return NULL;
}

/* ---------------------------------------------------------------- requirements */

/* Values a well-known key accepts (Karpenter's WellKnownValuesForRequirements). */
static const char *const *known_values(const char *key)
{
    static const char *const capacity[] = {KP_CAPACITY_ON_DEMAND, KP_CAPACITY_SPOT,
                                           KP_CAPACITY_RESERVED, NULL};
    static const char *const tenancy[] = {"default", "dedicated", NULL};
    if (strcmp(key, KP_LABEL_CAPACITY_TYPE) == 0) return capacity;
    if (strcmp(key, "karpenter.k8s.aws/instance-tenancy") == 0) return tenancy;
    return NULL;
}

static const char *joined(kp_vctx *v, const char *const *list, size_t n)
{
    const char *out = "";
    for (size_t i = 0; (n ? i < n : list[i] != NULL); i++)
        out = kp_arena_printf(v->arena, "%s%s%s", out, i ? " " : "", list[i]);
    return out;
}

/* Some values of a capacity-type or tenancy requirement must be known ones. */
static void check_known_values(kp_vctx *v, const char *key, const char **values, size_t n,
                               int64_t min_values)
{
    const char *const *known = known_values(kp_label_normalize(key));
    if (!known || n == 0) return;
    size_t valid = 0;
    for (size_t i = 0; i < n; i++)
        valid += values[i] && listed(known, values[i]);
    kp_v_push(v, "values");
    if (valid == 0)
        kp_v_invalid_str(v, values[0] ? values[0] : "",
                         "no valid values found in [%s] for %s, expected one of: [%s]",
                         joined(v, values, n), key, joined(v, known, 0));
    else if (min_values > 0 && (int64_t)valid < min_values)
        kp_v_invalid_str(v, values[0] ? values[0] : "",
                         "not enough valid values found in [%s] for %s, expected at least %lld "
                         "valid values from: [%s]",
                         joined(v, values, n), key, (long long)min_values, joined(v, known, 0));
    else if (valid < n)
        kp_v_warn(v, "values other than %s are ignored for %s", joined(v, known, 0), key);
    kp_v_pop(v);
}

/* The value of Gt/Lt/Gte/Lte: Go's strconv.Atoi (an optional sign, decimal
 * digits, within int64) and not negative. */
static bool non_negative_int(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    size_t n = strlen(p);
    if (n == 0 || !all_digits(p, n)) return false;
    while (n > 1 && *p == '0')
        p++, n--;
    if (*s == '-' && strcmp(p, "0") != 0) return false;
    return n < 19 || (n == 19 && strcmp(p, "9223372036854775807") <= 0);
}

/* KP_CRD_QUALIFIED_NAME_PATTERN, the pattern the CRDs give requirement keys
 * and taint keys and values: a qualified name without IsQualifiedName's
 * length limits on its parts. POSIX extended syntax reads it as RE2 does. */
static bool matches_key_pattern(const char *s)
{
    regex_t re;
    if (regcomp(&re, KP_CRD_QUALIFIED_NAME_PATTERN, REG_EXTENDED | REG_NOSUB) != 0) return false;
    bool ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* NodePools: the CRD's pattern and Karpenter's IsQualifiedName (its runtime
 * check). NodeClaims have no Go-level validation in Karpenter: the pattern
 * alone, so a key the CRD admits is not refused here. */
static void key_shape(kp_vctx *v, const char *key, enum kp_v_owner owner)
{
    if (owner == KP_V_NODECLAIM) {
        if (!matches_key_pattern(key)) kp_v_pattern(v, key, KP_CRD_QUALIFIED_NAME_PATTERN);
        return;
    }
    kp_msgs msgs;
    kp_msgs_init(&msgs, v->arena);
    kp_is_qualified_name(key, &msgs);
    for (size_t i = 0; i < msgs.count; i++)
        kp_v_invalid_str(v, key, "%s", msgs.items[i]);
}

static void check_key(kp_vctx *v, const char *key, enum kp_v_owner owner)
{
    kp_v_push(v, "key");
    if (strlen(key) > KP_CRD_REQUIREMENT_KEY_MAX_LENGTH)
        kp_v_too_long(v, KP_CRD_REQUIREMENT_KEY_MAX_LENGTH);
    key_shape(v, key, owner);
    const char *why = kp_v_restricted_label(key, owner, owner != KP_V_NODECLAIM);
    if (why) kp_v_invalid_str(v, key, "%s", why);
    kp_v_pop(v);
}

/* The values array: strings that are valid label values. Returns them
 * (NULL entries for non-strings) and their count. */
static const char **read_values(kp_vctx *v, const cJSON *req, size_t *n)
{
    const cJSON *arr = kp_v_array(v, req, "values", 0);
    *n = arr ? (size_t)cJSON_GetArraySize(arr) : 0;
    const char **values = KP_ARENA_NEW(v->arena, const char *, *n + 1);
    kp_v_push(v, "values");
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        kp_v_push_index(v, i);
        if (!cJSON_IsString(e)) {
            kp_v_type(v, e, "string");
        } else {
            values[i] = e->valuestring;
            kp_msgs msgs;
            kp_msgs_init(&msgs, v->arena);
            kp_is_valid_label_value(e->valuestring, &msgs);
            for (size_t m = 0; m < msgs.count; m++)
                kp_v_invalid_str(v, e->valuestring, "%s", msgs.items[m]);
        }
        kp_v_pop(v);
        i++;
    }
    kp_v_pop(v);
    return values;
}

/* `["a", "b"]`, for messages about the values array as a whole. */
static const char *values_text(kp_vctx *v, const char **values, size_t n)
{
    const char *out = "[";
    for (size_t i = 0; i < n; i++)
        out = kp_arena_printf(v->arena, "%s%s%s", out, i ? ", " : "",
                              values[i] ? kp_quote(v->arena, values[i]) : "null");
    return kp_arena_printf(v->arena, "%s]", out);
}

static void check_operator_values(kp_vctx *v, enum kp_selector_op op, const char **values, size_t n,
                                  int64_t min_values, bool has_min, enum kp_v_owner owner)
{
    bool bound = op == KP_OP_GT || op == KP_OP_LT || op == KP_OP_GTE || op == KP_OP_LTE;
    const char *text = values_text(v, values, n);
    kp_v_push(v, "values");
    if (op == KP_OP_IN && n == 0)
        kp_field_errors_add(v->errs, KP_FIELD_INVALID, kp_v_here(v), text,
                            "requirements with operator 'In' must have a value defined");
    /* NodeOverlays also refuse NotIn without values (their CRD's rule). */
    if (owner == KP_V_NODEOVERLAY && op == KP_OP_NOT_IN && n == 0)
        kp_field_errors_add(v->errs, KP_FIELD_INVALID, kp_v_here(v), text,
                            "requirements with operator 'NotIn' must have a value defined");
    if (bound && (n != 1 || !values[0] || !non_negative_int(values[0])))
        kp_field_errors_add(v->errs, KP_FIELD_INVALID, kp_v_here(v), text,
                            owner == KP_V_NODEOVERLAY
                                ? "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a "
                                  "single positive integer value"
                                : "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a "
                                  "single positive integer value");
    if ((op == KP_OP_EXISTS || op == KP_OP_DOES_NOT_EXIST) && n > 0)
        kp_v_warn(v, "values are ignored with operator %s", kp_selector_op_name(op));
    kp_v_pop(v);
    if (has_min && op == KP_OP_IN && (int64_t)n < min_values) {
        kp_v_push(v, "minValues");
        kp_field_errors_add(v->errs, KP_FIELD_INVALID, kp_v_here(v),
                            kp_arena_printf(v->arena, "%lld", (long long)min_values),
                            "requirements with 'minValues' must have at least that many values "
                            "specified in the 'values' field (%zu given)",
                            n);
        kp_v_pop(v);
    }
}

static void requirement(kp_vctx *v, const cJSON *req, enum kp_v_owner owner, size_t *pins)
{
    if (!cJSON_IsObject(req)) {
        kp_v_type(v, req, "object");
        return;
    }
    const char *key = kp_v_required_string(v, req, "key");
    const char *op_name = kp_v_required_string(v, req, "operator");
    int op = op_name ? kp_selector_op_parse(op_name) : -1;
    if (op_name && op < 0) {
        kp_v_push(v, "operator");
        kp_v_not_supported(v, op_name, kp_selector_op_names());
        kp_v_pop(v);
    }
    size_t n = 0;
    const char **values = read_values(v, req, &n);
    int64_t min_values = 0;
    /* A NodeOverlay's requirements have no minValues: the API server prunes it. */
    bool has_min = owner != KP_V_NODEOVERLAY && kp_v_has(req, "minValues");
    if (has_min &&
        !kp_v_int(v, req, "minValues", KP_CRD_MIN_VALUES_MIN, KP_CRD_MIN_VALUES_MAX, &min_values))
        has_min = false;
    if (key) check_key(v, key, owner);
    if (op >= 0)
        check_operator_values(v, (enum kp_selector_op)op, values, n, min_values, has_min, owner);
    if (key && op == KP_OP_IN && owner != KP_V_NODECLAIM)
        check_known_values(v, key, values, n, has_min ? min_values : 0);
    if (key && op == KP_OP_IN && n == 1 &&
        strcmp(kp_label_normalize(key), KP_LABEL_INSTANCE_TYPE) == 0)
        (*pins)++;
}

void kp_v_requirements(kp_vctx *v, const cJSON *spec, enum kp_v_owner owner)
{
    if (!kp_v_has(spec, "requirements")) {
        kp_v_required(v, "requirements");
        return;
    }
    const cJSON *reqs = kp_v_array(v, spec, "requirements", KP_CRD_REQUIREMENTS_MAX_ITEMS);
    if (!reqs) return;
    kp_v_push(v, "requirements");
    size_t i = 0, pins = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, reqs)
    {
        kp_v_push_index(v, i++);
        requirement(v, r, owner, &pins);
        kp_v_pop(v);
    }
    if (pins && owner == KP_V_NODEPOOL)
        kp_v_warn(v, "a single instance type is allowed (node.kubernetes.io/instance-type In "
                     "[one value]); Karpenter cannot fall back to another type when that one "
                     "has no capacity");
    kp_v_pop(v);
}

/* ---------------------------------------------------------------- taints */

typedef struct taint_seen {
    const char **keys, **effects;
    size_t n, cap;
} taint_seen;

/* Report each Kubernetes qualified-name message for `s` at field `name`. */
static void qualified_name(kp_vctx *v, const char *name, const char *s)
{
    kp_msgs msgs;
    kp_msgs_init(&msgs, v->arena);
    kp_is_qualified_name(s, &msgs);
    kp_v_push(v, name);
    for (size_t i = 0; i < msgs.count; i++)
        kp_v_invalid_str(v, s, "%s", msgs.items[i]);
    kp_v_pop(v);
}

static void remember(kp_vctx *v, taint_seen *seen, const char *key, const char *effect)
{
    if (seen->n == seen->cap) {
        size_t cap = seen->cap ? seen->cap * 2 : 8;
        seen->keys = kp_arena_grow(v->arena, seen->keys, seen->n, cap, sizeof(char *));
        seen->effects = kp_arena_grow(v->arena, seen->effects, seen->n, cap, sizeof(char *));
        seen->cap = cap;
    }
    seen->keys[seen->n] = key;
    seen->effects[seen->n++] = effect;
}

/* A taint key or value: IsQualifiedName for NodePools (Karpenter's runtime
 * check), the CRD's pattern alone for NodeClaims. */
static void taint_name(kp_vctx *v, const char *name, const char *s, enum kp_v_owner owner)
{
    if (owner == KP_V_NODEPOOL) {
        qualified_name(v, name, s);
        return;
    }
    kp_v_push(v, name);
    if (!matches_key_pattern(s)) kp_v_pattern(v, s, KP_CRD_QUALIFIED_NAME_PATTERN);
    kp_v_pop(v);
}

static void taint(kp_vctx *v, const cJSON *t, taint_seen *seen, enum kp_v_owner owner)
{
    if (!cJSON_IsObject(t)) {
        kp_v_type(v, t, "object");
        return;
    }
    const char *key = kp_v_required_string(v, t, "key");
    if (key && strlen(key) < KP_CRD_TAINT_KEY_MIN_LENGTH) {
        kp_v_push(v, "key");
        kp_v_too_short(v, key, KP_CRD_TAINT_KEY_MIN_LENGTH);
        kp_v_pop(v);
    } else if (key) {
        taint_name(v, "key", key, owner);
    }
    const char *value = kp_v_string(v, t, "value");
    if (value) taint_name(v, "value", value, owner);
    const char *effect = NULL;
    if (!kp_v_has(t, "effect"))
        kp_v_required(v, "effect");
    else
        effect = kp_v_enum(v, t, "effect", kp_taint_effect_names());
    const char *added = kp_v_string(v, t, "timeAdded");
    if (added && !kp_v_is_date_time(added)) {
        kp_v_push(v, "timeAdded");
        kp_v_invalid_str(v, added, "must be an RFC 3339 date-time (2006-01-02T15:04:05Z)");
        kp_v_pop(v);
    }
    /* Duplicate Key/Effect pairs are Karpenter's runtime check, NodePools' only. */
    if (!key || !effect || owner != KP_V_NODEPOOL) return;
    for (size_t i = 0; i < seen->n; i++) {
        if (strcmp(seen->keys[i], key) == 0 && strcmp(seen->effects[i], effect) == 0) {
            kp_field_errors_add(v->errs, KP_FIELD_DUPLICATE, kp_v_here(v),
                                kp_arena_printf(v->arena, "\"%s:%s\"", key, effect),
                                "duplicate taint Key/Effect pair %s=%s", key, effect);
            return;
        }
    }
    remember(v, seen, key, effect);
}

void kp_v_taints(kp_vctx *v, const cJSON *spec, enum kp_v_owner owner)
{
    static const char *const fields[] = {"taints", "startupTaints"};
    taint_seen seen = {0};
    for (size_t f = 0; f < 2; f++) {
        const cJSON *arr = kp_v_array(v, spec, fields[f], 0);
        kp_v_push(v, fields[f]);
        size_t i = 0;
        const cJSON *t;
        cJSON_ArrayForEach(t, arr)
        {
            kp_v_push_index(v, i++);
            taint(v, t, &seen, owner);
            kp_v_pop(v);
        }
        kp_v_pop(v);
    }
}

/* ---------------------------------------------------------------- nodeClassRef */

void kp_v_node_class_ref(kp_vctx *v, const cJSON *spec, const cJSON *old_spec)
{
    static const char *const fields[] = {"group", "kind", "name"};
    const cJSON *ref = kp_v_required_object(v, spec, "nodeClassRef");
    if (!ref) return;
    kp_v_push(v, "nodeClassRef");
    const char *got[3];
    for (size_t i = 0; i < 3; i++) {
        got[i] = kp_v_required_string(v, ref, fields[i]);
        kp_v_push(v, fields[i]);
        if (got[i] && !*got[i]) kp_v_invalid_str(v, got[i], "%s may not be empty", fields[i]);
        kp_v_pop(v);
    }
    if (got[0] && strchr(got[0], '/')) {
        kp_v_push(v, "group");
        kp_v_invalid_str(v, got[0], "should match '%s' (a group without a version)",
                         KP_CRD_NODE_CLASS_GROUP_PATTERN);
        kp_v_pop(v);
    }
    const cJSON *old_ref = kp_v_get(old_spec, "nodeClassRef");
    for (size_t i = 0; old_ref && i < 2; i++) {
        const cJSON *was = kp_v_get(old_ref, fields[i]);
        if (got[i] && cJSON_IsString(was) && strcmp(was->valuestring, got[i]) != 0)
            kp_v_invalid(v, ref, "nodeClassRef.%s is immutable (was \"%s\")", fields[i],
                         was->valuestring);
    }
    kp_v_pop(v);
}

void kp_v_name_as_label(kp_vctx *v, const cJSON *obj, const char *label)
{
    const cJSON *meta = kp_v_get(obj, "metadata");
    const cJSON *name = kp_v_get(meta, "name");
    if (!cJSON_IsString(name) || kp_is_valid_label_value(name->valuestring, NULL) == 0) return;
    kp_v_push(v, "metadata");
    kp_v_push(v, "name");
    kp_v_warn(v,
              "%s is not a valid label value (at most 63 characters); Karpenter labels its "
              "nodes %s=<name>, which will fail",
              kp_quote(v->arena, name->valuestring), label);
    kp_v_pop(v);
    kp_v_pop(v);
}
