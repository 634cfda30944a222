/*
 * CapacityBuffer (autoscaling.x-k8s.io/v1beta1, the API Cluster Autoscaler
 * shares; Karpenter's feature gate CapacityBuffer): headroom kept as N
 * copies of a pod shape that never run. The one home of what a buffer is
 * and says, for the controller and `simulate`:
 *
 *   - decoding a CapacityBuffer and a PodTemplate;
 *   - how many chunks it wants (Karpenter's computeReplicas: the larger of
 *     spec.replicas and the percentage of its scalableRef's replicas, at
 *     most what spec.limits holds; limits alone when neither is set);
 *   - its virtual pods: the pod template's spec (PVC and ephemeral volumes
 *     dropped), named capacity-buffer-<name>-<i>, labelled with the buffer,
 *     annotated karpenter.sh/capacity-buffer-fake-pod, the lowest priority,
 *     and pending (PodScheduled=False, Unschedulable): the provisioner plans
 *     them like pods, so real pods find room at once;
 *   - its Provisioning condition from where a plan put those pods.
 */
#ifndef KP_API_CAPACITYBUFFER_H
#define KP_API_CAPACITYBUFFER_H

#include "api/crd_tables.h"
#include "api/objects.h"
#include "base/arena.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#define KP_BUFFER_API_VERSION "autoscaling.x-k8s.io/v1beta1"
#define KP_BUFFER_KIND "CapacityBuffer"
/* The one provisioning strategy, the CRD's default. */
#define KP_BUFFER_ACTIVE_STRATEGY KP_CRD_BUFFER_PROVISIONING_STRATEGY_DEFAULT
#define KP_BUFFER_FAKE_POD_ANNOTATION "karpenter.sh/capacity-buffer-fake-pod"
#define KP_BUFFER_NAME_LABEL "karpenter.sh/capacity-buffer-name"
#define KP_BUFFER_NAMESPACE_LABEL "karpenter.sh/capacity-buffer-namespace"
/* Conditions and their reasons, as Karpenter writes them. */
#define KP_BUFFER_READY_FOR_PROVISIONING "ReadyForProvisioning"
#define KP_BUFFER_PROVISIONING "Provisioning"

typedef struct kp_capacity_buffer {
    kp_object_meta meta;
    const char *provisioning_strategy; /* NULL: the default, active capacity */
    const char *pod_template_ref;      /* spec.podTemplateRef.name, or NULL */
    bool has_scalable_ref;
    const char *scalable_api_group; /* "" for the core group */
    const char *scalable_kind;
    const char *scalable_name;
    bool has_replicas;
    int32_t replicas;
    bool has_percentage;
    int32_t percentage;
    bool has_limits;
    kp_resource_list limits;
    /* status */
    bool has_status_replicas;
    int32_t status_replicas;
    kp_conditions conditions;
} kp_capacity_buffer;

/* KP_EINVALID naming the field: wrong types, negative replicas or
 * percentage, both or neither reference named. */
int kp_decode_capacity_buffer(kp_arena *arena, const cJSON *json, kp_capacity_buffer *out);

/* A v1 PodTemplate: its template (metadata and spec) as a pod. */
int kp_decode_pod_template_object(kp_arena *arena, const cJSON *json, kp_pod *out);

/* Whether `json` is a CapacityBuffer / a v1 PodTemplate (apiVersion and kind). */
bool kp_is_capacity_buffer(const cJSON *json);
bool kp_is_pod_template(const cJSON *json);

/* scalableRef kinds Karpenter resolves: Deployment, StatefulSet, ReplicaSet in
 * group apps (or ""). NULL when supported, else why not. */
const char *kp_capacity_buffer_scalable_unsupported(const kp_capacity_buffer *cb, kp_arena *arena);

/* How a buffer's references are looked up: the PodTemplate (with its
 * generation) and the scalable workload (Deployment, StatefulSet or
 * ReplicaSet) in the buffer's namespace. 0, KP_ENOTFOUND (with a message),
 * or another KP_E* for a failure worth retrying. */
typedef struct kp_buffer_lookup {
    int (*pod_template)(void *ctx, const char *ns, const char *name, kp_arena *arena, kp_pod *out,
                        int64_t *generation);
    int (*workload)(void *ctx, const char *ns, const char *kind, const char *name, kp_arena *arena,
                    kp_workload *out);
    void *ctx;
} kp_buffer_lookup;

/* What Karpenter's capacitybuffer controller makes of a buffer: whether it
 * is ReadyForProvisioning (reason Resolved, or PodTemplateNotFound,
 * ScalableRefNotFound, ResolutionFailed with the message why), the pod shape
 * and the chunks, and the PodTemplate it used (status.podTemplateRef). */
typedef struct kp_buffer_resolved {
    bool ready;
    const char *reason;
    const char *message;
    const kp_pod *pod;           /* ready: the shape of one chunk */
    int32_t replicas;            /* ready: chunks wanted */
    const char *pod_template;    /* podTemplateRef resolved: its name and generation */
    int64_t pod_template_generation;
} kp_buffer_resolved;

/* 0 with *out filled (ready or not), or a KP_E* a lookup returned that is
 * worth retrying (out->ready is then false, reason ResolutionFailed). A
 * provisioningStrategy other than active capacity is not Ready: nothing here
 * would honour it. */
int kp_capacity_buffer_resolve(const kp_capacity_buffer *cb, const kp_buffer_lookup *lookup, kp_arena *arena,
                               kp_buffer_resolved *out);

/* Chunks wanted. `pod` is the resolved template (its requests meet
 * spec.limits); `scalable_replicas` < 0 when the buffer has no scalableRef. */
int32_t kp_capacity_buffer_replicas(const kp_capacity_buffer *cb, const kp_pod *pod, int32_t scalable_replicas);

/* Virtual pod `i` (1-based) of the buffer, from `template` (borrowed; the
 * pod's memory is in `arena`). */
kp_pod *kp_capacity_buffer_virtual_pod(kp_arena *arena, const kp_capacity_buffer *cb, const kp_pod *template,
                                       int32_t i);

/* A virtual pod of a buffer; *key (may be NULL) gets "namespace/name" of
 * its buffer (NULL when the labels do not say). */
bool kp_pod_is_buffer_virtual(const kp_pod *p, const char **ns, const char **name);

/* Where a plan put a buffer's virtual pods. */
typedef struct kp_buffer_outcome {
    uint32_t existing;  /* on nodes (and NodeClaims) that exist */
    uint32_t new_claim; /* on NodeClaims the plan launches */
    uint32_t failed;    /* nowhere */
} kp_buffer_outcome;

/* Karpenter's Provisioning condition for a buffer: NotReadyForProvisioning,
 * BufferEmpty, RequiresNewCapacity or FitsExistingCapacity; false when it
 * stays as it is (nothing of the buffer was planned). `o` NULL: nothing
 * observed. `message` gets the text. */
bool kp_capacity_buffer_provisioning(const kp_capacity_buffer *cb, const kp_buffer_outcome *o, const char **status,
                                     const char **reason, char *message, size_t size);

#endif
