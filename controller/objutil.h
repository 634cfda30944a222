/*
 * Small operations on objects as JSON that every controller needs: status
 * conditions (set one, with lastTransitionTime moving only when the status
 * does, as Kubernetes' meta.SetStatusCondition), finalizers, labels,
 * annotations, and merge patches that carry the resourceVersion they were
 * made from (an optimistic lock: a 409 means someone else wrote first).
 */
#ifndef KP_CONTROLLER_OBJUTIL_H
#define KP_CONTROLLER_OBJUTIL_H

#include "kube/objutil.h" /* reading: paths, conditions, Node readiness */
#include "kube/ops.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* Set condition `type` in `status.conditions` of `obj`. True when anything
 * changed. `status` "True", "False" or "Unknown". */
bool kp_obj_set_condition(cJSON *obj, const char *type, const char *status, const char *reason, const char *message,
                          int64_t now_ns);
/* Remove condition `type` (Karpenter's Clear); true when it was there. */
bool kp_obj_clear_condition(cJSON *obj, const char *type);

bool kp_obj_has_finalizer(const cJSON *obj, const char *finalizer);
/* Add or remove; true when the list changed. */
bool kp_obj_add_finalizer(cJSON *obj, const char *finalizer);
bool kp_obj_remove_finalizer(cJSON *obj, const char *finalizer);

/* metadata.labels / metadata.annotations entries. */
const char *kp_obj_label(const cJSON *obj, const char *key);
const char *kp_obj_annotation(const cJSON *obj, const char *key);
bool kp_obj_set_label(cJSON *obj, const char *key, const char *value);
bool kp_obj_set_annotation(cJSON *obj, const char *key, const char *value);

/* The object at a dotted path, created (as objects) when missing. */
cJSON *kp_obj_ensure(cJSON *obj, const char *path);

/* Flag for kp_obj_patch: send metadata.resourceVersion of `before`, so that a
 * concurrent write makes this one fail with KP_ECONFLICT. Needed whenever the
 * patch replaces a list others may change (finalizers, conditions, taints);
 * maps (labels, annotations) merge key by key and need no lock. */
#define KP_OBJ_LOCK 0x100u

/* Merge-patch (RFC 7386) what differs between `before` and `after`: the
 * status subresource with KP_KUBE_STATUS, everything else without.
 * KP_KUBE_UNCHANGED when nothing differs. */
int kp_obj_patch(kp_kube_client *c, enum kp_kube_res res, const cJSON *before, const cJSON *after, unsigned flags);
/* The same, with the object as written in *out (caller deletes; NULL when
 * nothing differed or the write failed). */
int kp_obj_patch_out(kp_kube_client *c, enum kp_kube_res res, const cJSON *before, const cJSON *after, unsigned flags,
                     cJSON **out);

#endif
