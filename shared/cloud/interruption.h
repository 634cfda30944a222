/*
 * Interruption notices: the cloud warning that machines are about to go away
 * (a spot reclaim, scheduled maintenance, a stop or termination someone else
 * started), so the controller can cordon, drain and replace the affected
 * nodes ahead of the cloud. Provider-neutral: a source is a table of
 * functions (AWS: an SQS queue fed by EventBridge); the controller receives
 * notices, finds the NodeClaims whose provider IDs end in the notice's
 * instance IDs, acts, and then acknowledges the notice so it is not delivered
 * again. A notice that could not be handled is not acknowledged and comes back.
 *
 * What the controller does per kind (Karpenter's behaviour):
 *   SPOT, SCHEDULED_CHANGE, STOPPING, TERMINATING, CAPACITY_RESERVATION
 *                  delete the NodeClaim (cordon and drain), unless already deleting
 *   REBALANCE      an event on the node only
 *   NOOP           nothing (acknowledge it)
 * and, for each affected NodeClaim, passes its instance type, zone, capacity
 * type and reservation ID to observe(), so the provider can stop offering
 * what was taken away (AWS: a spot interruption makes that offering
 * unavailable for 3 minutes).
 */
#ifndef KP_CLOUD_INTERRUPTION_H
#define KP_CLOUD_INTERRUPTION_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"

enum kp_interruption_kind {
    KP_INTERRUPT_SPOT = 0,             /* "spot_interrupted" */
    KP_INTERRUPT_SCHEDULED_CHANGE,     /* "scheduled_change" */
    KP_INTERRUPT_STOPPING,             /* "instance_stopped" (stopping or stopped) */
    KP_INTERRUPT_TERMINATING,          /* "instance_terminated" (shutting down or gone) */
    KP_INTERRUPT_REBALANCE,            /* "rebalance_recommendation" */
    KP_INTERRUPT_CAPACITY_RESERVATION, /* "capacity_reservation_interrupted" */
    KP_INTERRUPT_NOOP,                 /* "no_op": unknown, ignored or empty */
};

/* Karpenter's name of a kind (its metrics' message_type label). */
static inline const char *kp_interruption_kind_name(enum kp_interruption_kind kind)
{
    switch (kind) {
    case KP_INTERRUPT_SPOT:
        return "spot_interrupted";
    case KP_INTERRUPT_SCHEDULED_CHANGE:
        return "scheduled_change";
    case KP_INTERRUPT_STOPPING:
        return "instance_stopped";
    case KP_INTERRUPT_TERMINATING:
        return "instance_terminated";
    case KP_INTERRUPT_REBALANCE:
        return "rebalance_recommendation";
    case KP_INTERRUPT_CAPACITY_RESERVATION:
        return "capacity_reservation_interrupted";
    case KP_INTERRUPT_NOOP:
        break;
    }
    return "no_op";
}

/* Whether the controller deletes (cordons and drains) the affected NodeClaims. */
static inline bool kp_interruption_kind_deletes(enum kp_interruption_kind kind)
{
    return kind != KP_INTERRUPT_REBALANCE && kind != KP_INTERRUPT_NOOP;
}

typedef struct kp_interruption {
    enum kp_interruption_kind kind;
    const char **instance_ids; /* provider-ID suffixes ("i-0abc"); may be empty */
    uint32_t n_ids;
    int64_t start_ns;        /* when the cloud sent it (latency metric); 0 unknown */
    int64_t deadline_ns;     /* when the machines go away, when the notice says; 0 unknown */
    const char *id;          /* the notice's own ID, for logs */
    const char *handle;      /* what ack() needs (SQS: the receipt handle) */
    const char *kind_name;   /* kp_interruption_kind_name(kind) */
    const char *parse_error; /* non-NULL: the body did not parse (kind NOOP); ack it anyway */
} kp_interruption;

typedef struct kp_interruption_source kp_interruption_source;

/* receive() and ack() may block on the network; call them from one thread
 * (the one receiving), not concurrently. observe() is thread-safe. */
typedef struct kp_interruption_source_ops {
    /* Wait up to `wait_seconds` for notices; *n 0 when none came. Notices and
     * their strings live in `arena`. A notice whose body does not parse still
     * comes back (kind NOOP, parse_error set) so it can be acknowledged. */
    int (*receive)(kp_interruption_source *src, kp_arena *arena, kp_interruption **out, uint32_t *n,
                   int wait_seconds);
    /* Remove a handled notice from the source. */
    int (*ack)(kp_interruption_source *src, const kp_interruption *m);
    /* Tell the provider what one affected NodeClaim was (labels of the claim;
     * any may be NULL). Optional: NULL when the provider learns nothing. */
    void (*observe)(kp_interruption_source *src, const kp_interruption *m,
                    const char *instance_type, const char *zone, const char *capacity_type,
                    const char *reservation_id);
    /* The queue or endpoint, for logs. */
    const char *(*name)(const kp_interruption_source *src);
    void (*free)(kp_interruption_source *src);
} kp_interruption_source_ops;

/* Implementations embed this as their first member. */
struct kp_interruption_source {
    const kp_interruption_source_ops *ops;
};

static inline kp_interruption_source *kp_interruption_source_free(kp_interruption_source *src)
{
    if (src) src->ops->free(src);
    return NULL;
}

#endif
