/* The fake API server for unit tests (see fake_apiserver.h). */
#include "fake_apiserver.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct entry entry;
typedef struct event event;

typedef struct conn {
    fake_api *fa;
    int fd;
    pthread_t thread;
    bool done;
} conn;

struct fake_api {
    int lfd;
    char url[64];
    pthread_t acceptor;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;
    conn **conns;
    size_t nconns, conns_cap;
    entry *objs;
    size_t nobjs, objs_cap;
    event *events;
    size_t nevents, events_cap;
    long rv, compacted_rv;
    unsigned bookmark_gen, close_gen;
    int watches;
    bool policy_v1;
    bool patch_locks;
    char *token;
    fake_hook hook;
    void *hook_ctx;
    fake_logged *log;
    size_t nlog, log_cap;
    unsigned seed;
};

typedef struct route {
    char prefix[160], group[96], ns[128], plural[96], name[256], sub[64];
} route;

struct entry {
    route r;
    cJSON *obj;
};

struct event {
    long rv;
    const char *type;
    route r;
    char *json;
};

typedef struct answer {
    int status;
    char *body;
} answer;

/* ------------------------------------------------------------ helpers */

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

static int split(char *s, char **seg, int max)
{
    int n = 0;
    for (char *p = s; *p && n < max;) {
        while (*p == '/')
            p++;
        if (!*p) break;
        seg[n++] = p;
        char *e = strchr(p, '/');
        if (!e) break;
        *e = '\0';
        p = e + 1;
    }
    return n;
}

static bool parse_route(const char *path, route *r)
{
    char buf[1024], *seg[12];
    memset(r, 0, sizeof(*r));
    copy(buf, sizeof(buf), path);
    int n = split(buf, seg, 12), i;
    if (n >= 2 && strcmp(seg[0], "api") == 0) {
        snprintf(r->prefix, sizeof(r->prefix), "/api/%s", seg[1]);
        i = 2;
    } else if (n >= 3 && strcmp(seg[0], "apis") == 0) {
        snprintf(r->prefix, sizeof(r->prefix), "/apis/%s/%s", seg[1], seg[2]);
        copy(r->group, sizeof(r->group), seg[1]);
        i = 3;
    } else {
        return false;
    }
    if (n - i >= 3 && strcmp(seg[i], "namespaces") == 0) {
        copy(r->ns, sizeof(r->ns), seg[i + 1]);
        i += 2;
    }
    copy(r->plural, sizeof(r->plural), i < n ? seg[i] : "");
    copy(r->name, sizeof(r->name), i + 1 < n ? seg[i + 1] : "");
    copy(r->sub, sizeof(r->sub), i + 2 < n ? seg[i + 2] : "");
    return true;
}

/* The value of query parameter `name` (no decoding needed for our values). */
static bool query_get(const char *query, const char *name, char *out, size_t size)
{
    size_t n = strlen(name);
    for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            size_t len = strcspn(p + n + 1, "&");
            snprintf(out, size, "%.*s", (int)len, p + n + 1);
            return true;
        }
    }
    return false;
}

/* A buffer of the double's that overflowed would drop an answer or an event
 * without a word and fail a test far away: stop the test here instead (no
 * Criterion assertion: this runs on the server's threads). */
static void must(int err)
{
    if (err < 0) {
        fprintf(stderr, "fake_apiserver: %s\n", kp_error_last());
        abort();
    }
}

static char *status_body(int code, const char *reason, const char *msg)
{
    kp_buf b = KP_BUF_INIT(1 << 16);
    must(kp_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                         "\"status\":\"Failure\",\"message\":"));
    must(kp_buf_json_string(&b, msg));
    must(kp_buf_printf(&b, ",\"reason\":\"%s\",\"code\":%d}", reason, code));
    return kp_buf_detach(&b);
}

static answer failure(int code, const char *reason, const route *r, const char *fmt)
{
    char msg[600], res[200];
    snprintf(res, sizeof(res), "%s%s%s", r->plural, r->group[0] ? "." : "", r->group);
    snprintf(msg, sizeof(msg), fmt, res, r->name);
    return (answer){code, status_body(code, reason, msg)};
}

static answer json_answer(int status, const cJSON *obj)
{
    return (answer){status, cJSON_PrintUnformatted(obj)};
}

static const char *meta(const cJSON *obj, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(obj, "metadata"), field);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void set_meta(cJSON *obj, const char *field, const char *value)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (!cJSON_IsObject(m)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
        m = cJSON_AddObjectToObject(obj, "metadata");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(m, field);
    cJSON_AddStringToObject(m, field, value);
}

