#include "cloud/aws/ssm.h"

#include "base/error.h"
#include "cloud/aws/aws_json.h"

static const kp_aws_json_service SSM = {"ssm", "AmazonSSM", KP_AWS_JSON_1_1, NULL};

static const char *dup_or_null(kp_arena *a, const char *s)
{
    return s ? kp_arena_strdup(a, s) : NULL;
}

int kp_ssm_get_parameter(kp_aws_client *c, kp_arena *a, const char *name, kp_ssm_parameter *out)
{
    cJSON *req = cJSON_CreateObject(), *answer = NULL;
    cJSON_AddStringToObject(req, "Name", name);
    int err = kp_aws_json_call(c, &SSM, "GetParameter", req, 0, &answer);
    cJSON_Delete(req);
    if (err < 0)
        return err;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(answer, "Parameter");
    const char *value = kp_aws_json_string(p, "Value");
    if (!value) {
        err = kp_error_set(KP_EINVALID, "ssm GetParameter %s: the answer has no Parameter.Value",
                           name);
    } else {
        const cJSON *version = cJSON_GetObjectItemCaseSensitive(p, "Version");
        kp_ssm_parameter r = {
            .name = dup_or_null(a, kp_aws_json_string(p, "Name")),
            .type = dup_or_null(a, kp_aws_json_string(p, "Type")),
            .value = kp_arena_strdup(a, value),
            .version = cJSON_IsNumber(version) ? (int64_t)version->valuedouble : 0,
            .arn = dup_or_null(a, kp_aws_json_string(p, "ARN")),
        };
        *out = r;
    }
    cJSON_Delete(answer);
    return err;
}
