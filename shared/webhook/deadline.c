#include "webhook/deadline.h"

#include "base/clock.h"
#include "base/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

/* How often the thread looks when nothing is due sooner. */
enum { TICK_MS = 250 };

struct kp_deadline_watch {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    kp_deadline_entry head; /* sentinel of a circular list */
    int64_t limit_ns;
    unsigned long cut;
    bool stopping;
    pthread_t thread;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

/* Shut down what is overdue; the earliest deadline still pending, or 0. */
static int64_t cut_overdue(kp_deadline_watch *w, int64_t now)
{
    int64_t next = 0;
    for (kp_deadline_entry *e = w->head.next; e != &w->head; e = e->next) {
        if (e->cut) continue;
        if (e->due_ns <= now) {
            /* The descriptor is open: removal needs this lock first. */
            shutdown(e->fd, SHUT_RDWR);
            e->cut = true;
            w->cut++;
        } else if (!next || e->due_ns < next) {
            next = e->due_ns;
        }
    }
    return next;
}

static void *run(void *arg)
{
    kp_deadline_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        int64_t now = now_ns();
        int64_t next = cut_overdue(w, now);
        int64_t until = now + (int64_t)TICK_MS * KP_NS_PER_MS;
        if (next && next < until) until = next;
        struct timespec ts = {(time_t)(until / KP_NS_PER_SEC), (long)(until % KP_NS_PER_SEC)};
        pthread_cond_timedwait(&w->wake, &w->lock, &ts);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

kp_deadline_watch *kp_deadline_watch_new(int64_t limit_ms)
{
    kp_deadline_watch *w = kp_xcalloc(1, sizeof(*w));
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&w->lock, NULL);
    w->head.next = w->head.prev = &w->head;
    w->limit_ns = limit_ms * KP_NS_PER_MS;
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

kp_deadline_watch *kp_deadline_watch_free(kp_deadline_watch *w)
{
    if (!w) return NULL;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return NULL;
}

void kp_deadline_watch_add(kp_deadline_watch *w, kp_deadline_entry *e, int fd)
{
    pthread_mutex_lock(&w->lock);
    e->fd = fd;
    e->cut = false;
    e->due_ns = now_ns() + w->limit_ns;
    e->next = w->head.next;
    e->prev = &w->head;
    w->head.next->prev = e;
    w->head.next = e;
    pthread_mutex_unlock(&w->lock);
}

void kp_deadline_watch_restart(kp_deadline_watch *w, kp_deadline_entry *e)
{
    pthread_mutex_lock(&w->lock);
    if (e->next) e->due_ns = now_ns() + w->limit_ns;
    pthread_mutex_unlock(&w->lock);
}

void kp_deadline_watch_remove(kp_deadline_watch *w, kp_deadline_entry *e)
{
    pthread_mutex_lock(&w->lock);
    if (e->next) {
        e->prev->next = e->next;
        e->next->prev = e->prev;
        e->next = e->prev = NULL;
    }
    pthread_mutex_unlock(&w->lock);
}

unsigned long kp_deadline_watch_cut_count(kp_deadline_watch *w)
{
    pthread_mutex_lock(&w->lock);
    unsigned long n = w->cut;
    pthread_mutex_unlock(&w->lock);
    return n;
}