/* --------------------------------------------------------------- store */

/* Whether `e` is in the collection `r` names (any namespace when r has none and any_ns). */
static bool same_collection(const route *e, const route *r, bool any_ns)
{
    return strcmp(e->prefix, r->prefix) == 0 && strcmp(e->plural, r->plural) == 0 &&
           ((any_ns && !r->ns[0]) || strcmp(e->ns, r->ns) == 0);
}

static entry *find(fake_api *fa, const route *r)
{
    for (size_t i = 0; i < fa->nobjs; i++)
        if (same_collection(&fa->objs[i].r, r, false) && strcmp(fa->objs[i].r.name, r->name) == 0)
            return &fa->objs[i];
    return NULL;
}

static void log_event(fake_api *fa, const char *type, const entry *e)
{
    fa->events = kp_xgrow(fa->events, &fa->events_cap, fa->nevents + 1, sizeof(event));
    fa->events[fa->nevents++] = (event){fa->rv, type, e->r, cJSON_PrintUnformatted(e->obj)};
    pthread_cond_broadcast(&fa->cond);
}

static void bump(fake_api *fa, cJSON *obj)
{
    char rv[32];
    snprintf(rv, sizeof(rv), "%ld", ++fa->rv);
    set_meta(obj, "resourceVersion", rv);
}

/* Store `obj` (taken) under route r's collection and r->name. */
static entry *store(fake_api *fa, const route *r, cJSON *obj)
{
    entry *e = find(fa, r);
    bump(fa, obj);
    if (e) {
        cJSON_Delete(e->obj);
        e->obj = obj;
        log_event(fa, "MODIFIED", e);
        return e;
    }
    fa->objs = kp_xgrow(fa->objs, &fa->objs_cap, fa->nobjs + 1, sizeof(entry));
    e = &fa->objs[fa->nobjs++];
    *e = (entry){*r, obj};
    log_event(fa, "ADDED", e);
    return e;
}

static cJSON *unstore(fake_api *fa, entry *e)
{
    cJSON *obj = e->obj;
    bump(fa, obj);
    log_event(fa, "DELETED", e);
    *e = fa->objs[--fa->nobjs];
    return obj;
}

/* ------------------------------------------------------------ patches */

static cJSON *merge(cJSON *target, const cJSON *patch)
{
    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(target);
        return cJSON_Duplicate(patch, 1);
    }
    if (!cJSON_IsObject(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateObject();
    }
    for (const cJSON *p = patch->child; p; p = p->next) {
        cJSON *cur = cJSON_DetachItemFromObjectCaseSensitive(target, p->string);
        if (cJSON_IsNull(p))
            cJSON_Delete(cur);
        else
            cJSON_AddItemToObject(target, p->string, merge(cur, p));
    }
    return target;
}

/* RFC 6902 add/replace/remove/test on object members and array indices. */
static bool json_patch_op(cJSON *doc, const cJSON *op)
{
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(op, "op"));
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(op, "path"));
    const cJSON *value = cJSON_GetObjectItem(op, "value");
    char buf[512], *seg[16];
    if (!kind || !path || path[0] != '/') return false;
    copy(buf, sizeof(buf), path);
    int n = split(buf, seg, 16);
    cJSON *parent = doc;
    for (int i = 0; i + 1 < n && parent; i++)
        parent = cJSON_IsArray(parent) ? cJSON_GetArrayItem(parent, (int)strtol(seg[i], NULL, 10))
                                       : cJSON_GetObjectItemCaseSensitive(parent, seg[i]);
    if (!parent || n == 0) return false;
    const char *last = seg[n - 1];
    int idx = strcmp(last, "-") == 0 ? cJSON_GetArraySize(parent) : (int)strtol(last, NULL, 10);
    cJSON *cur = cJSON_IsArray(parent) ? cJSON_GetArrayItem(parent, idx)
                                       : cJSON_GetObjectItemCaseSensitive(parent, last);
    if (strcmp(kind, "test") == 0) return cur && value && cJSON_Compare(cur, value, 1);
    if (strcmp(kind, "remove") == 0 || strcmp(kind, "replace") == 0) {
        if (!cur) return false;
        cJSON_Delete(cJSON_DetachItemViaPointer(parent, cur));
        if (strcmp(kind, "remove") == 0) return true;
    } else if (strcmp(kind, "add") != 0 || !value) {
        return false;
    }
    cJSON *v = cJSON_Duplicate(value, 1);
    if (cJSON_IsArray(parent))
        return cJSON_InsertItemInArray(parent, idx, v) || cJSON_AddItemToArray(parent, v);
    cJSON_DeleteItemFromObjectCaseSensitive(parent, last);
    return cJSON_AddItemToObject(parent, last, v);
}

