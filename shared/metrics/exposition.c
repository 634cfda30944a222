/*
 * The Prometheus text exposition format (version 0.0.4) of a registry: what
 * kp_metrics_write sends. Values print as Prometheus' parser reads them back
 * exactly; summaries compute their quantiles here, at the time of the scrape.
 */
#include "metrics/metrics_internal.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2^53: above it not every whole number is a double. */
#define EXACT_INTEGERS 9007199254740992.0

int kp_metrics_format_value(kp_buf *out, double value)
{
    if (isnan(value)) return kp_buf_puts(out, "NaN");
    if (isinf(value)) return kp_buf_puts(out, value > 0 ? "+Inf" : "-Inf");
    if (value == 0) return kp_buf_puts(out, "0"); /* and -0 */
    char text[40];
    if (value == trunc(value) && fabs(value) < EXACT_INTEGERS) {
        snprintf(text, sizeof(text), "%.0f", value);
        return kp_buf_puts(out, text);
    }
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(text, sizeof(text), "%.*g", precision, value);
        if (strtod(text, NULL) == value) break;
    }
    return kp_buf_puts(out, text);
}

/* HELP text escapes backslash and newline; label values also the quote. */
static int put_escaped(kp_buf *out, const char *s, int quote)
{
    int err = 0;
    for (; *s && err == 0; s++) {
        if (*s == '\\')
            err = kp_buf_puts(out, "\\\\");
        else if (*s == '\n')
            err = kp_buf_puts(out, "\\n");
        else if (quote && *s == '"')
            err = kp_buf_puts(out, "\\\"");
        else
            err = kp_buf_putc(out, *s);
    }
    return err;
}

/* An extra label a sample carries beyond the family's: `le` on histogram
 * buckets, `quantile` on summary quantiles. */
typedef struct extra_label {
    const char *name, *value;
} extra_label;

/* `name{a="x",b="y"` plus the optional extra label, closed with "} ". */
static int put_series_name(kp_buf *out, const kp_metric *f, const kp_metric_series *s,
                           const char *suffix, const extra_label *extra)
{
    int err = kp_buf_printf(out, "%s%s", f->name, suffix);
    if (err == 0 && (f->n_labels || extra)) err = kp_buf_putc(out, '{');
    for (size_t i = 0; i < f->n_labels && err == 0; i++) {
        err = kp_buf_printf(out, "%s%s=\"", i ? "," : "", f->labels[i]);
        if (err == 0) err = put_escaped(out, s->values[i], 1);
        if (err == 0) err = kp_buf_putc(out, '"');
    }
    if (err == 0 && extra)
        err = kp_buf_printf(out, "%s%s=\"%s\"", f->n_labels ? "," : "", extra->name, extra->value);
    if (err == 0 && (f->n_labels || extra)) err = kp_buf_putc(out, '}');
    if (err == 0) err = kp_buf_putc(out, ' ');
    return err;
}

static int put_sample(kp_buf *out, const kp_metric *f, const kp_metric_series *s,
                      const char *suffix, const extra_label *extra, double value)
{
    int err = put_series_name(out, f, s, suffix, extra);
    if (err == 0) err = kp_metrics_format_value(out, value);
    if (err == 0) err = kp_buf_putc(out, '\n');
    return err;
}

/* A sample with an extra label whose value is a number (le, quantile). */
static int put_sample_at(kp_buf *out, const kp_metric *f, const kp_metric_series *s,
                         const char *suffix, const char *label, double at, double value)
{
    kp_buf text = KP_BUF_INIT(64);
    int err = kp_metrics_format_value(&text, at);
    extra_label extra = {label, kp_buf_cstr(&text)};
    if (err == 0) err = put_sample(out, f, s, suffix, &extra, value);
    kp_buf_free(&text);
    return err;
}

