/*
 * The informer's thread and interface (see informer.h): list, replace,
 * watch, resume, back off, relist on 410 Gone.
 */
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/informer_internal.h"
#include "kube/ops.h"
#include "kube/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *dup_or_null(const char *s)
{
    return s ? kp_xstrdup(s) : NULL;
}

kp_informer *kp_informer_new(kp_kube_client *client, enum kp_kube_res res,
                             const kp_informer_opts *opts)
{
    static const kp_informer_opts defaults = KP_INFORMER_OPTS_INIT;
    kp_informer *inf = kp_xcalloc(1, sizeof(*inf));
    inf->client = client;
    inf->res = res;
    inf->opts = opts ? *opts : defaults;
    inf->opts.namespace = dup_or_null(inf->opts.namespace);
    inf->opts.label_selector = dup_or_null(inf->opts.label_selector);
    inf->opts.field_selector = dup_or_null(inf->opts.field_selector);
    pthread_rwlock_init(&inf->lock, NULL);
    pthread_mutex_init(&inf->state_lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&inf->synced_cond, &attr);
    pthread_condattr_destroy(&attr);
    inf->cancel = kp_kube_cancel_new();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    inf->seed = (unsigned)ts.tv_nsec ^ (unsigned)(uintptr_t)inf;
    return inf;
}

kp_informer *kp_informer_free(kp_informer *inf)
{
    if (!inf) return NULL;
    kp_informer_stop(inf);
    kp_cache_free(inf);
    free(inf->handlers);
    free(inf->queues);
    free(inf->rv);
    free((char *)inf->opts.namespace);
    free((char *)inf->opts.label_selector);
    free((char *)inf->opts.field_selector);
    kp_kube_cancel_free(inf->cancel);
    pthread_cond_destroy(&inf->synced_cond);
    pthread_mutex_destroy(&inf->state_lock);
    pthread_rwlock_destroy(&inf->lock);
    free(inf);
    return NULL;
}

static int not_started(const kp_informer *inf, const char *what)
{
    return inf->started ? kp_error_set(KP_EINVALID, "informer: %s after start", what) : 0;
}

int kp_informer_add_index(kp_informer *inf, const char *name, kp_informer_index_fn fn)
{
    int err = not_started(inf, "add_index");
    if (err < 0) return err;
    for (size_t i = 0; i < inf->nindexes; i++)
        if (strcmp(inf->indexes[i].name, name) == 0)
            return kp_error_set(KP_EINVALID, "informer: index \"%s\" exists", name);
    inf->indexes = kp_xgrow(inf->indexes, &inf->indexes_cap, inf->nindexes + 1, sizeof(kp_index));
    inf->indexes[inf->nindexes++] = (kp_index){kp_xstrdup(name), fn, KP_STRMAP_INIT};
    return 0;
}

int kp_informer_add_handler(kp_informer *inf, const kp_informer_handler *handler)
{
    int err = not_started(inf, "add_handler");
    if (err < 0) return err;
    inf->handlers =
        kp_xgrow(inf->handlers, &inf->handlers_cap, inf->nhandlers + 1, sizeof(*handler));
    inf->handlers[inf->nhandlers++] = *handler;
    return 0;
}

int kp_informer_add_queue(kp_informer *inf, kp_workqueue *queue)
{
    int err = not_started(inf, "add_queue");
    if (err < 0) return err;
    inf->queues = kp_xgrow(inf->queues, &inf->queues_cap, inf->nqueues + 1, sizeof(queue));
    inf->queues[inf->nqueues++] = queue;
    return 0;
}

/* ------------------------------------------------------------- state */

static void set_rv(kp_informer *inf, const char *rv)
{
    if (!rv || !*rv) return;
    pthread_mutex_lock(&inf->state_lock);
    free(inf->rv);
    inf->rv = kp_xstrdup(rv);
    pthread_mutex_unlock(&inf->state_lock);
}

