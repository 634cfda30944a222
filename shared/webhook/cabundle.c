#include "webhook/cabundle.h"

#include "base/buf.h"
#include "base/error.h"
#include "webhook/certs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_op(cJSON *patch, const char *op, const char *path, cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddItemToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
}

/* Set one webhook's caBundle, guarded by a test of its name. */
static void patch_webhook(cJSON *patch, const cJSON *hook, int index, const char *ca_b64)
{
    char path[128];
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(hook, "name");
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(hook, "clientConfig");
    snprintf(path, sizeof(path), "/webhooks/%d/name", index);
    if (cJSON_IsString(name)) add_op(patch, "test", path, cJSON_CreateString(name->valuestring));
    if (cJSON_IsObject(cc)) {
        snprintf(path, sizeof(path), "/webhooks/%d/clientConfig/caBundle", index);
        add_op(patch, "add", path, cJSON_CreateString(ca_b64));
    } else {
        cJSON *value = cJSON_CreateObject();
        cJSON_AddStringToObject(value, "caBundle", ca_b64);
        snprintf(path, sizeof(path), "/webhooks/%d/clientConfig", index);
        add_op(patch, "add", path, value);
    }
}

int kp_cabundle_patch_build(cJSON **out, const cJSON *config, const char *ca_b64)
{
    const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(config, "webhooks");
    if (!cJSON_IsArray(hooks))
        return kp_error_set(KP_EINVALID, "the webhook configuration has no webhooks list");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(config, "metadata"), "resourceVersion");
    cJSON *patch = cJSON_CreateArray();
    if (cJSON_IsString(rv))
        add_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(rv->valuestring));
    int index = 0, changed = 0;
    for (const cJSON *h = hooks->child; h; h = h->next, index++) {
        const cJSON *cc = cJSON_GetObjectItemCaseSensitive(h, "clientConfig");
        const cJSON *ca = cJSON_GetObjectItemCaseSensitive(cc, "caBundle");
        if (cJSON_IsString(ca) && strcmp(ca->valuestring, ca_b64) == 0) continue;
        patch_webhook(patch, h, index, ca_b64);
        changed = 1;
    }
    if (!changed) {
        cJSON_Delete(patch);
        patch = NULL;
    }
    *out = patch;
    return 0;
}

static int publish_once(const kp_cabundle_client *client, const char *resource, const char *name,
                        const char *ca_b64, int *changed)
{
    cJSON *config = NULL, *patch = NULL;
    int err = client->get(client->ctx, resource, name, &config);
    if (err < 0) return kp_error_wrap(err, "reading %s %s", resource, name);
    err = kp_cabundle_patch_build(&patch, config, ca_b64);
    cJSON_Delete(config);
    if (err < 0 || !patch) return err;
    char *text = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    err = client->patch(client->ctx, resource, name, text);
    cJSON_free(text);
    if (err == 0) *changed = 1;
    return err;
}

int kp_cabundle_publish(const kp_cabundle_client *client, const char *resource, const char *name,
                        const char *ca_pem, int *changed)
{
    kp_buf b64 = KP_BUF_INIT(4 * KP_CERTS_MAX_PEM);
    int err = kp_certs_cabundle(&b64, ca_pem), did = 0;
    for (int attempt = 0; err == 0 && attempt < 5; attempt++) {
        err = publish_once(client, resource, name, kp_buf_cstr(&b64), &did);
        if (err != KP_ECONFLICT) break;
        if (attempt < 4) err = 0;
    }
    kp_buf_free(&b64);
    if (changed && err == 0) *changed = did;
    return err;
}
