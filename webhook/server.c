#include "server.h"

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "webhook/deadline.h"
#include "webhook/handler.h"
#include "webhook/review.h"

#include <microhttpd.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { DRAIN_SLACK_SEC = 2, MAX_GENERATIONS = 8 };

/* TLS 1.3, and TLS 1.2 with ECDHE key exchange and AEAD ciphers only: no
 * static-RSA or finite-field DH exchange, no CBC or stream ciphers. */
#define KP_SERVER_TLS_PRIORITIES                                                                   \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-CIPHER-ALL:"     \
    "+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD"

/* One MHD daemon and the certificate it serves. */
typedef struct generation {
    struct MHD_Daemon *daemon;
    struct kp_server *server;
    char *cert, *key;
    atomic_bool draining;
    int64_t drain_deadline_ns;
} generation;

struct kp_server {
    kp_server_config config;
    int listen_fd;
    uint16_t port;
    atomic_bool ready;
    generation *current;
    generation *old[MAX_GENERATIONS]; /* draining */
    size_t n_old;
    kp_metric *requests, *latency;
    kp_deadline_watch *deadlines; /* shared by every generation */
};

enum route { ROUTE_NONE = 0, ROUTE_VALIDATE, ROUTE_MUTATE };

/* Per TCP connection. The buffers and the arena live for one request only:
 * a keep-alive connection that sent a 3 MiB review must not keep 3 MiB (and
 * the reply) while it sits idle, times a thousand connections. */
typedef struct conn_state {
    kp_deadline_entry deadline;
    kp_buf body, out;
    kp_arena *arena;
    enum route route;
    bool too_large;
    int64_t start_ns;
} conn_state;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void conn_release(conn_state *cs)
{
    kp_buf_free(&cs->body);
    kp_buf_free(&cs->out);
    cs->arena = kp_arena_free(cs->arena);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    kp_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_state *cs = kp_xcalloc(1, sizeof(*cs));
        kp_buf_init(&cs->body, KP_REVIEW_MAX_BYTES);
        kp_buf_init(&cs->out, KP_WEBHOOK_MAX_RESPONSE);
        if (info) kp_deadline_watch_add(s->deadlines, &cs->deadline, info->connect_fd);
        *socket_context = cs;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        conn_state *cs = *socket_context;
        /* Before MHD closes the socket, so the watch never sees a stale descriptor. */
        kp_deadline_watch_remove(s->deadlines, &cs->deadline);
        conn_release(cs);
        free(cs);
        *socket_context = NULL;
    }
}

/* A request is over (answered, or its connection failed): free its memory
 * and give the next request on the connection the full time again. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    kp_server *s = cls;
    conn_state *cs = *req_cls;
    (void)c;
    (void)toe;
    if (!cs) return;
    conn_release(cs);
    kp_deadline_watch_restart(s->deadlines, &cs->deadline);
    *req_cls = NULL;
}

static conn_state *state_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* The body lives in the connection's buffer until the next request on it,
 * which MHD reads only after this response has gone out. */
