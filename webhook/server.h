/*
 * The HTTPS server of karpenter-webhook: libmicrohttpd (GnuTLS underneath)
 * with an internal thread pool on epoll, serving /validate, /mutate,
 * /healthz, /readyz and /metrics. Request logic is shared/webhook/handler.c;
 * this file only moves bytes and counts them.
 *
 * Certificate rotation without dropping a request: the listening socket is
 * ours and outlives daemons. kp_server_rotate() starts a second daemon with
 * the new certificate on the same socket, then stops the old one from
 * accepting (MHD_quiesce_daemon): connections not yet accepted wait in the
 * socket's backlog for the new daemon, and those the old daemon holds finish
 * their requests, with "Connection: close" so clients reconnect to the new
 * certificate. kp_server_reap() stops an old daemon once it has no
 * connections left (or its drain time is up).
 */
#ifndef KP_WEBHOOK_SERVER_H
#define KP_WEBHOOK_SERVER_H

#include "metrics/metrics.h"
#include "webhook/handler.h"
#include "webhook/policy.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_server_config {
    const char *address; /* numeric IPv4 or IPv6 address to listen on */
    uint16_t port;
    unsigned threads;            /* worker threads (each an epoll loop) */
    unsigned connection_timeout; /* seconds a connection may sit idle */
    unsigned request_timeout;    /* seconds one request may take to arrive */
    unsigned max_connections;
    kp_policy_slot *policy; /* borrowed */
    kp_metrics *metrics;    /* borrowed; the server registers its families */
    const kp_webhook_advisor *advisor; /* borrowed; NULL: no advice on Pods */
} kp_server_config;

typedef struct kp_server kp_server;

/* Listen and serve with this certificate (PEM text; copied). */
int kp_server_start(kp_server **out, const kp_server_config *config, const char *cert_pem,
                    const char *key_pem);
/* Serve new connections with a new certificate; the old daemon drains. */
int kp_server_rotate(kp_server *server, const char *cert_pem, const char *key_pem);
/* Stop old daemons that have drained (or all of them when `force`). */
void kp_server_reap(kp_server *server, bool force);
/* /readyz answers 200 only while ready. */
void kp_server_set_ready(kp_server *server, bool ready);
/* Port actually bound (useful with port 0). */
uint16_t kp_server_port(const kp_server *server);
/* Stop accepting, let in-flight requests finish (bounded), free. */
kp_server *kp_server_stop(kp_server *server);

#endif
