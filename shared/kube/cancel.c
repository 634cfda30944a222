/*
 * Cancellation tokens: a flag, a condition variable for interruptible sleeps,
 * and the curl multi handle that watches run on, so that firing the token
 * wakes a watch blocked on a quiet connection at once (curl_multi_wakeup).
 */
#include "base/clock.h"
#include "base/xalloc.h"
#include "kube/rest_internal.h"

#include <stdlib.h>
#include <time.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void kp_kube_curl_init(void)
{
    pthread_once(&curl_once, curl_init_once);
}

kp_kube_cancel *kp_kube_cancel_new(void)
{
    kp_kube_curl_init();
    kp_kube_cancel *c = kp_xcalloc(1, sizeof(*c));
    c->multi = curl_multi_init();
    if (!c->multi) {
        free(c);
        return NULL;
    }
    atomic_init(&c->fired, false);
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &attr);
    pthread_condattr_destroy(&attr);
    return c;
}

kp_kube_cancel *kp_kube_cancel_free(kp_kube_cancel *c)
{
    if (!c) return NULL;
    curl_multi_cleanup(c->multi);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return NULL;
}

void kp_kube_cancel_fire(kp_kube_cancel *c)
{
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->fired, true);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    curl_multi_wakeup(c->multi);
}

void kp_kube_cancel_reset(kp_kube_cancel *c)
{
    atomic_store(&c->fired, false);
}

bool kp_kube_cancel_fired(const kp_kube_cancel *c)
{
    return c && atomic_load(&((kp_kube_cancel *)c)->fired);
}

static struct timespec deadline_after(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = (int64_t)ts.tv_nsec + (ms % 1000) * KP_NS_PER_MS;
    ts.tv_sec += (time_t)(ms / 1000 + ns / KP_NS_PER_SEC);
    ts.tv_nsec = (long)(ns % KP_NS_PER_SEC);
    return ts;
}

bool kp_kube_cancel_sleep(kp_kube_cancel *c, int64_t ms)
{
    if (ms <= 0) return kp_kube_cancel_fired(c);
    if (!c) {
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
        return false;
    }
    struct timespec until = deadline_after(ms);
    pthread_mutex_lock(&c->lock);
    while (!atomic_load(&c->fired))
        if (pthread_cond_timedwait(&c->cond, &c->lock, &until) != 0) break;
    pthread_mutex_unlock(&c->lock);
    return atomic_load(&c->fired);
}

int kp_kube_cancel_progress(void *cancel, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                            curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return kp_kube_cancel_fired(cancel) ? 1 : 0;
}
