#include "cloud/aws/sqs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/aws_json.h"

static const kp_aws_json_service SQS = {"sqs", "AmazonSQS", KP_AWS_JSON_1_0, NULL};

/* A call whose answer's string member `field` is wanted (copied to the arena). */
static int call_for_string(kp_aws_client *c, kp_arena *a, const char *action, cJSON *req,
                           const char *field, const char **out)
{
    cJSON *answer = NULL;
    int err = kp_aws_json_call(c, &SQS, action, req, 0, &answer);
    cJSON_Delete(req);
    if (err < 0)
        return err;
    const char *v = kp_aws_json_string(answer, field);
    if (!v)
        err = kp_error_set(KP_EINVALID, "sqs %s: the answer has no %s", action, field);
    else
        *out = kp_arena_strdup(a, v);
    cJSON_Delete(answer);
    return err;
}

int kp_sqs_get_queue_url(kp_aws_client *c, kp_arena *a, const char *queue_name,
                         const char **url_out)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "QueueName", queue_name);
    return call_for_string(c, a, "GetQueueUrl", req, "QueueUrl", url_out);
}

int kp_sqs_create_queue(kp_aws_client *c, kp_arena *a, const char *queue_name,
                        const char **url_out)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "QueueName", queue_name);
    return call_for_string(c, a, "CreateQueue", req, "QueueUrl", url_out);
}

int kp_sqs_send_message(kp_aws_client *c, kp_arena *a, const char *queue_url, const char *body,
                        const char **message_id_out)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "QueueUrl", queue_url);
    cJSON_AddStringToObject(req, "MessageBody", body);
    return call_for_string(c, a, "SendMessage", req, "MessageId", message_id_out);
}

static int call_no_answer(kp_aws_client *c, const char *action, cJSON *req)
{
    cJSON *answer = NULL;
    int err = kp_aws_json_call(c, &SQS, action, req, 0, &answer);
    cJSON_Delete(req);
    cJSON_Delete(answer);
    return err;
}

int kp_sqs_delete_message(kp_aws_client *c, const char *queue_url, const char *receipt_handle)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "QueueUrl", queue_url);
    cJSON_AddStringToObject(req, "ReceiptHandle", receipt_handle);
    return call_no_answer(c, "DeleteMessage", req);
}

int kp_sqs_delete_queue(kp_aws_client *c, const char *queue_url)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "QueueUrl", queue_url);
    return call_no_answer(c, "DeleteQueue", req);
}

static void add_names(cJSON *req, const char *key, const char *const *names, size_t n)
{
    if (n == 0)
        return;
    cJSON *arr = cJSON_AddArrayToObject(req, key);
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]));
}

static cJSON *receive_request(const kp_sqs_receive_input *in)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "QueueUrl", in->queue_url);
    if (in->max_messages > 0)
        cJSON_AddNumberToObject(req, "MaxNumberOfMessages", in->max_messages);
    if (in->visibility_timeout >= 0)
        cJSON_AddNumberToObject(req, "VisibilityTimeout", in->visibility_timeout);
    cJSON_AddNumberToObject(req, "WaitTimeSeconds", in->wait_time_seconds);
    /* Newer SDKs send MessageSystemAttributeNames; SQS accepts both spellings. */
    add_names(req, "AttributeNames", in->attribute_names, in->n_attribute_names);
    add_names(req, "MessageAttributeNames", in->message_attribute_names,
              in->n_message_attribute_names);
    return req;
}

static kp_sqs_attribute *parse_attributes(kp_arena *a, const cJSON *obj, bool typed, size_t *n)
{
    *n = 0;
    kp_sqs_attribute *out = KP_ARENA_NEW(a, kp_sqs_attribute, (size_t)cJSON_GetArraySize(obj) + 1);
    const cJSON *item;
    cJSON_ArrayForEach(item, obj)
    {
        const char *v = typed ? kp_aws_json_string(item, "StringValue")
                              : (cJSON_IsString(item) ? item->valuestring : NULL);
        if (!v || !item->string)
            continue;
        out[*n].name = kp_arena_strdup(a, item->string);
        out[(*n)++].value = kp_arena_strdup(a, v);
    }
    return out;
}

static int parse_message(kp_arena *a, const cJSON *m, kp_sqs_message *out)
{
    const char *id = kp_aws_json_string(m, "MessageId");
    const char *handle = kp_aws_json_string(m, "ReceiptHandle");
    const char *body = kp_aws_json_string(m, "Body");
    if (!id || !handle || !body)
        return kp_error_set(KP_EINVALID, "sqs ReceiveMessage: a message lacks MessageId, "
                                         "ReceiptHandle or Body");
    out->message_id = kp_arena_strdup(a, id);
    out->receipt_handle = kp_arena_strdup(a, handle);
    out->body = kp_arena_strdup(a, body);
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(m, "Attributes");
    out->attributes = parse_attributes(a, attrs, false, &out->n_attributes);
    out->message_attributes = parse_attributes(
        a, cJSON_GetObjectItemCaseSensitive(m, "MessageAttributes"), true,
        &out->n_message_attributes);
    const char *sent = kp_aws_json_string(attrs, "SentTimestamp");
    char *end = NULL;
    errno = 0;
    long long ms = sent ? strtoll(sent, &end, 10) : 0;
    out->sent_timestamp_ms = sent && !errno && end && !*end ? ms : 0;
    return 0;
}

int kp_sqs_receive_message(kp_aws_client *c, kp_arena *a, const kp_sqs_receive_input *in,
                           kp_sqs_message_list *out)
{
    cJSON *req = receive_request(in), *answer = NULL;
    long timeout = (in->wait_time_seconds + 30) * 1000L;
    int err = kp_aws_json_call(c, &SQS, "ReceiveMessage", req, timeout, &answer);
    cJSON_Delete(req);
    if (err < 0)
        return err;
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(answer, "Messages");
    size_t n = (size_t)cJSON_GetArraySize(msgs);
    kp_sqs_message_list list = {KP_ARENA_NEW(a, kp_sqs_message, n + 1), 0};
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs)
    {
        if ((err = parse_message(a, m, &list.items[list.n])) < 0)
            break;
        list.n++;
    }
    cJSON_Delete(answer);
    if (err == 0)
        *out = list;
    return err;
}