static cJSON *apply_patch(const cJSON *obj, const char *content_type, const cJSON *patch)
{
    cJSON *doc = cJSON_Duplicate(obj, 1);
    if (strstr(content_type, "json-patch")) {
        const cJSON *op;
        cJSON_ArrayForEach(op, patch) if (!json_patch_op(doc, op))
        {
            cJSON_Delete(doc);
            return NULL;
        }
        return doc;
    }
    return merge(doc, patch);
}

/* ------------------------------------------------------------ handlers */

static int by_name(const void *a, const void *b)
{
    const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
    int c = strcmp(x->r.ns, y->r.ns);
    return c ? c : strcmp(x->r.name, y->r.name);
}

static answer list(fake_api *fa, const route *r, const char *query)
{
    char limit_s[32] = "", cont[64] = "";
    query_get(query, "limit", limit_s, sizeof(limit_s));
    query_get(query, "continue", cont, sizeof(cont));
    long limit = strtol(limit_s, NULL, 10), rv = fa->rv, start = 0;
    if (cont[0] && sscanf(cont, "%ld-%ld", &rv, &start) == 2 && rv < fa->compacted_rv)
        return (answer){410, status_body(410, "Expired",
                                         "The provided continue parameter is too "
                                         "old to display a consistent list result.")};
    entry **sel = kp_xcalloc(fa->nobjs + 1, sizeof(*sel));
    size_t n = 0;
    for (size_t i = 0; i < fa->nobjs; i++)
        if (same_collection(&fa->objs[i].r, r, true)) sel[n++] = &fa->objs[i];
    qsort(sel, n, sizeof(*sel), by_name);
    cJSON *out = cJSON_CreateObject(), *items = cJSON_CreateArray();
    cJSON_AddStringToObject(out, "kind", "List");
    cJSON *m = cJSON_AddObjectToObject(out, "metadata");
    char buf[64];
    snprintf(buf, sizeof(buf), "%ld", rv);
    cJSON_AddStringToObject(m, "resourceVersion", buf);
    size_t i = (size_t)start;
    for (; i < n && (limit <= 0 || i < (size_t)(start + limit)); i++)
        cJSON_AddItemToArray(items, cJSON_Duplicate(sel[i]->obj, 1));
    if (i < n) {
        snprintf(buf, sizeof(buf), "%ld-%zu", rv, i);
        cJSON_AddStringToObject(m, "continue", buf);
    }
    cJSON_AddItemToObject(out, "items", items);
    free(sel);
    answer a = json_answer(200, out);
    cJSON_Delete(out);
    return a;
}

static void random_suffix(fake_api *fa, char *out)
{
    static const char chars[] = "bcdfghjklmnpqrstvwxz2456789";
    for (int i = 0; i < 5; i++)
        out[i] = chars[rand_r(&fa->seed) % (sizeof(chars) - 1)];
    out[5] = '\0';
}

static answer create(fake_api *fa, route *r, cJSON *obj)
{
    const char *name = meta(obj, "name"), *gen = meta(obj, "generateName");
    char buf[256];
    if ((!name || !*name) && gen) {
        char sfx[6];
        random_suffix(fa, sfx);
        snprintf(buf, sizeof(buf), "%s%s", gen, sfx);
        name = buf;
    }
    if (!name || !*name)
        return (answer){422, status_body(422, "Invalid", "name or generateName is required")};
    copy(r->name, sizeof(r->name), name);
    if (find(fa, r)) return failure(409, "AlreadyExists", r, "%s \"%s\" already exists");
    cJSON *o = cJSON_Duplicate(obj, 1);
    set_meta(o, "name", r->name);
    if (r->ns[0]) set_meta(o, "namespace", r->ns);
    char uid[32];
    snprintf(uid, sizeof(uid), "uid-%ld", fa->rv + 1);
    set_meta(o, "uid", uid);
    return json_answer(201, store(fa, r, o)->obj);
}

