/* The controller's allocator settings and trimmer (see memory.h). */
#include "controller/memory.h"
#include "base/xalloc.h"

#include <malloc.h>
#include <time.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Above the 64 KiB chunks kp_arena takes from malloc, so each is a mapping. */
#define MMAP_THRESHOLD (64 * 1024)
#define TRIM_THRESHOLD (128 * 1024)
#define HEAPS_PER_CORE 2

extern char **environ;

static bool environment_configures_malloc(void)
{
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "GLIBC_TUNABLES=", 15) || !strncmp(*e, "MALLOC_", 7))
            return true;
    return false;
}

bool kp_memory_tune(void)
{
    if (environment_configures_malloc())
        return false;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* Setting the thresholds also stops glibc moving them as blocks are freed. */
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    mallopt(M_ARENA_MAX, (int)(HEAPS_PER_CORE * (cores > 0 ? cores : 1)));
    return true;
}

struct kp_memory_trimmer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t period_ms;
    bool stopping;
    unsigned long runs;
};

static void *trim_loop(void *arg)
{
    kp_memory_trimmer *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)(t->period_ms / 1000);
        until.tv_nsec += (long)(t->period_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        while (!t->stopping && pthread_cond_timedwait(&t->cv, &t->mu, &until) == 0)
            ;
        if (t->stopping)
            break;
        pthread_mutex_unlock(&t->mu);
        malloc_trim(0);
        pthread_mutex_lock(&t->mu);
        t->runs++;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

kp_memory_trimmer *kp_memory_trimmer_start(int64_t period_ms)
{
    kp_memory_trimmer *t = kp_xcalloc(1, sizeof(*t));
    t->period_ms = period_ms > 0 ? period_ms : 1000;
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&t->thread, NULL, trim_loop, t) != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    return t;
}

kp_memory_trimmer *kp_memory_trimmer_stop(kp_memory_trimmer *t)
{
    if (!t)
        return NULL;
    pthread_mutex_lock(&t->mu);
    t->stopping = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
    return NULL;
}

unsigned long kp_memory_trimmer_runs(kp_memory_trimmer *t)
{
    pthread_mutex_lock(&t->mu);
    unsigned long n = t->runs;
    pthread_mutex_unlock(&t->mu);
    return n;
}
