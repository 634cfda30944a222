/* /metrics, /healthz, /readyz over plain HTTP (see http.h). */
#include "controller/http.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "webhook/deadline.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Each request must be done this long after its connection was accepted
 * (or the previous answer on it), however slowly its bytes trickle in. */
enum { REQUEST_DEADLINE_MS = 10000, MAX_CONNECTIONS = 1024 };

struct kp_ctrl_http {
    struct MHD_Daemon *daemon;
    kp_metrics *metrics;
    kp_ready_fn ready;
    void *ready_ctx;
    uint16_t port;
    kp_deadline_watch *deadlines;
};

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    kp_ctrl_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        kp_deadline_entry *e = kp_xcalloc(1, sizeof(*e));
        if (info) kp_deadline_watch_add(h->deadlines, e, info->connect_fd);
        *socket_context = e;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        kp_deadline_watch_remove(h->deadlines, *socket_context);
        free(*socket_context);
        *socket_context = NULL;
    }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode toe)
{
    kp_ctrl_http *h = cls;
    (void)state, (void)toe;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info && info->socket_context) kp_deadline_watch_restart(h->deadlines, info->socket_context);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type, const char *body,
                             size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *data_size, void **state)
{
    kp_ctrl_http *h = cls;
    (void)version, (void)data, (void)data_size, (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n", 19);
    if (strcmp(url, "/healthz") == 0)
        return reply(conn, MHD_HTTP_OK, "text/plain", "ok\n", 3);
    if (strcmp(url, "/readyz") == 0) {
        bool ok = !h->ready || h->ready(h->ready_ctx);
        return ok ? reply(conn, MHD_HTTP_OK, "text/plain", "ok\n", 3)
                  : reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "caches not synced\n", 18);
    }
    if (strcmp(url, "/metrics") == 0) {
        kp_buf out = KP_BUF_INIT(64u << 20);
        int err = kp_metrics_write(h->metrics, &out);
        enum MHD_Result ret = err < 0 ? reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "error\n", 6)
                                      : reply(conn, MHD_HTTP_OK, KP_METRICS_CONTENT_TYPE, kp_buf_cstr(&out), out.len);
        kp_buf_free(&out);
        return ret;
    }
    return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", 10);
}

int kp_ctrl_http_start(kp_ctrl_http **out, const char *address, uint16_t port, kp_metrics *metrics,
                       kp_ready_fn ready, void *ready_ctx)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (inet_pton(AF_INET, address ? address : "0.0.0.0", &sa.sin_addr) != 1)
        return kp_error_set(KP_EINVALID, "metrics/health address %s is not an IPv4 address", address);
    kp_ctrl_http *h = kp_xcalloc(1, sizeof(*h));
    h->metrics = metrics, h->ready = ready, h->ready_ctx = ready_ctx;
    h->deadlines = kp_deadline_watch_new(REQUEST_DEADLINE_MS);
    /* epoll, not select: a thousand slow clients must leave room for the
     * kubelet's probes, which select's FD_SETSIZE would not. */
    if (h->deadlines)
        h->daemon = MHD_start_daemon(
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, port, NULL, NULL,
            on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT,
            (unsigned)MAX_CONNECTIONS, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
    if (!h->daemon) {
        kp_deadline_watch_free(h->deadlines);
        free(h);
        return kp_error_set(KP_EIO, "cannot listen on %s:%u", address ? address : "0.0.0.0", port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : port;
    *out = h;
    return 0;
}

uint16_t kp_ctrl_http_port(const kp_ctrl_http *h)
{
    return h->port;
}

kp_ctrl_http *kp_ctrl_http_stop(kp_ctrl_http *h)
{
    if (!h)
        return NULL;
    MHD_stop_daemon(h->daemon);
    kp_deadline_watch_free(h->deadlines);
    free(h);
    return NULL;
}
