/*
 * Typed helpers (see ops.h): paths and bodies built here, requests sent with
 * kp_kube_do.
 */
#include "kube/ops.h"
#include "base/error.h"
#include "kube/rest_internal.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kp_kube_meta(const cJSON *obj, const char *field)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, field);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kp_kube_object_key(const cJSON *obj, char *buf, size_t size)
{
    const char *name = kp_kube_meta(obj, "name");
    const char *ns = kp_kube_meta(obj, "namespace");
    if (!name || !*name) return kp_error_set(KP_EINVALID, "object has no metadata.name");
    int n = ns && *ns ? snprintf(buf, size, "%s/%s", ns, name) : snprintf(buf, size, "%s", name);
    if (n < 0 || (size_t)n >= size)
        return kp_error_set(KP_ETOOLARGE, "object key longer than %zu bytes", size);
    return 0;
}

static int add_param(kp_buf *b, const char *name, const char *value)
{
    if (!value || !*value) return 0;
    int err = kp_buf_printf(b, "%c%s=", strchr(kp_buf_cstr(b), '?') ? '&' : '?', name);
    return err < 0 ? err : kp_kube_escape(b, value);
}

/* The path of `res` (resolved for this server) into `b`. */
static int object_path(kp_kube_client *c, kp_buf *b, enum kp_kube_res res, const char *ns,
                       const char *name, const char *sub)
{
    const kp_kube_resource *r;
    int err = kp_kube_client_resource(c, res, &r);
    if (err < 0) return err;
    if (r->namespaced && name && (!ns || !*ns))
        return kp_error_set(KP_EINVALID, "%s %s: a namespace is required", r->kind, name);
    return kp_kube_resource_path(b, r, ns, name, sub);
}

static int send_req(kp_kube_client *c, const char *method, const kp_buf *path, const char *body,
                    const char *content_type, cJSON **out)
{
    kp_kube_request req = {method, kp_buf_cstr(path), body, content_type, NULL};
    cJSON *json = NULL;
    int err = kp_kube_do(c, &req, &json);
    if (err < 0) return err;
    if (out)
        *out = json;
    else
        cJSON_Delete(json);
    return 0;
}

int kp_kube_get(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                cJSON **out)
{
    kp_buf path = KP_BUF_INIT(4096);
    int err = object_path(c, &path, res, ns, name, NULL);
    if (!err) err = send_req(c, "GET", &path, NULL, NULL, out);
    kp_buf_free(&path);
    return err;
}

/* ---------------------------------------------------------------- list */

static int page_path(kp_kube_client *c, kp_buf *b, enum kp_kube_res res, const kp_kube_list_opts *o,
                     bool paged, const char *cont)
{
    int err = object_path(c, b, res, o->namespace, NULL, NULL);
    if (!err) err = add_param(b, "labelSelector", o->label_selector);
    if (!err) err = add_param(b, "fieldSelector", o->field_selector);
    if (!err && paged && o->limit > 0)
        err = kp_buf_printf(b, "%climit=%d", strchr(kp_buf_cstr(b), '?') ? '&' : '?', o->limit);
    if (!err) err = add_param(b, "continue", cont);
    return err;
}

/* A server that hands back the token it was given would page forever. */
static int take_page(kp_kube_pager *p, cJSON *page, const char *path)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
    const char *rv = kp_kube_meta(page, "resourceVersion");
    const char *next = kp_kube_meta(page, "continue");
    if (next && *next && p->next && strcmp(next, p->next) == 0)
        return kp_error_set(KP_EINVALID,
                            "GET %s: the server answered page %zu with the continue token it was "
                            "given; the list would never end",
                            path, p->pages);
    while (cJSON_IsArray(items) && items->child)
        cJSON_AddItemToArray(p->items, cJSON_DetachItemViaPointer(items, items->child));
    if (!p->rv) p->rv = kp_xstrdup(rv ? rv : "");
    free(p->next);
    p->next = next && *next ? kp_xstrdup(next) : NULL;
    return 0;
}

void kp_kube_pager_reset(kp_kube_pager *p)
{
    cJSON_Delete(p->items);
    free(p->rv);
    free(p->next);
    memset(p, 0, sizeof(*p));
}

/* A list, paged or not, holds at most what one answer may (the client's
 * max_body): pages that keep coming past that are an error, not memory. */
