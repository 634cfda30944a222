/*
 * The clock as an interface, so tests and `simulate --now` can fix time.
 * Times are nanoseconds: wall time since the Unix epoch, monotonic since boot.
 */
#ifndef KP_BASE_CLOCK_H
#define KP_BASE_CLOCK_H

#include <stdint.h>

typedef struct kp_clock kp_clock;
struct kp_clock {
    int64_t (*now)(const kp_clock *clock);       /* wall clock, ns since epoch */
    int64_t (*monotonic)(const kp_clock *clock); /* ns, for intervals */
};

/* The real clocks (CLOCK_REALTIME / CLOCK_MONOTONIC). */
const kp_clock *kp_clock_system(void);

/* A clock that stands still until moved; both readings are `ns`. */
typedef struct kp_fake_clock {
    kp_clock base;
    int64_t ns;
} kp_fake_clock;

void kp_fake_clock_init(kp_fake_clock *clock, int64_t ns);

#define KP_NS_PER_SEC INT64_C(1000000000)
#define KP_NS_PER_MS INT64_C(1000000)

/* Parse an RFC 3339 timestamp ("2026-01-02T03:04:05Z", fractional seconds and
 * numeric offsets allowed) into ns since epoch. */
int kp_time_parse_rfc3339(const char *text, int64_t *out_ns);
/* Format as "2026-01-02T03:04:05Z" (seconds precision, UTC) into buf (>= 21 bytes). */
void kp_time_format_rfc3339(int64_t ns, char *buf, unsigned long size);

#endif
