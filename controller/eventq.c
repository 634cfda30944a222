/* Background event writer (see eventq.h). */
#include "controller/eventq.h"
#include "base/xalloc.h"
#include "kube/strmap.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

/* What an Event needs of its object and itself, as text in one block: the
 * ring holds up to `capacity` of these while the writer waits on the API
 * server's rate limit, so each costs one allocation, not a JSON tree. */
enum { REF_API, REF_KIND, REF_NAME, REF_NAMESPACE, REF_UID, REF_RV, EV_TYPE, EV_REASON, EV_MESSAGE, EV_FIELDS };

typedef struct pending_event {
    enum kp_kube_res res;
    char *text;                 /* owns the strings below */
    const char *field[EV_FIELDS]; /* NULL: absent */
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
    kp_strmap recent;         /* digest of a dedupe key -> monotonic ns it may be posted again */
    size_t prune_at;          /* prune expired keys when `recent` holds this many */
    size_t deduped;
    pthread_t thread;
};

/* Karpenter's events.Recorder: the same event about the same object is
 * posted once per this long (a controller re-runs every second while it
 * waits, and would otherwise write an event each time). */
#define DEDUPE_NS (120LL * 1000000000)
#define DEDUPE_MAX 20000 /* keys remembered; past it, all are forgotten */
#define PRUNE_MIN 1024   /* expired keys are dropped when the count doubles from here */

/* How long stopping may spend writing what is queued: a shutdown must not
 * wait for thousands of events at the events client's rate. */
#define DRAIN_NS (5LL * 1000000000)

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *str_field(const cJSON *obj, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));
}

/* The identifying fields of `obj` (a Pod's metadata can be large), the
 * event's own, copied into one block. */
static pending_event event_new(enum kp_kube_res res, const cJSON *obj, const char *type, const char *reason,
                               const char *message)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *src[EV_FIELDS] = {str_field(obj, "apiVersion"), str_field(obj, "kind"),
                                  str_field(meta, "name"),      str_field(meta, "namespace"),
                                  str_field(meta, "uid"),       str_field(meta, "resourceVersion"),
                                  type,                        reason,
                                  message};
    size_t size = 1;
    for (int i = 0; i < EV_FIELDS; i++)
        size += src[i] ? strlen(src[i]) + 1 : 0;
    pending_event e = {res, kp_xmalloc(size), {NULL}};
    char *p = e.text;
    for (int i = 0; i < EV_FIELDS; i++) {
        if (!src[i])
            continue;
        size_t n = strlen(src[i]) + 1;
        memcpy(p, src[i], n);
        e.field[i] = p;
        p += n;
    }
    return e;
}

static void add_str(cJSON *obj, const char *name, const char *value)
{
    if (value)
        cJSON_AddStringToObject(obj, name, value);
}

/* The object reference kp_kube_record reads: apiVersion, kind, metadata. */
static cJSON *event_object(const pending_event *e)
{
    static const char *const ids[] = {"name", "namespace", "uid", "resourceVersion"};
    cJSON *ref = cJSON_CreateObject();
    add_str(ref, "apiVersion", e->field[REF_API]);
    add_str(ref, "kind", e->field[REF_KIND]);
    cJSON *meta = cJSON_AddObjectToObject(ref, "metadata");
    for (int i = 0; i < 4; i++)
        add_str(meta, ids[i], e->field[REF_NAME + i]);
    return ref;
}

static void event_free(pending_event *e)
{
    free(e->text);
    e->text = NULL;
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
        cJSON *obj = event_object(&e);
        int err = kp_kube_record(q->recorder, e.res, obj, e.field[EV_TYPE], e.field[EV_REASON], e.field[EV_MESSAGE]);
        cJSON_Delete(obj);
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
    q->prune_at = PRUNE_MIN;
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
    kp_strmap_clear(&q->recent, NULL);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q->ring);
    free(q);
    return NULL;
}

/* A dedupe key is remembered by a digest of it (keys embed the message,
 * which can be long, and there is one per object): 128 bits as hex. */
static void digest_of(const char *key, char out[33])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!EVP_Digest(key, strlen(key), md, &len, EVP_sha256(), NULL) || len < 16) {
        snprintf(out, 33, "%.32s", key); /* no digest: the key's start still tells most apart */
        return;
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* The deadline is kept in the map's value pointer: no allocation per key. */
static int64_t deadline_of(void *value)
{
    return (int64_t)(intptr_t)value;
}

static bool expired(void *ctx, const char *key, void *value)
{
    (void)key;
    return deadline_of(value) <= *(const int64_t *)ctx;
}

/* Forget the keys whose window has passed; next time at twice what is left.
 * With the lock held. */
static void prune(kp_eventq *q, int64_t now)
{
    kp_strmap_remove_if(&q->recent, expired, &now, NULL);
    q->prune_at = q->recent.count * 2 > PRUNE_MIN ? q->recent.count * 2 : PRUNE_MIN;
}

/* With the lock held: whether `key` was posted within its window (and if
 * not, remember it now). */
static bool recently_posted(kp_eventq *q, const char *key, int64_t window_ns)
{
    _Static_assert(sizeof(intptr_t) >= sizeof(int64_t), "deadlines live in pointers");
    char digest[33];
    digest_of(key, digest);
    int64_t now = mono_ns();
    void *until = kp_strmap_get(&q->recent, digest);
    if (until && deadline_of(until) > now)
        return true;
    if (!until && q->recent.count >= q->prune_at)
        prune(q, now);
    if (!until && q->recent.count >= DEDUPE_MAX)
        kp_strmap_clear(&q->recent, NULL); /* a burst of distinct events inside one window */
    kp_strmap_put(&q->recent, digest, (void *)(intptr_t)(now + window_ns));
    return false;
}

size_t kp_eventq_remembered(kp_eventq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->recent.count;
    pthread_mutex_unlock(&q->mu);
    return n;
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
    pending_event e = event_new(res, obj, type, reason, message);
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

size_t kp_eventq_deduped(kp_eventq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->deduped;
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
