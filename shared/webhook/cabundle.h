/*
 * Publishing our CA into the ValidatingWebhookConfiguration and
 * MutatingWebhookConfiguration (admissionregistration.k8s.io/v1) so the API
 * server trusts the certificate made by --self-signed.
 *
 * The Kubernetes client is reached through two callbacks, so this logic is
 * tested without a cluster and does not depend on the client's internals.
 * The change is a JSON Patch that tests each webhook's name at its index and
 * the object's resourceVersion before setting clientConfig.caBundle, so a
 * configuration edited meanwhile fails the patch (the client reports
 * KP_ECONFLICT) and is read again instead of being overwritten.
 */
#ifndef KP_WEBHOOK_CABUNDLE_H
#define KP_WEBHOOK_CABUNDLE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define KP_CABUNDLE_VALIDATING "validatingwebhookconfigurations"
#define KP_CABUNDLE_MUTATING   "mutatingwebhookconfigurations"

typedef struct kp_cabundle_client {
    /* GET admissionregistration.k8s.io/v1 `resource` `name` (cluster-scoped):
     * *out is the object, owned by the caller. KP_ENOTFOUND when absent. */
    int (*get)(void *ctx, const char *resource, const char *name, cJSON **out);
    /* PATCH it with `json_patch` (Content-Type application/json-patch+json).
     * A failed "test" operation (HTTP 422 or 409) must be KP_ECONFLICT. */
    int (*patch)(void *ctx, const char *resource, const char *name, const char *json_patch);
    void *ctx;
} kp_cabundle_client;

/* The JSON Patch that sets every webhook's clientConfig.caBundle in `config`
 * to `ca_b64`, or NULL in *out when all already hold it. KP_EINVALID when
 * `config` has no webhooks list. */
int kp_cabundle_patch_build(cJSON **out, const cJSON *config, const char *ca_b64);

/* Read, patch if needed, and retry up to 5 times on KP_ECONFLICT. *changed
 * (may be NULL) says whether a patch was sent. */
int kp_cabundle_publish(const kp_cabundle_client *client, const char *resource, const char *name,
                        const char *ca_pem, int *changed);

#endif
