/*
 * Helpers shared by the validate_*.c files (not an interface for other
 * modules). A validator walks the JSON object with a field path, and every
 * rule that fails appends a field error naming that path; nothing stops at
 * the first error, so a user sees every problem at once.
 *
 * Readers share one contract: absent and null read as "not set" (no error);
 * a value of the wrong JSON type adds a type error and reads as "not set", so
 * the rules that depend on it stay quiet rather than piling up.
 */
#ifndef KP_API_VALIDATE_INTERNAL_H
#define KP_API_VALIDATE_INTERNAL_H

#include "api/admission.h"
#include "base/path.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_vctx {
    kp_admission_result *res;
    kp_field_errors *errs;
    kp_arena *arena;
    kp_path path;
    enum kp_admission_op op;
} kp_vctx;

void kp_v_init(kp_vctx *v, kp_admission_result *res, enum kp_admission_op op);

/* ---- the path ---- */
void kp_v_push(kp_vctx *v, const char *field);
void kp_v_push_index(kp_vctx *v, size_t index);
void kp_v_push_key(kp_vctx *v, const char *key);
void kp_v_pop(kp_vctx *v);
const char *kp_v_here(const kp_vctx *v);
/* The path of `field` below the current one (arena-owned). */
const char *kp_v_child(kp_vctx *v, const char *field);

/* ---- errors at the current path ---- */
void kp_v_required(kp_vctx *v, const char *field);
/* A value of the wrong JSON type: `Invalid value: "string": must be of type integer`. */
void kp_v_type(kp_vctx *v, const cJSON *got, const char *want);
/* Invalid value: `value` rendered as Kubernetes does (strings quoted,
 * numbers bare, objects as "object"). */
void kp_v_invalid(kp_vctx *v, const cJSON *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kp_v_invalid_str(kp_vctx *v, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kp_v_forbidden(kp_vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_v_not_supported(kp_vctx *v, const char *value, const char *const *allowed);
void kp_v_too_many(kp_vctx *v, size_t have, size_t max);
void kp_v_too_long(kp_vctx *v, size_t max);
/* A string below the schema's minLength: "should be at least <min> chars long". */
void kp_v_too_short(kp_vctx *v, const char *value, size_t min);
void kp_v_duplicate(kp_vctx *v, const char *value);
/* "should match '<pattern>'" */
void kp_v_pattern(kp_vctx *v, const char *value, const char *pattern);
/* A warning, prefixed with the current path. */
void kp_v_warn(kp_vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- readers (member `name` of `obj`; the path is the current one) ---- */
/* NULL when absent or JSON null. */
const cJSON *kp_v_get(const cJSON *obj, const char *name);
bool kp_v_has(const cJSON *obj, const char *name);
const char *kp_v_string(kp_vctx *v, const cJSON *obj, const char *name);
/* Present, a string, and (with `nonempty`) not "": else Required / type error. */
const char *kp_v_required_string(kp_vctx *v, const cJSON *obj, const char *name);
const cJSON *kp_v_object(kp_vctx *v, const cJSON *obj, const char *name);
const cJSON *kp_v_required_object(kp_vctx *v, const cJSON *obj, const char *name);
/* An array of at most `max_items` (0: no limit); too many is reported and the
 * array still returned. */
const cJSON *kp_v_array(kp_vctx *v, const cJSON *obj, const char *name, size_t max_items);
/* An integer within [min, max]; false when absent, of the wrong type or out
 * of range (each reported). */
bool kp_v_int(kp_vctx *v, const cJSON *obj, const char *name, int64_t min, int64_t max,
              int64_t *out);
bool kp_v_bool(kp_vctx *v, const cJSON *obj, const char *name, bool *out);
/* A string that must be one of `allowed` (NULL-terminated); NULL unless valid. */
const char *kp_v_enum(kp_vctx *v, const cJSON *obj, const char *name, const char *const *allowed);
/* An object whose values are all strings, with at most `max_props` entries
 * (0: no limit). Non-string values are type errors at name[key]. */
const cJSON *kp_v_string_map(kp_vctx *v, const cJSON *obj, const char *name, size_t max_props);
/* How Kubernetes names a JSON value's type: "string", "integer", "object"... */
const char *kp_v_type_name(const cJSON *item);

/* ---- value rules ---- */
enum kp_v_duration_form {
    KP_VDUR_NILLABLE, /* ^(([0-9]+(s|m|h))+|Never)$: expireAfter, consolidateAfter */
    KP_VDUR_PLAIN,    /* ^([0-9]+(s|m|h))+$: terminationGracePeriod */
    KP_VDUR_BUDGET,   /* ^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$: budget duration */
};
/* Check member `name` of `obj`; true when present and valid (*out set). */
bool kp_v_duration(kp_vctx *v, const cJSON *obj, const char *name, enum kp_v_duration_form form,
                   int64_t *out_ns, bool *never);
/* A map of resource quantities (limits, requests): integers or quantity
 * strings. With `warn_negative`, negative amounts get a warning. */
void kp_v_quantity_map(kp_vctx *v, const cJSON *obj, const char *name, bool warn_negative);
/* RFC 3339 date-time, as the "date-time" schema format accepts. */
bool kp_v_is_date_time(const char *s);

/* ---- Karpenter's shared pieces (validate_common.c) ---- */
enum kp_v_owner { KP_V_NODEPOOL, KP_V_NODECLAIM, KP_V_NODEOVERLAY };
/* Why a label key may not be used (the CRD's rule for NodePools, NodeClaims
 * or, with `go_rules`, also Karpenter's runtime IsRestrictedLabel), or NULL. */
const char *kp_v_restricted_label(const char *key, enum kp_v_owner owner, bool go_rules);
/* spec.requirements of a NodePool template, NodeClaim or NodeOverlay (`spec` holds it). */
void kp_v_requirements(kp_vctx *v, const cJSON *spec, enum kp_v_owner owner);
/* taints and startupTaints; for NodePools also Karpenter's runtime checks
 * (qualified names, duplicate Key/Effect pairs across both lists). */
void kp_v_taints(kp_vctx *v, const cJSON *spec, enum kp_v_owner owner);
/* nodeClassRef; with `old_spec` (NodePool UPDATE) group and kind are immutable. */
void kp_v_node_class_ref(kp_vctx *v, const cJSON *spec, const cJSON *old_spec);
/* Warn when metadata.name cannot be a label value (Karpenter labels nodes with it). */
void kp_v_name_as_label(kp_vctx *v, const cJSON *obj, const char *label);

/* Kind validators (one per file). */
void kp_validate_nodepool(kp_vctx *v, const cJSON *obj, const cJSON *old);
void kp_validate_nodeclaim(kp_vctx *v, const cJSON *obj, const cJSON *old);
void kp_validate_ec2nodeclass(kp_vctx *v, const cJSON *obj, const cJSON *old);
void kp_validate_nodeoverlay(kp_vctx *v, const cJSON *obj, const cJSON *old);
/* spec.kubelet of an EC2NodeClass (validate_ec2nodeclass.c). */
void kp_v_kubelet(kp_vctx *v, const cJSON *spec);

#endif
