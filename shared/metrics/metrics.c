/*
 * The registry behind metrics.h. Families sit in an array guarded by the
 * registry's lock (registration is rare); each family finds its series
 * through a small open-addressing hash under its own lock, and each series
 * guards its values with a lock of its own so that a histogram's buckets,
 * sum and count are always read together.
 */
#include "metrics/metrics.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double kp_metrics_default_buckets[11] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                               0.5,   1,    2.5,   5,    10};
const double kp_metrics_latency_buckets[14] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                               0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};

struct kp_metric_series {
    pthread_mutex_t lock;
    const struct kp_metric *family; /* its bounds, for histograms */
    char **values;                  /* one per label */
    uint64_t hash;
    double value;      /* counter or gauge */
    double sum;        /* histogram */
    uint64_t count;    /* histogram */
    uint64_t *buckets; /* histogram: per bucket (not cumulative), +Inf last */
};

struct kp_metric {
    pthread_mutex_t lock;
    enum kp_metric_type type;
    char *name, *help;
    char *labels[KP_METRICS_MAX_LABELS];
    size_t n_labels;
    double bounds[KP_METRICS_MAX_BUCKETS];
    size_t n_bounds;
    kp_metric_series **series;
    size_t n_series, cap_series;
    size_t *slots; /* hash slots: index + 1, 0 empty */
    size_t n_slots;
};

struct kp_metrics {
    pthread_mutex_t lock;
    kp_metric **families;
    size_t count, cap;
};

kp_metrics *kp_metrics_new(void)
{
    kp_metrics *m = kp_xcalloc(1, sizeof(*m));
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

static void series_free(kp_metric_series *s, size_t n_labels)
{
    for (size_t i = 0; i < n_labels; i++)
        free(s->values[i]);
    free(s->values);
    free(s->buckets);
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
            (type == KP_METRIC_HISTOGRAM && strcmp(labels[i], "le") == 0))
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

static kp_metric_series *series_new(kp_metric *f, const char *const *values, uint64_t hash)
{
    kp_metric_series *s = kp_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    s->family = f;
    s->hash = hash;
    s->values = kp_xcalloc(f->n_labels ? f->n_labels : 1, sizeof(char *));
    for (size_t i = 0; i < f->n_labels; i++)
        s->values[i] = kp_xstrdup(values[i] ? values[i] : "");
    if (f->type == KP_METRIC_HISTOGRAM) s->buckets = kp_xcalloc(f->n_bounds + 1, sizeof(uint64_t));
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
    pthread_mutex_unlock(&metric->lock);
    return s;
}

void kp_metric_reset(kp_metric *metric)
{
    if (!metric) return;
    pthread_mutex_lock(&metric->lock);
    for (size_t i = 0; i < metric->n_series; i++)
        series_free(metric->series[i], metric->n_labels);
    metric->n_series = 0;
    if (metric->slots) memset(metric->slots, 0, metric->n_slots * sizeof(*metric->slots));
    pthread_mutex_unlock(&metric->lock);
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

void kp_histogram_observe(kp_metric_series *series, double value)
{
    if (!series || series->family->type != KP_METRIC_HISTOGRAM || isnan(value)) return;
    size_t i = bucket_index(series->family->bounds, series->family->n_bounds, value);
    pthread_mutex_lock(&series->lock);
    series->buckets[i]++;
    series->count++;
    series->sum += value;
    pthread_mutex_unlock(&series->lock);
}

double kp_metric_series_value(kp_metric_series *series)
{
    if (!series) return 0;
    pthread_mutex_lock(&series->lock);
    double v = series->family->type == KP_METRIC_HISTOGRAM ? (double)series->count : series->value;
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

/* ---- Prometheus text exposition ---- */

int kp_metrics_format_value(kp_buf *out, double value)
{
    if (isnan(value)) return kp_buf_puts(out, "NaN");
    if (isinf(value)) return kp_buf_puts(out, value > 0 ? "+Inf" : "-Inf");
    char text[40];
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

/* `name{a="x",b="y"` plus the optional `le` label, closed with "} ". */
static int put_series_name(kp_buf *out, const kp_metric *f, const kp_metric_series *s,
                           const char *suffix, const char *le)
{
    int err = kp_buf_printf(out, "%s%s", f->name, suffix);
    if (err == 0 && (f->n_labels || le)) err = kp_buf_putc(out, '{');
    for (size_t i = 0; i < f->n_labels && err == 0; i++) {
        err = kp_buf_printf(out, "%s%s=\"", i ? "," : "", f->labels[i]);
        if (err == 0) err = put_escaped(out, s->values[i], 1);
        if (err == 0) err = kp_buf_putc(out, '"');
    }
    if (err == 0 && le) err = kp_buf_printf(out, "%sle=\"%s\"", f->n_labels ? "," : "", le);
    if (err == 0 && (f->n_labels || le)) err = kp_buf_putc(out, '}');
    if (err == 0) err = kp_buf_putc(out, ' ');
    return err;
}

static int put_sample(kp_buf *out, const kp_metric *f, const kp_metric_series *s,
                      const char *suffix, const char *le, double value)
{
    int err = put_series_name(out, f, s, suffix, le);
    if (err == 0) err = kp_metrics_format_value(out, value);
    if (err == 0) err = kp_buf_putc(out, '\n');
    return err;
}

static int put_histogram(kp_buf *out, const kp_metric *f, const kp_metric_series *s)
{
    uint64_t cumulative = 0;
    int err = 0;
    for (size_t i = 0; i <= f->n_bounds && err == 0; i++) {
        cumulative += s->buckets[i];
        kp_buf le = KP_BUF_INIT(64);
        if (i < f->n_bounds)
            err = kp_metrics_format_value(&le, f->bounds[i]);
        else
            err = kp_buf_puts(&le, "+Inf");
        if (err == 0) err = put_sample(out, f, s, "_bucket", kp_buf_cstr(&le), (double)cumulative);
        kp_buf_free(&le);
    }
    if (err == 0) err = put_sample(out, f, s, "_sum", NULL, s->sum);
    if (err == 0) err = put_sample(out, f, s, "_count", NULL, (double)s->count);
    return err;
}

static const char *type_name(enum kp_metric_type type)
{
    switch (type) {
    case KP_METRIC_COUNTER:
        return "counter";
    case KP_METRIC_GAUGE:
        return "gauge";
    case KP_METRIC_HISTOGRAM:
        return "histogram";
    }
    return "untyped";
}

static int put_family(kp_buf *out, kp_metric *f)
{
    int err = kp_buf_printf(out, "# HELP %s ", f->name);
    if (err == 0) err = put_escaped(out, f->help, 0);
    if (err == 0) err = kp_buf_printf(out, "\n# TYPE %s %s\n", f->name, type_name(f->type));
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->n_series && err == 0; i++) {
        kp_metric_series *s = f->series[i];
        pthread_mutex_lock(&s->lock);
        if (f->type == KP_METRIC_HISTOGRAM)
            err = put_histogram(out, f, s);
        else
            err = put_sample(out, f, s, "", NULL, s->value);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&f->lock);
    return err;
}

int kp_metrics_write(kp_metrics *metrics, kp_buf *out)
{
    size_t start = out->len;
    int err = 0;
    pthread_mutex_lock(&metrics->lock);
    for (size_t i = 0; i < metrics->count && err == 0; i++)
        err = put_family(out, metrics->families[i]);
    pthread_mutex_unlock(&metrics->lock);
    if (err < 0 && out->data) {
        out->len = start;
        out->data[start] = '\0';
    }
    return err;
}
