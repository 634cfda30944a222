#include "base/clock.h"
#include "base/error.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

static int64_t system_now(const kp_clock *clock)
{
    (void)clock;
    return read_clock(CLOCK_REALTIME);
}

static int64_t system_monotonic(const kp_clock *clock)
{
    (void)clock;
    return read_clock(CLOCK_MONOTONIC);
}

const kp_clock *kp_clock_system(void)
{
    static const kp_clock system_clock = {system_now, system_monotonic};
    return &system_clock;
}

static int64_t fake_now(const kp_clock *clock)
{
    return ((const kp_fake_clock *)clock)->ns;
}

void kp_fake_clock_init(kp_fake_clock *clock, int64_t ns)
{
    clock->base.now = fake_now;
    clock->base.monotonic = fake_now;
    clock->ns = ns;
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    *out = v;
    return 0;
}

static int expect(const char **p, char c)
{
    if (**p != c && !(c == 'T' && (**p == 't' || **p == ' ')))
        return -1;
    (*p)++;
    return 0;
}

int kp_time_parse_rfc3339(const char *text, int64_t *out_ns)
{
    const char *p = text;
    int year, mon, day, hour, min, sec, oh = 0, om = 0;
    int64_t frac = 0, scale = KP_NS_PER_SEC;
    if (digits(&p, 4, &year) || expect(&p, '-') || digits(&p, 2, &mon) || expect(&p, '-') ||
        digits(&p, 2, &day) || expect(&p, 'T') || digits(&p, 2, &hour) || expect(&p, ':') ||
        digits(&p, 2, &min) || expect(&p, ':') || digits(&p, 2, &sec))
        goto bad;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            goto bad;
        while (isdigit((unsigned char)*p)) {
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
            p++;
        }
    }
    int sign = 0;
    if (*p == 'Z' || *p == 'z')
        p++;
    else if (*p == '+' || *p == '-') {
        sign = *p == '+' ? 1 : -1;
        p++;
        if (digits(&p, 2, &oh) || expect(&p, ':') || digits(&p, 2, &om))
            goto bad;
    } else
        goto bad;
    if (*p || mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
        goto bad;
    struct tm tm = {.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day,
                    .tm_hour = hour, .tm_min = min, .tm_sec = sec};
    int64_t secs = (int64_t)timegm(&tm) - sign * (oh * 3600 + om * 60);
    *out_ns = secs * KP_NS_PER_SEC + frac;
    return 0;
bad:
    return kp_error_set(KP_EINVALID, "invalid RFC 3339 time %s (want e.g. 2026-01-02T15:04:05Z)",
                        text);
}

void kp_time_format_rfc3339(int64_t ns, char *buf, unsigned long size)
{
    time_t secs = (time_t)(ns / KP_NS_PER_SEC);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
