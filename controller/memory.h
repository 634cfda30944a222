/*
 * The controller's use of the C library's allocator. The caches hold many
 * small objects for the process's life, while a provisioning batch or a
 * disruption pass builds a view of the whole cluster and frees it seconds
 * later, on threads of its own. glibc keeps what such a view freed, in the
 * heap of the thread that used it, and by default raises its threshold for
 * giving large blocks back each time one is freed: measured on the kwok
 * bench, the process then held about three times the memory it used. So:
 *
 *   - kp_memory_tune (once, before any thread starts): blocks of 64 KiB and
 *     more (a view's arena chunks, API responses) get mappings of their own,
 *     returned when freed; at most 2 heaps per core (glibc's default is 8).
 *     A GLIBC_TUNABLES or MALLOC_*_ setting in the environment wins: then
 *     nothing is changed.
 *   - a trimmer thread hands the free pages inside the heaps back to the
 *     system every period (malloc_trim), as caches shrink and views go.
 */
#ifndef KP_CONTROLLER_MEMORY_H
#define KP_CONTROLLER_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

/* Returns false when the environment configures the allocator (left alone). */
bool kp_memory_tune(void);

typedef struct kp_memory_trimmer kp_memory_trimmer;

/* A thread that trims every `period_ms` until kp_memory_trimmer_stop; NULL
 * when no thread can be started (then nothing trims). */
kp_memory_trimmer *kp_memory_trimmer_start(int64_t period_ms);
/* Stop and join. NULL-safe; returns NULL. */
kp_memory_trimmer *kp_memory_trimmer_stop(kp_memory_trimmer *t);
/* How many trims the thread has made (tests). */
unsigned long kp_memory_trimmer_runs(kp_memory_trimmer *t);

#endif
