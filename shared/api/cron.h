/*
 * Cron schedules for NodePool disruption budgets, read exactly as Karpenter
 * reads them (robfig/cron v3's ParseStandard): five fields, minute hour
 * day-of-month month day-of-week, each a list of ranges with optional steps
 * ("*", "?", "5", "1-5", "*\/15", "3/10", "mon-fri", "1,15"), names for months
 * and weekdays (JAN..DEC, SUN..SAT, any case), and the descriptors @yearly,
 * @annually, @monthly, @weekly, @daily, @midnight, @hourly and "@every <d>".
 *
 * Differences from other crons that robfig (and so Karpenter) has: weekdays
 * are 0..6 (7 is an error), "*" followed by anything after a '-' is still
 * "*", "N/step" runs from N to the field's maximum, and when either day field
 * is unrestricted ("*" or "?") a day must match both fields, otherwise either.
 *
 * Schedules are evaluated in UTC, as Karpenter evaluates budgets. A "TZ=" or
 * "CRON_TZ=" prefix is parsed and its name kept in `tz`; evaluating it is up
 * to the caller (kp_cron_next ignores it).
 */
#ifndef KP_API_CRON_H
#define KP_API_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { KP_CRON_TZ_MAX = 64 };

typedef struct kp_cron {
    uint64_t minute; /* bit n: minute n (0..59) */
    uint32_t hour;   /* bits 0..23 */
    uint32_t dom;    /* bits 1..31 */
    uint16_t month;  /* bits 1..12 */
    uint8_t dow;     /* bits 0..6, Sunday = 0 */
    bool dom_any;    /* day-of-month was "*" or "?" without a step > 1 */
    bool dow_any;
    int64_t every_s;         /* "@every": the period in whole seconds (>= 1); 0 otherwise */
    char tz[KP_CRON_TZ_MAX]; /* the TZ= / CRON_TZ= name, or "" */
} kp_cron;

/* Parse `spec`. On error returns KP_EINVALID with robfig's reason and the
 * 0-based byte position of the offending field or character, e.g.
 *   cron "0 25 * * *": end of range (25) above maximum (23): 25 at position 2
 *   cron "* * * *": expected exactly 5 fields, found 4 at position 7
 * `out` is set only on success. */
int kp_cron_parse(const char *spec, kp_cron *out);

/* The first time strictly after `after` (Unix seconds, UTC) the schedule
 * fires, searched up to five years ahead as robfig does. False when there is
 * none in that window (e.g. "0 0 30 2 *"), which robfig reports as the zero
 * time. "@every" schedules fire `every_s` after `after`, as robfig's
 * ConstantDelaySchedule does. */
bool kp_cron_next(const kp_cron *cron, int64_t after, int64_t *next);

#endif
