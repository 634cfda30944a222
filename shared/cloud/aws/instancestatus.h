/*
 * EC2 instance health, as Karpenter's interruption.instancestatus controller
 * reads it: DescribeInstanceStatus three times (instance status impaired,
 * system status impaired, a scheduled event of instance-reboot,
 * system-reboot, system-maintenance, instance-retirement or instance-stop),
 * each instance once. A failed instance or system check counts once it has
 * failed for KP_AWS_UNHEALTHY_NS; a scheduled event counts at once.
 *
 * The health source wraps the provider's interruption source (the SQS queue,
 * or none) and adds a notice per unhealthy instance and category every
 * KP_AWS_HEALTH_PERIOD_NS, kind_name "instance_status", "system_status" or
 * "event_status" (Karpenter's message kinds) and kind SCHEDULED_CHANGE, so
 * the interruption controller replaces the node (cordon, drain, delete). Health
 * notices need no acknowledgement. It owns the inner source and the EC2 client.
 */
#ifndef KP_CLOUD_AWS_INSTANCESTATUS_H
#define KP_CLOUD_AWS_INSTANCESTATUS_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"
#include "cloud/interruption.h"

#define KP_AWS_UNHEALTHY_NS     (INT64_C(120) * KP_NS_PER_SEC)
#define KP_AWS_HEALTH_PERIOD_NS (INT64_C(60) * KP_NS_PER_SEC)

typedef struct kp_aws_unhealthy {
    const char *instance_id;
    const char *category; /* "instance_status", "system_status", "event_status" */
    int64_t since_ns;     /* when it went wrong (events: now) */
} kp_aws_unhealthy;

/* The unhealthy instances now (strings in `arena`). EC2's errors are
 * returned (UnauthorizedOperation: KP_EFORBIDDEN). */
int kp_aws_instance_health(kp_aws_client *ec2, kp_arena *arena, int64_t now_ns,
                           kp_aws_unhealthy **out, size_t *n);

/* `inner` (may be NULL) and `ec2` are taken over, also on failure. */
int kp_aws_health_source_new(kp_interruption_source *inner, kp_aws_client *ec2,
                             const kp_clock *clock, kp_interruption_source **out);

#endif
