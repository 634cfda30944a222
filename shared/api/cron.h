/*
 * Cron schedules for disruption budgets, as Karpenter reads them
 * (robfig/cron's standard parser, in UTC): five fields — minute, hour,
 * day of month, month, day of week — with lists, ranges, steps, "*" and
 * "?", month and weekday names, and the macros @yearly, @annually,
 * @monthly, @weekly, @daily, @midnight, @hourly.
 */
#ifndef KP_API_CRON_H
#define KP_API_CRON_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_cron {
    uint64_t minutes;  /* bit i: minute i (0-59) */
    uint32_t hours;    /* 0-23 */
    uint32_t days;     /* bits 1-31 */
    uint16_t months;   /* bits 1-12 */
    uint8_t weekdays;  /* bits 0-6, Sunday = 0 */
    bool any_day;      /* day of month was "*" or "?" */
    bool any_weekday;  /* day of week was "*" or "?" */
} kp_cron;

/* KP_EINVALID with the field and offending text named on error. */
int kp_cron_parse(const char *expr, kp_cron *out);

/* The first time strictly after `after_ns` (ns since the epoch, UTC) at which
 * the schedule fires, at a whole minute; -1 if none within five years. */
int64_t kp_cron_next(const kp_cron *cron, int64_t after_ns);

#endif