static enum MHD_Result send_buffer(generation *g, struct MHD_Connection *c, unsigned status,
                                   const kp_buf *body, const char *content_type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        body->len, body->len ? body->data : (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    /* An error answered before the body was read leaves the framing in doubt: close. */
    if (atomic_load(&g->draining) || status >= 400)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_status(generation *g, struct MHD_Connection *c, conn_state *cs,
                                   unsigned status, const char *reason, const char *message)
{
    kp_buf_reset(&cs->out);
    /* A body that does not fit is not sent cut short: the connection closes. */
    if (kp_review_status_write(&cs->out, (int)status, reason, message) < 0) return MHD_NO;
    return send_buffer(g, c, status, &cs->out, "application/json");
}

static enum MHD_Result send_text(generation *g, struct MHD_Connection *c, conn_state *cs,
                                 unsigned status, const char *text)
{
    kp_buf_reset(&cs->out);
    if (kp_buf_puts(&cs->out, text) < 0) return MHD_NO;
    return send_buffer(g, c, status, &cs->out, "text/plain; charset=utf-8");
}

static void observe(kp_server *s, enum route route, const kp_webhook_outcome *o, int64_t start)
{
    const char *labels[4] = {route == ROUTE_VALIDATE ? "validate" : "mutate", o->kind, o->operation,
                             o->result};
    kp_counter_inc(kp_metric_with(s->requests, labels));
    kp_histogram_observe(kp_metric_with(s->latency, labels), (double)(now_ns() - start) / 1e9);
}

static enum MHD_Result admit(generation *g, struct MHD_Connection *c, conn_state *cs)
{
    kp_server *s = g->server;
    kp_webhook_outcome outcome;
    kp_buf_reset(&cs->out);
    int err = 0;
    if (cs->too_large) {
        outcome = (kp_webhook_outcome){413, "none", "none", "rejected", false};
        err = kp_review_status_write(&cs->out, 413, "RequestEntityTooLarge",
                                     "request body is over the limit of 3 MiB");
    } else {
        kp_policy *policy = kp_policy_slot_get(s->config.policy);
        if (!cs->arena) cs->arena = kp_arena_new();
        kp_webhook_handle_advised(policy, s->config.advisor,
                                  cs->route == ROUTE_VALIDATE ? KP_WEBHOOK_VALIDATE : KP_WEBHOOK_MUTATE,
                                  cs->body.data, cs->body.len, cs->arena, &cs->out, &outcome);
        kp_policy_unref(policy);
        cs->arena = kp_arena_free(cs->arena);
        kp_buf_free(&cs->body);
    }
    observe(s, cs->route, &outcome, cs->start_ns);
    if (err < 0) return MHD_NO; /* no body cut short: the connection closes */
    if (outcome.http_status != 200)
        KP_LOG(KP_LOG_DEBUG, "webhook", "request rejected", "status",
               outcome.http_status == 413 ? "413" : "4xx", "body", kp_buf_cstr(&cs->out));
    return send_buffer(g, c, (unsigned)outcome.http_status, &cs->out, "application/json");
}

static enum MHD_Result serve_get(generation *g, struct MHD_Connection *c, conn_state *cs,
                                 const char *url)
{
    kp_server *s = g->server;
    if (strcmp(url, "/healthz") == 0) return send_text(g, c, cs, 200, "ok\n");
    if (strcmp(url, "/readyz") == 0)
        return atomic_load(&s->ready) ? send_text(g, c, cs, 200, "ok\n")
                                      : send_text(g, c, cs, 503, "not ready\n");
    kp_buf_reset(&cs->out);
    if (kp_metrics_write(s->config.metrics, &cs->out) < 0)
        return send_text(g, c, cs, 500, "metrics too large\n");
    return send_buffer(g, c, 200, &cs->out, KP_METRICS_CONTENT_TYPE);
}

static bool is_get_route(const char *url)
{
    return strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0 ||
           strcmp(url, "/metrics") == 0;
}

typedef struct framing {
    const char *length; /* the first Content-Length */
    unsigned n_length, n_encoding;
    bool conflict;
} framing;

static enum MHD_Result note_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    framing *f = cls;
    (void)kind;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        size_t digits = strspn(value, "0123456789");
        if (digits == 0 || value[digits] || (f->length && strcmp(f->length, value) != 0))
            f->conflict = true;
        if (!f->length) f->length = value;
        f->n_length++;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->n_encoding++;
    }
    return MHD_YES;
}

/* How the body is delimited must be beyond doubt: two lengths that differ,
 * or a length and a transfer coding, are how requests are smuggled past a
 * proxy that reads the framing the other way (RFC 9112, section 6.3). */
static const char *framing_problem(struct MHD_Connection *c)
{
    framing f = {NULL, 0, 0, false};
    MHD_get_connection_values(c, MHD_HEADER_KIND, note_framing, &f);
    if (f.conflict) return "conflicting or malformed Content-Length headers";
    if (f.n_length && f.n_encoding)
        return "both Content-Length and Transfer-Encoding are set; send one of them";
    if (f.n_encoding > 1) return "more than one Transfer-Encoding header";
    return NULL;
}