int kp_kube_pager_add(kp_kube_pager *p, cJSON *page, size_t bytes, size_t max, const char *path)
{
    if (!p->items) p->items = cJSON_CreateArray();
    p->pages++;
    p->bytes += bytes;
    if (p->bytes > max)
        return kp_error_set(KP_ETOOLARGE,
                            "GET %s: the list is larger than %zu bytes after %zu pages; giving up",
                            path, max, p->pages);
    return take_page(p, page, path);
}

static int fetch_pages(kp_kube_client *c, enum kp_kube_res res, const kp_kube_list_opts *o,
                       kp_kube_pager *p)
{
    bool paged = true;
    p->items = cJSON_CreateArray();
    for (;;) {
        kp_buf path = KP_BUF_INIT(8192);
        int err = page_path(c, &path, res, o, paged, p->next);
        kp_kube_request req = {"GET", kp_buf_cstr(&path), NULL, NULL, o->cancel};
        cJSON *page = NULL;
        size_t bytes = 0;
        if (!err) err = kp_kube_do_counted(c, &req, &page, &bytes);
        if (err == KP_EGONE && p->next && paged) {
            /* The snapshot behind the token was compacted: one full list. */
            kp_kube_pager_reset(p);
            p->items = cJSON_CreateArray();
            paged = false;
            kp_buf_free(&path);
            continue;
        }
        if (!err) err = kp_kube_pager_add(p, page, bytes, c->opts.max_body, kp_buf_cstr(&path));
        kp_buf_free(&path);
        cJSON_Delete(page);
        if (err < 0) return err;
        if (!p->next) return 0;
    }
}

int kp_kube_list(kp_kube_client *c, enum kp_kube_res res, const kp_kube_list_opts *opts,
                 cJSON **out)
{
    static const kp_kube_list_opts defaults = KP_KUBE_LIST_OPTS_INIT;
    const kp_kube_resource *r;
    kp_kube_pager p = {NULL, NULL, NULL, 0, 0};
    int err = kp_kube_client_resource(c, res, &r);
    if (!err) err = fetch_pages(c, res, opts ? opts : &defaults, &p);
    if (err < 0) {
        kp_kube_pager_reset(&p);
        return err;
    }
    cJSON *list = cJSON_CreateObject();
    char kind[96];
    snprintf(kind, sizeof(kind), "%sList", r->kind);
    cJSON_AddStringToObject(list, "apiVersion", r->api_version);
    cJSON_AddStringToObject(list, "kind", kind);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(list, "metadata"), "resourceVersion", p.rv);
    cJSON_AddItemToObject(list, "items", p.items);
    p.items = NULL;
    kp_kube_pager_reset(&p);
    if (out)
        *out = list;
    else
        cJSON_Delete(list);
    return 0;
}

/* ------------------------------------------------------- create, update */

static int send_object(kp_kube_client *c, const char *method, const kp_buf *path, const cJSON *obj,
                       cJSON **out)
{
    char *body = cJSON_PrintUnformatted(obj);
    if (!body)
        return kp_error_set(KP_EINVALID, "%s %s: cannot serialise the object", method,
                            kp_buf_cstr(path));
    int err = send_req(c, method, path, body, NULL, out);
    free(body);
    return err;
}

int kp_kube_create(kp_kube_client *c, enum kp_kube_res res, const char *ns, const cJSON *obj,
                   cJSON **out)
{
    const kp_kube_resource *r = kp_kube_resource_get(res);
    if (!ns || !*ns) ns = kp_kube_meta(obj, "namespace");
    if (r && r->namespaced && (!ns || !*ns))
        return kp_error_set(KP_EINVALID, "creating a %s: a namespace is required", r->kind);
    kp_buf path = KP_BUF_INIT(4096);
    int err = object_path(c, &path, res, ns, NULL, NULL);
    if (!err) err = send_object(c, "POST", &path, obj, out);
    kp_buf_free(&path);
    return err;
}

int kp_kube_update(kp_kube_client *c, enum kp_kube_res res, const cJSON *obj, unsigned flags,
                   cJSON **out)
{
    const char *name = kp_kube_meta(obj, "name");
    if (!name || !*name)
        return kp_error_set(KP_EINVALID, "update: the object has no metadata.name");
    kp_buf path = KP_BUF_INIT(4096);
    int err = object_path(c, &path, res, kp_kube_meta(obj, "namespace"), name,
                          flags & KP_KUBE_STATUS ? "status" : NULL);
    if (!err) err = send_object(c, "PUT", &path, obj, out);
    kp_buf_free(&path);
    return err;
}

