/*
 * The client object, the generic request, and the mapping of HTTP answers to
 * KP_E* codes (see rest.h).
 */
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/rest_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
    return s ? kp_xstrdup(s) : NULL;
}

static char *memdup_or_null(const char *s, size_t len)
{
    if (!s) return NULL;
    char *d = kp_xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static void copy_config(kp_kube_client *c, const kp_kube_config *config)
{
    c->server = kp_xstrdup(config->server);
    c->namespace = kp_xstrdup(config->namespace ? config->namespace : "default");
    c->ca_file = dup_or_null(config->ca_file);
    c->ca_data = memdup_or_null(config->ca_data, config->ca_len);
    c->ca_len = config->ca_len;
    c->cert_file = dup_or_null(config->cert_file);
    c->cert_data = memdup_or_null(config->cert_data, config->cert_len);
    c->cert_len = config->cert_len;
    c->key_file = dup_or_null(config->key_file);
    c->key_data = memdup_or_null(config->key_data, config->key_len);
    c->key_len = config->key_len;
    c->insecure = config->insecure;
}

int kp_kube_client_new(kp_kube_client **out, const kp_kube_config *config,
                       const kp_kube_client_opts *opts)
{
    static const kp_kube_client_opts defaults = KP_KUBE_CLIENT_OPTS_INIT;
    if (!config->server || !*config->server)
        return kp_error_set(KP_EINVALID, "kube client: no server in the configuration");
    kp_kube_curl_init();
    kp_kube_client *c = kp_xcalloc(1, sizeof(*c));
    c->opts = opts ? *opts : defaults;
    c->clock = c->opts.clock ? c->opts.clock : kp_clock_system();
    c->user_agent = kp_xstrdup(c->opts.user_agent ? c->opts.user_agent : defaults.user_agent);
    c->policy_v1 = -1;
    copy_config(c, config);
    pthread_mutex_init(&c->lock, NULL);
    kp_ratelimit_init(&c->limit, c->opts.qps, c->opts.burst, c->clock->monotonic(c->clock));
    int err = kp_kube_auth_init(&c->auth, config);
    c->auth.token_read_ns = c->clock->monotonic(c->clock);
    if (!err) err = kp_kube_handles_init(c);
    if (err < 0) {
        kp_kube_client_free(c);
        return err;
    }
    *out = c;
    return 0;
}

kp_kube_client *kp_kube_client_free(kp_kube_client *c)
{
    if (!c) return NULL;
    kp_kube_handles_free(c);
    kp_kube_auth_destroy(&c->auth);
    kp_ratelimit_destroy(&c->limit);
    pthread_mutex_destroy(&c->lock);
    free(c->server);
    free(c->namespace);
    free(c->user_agent);
    free(c->ca_file);
    free(c->ca_data);
    free(c->cert_file);
    free(c->cert_data);
    free(c->key_file);
    if (c->key_data) explicit_bzero(c->key_data, c->key_len);
    free(c->key_data);
    free(c);
    return NULL;
}

const char *kp_kube_client_namespace(const kp_kube_client *c)
{
    return c->namespace;
}

const char *kp_kube_client_server(const kp_kube_client *c)
{
    return c->server;
}

void kp_kube_throttle(kp_kube_client *c, kp_kube_cancel *cancel)
{
    int64_t wait = kp_ratelimit_reserve(&c->limit, c->clock->monotonic(c->clock));
    if (wait > 0) kp_kube_cancel_sleep(cancel, (wait + KP_NS_PER_MS - 1) / KP_NS_PER_MS);
}

int kp_kube_curl_error(CURLcode rc, const kp_kube_handle *h, const kp_kube_request *req)
{
    const char *why = h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc);
    int code;
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        code = KP_ETIMEOUT;
        break;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        code = KP_ERETRY;
        break;
    case CURLE_ABORTED_BY_CALLBACK:
        code = KP_ERETRY;
        why = "cancelled";
        break;
    default:
        code = KP_EIO;
        break;
    }
    return kp_error_set(code, "%s %s: %s", req->method, req->path, why);
}

typedef struct sink {
    kp_buf *buf;
    int err;
} sink;

static size_t write_body(char *data, size_t size, size_t n, void *ctx)
{
    sink *s = ctx;
    if (kp_buf_append(s->buf, data, size * n) < 0) {
        s->err = KP_ETOOLARGE;
        return 0;
    }
    return size * n;
}

static int perform(kp_kube_handle *h, const kp_kube_request *req, long *status, kp_buf *body)
{
    struct curl_slist *headers = NULL;
    int err = kp_kube_handle_prepare(h, req, h->client->opts.timeout_ms, &headers);
    if (err < 0) return err;
    sink s = {body, 0};
    curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, write_body);
    curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, &s);
    CURLcode rc = curl_easy_perform(h->easy);
    kp_kube_headers_free(headers);
    if (s.err)
        return kp_error_set(KP_ETOOLARGE, "%s %s: response larger than %zu bytes", req->method,
                            req->path, body->max);
    if (rc != CURLE_OK) return kp_kube_curl_error(rc, h, req);
    curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