/* First call for a request: headers only. Route it, and answer at once
 * whatever needs no body. */
static enum MHD_Result begin(generation *g, struct MHD_Connection *c, conn_state *cs,
                             const char *url, const char *method)
{
    bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, "HEAD") == 0;
    cs->start_ns = now_ns();
    cs->too_large = false;
    cs->route = ROUTE_NONE;
    kp_buf_reset(&cs->body);
    if (is_get_route(url))
        return get ? serve_get(g, c, cs, url)
                   : send_status(g, c, cs, 405, "MethodNotAllowed", "use GET");
    if (strcmp(url, "/validate") != 0 && strcmp(url, "/mutate") != 0)
        return send_status(g, c, cs, 404, "NotFound", "no such endpoint");
    if (!post) return send_status(g, c, cs, 405, "MethodNotAllowed", "use POST");
    const char *problem = framing_problem(c);
    if (problem) return send_status(g, c, cs, 400, "BadRequest", problem);
    const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (length && strtoull(length, NULL, 10) > KP_REVIEW_MAX_BYTES)
        return send_status(g, c, cs, 413, "RequestEntityTooLarge",
                           "request body is over the limit of 3 MiB");
    cs->route = strcmp(url, "/validate") == 0 ? ROUTE_VALIDATE : ROUTE_MUTATE;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **req_cls)
{
    generation *g = cls;
    conn_state *cs = state_of(c);
    (void)version;
    if (!cs) return MHD_NO;
    if (!*req_cls) {
        *req_cls = cs;
        return begin(g, c, cs, url, method);
    }
    if (cs->route == ROUTE_NONE) return MHD_YES; /* answered already; MHD discards the rest */
    if (*size) {
        int64_t limit = (int64_t)g->server->config.request_timeout * 1000000000;
        if (now_ns() - cs->start_ns > limit)
            return MHD_NO; /* a client this slow is closed, not waited for */
        if (!cs->too_large && kp_buf_append(&cs->body, data, *size) < 0) cs->too_large = true;
        *size = 0;
        return MHD_YES;
    }
    return admit(g, c, cs);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    if (!kp_log_enabled(KP_LOG_DEBUG)) return;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    kp_log_write(KP_LOG_DEBUG, "webhook.http", msg, (const char *)0);
}

static generation *generation_start(kp_server *s, const char *cert, const char *key)
{
    generation *g = kp_xcalloc(1, sizeof(*g));
    g->server = s;
    g->cert = kp_xstrdup(cert);
    g->key = kp_xstrdup(key);
    atomic_init(&g->draining, false);
    unsigned flags = MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    g->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, g, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd, MHD_OPTION_HTTPS_MEM_CERT, g->cert,
        MHD_OPTION_HTTPS_MEM_KEY, g->key, MHD_OPTION_HTTPS_PRIORITIES, KP_SERVER_TLS_PRIORITIES,
        MHD_OPTION_THREAD_POOL_SIZE, s->config.threads, MHD_OPTION_CONNECTION_TIMEOUT,
        s->config.connection_timeout, MHD_OPTION_CONNECTION_LIMIT, s->config.max_connections,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        s, MHD_OPTION_END);
    if (!g->daemon) {
        free(g->cert);
        free(g->key);
        free(g);
        kp_error_set(KP_ERROR, "the HTTPS server did not start (is the certificate usable?)");
        return NULL;
    }
    return g;
}

static void generation_stop(generation *g)
{
    MHD_stop_daemon(g->daemon);
    free(g->cert);
    free(g->key);
    free(g);
}

static int open_listener(const char *address, uint16_t port, int *fd_out, uint16_t *port_out)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%u", (unsigned)port);
    if (getaddrinfo(address, service, &hints, &ai) != 0 || !ai)
        return kp_error_set(KP_EINVALID, "--address %s is not a numeric IP address", address);
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
    int ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
             bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0;
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    if (!ok || getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int saved = errno;
        if (fd >= 0) close(fd);
        return kp_error_set(KP_EIO, "listening on %s port %u: %s", address, (unsigned)port,
                            strerror(saved));
    }
    *port_out = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                               : ((struct sockaddr_in *)&sa)->sin_port);
    *fd_out = fd;
    return 0;
}

