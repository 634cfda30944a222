/*
 * Client-side rate limit: a token bucket of `burst` tokens refilled at `qps`
 * per second, as client-go's default limiter (QPS 5, burst 10 unless set).
 * Reservations are made at a given time and may drive the bucket below zero,
 * so concurrent callers queue behind each other instead of all waking at once
 * (golang.org/x/time/rate's Reserve). Thread-safe. The caller sleeps; the
 * limiter only does the arithmetic, which is what makes it testable.
 */
#ifndef KP_KUBE_RATELIMIT_H
#define KP_KUBE_RATELIMIT_H

#include <pthread.h>
#include <stdint.h>

typedef struct kp_ratelimit {
    pthread_mutex_t lock;
    double qps;    /* <= 0: no limit */
    double burst;  /* bucket size, at least 1 */
    double tokens; /* may go negative: reservations owed */
    int64_t last_ns;
} kp_ratelimit;

/* A full bucket at `now_ns`. */
void kp_ratelimit_init(kp_ratelimit *rl, double qps, int burst, int64_t now_ns);
void kp_ratelimit_destroy(kp_ratelimit *rl);
/* Take one token at `now_ns` (a monotonic reading); returns the nanoseconds
 * the caller must wait before going ahead, 0 when a token was in the bucket. */
int64_t kp_ratelimit_reserve(kp_ratelimit *rl, int64_t now_ns);

#endif
