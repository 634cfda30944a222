/*
 * SQS over its JSON 1.0 protocol (X-Amz-Target: AmazonSQS.<Action>): what the
 * interruption controller needs (GetQueueUrl, long-polling ReceiveMessage,
 * DeleteMessage) plus SendMessage, CreateQueue and DeleteQueue for tests.
 * Results live in the caller's arena.
 */
#ifndef KP_CLOUD_AWS_SQS_H
#define KP_CLOUD_AWS_SQS_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "cloud/aws/aws_http.h"

typedef struct kp_sqs_attribute {
    const char *name;
    const char *value; /* message attributes: StringValue (binary ones are skipped) */
} kp_sqs_attribute;

typedef struct kp_sqs_message {
    const char *message_id;
    const char *receipt_handle;
    const char *body;
    int64_t sent_timestamp_ms; /* Attributes.SentTimestamp; 0 when not asked for */
    kp_sqs_attribute *attributes;
    size_t n_attributes;
    kp_sqs_attribute *message_attributes;
    size_t n_message_attributes;
} kp_sqs_message;

typedef struct kp_sqs_message_list {
    kp_sqs_message *items;
    size_t n;
} kp_sqs_message_list;

typedef struct kp_sqs_receive_input {
    const char *queue_url;
    int32_t max_messages;       /* 1..10; 0: SQS's default (1) */
    int32_t visibility_timeout; /* seconds; < 0: the queue's */
    int32_t wait_time_seconds;  /* long polling, 0..20 */
    const char *const *attribute_names; /* "SentTimestamp", "All" */
    size_t n_attribute_names;
    const char *const *message_attribute_names; /* "All" */
    size_t n_message_attribute_names;
} kp_sqs_receive_input;

int kp_sqs_get_queue_url(kp_aws_client *client, kp_arena *arena, const char *queue_name,
                         const char **url_out);
/* Waits up to wait_time_seconds; the HTTP timeout is stretched to cover it. */
int kp_sqs_receive_message(kp_aws_client *client, kp_arena *arena,
                           const kp_sqs_receive_input *in, kp_sqs_message_list *out);
int kp_sqs_delete_message(kp_aws_client *client, const char *queue_url,
                          const char *receipt_handle);
int kp_sqs_send_message(kp_aws_client *client, kp_arena *arena, const char *queue_url,
                        const char *body, const char **message_id_out);
int kp_sqs_create_queue(kp_aws_client *client, kp_arena *arena, const char *queue_name,
                        const char **url_out);
int kp_sqs_delete_queue(kp_aws_client *client, const char *queue_url);

#endif
