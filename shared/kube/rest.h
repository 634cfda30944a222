/*
 * The Kubernetes REST client: one generic request function over libcurl, with
 * the things every call needs done the same way.
 *
 *   - Connections: each thread that calls the client gets its own curl easy
 *     handle, kept for keep-alive and never shared (libcurl's threading rule);
 *     a thread's handle goes back to a pool when the thread exits.
 *   - Authentication: bearer token (static, or a file re-read when it changes
 *     and at least every token_reread_ms, as the kubelet rotates projected
 *     service-account tokens) or a client certificate; TLS verified against
 *     the configured CA unless insecure-skip-tls-verify. Tokens, keys and
 *     Authorization headers never reach a log or an error message.
 *   - Limits: a client-side token bucket (QPS, burst) before every request,
 *     request and connect timeouts, response bodies in a capped buffer.
 *   - Errors: HTTP status -> KP_E* (404 KP_ENOTFOUND, 409 KP_ECONFLICT, 410
 *     KP_EGONE, 401 KP_EUNAUTHORIZED, 403 KP_EFORBIDDEN, 400 and 422
 *     KP_EINVALID, 408, 429 and 5xx KP_ERETRY, others KP_ERROR) with the
 *     message of the Status in the body; transport failures are KP_ERETRY
 *     (connection refused or reset), KP_ETIMEOUT or KP_EIO (TLS, set-up).
 *     Messages read: `GET /api/v1/namespaces/a/pods/b: 404: pods "b" not found`.
 *
 * The client is thread-safe. It does not own the config it was made from.
 * Typed helpers (get, list, create, patch, evict...) are in ops.h, watches in
 * watch.h.
 */
#ifndef KP_KUBE_REST_H
#define KP_KUBE_REST_H

#include "base/buf.h"
#include "base/clock.h"
#include "kube/config.h"
#include "kube/resources.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_kube_client kp_kube_client;

typedef struct kp_kube_client_opts {
    double qps;      /* requests per second; <= 0: no client-side limit */
    int burst;       /* bucket size */
    long timeout_ms; /* whole request, watches excepted */
    long connect_timeout_ms;
    size_t max_body;      /* response body cap (KP_ETOOLARGE beyond) */
    size_t max_line;      /* one watch event's cap */
    long token_reread_ms; /* re-read a token file at least this often */
    const char *user_agent;
    const kp_clock *clock; /* NULL: the system clock */
    /* Told of every request sent with kp_kube_do* (watches excepted), on the
     * requesting thread: its method, path (with the query), the HTTP status
     * (0 when no answer came) and how long it took. Must be quick. NULL: none. */
    void (*observe)(void *ctx, const char *method, const char *path, long status, int64_t took_ns);
    void *observe_ctx;
} kp_kube_client_opts;

/* Karpenter's defaults for QPS and burst (KUBE_CLIENT_QPS/BURST). */
#define KP_KUBE_CLIENT_OPTS_INIT                                                                   \
    {                                                                                              \
        200.0, 300, 30000, 10000, (size_t)256 << 20, (size_t)16 << 20, 60000, "karpenter-c", NULL, \
            NULL, NULL                                                                             \
    }

/* A client for `config`. `opts` NULL means the defaults. Fails (KP_EINVALID)
 * on a config it cannot use, or KP_EIO when a token file cannot be read. */
int kp_kube_client_new(kp_kube_client **out, const kp_kube_config *config,
                       const kp_kube_client_opts *opts);
/* Every thread must be done with the client. Accepts NULL, returns NULL. */
kp_kube_client *kp_kube_client_free(kp_kube_client *client);

/* The namespace of the config (its context's, or the Pod's). */
const char *kp_kube_client_namespace(const kp_kube_client *client);
/* The server's base URL. */
const char *kp_kube_client_server(const kp_kube_client *client);

/*
 * Cancellation of long calls (watches, lists, back-off sleeps) from another
 * thread: kp_kube_cancel_fire() wakes a watch at once and makes other
 * requests give up within about a second. One thread uses a token at a time;
 * firing is allowed from any thread.
 */
typedef struct kp_kube_cancel kp_kube_cancel;
kp_kube_cancel *kp_kube_cancel_new(void);
kp_kube_cancel *kp_kube_cancel_free(kp_kube_cancel *cancel);
void kp_kube_cancel_fire(kp_kube_cancel *cancel);
/* Clear a fired token so it can be used again. */
void kp_kube_cancel_reset(kp_kube_cancel *cancel);
bool kp_kube_cancel_fired(const kp_kube_cancel *cancel);
/* Sleep `ms` unless the token fires first; true when it fired. `cancel` may
 * be NULL (a plain sleep). */
bool kp_kube_cancel_sleep(kp_kube_cancel *cancel, int64_t ms);

typedef struct kp_kube_request {
    const char *method;       /* GET, POST, PUT, PATCH, DELETE */
    const char *path;         /* path and query: "/api/v1/pods?limit=500" */
    const char *body;         /* NULL: none */
    const char *content_type; /* of the body; NULL: application/json */
    kp_kube_cancel *cancel;   /* NULL: not cancellable */
} kp_kube_request;

/* Send a request. On 2xx, *out (when out is not NULL) receives the parsed
 * body, or NULL when the body is empty. Otherwise the mapped KP_E*. A body
 * that is not JSON on 2xx is KP_EINVALID. */
int kp_kube_do(kp_kube_client *client, const kp_kube_request *req, cJSON **out);

/* As kp_kube_do, but any HTTP status is a success: *status and `body` (which
 * the caller initialised with a cap, or (size_t)0 for the client's) hold the
 * answer. Fails only when no answer came. */
int kp_kube_do_raw(kp_kube_client *client, const kp_kube_request *req, long *status, kp_buf *body);

/* The KP_E* for an HTTP status, with the message set from a Status body (or
 * the body's start, or the status alone); `what` prefixes the message. */
int kp_kube_status_error(long status, const char *body, const char *what);

/* The resource to use for `res` on this server: PodDisruptionBudgets are
 * policy/v1 or, where the server lacks it (before 1.21), policy/v1beta1,
 * decided by discovery (GET /apis/policy/v1) once per client. */
int kp_kube_client_resource(kp_kube_client *client, enum kp_kube_res res,
                            const kp_kube_resource **out);
/* Whether the server serves policy/v1 (discovered once, then cached). */
int kp_kube_client_has_policy_v1(kp_kube_client *client, bool *out);

#endif
