/*
 * Per-thread curl handles and how each request is set up on one: URL,
 * method, headers, authentication, TLS, timeouts. A handle belongs to one
 * thread (a thread-specific key), so its connections are reused for
 * keep-alive without locks; when the thread exits the handle goes back to the
 * client's pool for the next new thread.
 */
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/config_internal.h"
#include "kube/rest_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static kp_kube_handle *handle_new(kp_kube_client *c)
{
    kp_kube_handle *h = kp_xcalloc(1, sizeof(*h));
    h->client = c;
    h->easy = curl_easy_init();
    if (!h->easy) {
        free(h);
        return NULL;
    }
    return h;
}

static void handle_free(kp_kube_handle *h)
{
    curl_easy_cleanup(h->easy);
    free(h);
}

/* Thread exit: the handle (and its warm connections) waits for another thread. */
static void handle_orphaned(void *value)
{
    kp_kube_handle *h = value;
    kp_kube_client *c = h->client;
    pthread_mutex_lock(&c->lock);
    h->next_idle = c->idle;
    c->idle = h;
    pthread_mutex_unlock(&c->lock);
}

int kp_kube_handles_init(kp_kube_client *c)
{
    if (pthread_key_create(&c->thread_handle, handle_orphaned) != 0)
        return kp_error_set(KP_ERROR, "cannot create a thread-specific key");
    c->has_key = true;
    return 0;
}

static kp_kube_handle *pooled_handle(kp_kube_client *c)
{
    pthread_mutex_lock(&c->lock);
    kp_kube_handle *h = c->idle;
    if (h) {
        c->idle = h->next_idle;
        h->next_idle = NULL;
    } else if ((h = handle_new(c)) != NULL) {
        h->next = c->handles;
        c->handles = h;
    }
    pthread_mutex_unlock(&c->lock);
    return h;
}

kp_kube_handle *kp_kube_handle_acquire(kp_kube_client *c)
{
    kp_kube_handle *h = pthread_getspecific(c->thread_handle);
    if (h && h->busy) {
        /* A call from inside a callback of this thread's own transfer. */
        h = handle_new(c);
        if (h) h->temporary = true;
    } else if (!h) {
        h = pooled_handle(c);
        if (h) pthread_setspecific(c->thread_handle, h);
    }
    if (h) h->busy = true;
    return h;
}

void kp_kube_handle_release(kp_kube_handle *h)
{
    h->busy = false;
    if (h->temporary) handle_free(h);
}

void kp_kube_handles_free(kp_kube_client *c)
{
    /* Destructors must not run for this key once the handles are gone. */
    if (c->has_key) pthread_key_delete(c->thread_handle);
    kp_kube_handle *h = c->handles;
    while (h) {
        kp_kube_handle *next = h->next;
        handle_free(h);
        h = next;
    }
    c->handles = c->idle = NULL;
}

/* ------------------------------------------------------------------ auth */

static int read_token(const char *path, char **out, struct stat *st)
{
    char *text;
    size_t len;
    int err = kp_kube_read_file(&text, &len, path);
    if (err < 0) return err;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = '\0';
    if (!len || stat(path, st) != 0) {
        free(text);
        return kp_error_set(KP_EIO, "token file %s is empty", path);
    }
    *out = text;
    return 0;
}

int kp_kube_auth_init(kp_kube_auth *auth, const kp_kube_config *config)
{
    memset(auth, 0, sizeof(*auth));
    pthread_mutex_init(&auth->lock, NULL);
    if (config->token) auth->token = kp_xstrdup(config->token);
    if (!config->token_file) return 0;
    auth->token_file = kp_xstrdup(config->token_file);
    char *token;
    int err = read_token(auth->token_file, &token, &auth->token_stat);
    if (err < 0) return auth->token ? 0 : kp_error_wrap(KP_EIO, "bearer token");
    free(auth->token);
    auth->token = token;
    return 0;
}

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void kp_kube_auth_destroy(kp_kube_auth *auth)
{
    wipe_free(auth->token);
    free(auth->token_file);
    pthread_mutex_destroy(&auth->lock);
}

