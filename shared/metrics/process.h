/*
 * Prometheus' process collector, which every Go program with client_golang
 * serves and operators alert on: CPU seconds, resident and virtual memory,
 * open and maximum file descriptors, start time and network bytes, read
 * from /proc when /metrics is read (a collect hook). Linux only; elsewhere
 * the families stay empty.
 */
#ifndef KP_METRICS_PROCESS_H
#define KP_METRICS_PROCESS_H

#include "metrics/metrics.h"

#include <stdint.h>

/* Register the nine process_* families into slots[0..8] and the hook that
 * fills them. `slots` must outlive the registry. */
int kp_metrics_process_init(kp_metric *slots[9], kp_metrics *registry);

/* One reading of /proc/self (exposed for tests). */
typedef struct kp_process_stats {
    double cpu_seconds;
    double resident_bytes, virtual_bytes, virtual_max_bytes;
    double open_fds, max_fds;
    double start_time_seconds;
    double rx_bytes, tx_bytes;
} kp_process_stats;

/* 0, or a negative KP_E* when /proc/self/stat cannot be read or parsed. */
int kp_metrics_process_read(kp_process_stats *out);

/* Parse the text of /proc/<pid>/stat (after "pid (comm) ") and /proc/stat's
 * btime and /proc/<pid>/net/dev into `out` (tests feed odd text). */
int kp_metrics_process_parse_stat(const char *stat, double boot_time, double ticks_per_sec, double page_size,
                          kp_process_stats *out);
int kp_metrics_process_parse_netdev(const char *netdev, kp_process_stats *out);

#endif