static answer update(fake_api *fa, const route *r, const cJSON *obj, bool status)
{
    entry *e = find(fa, r);
    if (!e) return failure(404, "NotFound", r, "%s \"%s\" not found");
    const char *rv = meta(obj, "resourceVersion");
    if (rv && *rv && strcmp(rv, meta(e->obj, "resourceVersion")) != 0)
        return failure(409, "Conflict", r,
                       "Operation cannot be fulfilled on %s \"%s\": the object has been "
                       "modified; please apply your changes to the latest version and try again");
    cJSON *o = cJSON_Duplicate(status ? e->obj : obj, 1);
    if (status) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
        if (st) cJSON_AddItemToObject(o, "status", cJSON_Duplicate(st, 1));
    } else if (meta(e->obj, "uid")) {
        set_meta(o, "uid", meta(e->obj, "uid"));
    }
    return json_answer(200, store(fa, r, o)->obj);
}

static answer patch(fake_api *fa, const route *r, const fake_req *req, const cJSON *body)
{
    entry *e = find(fa, r);
    if (!e) return failure(404, "NotFound", r, "%s \"%s\" not found");
    /* A merge patch that names a resourceVersion is an optimistic lock, as
     * on a real API server (client-go's MergeFromWithOptimisticLock). */
    const char *rv = !fa->patch_locks || strstr(req->content_type, "json-patch")
                         ? NULL
                         : meta(body, "resourceVersion");
    if (rv && strcmp(rv, meta(e->obj, "resourceVersion")) != 0)
        return failure(409, "Conflict", r,
                       "Operation cannot be fulfilled on %s \"%s\": the object has been "
                       "modified; please apply your changes to the latest version and try again");
    cJSON *o = apply_patch(e->obj, req->content_type, body);
    if (!o)
        return (answer){422, status_body(422, "Invalid", "the JSON patch could not be applied")};
    return json_answer(200, store(fa, r, o)->obj);
}

static answer remove_object(fake_api *fa, const route *r, const cJSON *body)
{
    entry *e = find(fa, r);
    if (!e) return failure(404, "NotFound", r, "%s \"%s\" not found");
    const cJSON *pre = cJSON_GetObjectItem(body, "preconditions");
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItem(pre, "uid"));
    const char *rv = cJSON_GetStringValue(cJSON_GetObjectItem(pre, "resourceVersion"));
    if ((uid && strcmp(uid, meta(e->obj, "uid") ? meta(e->obj, "uid") : "") != 0) ||
        (rv && strcmp(rv, meta(e->obj, "resourceVersion")) != 0))
        return (answer){409, status_body(409, "Conflict", "Precondition failed")};
    cJSON *obj = unstore(fa, e);
    answer a = json_answer(200, obj);
    cJSON_Delete(obj);
    return a;
}

static answer evict(fake_api *fa, route *r, const cJSON *body)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(body, "apiVersion"));
    if (!v || (strcmp(v, "policy/v1") == 0 && !fa->policy_v1)) /* what 1.20 answers */
        return (answer){400, status_body(400, "BadRequest",
                                         "no kind \"Eviction\" is registered "
                                         "for version \"policy/v1\"")};
    r->sub[0] = '\0';
    answer a = remove_object(fa, r, cJSON_GetObjectItem(body, "deleteOptions"));
    if (a.status != 200) return a;
    free(a.body);
    return (answer){201, kp_xstrdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                    "\"Success\",\"code\":201}")};
}

static answer discovery(fake_api *fa, const char *path)
{
    if (strcmp(path, "/apis/policy/v1") == 0 && !fa->policy_v1)
        return (answer){404, status_body(404, "NotFound",
                                         "the server could not find the "
                                         "requested resource")};
    return (answer){200, kp_xstrdup("{\"kind\":\"APIResourceList\",\"resources\":[]}")};
}

static answer get(fake_api *fa, const route *r, const char *query)
{
    if (!r->name[0]) return list(fa, r, query);
    entry *e = find(fa, r);
    return e ? json_answer(200, e->obj) : failure(404, "NotFound", r, "%s \"%s\" not found");
}

