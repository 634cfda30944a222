/*
 * One call of an AWS JSON-protocol API (SQS: JSON 1.0; SSM and Pricing:
 * JSON 1.1): the request object is serialised, sent through the request layer
 * (signing, retries, AWS errors) and the answer parsed with cJSON.
 */
#ifndef KP_CLOUD_AWS_JSON_H
#define KP_CLOUD_AWS_JSON_H

#include <cjson/cJSON.h>

#include "cloud/aws/aws_http.h"

typedef struct kp_aws_json_service {
    const char *service;       /* signing name: "sqs" */
    const char *target_prefix; /* "AmazonSQS" */
    enum kp_aws_protocol protocol;
    const char *region;        /* NULL: the client's */
} kp_aws_json_service;

/* Send `request` (not consumed) as `action`; on success *out is the parsed
 * answer (cJSON_Delete it; an empty body reads as {}). `timeout_ms` 0: the
 * client's. */
int kp_aws_json_call(kp_aws_client *client, const kp_aws_json_service *svc, const char *action,
                     const cJSON *request, long timeout_ms, cJSON **out);

/* The string member `name` of `obj`, or NULL. */
const char *kp_aws_json_string(const cJSON *obj, const char *name);

#endif
