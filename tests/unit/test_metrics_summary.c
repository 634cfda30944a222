/*
 * metrics: what the controller's families need beyond counters, gauges and
 * histograms — summaries (quantiles over a window), label sets as wide as
 * Karpenter's node gauges, mark-and-sweep passes, removing one series,
 * collect hooks that run before a scrape, and describing the registry.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "metrics/metrics.h"

static char *expose(kp_metrics *m)
{
    kp_buf out = KP_BUF_INIT(1 << 20);
    cr_assert_eq(kp_metrics_write(m, &out), 0, "%s", kp_error_last());
    return kp_buf_detach(&out);
}

Test(metrics_summary, quantiles_sum_and_count)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *s;
    const char *labels[] = {"nodepool"};
    cr_assert_eq(kp_metrics_summary(&s, m, "termination_seconds", "How long.", labels, 1), 0);
    const char *v[] = {"default"};
    for (int i = 1; i <= 100; i++)
        kp_histogram_observe(kp_metric_with(s, v), i);
    char *text = expose(m);
    cr_expect_str_eq(text, "# HELP termination_seconds How long.\n"
                           "# TYPE termination_seconds summary\n"
                           "termination_seconds{nodepool=\"default\",quantile=\"0\"} 1\n"
                           "termination_seconds{nodepool=\"default\",quantile=\"0.5\"} 50\n"
                           "termination_seconds{nodepool=\"default\",quantile=\"0.9\"} 90\n"
                           "termination_seconds{nodepool=\"default\",quantile=\"0.99\"} 99\n"
                           "termination_seconds{nodepool=\"default\",quantile=\"1\"} 100\n"
                           "termination_seconds_sum{nodepool=\"default\"} 5050\n"
                           "termination_seconds_count{nodepool=\"default\"} 100\n");
    free(text);
    cr_expect_eq(kp_metric_series_value(kp_metric_with(s, v)), 100);
    cr_expect_eq(kp_metric_series_sum(kp_metric_with(s, v)), 5050);
    kp_metrics_free(m);
}

Test(metrics_summary, window_keeps_the_latest_and_counts_every_one)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *s;
    cr_assert_eq(kp_metrics_summary(&s, m, "x", "", NULL, 0), 0);
    kp_metric_series *ser = kp_metric_with(s, NULL);
    for (int i = 0; i < KP_METRICS_SUMMARY_WINDOW; i++)
        kp_histogram_observe(ser, 1000); /* pushed out below */
    for (int i = 0; i < KP_METRICS_SUMMARY_WINDOW; i++)
        kp_histogram_observe(ser, 1);
    char *text = expose(m);
    cr_expect(strstr(text, "x{quantile=\"1\"} 1\n"), "%s", text);
    char want[64];
    snprintf(want, sizeof(want), "x_count %d\n", 2 * KP_METRICS_SUMMARY_WINDOW);
    cr_expect(strstr(text, want), "%s", text);
    free(text);
    kp_metrics_free(m);
}

Test(metrics_summary, empty_window_is_nan_and_quantile_is_reserved)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *s;
    const char *q[] = {"quantile"};
    cr_expect_eq(kp_metrics_summary(&s, m, "bad", "", q, 1), KP_EINVALID);
    cr_assert_eq(kp_metrics_summary(&s, m, "y", "", NULL, 0), 0);
    kp_metric_with(s, NULL);
    char *text = expose(m);
    cr_expect(strstr(text, "y{quantile=\"0.5\"} NaN\n"), "%s", text);
    cr_expect(strstr(text, "y_count 0\n"), "%s", text);
    free(text);
    kp_metrics_free(m);
}

Test(metrics_summary, forty_labels_fit)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *g;
    char names[40][16];
    const char *labels[40], *values[40];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof(names[i]), "l%d", i);
        labels[i] = names[i];
        values[i] = "v";
    }
    cr_assert_eq(kp_metrics_gauge(&g, m, "wide", "", labels, 40), 0, "%s", kp_error_last());
    kp_gauge_set(kp_metric_with(g, values), 1);
    char *text = expose(m);
    cr_expect(strstr(text, "l39=\"v\"} 1\n"), "%s", text);
    free(text);
    kp_metrics_free(m);
}

