/* Cron parsing and next-firing computation (see cron.h). */
#include "api/cron.h"
#include "base/error.h"
#include "base/clock.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct field_spec {
    const char *name;
    int min, max;
    const char *const *names; /* optional, index = value - min */
} field_spec;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const field_spec fields[5] = {
    {"minute", 0, 59, NULL},      {"hour", 0, 23, NULL}, {"day of month", 1, 31, NULL},
    {"month", 1, 12, month_names}, {"day of week", 0, 6, day_names},
};

static int parse_value(const field_spec *f, const char *s, size_t n, int *out)
{
    char buf[16];
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (isdigit((unsigned char)buf[0])) {
        char *end;
        long v = strtol(buf, &end, 10);
        if (*end || v < f->min || v > f->max)
            return -1;
        *out = (int)v;
        return 0;
    }
    for (int i = 0; f->names && i <= f->max - f->min; i++) {
        if (strcasecmp(buf, f->names[i]) == 0) {
            *out = i + f->min;
            return 0;
        }
    }
    return -1;
}

/* One comma-separated part: "*", "a", "a-b", each optionally "/step". */
static int parse_part(const field_spec *f, const char *s, size_t n, uint64_t *bits)
{
    const char *slash = memchr(s, '/', n);
    size_t range_len = slash ? (size_t)(slash - s) : n;
    int lo = f->min, hi = f->max, step = 1;
    if (slash) {
        char *end;
        char buf[16];
        size_t sl = n - range_len - 1;
        if (sl == 0 || sl >= sizeof(buf))
            return -1;
        memcpy(buf, slash + 1, sl);
        buf[sl] = '\0';
        long v = strtol(buf, &end, 10);
        if (*end || v <= 0 || v > f->max + 1)
            return -1;
        step = (int)v;
    }
    if (!(range_len == 1 && (s[0] == '*' || s[0] == '?'))) {
        const char *dash = memchr(s, '-', range_len);
        if (parse_value(f, s, dash ? (size_t)(dash - s) : range_len, &lo) < 0)
            return -1;
        hi = lo;
        if (dash && parse_value(f, dash + 1, range_len - (size_t)(dash - s) - 1, &hi) < 0)
            return -1;
        if (slash && !dash)
            hi = f->max; /* "a/step" means a through the end */
        if (hi < lo)
            return -1;
    }
    for (int v = lo; v <= hi; v += step)
        *bits |= UINT64_C(1) << v;
    return 0;
}

static int parse_field(int i, const char *s, size_t n, uint64_t *bits, bool *any)
{
    *any = n == 1 && (s[0] == '*' || s[0] == '?');
    const char *p = s, *end = s + n;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
        if (parse_part(&fields[i], p, len, bits) < 0)
            return kp_error_set(KP_EINVALID, "cron: invalid %s field \"%.*s\"", fields[i].name, (int)n, s);
        p += len + (comma ? 1 : 0);
        if (comma && p == end)
            return kp_error_set(KP_EINVALID, "cron: empty item in %s field", fields[i].name);
    }
    return 0;
}

static const struct {
    const char *name, *expr;
} macros[] = {{"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
              {"@weekly", "0 0 * * 0"},  {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
              {"@hourly", "0 * * * *"}};

int kp_cron_parse(const char *expr, kp_cron *out)
{
    for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
        if (strcmp(expr, macros[i].name) == 0)
            return kp_cron_parse(macros[i].expr, out);
    if (expr[0] == '@')
        return kp_error_set(KP_EINVALID, "cron: unknown descriptor \"%s\"", expr);
    uint64_t bits[5] = {0};
    bool any[5] = {false};
    const char *p = expr;
    int n = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (n == 5)
            return kp_error_set(KP_EINVALID, "cron: \"%s\" has more than 5 fields", expr);
        int err = parse_field(n, start, (size_t)(p - start), &bits[n], &any[n]);
        if (err < 0)
            return err;
        n++;
    }
    if (n != 5)
        return kp_error_set(KP_EINVALID, "cron: \"%s\" has %d fields, want 5 (minute hour day month weekday)", expr, n);
    kp_cron c = {bits[0], (uint32_t)bits[1], (uint32_t)bits[2], (uint16_t)bits[3], (uint8_t)bits[4], any[2], any[4]};
    *out = c;
    return 0;
}

/* Day matches as cron defines it: when both day fields are restricted, either may match. */
static bool day_matches(const kp_cron *c, const struct tm *t)
{
    bool dom = (c->days >> t->tm_mday) & 1, dow = (c->weekdays >> t->tm_wday) & 1;
    if (c->any_day || c->any_weekday)
        return dom && dow;
    return dom || dow;
}

int64_t kp_cron_next(const kp_cron *c, int64_t after_ns)
{
    time_t t = (time_t)(after_ns / KP_NS_PER_SEC);
    t = t - (t % 60) + 60; /* the next whole minute */
    time_t limit = t + (time_t)5 * 366 * 24 * 3600;
    while (t < limit) {
        struct tm tm;
        gmtime_r(&t, &tm);
        if (!((c->months >> (tm.tm_mon + 1)) & 1)) {
            tm.tm_mon++, tm.tm_mday = 1, tm.tm_hour = 0, tm.tm_min = 0, tm.tm_sec = 0;
            t = timegm(&tm);
        } else if (!day_matches(c, &tm)) {
            tm.tm_mday++, tm.tm_hour = 0, tm.tm_min = 0, tm.tm_sec = 0;
            t = timegm(&tm);
        } else if (!((c->hours >> tm.tm_hour) & 1)) {
            tm.tm_hour++, tm.tm_min = 0, tm.tm_sec = 0;
            t = timegm(&tm);
        } else if (!((c->minutes >> tm.tm_min) & 1)) {
            t += 60;
        } else {
            return (int64_t)t * KP_NS_PER_SEC;
        }
    }
    return -1;
}
