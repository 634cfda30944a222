#include "cloud/aws/aws_http.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/shared_config.h"
#include "cloud/aws/sigv4.h"

enum {
    DEFAULT_ATTEMPTS = 3,
    DEFAULT_BACKOFF_BASE_MS = 1000,
    DEFAULT_BACKOFF_MAX_MS = 20000,
    DEFAULT_TIMEOUT_MS = 60000,
    DEFAULT_CONNECT_TIMEOUT_MS = 10000,
    URL_MAX = 512,
};
#define DEFAULT_MAX_RESPONSE ((size_t)64 << 20)

struct kp_aws_client {
    CURL *curl;
    char region[64];
    char *endpoint_url;
    kp_aws_endpoint *endpoints; /* strings owned */
    size_t n_endpoints;
    kp_aws_credentials *credentials;
    bool owns_credentials;
    kp_aws_client_options opts; /* numbers filled with defaults; pointers above */
    kp_aws_error last;
    uint64_t rng;
    char curl_error[CURL_ERROR_SIZE];
};

/* Per-attempt transfer state. */
typedef struct transfer {
    kp_buf body;
    char request_id[128];
    char error_type[128]; /* x-amzn-ErrorType (REST-JSON services) */
} transfer;

typedef struct service_info {
    const char *name;     /* signing name */
    const char *env;      /* AWS_ENDPOINT_URL_<env> */
    const char *prefix;   /* host is <prefix>.<region>.amazonaws.com; NULL: global_host */
    const char *global_host;
} service_info;

static const service_info SERVICES[] = {
    {"ec2", "EC2", "ec2", NULL},
    {"sqs", "SQS", "sqs", NULL},
    {"ssm", "SSM", "ssm", NULL},
    {"pricing", "PRICING", "api.pricing", NULL},
    {"iam", "IAM", NULL, "iam.amazonaws.com"},
    {"sts", "STS", "sts", NULL},
    {"eks", "EKS", "eks", NULL},
};