static bool stat_changed(const struct stat *a, const struct stat *b)
{
    return a->st_ino != b->st_ino || a->st_size != b->st_size ||
           a->st_mtim.tv_sec != b->st_mtim.tv_sec || a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

/* Re-read a rotated token: when the file changed, or once a period anyway
 * (a replaced file may keep size and mtime). A failed read keeps the old
 * token: the kubelet swaps the file atomically, a later try will work. */
static void refresh_token(kp_kube_client *c)
{
    kp_kube_auth *auth = &c->auth;
    int64_t now = c->clock->monotonic(c->clock);
    struct stat st;
    if (stat(auth->token_file, &st) != 0) return;
    bool due = now - auth->token_read_ns >= (int64_t)c->opts.token_reread_ms * KP_NS_PER_MS;
    if (!due && !stat_changed(&st, &auth->token_stat)) return;
    char *token;
    if (read_token(auth->token_file, &token, &st) < 0) return;
    wipe_free(auth->token);
    auth->token = token;
    auth->token_stat = st;
    auth->token_read_ns = now;
}

static char *auth_header(kp_kube_client *c)
{
    static const char prefix[] = "Authorization: Bearer ";
    char *header = NULL;
    pthread_mutex_lock(&c->auth.lock);
    if (c->auth.token_file) refresh_token(c);
    if (c->auth.token) {
        size_t n = sizeof(prefix) + strlen(c->auth.token);
        header = kp_xmalloc(n);
        snprintf(header, n, "%s%s", prefix, c->auth.token);
    }
    pthread_mutex_unlock(&c->auth.lock);
    return header;
}

void kp_kube_headers_free(struct curl_slist *headers)
{
    for (struct curl_slist *h = headers; h; h = h->next)
        if (strncmp(h->data, "Authorization:", 14) == 0) explicit_bzero(h->data, strlen(h->data));
    curl_slist_free_all(headers);
}

/* ------------------------------------------------------------- requests */

static struct curl_slist *build_headers(kp_kube_client *c, const kp_kube_request *req)
{
    struct curl_slist *headers = curl_slist_append(NULL, "Accept: application/json");
    /* No "Expect: 100-continue" round trip before large bodies. */
    headers = curl_slist_append(headers, "Expect:");
    if (req->body) {
        char ct[128];
        snprintf(ct, sizeof(ct), "Content-Type: %s",
                 req->content_type ? req->content_type : "application/json");
        headers = curl_slist_append(headers, ct);
    }
    char *auth = auth_header(c);
    if (auth) {
        headers = curl_slist_append(headers, auth);
        wipe_free(auth);
    }
    return headers;
}

static void set_tls(CURL *easy, const kp_kube_client *c)
{
    struct curl_blob blob;
    if (c->insecure) {
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (c->ca_file) curl_easy_setopt(easy, CURLOPT_CAINFO, c->ca_file);
    if (c->ca_data) {
        blob = (struct curl_blob){c->ca_data, c->ca_len, CURL_BLOB_COPY};
        curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (c->cert_file) curl_easy_setopt(easy, CURLOPT_SSLCERT, c->cert_file);
    if (c->cert_data) {
        blob = (struct curl_blob){c->cert_data, c->cert_len, CURL_BLOB_COPY};
        curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &blob);
        curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (c->key_file) curl_easy_setopt(easy, CURLOPT_SSLKEY, c->key_file);
    if (c->key_data) {
        blob = (struct curl_blob){c->key_data, c->key_len, CURL_BLOB_COPY};
        curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &blob);
        curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
    }
}

static void set_method(CURL *easy, const kp_kube_request *req)
{
    if (strcmp(req->method, "GET") == 0)
        curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    else if (strcmp(req->method, "POST") != 0)
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req->method);
    if (req->body) {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
    } else if (strcmp(req->method, "POST") == 0) {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "");
    }
}

/* The API server's warnings (`Warning: 299 - "text"` headers), e.g. a field of a
 * write it did not know and dropped (field validation Warn, the default since
 * 1.27): logged at WARN, as client-go does, so nothing is dropped unseen. Each is
 * cut at 512 bytes; curl bounds the headers of a response as a whole. */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
    const kp_kube_request *req = ctx;
    size_t len = size * n;
    static const char name[] = "warning:";
    if (len <= sizeof(name) - 1 || strncasecmp(data, name, sizeof(name) - 1) != 0) return len;
    const char *text = data + sizeof(name) - 1;
    size_t tlen = len - (sizeof(name) - 1);
    while (tlen && (*text == ' ' || *text == '\t'))
        text++, tlen--;
    while (tlen && (text[tlen - 1] == '\r' || text[tlen - 1] == '\n'))
        tlen--;
    char line[513];
    snprintf(line, sizeof(line), "%.*s", (int)(tlen < 512 ? tlen : 512), text);
    KP_LOG(KP_LOG_WARN, "kube", "API server warning", "warning", line, "method", req->method,
           "path", req->path);
    return len;
}

int kp_kube_handle_prepare(kp_kube_handle *h, const kp_kube_request *req, long timeout_ms,
                           struct curl_slist **headers)
{
    kp_kube_client *c = h->client;
    CURL *easy = h->easy;
    size_t n = strlen(c->server) + strlen(req->path) + 1;
    char *url = kp_xmalloc(n);
    snprintf(url, n, "%s%s", c->server, req->path);
    /* Reset keeps live connections; every option is set afresh below. */
    curl_easy_reset(easy);
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_URL, url);
    free(url);
    if (rc != CURLE_OK) return kp_error_set(KP_EINVALID, "%s %s: bad URL", req->method, req->path);
    h->errbuf[0] = '\0';
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, h->errbuf);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    set_tls(easy, c);
    set_method(easy, req);
    *headers = build_headers(c, req);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, *headers);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, (void *)req);
    if (req->cancel) {
        curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, kp_kube_cancel_progress);
        curl_easy_setopt(easy, CURLOPT_XFERINFODATA, req->cancel);
        curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    }
    return 0;
}
