/*
 * Taint and toleration matching as Kubernetes' core/v1 ToleratesTaint does it
 * (with the Lt/Gt comparison operators on, as Karpenter calls it), and
 * Karpenter's all-taints-must-be-tolerated rule and its list of taints that
 * are expected to go away while a node initialises.
 */
#include "api/taints.h"

#include "api/crd_tables.h"

#include <stdio.h>
#include <string.h>

/* The one table of effect and operator names: parsing, printing and the
 * "supported values" of validation and decoding messages all read these.
 * The effects are the CRDs' taint effect enum, in kp_taint_effect's order
 * after KP_EFFECT_ANY. */
static const char *const *const EFFECT_NAMES = kp_crd_taint_effect_names;
_Static_assert(KP_EFFECT_NO_SCHEDULE == KP_CRD_TAINT_EFFECT_NO_SCHEDULE + 1 &&
                   KP_EFFECT_PREFER_NO_SCHEDULE == KP_CRD_TAINT_EFFECT_PREFER_NO_SCHEDULE + 1 &&
                   KP_EFFECT_NO_EXECUTE == KP_CRD_TAINT_EFFECT_NO_EXECUTE + 1 &&
                   KP_EFFECT_NO_EXECUTE == KP_CRD_TAINT_EFFECT_COUNT,
               "the CRDs list the taint effects in kp_taint_effect's order");

static const char *const OP_NAMES[] = {
    [KP_TOLERATION_EQUAL] = "Equal",
    [KP_TOLERATION_EXISTS] = "Exists",
    [KP_TOLERATION_LT] = "Lt",
    [KP_TOLERATION_GT] = "Gt",
    NULL,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* Entries before the NULL that ends each table. */
#define NAMED(a) (COUNT(a) - 1)

int kp_taint_effect_parse(const char *name)
{
    if (name[0] == '\0') return KP_EFFECT_ANY;
    for (size_t i = 0; EFFECT_NAMES[i]; i++)
        if (strcmp(name, EFFECT_NAMES[i]) == 0) return (int)i + KP_EFFECT_NO_SCHEDULE;
    return -1;
}

const char *kp_taint_effect_name(enum kp_taint_effect effect)
{
    if (effect < KP_EFFECT_NO_SCHEDULE || effect > KP_EFFECT_NO_EXECUTE) return "";
    return EFFECT_NAMES[effect - KP_EFFECT_NO_SCHEDULE];
}

const char *const *kp_taint_effect_names(void)
{
    return EFFECT_NAMES;
}

int kp_toleration_op_parse(const char *name)
{
    if (name[0] == '\0') return KP_TOLERATION_EQUAL;
    for (size_t i = 0; i < NAMED(OP_NAMES); i++)
        if (strcmp(name, OP_NAMES[i]) == 0) return (int)i;
    return -1;
}

const char *kp_toleration_op_name(enum kp_toleration_op op)
{
    if ((size_t)op >= NAMED(OP_NAMES)) return "";
    return OP_NAMES[op];
}

const char *const *kp_toleration_op_names(void)
{
    return OP_NAMES;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/*
 * A canonical decimal int64, as Kubernetes accepts for Lt/Gt: "0", or an
 * optional '-' and a digit 1-9 followed by digits, within int64's range.
 * Accumulates negatively so that INT64_MIN parses without overflow.
 */
static bool parse_decimal_int64(const char *s, int64_t *out)
{
    bool negative = (*s == '-');
    const char *p = negative ? s + 1 : s;
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    if (*p < '1' || *p > '9') return false;
    int64_t acc = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        int digit = *p - '0';
        if (acc < (INT64_MIN + digit) / 10) return false;
        acc = acc * 10 - digit;
    }
    if (!negative && acc == INT64_MIN) return false;
    *out = negative ? acc : -acc;
    return true;
}

static bool compare_numeric(const char *toleration_value, const char *taint_value,
                            enum kp_toleration_op op)
{
    int64_t limit, actual;
    if (!parse_decimal_int64(toleration_value, &limit) ||
        !parse_decimal_int64(taint_value, &actual))
        return false;
    return op == KP_TOLERATION_LT ? actual < limit : actual > limit;
}

bool kp_toleration_tolerates(const kp_toleration *toleration, const kp_taint *taint)
{
    if (toleration->effect != KP_EFFECT_ANY && toleration->effect != taint->effect) return false;
    const char *key = str(toleration->key);
    if (key[0] != '\0' && strcmp(key, str(taint->key)) != 0) return false;
    switch (toleration->op) {
    case KP_TOLERATION_EQUAL:
        return strcmp(str(toleration->value), str(taint->value)) == 0;
    case KP_TOLERATION_EXISTS:
        return true;
    case KP_TOLERATION_LT:
    case KP_TOLERATION_GT:
        return compare_numeric(str(toleration->value), str(taint->value), toleration->op);
    }
    return false;
}

long kp_taints_first_untolerated(const kp_taint *taints, size_t n_taints,
                                 const kp_toleration *tolerations, size_t n_tolerations)
{
    for (size_t i = 0; i < n_taints; i++) {
        bool tolerated = false;
        for (size_t j = 0; j < n_tolerations && !tolerated; j++)
            tolerated = kp_toleration_tolerates(&tolerations[j], &taints[i]);
        if (!tolerated) return (long)i;
    }
    return -1;
}

bool kp_taint_matches(const kp_taint *a, const kp_taint *b)
{
    return a->effect == b->effect && strcmp(str(a->key), str(b->key)) == 0;
}

static const kp_taint KNOWN_EPHEMERAL[] = {
    {"node.kubernetes.io/not-ready", "", KP_EFFECT_NO_SCHEDULE},
    {"node.kubernetes.io/not-ready", "", KP_EFFECT_NO_EXECUTE},
    {"node.kubernetes.io/unreachable", "", KP_EFFECT_NO_SCHEDULE},
    {"node.cloudprovider.kubernetes.io/uninitialized", "true", KP_EFFECT_NO_SCHEDULE},
    {"karpenter.sh/unregistered", "", KP_EFFECT_NO_EXECUTE},
};

/* Families whose key ends in a controller-chosen name (the Node Readiness
 * Controller's readiness.k8s.io/<rule>), any effect. */
static const char *const KNOWN_EPHEMERAL_PREFIXES[] = {
    "readiness.k8s.io/",
};

bool kp_taint_is_known_ephemeral(const kp_taint *taint)
{
    if (!taint) return false;
    for (size_t i = 0; i < COUNT(KNOWN_EPHEMERAL); i++)
        if (kp_taint_matches(&KNOWN_EPHEMERAL[i], taint)) return true;
    const char *key = str(taint->key);
    for (size_t i = 0; i < COUNT(KNOWN_EPHEMERAL_PREFIXES); i++)
        if (strncmp(key, KNOWN_EPHEMERAL_PREFIXES[i], strlen(KNOWN_EPHEMERAL_PREFIXES[i])) == 0)
            return true;
    return false;
}

char *kp_taint_format(const kp_taint *taint, char *buf, size_t size)
{
    if (size == 0) return buf;
    const char *value = str(taint->value);
    if (value[0] == '\0')
        snprintf(buf, size, "%s:%s", str(taint->key), kp_taint_effect_name(taint->effect));
    else
        snprintf(buf, size, "%s=%s:%s", str(taint->key), value,
                 kp_taint_effect_name(taint->effect));
    return buf;
}