char *kp_informer_resource_version(kp_informer *inf)
{
    pthread_mutex_lock(&inf->state_lock);
    char *rv = dup_or_null(inf->rv);
    pthread_mutex_unlock(&inf->state_lock);
    return rv;
}

static void count(kp_informer *inf, unsigned long *field)
{
    pthread_mutex_lock(&inf->state_lock);
    (*field)++;
    pthread_mutex_unlock(&inf->state_lock);
}

void kp_informer_get_stats(kp_informer *inf, kp_informer_stats *out)
{
    pthread_mutex_lock(&inf->state_lock);
    *out = inf->stats;
    pthread_mutex_unlock(&inf->state_lock);
}

static void mark_synced(kp_informer *inf)
{
    pthread_mutex_lock(&inf->state_lock);
    inf->synced = true;
    pthread_cond_broadcast(&inf->synced_cond);
    pthread_mutex_unlock(&inf->state_lock);
}

bool kp_informer_synced(kp_informer *inf)
{
    pthread_mutex_lock(&inf->state_lock);
    bool synced = inf->synced;
    pthread_mutex_unlock(&inf->state_lock);
    return synced;
}

int kp_informer_wait_synced(kp_informer *inf, int64_t timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    int64_t ns = until.tv_nsec + (timeout_ms % 1000) * KP_NS_PER_MS;
    until.tv_sec += (time_t)(timeout_ms / 1000 + ns / KP_NS_PER_SEC);
    until.tv_nsec = (long)(ns % KP_NS_PER_SEC);
    pthread_mutex_lock(&inf->state_lock);
    while (!inf->synced)
        if (pthread_cond_timedwait(&inf->synced_cond, &inf->state_lock, &until) != 0) break;
    bool synced = inf->synced;
    pthread_mutex_unlock(&inf->state_lock);
    return synced ? 0
                  : kp_error_set(KP_ETIMEOUT, "informer not synced within %lld ms",
                                 (long long)timeout_ms);
}

/* ------------------------------------------------------- list, watch */

static int list_and_replace(kp_informer *inf)
{
    kp_kube_list_opts lo = {inf->opts.namespace, inf->opts.label_selector, inf->opts.field_selector,
                            inf->opts.page_size, inf->cancel};
    cJSON *list = NULL;
    int err = kp_kube_list(inf->client, inf->res, &lo, &list);
    if (err < 0) return err;
    kp_changes changes = {NULL, 0, 0};
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    pthread_rwlock_wrlock(&inf->lock);
    kp_cache_replace(inf, items, &changes);
    pthread_rwlock_unlock(&inf->lock);
    set_rv(inf, kp_kube_meta(list, "resourceVersion"));
    cJSON_Delete(list);
    count(inf, &inf->stats.lists);
    kp_changes_deliver(inf, &changes);
    mark_synced(inf);
    return 0;
}

static int on_event(void *ctx, enum kp_watch_type type, cJSON **object)
{
    kp_informer *inf = ctx;
    cJSON *obj = *object;
    const char *rv = kp_kube_meta(obj, "resourceVersion");
    char key[512];
    count(inf, &inf->stats.events);
    if (type == KP_WATCH_BOOKMARK || kp_kube_object_key(obj, key, sizeof(key)) < 0) {
        set_rv(inf, rv);
        return 0;
    }
    set_rv(inf, rv);
    *object = NULL;
    kp_changes changes = {NULL, 0, 0};
    pthread_rwlock_wrlock(&inf->lock);
    if (type == KP_WATCH_DELETED)
        kp_cache_delete(inf, key, obj, &changes);
    else
        kp_cache_upsert(inf, key, obj, &changes);
    pthread_rwlock_unlock(&inf->lock);
    kp_changes_deliver(inf, &changes);
    return 0;
}

