/*
 * The registry behind metrics.h. Families sit in an array guarded by the
 * registry's lock (registration is rare); each family finds its series
 * through a small open-addressing hash under its own lock, and each series
 * guards its values with a lock of its own so that a histogram's buckets,
 * sum and count are always read together. The text output is exposition.c.
 */
#include "metrics/metrics_internal.h"

#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const double kp_metrics_default_buckets[11] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                               0.5,   1,    2.5,   5,    10};
const double kp_metrics_latency_buckets[14] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                               0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};
const double kp_metrics_quantiles[5] = {0, 0.5, 0.9, 0.99, 1};

int64_t kp_metrics_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

kp_metrics *kp_metrics_new(void)
{
    kp_metrics *m = kp_xcalloc(1, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

static void series_free(kp_metric_series *s, size_t n_labels)
{
    (void)n_labels; /* the values live in the series' own block (series_new) */
    free(s->buckets);
    free(s->window);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void family_free(kp_metric *f)
{
    for (size_t i = 0; i < f->n_series; i++)
        series_free(f->series[i], f->n_labels);
    for (size_t i = 0; i < f->n_labels; i++)
        free(f->labels[i]);
    free(f->series);
    free(f->slots);
    free(f->name);
    free(f->help);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

kp_metrics *kp_metrics_free(kp_metrics *metrics)
{
    if (!metrics) return NULL;
    for (size_t i = 0; i < metrics->count; i++)
        family_free(metrics->families[i]);
    free(metrics->families);
    pthread_mutex_destroy(&metrics->lock);
    free(metrics);
    return NULL;
}

static int name_char_ok(char c, int first, int colon)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return 1;
    if (colon && c == ':') return 1;
    return !first && c >= '0' && c <= '9';
}

static int name_ok(const char *name, int colon)
{
    if (!name || !*name) return 0;
    for (size_t i = 0; name[i]; i++)
        if (!name_char_ok(name[i], i == 0, colon)) return 0;
    return 1;
}

static int check_family(const char *name, enum kp_metric_type type, const char *const *labels,
                        size_t n_labels, const double *bounds, size_t n_bounds)
{
    if (!name_ok(name, 1))
        return kp_error_set(KP_EINVALID, "metric name %s is not valid", name ? name : "(null)");
    if (n_labels > KP_METRICS_MAX_LABELS)
        return kp_error_set(KP_EINVALID, "metric %s: more than %d labels", name,
                            KP_METRICS_MAX_LABELS);
    for (size_t i = 0; i < n_labels; i++) {
        if (!name_ok(labels[i], 0) || strncmp(labels[i], "__", 2) == 0 ||
            (type == KP_METRIC_HISTOGRAM && strcmp(labels[i], "le") == 0) ||
            (type == KP_METRIC_SUMMARY && strcmp(labels[i], "quantile") == 0))
            return kp_error_set(KP_EINVALID, "metric %s: label name %s is not valid", name,
                                labels[i] ? labels[i] : "(null)");
    }
    if (n_bounds > KP_METRICS_MAX_BUCKETS)
        return kp_error_set(KP_EINVALID, "metric %s: more than %d buckets", name,
                            KP_METRICS_MAX_BUCKETS);
    for (size_t i = 0; i < n_bounds; i++) {
        if (isnan(bounds[i]) || isinf(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
            return kp_error_set(KP_EINVALID, "metric %s: buckets must increase strictly", name);
    }
    return 0;
}

static kp_metric *family_new(enum kp_metric_type type, const char *name, const char *help,
                             const char *const *labels, size_t n_labels, const double *bounds,
                             size_t n_bounds)
{
    kp_metric *f = kp_xcalloc(1, sizeof(*f));
    pthread_mutex_init(&f->lock, NULL);
    f->type = type;
    f->name = kp_xstrdup(name);
    f->help = kp_xstrdup(help ? help : "");
    for (size_t i = 0; i < n_labels; i++)
        f->labels[i] = kp_xstrdup(labels[i]);
    f->n_labels = n_labels;
    if (n_bounds) memcpy(f->bounds, bounds, n_bounds * sizeof(double));
    f->n_bounds = n_bounds;
    return f;
}

static int registry_add(kp_metric **out, kp_metrics *metrics, enum kp_metric_type type,
                        const char *name, const char *help, const char *const *labels,
                        size_t n_labels, const double *bounds, size_t n_bounds)
{
    int err = check_family(name, type, labels, n_labels, bounds, n_bounds);
    if (err < 0) return err;
    pthread_mutex_lock(&metrics->lock);
    for (size_t i = 0; i < metrics->count; i++) {
        if (strcmp(metrics->families[i]->name, name) == 0) {
            pthread_mutex_unlock(&metrics->lock);
            return kp_error_set(KP_ECONFLICT, "metric %s is already registered", name);
        }
    }
    kp_metric *f = family_new(type, name, help, labels, n_labels, bounds, n_bounds);
    metrics->families =
        kp_xgrow(metrics->families, &metrics->cap, metrics->count + 1, sizeof(kp_metric *));
    metrics->families[metrics->count++] = f;
    pthread_mutex_unlock(&metrics->lock);
    *out = f;
    return 0;
}

int kp_metrics_counter(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                       const char *const *labels, size_t n_labels)
{
    return registry_add(out, metrics, KP_METRIC_COUNTER, name, help, labels, n_labels, NULL, 0);
}

int kp_metrics_gauge(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                     const char *const *labels, size_t n_labels)
{
    return registry_add(out, metrics, KP_METRIC_GAUGE, name, help, labels, n_labels, NULL, 0);
}

int kp_metrics_histogram(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                         const char *const *labels, size_t n_labels, const double *buckets,
                         size_t n_buckets)
{
    return registry_add(out, metrics, KP_METRIC_HISTOGRAM, name, help, labels, n_labels, buckets,
                        n_buckets);
}

int kp_metrics_summary(kp_metric **out, kp_metrics *metrics, const char *name, const char *help,
                       const char *const *labels, size_t n_labels)
{
    return registry_add(out, metrics, KP_METRIC_SUMMARY, name, help, labels, n_labels, NULL, 0);
}

/* FNV-1a over the values, each followed by a 0xff byte that no UTF-8 text
 * holds, so ("ab","c") and ("a","bc") differ. */
static uint64_t values_hash(const char *const *values, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        for (const char *p = values[i] ? values[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ 0xffu) * 1099511628211ULL;
    }
    return h;
}

static int series_matches(const kp_metric_series *s, const char *const *values, size_t n,
                          uint64_t hash)
{
    if (s->hash != hash) return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(s->values[i], values[i] ? values[i] : "") != 0) return 0;
    return 1;
}

static void slots_insert(size_t *slots, size_t n_slots, uint64_t hash, size_t index)
{
    size_t i = (size_t)(hash & (n_slots - 1));
    while (slots[i])
        i = (i + 1) & (n_slots - 1);
    slots[i] = index + 1;
}

/* Keep the table at most half full. */
static void slots_grow(kp_metric *f)
{
    if (f->n_slots && (f->n_series + 1) * 2 <= f->n_slots) return;
    size_t n = f->n_slots ? f->n_slots * 2 : 16;
    free(f->slots);
    f->slots = kp_xcalloc(n, sizeof(size_t));
    f->n_slots = n;
    for (size_t i = 0; i < f->n_series; i++)
        slots_insert(f->slots, n, f->series[i]->hash, i);
}

/* One block per series: the struct, then the label value pointers, then the
 * values' text. A family such as karpenter_pods_state has a series per pod
 * and 13 labels; one allocation instead of 15 halves what each costs. */
static kp_metric_series *series_new(kp_metric *f, const char *const *values, uint64_t hash)
{
    size_t n = f->n_labels, text = 0;
    for (size_t i = 0; i < n; i++)
        text += strlen(values[i] ? values[i] : "") + 1;
    kp_metric_series *s = kp_xcalloc(1, sizeof(*s) + n * sizeof(char *) + text);
    pthread_mutex_init(&s->lock, NULL);
    s->family = f;
    s->hash = hash;
    s->values = (char **)(s + 1);
    char *p = (char *)(s->values + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(values[i] ? values[i] : "");
        memcpy(p, values[i] ? values[i] : "", len + 1);
        s->values[i] = p;
        p += len + 1;
    }
    if (f->type == KP_METRIC_HISTOGRAM) s->buckets = kp_xcalloc(f->n_bounds + 1, sizeof(uint64_t));
    if (f->type == KP_METRIC_SUMMARY)
        s->window = kp_xcalloc(KP_METRICS_SUMMARY_WINDOW, sizeof(kp_summary_obs));
    return s;
}

static kp_metric_series *family_find(const kp_metric *f, const char *const *values, uint64_t hash)
{
    if (!f->n_slots) return NULL;
    for (size_t i = (size_t)(hash & (f->n_slots - 1)); f->slots[i];
         i = (i + 1) & (f->n_slots - 1)) {
        kp_metric_series *s = f->series[f->slots[i] - 1];
        if (series_matches(s, values, f->n_labels, hash)) return s;
    }
    return NULL;
}

kp_metric_series *kp_metric_with(kp_metric *metric, const char *const *values)
{
    static const char *const no_values[1] = {""};
    if (!metric) return NULL;
    if (!values) values = no_values;
    uint64_t hash = values_hash(values, metric->n_labels);
    pthread_mutex_lock(&metric->lock);
    kp_metric_series *s = family_find(metric, values, hash);
    if (!s && metric->n_series < KP_METRICS_MAX_SERIES) {
        slots_grow(metric);
        s = series_new(metric, values, hash);
        metric->series = kp_xgrow(metric->series, &metric->cap_series, metric->n_series + 1,
                                  sizeof(kp_metric_series *));
        slots_insert(metric->slots, metric->n_slots, hash, metric->n_series);
        metric->series[metric->n_series++] = s;
    }
    bool say_full = !s && !metric->full_logged;
    if (say_full) metric->full_logged = true;
    if (s) s->epoch = metric->epoch;
    pthread_mutex_unlock(&metric->lock);
    if (say_full) { /* never silently: the family's output is incomplete from now on */
        char cap[24];
        snprintf(cap, sizeof(cap), "%d", (int)KP_METRICS_MAX_SERIES);
        KP_LOG(KP_LOG_WARN, "metrics", "metric family has reached its series cap; new series are not recorded",
               "metric", metric->name, "cap", cap);
    }
    return s;
}

/* Keep the series for which `keep` says so, in their order; rebuild the
 * hash slots. Caller holds the family's lock. */
static void family_filter(kp_metric *f, int (*keep)(const kp_metric *, const kp_metric_series *, const void *),
                          const void *arg)
{
    size_t kept = 0;
    for (size_t i = 0; i < f->n_series; i++) {
        if (keep(f, f->series[i], arg))
            f->series[kept++] = f->series[i];
        else
            series_free(f->series[i], f->n_labels);
    }
    f->n_series = kept;
    if (f->slots) memset(f->slots, 0, f->n_slots * sizeof(*f->slots));
    for (size_t i = 0; i < f->n_series; i++)
        slots_insert(f->slots, f->n_slots, f->series[i]->hash, i);
}

static int keep_none(const kp_metric *f, const kp_metric_series *s, const void *arg)
{
    (void)f, (void)s, (void)arg;
    return 0;
}

static int keep_current(const kp_metric *f, const kp_metric_series *s, const void *arg)
{
    (void)arg;
    return s->epoch == f->epoch;
}

typedef struct series_key {
    uint64_t hash;
    const char *const *values;
} series_key;

static int keep_other(const kp_metric *f, const kp_metric_series *s, const void *arg)
{
    const series_key *k = arg;
    return !series_matches(s, k->values, f->n_labels, k->hash);
}

void kp_metric_reset(kp_metric *metric)
{
    if (!metric) return;
    pthread_mutex_lock(&metric->lock);
    family_filter(metric, keep_none, NULL);
    pthread_mutex_unlock(&metric->lock);
}

void kp_metric_mark(kp_metric *metric)
{
    if (!metric) return;
    pthread_mutex_lock(&metric->lock);
    metric->epoch++;
    pthread_mutex_unlock(&metric->lock);
}

void kp_metric_sweep(kp_metric *metric)
{
    if (!metric) return;
    pthread_mutex_lock(&metric->lock);
    family_filter(metric, keep_current, NULL);
    pthread_mutex_unlock(&metric->lock);
}

void kp_metric_remove(kp_metric *metric, const char *const *values)
{
    static const char *const no_values[1] = {""};
    if (!metric) return;
    if (!values) values = no_values;
    series_key k = {values_hash(values, metric->n_labels), values};
    pthread_mutex_lock(&metric->lock);
    family_filter(metric, keep_other, &k);
    pthread_mutex_unlock(&metric->lock);
}

size_t kp_metric_series_count(kp_metric *metric)
{
    if (!metric) return 0;
    pthread_mutex_lock(&metric->lock);
    size_t n = metric->n_series;
    pthread_mutex_unlock(&metric->lock);
    return n;
}

void kp_counter_add(kp_metric_series *series, double value)
{
    if (!series || !(value >= 0)) return;
    pthread_mutex_lock(&series->lock);
    series->value += value;
    pthread_mutex_unlock(&series->lock);
}

void kp_counter_inc(kp_metric_series *series)
{
    kp_counter_add(series, 1);
}

void kp_gauge_set(kp_metric_series *series, double value)
{
    if (!series) return;
    pthread_mutex_lock(&series->lock);
    series->value = value;
    pthread_mutex_unlock(&series->lock);
}

void kp_gauge_add(kp_metric_series *series, double value)
{
    if (!series) return;
    pthread_mutex_lock(&series->lock);
    series->value += value;
    pthread_mutex_unlock(&series->lock);
}

/* Index of the first bound >= value; n_bounds stands for +Inf. */
static size_t bucket_index(const double *bounds, size_t n, double value)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bounds[mid] >= value)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void summary_observe(kp_metric_series *s, double value)
{
    s->window[s->window_next] = (kp_summary_obs){value, kp_metrics_now_ns()};
    s->window_next = (s->window_next + 1) % KP_METRICS_SUMMARY_WINDOW;
    if (s->window_len < KP_METRICS_SUMMARY_WINDOW) s->window_len++;
}

void kp_histogram_observe(kp_metric_series *series, double value)
{
    if (!series || isnan(value)) return;
    enum kp_metric_type type = series->family->type;
    if (type != KP_METRIC_HISTOGRAM && type != KP_METRIC_SUMMARY) return;
    size_t i = type == KP_METRIC_HISTOGRAM
                   ? bucket_index(series->family->bounds, series->family->n_bounds, value)
                   : 0;
    pthread_mutex_lock(&series->lock);
    if (type == KP_METRIC_HISTOGRAM)
        series->buckets[i]++;
    else
        summary_observe(series, value);
    series->count++;
    series->sum += value;
    pthread_mutex_unlock(&series->lock);
}

double kp_metric_series_value(kp_metric_series *series)
{
    if (!series) return 0;
    pthread_mutex_lock(&series->lock);
    enum kp_metric_type type = series->family->type;
    double v = type == KP_METRIC_HISTOGRAM || type == KP_METRIC_SUMMARY ? (double)series->count
                                                                        : series->value;
    pthread_mutex_unlock(&series->lock);
    return v;
}

double kp_metric_series_sum(kp_metric_series *series)
{
    if (!series) return 0;
    pthread_mutex_lock(&series->lock);
    double v = series->sum;
    pthread_mutex_unlock(&series->lock);
    return v;
}

/* ---- hooks and descriptions ---- */

int kp_metrics_on_collect(kp_metrics *metrics, void (*fn)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&metrics->lock);
    int err = 0;
    if (metrics->n_hooks == KP_METRICS_MAX_HOOKS)
        err = kp_error_set(KP_ETOOLARGE, "metrics: more than %d collect hooks", KP_METRICS_MAX_HOOKS);
    else
        metrics->hooks[metrics->n_hooks++] = (kp_metrics_hook){fn, ctx};
    pthread_mutex_unlock(&metrics->lock);
    return err;
}

void kp_metrics_remove_collect(kp_metrics *metrics, void (*fn)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&metrics->lock);
    size_t kept = 0;
    for (size_t i = 0; i < metrics->n_hooks; i++)
        if (metrics->hooks[i].fn != fn || metrics->hooks[i].ctx != ctx)
            metrics->hooks[kept++] = metrics->hooks[i];
    metrics->n_hooks = kept;
    pthread_mutex_unlock(&metrics->lock);
}

size_t kp_metrics_describe(kp_metrics *metrics, kp_metric_desc *out, size_t cap)
{
    pthread_mutex_lock(&metrics->lock);
    for (size_t i = 0; i < metrics->count && i < cap; i++) {
        const kp_metric *f = metrics->families[i];
        out[i] = (kp_metric_desc){f->name, f->help, f->type, (const char *const *)f->labels,
                                  f->n_labels};
    }
    size_t n = metrics->count;
    pthread_mutex_unlock(&metrics->lock);
    return n;
}

kp_metric *kp_metrics_find(kp_metrics *metrics, const char *name)
{
    kp_metric *found = NULL;
    pthread_mutex_lock(&metrics->lock);
    for (size_t i = 0; i < metrics->count && !found; i++)
        if (strcmp(metrics->families[i]->name, name) == 0) found = metrics->families[i];
    pthread_mutex_unlock(&metrics->lock);
    return found;
}

const char *kp_metric_type_name(enum kp_metric_type type)
{
    switch (type) {
    case KP_METRIC_COUNTER:
        return "counter";
    case KP_METRIC_GAUGE:
        return "gauge";
    case KP_METRIC_HISTOGRAM:
        return "histogram";
    case KP_METRIC_SUMMARY:
        return "summary";
    }
    return "untyped";
}
