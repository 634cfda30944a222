/*
 * Work queues with client-go's semantics, for reconcilers fed by informers:
 *
 *   - Keys (strings, e.g. "namespace/name") are de-duplicated: adding a key
 *     that is already waiting does nothing.
 *   - A key being processed (handed out by get, not yet done) is never handed
 *     to a second worker; if it is added meanwhile, it is queued again when
 *     the first worker calls done.
 *   - Delayed adds (add_after) and per-key exponential back-off
 *     (add_rate_limited: base_delay * 2^failures up to max_delay; forget
 *     resets the count after a success).
 *   - Shutdown: adds are ignored from then on, workers drain what is queued
 *     and get returns KP_EGONE; delayed keys are dropped.
 *
 * Thread-safe. The queue copies the keys it is given; keys handed out by get
 * belong to the caller (free() them after kp_workqueue_done).
 */
#ifndef KP_KUBE_WORKQUEUE_H
#define KP_KUBE_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_workqueue kp_workqueue;

typedef struct kp_workqueue_opts {
    int64_t base_delay_ms; /* first back-off of a failing key */
    int64_t max_delay_ms;  /* back-off cap */
} kp_workqueue_opts;

/* client-go's DefaultControllerRateLimiter per-item figures: 5 ms to 1000 s. */
#define KP_WORKQUEUE_OPTS_INIT                                                                     \
    {                                                                                              \
        5, 1000000                                                                                 \
    }

/* `opts` may be NULL (the defaults). */
kp_workqueue *kp_workqueue_new(const kp_workqueue_opts *opts);
/* Accepts NULL, returns NULL. No thread may be using the queue. */
kp_workqueue *kp_workqueue_free(kp_workqueue *q);

void kp_workqueue_add(kp_workqueue *q, const char *key);
/* Add once `delay_ms` has passed (at once when <= 0). A key already waiting
 * keeps the earlier of its two times. */
void kp_workqueue_add_after(kp_workqueue *q, const char *key, int64_t delay_ms);
/* Add after the key's back-off, and lengthen it for next time. */
void kp_workqueue_add_rate_limited(kp_workqueue *q, const char *key);
/* The key succeeded: its back-off starts again from base_delay. */
void kp_workqueue_forget(kp_workqueue *q, const char *key);
/* How many rate-limited adds the key has had since it was last forgotten. */
int kp_workqueue_requeues(kp_workqueue *q, const char *key);

/* Take the next key, waiting up to `timeout_ms` (< 0: without limit).
 * 0 with *key set; KP_ETIMEOUT when none came in time; KP_EGONE when the
 * queue is shut down and drained. Call kp_workqueue_done(key) when finished. */
int kp_workqueue_get(kp_workqueue *q, int64_t timeout_ms, char **key);
void kp_workqueue_done(kp_workqueue *q, const char *key);

/* What a queue tells whoever measures it (client-go's workqueue metrics):
 * `added` when a key enters the queue (a duplicate of a waiting key does
 * not), `taken` when a worker gets a key, with how long it waited since it
 * was added. Called under the queue's lock: quick, and never back into the
 * queue. */
typedef struct kp_workqueue_observer {
    void (*added)(void *ctx);
    void (*taken)(void *ctx, int64_t waited_ns);
    void *ctx;
} kp_workqueue_observer;

/* Set (or with NULL clear) the queue's observer; the struct is copied. */
void kp_workqueue_observe(kp_workqueue *q, const kp_workqueue_observer *obs);

/* Keys ready to be handed out (not the delayed or processing ones). */
size_t kp_workqueue_len(kp_workqueue *q);
void kp_workqueue_shutdown(kp_workqueue *q);
bool kp_workqueue_shutting_down(kp_workqueue *q);

#endif
