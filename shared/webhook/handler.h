/*
 * One admission request from body to response body, with no socket in sight:
 * the server calls this for /validate and /mutate, and so do the unit tests
 * and the fuzzer.
 *
 *   /validate  NodePool, NodeClaim, EC2NodeClass: Karpenter's validation
 *              (api/admission.h), then the policy (NodePool, EC2NodeClass).
 *   /mutate    the same kinds: Karpenter's defaults as a JSON Patch;
 *              Pods (core/v1): the policy's mutations on CREATE.
 *
 * It fails closed: anything it cannot read is an HTTP 4xx with a Status body
 * (no request.uid to answer) or a denial; nothing malformed is ever allowed.
 * DELETE and CONNECT are allowed as they are (nothing to check).
 */
#ifndef KP_WEBHOOK_HANDLER_H
#define KP_WEBHOOK_HANDLER_H

#include "base/arena.h"
#include "base/buf.h"
#include "webhook/policy.h"

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stddef.h>

enum kp_webhook_endpoint {
    KP_WEBHOOK_VALIDATE = 0,
    KP_WEBHOOK_MUTATE,
};

/* Response bodies are capped: a patch can outgrow its request, not without bound. */
#define KP_WEBHOOK_MAX_RESPONSE ((size_t)8 << 20)

typedef struct kp_webhook_outcome {
    int http_status; /* 200: `out` holds an AdmissionReview; else a Status object */
    /* Metric labels, always constant strings from a fixed set: */
    const char *kind;      /* NodePool, NodeClaim, EC2NodeClass, Pod, other, none */
    const char *operation; /* CREATE, UPDATE, DELETE, CONNECT, other, none */
    const char *result;    /* allowed, patched, denied, rejected (HTTP 4xx/5xx) */
    bool dry_run;
} kp_webhook_outcome;

/* Advice on a Pod being created, beyond the policy's mutations: one warning
 * or NULL, never a refusal (the webhook's: kp_pod_warner_warn in
 * pod_warning.h). Called with the Pod as the policy's patch leaves it. */
typedef struct kp_webhook_advisor {
    const char *(*pod)(void *ctx, const cJSON *pod, const char *ns, kp_arena *arena);
    void *ctx;
} kp_webhook_advisor;

/* Handle `len` bytes of `body`. `arena` is scratch for this request (the
 * caller frees or rewinds it); the response body is appended to `out`. */
void kp_webhook_handle(const kp_policy *policy, enum kp_webhook_endpoint endpoint, const char *body,
                       size_t len, kp_arena *arena, kp_buf *out, kp_webhook_outcome *outcome);
/* The same, with an advisor for Pods on CREATE (NULL: none). */
void kp_webhook_handle_advised(const kp_policy *policy, const kp_webhook_advisor *advisor,
                               enum kp_webhook_endpoint endpoint, const char *body, size_t len,
                               kp_arena *arena, kp_buf *out, kp_webhook_outcome *outcome);

#endif
