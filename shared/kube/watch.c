/*
 * Watch streams (see watch.h). The transfer runs on a curl multi handle (the
 * cancel token's, or a private one) so that kp_kube_cancel_fire() can wake a
 * watch that is waiting on a quiet connection.
 */
#include "kube/watch.h"
#include "base/error.h"
#include "base/log.h"
#include "kube/rest_internal.h"

#include <stdio.h>
#include <string.h>

void kp_watch_stream_init(kp_watch_stream *s, size_t max_line, kp_kube_watch_fn fn, void *ctx)
{
    kp_buf_init(&s->line, max_line);
    s->fn = fn;
    s->ctx = ctx;
    s->events = 0;
}

void kp_watch_stream_free(kp_watch_stream *s)
{
    kp_buf_free(&s->line);
}

static int error_event(const cJSON *status)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
    long http = cJSON_IsNumber(code) ? (long)code->valuedouble : 500;
    char *body = cJSON_PrintUnformatted(status);
    int err = kp_kube_status_error(http, body ? body : "", "watch");
    cJSON_free(body);
    return err;
}

static int event_type(const char *name, enum kp_watch_type *out)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (enum kp_watch_type)i;
            return 0;
        }
    return KP_ENOTFOUND;
}

static int deliver(kp_watch_stream *s, const char *text, size_t len)
{
    cJSON *ev = cJSON_ParseWithLength(text, len);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    int err;
    enum kp_watch_type t;
    if (!cJSON_IsString(type) || !cJSON_IsObject(obj))
        err = kp_error_set(KP_EINVALID, "watch: malformed event (%zu bytes)", len);
    else if (strcmp(type->valuestring, "ERROR") == 0)
        err = error_event(obj);
    else if (event_type(type->valuestring, &t) < 0)
        err = kp_error_set(KP_EINVALID, "watch: unknown event type \"%s\"", type->valuestring);
    else {
        s->events++;
        cJSON_DetachItemViaPointer(ev, obj);
        err = s->fn(s->ctx, t, &obj);
        cJSON_Delete(obj);
        obj = NULL;
    }
    cJSON_Delete(ev);
    return err;
}

/* Deliver every complete line in s->line, keeping a partial last one. */
static int drain_lines(kp_watch_stream *s)
{
    char *start = s->line.data;
    char *end = start + s->line.len;
    int err = 0;
    char *nl;
    while (!err && start < end && (nl = memchr(start, '\n', (size_t)(end - start)))) {
        size_t n = (size_t)(nl - start);
        if (n && start[n - 1] == '\r') n--;
        if (n) err = deliver(s, start, n);
        start = nl + 1;
    }
    size_t rest = (size_t)(end - start);
    memmove(s->line.data, start, rest);
    s->line.len = rest;
    s->line.data[rest] = '\0';
    return err;
}