static int watch_once(kp_informer *inf)
{
    char *rv = kp_informer_resource_version(inf);
    int t = inf->opts.watch_timeout_seconds;
    kp_kube_watch_opts wo = {inf->opts.namespace,
                             inf->opts.label_selector,
                             inf->opts.field_selector,
                             rv,
                             true,
                             t > 0 ? t + (int)(rand_r(&inf->seed) % (unsigned)t) : 0,
                             inf->cancel};
    count(inf, &inf->stats.watches);
    int err = kp_kube_watch(inf->client, inf->res, &wo, on_event, inf);
    free(rv);
    return err;
}

/* How the thread is doing: back-off delays and failures in a row. */
typedef struct loop_state {
    int64_t delay;        /* next wait after a failed list or watch */
    int64_t relist_delay; /* next wait before a relist that 410 Gone caused */
    int64_t last_relist;  /* monotonic ns */
    unsigned failed;      /* lists and watches failed in a row */
} loop_state;

/* The informer runs on its own thread: nobody is there to hand an error to,
 * so this is where it is logged. One failure is routine (an API server
 * restarting); several in a row are worth an operator's attention. */
enum { WARN_AFTER_FAILURES = 5 };
/* As client-go's reflector: a relist waits 0.8 s at first, doubling up to
 * the maximum while 410s keep coming, and starts over after 2 minutes quiet. */
#define RELIST_RESET_NS (120 * KP_NS_PER_SEC)

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

static void note_failure(kp_informer *inf, loop_state *ls, int err)
{
    const kp_kube_resource *r = kp_kube_resource_get(inf->res);
    char n[16];
    ls->failed++;
    snprintf(n, sizeof(n), "%u", ls->failed);
    enum kp_log_level level = ls->failed >= WARN_AFTER_FAILURES ? KP_LOG_WARN : KP_LOG_DEBUG;
    KP_LOG(level, "informer", "list/watch failed; backing off", "resource",
           r ? r->plural : "?", "failures", n, "error", kp_error_last(), "code",
           kp_error_name(err));
}

static void note_success(kp_informer *inf, loop_state *ls)
{
    if (ls->failed >= WARN_AFTER_FAILURES) {
        const kp_kube_resource *r = kp_kube_resource_get(inf->res);
        KP_LOG(KP_LOG_INFO, "informer", "list/watch recovered", "resource", r ? r->plural : "?");
    }
    ls->failed = 0;
}

static bool backoff(kp_informer *inf, loop_state *ls, int err)
{
    note_failure(inf, ls, err);
    count(inf, &inf->stats.failures);
    bool fired = kp_kube_cancel_sleep(inf->cancel, ls->delay);
    int64_t max = inf->opts.backoff_max_ms;
    ls->delay = ls->delay * 2 < max ? ls->delay * 2 : max;
    return fired;
}

/* Watch until 410 Gone (then relist) or cancellation. */
static void watch_loop(kp_informer *inf, loop_state *ls)
{
    ls->delay = inf->opts.backoff_initial_ms;
    while (!kp_kube_cancel_fired(inf->cancel)) {
        unsigned long before = inf->stats.events;
        int err = watch_once(inf);
        if (err == KP_EGONE) {
            count(inf, &inf->stats.relists);
            return;
        }
        if (err == 0 && inf->stats.events != before) {
            ls->delay = inf->opts.backoff_initial_ms; /* a healthy watch the server ended */
            note_success(inf, ls);
            continue;
        }
        /* Failed, or ended without a single event: do not hammer the server. */
        if (backoff(inf, ls, err ? err : KP_ERETRY)) return;
    }
}

/* Before a relist that 410 Gone asked for: a server whose watches always
 * answer Gone would otherwise get list+watch as fast as they go. */
