/*
 * The webhook's validation as a filter for tests/cel/cel_equivalence.mjs:
 * one JSON request per line on standard input,
 *
 *   {"kind":"NodePool","op":"create"|"update","object":{...},"old":{...}}
 *
 * and one JSON answer per line on standard output,
 *
 *   {"errors":[{"path":"spec.weight","type":"Invalid","detail":"..."}]}
 *
 * with the same kp_admission_validate the webhook runs.
 */
#include "api/admission.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {"Required", "Invalid",   "NotSupported", "Forbidden",
                                         "TooLong",  "TooMany",   "Duplicate",    "Type"};

static int kind_of(const char *name)
{
    if (!name) return -1;
    if (strcmp(name, "NodePool") == 0) return KP_ADMIT_NODEPOOL;
    if (strcmp(name, "NodeClaim") == 0) return KP_ADMIT_NODECLAIM;
    if (strcmp(name, "EC2NodeClass") == 0) return KP_ADMIT_EC2NODECLASS;
    if (strcmp(name, "NodeOverlay") == 0) return KP_ADMIT_NODEOVERLAY;
    return -1;
}

static cJSON *answer(const cJSON *req)
{
    int kind = kind_of(cJSON_GetStringValue(cJSON_GetObjectItem(req, "kind")));
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(req, "op"));
    bool update = op && strcmp(op, "update") == 0;
    cJSON *out = cJSON_CreateObject();
    if (kind < 0) {
        cJSON_AddStringToObject(out, "failure", "unknown kind");
        return out;
    }
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    int err = kp_admission_validate((enum kp_admission_kind)kind,
                                    update ? KP_ADMIT_UPDATE : KP_ADMIT_CREATE,
                                    cJSON_GetObjectItem(req, "object"),
                                    cJSON_GetObjectItem(req, "old"), &res);
    if (err < 0) cJSON_AddStringToObject(out, "failure", kp_error_last());
    cJSON *errors = cJSON_AddArrayToObject(out, "errors");
    for (size_t i = 0; i < res.errors.count; i++) {
        const kp_field_error *e = &res.errors.items[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "path", e->path);
        cJSON_AddStringToObject(j, "type", type_names[e->type]);
        cJSON_AddStringToObject(j, "detail", e->detail ? e->detail : "");
        cJSON_AddStringToObject(j, "text", kp_field_error_string(arena, e));
        cJSON_AddItemToArray(errors, j);
    }
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    return out;
}

int main(void)
{
    size_t cap = 0;
    char *line = NULL;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        cJSON *req = cJSON_ParseWithLength(line, (size_t)n);
        cJSON *out = req ? answer(req) : NULL;
        char *text = out ? cJSON_PrintUnformatted(out) : NULL;
        printf("%s\n", text ? text : "{\"failure\":\"not JSON\"}");
        fflush(stdout);
        free(text);
        cJSON_Delete(out);
        cJSON_Delete(req);
    }
    free(line);
    return 0;
}
