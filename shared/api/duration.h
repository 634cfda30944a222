/*
 * Durations in Go's syntax ("720h", "1h30m", "1.5h", "300ms", "-2m", "0") plus
 * Karpenter's "Never" (NillableDuration), as used by expireAfter,
 * consolidateAfter, terminationGracePeriod and budget durations.
 */
#ifndef KP_API_DURATION_H
#define KP_API_DURATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_duration {
    int64_t ns;
    bool never; /* "Never": ns is meaningless */
} kp_duration;

enum { KP_DURATION_STRLEN = 40 };

/* Go's time.ParseDuration: units ns, us (µs, μs), ms, s, m, h; decimal
 * fractions; an optional sign; "0" alone needs no unit. KP_EINVALID names the
 * offending character's position after Go's own message ("time: invalid
 * duration \"1.2.3s\": unexpected character '.' at position 3", "time: unknown
 * unit \"d\" in duration \"1d\" at position 1"); KP_EOVERFLOW beyond int64
 * nanoseconds. */
int kp_duration_parse(const char *text, kp_duration *out);

/* As above, and also accepts "Never" (exact case, as Karpenter does). */
int kp_duration_parse_nillable(const char *text, kp_duration *out);

/* Go's Duration.String(): "1h30m0s", "300ms", "1.5µs", "0s", "-2m0s";
 * "Never" when never. Returns buf. */
char *kp_duration_format(kp_duration d, char *buf, size_t size);

#endif
