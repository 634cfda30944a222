#include "webhook/review.h"

#include "base/base64.h"
#include "base/error.h"
#include "format/json_in.h"
#include "format/json_out.h"

#include <stdio.h>
#include <string.h>

static const cJSON *member(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

/* A string member, or NULL when absent, null or not a string. */
static const char *string_member(const cJSON *obj, const char *name)
{
    const cJSON *item = member(obj, name);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static const cJSON *object_member(const cJSON *obj, const char *name)
{
    const cJSON *item = member(obj, name);
    return cJSON_IsObject(item) ? item : NULL;
}

enum kp_review_op kp_review_op_parse(const char *operation)
{
    static const struct {
        const char *name;
        enum kp_review_op op;
    } ops[] = {{"CREATE", KP_REVIEW_OP_CREATE},
               {"UPDATE", KP_REVIEW_OP_UPDATE},
               {"DELETE", KP_REVIEW_OP_DELETE},
               {"CONNECT", KP_REVIEW_OP_CONNECT}};
    for (size_t i = 0; operation && i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(operation, ops[i].name) == 0) return ops[i].op;
    return KP_REVIEW_OP_UNKNOWN;
}

/* As strict as the manifest loader (format/json_in.h): valid UTF-8, no NUL,
 * bounded nesting, and a repeated key read as Go reads it (the last wins),
 * so we judge the object the API server would store. */
static int parse_json(cJSON **out, const char *body, size_t len)
{
    int err = kp_json_parse_one(out, body, len, KP_REVIEW_MAX_DEPTH, "request body");
    if (err != KP_ETOOLARGE) return err;
    /* Too deep is malformed here, not too large (that is an HTTP 413). */
    char message[256];
    snprintf(message, sizeof(message), "%s", kp_error_last());
    return kp_error_set(KP_EINVALID, "%s", message);
}

static const char *const meta_strings[] = {"name",         "namespace", "generateName",
                                           "uid",          "resourceVersion",
                                           "creationTimestamp", NULL};

static bool string_map(const cJSON *map)
{
    if (!cJSON_IsObject(map)) return false;
    for (const cJSON *e = map->child; e; e = e->next)
        if (!cJSON_IsString(e)) return false;
    return true;
}

const char *kp_review_metadata_problem(const cJSON *object)
{
    const cJSON *meta = member(object, "metadata");
    if (!meta || cJSON_IsNull(meta)) return NULL;
    if (!cJSON_IsObject(meta)) return "metadata must be an object";
    for (size_t i = 0; meta_strings[i]; i++) {
        const cJSON *v = member(meta, meta_strings[i]);
        if (v && !cJSON_IsNull(v) && !cJSON_IsString(v))
            return "metadata.name, namespace, generateName, uid, resourceVersion and "
                   "creationTimestamp must be strings";
    }
    const cJSON *labels = member(meta, "labels"), *annotations = member(meta, "annotations");
    if (labels && !cJSON_IsNull(labels) && !string_map(labels))
        return "metadata.labels must be a map of strings";
    if (annotations && !cJSON_IsNull(annotations) && !string_map(annotations))
        return "metadata.annotations must be a map of strings";
    return NULL;
}

static int check_envelope(const cJSON *root)
{
    if (!cJSON_IsObject(root))
        return kp_error_set(KP_EINVALID, "request body is not a JSON object");
    const char *api_version = string_member(root, "apiVersion");
    const char *kind = string_member(root, "kind");
    if (!kind || strcmp(kind, "AdmissionReview") != 0)
        return kp_error_set(KP_EINVALID, "expected kind AdmissionReview, got %s",
                            kind ? kind : "none");
    if (!api_version || strcmp(api_version, KP_REVIEW_API_VERSION) != 0)
        return kp_error_set(KP_EINVALID, "unsupported AdmissionReview apiVersion %s (want %s)",
                            api_version ? api_version : "none", KP_REVIEW_API_VERSION);
    const cJSON *request = object_member(root, "request");
    if (!request) return kp_error_set(KP_EINVALID, "AdmissionReview has no request");
    const char *uid = string_member(request, "uid");
    if (!uid || !*uid) return kp_error_set(KP_EINVALID, "AdmissionReview request.uid is missing");
    return 0;
}

static const cJSON *object_or_null(const cJSON *request, const char *name)
{
    const cJSON *item = member(request, name);
    return item && !cJSON_IsNull(item) ? item : NULL;
}

static void fill(kp_review *r, cJSON *root)
{
    const cJSON *request = member(root, "request");
    const cJSON *gvk = object_member(request, "kind");
    memset(r, 0, sizeof(*r));
    r->root = root;
    r->uid = string_member(request, "uid");
    r->group = string_member(gvk, "group");
    r->version = string_member(gvk, "version");
    r->kind = string_member(gvk, "kind");
    r->operation = string_member(request, "operation");
    r->op = kp_review_op_parse(r->operation);
    r->name = string_member(request, "name");
    r->namespace_ = string_member(request, "namespace");
    r->object = object_or_null(request, "object");
    r->old_object = object_or_null(request, "oldObject");
    r->dry_run = cJSON_IsTrue(member(request, "dryRun"));
}

int kp_review_parse(kp_review *out, const char *body, size_t len)
{
    if (len > KP_REVIEW_MAX_BYTES)
        return kp_error_set(KP_ETOOLARGE, "request body of %zu bytes is over the limit of %zu", len,
                            KP_REVIEW_MAX_BYTES);
    if (!body || len == 0) return kp_error_set(KP_EINVALID, "request body is empty");
    cJSON *root = NULL;
    int err = parse_json(&root, body, len);
    if (err < 0) return err;
    if ((err = check_envelope(root)) < 0) {
        cJSON_Delete(root);
        return err;
    }
    fill(out, root);
    return 0;
}

void kp_review_clear(kp_review *review)
{
    if (!review) return;
    cJSON_Delete(review->root);
    memset(review, 0, sizeof(*review));
}

static int write_status(kp_buf *out, int code, const char *reason, const char *message)
{
    int err = kp_buf_puts(out, "{\"metadata\":{},\"status\":\"Failure\",\"message\":");
    if (err == 0) err = kp_buf_json_string(out, message ? message : "");
    if (err == 0) err = kp_buf_puts(out, ",\"reason\":");
    if (err == 0) err = kp_buf_json_string(out, reason ? reason : "");
    if (err == 0) err = kp_buf_printf(out, ",\"code\":%d}", code);
    return err;
}

static int write_warnings(kp_buf *out, const kp_review_response *resp)
{
    if (resp->n_warnings == 0) return 0;
    int err = kp_buf_puts(out, ",\"warnings\":[");
    for (size_t i = 0; i < resp->n_warnings && err == 0; i++) {
        if (i) err = kp_buf_putc(out, ',');
        if (err == 0) err = kp_buf_json_string(out, resp->warnings[i]);
    }
    if (err == 0) err = kp_buf_putc(out, ']');
    return err;
}

static int write_patch(kp_buf *out, const cJSON *patch)
{
    kp_buf json = KP_BUF_INIT(KP_REVIEW_MAX_BYTES);
    int err = kp_json_out_json(&json, patch, 0);
    if (err == 0) err = kp_buf_puts(out, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
    if (err == 0) err = kp_base64_append(out, json.data, json.len);
    if (err == 0) err = kp_buf_putc(out, '"');
    kp_buf_free(&json);
    return err;
}

int kp_review_response_write(kp_buf *out, const kp_review_response *resp)
{
    size_t start = out->len;
    int err = kp_buf_puts(out, "{\"apiVersion\":\"" KP_REVIEW_API_VERSION
                               "\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    if (err == 0) err = kp_buf_json_string(out, resp->uid ? resp->uid : "");
    if (err == 0)
        err = kp_buf_puts(out, resp->allowed ? ",\"allowed\":true" : ",\"allowed\":false");
    if (err == 0 && !resp->allowed) {
        err = kp_buf_puts(out, ",\"status\":");
        if (err == 0)
            err = write_status(out, resp->code ? resp->code : 403, resp->reason, resp->message);
    }
    if (err == 0) err = write_warnings(out, resp);
    if (err == 0 && resp->allowed && cJSON_GetArraySize(resp->patch) > 0)
        err = write_patch(out, resp->patch);
    if (err == 0) err = kp_buf_puts(out, "}}");
    if (err < 0 && out->data) {
        out->len = start;
        out->data[start] = '\0';
    }
    return err;
}

int kp_review_status_write(kp_buf *out, int code, const char *reason, const char *message)
{
    int err = kp_buf_puts(out, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",");
    kp_buf status = KP_BUF_INIT(64 * 1024);
    if (err == 0) err = write_status(&status, code, reason, message);
    /* drop the status object's braces to inline its members */
    if (err == 0) err = kp_buf_append(out, status.data + 1, status.len - 1);
    kp_buf_free(&status);
    return err;
}
