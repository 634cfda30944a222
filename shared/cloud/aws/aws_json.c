#include "cloud/aws/aws_json.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

enum { JSON_RESPONSE_MAX = 64 << 20 };

const char *kp_aws_json_string(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kp_aws_json_call(kp_aws_client *client, const kp_aws_json_service *svc, const char *action,
                     const cJSON *request, long timeout_ms, cJSON **out)
{
    char *body = cJSON_PrintUnformatted(request);
    if (!body)
        return kp_error_set(KP_ERROR, "%s %s: cannot serialise the request", svc->service, action);
    kp_aws_request req = {svc->service, action,  svc->protocol, svc->target_prefix,
                          body,         strlen(body), svc->region, timeout_ms, NULL, NULL};
    kp_buf answer = KP_BUF_INIT(JSON_RESPONSE_MAX);
    int err = kp_aws_client_send(client, &req, &answer);
    free(body);
    cJSON *doc = NULL;
    if (err == 0) {
        doc = answer.len ? cJSON_ParseWithLength(answer.data, answer.len) : cJSON_CreateObject();
        if (!cJSON_IsObject(doc))
            err = kp_error_set(KP_EINVALID, "%s %s: the answer is not a JSON object",
                               svc->service, action);
    }
    kp_buf_free(&answer);
    if (err < 0) {
        cJSON_Delete(doc);
        return err;
    }
    *out = doc;
    return 0;
}