static int put_histogram(kp_buf *out, const kp_metric *f, const kp_metric_series *s)
{
    uint64_t cumulative = 0;
    int err = 0;
    for (size_t i = 0; i <= f->n_bounds && err == 0; i++) {
        cumulative += s->buckets[i];
        double le = i < f->n_bounds ? f->bounds[i] : INFINITY;
        err = put_sample_at(out, f, s, "_bucket", "le", le, (double)cumulative);
    }
    if (err == 0) err = put_sample(out, f, s, "_sum", NULL, s->sum);
    if (err == 0) err = put_sample(out, f, s, "_count", NULL, (double)s->count);
    return err;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The observations of the window still young enough, sorted; how many. */
static size_t summary_recent(const kp_metric_series *s, double *sorted)
{
    int64_t oldest = kp_metrics_now_ns() - (int64_t)KP_METRICS_SUMMARY_AGE_S * 1000000000;
    size_t n = 0;
    for (size_t i = 0; i < s->window_len; i++)
        if (s->window[i].at_ns >= oldest) sorted[n++] = s->window[i].value;
    qsort(sorted, n, sizeof(double), cmp_double);
    return n;
}

/* The q-quantile of `n` sorted values: the smallest with at least q*n at or
 * below it; NaN without values, as client_golang reports an empty window. */
static double quantile(const double *sorted, size_t n, double q)
{
    if (n == 0) return NAN;
    double rank = ceil(q * (double)n);
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    return sorted[i < n ? i : n - 1];
}

static int put_summary(kp_buf *out, const kp_metric *f, const kp_metric_series *s)
{
    double *sorted = kp_xcalloc(KP_METRICS_SUMMARY_WINDOW, sizeof(double));
    size_t n = summary_recent(s, sorted);
    int err = 0;
    for (size_t i = 0; i < 5 && err == 0; i++) {
        double q = kp_metrics_quantiles[i];
        err = put_sample_at(out, f, s, "", "quantile", q, quantile(sorted, n, q));
    }
    free(sorted);
    if (err == 0) err = put_sample(out, f, s, "_sum", NULL, s->sum);
    if (err == 0) err = put_sample(out, f, s, "_count", NULL, (double)s->count);
    return err;
}

static int put_series(kp_buf *out, const kp_metric *f, const kp_metric_series *s)
{
    switch (f->type) {
    case KP_METRIC_HISTOGRAM:
        return put_histogram(out, f, s);
    case KP_METRIC_SUMMARY:
        return put_summary(out, f, s);
    case KP_METRIC_COUNTER:
    case KP_METRIC_GAUGE:
        break;
    }
    return put_sample(out, f, s, "", NULL, s->value);
}

int kp_metrics_put_family(kp_buf *out, kp_metric *f)
{
    int err = kp_buf_printf(out, "# HELP %s ", f->name);
    if (err == 0) err = put_escaped(out, f->help, 0);
    if (err == 0)
        err = kp_buf_printf(out, "\n# TYPE %s %s\n", f->name, kp_metric_type_name(f->type));
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->n_series && err == 0; i++) {
        kp_metric_series *s = f->series[i];
        pthread_mutex_lock(&s->lock);
        err = put_series(out, f, s);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&f->lock);
    return err;
}

/* The hooks run first, on a copy: one may add or remove hooks. */
static void run_hooks(kp_metrics *metrics)
{
    kp_metrics_hook hooks[KP_METRICS_MAX_HOOKS];
    pthread_mutex_lock(&metrics->lock);
    size_t n = metrics->n_hooks;
    memcpy(hooks, metrics->hooks, n * sizeof(hooks[0]));
    pthread_mutex_unlock(&metrics->lock);
    for (size_t i = 0; i < n; i++)
        hooks[i].fn(hooks[i].ctx);
}

int kp_metrics_write(kp_metrics *metrics, kp_buf *out)
{
    run_hooks(metrics);
    size_t start = out->len;
    int err = 0;
    pthread_mutex_lock(&metrics->lock);
    for (size_t i = 0; i < metrics->count && err == 0; i++)
        err = kp_metrics_put_family(out, metrics->families[i]);
    pthread_mutex_unlock(&metrics->lock);
    if (err < 0 && out->data) {
        out->len = start;
        out->data[start] = '\0';
    }
    return err;
}