static int register_metrics(kp_server *s)
{
    static const char *const labels[] = {"endpoint", "kind", "operation", "result"};
    int err =
        kp_metrics_counter(&s->requests, s->config.metrics, "karpenter_webhook_requests_total",
                           "Admission requests handled, by endpoint, kind, operation and "
                           "result (allowed, patched, denied, rejected).",
                           labels, 4);
    if (err == 0)
        err = kp_metrics_histogram(&s->latency, s->config.metrics,
                                   "karpenter_webhook_request_duration_seconds",
                                   "Time from the first byte of an admission request to its "
                                   "response, in seconds.",
                                   labels, 4, kp_metrics_latency_buckets, 14);
    return err;
}

int kp_server_start(kp_server **out, const kp_server_config *config, const char *cert_pem,
                    const char *key_pem)
{
    kp_server *s = kp_xcalloc(1, sizeof(*s));
    s->config = *config;
    atomic_init(&s->ready, true);
    int err = register_metrics(s);
    if (err == 0 && !(s->deadlines = kp_deadline_watch_new(
                          (int64_t)config->request_timeout * 1000)))
        err = kp_error_set(KP_ERROR, "cannot start the request deadline thread");
    if (err == 0) err = open_listener(config->address, config->port, &s->listen_fd, &s->port);
    if (err < 0) {
        kp_deadline_watch_free(s->deadlines);
        free(s);
        return err;
    }
    s->current = generation_start(s, cert_pem, key_pem);
    if (!s->current) {
        close(s->listen_fd);
        kp_deadline_watch_free(s->deadlines);
        free(s);
        return KP_ERROR;
    }
    *out = s;
    return 0;
}

int kp_server_rotate(kp_server *s, const char *cert_pem, const char *key_pem)
{
    if (s->n_old == MAX_GENERATIONS) kp_server_reap(s, true);
    generation *next = generation_start(s, cert_pem, key_pem);
    if (!next) return KP_ERROR;
    generation *old = s->current;
    s->current = next;
    /* The socket now belongs to `next`; the old daemon only stops using it. */
    MHD_quiesce_daemon(old->daemon);
    atomic_store(&old->draining, true);
    old->drain_deadline_ns =
        now_ns() + (int64_t)(s->config.connection_timeout + DRAIN_SLACK_SEC) * 1000000000;
    s->old[s->n_old++] = old;
    return 0;
}

static unsigned connections(const generation *g)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(g->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

void kp_server_reap(kp_server *s, bool force)
{
    size_t kept = 0;
    int64_t now = now_ns();
    for (size_t i = 0; i < s->n_old; i++) {
        generation *g = s->old[i];
        if (force || connections(g) == 0 || now >= g->drain_deadline_ns)
            generation_stop(g);
        else
            s->old[kept++] = g;
    }
    s->n_old = kept;
}

void kp_server_set_ready(kp_server *s, bool ready)
{
    atomic_store(&s->ready, ready);
}

uint16_t kp_server_port(const kp_server *s)
{
    return s->port;
}

kp_server *kp_server_stop(kp_server *s)
{
    if (!s) return NULL;
    atomic_store(&s->ready, false);
    /* Drain the current daemon like a rotated one: no new connections,
     * in-flight requests finish, bounded by the drain time. */
    MHD_quiesce_daemon(s->current->daemon);
    atomic_store(&s->current->draining, true);
    s->current->drain_deadline_ns =
        now_ns() + (int64_t)(s->config.connection_timeout + DRAIN_SLACK_SEC) * 1000000000;
    s->old[s->n_old++] = s->current;
    s->current = NULL;
    while (s->n_old) {
        kp_server_reap(s, false);
        if (s->n_old) usleep(20000);
    }
    close(s->listen_fd);
    kp_deadline_watch_free(s->deadlines);
    free(s);
    return NULL;
}
