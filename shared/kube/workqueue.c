/*
 * Work queue (see workqueue.h): a FIFO of keys, a dirty set (queued or to be
 * re-queued), a processing set, a min-heap of delayed adds, and per-key
 * failure counts, all behind one mutex.
 */
#include "kube/workqueue.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "kube/strmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct delayed {
    int64_t due_ns;
    char *key;
} delayed;

struct kp_workqueue {
    kp_workqueue_opts opts;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char **fifo; /* ring buffer */
    size_t head, count, cap;
    kp_strmap dirty;      /* key -> int64_t* when it was added (monotonic ns) */
    kp_strmap processing; /* key -> marker */
    kp_strmap failures;   /* key -> (intptr_t) count */
    kp_strmap waiting;    /* key -> int64_t* due time of its delayed add */
    delayed *heap;
    size_t nheap, heap_cap;
    bool shutting_down;
    kp_workqueue_observer obs;
};

static void *const MARK = (void *)1;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

kp_workqueue *kp_workqueue_new(const kp_workqueue_opts *opts)
{
    static const kp_workqueue_opts defaults = KP_WORKQUEUE_OPTS_INIT;
    kp_workqueue *q = kp_xcalloc(1, sizeof(*q));
    q->opts = opts ? *opts : defaults;
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cond, &attr);
    pthread_condattr_destroy(&attr);
    return q;
}

kp_workqueue *kp_workqueue_free(kp_workqueue *q)
{
    if (!q) return NULL;
    for (size_t i = 0; i < q->count; i++)
        free(q->fifo[(q->head + i) % q->cap]);
    free(q->fifo);
    for (size_t i = 0; i < q->nheap; i++)
        free(q->heap[i].key);
    free(q->heap);
    kp_strmap_clear(&q->dirty, free);
    kp_strmap_clear(&q->processing, NULL);
    kp_strmap_clear(&q->failures, NULL);
    kp_strmap_clear(&q->waiting, free);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
    return NULL;
}

/* ------------------------------------------------------------ the FIFO */

static void fifo_push(kp_workqueue *q, const char *key)
{
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        char **fifo = kp_xmalloc(cap * sizeof(*fifo));
        for (size_t i = 0; i < q->count; i++)
            fifo[i] = q->fifo[(q->head + i) % q->cap];
        free(q->fifo);
        q->fifo = fifo;
        q->cap = cap;
        q->head = 0;
    }
    q->fifo[(q->head + q->count) % q->cap] = kp_xstrdup(key);
    q->count++;
    pthread_cond_signal(&q->cond);
}

static char *fifo_pop(kp_workqueue *q)
{
    char *key = q->fifo[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return key;
}

/* Caller holds the lock. */
static void add_locked(kp_workqueue *q, const char *key)
{
    if (q->shutting_down || kp_strmap_has(&q->dirty, key)) return;
    int64_t *added = kp_xmalloc(sizeof(*added));
    *added = now_ns();
    kp_strmap_put(&q->dirty, key, added);
    if (q->obs.added) q->obs.added(q->obs.ctx);
    if (!kp_strmap_has(&q->processing, key)) fifo_push(q, key);
}

void kp_workqueue_add(kp_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    add_locked(q, key);
    pthread_mutex_unlock(&q->lock);
}

/* ------------------------------------------------------- delayed adds */

static void heap_swap(delayed *a, delayed *b)
{
    delayed t = *a;
    *a = *b;
    *b = t;
}

static void heap_push(kp_workqueue *q, int64_t due, const char *key)
{
    q->heap = kp_xgrow(q->heap, &q->heap_cap, q->nheap + 1, sizeof(*q->heap));
    size_t i = q->nheap++;
    q->heap[i] = (delayed){due, kp_xstrdup(key)};
    while (i > 0 && q->heap[(i - 1) / 2].due_ns > q->heap[i].due_ns) {
        heap_swap(&q->heap[(i - 1) / 2], &q->heap[i]);
        i = (i - 1) / 2;
    }
}

static delayed heap_pop(kp_workqueue *q)
{
    delayed top = q->heap[0];
    q->heap[0] = q->heap[--q->nheap];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->nheap && q->heap[l].due_ns < q->heap[m].due_ns) m = l;
        if (r < q->nheap && q->heap[r].due_ns < q->heap[m].due_ns) m = r;
        if (m == i) break;
        heap_swap(&q->heap[i], &q->heap[m]);
        i = m;
    }
    return top;
}

/* Move delayed keys whose time has come into the FIFO. An entry whose key
 * was re-scheduled earlier is stale: the `waiting` map holds the live time. */
static void move_due(kp_workqueue *q, int64_t now)
{
    while (q->nheap && q->heap[0].due_ns <= now) {
        delayed d = heap_pop(q);
        int64_t *due = kp_strmap_get(&q->waiting, d.key);
        if (due && *due == d.due_ns) {
            free(kp_strmap_remove(&q->waiting, d.key));
            add_locked(q, d.key);
        }
        free(d.key);
    }
}