/* Caller holds the lock. */
static answer dispatch(fake_api *fa, const fake_req *req)
{
    route r;
    if (!parse_route(req->path, &r))
        return (answer){404, status_body(404, "NotFound", "no such path")};
    if (!r.plural[0]) return discovery(fa, req->path);
    const char *m = req->method;
    if (strcmp(m, "GET") == 0) return get(fa, &r, req->query);
    cJSON *body = cJSON_Parse(req->body);
    answer a = {400, NULL};
    if (req->body[0] && !body)
        a.body = status_body(400, "BadRequest", "the body is not JSON");
    else if (strcmp(m, "POST") == 0 && strcmp(r.sub, "eviction") == 0)
        a = evict(fa, &r, body);
    else if (strcmp(m, "POST") == 0 && !r.name[0])
        a = create(fa, &r, body);
    else if (strcmp(m, "PUT") == 0 && r.name[0])
        a = update(fa, &r, body, strcmp(r.sub, "status") == 0);
    else if (strcmp(m, "PATCH") == 0 && r.name[0])
        a = patch(fa, &r, req, body);
    else if (strcmp(m, "DELETE") == 0 && r.name[0])
        a = remove_object(fa, &r, body);
    else
        a = (answer){405, status_body(405, "MethodNotAllowed", "method not allowed")};
    cJSON_Delete(body);
    return a;
}

/* ------------------------------------------------------------ transport */

static bool send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0) return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

static bool send_answer(int fd, int status, const char *body)
{
    char head[160];
    size_t len = body ? strlen(body) : 0;
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d Status\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     status, len);
    return send_all(fd, head, (size_t)n) && send_all(fd, body ? body : "", len);
}

static bool send_chunk(int fd, const char *data, size_t len)
{
    char head[32];
    int n = snprintf(head, sizeof(head), "%zx\r\n", len);
    return send_all(fd, head, (size_t)n) && send_all(fd, data, len) && send_all(fd, "\r\n", 2);
}

static const char stream_head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n";

static bool client_gone(int fd)
{
    struct pollfd p = {fd, POLLRDHUP, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Wait on the server's condition for up to `ms`. Caller holds the lock. */
static void wait_cond(fake_api *fa, long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&fa->cond, &fa->lock, &ts);
}

static void stream_chunks(int fd, fake_resp *r)
{
    bool ok = send_all(fd, stream_head, sizeof(stream_head) - 1);
    for (size_t i = 0; i < r->nchunks; i++) {
        if (ok && i) sleep_ms(20);
        ok = ok && send_chunk(fd, r->chunks[i], strlen(r->chunks[i]));
        free(r->chunks[i]);
    }
    free(r->chunks);
    if (ok) send_all(fd, "0\r\n\r\n", 5);
}

/* ---------------------------------------------------------------- watch */

typedef struct watch {
    route r;
    long cursor;
    bool bookmarks;
    unsigned bookmark_gen, close_gen;
    time_t deadline;
} watch;

static void add_line(kp_buf *b, const char *type, const char *json)
{
    must(kp_buf_printf(b, "{\"type\":\"%s\",\"object\":%s}\n", type, json));
}

/* Events for `w` since its cursor, into `out`. Caller holds the lock. */
static void pending(fake_api *fa, watch *w, kp_buf *out)
{
    for (size_t i = 0; i < fa->nevents; i++) {
        event *e = &fa->events[i];
        if (e->rv > w->cursor && same_collection(&e->r, &w->r, true))
            add_line(out, e->type, e->json);
    }
    w->cursor = fa->rv;
    if (w->bookmarks && w->bookmark_gen != fa->bookmark_gen) {
        char obj[96];
        snprintf(obj, sizeof(obj), "{\"metadata\":{\"resourceVersion\":\"%ld\"}}", fa->rv);
        add_line(out, "BOOKMARK", obj);
    }
    w->bookmark_gen = fa->bookmark_gen;
}

/* Where a watch starts: replay from `rv`, or the current state as ADDED. */
static bool watch_start(fake_api *fa, watch *w, const char *rv, kp_buf *out)
{
    if (rv[0] && strcmp(rv, "0") != 0) {
        w->cursor = strtol(rv, NULL, 10);
        if (w->cursor >= fa->compacted_rv) return true;
        char msg[128];
        snprintf(msg, sizeof(msg), "too old resource version: %ld (%ld)", w->cursor,
                 fa->compacted_rv);
        char *st = status_body(410, "Expired", msg);
        add_line(out, "ERROR", st);
        free(st);
        return false;
    }
    for (size_t i = 0; i < fa->nobjs; i++)
        if (same_collection(&fa->objs[i].r, &w->r, true)) {
            char *json = cJSON_PrintUnformatted(fa->objs[i].obj);
            add_line(out, "ADDED", json);
            free(json);
        }
    w->cursor = fa->rv;
    return true;
}

static void serve_watch(fake_api *fa, int fd, const fake_req *req)
{
    watch w = {.deadline = time(NULL) + 3600};
    char rv[32] = "", v[32] = "";
    parse_route(req->path, &w.r);
    query_get(req->query, "resourceVersion", rv, sizeof(rv));
    w.bookmarks =
        query_get(req->query, "allowWatchBookmarks", v, sizeof(v)) && strcmp(v, "true") == 0;
    if (query_get(req->query, "timeoutSeconds", v, sizeof(v)))
        w.deadline = time(NULL) + strtol(v, NULL, 10);
    kp_buf out = KP_BUF_INIT((size_t)64 << 20);
    pthread_mutex_lock(&fa->lock);
    w.bookmark_gen = fa->bookmark_gen;
    w.close_gen = fa->close_gen;
    bool live = watch_start(fa, &w, rv, &out);
    fa->watches++;
    pthread_cond_broadcast(&fa->cond);
    bool ok = send_all(fd, stream_head, sizeof(stream_head) - 1);
    while (ok && live) {
        if (out.len) {
            pthread_mutex_unlock(&fa->lock);
            ok = send_chunk(fd, out.data, out.len);
            kp_buf_reset(&out);
            pthread_mutex_lock(&fa->lock);
        }
        if (fa->stopping || w.close_gen != fa->close_gen || time(NULL) >= w.deadline ||
            client_gone(fd))
            break;
        wait_cond(fa, 50);
        pending(fa, &w, &out);
    }
    fa->watches--;
    pthread_mutex_unlock(&fa->lock);
    if (ok && out.len) ok = send_chunk(fd, out.data, out.len);
    if (ok) send_all(fd, "0\r\n\r\n", 5);
    kp_buf_free(&out);
}

/* ----------------------------------------------------------- requests */

static char *header(const char *head, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            v += strspn(v, " ");
            return kp_xstrndup(v, strcspn(v, "\r\n"));
        }
    return kp_xstrdup("");
}

