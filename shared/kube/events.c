/*
 * Event recording with de-duplication (see events.h).
 */
#include "kube/events.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "kube/ops.h"
#include "kube/strmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SEEN = 4096, MAX_MESSAGE = 1024 };

typedef struct seen {
    char *ns;
    char *name; /* of the Event */
    int count;
} seen;

struct kp_kube_recorder {
    kp_kube_client *client;
    char *component;
    const kp_clock *clock;
    pthread_mutex_t lock;
    kp_strmap seen;  /* dedup key -> seen */
    int64_t last_ns; /* Event names are <object>.<hex ns>: unique per recorder */
};

static void seen_free(void *value)
{
    seen *s = value;
    free(s->ns);
    free(s->name);
    free(s);
}

kp_kube_recorder *kp_kube_recorder_new(kp_kube_client *client, const char *component,
                                       const kp_clock *clock)
{
    kp_kube_recorder *r = kp_xcalloc(1, sizeof(*r));
    r->client = client;
    r->component = kp_xstrdup(component ? component : "karpenter");
    r->clock = clock ? clock : kp_clock_system();
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

kp_kube_recorder *kp_kube_recorder_free(kp_kube_recorder *r)
{
    if (!r) return NULL;
    kp_strmap_clear(&r->seen, seen_free);
    pthread_mutex_destroy(&r->lock);
    free(r->component);
    free(r);
    return NULL;
}

static void add_opt(cJSON *obj, const char *field, const char *value)
{
    if (value && *value) cJSON_AddStringToObject(obj, field, value);
}

static cJSON *involved(const kp_kube_resource *res, const cJSON *obj)
{
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "kind", res->kind);
    cJSON_AddStringToObject(ref, "apiVersion", res->api_version);
    add_opt(ref, "namespace", kp_kube_meta(obj, "namespace"));
    add_opt(ref, "name", kp_kube_meta(obj, "name"));
    add_opt(ref, "uid", kp_kube_meta(obj, "uid"));
    add_opt(ref, "resourceVersion", kp_kube_meta(obj, "resourceVersion"));
    return ref;
}

static cJSON *new_event(kp_kube_recorder *r, const kp_kube_resource *res, const cJSON *obj,
                        const char *ns, const char *const text[3], const char *now)
{
    int64_t ns_now = r->clock->now(r->clock);
    pthread_mutex_lock(&r->lock);
    if (ns_now <= r->last_ns) ns_now = r->last_ns + 1;
    r->last_ns = ns_now;
    pthread_mutex_unlock(&r->lock);
    char name[300];
    snprintf(name, sizeof(name), "%s.%llx", kp_kube_meta(obj, "name"), (unsigned long long)ns_now);
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "apiVersion", "v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON *meta = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON_AddItemToObject(ev, "involvedObject", involved(res, obj));
    cJSON_AddStringToObject(ev, "type", text[0]);
    cJSON_AddStringToObject(ev, "reason", text[1]);
    cJSON_AddStringToObject(ev, "message", text[2]);
    cJSON_AddStringToObject(ev, "firstTimestamp", now);
    cJSON_AddStringToObject(ev, "lastTimestamp", now);
    cJSON_AddNumberToObject(ev, "count", 1);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(ev, "source"), "component", r->component);
    cJSON_AddStringToObject(ev, "reportingComponent", r->component);
    return ev;
}

static char *dedup_key(const kp_kube_resource *res, const cJSON *obj, const char *const text[3])
{
    const char *uid = kp_kube_meta(obj, "uid");
    const char *ns = kp_kube_meta(obj, "namespace");
    const char *name = kp_kube_meta(obj, "name");
    const char *parts[] = {res->kind, ns ? ns : "", name ? name : "", uid ? uid : "",
                           text[0],   text[1],      text[2]};
    size_t len = 0;
    for (size_t i = 0; i < 7; i++)
        len += strlen(parts[i]) + 1;
    /* As long as its parts: a key cut short could be another's. */
    char *key = kp_xmalloc(len), *p = key;
    for (size_t i = 0; i < 7; i++) {
        size_t n = strlen(parts[i]);
        memcpy(p, parts[i], n);
        p[n] = i < 6 ? '\n' : '\0';
        p += n + 1;
    }
    return key;
}

/* Bump the Event we wrote before; KP_ENOTFOUND when it has expired. */
static int bump(kp_kube_recorder *r, const seen *s, int count, const char *now)
{
    char patch[128];
    snprintf(patch, sizeof(patch), "{\"count\":%d,\"lastTimestamp\":\"%s\"}", count, now);
    return kp_kube_patch(r->client, KP_RES_EVENT, s->ns, s->name, KP_PATCH_MERGE, patch, 0, NULL);
}

static int create(kp_kube_recorder *r, const kp_kube_resource *res, const cJSON *obj,
                  const char *const text[3], const char *key, const char *now)
{
    const char *ns = kp_kube_meta(obj, "namespace");
    if (!res->namespaced || !ns || !*ns) ns = "default";
    cJSON *ev = new_event(r, res, obj, ns, text, now);
    int err = kp_kube_create(r->client, KP_RES_EVENT, ns, ev, NULL);
    if (!err) {
        seen *s = kp_xcalloc(1, sizeof(*s));
        s->ns = kp_xstrdup(ns);
        s->name = kp_xstrdup(kp_kube_meta(ev, "name"));
        s->count = 1;
        pthread_mutex_lock(&r->lock);
        if (r->seen.count >= MAX_SEEN) kp_strmap_clear(&r->seen, seen_free);
        seen *old = kp_strmap_put(&r->seen, key, s);
        pthread_mutex_unlock(&r->lock);
        if (old) seen_free(old);
    }
    cJSON_Delete(ev);
    return err;
}

/* The count to write if this event was recorded before, with its place. */
static bool previously(kp_kube_recorder *r, const char *key, seen *out)
{
    pthread_mutex_lock(&r->lock);
    seen *s = kp_strmap_get(&r->seen, key);
    if (s) {
        s->count++;
        *out = (seen){kp_xstrdup(s->ns), kp_xstrdup(s->name), s->count};
    }
    pthread_mutex_unlock(&r->lock);
    return s != NULL;
}

int kp_kube_record(kp_kube_recorder *r, enum kp_kube_res kind, const cJSON *obj, const char *type,
                   const char *reason, const char *message)
{
    const kp_kube_resource *res = kp_kube_resource_get(kind);
    if (!res || !kp_kube_meta(obj, "name"))
        return kp_error_set(KP_EINVALID, "event: the object has no kind or name");
    char msg[MAX_MESSAGE + 1];
    snprintf(msg, sizeof(msg), "%s", message ? message : "");
    const char *text[3] = {type ? type : KP_EVENT_NORMAL, reason ? reason : "", msg};
    char now[32];
    kp_time_format_rfc3339(r->clock->now(r->clock), now, sizeof(now));
    char *key = dedup_key(res, obj, text);
    seen s;
    int err = KP_ENOTFOUND;
    if (previously(r, key, &s)) {
        err = bump(r, &s, s.count, now);
        free(s.ns);
        free(s.name);
    }
    if (err == KP_ENOTFOUND) err = create(r, res, obj, text, key, now);
    free(key);
    return err;
}
