/* The controller's allocator settings and trimmer (see memory.h). */
#include "controller/memory.h"
#include "base/xalloc.h"
#include "kube/rest.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
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
    kp_kube_cancel *stop; /* the project's stoppable sleep */
    int64_t period_ms;
    atomic_ulong runs;
};

static void *trim_loop(void *arg)
{
    kp_memory_trimmer *t = arg;
    while (!kp_kube_cancel_sleep(t->stop, t->period_ms)) {
        malloc_trim(0);
        atomic_fetch_add(&t->runs, 1);
    }
    return NULL;
}

kp_memory_trimmer *kp_memory_trimmer_start(int64_t period_ms)
{
    kp_memory_trimmer *t = kp_xcalloc(1, sizeof(*t));
    t->period_ms = period_ms > 0 ? period_ms : 1000;
    t->stop = kp_kube_cancel_new();
    if (!t->stop || pthread_create(&t->thread, NULL, trim_loop, t) != 0) {
        kp_kube_cancel_free(t->stop);
        free(t);
        return NULL;
    }
    return t;
}

kp_memory_trimmer *kp_memory_trimmer_stop(kp_memory_trimmer *t)
{
    if (!t)
        return NULL;
    kp_kube_cancel_fire(t->stop);
    pthread_join(t->thread, NULL);
    kp_kube_cancel_free(t->stop);
    free(t);
    return NULL;
}

unsigned long kp_memory_trimmer_runs(kp_memory_trimmer *t)
{
    return atomic_load(&t->runs);
}