static bool fill(int fd, kp_buf *in)
{
    char chunk[8192];
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    return n > 0 && kp_buf_append(in, chunk, (size_t)n) == 0;
}

/* One request from the connection; false when it closed. */
static bool read_request(int fd, kp_buf *in, fake_logged *r)
{
    char *end;
    while (!in->data || !(end = strstr(in->data, "\r\n\r\n")))
        if (!fill(fd, in)) return false;
    size_t head_len = (size_t)(end - in->data) + 4;
    char *head = kp_xstrndup(in->data, head_len);
    char *cl = header(head, "Content-Length"), *expect = header(head, "Expect");
    size_t body_len = (size_t)strtoul(cl, NULL, 10);
    if (strcasecmp(expect, "100-continue") == 0) send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    free(cl), free(expect);
    bool ok = true;
    while (ok && in->len < head_len + body_len)
        ok = fill(fd, in);
    if (ok) {
        size_t m = strcspn(head, " "), t = strcspn(head + m + 1, " ");
        *r = (fake_logged){kp_xstrndup(head, m), kp_xstrndup(head + m + 1, t),
                           kp_xstrndup(in->data + head_len, body_len), header(head, "Content-Type"),
                           header(head, "Authorization")};
        memmove(in->data, in->data + head_len + body_len, in->len - head_len - body_len);
        in->len -= head_len + body_len;
        in->data[in->len] = '\0';
    }
    free(head);
    return ok;
}

/* The log owns the request's strings from here on. */
static void log_request(fake_api *fa, const fake_logged *r)
{
    pthread_mutex_lock(&fa->lock);
    fa->log = kp_xgrow(fa->log, &fa->log_cap, fa->nlog + 1, sizeof(fake_logged));
    fa->log[fa->nlog++] = *r;
    pthread_mutex_unlock(&fa->lock);
}

static bool authorized(fake_api *fa, const char *auth)
{
    pthread_mutex_lock(&fa->lock);
    bool ok = !fa->token || (strncmp(auth, "Bearer ", 7) == 0 && strcmp(auth + 7, fa->token) == 0);
    pthread_mutex_unlock(&fa->lock);
    return ok;
}

