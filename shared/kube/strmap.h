/*
 * A string-keyed hash map with deletion, for the kube module's caches and
 * queues: informer objects by "namespace/name", work-queue key sets, index
 * buckets, event de-duplication. Separate chaining; the map owns copies of
 * its keys, never the values (callers free those before removing them).
 * Not thread-safe: every user keeps it behind its own lock.
 */
#ifndef KP_KUBE_STRMAP_H
#define KP_KUBE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kp_strmap_entry {
    struct kp_strmap_entry *next;
    char *key;
    void *value;
    unsigned hash;
} kp_strmap_entry;

typedef struct kp_strmap {
    kp_strmap_entry **buckets;
    size_t nbuckets; /* power of two, or 0 before the first put */
    size_t count;
} kp_strmap;

#define KP_STRMAP_INIT                                                                             \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* The value stored under `key`, or NULL. */
void *kp_strmap_get(const kp_strmap *map, const char *key);
bool kp_strmap_has(const kp_strmap *map, const char *key);
/* Store `value` under `key`; returns the value it replaced, or NULL. */
void *kp_strmap_put(kp_strmap *map, const char *key, void *value);
/* Remove `key`; returns its value (NULL when absent). */
void *kp_strmap_remove(kp_strmap *map, const char *key);
/* Call fn on each entry in no particular order; the map must not change meanwhile. */
void kp_strmap_foreach(const kp_strmap *map, void (*fn)(void *ctx, const char *key, void *value),
                       void *ctx);
/* Remove every entry `drop` says to (calling free_value, may be NULL, on its
 * value); returns how many went. `drop` must not change the map. */
size_t kp_strmap_remove_if(kp_strmap *map, bool (*drop)(void *ctx, const char *key, void *value),
                           void *ctx, void (*free_value)(void *value));
/* Drop every entry, calling free_value (may be NULL) on each value. */
void kp_strmap_clear(kp_strmap *map, void (*free_value)(void *value));

#endif
