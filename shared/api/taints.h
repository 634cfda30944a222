/*
 * Taints and tolerations with Kubernetes' matching rules (core/v1
 * Toleration.ToleratesTaint): Equal and Exists, an empty key with Exists
 * tolerating everything, an empty effect matching every effect, and
 * NoExecute's tolerationSeconds. Karpenter requires every taint on a node to
 * be tolerated, PreferNoSchedule included; kp_taints_tolerated does that.
 */
#ifndef KP_API_TAINTS_H
#define KP_API_TAINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kp_taint_effect {
    KP_EFFECT_ANY = 0, /* toleration with no effect: matches all */
    KP_EFFECT_NO_SCHEDULE,
    KP_EFFECT_PREFER_NO_SCHEDULE,
    KP_EFFECT_NO_EXECUTE,
};

enum kp_toleration_op {
    KP_TOLERATION_EQUAL = 0, /* the default when operator is empty */
    KP_TOLERATION_EXISTS,
    /* Numeric comparisons (Kubernetes 1.35+, feature TaintTolerationComparisonOperators;
     * Karpenter always enables them): the taint's value must be less than (Lt) or
     * greater than (Gt) the toleration's, both canonical decimal int64s ("0",
     * "-12", no leading zeros or '+'); anything else does not tolerate. */
    KP_TOLERATION_LT,
    KP_TOLERATION_GT,
};

typedef struct kp_taint {
    const char *key;
    const char *value; /* "" when absent */
    enum kp_taint_effect effect;
} kp_taint;

typedef struct kp_toleration {
    const char *key;   /* "" = any key (only with Exists) */
    const char *value; /* "" when absent */
    enum kp_toleration_op op;
    enum kp_taint_effect effect;
    bool has_seconds;
    int64_t seconds; /* NoExecute: how long the pod stays after the taint appears */
} kp_toleration;

/* "NoSchedule" etc. Returns -1 for an unknown name; "" -> KP_EFFECT_ANY. */
int kp_taint_effect_parse(const char *name);
const char *kp_taint_effect_name(enum kp_taint_effect effect);
/* The effects a taint may have, NULL-terminated, in the API's order:
 * "NoSchedule", "PreferNoSchedule", "NoExecute". */
const char *const *kp_taint_effect_names(void);
/* "Equal", "Exists", "Lt", "Gt", "" (= Equal). Returns -1 for an unknown name. */
int kp_toleration_op_parse(const char *name);
const char *kp_toleration_op_name(enum kp_toleration_op op);
/* The toleration operators, NULL-terminated: "Equal", "Exists", "Lt", "Gt". */
const char *const *kp_toleration_op_names(void);

/* Kubernetes' ToleratesTaint, comparison operators enabled. An empty key
 * matches every key whatever the operator (validation, not matching, is what
 * pairs it with Exists); an operator outside the enum tolerates nothing. */
bool kp_toleration_tolerates(const kp_toleration *toleration, const kp_taint *taint);

/* Index of the first taint no toleration tolerates, or -1 when all are. */
long kp_taints_first_untolerated(const kp_taint *taints, size_t n_taints,
                                 const kp_toleration *tolerations, size_t n_tolerations);
static inline bool kp_taints_tolerated(const kp_taint *taints, size_t n_taints,
                                       const kp_toleration *tolerations, size_t n_tolerations)
{
    return kp_taints_first_untolerated(taints, n_taints, tolerations, n_tolerations) < 0;
}

/* Same key and effect (Kubernetes' Taint.MatchTaint; the value is not compared). */
bool kp_taint_matches(const kp_taint *a, const kp_taint *b);

/* Taints expected while a node initialises (not-ready, unreachable, the cloud
 * provider's uninitialized taint, karpenter.sh/unregistered, readiness.k8s.io/ *),
 * which Karpenter ignores on nodes it manages until they are initialised.
 * Matched on key and effect like Karpenter (the value is not compared). */
bool kp_taint_is_known_ephemeral(const kp_taint *taint);

/* "key=value:Effect" or "key:Effect" (Karpenter's form in "did not tolerate
 * taint" messages), truncated to fit `size`. Returns buf. */
char *kp_taint_format(const kp_taint *taint, char *buf, size_t size);

#endif
