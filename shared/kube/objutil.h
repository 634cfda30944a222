/*
 * Kubernetes objects held as JSON (as the API server and the informers give
 * them), read and edited the same way by every controller and the kwok
 * provider: members by dotted path; status conditions, with the rule for
 * "condition is True" and "Node is Ready" in one place, and set as
 * Kubernetes' meta.SetStatusCondition sets them (lastTransitionTime moves only
 * when the status does); finalizers, labels, annotations; and merge patches
 * that carry the resourceVersion they were made from (an optimistic lock: a
 * 409 means someone else wrote first).
 */
#ifndef KP_KUBE_OBJUTIL_H
#define KP_KUBE_OBJUTIL_H

#include "kube/ops.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ paths */

/* The member at a dotted path ("status.conditions"), or NULL; "" is `obj`. */
const cJSON *kp_obj_get(const cJSON *obj, const char *path);
/* A string at a dotted path ("spec.providerID"), or NULL. */
const char *kp_obj_str(const cJSON *obj, const char *path);
/* The object at a dotted path, created (as objects) when missing. */
cJSON *kp_obj_ensure(cJSON *obj, const char *path);

/* ------------------------------------------------------------- conditions */

/* The condition of `type` in status.conditions, or NULL. */
const cJSON *kp_obj_condition_get(const cJSON *obj, const char *type);
/* The status of condition `type` ("True", "False", "Unknown"), or NULL. */
const char *kp_obj_condition(const cJSON *obj, const char *type);
/* Whether condition `type` is there with status "True" (absent, "False",
 * "Unknown" or anything else is not). */
bool kp_obj_condition_is_true(const cJSON *obj, const char *type);
/* lastTransitionTime of condition `type` in ns, or 0. */
int64_t kp_obj_condition_since(const cJSON *obj, const char *type);

/* A Node whose Ready condition is True. */
bool kp_node_is_ready(const cJSON *node);

/* ------------------------------------------------------------------ nodes */

/* Whether spec.taints holds karpenter.sh/disrupted:NoSchedule, matched on key
 * and effect (Kubernetes' Taint.MatchTaint: the value is not compared). */
bool kp_node_has_disrupted_taint(const cJSON *node);
/* Add (`on`) or remove that taint in spec.taints; true when the list
 * changed. The one place that writes Karpenter's disrupted taint. */
bool kp_node_set_disrupted_taint(cJSON *node, bool on);

/* Set condition `type` in `status.conditions` of `obj`. True when anything
 * changed. `status` "True", "False" or "Unknown". */
bool kp_obj_set_condition(cJSON *obj, const char *type, const char *status, const char *reason,
                          const char *message, int64_t now_ns);
/* The root condition (`root`, "Ready") over its `n` (at most 8) dependents,
 * as Karpenter's status library computes it: True when all are True; else
 * False "UnhealthyDependents" when one is False, Unknown
 * "ReconcilingDependents" otherwise, the message listing every dependent not
 * True, the latest transition first: "Registered=Unknown, Initialized=Unknown"
 * (a missing dependent counts as Unknown). True when anything changed. */
bool kp_obj_set_root_condition(cJSON *obj, const char *root, const char *const *deps, size_t n,
                               int64_t now_ns);
/* Remove condition `type` (Karpenter's Clear); true when it was there. */
bool kp_obj_clear_condition(cJSON *obj, const char *type);

/* ------------------------------------------------------------- metadata */

bool kp_obj_has_finalizer(const cJSON *obj, const char *finalizer);
/* Add or remove; true when the list changed. */
bool kp_obj_add_finalizer(cJSON *obj, const char *finalizer);
bool kp_obj_remove_finalizer(cJSON *obj, const char *finalizer);

/* metadata.labels / metadata.annotations entries. */
const char *kp_obj_label(const cJSON *obj, const char *key);
const char *kp_obj_annotation(const cJSON *obj, const char *key);
bool kp_obj_set_label(cJSON *obj, const char *key, const char *value);
bool kp_obj_set_annotation(cJSON *obj, const char *key, const char *value);

/* ---------------------------------------------------------------- patches */

/* Flag for kp_obj_patch: send metadata.resourceVersion of `before`, so that a
 * concurrent write makes this one fail with KP_ECONFLICT. Needed whenever the
 * patch replaces a list others may change (finalizers, conditions, taints);
 * maps (labels, annotations) merge key by key and need no lock. */
#define KP_OBJ_LOCK 0x100u

/* Merge-patch (RFC 7386) what differs between `before` and `after`: the
 * status subresource with KP_KUBE_STATUS, everything else without.
 * KP_KUBE_UNCHANGED when nothing differs. */
int kp_obj_patch(kp_kube_client *c, enum kp_kube_res res, const cJSON *before, const cJSON *after,
                 unsigned flags);
/* The same, with the object as written in *out (caller deletes; NULL when
 * nothing differed or the write failed). */
int kp_obj_patch_out(kp_kube_client *c, enum kp_kube_res res, const cJSON *before,
                     const cJSON *after, unsigned flags, cJSON **out);

#endif
