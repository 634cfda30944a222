/*
 * Prometheus' process collector (shared/metrics/process.c): the /proc parsers
 * on odd and malformed text, a live reading of this process, and the
 * families a scrape fills.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "metrics/process.h"

/* Fields 3.. of /proc/<pid>/stat after "pid (comm) ": utime 14 = 300 ticks,
 * stime 15 = 100, starttime 22 = 5000, vsize 23 = 8192000, rss 24 = 250. */
#define AFTER "S 1 1 1 0 -1 4194304 100 0 0 0 300 100 0 0 20 0 4 0 5000 8192000 250 18446744073709551615 1 1 0 0"

Test(metrics_process, stat_fields_with_an_awkward_command_name)
{
    kp_process_stats st;
    memset(&st, 0, sizeof(st));
    cr_assert_eq(kp_metrics_process_parse_stat("42 (a) b (c)) " AFTER, 1000, 100, 4096, &st), 0, "%s",
                 kp_error_last());
    cr_expect_float_eq(st.cpu_seconds, 4.0, 1e-9);
    cr_expect_float_eq(st.start_time_seconds, 1050.0, 1e-9);
    cr_expect_float_eq(st.virtual_bytes, 8192000.0, 1e-9);
    cr_expect_float_eq(st.resident_bytes, 250.0 * 4096, 1e-9);
}

Test(metrics_process, malformed_stat_is_an_error)
{
    static const char *const bad[] = {
        "", "42 no parenthesis S 1 2 3", "42 (cmd)", "42 (cmd)S 1", "42 (cmd) S 1 1 1 0 -1 4194304 100 0 0 0 300",
        "42 (cmd) S 1 1 1 0 -1 4194304 100 0 0 0 x 100 0 0 20 0 4 0 5000 8192000 250",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kp_process_stats st;
        memset(&st, 0, sizeof(st));
        cr_expect_lt(kp_metrics_process_parse_stat(bad[i], 0, 100, 4096, &st), 0, "accepted \"%s\"", bad[i]);
    }
    kp_process_stats st;
    cr_expect_lt(kp_metrics_process_parse_stat(NULL, 0, 100, 4096, &st), 0);
}

Test(metrics_process, netdev_sums_every_interface)
{
    const char *text = "Inter-|   Receive                                                |  Transmit\n"
                       " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets\n"
                       "    lo:    1000      10    0    0    0     0          0         0     1000      10    0 0 0 0 0 0\n"
                       "  eth0: 2500 20 0 0 0 0 0 0 700 7 0 0 0 0 0 0\n"
                       "  bad: 1 2 3\n"
                       "no colon here\n";
    kp_process_stats st;
    memset(&st, 0, sizeof(st));
    cr_assert_eq(kp_metrics_process_parse_netdev(text, &st), 0);
    cr_expect_float_eq(st.rx_bytes, 3500.0, 1e-9);
    cr_expect_float_eq(st.tx_bytes, 1700.0, 1e-9);
    cr_assert_eq(kp_metrics_process_parse_netdev("", &st), 0);
    cr_expect_float_eq(st.rx_bytes, 0.0, 1e-9);
}

Test(metrics_process, this_process_read_live)
{
    kp_process_stats st;
    cr_assert_eq(kp_metrics_process_read(&st), 0, "%s", kp_error_last());
    cr_expect_gt(st.resident_bytes, 0);
    cr_expect_geq(st.virtual_bytes, st.resident_bytes);
    cr_expect_gt(st.open_fds, 2, "stdin, stdout, stderr at least");
    cr_expect_geq(st.max_fds, st.open_fds);
    double now = (double)time(NULL);
    cr_expect(st.start_time_seconds > now - 3600 && st.start_time_seconds <= now + 1, "started %f, now %f",
              st.start_time_seconds, now);
}

Test(metrics_process, a_scrape_fills_the_families)
{
    kp_metrics *r = kp_metrics_new();
    kp_metric *slots[9];
    cr_assert_eq(kp_metrics_process_init(slots, r), 0);
    kp_buf out = KP_BUF_INIT(1 << 20);
    cr_assert_eq(kp_metrics_write(r, &out), 0);
    const char *text = kp_buf_cstr(&out);
    cr_expect(strstr(text, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total "), "%s", text);
    cr_expect(strstr(text, "\nprocess_resident_memory_bytes "), "%s", text);
    cr_expect(strstr(text, "\nprocess_start_time_seconds "), "%s", text);
    kp_buf_free(&out);
    kp_metrics_free(r);
}
