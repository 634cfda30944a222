/* Background event writer (see eventq.h). */
#include "controller/eventq.h"
#include "base/xalloc.h"
#include "kube/strmap.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending_event {
    enum kp_kube_res res;
    cJSON *obj; /* apiVersion, kind, metadata */
    char *type, *reason, *message;
} pending_event;

struct kp_eventq {
    kp_kube_recorder *recorder;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pending_event *ring;
    size_t cap, head, len;
    size_t dropped, written;
    bool stopping;
    int64_t stop_deadline_ns; /* CLOCK_MONOTONIC: events still queued then are dropped */
    kp_strmap recent;         /* dedupe key -> (int64_t *) monotonic ns it may be posted again */
    size_t deduped;
    pthread_t thread;
};

/* Karpenter's events.Recorder: the same event about the same object is
 * posted once per this long (a controller re-runs every second while it
 * waits, and would otherwise write an event each time). */
#define DEDUPE_NS (120LL * 1000000000)
#define DEDUPE_MAX 20000 /* keys remembered; past it, expired ones are dropped */

/* How long stopping may spend writing what is queued: a shutdown must not
 * wait for thousands of events at the events client's rate. */
#define DRAIN_NS (5LL * 1000000000)

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What an Event's involvedObject needs; a Pod's metadata can be large
 * (managedFields), so only the identifying fields are kept. */
static cJSON *reference_of(const cJSON *obj)
{
    cJSON *ref = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(ref, "metadata");
    static const char *const top[] = {"apiVersion", "kind"};
    static const char *const ids[] = {"name", "namespace", "uid", "resourceVersion"};
    for (size_t i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, top[i]);
        if (cJSON_IsString(v))
            cJSON_AddStringToObject(ref, top[i], v->valuestring);
    }
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    for (size_t i = 0; i < 4; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, ids[i]);
        if (cJSON_IsString(v))
            cJSON_AddStringToObject(meta, ids[i], v->valuestring);
    }
    return ref;
}

static void event_free(pending_event *e)
{
    cJSON_Delete(e->obj);
    free(e->type), free(e->reason), free(e->message);
}

/* Stopping and past the deadline: drop everything left (with the lock held). */
static void drop_rest(kp_eventq *q)
{
    while (q->len) {
        event_free(&q->ring[q->head]);
        q->head = (q->head + 1) % q->cap, q->len--, q->dropped++;
    }
}

static void *writer(void *arg)
{
    kp_eventq *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->len && !q->stopping)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->stopping && mono_ns() > q->stop_deadline_ns)
            drop_rest(q);
        if (!q->len)
            break;
        pending_event e = q->ring[q->head];
        q->head = (q->head + 1) % q->cap, q->len--;
        pthread_mutex_unlock(&q->mu);
        int err = kp_kube_record(q->recorder, e.res, e.obj, e.type, e.reason, e.message);
        event_free(&e);
        pthread_mutex_lock(&q->mu);
        q->written += err == 0;
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

kp_eventq *kp_eventq_start(kp_kube_client *client, const char *component, size_t capacity)
{
    kp_eventq *q = kp_xcalloc(1, sizeof(*q));
    q->recorder = kp_kube_recorder_new(client, component, NULL);
    q->cap = capacity ? capacity : 1;
    q->ring = kp_xcalloc(q->cap, sizeof(pending_event));
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    if (pthread_create(&q->thread, NULL, writer, q) != 0)
        abort();
    return q;
}

kp_eventq *kp_eventq_stop(kp_eventq *q)
{
    if (!q)
        return NULL;
    pthread_mutex_lock(&q->mu);
    q->stopping = true;
    q->stop_deadline_ns = mono_ns() + DRAIN_NS;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    kp_kube_recorder_free(q->recorder);
    kp_strmap_clear(&q->recent, free);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q->ring);
    free(q);
    return NULL;
}

/* With the lock held: whether `key` was posted within its window (and if
 * not, remember it now). */
static bool recently_posted(kp_eventq *q, const char *key, int64_t window_ns)
{
    int64_t now = mono_ns();
    int64_t *until = kp_strmap_get(&q->recent, key);
    if (until && *until > now)
        return true;
    if (!until && q->recent.count >= DEDUPE_MAX)
        kp_strmap_clear(&q->recent, free); /* rare: a burst of distinct events; forget the window */
    until = kp_strmap_get(&q->recent, key);
    if (!until) {
        until = kp_xcalloc(1, sizeof(*until));
        kp_strmap_put(&q->recent, key, until);
    }
    *until = now + window_ns;
    return false;
}

void kp_eventq_post(kp_eventq *q, enum kp_kube_res res, const cJSON *obj, const char *type, const char *reason,
                    const char *message)
{
    char key[1400];
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "uid"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
    snprintf(key, sizeof(key), "%s/%s/%s", uid ? uid : name ? name : "", reason ? reason : "", message ? message : "");
    kp_eventq_post_dedupe(q, res, obj, type, reason, message, key, DEDUPE_NS);
}

void kp_eventq_post_dedupe(kp_eventq *q, enum kp_kube_res res, const cJSON *obj, const char *type, const char *reason,
                           const char *message, const char *dedupe_key, int64_t window_ns)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    bool again = dedupe_key && window_ns > 0 && recently_posted(q, dedupe_key, window_ns);
    q->deduped += again;
    pthread_mutex_unlock(&q->mu);
    if (again)
        return;
    pending_event e = {res, reference_of(obj), kp_xstrdup(type), kp_xstrdup(reason), kp_xstrdup(message)};
    pthread_mutex_lock(&q->mu);
    bool full = q->len == q->cap || q->stopping;
    if (full)
        q->dropped++;
    else
        q->ring[(q->head + q->len++) % q->cap] = e;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (full)
        event_free(&e);
}

size_t kp_eventq_dropped(kp_eventq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->dropped;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t kp_eventq_written(kp_eventq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->written;
    pthread_mutex_unlock(&q->mu);
    return n;
}