static bool serve(fake_api *fa, int fd, const fake_logged *r)
{
    const char *q = strchr(r->target, '?');
    char *path = kp_xstrndup(r->target, q ? (size_t)(q - r->target) : strlen(r->target));
    fake_req req = {r->method, path, q ? q + 1 : "", r->body, r->content_type, r->authorization};
    fake_resp hr = {0, NULL, NULL, 0};
    char v[16];
    bool ok = true;
    log_request(fa, r);
    pthread_mutex_lock(&fa->lock);
    fake_hook hook = fa->hook;
    void *ctx = fa->hook_ctx;
    pthread_mutex_unlock(&fa->lock);
    if (!authorized(fa, r->authorization)) {
        char *body = status_body(401, "Unauthorized", "Unauthorized");
        ok = send_answer(fd, 401, body);
        free(body);
    } else if (hook && (hook(ctx, &req, &hr), hr.chunks)) {
        stream_chunks(fd, &hr);
        ok = false; /* a stream ends its connection */
    } else if (hr.status) {
        ok = send_answer(fd, hr.status, hr.body);
    } else if (strcmp(r->method, "GET") == 0 && query_get(req.query, "watch", v, sizeof(v)) &&
               (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)) {
        serve_watch(fa, fd, &req);
        ok = false;
    } else {
        pthread_mutex_lock(&fa->lock);
        answer a = dispatch(fa, &req);
        pthread_mutex_unlock(&fa->lock);
        ok = send_answer(fd, a.status, a.body);
        free(a.body);
    }
    free(hr.body);
    free(path);
    return ok;
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    kp_buf in = KP_BUF_INIT((size_t)16 << 20);
    fake_logged r;
    while (read_request(c->fd, &in, &r) && serve(c->fa, c->fd, &r)) {
    }
    kp_buf_free(&in);
    pthread_mutex_lock(&c->fa->lock);
    close(c->fd);
    c->done = true;
    pthread_mutex_unlock(&c->fa->lock);
    return NULL;
}

