/*
 * client-go's request metrics, as operatorpkg registers them for Karpenter:
 * client_go_request_total{code, method} and
 * client_go_request_duration_seconds{verb, group, version, kind, subresource}
 * for the controller's API-server requests (watch streams excepted).
 */
#ifndef KP_CONTROLLER_CLIENT_METRICS_H
#define KP_CONTROLLER_CLIENT_METRICS_H

#include "controller/metrics_ctrl.h"

#include <stddef.h>
#include <stdint.h>

/* A kp_kube_client_opts.observe hook; `ctx` is the kp_ctrl_metrics. */
void kp_client_metrics_observe(void *ctx, const char *method, const char *path, long status, int64_t took_ns);

/* The labels of one request path, as operatorpkg reads client-go's URL. */
typedef struct kp_client_request_labels {
    char verb[16], group[128], version[32], kind[128], subresource[64];
} kp_client_request_labels;

/* False for a path that names no resource ("/version", "/apis"). */
bool kp_client_request_labels_of(const char *method, const char *path, kp_client_request_labels *out);

#endif
