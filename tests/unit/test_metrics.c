/*
 * metrics: registration rules, counters, gauges, histograms, the Prometheus
 * text exposition byte for byte, value formatting, the series cap, and
 * updates from several threads.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "metrics/metrics.h"

static char *expose(kp_metrics *m)
{
    kp_buf out = KP_BUF_INIT(1 << 20);
    cr_assert_eq(kp_metrics_write(m, &out), 0, "%s", kp_error_last());
    return kp_buf_detach(&out);
}

Test(metrics, counter_and_gauge_exposition)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *c, *g;
    const char *labels[] = {"kind", "result"};
    cr_assert_eq(kp_metrics_counter(&c, m, "requests_total", "Requests seen.", labels, 2), 0);
    cr_assert_eq(kp_metrics_gauge(&g, m, "temperature", "Line one\nback\\slash", NULL, 0), 0);
    const char *v1[] = {"NodePool", "allowed"}, *v2[] = {"Pod", "denied"};
    kp_counter_inc(kp_metric_with(c, v1));
    kp_counter_add(kp_metric_with(c, v1), 2.5);
    kp_counter_inc(kp_metric_with(c, v2));
    kp_gauge_set(kp_metric_with(g, NULL), -3);
    kp_gauge_add(kp_metric_with(g, NULL), 0.5);
    char *text = expose(m);
    cr_expect_str_eq(text, "# HELP requests_total Requests seen.\n"
                           "# TYPE requests_total counter\n"
                           "requests_total{kind=\"NodePool\",result=\"allowed\"} 3.5\n"
                           "requests_total{kind=\"Pod\",result=\"denied\"} 1\n"
                           "# HELP temperature Line one\\nback\\\\slash\n"
                           "# TYPE temperature gauge\n"
                           "temperature -2.5\n");
    free(text);
    kp_metrics_free(m);
}

Test(metrics, histogram_buckets_are_cumulative)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *h;
    const double bounds[] = {0.005, 0.1, 1};
    const char *labels[] = {"op"};
    cr_assert_eq(kp_metrics_histogram(&h, m, "latency_seconds", "Latency.", labels, 1, bounds, 3),
                 0);
    const char *v[] = {"CREATE"};
    kp_metric_series *s = kp_metric_with(h, v);
    kp_histogram_observe(s, 0.005); /* on a bound: counts in that bucket (le) */
    kp_histogram_observe(s, 0.05);
    kp_histogram_observe(s, 3);
    kp_histogram_observe(s, NAN); /* ignored */
    cr_expect_eq(kp_metric_series_value(s), 3);
    cr_expect_float_eq(kp_metric_series_sum(s), 3.055, 1e-12);
    char *text = expose(m);
    cr_expect_str_eq(text, "# HELP latency_seconds Latency.\n"
                           "# TYPE latency_seconds histogram\n"
                           "latency_seconds_bucket{op=\"CREATE\",le=\"0.005\"} 1\n"
                           "latency_seconds_bucket{op=\"CREATE\",le=\"0.1\"} 2\n"
                           "latency_seconds_bucket{op=\"CREATE\",le=\"1\"} 2\n"
                           "latency_seconds_bucket{op=\"CREATE\",le=\"+Inf\"} 3\n"
                           "latency_seconds_sum{op=\"CREATE\"} 3.055\n"
                           "latency_seconds_count{op=\"CREATE\"} 3\n");
    free(text);
    kp_metrics_free(m);
}

Test(metrics, histogram_without_labels)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *h;
    const double bounds[] = {1};
    cr_assert_eq(kp_metrics_histogram(&h, m, "x", "", NULL, 0, bounds, 1), 0);
    kp_histogram_observe(kp_metric_with(h, NULL), 0.5);
    char *text = expose(m);
    cr_expect(strstr(text, "x_bucket{le=\"1\"} 1\nx_bucket{le=\"+Inf\"} 1\nx_sum 0.5\nx_count 1\n"),
              "%s", text);
    free(text);
    kp_metrics_free(m);
}

