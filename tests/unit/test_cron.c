#include <criterion/criterion.h>
#include <string.h>

#include "api/cron.h"
#include "base/clock.h"
#include "base/error.h"

static int64_t at(const char *rfc3339)
{
    int64_t ns;
    cr_assert_eq(kp_time_parse_rfc3339(rfc3339, &ns), 0, "%s", kp_error_last());
    return ns;
}

static void expect_next(const char *expr, const char *after, const char *want)
{
    kp_cron c;
    char got[32];
    cr_assert_eq(kp_cron_parse(expr, &c), 0, "%s: %s", expr, kp_error_last());
    int64_t next = kp_cron_next(&c, at(after));
    cr_assert_geq(next, 0, "%s after %s: none", expr, after);
    kp_time_format_rfc3339(next, got, sizeof(got));
    cr_assert_str_eq(got, want, "%s after %s", expr, after);
}

Test(cron, next_firing)
{
    expect_next("0 0 * * *", "2026-11-21T10:30:00Z", "2026-11-22T00:00:00Z");
    expect_next("@daily", "2026-11-21T23:59:59Z", "2026-11-22T00:00:00Z");
    expect_next("@hourly", "2026-11-21T10:00:00Z", "2026-11-21T11:00:00Z");
    expect_next("*/15 * * * *", "2026-11-21T10:07:00Z", "2026-11-21T10:15:00Z");
    expect_next("30 9 * * MON-FRI", "2026-11-21T10:00:00Z", "2026-11-23T09:30:00Z"); /* Sat -> Mon */
    expect_next("0 0 1 * *", "2026-11-21T00:00:00Z", "2026-12-01T00:00:00Z");
    expect_next("@yearly", "2026-11-21T00:00:00Z", "2027-01-01T00:00:00Z");
    expect_next("0 12 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T12:00:00Z");
    expect_next("0 0 1,15 * *", "2026-11-02T00:00:00Z", "2026-11-15T00:00:00Z");
    expect_next("5-10/5 * * * *", "2026-11-21T10:06:00Z", "2026-11-21T10:10:00Z");
    expect_next("0 0 * jan,jul *", "2026-11-21T00:00:00Z", "2027-01-01T00:00:00Z");
    /* Both day fields restricted: either matches (the 13th, or any Friday). */
    expect_next("0 0 13 * 5", "2026-11-21T00:00:00Z", "2026-11-27T00:00:00Z");
}

Test(cron, malformed)
{
    static const char *const bad[] = {"",          "* * * *",     "* * * * * *", "60 * * * *", "* 24 * * *",
                                      "* * 0 * *", "* * * 13 *",  "* * * * 7",   "a * * * *",  "1-0 * * * *",
                                      "*/0 * * * *", "1, * * * *", "@every 5m",  "@never"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kp_cron c;
        cr_assert_eq(kp_cron_parse(bad[i], &c), KP_EINVALID, "\"%s\" should be refused", bad[i]);
        cr_assert(strstr(kp_error_last(), "cron"), "%s", kp_error_last());
    }
}

Test(cron, error_names_the_field)
{
    kp_cron c;
    cr_assert_eq(kp_cron_parse("0 25 * * *", &c), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "hour"), "%s", kp_error_last());
}
