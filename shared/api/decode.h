/*
 * Decoding Kubernetes and Karpenter objects from JSON (cJSON trees) into the
 * object model of objects.h.
 *
 * Rules, shared by every kind:
 *   - all memory comes from `arena`; the JSON tree may be freed afterwards;
 *   - unknown fields are ignored and null is the same as absent, as in
 *     Kubernetes' non-strict decoding; absent fields get zero values;
 *   - a wrong JSON type, a bad quantity, duration or time, a non-integral or
 *     out-of-range integer, or an unknown enum value returns KP_EINVALID with a
 *     message naming the field as Kubernetes does:
 *       spec.template.spec.requirements[2].values: expected array, got string
 *       spec.containers[0].resources.requests.cpu: quantity "1x": ...
 *   - derived fields (effective pod requests, host ports, owner facts) are
 *     computed during decoding;
 *   - `*out` is written only on success.
 * Each function decodes one object's body; apiVersion and kind are not
 * checked (kp_decode_object dispatches on them).
 */
#ifndef KP_API_DECODE_H
#define KP_API_DECODE_H

#include "api/objects.h"
#include "base/arena.h"

#include <cjson/cJSON.h>

/* Only metadata, for kinds whose body nothing reads (Namespaces). */
int kp_decode_meta(kp_arena *arena, const cJSON *json, kp_object_meta *out);
int kp_decode_pod(kp_arena *arena, const cJSON *json, kp_pod *out);
int kp_decode_node(kp_arena *arena, const cJSON *json, kp_node *out);
int kp_decode_nodepool(kp_arena *arena, const cJSON *json, kp_nodepool *out);

/* The CRD's names for the object model's disruption values, from the same
 * tables the decoder reads (api/crd_tables.h): a budget reason's KP_REASON_*
 * bit (0 for no such reason), and a consolidation policy's name (unset: the
 * CRD's default). */
unsigned kp_budget_reason_bit(const char *name);
const char *kp_consolidation_policy_name(enum kp_consolidation_policy policy);
int kp_decode_nodeclaim(kp_arena *arena, const cJSON *json, kp_nodeclaim *out);
int kp_decode_ec2nodeclass(kp_arena *arena, const cJSON *json, kp_ec2nodeclass *out);
/* DaemonSet, Deployment, StatefulSet, ReplicaSet and Job. `kind` selects the
 * defaults (replicas 1 for the replicated kinds, parallelism 1 for Jobs). */
int kp_decode_workload(kp_arena *arena, const cJSON *json, enum kp_kind kind, kp_workload *out);
/* policy/v1 or policy/v1beta1 (read from the object's apiVersion: a v1beta1
 * empty selector selects nothing). */
int kp_decode_pdb(kp_arena *arena, const cJSON *json, kp_pdb *out);
int kp_decode_pvc(kp_arena *arena, const cJSON *json, kp_pvc *out);
int kp_decode_pv(kp_arena *arena, const cJSON *json, kp_pv *out);
int kp_decode_storage_class(kp_arena *arena, const cJSON *json, kp_storage_class *out);
int kp_decode_csinode(kp_arena *arena, const cJSON *json, kp_csinode *out);

/* The kind for an apiVersion and kind, KP_KIND_UNKNOWN for anything else. */
enum kp_kind kp_kind_lookup(const char *api_version, const char *kind);

/* Decode any supported object, dispatching on apiVersion and kind.
 * KP_ENOTFOUND for a kind we do not model (callers skip it with a note),
 * KP_EINVALID when apiVersion or kind is missing or the body is bad. */
int kp_decode_object(kp_arena *arena, const cJSON *json, kp_object *out);

#endif
