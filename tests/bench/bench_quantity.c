/*
 * Parse and print throughput for quantities and durations: every pod's
 * requests go through kp_quantity_parse on each solve, so this is on the hot
 * path. Prints ns per operation for a mix of the strings clusters really use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/duration.h"
#include "api/quantity.h"
#include "base/clock.h"

static const char *const quantities[] = {
    "100m", "250m", "1", "2", "500Mi", "1Gi", "128974848", "1.5Gi", "110", "20Gi", "0.5", "3800m",
};

static const char *const durations[] = {"720h", "30s", "1h30m", "5m", "300ms", "168h"};

enum { ROUNDS = 200000 };

static void report(const char *what, int64_t start, long ops)
{
    int64_t elapsed = kp_clock_system()->monotonic(kp_clock_system()) - start;
    printf("%-22s %8.1f ns/op  (%ld ops)\n", what, (double)elapsed / (double)ops, ops);
}

static uint64_t bench_quantity_parse(void)
{
    const size_t n = sizeof(quantities) / sizeof(quantities[0]);
    int64_t start = kp_clock_system()->monotonic(kp_clock_system());
    uint64_t sum = 0;

    for (long r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < n; i++) {
            kp_quantity q;
            if (kp_quantity_parse(quantities[i], &q) < 0) exit(1);
            sum += (uint64_t)q.milli;
        }
    }
    report("quantity parse", start, (long)ROUNDS * (long)n);
    return sum;
}

static size_t bench_quantity_format(void)
{
    const size_t n = sizeof(quantities) / sizeof(quantities[0]);
    kp_quantity parsed[sizeof(quantities) / sizeof(quantities[0])];
    char buf[KP_QUANTITY_STRLEN];
    size_t len = 0;
    int64_t start;

    for (size_t i = 0; i < n; i++)
        if (kp_quantity_parse(quantities[i], &parsed[i]) < 0) exit(1);
    start = kp_clock_system()->monotonic(kp_clock_system());
    for (long r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < n; i++)
            len += strlen(kp_quantity_format(parsed[i], buf, sizeof(buf)));
    report("quantity format", start, (long)ROUNDS * (long)n);
    return len;
}

static uint64_t bench_duration_parse(void)
{
    const size_t n = sizeof(durations) / sizeof(durations[0]);
    int64_t start = kp_clock_system()->monotonic(kp_clock_system());
    uint64_t sum = 0;

    for (long r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < n; i++) {
            kp_duration d;
            if (kp_duration_parse(durations[i], &d) < 0) exit(1);
            sum += (uint64_t)d.ns;
        }
    }
    report("duration parse", start, (long)ROUNDS * (long)n);
    return sum;
}

int main(void)
{
    uint64_t a = bench_quantity_parse();
    size_t b = bench_quantity_format();
    uint64_t c = bench_duration_parse();

    /* Printed so the loops cannot be optimised away. */
    printf("checksum %llu %zu %llu\n", (unsigned long long)a, b, (unsigned long long)c);
    return 0;
}