int kp_kube_do_raw(kp_kube_client *c, const kp_kube_request *req, long *status, kp_buf *body)
{
    if (!body->max) body->max = c->opts.max_body;
    kp_kube_throttle(c, req->cancel);
    if (kp_kube_cancel_fired(req->cancel))
        return kp_error_set(KP_ERETRY, "%s %s: cancelled", req->method, req->path);
    kp_kube_handle *h = kp_kube_handle_acquire(c);
    if (!h)
        return kp_error_set(KP_EIO, "%s %s: cannot create a curl handle", req->method, req->path);
    int64_t start = c->clock->monotonic(c->clock);
    long code = 0;
    int err = perform(h, req, &code, body);
    kp_kube_handle_release(h);
    if (kp_log_enabled(KP_LOG_DEBUG)) {
        char st[16], ms[24];
        snprintf(st, sizeof(st), "%ld", code);
        snprintf(ms, sizeof(ms), "%lld",
                 (long long)((c->clock->monotonic(c->clock) - start) / KP_NS_PER_MS));
        KP_LOG(KP_LOG_DEBUG, "kube", "request", "method", req->method, "path", req->path, "status",
               st, "ms", ms);
    }
    if (!err) *status = code;
    return err;
}

int kp_kube_do(kp_kube_client *c, const kp_kube_request *req, cJSON **out)
{
    return kp_kube_do_counted(c, req, out, NULL);
}

int kp_kube_do_counted(kp_kube_client *c, const kp_kube_request *req, cJSON **out, size_t *bytes)
{
    kp_buf body = KP_BUF_INIT(c->opts.max_body);
    long status = 0;
    char what[512];
    int err = kp_kube_do_raw(c, req, &status, &body);
    if (err < 0) goto done;
    snprintf(what, sizeof(what), "%s %s", req->method, req->path);
    if (status < 200 || status > 299) {
        err = kp_kube_status_error(status, kp_buf_cstr(&body), what);
        goto done;
    }
    cJSON *json = NULL;
    if (bytes) *bytes = body.len;
    if (body.len && !(json = cJSON_ParseWithLength(body.data, body.len))) {
        err = kp_error_set(KP_EINVALID, "%s: the response is not JSON", what);
        goto done;
    }
    if (out)
        *out = json;
    else
        cJSON_Delete(json);
done:
    kp_buf_free(&body);
    return err;
}

static int status_code(long status)
{
    switch (status) {
    case 400:
        return KP_EINVALID;
    case 401:
        return KP_EUNAUTHORIZED;
    case 403:
        return KP_EFORBIDDEN;
    case 404:
        return KP_ENOTFOUND;
    case 409:
        return KP_ECONFLICT;
    case 410:
        return KP_EGONE;
    case 422:
        return KP_EINVALID;
    case 408:
    case 429:
        return KP_ERETRY;
    default:
        return status >= 500 && status <= 599 ? KP_ERETRY : KP_ERROR;
    }
}

/* The start of a body that is not a Status, on one line, printable. */
static void body_excerpt(const char *body, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = body; *p && n + 1 < size && n < 200; p++)
        out[n++] = isprint((unsigned char)*p) ? *p : ' ';
    out[n] = '\0';
}

int kp_kube_status_error(long status, const char *body, const char *what)
{
    int code = status_code(status);
    cJSON *json = body && *body ? cJSON_Parse(body) : NULL;
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(json, "message");
    char excerpt[256] = "";
    if (cJSON_IsString(msg) && *msg->valuestring)
        kp_error_set(code, "%s: %ld: %s", what, status, msg->valuestring);
    else if (body && *body && (body_excerpt(body, excerpt, sizeof(excerpt)), *excerpt))
        kp_error_set(code, "%s: %ld: %s", what, status, excerpt);
    else
        kp_error_set(code, "%s: HTTP status %ld", what, status);
    cJSON_Delete(json);
    return code;
}

int kp_kube_client_has_policy_v1(kp_kube_client *c, bool *out)
{
    pthread_mutex_lock(&c->lock);
    int known = c->policy_v1;
    pthread_mutex_unlock(&c->lock);
    if (known < 0) {
        kp_kube_request req = {"GET", "/apis/policy/v1", NULL, NULL, NULL};
        int err = kp_kube_do(c, &req, NULL);
        if (err < 0 && err != KP_ENOTFOUND) return kp_error_wrap(err, "discovering policy/v1");
        known = err == 0;
        pthread_mutex_lock(&c->lock);
        c->policy_v1 = known;
        pthread_mutex_unlock(&c->lock);
    }
    *out = known == 1;
    return 0;
}

int kp_kube_client_resource(kp_kube_client *c, enum kp_kube_res res, const kp_kube_resource **out)
{
    const kp_kube_resource *r = kp_kube_resource_get(res);
    if (!r) return kp_error_set(KP_EINVALID, "unknown resource %d", (int)res);
    if (res == KP_RES_PDB) {
        bool v1 = true;
        int err = kp_kube_client_has_policy_v1(c, &v1);
        if (err < 0) return err;
        if (!v1) r = kp_kube_resource_pdb_v1beta1();
    }
    *out = r;
    return 0;
}
