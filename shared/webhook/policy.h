/*
 * The operator's admission policy: rules stricter than Karpenter's own
 * validation (require NodePool limits, allow only some capacity types or
 * instance families, require IMDSv2 and encrypted volumes, ...) and the Pod
 * mutations the webhook makes (default requests, do-not-disrupt). The file
 * format is YAML and is documented in docs/webhook.md.
 *
 * A policy is immutable once parsed and reference-counted, so a reload can
 * swap it while requests still use the old one (kp_policy_slot). Checks add
 * their findings to a kp_admission_result: each violation is a field error
 * whose detail names the policy rule and says how to comply.
 */
#ifndef KP_WEBHOOK_POLICY_H
#define KP_WEBHOOK_POLICY_H

#include "api/admission.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct kp_policy kp_policy;

/* A policy with every rule off (what runs without --policy). */
kp_policy *kp_policy_new_empty(void);

/* Parse a policy from YAML or JSON text. Unknown keys, wrong types, bad
 * quantities and empty selectors are KP_EINVALID, with the message naming
 * the key ("pods.defaultRequests.cpu: ..."): a typo must not switch a rule
 * off silently. `name` (may be NULL) starts messages. */
int kp_policy_parse(kp_policy **out, const char *data, size_t len, const char *name);
/* Read and parse a regular file (at most 1 MiB; a FIFO or device is
 * refused without waiting on it). A policy that sets no rule (an empty,
 * comment-only, null or {} document) is KP_EINVALID unless `allow_empty`:
 * a file caught between truncation and rewrite must not switch every rule
 * off. */
int kp_policy_load(kp_policy **out, const char *path, bool allow_empty);

kp_policy *kp_policy_ref(kp_policy *policy);
/* Drop a reference; frees on the last. Accepts NULL; returns NULL. */
kp_policy *kp_policy_unref(kp_policy *policy);

/* NodePool rules (nodePools.*). */
int kp_policy_check_nodepool(const kp_policy *policy, const cJSON *nodepool,
                             kp_admission_result *res);
/* EC2NodeClass rules (ec2NodeClasses.*). */
int kp_policy_check_nodeclass(const kp_policy *policy, const cJSON *nodeclass,
                              kp_admission_result *res);

/* Pod mutation (pods.*) on CREATE: appends JSON Patch operations to `patch`
 * (an array) and warnings to `res`. `ns` is the request's namespace (the
 * Pod's own metadata may not carry it yet). KP_ETOOLARGE when a JSON
 * Pointer would pass 4 KiB: the patch is then incomplete and must not be
 * sent (the handler refuses the Pod). */
int kp_policy_mutate_pod(const kp_policy *policy, const cJSON *pod, const char *ns, cJSON *patch,
                         kp_admission_result *res);

#define KP_ANNOTATION_DEFAULTED_REQUESTS "karpenter.sh/defaulted-requests"

/* Holds the current policy for threads that read it while another swaps it. */
typedef struct kp_policy_slot kp_policy_slot;

/* Takes the caller's reference to `initial`. */
kp_policy_slot *kp_policy_slot_new(kp_policy *initial);
kp_policy_slot *kp_policy_slot_free(kp_policy_slot *slot);
/* A new reference to the current policy: kp_policy_unref() it when done. */
kp_policy *kp_policy_slot_get(kp_policy_slot *slot);
/* Replace the current policy, taking the caller's reference to `next`. */
void kp_policy_slot_set(kp_policy_slot *slot, kp_policy *next);

#endif
