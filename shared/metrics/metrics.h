/*
 * Metrics: counters, gauges and histograms with labels, kept in a registry and
 * written out in the Prometheus text exposition format (version 0.0.4), which
 * every Prometheus-compatible scraper reads. Both programs use it: the webhook
 * for request counts and latencies, the controller for its own figures.
 *
 * A registry owns its metric families; a family owns its series (one per set
 * of label values). Series pointers stay valid for the registry's lifetime,
 * so a hot path may look a series up once and keep it. Every operation is
 * thread-safe. The number of series in one family is capped (label values
 * coming from requests must not grow memory without bound): past the cap,
 * kp_metric_with() returns NULL, and every update accepts NULL and does nothing.
 *
 * Summaries are Prometheus' client-side quantiles: the 0, 0.5, 0.9, 0.99 and
 * 1 quantiles of the observations of the last ten minutes (at most the latest
 * KP_METRICS_SUMMARY_WINDOW of them), plus the sum and count of every
 * observation ever made.
 *
 * Figures that are only known when asked for (process statistics, the age of
 * work in progress) are set by collect hooks, which kp_metrics_write runs
 * before it writes.
 */
#ifndef KP_METRICS_METRICS_H
#define KP_METRICS_METRICS_H

#include "base/buf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kp_metrics kp_metrics;
typedef struct kp_metric kp_metric;
typedef struct kp_metric_series kp_metric_series;

enum kp_metric_type {
    KP_METRIC_COUNTER = 0,
    KP_METRIC_GAUGE,
    KP_METRIC_HISTOGRAM,
    KP_METRIC_SUMMARY,
};

enum {
    KP_METRICS_MAX_LABELS = 48,          /* label names per family (Karpenter's node gauges have 40) */
    KP_METRICS_MAX_BUCKETS = 48,         /* histogram buckets, +Inf not counted */
    KP_METRICS_MAX_SERIES = 65536,       /* series per family: karpenter_pods_state has one per pod */
    KP_METRICS_SUMMARY_WINDOW = 512,     /* observations a summary series keeps for its quantiles */
    KP_METRICS_SUMMARY_AGE_S = 600,      /* ... and for how long (client_golang's MaxAge) */
    KP_METRICS_MAX_HOOKS = 16            /* collect hooks per registry */
};

#define KP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

kp_metrics *kp_metrics_new(void);
/* Frees every family and series. Accepts NULL; returns NULL. */
kp_metrics *kp_metrics_free(kp_metrics *metrics);

/* Register a family. `name` must match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
 * [a-zA-Z_][a-zA-Z0-9_]* without a "__" prefix (and not "le" on histograms,
 * "quantile" on summaries).
 * KP_EINVALID for a bad name, too many labels or buckets, or buckets that do
 * not strictly increase; KP_ECONFLICT when the name is already registered. */
int kp_metrics_counter(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                       const char *const *labels, size_t n_labels);
int kp_metrics_gauge(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                     const char *const *labels, size_t n_labels);
/* `buckets` are the upper bounds, strictly increasing, +Inf implied. */
int kp_metrics_histogram(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                         const char *const *labels, size_t n_labels, const double *buckets,
                         size_t n_buckets);

/* Quantiles 0, 0.5, 0.9, 0.99 and 1 over a sliding window (see above). */
int kp_metrics_summary(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                       const char *const *labels, size_t n_labels);

/* Prometheus' default buckets (5 ms .. 10 s) and ones fit for sub-millisecond
 * request handling (100 µs .. 5 s). */
extern const double kp_metrics_default_buckets[11];
extern const double kp_metrics_latency_buckets[14];

/* The series with these label values (as many as the family has labels; NULL
 * values read as ""), created on first use. NULL once the family holds
 * KP_METRICS_MAX_SERIES series (logged once per family at WARN). */
kp_metric_series *kp_metric_with(kp_metric *metric, const char *const *values);

/* Drop every series of the family, for gauges recomputed from scratch each
 * pass (pods and nodes that left must leave the output too). Series handles
 * taken before are invalid after: only the one writer of such a family may
 * call it. */
void kp_metric_reset(kp_metric *metric);
/* A pass that recomputes a family without a moment where its series are
 * missing: kp_metric_mark() starts the pass, every series looked up with
 * kp_metric_with() afterwards is kept, and kp_metric_sweep() drops the ones
 * the pass did not touch. Same single-writer rule as kp_metric_reset. */
void kp_metric_mark(kp_metric *metric);
void kp_metric_sweep(kp_metric *metric);
/* Drop the one series with these label values (absent: nothing happens).
 * Same single-writer rule. */
void kp_metric_remove(kp_metric *metric, const char *const *values);
/* How many series the family holds. */
size_t kp_metric_series_count(kp_metric *metric);

/* Counters only go up: negative or NaN increments are ignored. */
void kp_counter_add(kp_metric_series *series, double value);
void kp_counter_inc(kp_metric_series *series);
void kp_gauge_set(kp_metric_series *series, double value);
void kp_gauge_add(kp_metric_series *series, double value);
/* Histograms and summaries. */
void kp_histogram_observe(kp_metric_series *series, double value);

/* A counter's or gauge's value; for a histogram or summary, its observation count. */
double kp_metric_series_value(kp_metric_series *series);
/* A histogram's or summary's sum of observations (0 for other types). */
double kp_metric_series_sum(kp_metric_series *series);

/* Call `fn(ctx)` at the start of every kp_metrics_write, before any family
 * is written (no lock of the registry is held: it may update metrics). The
 * hook must stay valid until kp_metrics_free, or until removed.
 * KP_ETOOLARGE past KP_METRICS_MAX_HOOKS. */
int kp_metrics_on_collect(kp_metrics *metrics, void (*fn)(void *ctx), void *ctx);
void kp_metrics_remove_collect(kp_metrics *metrics, void (*fn)(void *ctx), void *ctx);

/* What a family is, for documentation and checks against a reference. */
typedef struct kp_metric_desc {
    const char *name, *help;
    enum kp_metric_type type;
    const char *const *labels;
    size_t n_labels;
} kp_metric_desc;

/* Describe up to `cap` families in registration order into `out` (strings
 * owned by the registry); returns how many there are. */
size_t kp_metrics_describe(kp_metrics *metrics, kp_metric_desc *out, size_t cap);
/* The family called `name`, or NULL. */
kp_metric *kp_metrics_find(kp_metrics *metrics, const char *name);
/* "counter", "gauge", "histogram", "summary". */
const char *kp_metric_type_name(enum kp_metric_type type);

/* Append every family in registration order, series in creation order, as
 * Prometheus text. Families with no series print their HELP and TYPE only.
 * KP_ETOOLARGE when `out` reaches its cap. */
int kp_metrics_write(kp_metrics *metrics, kp_buf *out);

/* Append `value` as Prometheus reads it: a whole number of magnitude below
 * 2^53 in plain digits ("10", "1048576"), any other the shortest decimal that
 * reads back as the same double, "+Inf", "-Inf" or "NaN". */
int kp_metrics_format_value(kp_buf *out, double value);

#endif
