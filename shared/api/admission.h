/*
 * Admission of Karpenter's objects: validation and defaulting of NodePool,
 * NodeClaim, EC2NodeClass and NodeOverlay exactly as Karpenter does it (its CRD
 * schemas, their CEL rules and its Go validation), as pure functions from
 * JSON to a result. The webhook wraps results in AdmissionReviews; the
 * controller uses them to refuse objects that reached the cluster another way.
 *
 * The operator's policy (policy.h) is a separate, stricter layer on top.
 */
#ifndef KP_API_ADMISSION_H
#define KP_API_ADMISSION_H

#include "api/field_errors.h"
#include "base/arena.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

enum kp_admission_kind {
    KP_ADMIT_NODEPOOL = 0,
    KP_ADMIT_NODECLAIM,
    KP_ADMIT_EC2NODECLASS,
    KP_ADMIT_NODEOVERLAY, /* karpenter.sh/v1alpha1 */
};

enum kp_admission_op {
    KP_ADMIT_CREATE = 0,
    KP_ADMIT_UPDATE,
};

typedef struct kp_admission_result {
    kp_field_errors errors; /* empty: allowed */
    const char **warnings;  /* legal but probably wrong; shown to the user */
    size_t n_warnings, cap_warnings;
    cJSON *patch; /* RFC 6902 JSON Patch (an array) for defaults, or NULL; caller frees */
} kp_admission_result;

void kp_admission_result_init(kp_admission_result *res, kp_arena *arena);
void kp_admission_warn(kp_admission_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the patch; the arena owns the rest. */
void kp_admission_result_clear(kp_admission_result *res);

/* Validate `obj` (and, on UPDATE, the transition from `old`: immutable
 * fields), each with its CRD defaults applied first as the API server would
 * (an UPDATE that leaves out a defaulted field changes nothing). Errors name
 * field paths as Kubernetes does. Returns 0 when the
 * check ran (look at res->errors), a negative KP_E* when it could not. */
int kp_admission_validate(enum kp_admission_kind kind, enum kp_admission_op op, const cJSON *obj,
                          const cJSON *old, kp_admission_result *res);

/* Give `obj` (in place) the defaults its CRD schema declares, as the API
 * server does to every object before validating it: kp_admission_validate
 * does this to a copy of both sides first. */
int kp_admission_apply_defaults(enum kp_admission_kind kind, cJSON *obj);

/* The JSON Patch that applies the CRD schema's defaults to `obj` (nothing
 * when every default is present). */
int kp_admission_default(enum kp_admission_kind kind, const cJSON *obj, kp_admission_result *res);

/* "NodePool" etc.; kind lookup from an AdmissionReview's request.kind
 * (group, version, kind), -1 for anything else. */
const char *kp_admission_kind_name(enum kp_admission_kind kind);
int kp_admission_kind_lookup(const char *group, const char *version, const char *kind);

#endif
