/*
 * The controller's HTTP endpoints (plain HTTP, as Karpenter serves them
 * inside the Pod): /metrics in Prometheus text, /healthz (the process is
 * alive) and /readyz (its caches are synced). One libmicrohttpd daemon with
 * its own thread; port 0 picks a free one.
 */
#ifndef KP_CONTROLLER_HTTP_H
#define KP_CONTROLLER_HTTP_H

#include "metrics/metrics.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_ctrl_http kp_ctrl_http;

/* `ready` is polled on /readyz. */
typedef bool (*kp_ready_fn)(void *ctx);

int kp_ctrl_http_start(kp_ctrl_http **out, const char *address, uint16_t port, kp_metrics *metrics,
                       kp_ready_fn ready, void *ready_ctx);
uint16_t kp_ctrl_http_port(const kp_ctrl_http *h);
kp_ctrl_http *kp_ctrl_http_stop(kp_ctrl_http *h);

#endif