Test(metrics_summary, mark_and_sweep_keeps_what_the_pass_touched)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *g;
    const char *labels[] = {"pod"};
    cr_assert_eq(kp_metrics_gauge(&g, m, "pods", "", labels, 1), 0);
    const char *a[] = {"a"}, *b[] = {"b"}, *c[] = {"c"};
    kp_gauge_set(kp_metric_with(g, a), 1);
    kp_gauge_set(kp_metric_with(g, b), 1);
    kp_metric_mark(g);
    kp_gauge_set(kp_metric_with(g, b), 2); /* b stays, a went, c came */
    kp_gauge_set(kp_metric_with(g, c), 3);
    cr_expect_eq(kp_metric_series_count(g), 3); /* a is still there until the sweep */
    kp_metric_sweep(g);
    char *text = expose(m);
    cr_expect_str_eq(text, "# HELP pods \n# TYPE pods gauge\npods{pod=\"b\"} 2\npods{pod=\"c\"} 3\n");
    free(text);
    /* the hash slots were rebuilt: lookups find the same series */
    cr_expect_eq(kp_metric_series_value(kp_metric_with(g, c)), 3);
    cr_expect_eq(kp_metric_series_count(g), 2);
    kp_metrics_free(m);
}

Test(metrics_summary, remove_drops_one_series)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *g;
    const char *labels[] = {"name", "namespace"};
    cr_assert_eq(kp_metrics_gauge(&g, m, "unbound", "", labels, 2), 0);
    const char *a[] = {"a", "default"}, *b[] = {"b", "default"};
    kp_gauge_set(kp_metric_with(g, a), 1);
    kp_gauge_set(kp_metric_with(g, b), 2);
    kp_metric_remove(g, a);
    kp_metric_remove(g, a); /* absent: nothing */
    cr_expect_eq(kp_metric_series_count(g), 1);
    cr_expect_eq(kp_metric_series_value(kp_metric_with(g, b)), 2);
    kp_metric_remove(NULL, a);
    kp_metrics_free(m);
}

static void set_seven(void *ctx)
{
    kp_gauge_set(kp_metric_with(ctx, NULL), 7);
}

Test(metrics_summary, collect_hooks_run_before_the_write)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *g;
    cr_assert_eq(kp_metrics_gauge(&g, m, "late", "", NULL, 0), 0);
    cr_assert_eq(kp_metrics_on_collect(m, set_seven, g), 0);
    char *text = expose(m);
    cr_expect(strstr(text, "late 7\n"), "%s", text);
    free(text);
    kp_gauge_set(kp_metric_with(g, NULL), 1);
    kp_metrics_remove_collect(m, set_seven, g);
    text = expose(m);
    cr_expect(strstr(text, "late 1\n"), "%s", text);
    free(text);
    for (int i = 0; i < KP_METRICS_MAX_HOOKS; i++)
        cr_assert_eq(kp_metrics_on_collect(m, set_seven, g), 0);
    cr_expect_eq(kp_metrics_on_collect(m, set_seven, g), KP_ETOOLARGE);
    kp_metrics_free(m);
}

Test(metrics_summary, describe_and_find)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *c, *s;
    const char *labels[] = {"a", "b"};
    cr_assert_eq(kp_metrics_counter(&c, m, "c_total", "Count.", labels, 2), 0);
    cr_assert_eq(kp_metrics_summary(&s, m, "s", "Sum.", NULL, 0), 0);
    kp_metric_desc d[4];
    cr_assert_eq(kp_metrics_describe(m, d, 4), 2);
    cr_expect_str_eq(d[0].name, "c_total");
    cr_expect_eq(d[0].type, KP_METRIC_COUNTER);
    cr_expect_eq(d[0].n_labels, 2);
    cr_expect_str_eq(d[0].labels[1], "b");
    cr_expect_str_eq(kp_metric_type_name(d[1].type), "summary");
    cr_expect_eq(kp_metrics_describe(m, d, 1), 2); /* the count even when cut */
    cr_expect_eq(kp_metrics_find(m, "s"), s);
    cr_expect_null(kp_metrics_find(m, "nope"));
    kp_metrics_free(m);
}