int kp_watch_stream_feed(kp_watch_stream *s, const char *data, size_t len)
{
    while (len) {
        /* Append up to the next newline at most, so the cap bounds one line. */
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        if (kp_buf_append(&s->line, data, n) < 0)
            return kp_error_set(KP_ETOOLARGE, "watch: an event exceeds %zu bytes", s->line.max);
        data += n;
        len -= n;
        if (nl) {
            int err = drain_lines(s);
            if (err) return err;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ transfer */

typedef struct watch_call {
    kp_kube_handle *h;
    kp_watch_stream stream;
    kp_buf error_body; /* the body of a non-200 answer */
    long status;
    int stopped; /* the stream's non-zero return */
} watch_call;

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
    watch_call *w = ctx;
    if (!w->status) curl_easy_getinfo(w->h->easy, CURLINFO_RESPONSE_CODE, &w->status);
    if (w->status != 200) { /* beyond the cap: the start will do */
        size_t room = w->error_body.max - w->error_body.len;
        size_t take = size * n < room ? size * n : room;
        return take && kp_buf_append(&w->error_body, data, take) < 0 ? 0 : size * n;
    }
    w->stopped = kp_watch_stream_feed(&w->stream, data, size * n);
    return w->stopped ? 0 : size * n;
}

static int watch_path(kp_kube_client *c, kp_buf *b, enum kp_kube_res res,
                      const kp_kube_watch_opts *o)
{
    const kp_kube_resource *r;
    int err = kp_kube_client_resource(c, res, &r);
    if (!err) err = kp_kube_resource_path(b, r, o->namespace, NULL, NULL);
    if (!err) err = kp_buf_puts(b, "?watch=1");
    if (!err && o->bookmarks) err = kp_buf_puts(b, "&allowWatchBookmarks=true");
    if (!err && o->timeout_seconds > 0)
        err = kp_buf_printf(b, "&timeoutSeconds=%d", o->timeout_seconds);
    const char *names[] = {"resourceVersion", "labelSelector", "fieldSelector"};
    const char *values[] = {o->resource_version, o->label_selector, o->field_selector};
    for (int i = 0; i < 3 && !err; i++)
        if (values[i] && *values[i]) {
            err = kp_buf_printf(b, "&%s=", names[i]);
            if (!err) err = kp_kube_escape(b, values[i]);
        }
    return err;
}

/* Run the transfer on `multi` until done or cancelled. */
static CURLcode run_multi(CURLM *multi, CURL *easy, kp_kube_cancel *cancel, bool *cancelled)
{
    CURLcode result = CURLE_OK;
    int running = 1;
    curl_multi_add_handle(multi, easy);
    while (running) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) {
            result = CURLE_FAILED_INIT;
            break;
        }
        if ((*cancelled = kp_kube_cancel_fired(cancel))) break;
        if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(multi, &left)))
        if (m->msg == CURLMSG_DONE) result = m->data.result;
    curl_multi_remove_handle(multi, easy);
    return result;
}

static int finish(kp_kube_client *c, watch_call *w, CURLcode rc, bool cancelled,
                  const kp_kube_request *req)
{
    (void)c;
    if (cancelled) return 0;
    if (w->stopped) return w->stopped;
    if (w->status && w->status != 200) {
        char what[512];
        snprintf(what, sizeof(what), "%s %s", req->method, req->path);
        return kp_kube_status_error(w->status, kp_buf_cstr(&w->error_body), what);
    }
    if (rc != CURLE_OK) return kp_kube_curl_error(rc, w->h, req);
    return 0;
}

static int watch_transfer(kp_kube_client *c, const kp_kube_request *req, watch_call *w,
                          kp_kube_cancel *cancel, long timeout_ms)
{
    struct curl_slist *headers = NULL;
    int err = kp_kube_handle_prepare(w->h, req, timeout_ms, &headers);
    if (err < 0) return err;
    curl_easy_setopt(w->h->easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(w->h->easy, CURLOPT_WRITEDATA, w);
    CURLM *own = cancel ? NULL : curl_multi_init();
    bool cancelled = false;
    CURLcode rc = run_multi(cancel ? cancel->multi : own, w->h->easy, cancel, &cancelled);
    if (own) curl_multi_cleanup(own);
    kp_kube_headers_free(headers);
    return finish(c, w, rc, cancelled, req);
}

int kp_kube_watch(kp_kube_client *c, enum kp_kube_res res, const kp_kube_watch_opts *opts,
                  kp_kube_watch_fn fn, void *ctx)
{
    kp_buf path = KP_BUF_INIT(8192);
    int err = watch_path(c, &path, res, opts);
    if (err < 0) goto out;
    kp_kube_request req = {"GET", kp_buf_cstr(&path), NULL, NULL, NULL};
    kp_kube_throttle(c, opts->cancel);
    if (kp_kube_cancel_fired(opts->cancel)) goto out;
    watch_call w = {.h = kp_kube_handle_acquire(c), .error_body = KP_BUF_INIT(65536)};
    if (!w.h) {
        err = kp_error_set(KP_EIO, "watch: cannot create a curl handle");
        goto out;
    }
    kp_watch_stream_init(&w.stream, c->opts.max_line, fn, ctx);
    /* A connection that hangs past the server's own timeout is cut. */
    long timeout = opts->timeout_seconds > 0 ? (opts->timeout_seconds + 30) * 1000L : 0;
    KP_LOG(KP_LOG_DEBUG, "kube", "watch", "path", req.path);
    err = watch_transfer(c, &req, &w, opts->cancel, timeout);
    kp_kube_handle_release(w.h);
    kp_watch_stream_free(&w.stream);
    kp_buf_free(&w.error_body);
out:
    kp_buf_free(&path);
    return err;
}
