/*
 * AWS interruption notices: EventBridge events delivered through an SQS queue
 * (the --interruption-queue), parsed into provider-neutral notices
 * (cloud/interruption.h).
 *
 * Events are recognised by (version "0", source, detail-type):
 *   aws.ec2    "EC2 Spot Instance Interruption Warning"          -> SPOT
 *   aws.ec2    "EC2 Instance Rebalance Recommendation"           -> REBALANCE
 *   aws.ec2    "EC2 Instance State-change Notification"          -> STOPPING
 *              (stopping, stopped), TERMINATING (shutting-down, terminated),
 *              other states NOOP
 *   aws.ec2    "EC2 Capacity Reservation Instance Interruption Warning"
 *                                                                -> CAPACITY_RESERVATION
 *   aws.health "AWS Health Event" with service EC2 and category scheduledChange
 *                                                                -> SCHEDULED_CHANGE
 *              (IDs from detail.affectedEntities[].entityValue), others NOOP
 * Anything else is NOOP; an empty body is NOOP without error.
 */
#ifndef KP_CLOUD_AWS_INTERRUPTION_H
#define KP_CLOUD_AWS_INTERRUPTION_H

#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/ice_cache.h"
#include "cloud/interruption.h"

/* A spot interruption warning comes this long before the instance goes. */
#define KP_AWS_SPOT_WARNING_NS (INT64_C(120) * KP_NS_PER_SEC)

/* Parse one SQS body. On success *out is filled (strings in `arena`; id,
 * start and deadline from the event). Malformed JSON or a known event whose
 * fields have the wrong shape is KP_EINVALID, and *out is still filled as a
 * NOOP notice with parse_error set, so the caller can acknowledge and drop it. */
int kp_aws_interruption_parse(const char *body, kp_arena *arena, kp_interruption *out);

typedef struct kp_aws_interruption_opts {
    kp_aws_client *sqs;         /* borrowed; used by receive/ack from one thread */
    const char *queue_name;     /* or a queue URL (starts with http) */
    kp_aws_ice_cache *ice;      /* borrowed; spot interruptions mark it. NULL: none */
    kp_aws_reservations *crs;   /* borrowed; reclaimed reservations lose their room. NULL: none */
    int32_t max_messages;       /* 0: 10 */
    int32_t visibility_timeout; /* seconds; 0: 20 */
} kp_aws_interruption_opts;

#define KP_AWS_INTERRUPTION_OPTS_INIT                                                              \
    {                                                                                              \
        0                                                                                          \
    }

/* The SQS-backed source. The queue URL is looked up (GetQueueUrl) on the first
 * receive, and again after the queue went missing. No network here. */
int kp_aws_interruption_source_new(const kp_aws_interruption_opts *opts,
                                   kp_interruption_source **out);

#endif
