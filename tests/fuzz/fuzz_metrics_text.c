/*
 * libFuzzer target for the metrics text: the /proc parsers of the process
 * collector (metrics/process.c) on any input fail or fill the figures, never
 * crash; any double prints (kp_metrics_format_value) as text that reads back
 * as the same double; and any label value, however odd, is escaped so that a
 * family with one series is exactly three lines (HELP, TYPE, the sample).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/process.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parsers(const char *text)
{
    kp_process_stats st;
    memset(&st, 0, sizeof(st));
    kp_metrics_process_parse_stat(text, 1000, 100, 4096, &st);
    kp_metrics_process_parse_netdev(text, &st);
}

static void value_round_trip(const uint8_t *data, size_t size)
{
    double v;
    if (size < sizeof(v))
        return;
    memcpy(&v, data, sizeof(v));
    kp_buf out = KP_BUF_INIT(64);
    if (kp_metrics_format_value(&out, v) < 0)
        abort();
    double back = strtod(kp_buf_cstr(&out), NULL);
    if (!(isnan(v) ? isnan(back) : back == v))
        abort(); /* Prometheus would read another number */
    kp_buf_free(&out);
}

static void label_escaping(const char *text)
{
    kp_metrics *m = kp_metrics_new();
    kp_metric *g;
    const char *labels[] = {"l"};
    if (kp_metrics_gauge(&g, m, "g", text, labels, 1) < 0)
        abort();
    kp_gauge_set(kp_metric_with(g, (const char *const[]){text}), 1);
    kp_buf out = KP_BUF_INIT(1 << 20);
    if (kp_metrics_write(m, &out) < 0)
        abort();
    size_t lines = 0;
    for (const char *p = kp_buf_cstr(&out); *p; p++)
        lines += *p == '\n';
    if (lines != 3)
        abort(); /* a newline in the help or the value escaped its line */
    kp_buf_free(&out);
    kp_metrics_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    parsers(text);
    value_round_trip(data, size);
    label_escaping(text);
    free(text);
    return 0;
}