static const service_info *find_service(const char *name)
{
    for (size_t i = 0; i < sizeof(SERVICES) / sizeof(SERVICES[0]); i++)
        if (strcmp(SERVICES[i].name, name) == 0)
            return &SERVICES[i];
    return NULL;
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int resolve_region(char *out, size_t size, const char *explicit_region)
{
    const char *r = explicit_region && *explicit_region ? explicit_region : NULL;
    if (!r)
        r = env_nonempty("AWS_REGION");
    if (!r)
        r = env_nonempty("AWS_DEFAULT_REGION");
    kp_arena *a = kp_arena_new();
    int err = 0;
    kp_aws_profile prof;
    if (!r && (err = kp_aws_profile_load(&prof, a, NULL)) == 0)
        r = prof.region;
    if (err == 0 && !r)
        err = kp_error_set(KP_EINVALID, "no AWS region: set it explicitly, or AWS_REGION, "
                                        "or region in the shared config file");
    if (err == 0 && strlen(r) >= size)
        err = kp_error_set(KP_EINVALID, "AWS region name too long");
    if (err == 0)
        snprintf(out, size, "%s", r);
    kp_arena_free(a);
    return err;
}

static void copy_endpoints(kp_aws_client *c, const kp_aws_client_options *o)
{
    c->endpoint_url = o->endpoint_url ? kp_xstrdup(o->endpoint_url) : NULL;
    c->n_endpoints = o->n_endpoints;
    c->endpoints = kp_xcalloc(o->n_endpoints ? o->n_endpoints : 1, sizeof(kp_aws_endpoint));
    for (size_t i = 0; i < o->n_endpoints; i++) {
        c->endpoints[i].service = kp_xstrdup(o->endpoints[i].service);
        c->endpoints[i].url = kp_xstrdup(o->endpoints[i].url);
    }
}

static void fill_defaults(kp_aws_client_options *o)
{
    if (o->max_attempts <= 0)
        o->max_attempts = DEFAULT_ATTEMPTS;
    if (o->backoff_base_ms <= 0)
        o->backoff_base_ms = DEFAULT_BACKOFF_BASE_MS;
    if (o->backoff_max_ms <= 0)
        o->backoff_max_ms = DEFAULT_BACKOFF_MAX_MS;
    if (o->timeout_ms <= 0)
        o->timeout_ms = DEFAULT_TIMEOUT_MS;
    if (o->connect_timeout_ms <= 0)
        o->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    if (o->max_response_bytes == 0)
        o->max_response_bytes = DEFAULT_MAX_RESPONSE;
    if (!o->clock)
        o->clock = kp_clock_system();
}

int kp_aws_client_new(kp_aws_client **out, const kp_aws_client_options *opts)
{
    kp_aws_client_options o = KP_AWS_CLIENT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    char region[64];
    int err = resolve_region(region, sizeof(region), o.region);
    if (err < 0)
        return err;
    kp_aws_client *c = kp_xcalloc(1, sizeof(*c));
    memcpy(c->region, region, sizeof(region));
    copy_endpoints(c, &o);
    c->credentials = o.credentials;
    if (!c->credentials && !o.anonymous) {
        kp_aws_credentials_options co = KP_AWS_CREDENTIALS_OPTIONS_INIT;
        co.region = c->region;
        co.clock = o.clock;
        err = kp_aws_credentials_new(&c->credentials, &co);
        c->owns_credentials = true;
    }
    fill_defaults(&o);
    c->opts = o;
    c->rng = (uint64_t)o.clock->monotonic(o.clock) ^ (uint64_t)(uintptr_t)c;
    c->curl = curl_easy_init();
    if (err == 0 && !c->curl)
        err = kp_error_set(KP_ERROR, "curl_easy_init failed");
    if (err < 0) {
        kp_aws_client_free(c);
        return err;
    }
    *out = c;
    return 0;
}

kp_aws_client *kp_aws_client_free(kp_aws_client *c)
{
    if (!c)
        return NULL;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    if (c->owns_credentials)
        kp_aws_credentials_free(c->credentials);
    for (size_t i = 0; i < c->n_endpoints; i++) {
        free((char *)c->endpoints[i].service);
        free((char *)c->endpoints[i].url);
    }
    free(c->endpoints);
    free(c->endpoint_url);
    free(c);
    return NULL;
}

const char *kp_aws_client_region(const kp_aws_client *c)
{
    return c->region;
}

const kp_aws_error *kp_aws_client_error(const kp_aws_client *c)
{
    return &c->last;
}

static int put_url(char *out, size_t size, const char *url)
{
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        len--;
    if (len >= size)
        return kp_error_set(KP_EINVALID, "endpoint URL too long");
    snprintf(out, size, "%.*s", (int)len, url);
    return 0;
}

static const char *configured_endpoint(const kp_aws_client *c, const service_info *si,
                                       const char *service)
{
    for (size_t i = 0; i < c->n_endpoints; i++)
        if (strcmp(c->endpoints[i].service, service) == 0)
            return c->endpoints[i].url;
    if (c->endpoint_url)
        return c->endpoint_url;
    char env[64];
    snprintf(env, sizeof(env), "AWS_ENDPOINT_URL_%s", si ? si->env : "");
    const char *v = si ? env_nonempty(env) : NULL;
    return v ? v : env_nonempty("AWS_ENDPOINT_URL");
}

int kp_aws_client_endpoint(const kp_aws_client *c, const char *service, const char *region,
                           char *out, size_t size)
{
    const service_info *si = find_service(service);
    const char *configured = configured_endpoint(c, si, service);
    if (configured)
        return put_url(out, size, configured);
    if (!si)
        return kp_error_set(KP_EINVALID, "no endpoint known for AWS service '%s'", service);
    if (!region)
        region = c->region;
    const char *suffix = strncmp(region, "cn-", 3) == 0 ? ".cn" : "";
    char host[256];
    if (si->prefix)
        snprintf(host, sizeof(host), "%s.%s.amazonaws.com", si->prefix, region);
    else
        snprintf(host, sizeof(host), "%s", si->global_host);
    int n = snprintf(out, size, "https://%s%s", host, suffix);
    return n < 0 || (size_t)n >= size ? kp_error_set(KP_EINVALID, "endpoint URL too long") : 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
    transfer *t = user;
    return kp_buf_append(&t->body, data, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *user)
{
    transfer *t = user;
    size_t len = size * n;
    static const char *const names[] = {"x-amzn-requestid:", "x-amz-request-id:",
                                        "x-amzn-errortype:"};
    for (size_t i = 0; i < 3; i++) {
        size_t nl = strlen(names[i]);
        if (len > nl && strncasecmp(data, names[i], nl) == 0) {
            const char *v = data + nl;
            size_t vl = len - nl;
            while (vl > 0 && isspace((unsigned char)*v))
                v++, vl--;
            while (vl > 0 && isspace((unsigned char)v[vl - 1]))
                vl--;
            char *dst = i < 2 ? t->request_id : t->error_type;
            snprintf(dst, sizeof(t->request_id), "%.*s", (int)vl, v);
        }
    }
    return len;
}

/* "http://host:port/path" -> "host:port" (what curl sends as Host). */
static int host_of(const char *url, char *out, size_t size)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t len = strcspn(p, "/?#");
    const char *at = memchr(p, '@', len);
    if (at) {
        len -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    if (len == 0 || len >= size)
        return kp_error_set(KP_EINVALID, "endpoint URL '%s' has no host", url);
    snprintf(out, size, "%.*s", (int)len, p);
    return 0;
}

static const char *content_type(enum kp_aws_protocol p)
{
    switch (p) {
    case KP_AWS_JSON_1_0:
        return "application/x-amz-json-1.0";
    case KP_AWS_JSON_1_1:
        return "application/x-amz-json-1.1";
    case KP_AWS_REST_JSON:
        return "application/json";
    default:
        return "application/x-www-form-urlencoded; charset=utf-8";
    }
}

/* The request's headers, signed unless the client is anonymous, as a curl list. */
static int build_headers(kp_aws_client *c, const kp_aws_request *req, const char *url,
                         const char *region, kp_arena *a, struct curl_slist **out)
{
    char host[256];
    int err = host_of(url, host, sizeof(host));
    if (err < 0)
        return err;
    kp_sigv4_header hs[3] = {{"Host", host}, {"Content-Type", content_type(req->protocol)}};
    size_t n = 2;
    if (req->protocol == KP_AWS_JSON_1_0 || req->protocol == KP_AWS_JSON_1_1)
        hs[n++] = (kp_sigv4_header){"X-Amz-Target",
                                    kp_arena_printf(a, "%s.%s", req->target_prefix, req->action)};
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < n; i++)
        list = curl_slist_append(list, kp_arena_printf(a, "%s: %s", hs[i].name, hs[i].value));
    list = curl_slist_append(list, "Expect:");
    if (c->credentials && !c->opts.anonymous) {
        kp_aws_creds creds;
        kp_sigv4_result sig;
        err = kp_aws_credentials_get(c->credentials, &creds);
        bool rest = req->protocol == KP_AWS_REST_JSON;
        kp_sigv4_request sreq = {rest && req->method ? req->method : "POST",
                                 rest && req->path ? req->path : "/",
                                 NULL,
                                 hs,
                                 n,
                                 req->body,
                                 req->body_len};
        kp_sigv4_params p = {creds.access_key_id, creds.secret_access_key, creds.session_token,
                             region, req->service, c->opts.clock->now(c->opts.clock),
                             false, false, false};
        if (err == 0)
            err = kp_sigv4_sign(&sig, a, &sreq, &p);
        for (size_t i = 0; err == 0 && i < sig.n_added; i++)
            list = curl_slist_append(
                list, kp_arena_printf(a, "%s: %s", sig.added[i].name, sig.added[i].value));
        memset(&creds, 0, sizeof(creds));
    }
    if (err < 0)
        curl_slist_free_all(list);
    else
        *out = list;
    return err;
}

static void setup_curl(kp_aws_client *c, const kp_aws_request *req, const char *url,
                       struct curl_slist *headers, transfer *t)
{
    CURL *h = c->curl;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (req->protocol == KP_AWS_REST_JSON && req->method && strcmp(req->method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->curl_error);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms
                                                                 : c->opts.timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
}

/* One attempt: 0 on a 2xx answer (body in t->body), else c->last filled. */
static int attempt(kp_aws_client *c, const kp_aws_request *req, const char *url,
                   const char *region, transfer *t)
{
    kp_arena *a = kp_arena_new();
    struct curl_slist *headers = NULL;
    int err = build_headers(c, req, url, region, a, &headers);
    kp_arena_free(a);
    if (err < 0)
        return err;
    c->curl_error[0] = '\0';
    setup_curl(c, req, url, headers, t);
    CURLcode rc = curl_easy_perform(c->curl);
    curl_slist_free_all(headers);
    memset(&c->last, 0, sizeof(c->last));
    snprintf(c->last.request_id, sizeof(c->last.request_id), "%s", t->request_id);
    if (rc != CURLE_OK) {
        if (rc == CURLE_WRITE_ERROR && t->body.len >= t->body.max)
            return kp_error_set(KP_ETOOLARGE, "%s %s: response larger than %zu bytes",
                                req->service, req->action, t->body.max);
        snprintf(c->last.message, sizeof(c->last.message), "%s",
                 c->curl_error[0] ? c->curl_error : curl_easy_strerror(rc));
        return KP_ERETRY;
    }
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &c->last.http_status);
    if (c->last.http_status >= 200 && c->last.http_status < 300)
        return 0;
    kp_aws_error_parse(&c->last, req->protocol, t->body.data, t->body.len);
    if (!c->last.code[0] && t->error_type[0]) /* "ResourceNotFoundException:http://..." */
        snprintf(c->last.code, sizeof(c->last.code), "%.*s",
                 (int)strcspn(t->error_type, ":"), t->error_type);
    return kp_aws_error_class(&c->last);
}

static uint64_t next_random(kp_aws_client *c)
{
    /* xorshift64*: jitter only, no need for anything stronger. */
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * UINT64_C(2685821657736338717);
}

static void backoff(kp_aws_client *c, int attempt_no)
{
    long cap = c->opts.backoff_base_ms;
    for (int i = 0; i < attempt_no && cap < c->opts.backoff_max_ms; i++)
        cap *= 2;
    if (cap > c->opts.backoff_max_ms)
        cap = c->opts.backoff_max_ms;
    long ms = (long)(next_random(c) % (uint64_t)(cap + 1));
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int fail(kp_aws_client *c, const kp_aws_request *req, int code)
{
    const kp_aws_error *e = &c->last;
    if (e->http_status == 0)
        return kp_error_set(code, "%s %s: %s (after %d attempts)", req->service, req->action,
                            e->message, e->attempts);
    return kp_error_set(code, "%s %s: %s: %s (HTTP %ld, request id %s)", req->service,
                        req->action, e->code[0] ? e->code : "error", e->message, e->http_status,
                        e->request_id[0] ? e->request_id : "none");
}

int kp_aws_client_send(kp_aws_client *c, const kp_aws_request *req, kp_buf *response)
{
    memset(&c->last, 0, sizeof(c->last));
    const char *region = req->region ? req->region : c->region;
    if (strcmp(req->service, "iam") == 0 && !req->region)
        region = strncmp(c->region, "cn-", 3) == 0 ? "cn-north-1" : "us-east-1";
    char base[URL_MAX];
    int err = kp_aws_client_endpoint(c, req->service, region, base, sizeof(base) - 1);
    if (err < 0)
        return err;
    size_t blen = strlen(base);
    base[blen] = '/';
    base[blen + 1] = '\0';
    char url[URL_MAX * 2];
    const char *path = req->protocol == KP_AWS_REST_JSON && req->path ? req->path : "/";
    if (snprintf(url, sizeof(url), "%s%s", base, path + (*path == '/')) >= (int)sizeof(url))
        return kp_error_set(KP_EINVALID, "%s %s: URL too long", req->service, req->action);
    for (int n = 1;; n++) {
        transfer t = {.body = KP_BUF_INIT(c->opts.max_response_bytes)};
        err = attempt(c, req, url, region, &t);
        c->last.attempts = n;
        if (err == 0)
            err = kp_buf_append(response, t.body.data ? t.body.data : "", t.body.len);
        kp_buf_free(&t.body);
        if (err == 0) {
            memset(&c->last, 0, sizeof(c->last));
            return 0;
        }
        bool transient = err == KP_ERETRY && (c->last.http_status != 0 || c->last.message[0]);
        if (!transient || n >= c->opts.max_attempts)
            return transient || c->last.http_status ? fail(c, req, err) : err;
        backoff(c, n);
    }
}

int kp_aws_http_plain(const kp_aws_plain_request *req, kp_buf *response, long *status)
{
    CURL *h = curl_easy_init();
    if (!h)
        return kp_error_set(KP_ERROR, "curl_easy_init failed");
    char errbuf[CURL_ERROR_SIZE] = "";
    transfer t = {.body = KP_BUF_INIT(1u << 20)};
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < req->n_headers; i++)
        list = curl_slist_append(list, req->headers[i]);
    curl_easy_setopt(h, CURLOPT_URL, req->url);
    if (strcmp(req->method, "GET") != 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 5000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* Metadata endpoints are link-local or loopback: never through a proxy. */
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(h);
    int err = 0;
    if (rc != CURLE_OK) {
        err = kp_error_set(KP_EIO, "%s: %s", req->url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        err = kp_buf_append(response, t.body.data ? t.body.data : "", t.body.len);
    }
    kp_buf_free(&t.body);
    curl_slist_free_all(list);
    curl_easy_cleanup(h);
    return err;
}