static void *accept_main(void *arg)
{
    fake_api *fa = arg;
    for (;;) {
        int fd = accept(fa->lfd, NULL, NULL);
        pthread_mutex_lock(&fa->lock);
        if (fd < 0 || fa->stopping) {
            pthread_mutex_unlock(&fa->lock);
            if (fd >= 0) close(fd);
            return NULL;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conn *c = kp_xcalloc(1, sizeof(*c));
        *c = (conn){fa, fd, 0, false};
        fa->conns = kp_xgrow(fa->conns, &fa->conns_cap, fa->nconns + 1, sizeof(*fa->conns));
        fa->conns[fa->nconns++] = c;
        pthread_create(&c->thread, NULL, conn_main, c);
        pthread_mutex_unlock(&fa->lock);
    }
}

/* ----------------------------------------------------------- interface */

static int listen_loopback(char *url, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    snprintf(url, size, "http://127.0.0.1:%d", ntohs(a.sin_port));
    return fd;
}

fake_api *fake_api_start(void)
{
    fake_api *fa = kp_xcalloc(1, sizeof(*fa));
    fa->lfd = listen_loopback(fa->url, sizeof(fa->url));
    if (fa->lfd < 0) {
        free(fa);
        return NULL;
    }
    pthread_mutex_init(&fa->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&fa->cond, &attr);
    pthread_condattr_destroy(&attr);
    fa->policy_v1 = true;
    fa->rv = 100;
    fa->seed = (unsigned)time(NULL);
    pthread_create(&fa->acceptor, NULL, accept_main, fa);
    return fa;
}

static void free_store(fake_api *fa)
{
    for (size_t i = 0; i < fa->nobjs; i++)
        cJSON_Delete(fa->objs[i].obj);
    for (size_t i = 0; i < fa->nevents; i++)
        free(fa->events[i].json);
    for (size_t i = 0; i < fa->nlog; i++) {
        fake_logged *l = &fa->log[i];
        free((char *)l->method), free((char *)l->target), free((char *)l->body);
        free((char *)l->content_type), free((char *)l->authorization);
    }
    free(fa->objs), free(fa->events), free(fa->log), free(fa->conns), free(fa->token);
}

void fake_api_stop(fake_api *fa)
{
    if (!fa) return;
    pthread_mutex_lock(&fa->lock);
    fa->stopping = true;
    shutdown(fa->lfd, SHUT_RDWR);
    pthread_mutex_unlock(&fa->lock);
    pthread_join(fa->acceptor, NULL);
    close(fa->lfd);
    pthread_mutex_lock(&fa->lock);
    for (size_t i = 0; i < fa->nconns; i++)
        if (!fa->conns[i]->done) shutdown(fa->conns[i]->fd, SHUT_RDWR);
    pthread_cond_broadcast(&fa->cond);
    pthread_mutex_unlock(&fa->lock);
    for (size_t i = 0; i < fa->nconns; i++) {
        pthread_join(fa->conns[i]->thread, NULL);
        free(fa->conns[i]);
    }
    free_store(fa);
    pthread_cond_destroy(&fa->cond);
    pthread_mutex_destroy(&fa->lock);
    free(fa);
}

const char *fake_api_url(fake_api *fa)
{
    return fa->url;
}

#define LOCKED(fa, stmt)                                                                           \
    do {                                                                                           \
        pthread_mutex_lock(&(fa)->lock);                                                           \
        stmt;                                                                                      \
        pthread_cond_broadcast(&(fa)->cond);                                                       \
        pthread_mutex_unlock(&(fa)->lock);                                                         \
    } while (0)

void fake_api_set_hook(fake_api *fa, fake_hook hook, void *ctx)
{
    LOCKED(fa, (fa->hook = hook, fa->hook_ctx = ctx));
}

void fake_api_set_policy_v1(fake_api *fa, bool served)
{
    LOCKED(fa, fa->policy_v1 = served);
}

void fake_api_set_patch_locks(fake_api *fa, bool enforced)
{
    LOCKED(fa, fa->patch_locks = enforced);
}

void fake_api_require_token(fake_api *fa, const char *token)
{
    LOCKED(fa, (free(fa->token), fa->token = token ? kp_xstrdup(token) : NULL));
}

void fake_api_compact(fake_api *fa)
{
    LOCKED(fa, fa->compacted_rv = fa->rv);
}

void fake_api_bookmark(fake_api *fa)
{
    LOCKED(fa, fa->bookmark_gen++);
}

void fake_api_close_watches(fake_api *fa)
{
    LOCKED(fa, fa->close_gen++);
}

long fake_api_rv(fake_api *fa)
{
    long rv;
    LOCKED(fa, rv = fa->rv);
    return rv;
}

long fake_api_put(fake_api *fa, const char *collection, const char *json)
{
    cJSON *obj = cJSON_Parse(json);
    route r;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", collection, meta(obj, "name") ? meta(obj, "name") : "");
    if (!obj || !parse_route(path, &r) || !r.name[0]) {
        cJSON_Delete(obj);
        return -1;
    }
    if (r.ns[0]) set_meta(obj, "namespace", r.ns);
    long rv;
    LOCKED(fa, (store(fa, &r, obj), rv = fa->rv));
    return rv;
}

bool fake_api_remove(fake_api *fa, const char *path)
{
    route r;
    entry *e = NULL;
    if (!parse_route(path, &r)) return false;
    LOCKED(fa, (e = find(fa, &r), e ? cJSON_Delete(unstore(fa, e)) : (void)0));
    return e != NULL;
}

cJSON *fake_api_get(fake_api *fa, const char *path)
{
    route r;
    cJSON *copy = NULL;
    if (!parse_route(path, &r)) return NULL;
    LOCKED(fa, (copy = find(fa, &r) ? cJSON_Duplicate(find(fa, &r)->obj, 1) : NULL));
    return copy;
}

bool fake_api_wait_watches(fake_api *fa, int n, int timeout_ms)
{
    pthread_mutex_lock(&fa->lock);
    for (int waited = 0; fa->watches < n && waited < timeout_ms; waited += 20)
        wait_cond(fa, 20);
    bool ok = fa->watches >= n;
    pthread_mutex_unlock(&fa->lock);
    return ok;
}

size_t fake_api_connections(fake_api *fa)
{
    size_t n;
    LOCKED(fa, n = fa->nconns);
    return n;
}

static bool matches(const fake_logged *l, const char *method, const char *prefix)
{
    return (!method || strcmp(l->method, method) == 0) &&
           (!prefix || strncmp(l->target, prefix, strlen(prefix)) == 0);
}

size_t fake_api_count(fake_api *fa, const char *method, const char *prefix)
{
    size_t n = 0;
    LOCKED(fa, for (size_t i = 0; i < fa->nlog; i++) n += matches(&fa->log[i], method, prefix));
    return n;
}

bool fake_api_find(fake_api *fa, const char *method, const char *prefix, long nth, fake_logged *out)
{
    long total = (long)fake_api_count(fa, method, prefix), seen = 0;
    long want = nth < 0 ? total + nth : nth;
    bool found = false;
    pthread_mutex_lock(&fa->lock);
    for (size_t i = 0; i < fa->nlog && !found; i++)
        if (matches(&fa->log[i], method, prefix) && seen++ == want) {
            *out = fa->log[i];
            found = true;
        }
    pthread_mutex_unlock(&fa->lock);
    return found;
}