void kp_workqueue_add_after(kp_workqueue *q, const char *key, int64_t delay_ms)
{
    if (delay_ms <= 0) {
        kp_workqueue_add(q, key);
        return;
    }
    int64_t due = now_ns() + delay_ms * KP_NS_PER_MS;
    pthread_mutex_lock(&q->lock);
    int64_t *when = kp_strmap_get(&q->waiting, key);
    if (!q->shutting_down && (!when || *when > due)) {
        if (!when) {
            when = kp_xmalloc(sizeof(*when));
            kp_strmap_put(&q->waiting, key, when);
        }
        *when = due;
        heap_push(q, due, key);
        /* A worker may be sleeping until a later time. */
        pthread_cond_broadcast(&q->cond);
    }
    pthread_mutex_unlock(&q->lock);
}

void kp_workqueue_add_rate_limited(kp_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    intptr_t n = (intptr_t)kp_strmap_get(&q->failures, key);
    kp_strmap_put(&q->failures, key, (void *)(n + 1));
    pthread_mutex_unlock(&q->lock);
    int64_t delay = q->opts.base_delay_ms;
    for (intptr_t i = 0; i < n && delay < q->opts.max_delay_ms; i++)
        delay *= 2;
    kp_workqueue_add_after(q, key, delay < q->opts.max_delay_ms ? delay : q->opts.max_delay_ms);
}

void kp_workqueue_forget(kp_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    kp_strmap_remove(&q->failures, key);
    pthread_mutex_unlock(&q->lock);
}

int kp_workqueue_requeues(kp_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    intptr_t n = (intptr_t)kp_strmap_get(&q->failures, key);
    pthread_mutex_unlock(&q->lock);
    return (int)n;
}

/* ------------------------------------------------------ handing out */

static struct timespec to_timespec(int64_t ns)
{
    return (struct timespec){(time_t)(ns / KP_NS_PER_SEC), (long)(ns % KP_NS_PER_SEC)};
}

/* Sleep until signalled or `until` (ns, monotonic; < 0: forever). */
static void wait_until(kp_workqueue *q, int64_t until)
{
    if (until < 0) {
        pthread_cond_wait(&q->cond, &q->lock);
        return;
    }
    struct timespec ts = to_timespec(until);
    pthread_cond_timedwait(&q->cond, &q->lock, &ts);
}

static int64_t earliest(int64_t a, int64_t b)
{
    if (a < 0) return b;
    if (b < 0) return a;
    return a < b ? a : b;
}

int kp_workqueue_get(kp_workqueue *q, int64_t timeout_ms, char **key)
{
    int64_t deadline = timeout_ms >= 0 ? now_ns() + timeout_ms * KP_NS_PER_MS : -1;
    int err = 0;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        int64_t now = now_ns();
        move_due(q, now);
        if (q->count) {
            char *k = fifo_pop(q);
            int64_t *added = kp_strmap_remove(&q->dirty, k);
            if (q->obs.taken && added) q->obs.taken(q->obs.ctx, now - *added);
            free(added);
            kp_strmap_put(&q->processing, k, MARK);
            *key = k;
            break;
        }
        if (q->shutting_down) {
            err = kp_error_set(KP_EGONE, "work queue shut down");
            break;
        }
        if (deadline >= 0 && now >= deadline) {
            err = kp_error_set(KP_ETIMEOUT, "work queue: nothing within %lld ms",
                               (long long)timeout_ms);
            break;
        }
        wait_until(q, earliest(deadline, q->nheap ? q->heap[0].due_ns : -1));
    }
    pthread_mutex_unlock(&q->lock);
    return err;
}

void kp_workqueue_done(kp_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    kp_strmap_remove(&q->processing, key);
    if (kp_strmap_has(&q->dirty, key)) fifo_push(q, key);
    pthread_mutex_unlock(&q->lock);
}

void kp_workqueue_observe(kp_workqueue *q, const kp_workqueue_observer *obs)
{
    pthread_mutex_lock(&q->lock);
    q->obs = obs ? *obs : (kp_workqueue_observer){NULL, NULL, NULL};
    pthread_mutex_unlock(&q->lock);
}

size_t kp_workqueue_len(kp_workqueue *q)
{
    pthread_mutex_lock(&q->lock);
    move_due(q, now_ns());
    size_t n = q->count;
    pthread_mutex_unlock(&q->lock);
    return n;
}

void kp_workqueue_shutdown(kp_workqueue *q)
{
    pthread_mutex_lock(&q->lock);
    q->shutting_down = true;
    for (size_t i = 0; i < q->nheap; i++)
        free(q->heap[i].key);
    q->nheap = 0;
    kp_strmap_clear(&q->waiting, free);
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

bool kp_workqueue_shutting_down(kp_workqueue *q)
{
    pthread_mutex_lock(&q->lock);
    bool down = q->shutting_down;
    pthread_mutex_unlock(&q->lock);
    return down;
}
