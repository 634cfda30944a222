/*
 * What the registry (metrics.c) and the text exposition (exposition.c) share:
 * the layout of families and series. Not part of the interface.
 */
#ifndef KP_METRICS_METRICS_INTERNAL_H
#define KP_METRICS_METRICS_INTERNAL_H

#include "metrics/metrics.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* One observation a summary keeps: its value and when (monotonic ns). */
typedef struct kp_summary_obs {
    double value;
    int64_t at_ns;
} kp_summary_obs;

struct kp_metric_series {
    pthread_mutex_t lock;
    const struct kp_metric *family; /* its bounds, for histograms */
    char **values;                  /* one per label, inside the series' own block */
    uint64_t hash;
    uint64_t epoch;    /* the family's epoch when last looked up (mark and sweep) */
    double value;      /* counter or gauge */
    double sum;        /* histogram, summary */
    uint64_t count;    /* histogram, summary */
    uint64_t *buckets; /* histogram: per bucket (not cumulative), +Inf last */
    kp_summary_obs *window; /* summary: a ring of the latest observations */
    size_t window_next, window_len;
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
    uint64_t epoch;
    bool full_logged; /* the series cap was reached and said so */
};

typedef struct kp_metrics_hook {
    void (*fn)(void *ctx);
    void *ctx;
} kp_metrics_hook;

struct kp_metrics {
    pthread_mutex_t lock;
    kp_metric **families;
    size_t count, cap;
    kp_metrics_hook hooks[KP_METRICS_MAX_HOOKS];
    size_t n_hooks;
};

/* The summary quantiles, in output order. */
extern const double kp_metrics_quantiles[5];

/* Monotonic nanoseconds (summary windows age by it). */
int64_t kp_metrics_now_ns(void);

/* Write one family as Prometheus text (the family's lock is taken inside). */
int kp_metrics_put_family(kp_buf *out, kp_metric *f);

#endif