Test(metrics, label_values_are_escaped)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *c;
    const char *labels[] = {"v"};
    cr_assert_eq(kp_metrics_counter(&c, m, "c", "h", labels, 1), 0);
    const char *v[] = {"a\"b\\c\nd"};
    kp_counter_inc(kp_metric_with(c, v));
    char *text = expose(m);
    cr_expect(strstr(text, "c{v=\"a\\\"b\\\\c\\nd\"} 1\n") != NULL, "%s", text);
    free(text);
    kp_metrics_free(m);
}

Test(metrics, registration_rules)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *x = NULL;
    const char *good[] = {"a"}, *reserved[] = {"__a"}, *bad[] = {"a-b"}, *le[] = {"le"};
    const double up[] = {1, 2}, down[] = {2, 1}, inf[] = {1, INFINITY};
    cr_expect_eq(kp_metrics_counter(&x, m, "ok:name_1", "", good, 1), 0);
    cr_expect_eq(kp_metrics_counter(&x, m, "ok:name_1", "", good, 1), KP_ECONFLICT);
    cr_expect_eq(kp_metrics_counter(&x, m, "1bad", "", NULL, 0), KP_EINVALID);
    cr_expect_eq(kp_metrics_counter(&x, m, "bad-name", "", NULL, 0), KP_EINVALID);
    cr_expect_eq(kp_metrics_counter(&x, m, "", "", NULL, 0), KP_EINVALID);
    cr_expect_eq(kp_metrics_gauge(&x, m, "g1", "", reserved, 1), KP_EINVALID);
    cr_expect_eq(kp_metrics_gauge(&x, m, "g2", "", bad, 1), KP_EINVALID);
    cr_expect_eq(kp_metrics_gauge(&x, m, "g3", "", le, 1), 0); /* only histograms reserve le */
    cr_expect_eq(kp_metrics_histogram(&x, m, "h1", "", le, 1, up, 2), KP_EINVALID);
    cr_expect_eq(kp_metrics_histogram(&x, m, "h2", "", NULL, 0, down, 2), KP_EINVALID);
    cr_expect_eq(kp_metrics_histogram(&x, m, "h3", "", NULL, 0, inf, 2), KP_EINVALID);
    cr_expect_eq(kp_metrics_histogram(&x, m, "h4", "", NULL, 0, up, 2), 0);
    kp_metrics_free(m);
    cr_expect_null(kp_metrics_free(NULL));
}

Test(metrics, counters_only_go_up_and_null_series_are_ignored)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *c;
    cr_assert_eq(kp_metrics_counter(&c, m, "c", "", NULL, 0), 0);
    kp_metric_series *s = kp_metric_with(c, NULL);
    kp_counter_add(s, -1);
    kp_counter_add(s, NAN);
    kp_counter_add(s, 2);
    cr_expect_eq(kp_metric_series_value(s), 2);
    kp_counter_inc(NULL);
    kp_gauge_set(NULL, 1);
    kp_histogram_observe(NULL, 1);
    kp_histogram_observe(s, 1); /* not a histogram: ignored */
    cr_expect_eq(kp_metric_series_value(s), 2);
    cr_expect_eq(kp_metric_series_value(NULL), 0);
    cr_expect_null(kp_metric_with(NULL, NULL));
    kp_metrics_free(m);
}

Test(metrics, same_labels_same_series_and_the_cap)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *c;
    const char *labels[] = {"a", "b"};
    cr_assert_eq(kp_metrics_counter(&c, m, "c", "", labels, 2), 0);
    const char *x[] = {"ab", "c"}, *y[] = {"a", "bc"}, *x2[] = {"ab", "c"};
    cr_expect_eq(kp_metric_with(c, x), kp_metric_with(c, x2));
    cr_expect_neq(kp_metric_with(c, x), kp_metric_with(c, y));
    char value[32];
    const char *v[] = {value, "z"};
    size_t made = 2;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    kp_log_set_output(out);
    for (int i = 0; i < KP_METRICS_MAX_SERIES + 10; i++) {
        snprintf(value, sizeof(value), "v%d", i);
        if (kp_metric_with(c, v)) made++;
    }
    kp_log_set_output(stderr);
    fclose(out);
    cr_expect_eq(made, KP_METRICS_MAX_SERIES);
    /* the cap is said, once, naming the family: never a silent cut */
    const char *first = strstr(text, "series cap");
    cr_expect(first && strstr(text, "\"metric\":\"c\""), "%s", text);
    cr_expect(first && !strstr(first + 1, "series cap"), "said once: %s", text);
    free(text);
    /* existing series are still found past the cap */
    cr_expect_not_null(kp_metric_with(c, x));
    kp_metrics_free(m);
}