int kp_kube_modify(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                   unsigned flags, int attempts, kp_kube_mutate_fn fn, void *ctx, cJSON **out)
{
    int err = KP_ECONFLICT;
    for (int i = 0; i < (attempts > 0 ? attempts : 5) && err == KP_ECONFLICT; i++) {
        if (i > 0) kp_kube_cancel_sleep(NULL, 10 * i); /* let the other writer finish */
        cJSON *obj = NULL;
        err = kp_kube_get(c, res, ns, name, &obj);
        if (err < 0) return err;
        err = fn(ctx, obj);
        if (err == KP_KUBE_UNCHANGED) {
            if (out)
                *out = obj;
            else
                cJSON_Delete(obj);
            return 0;
        }
        if (err == 0) err = kp_kube_update(c, res, obj, flags, out);
        cJSON_Delete(obj);
    }
    return err;
}

/* --------------------------------------------------------------- patch */

int kp_kube_patch(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                  enum kp_kube_patch_type type, const char *patch, unsigned flags, cJSON **out)
{
    static const char *const types[] = {
        [KP_PATCH_MERGE] = "application/merge-patch+json",
        [KP_PATCH_JSON] = "application/json-patch+json",
        [KP_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
    };
    if ((unsigned)type > KP_PATCH_STRATEGIC)
        return kp_error_set(KP_EINVALID, "unknown patch type %d", (int)type);
    kp_buf path = KP_BUF_INIT(4096);
    int err = object_path(c, &path, res, ns, name, flags & KP_KUBE_STATUS ? "status" : NULL);
    if (!err) err = send_req(c, "PATCH", &path, patch, types[type], out);
    kp_buf_free(&path);
    return err;
}

/* -------------------------------------------------------- delete, evict */

static cJSON *delete_options(const kp_kube_delete_opts *o)
{
    if (!o || (!o->uid && !o->resource_version && !o->propagation && o->grace_period_seconds < 0))
        return NULL;
    cJSON *d = cJSON_CreateObject();
    if (o->uid || o->resource_version) {
        cJSON *pre = cJSON_AddObjectToObject(d, "preconditions");
        if (o->uid) cJSON_AddStringToObject(pre, "uid", o->uid);
        if (o->resource_version)
            cJSON_AddStringToObject(pre, "resourceVersion", o->resource_version);
    }
    if (o->propagation) cJSON_AddStringToObject(d, "propagationPolicy", o->propagation);
    if (o->grace_period_seconds >= 0)
        cJSON_AddNumberToObject(d, "gracePeriodSeconds", (double)o->grace_period_seconds);
    return d;
}

int kp_kube_delete(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                   const kp_kube_delete_opts *opts)
{
    kp_buf path = KP_BUF_INIT(4096);
    cJSON *d = delete_options(opts);
    int err = object_path(c, &path, res, ns, name, NULL);
    if (!err && d) {
        cJSON_AddStringToObject(d, "kind", "DeleteOptions");
        cJSON_AddStringToObject(d, "apiVersion", "v1");
        err = send_object(c, "DELETE", &path, d, NULL);
    } else if (!err) {
        err = send_req(c, "DELETE", &path, NULL, NULL, NULL);
    }
    cJSON_Delete(d);
    kp_buf_free(&path);
    return err;
}

static cJSON *eviction(const char *api_version, const char *ns, const char *name,
                       const kp_kube_delete_opts *opts)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "apiVersion", api_version);
    cJSON_AddStringToObject(e, "kind", "Eviction");
    cJSON *meta = cJSON_AddObjectToObject(e, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON *d = delete_options(opts);
    if (d) cJSON_AddItemToObject(e, "deleteOptions", d);
    return e;
}

int kp_kube_evict(kp_kube_client *c, const char *ns, const char *name,
                  const kp_kube_delete_opts *opts)
{
    bool v1;
    int err = kp_kube_client_has_policy_v1(c, &v1);
    if (err < 0) return err;
    if (!ns || !*ns || !name || !*name)
        return kp_error_set(KP_EINVALID, "evict: namespace and name are required");
    kp_buf path = KP_BUF_INIT(4096);
    cJSON *e = eviction(v1 ? "policy/v1" : "policy/v1beta1", ns, name, opts);
    err = object_path(c, &path, KP_RES_POD, ns, name, "eviction");
    if (!err) err = send_object(c, "POST", &path, e, NULL);
    cJSON_Delete(e);
    kp_buf_free(&path);
    return err;
}