static bool wait_before_relist(kp_informer *inf, loop_state *ls)
{
    int64_t now = mono_ns(), max = inf->opts.backoff_max_ms;
    if (!ls->relist_delay || now - ls->last_relist > RELIST_RESET_NS)
        ls->relist_delay = inf->opts.backoff_initial_ms;
    bool fired = kp_kube_cancel_sleep(inf->cancel, ls->relist_delay);
    ls->relist_delay = ls->relist_delay * 2 < max ? ls->relist_delay * 2 : max;
    ls->last_relist = mono_ns();
    return fired;
}

static void *run(void *arg)
{
    kp_informer *inf = arg;
    loop_state ls = {inf->opts.backoff_initial_ms, 0, 0, 0};
    bool relist = false;
    while (!kp_kube_cancel_fired(inf->cancel)) {
        if (relist && wait_before_relist(inf, &ls)) break;
        relist = false;
        int err = list_and_replace(inf);
        if (err < 0) {
            if (backoff(inf, &ls, err)) break;
            continue;
        }
        note_success(inf, &ls);
        watch_loop(inf, &ls);
        relist = true;
    }
    return NULL;
}

int kp_informer_start(kp_informer *inf)
{
    if (inf->started) return kp_error_set(KP_EINVALID, "informer already started");
    if (!inf->cancel) return kp_error_set(KP_EIO, "informer: cannot create a curl multi handle");
    if (pthread_create(&inf->thread, NULL, run, inf) != 0)
        return kp_error_set(KP_ERROR, "informer: cannot start a thread");
    inf->started = inf->running = true;
    return 0;
}

void kp_informer_stop(kp_informer *inf)
{
    if (!inf->running) return;
    kp_kube_cancel_fire(inf->cancel);
    pthread_join(inf->thread, NULL);
    inf->running = false;
}

/* ------------------------------------------------------------- reads */

cJSON *kp_informer_get(kp_informer *inf, const char *key)
{
    pthread_rwlock_rdlock(&inf->lock);
    const cJSON *obj = kp_strmap_get(&inf->cache, key);
    cJSON *copy = obj ? cJSON_Duplicate(obj, 1) : NULL;
    pthread_rwlock_unlock(&inf->lock);
    return copy;
}

size_t kp_informer_len(kp_informer *inf)
{
    pthread_rwlock_rdlock(&inf->lock);
    size_t n = inf->cache.count;
    pthread_rwlock_unlock(&inf->lock);
    return n;
}

typedef struct visit {
    kp_informer_visit_fn fn;
    void *ctx;
    const kp_strmap *cache;
} visit;

static void visit_object(void *ctx, const char *key, void *value)
{
    visit *v = ctx;
    v->fn(v->ctx, key, value);
}

static void visit_key(void *ctx, const char *key, void *value)
{
    (void)value;
    visit *v = ctx;
    const cJSON *obj = kp_strmap_get(v->cache, key);
    if (obj) v->fn(v->ctx, key, obj);
}

void kp_informer_foreach(kp_informer *inf, kp_informer_visit_fn fn, void *ctx)
{
    visit v = {fn, ctx, &inf->cache};
    pthread_rwlock_rdlock(&inf->lock);
    kp_strmap_foreach(&inf->cache, visit_object, &v);
    pthread_rwlock_unlock(&inf->lock);
}

void kp_informer_foreach_indexed(kp_informer *inf, const char *index, const char *value,
                                 kp_informer_visit_fn fn, void *ctx)
{
    visit v = {fn, ctx, &inf->cache};
    pthread_rwlock_rdlock(&inf->lock);
    for (size_t i = 0; i < inf->nindexes; i++) {
        if (strcmp(inf->indexes[i].name, index) != 0) continue;
        const kp_strmap *keys = kp_strmap_get(&inf->indexes[i].values, value);
        if (keys) kp_strmap_foreach(keys, visit_key, &v);
    }
    pthread_rwlock_unlock(&inf->lock);
}

const char *kp_informer_index_pod_node(const cJSON *obj)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(spec, "nodeName");
    return cJSON_IsString(node) && *node->valuestring ? node->valuestring : NULL;
}