Test(metrics, value_formatting)
{
    struct {
        double v;
        const char *text;
    } cases[] = {{0, "0"},
                 {1, "1"},
                 {-2, "-2"},
                 {10, "10"}, /* not 1e+01: whole numbers stay whole */
                 {1e6, "1000000"},
                 {-0.0, "0"},
                 {2500, "2500"},
                 {9007199254740991.0, "9007199254740991"},
                 {0.1, "0.1"},
                 {1e21, "1e+21"},
                 {123456789, "123456789"},
                 {0.00025, "0.00025"},
                 {1.0 / 3, "0.3333333333333333"},
                 {INFINITY, "+Inf"},
                 {-INFINITY, "-Inf"},
                 {NAN, "NaN"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_buf b = KP_BUF_INIT(64);
        cr_assert_eq(kp_metrics_format_value(&b, cases[i].v), 0);
        cr_expect_str_eq(kp_buf_cstr(&b), cases[i].text);
        kp_buf_free(&b);
    }
}

Test(metrics, output_cap_is_an_error_and_leaves_the_buffer)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *c;
    cr_assert_eq(kp_metrics_counter(&c, m, "a_rather_long_metric_name", "help", NULL, 0), 0);
    kp_counter_inc(kp_metric_with(c, NULL));
    kp_buf out = KP_BUF_INIT(40);
    cr_assert_eq(kp_buf_puts(&out, "keep"), 0);
    cr_expect_eq(kp_metrics_write(m, &out), KP_ETOOLARGE);
    cr_expect_str_eq(kp_buf_cstr(&out), "keep");
    kp_buf_free(&out);
    kp_metrics_free(m);
}

typedef struct worker_arg {
    kp_metric *counter, *hist;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    const char *v[] = {"same"};
    for (int i = 0; i < 10000; i++) {
        kp_counter_inc(kp_metric_with(a->counter, v));
        kp_histogram_observe(kp_metric_with(a->hist, v), 0.001);
    }
    return NULL;
}

Test(metrics, concurrent_updates_are_not_lost)
{
    kp_metrics *m = kp_metrics_new();
    worker_arg a;
    const char *labels[] = {"l"};
    cr_assert_eq(kp_metrics_counter(&a.counter, m, "c", "", labels, 1), 0);
    cr_assert_eq(
        kp_metrics_histogram(&a.hist, m, "h", "", labels, 1, kp_metrics_latency_buckets, 14), 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, &a);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    const char *v[] = {"same"};
    cr_expect_eq(kp_metric_series_value(kp_metric_with(a.counter, v)), 40000);
    cr_expect_eq(kp_metric_series_value(kp_metric_with(a.hist, v)), 40000);
    kp_metrics_free(m);
}

Test(metrics, reset_drops_every_series_and_new_ones_start_fresh)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *g;
    const char *labels[] = {"node"};
    cr_assert_eq(kp_metrics_gauge(&g, m, "nodes_allocatable", "Allocatable.", labels, 1), 0);
    const char *a[] = {"a"}, *b[] = {"b"};
    kp_gauge_set(kp_metric_with(g, a), 2);
    kp_gauge_set(kp_metric_with(g, b), 4);
    kp_metric_reset(g);
    kp_gauge_add(kp_metric_with(g, b), 1);
    char *text = expose(m);
    cr_expect_str_eq(text, "# HELP nodes_allocatable Allocatable.\n"
                           "# TYPE nodes_allocatable gauge\n"
                           "nodes_allocatable{node=\"b\"} 1\n");
    free(text);
    kp_metric_reset(NULL);
    kp_metrics_free(m);
}
