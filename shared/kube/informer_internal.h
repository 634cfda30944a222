/*
 * The informer's insides, shared by informer.c (thread, list, watch) and
 * informer_cache.c (cache, indexes, notifications). Not an interface for
 * other modules.
 */
#ifndef KP_KUBE_INFORMER_INTERNAL_H
#define KP_KUBE_INFORMER_INTERNAL_H

#include "kube/informer.h"
#include "kube/strmap.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct kp_index {
    char *name;
    kp_informer_index_fn fn;
    kp_strmap values; /* value -> kp_strmap* of keys */
} kp_index;

/* One change to report once the cache lock is released. */
typedef struct kp_change {
    enum { KP_CHANGE_ADD, KP_CHANGE_UPDATE, KP_CHANGE_DELETE } type;
    char *key;
    cJSON *old_obj;       /* owned: freed after the notification */
    const cJSON *new_obj; /* in the cache; only this thread changes the cache */
} kp_change;

typedef struct kp_changes {
    kp_change *items;
    size_t n, cap;
} kp_changes;

struct kp_informer {
    kp_kube_client *client;
    enum kp_kube_res res;
    kp_informer_opts opts; /* strings owned */

    pthread_rwlock_t lock; /* cache and indexes */
    kp_strmap cache;       /* key -> cJSON* */
    kp_index *indexes;
    size_t nindexes, indexes_cap;

    kp_informer_handler *handlers;
    size_t nhandlers, handlers_cap;
    kp_workqueue **queues;
    size_t nqueues, queues_cap;

    pthread_mutex_t state_lock; /* rv, stats, synced */
    pthread_cond_t synced_cond;
    char *rv;
    kp_informer_stats stats;
    bool synced;

    kp_kube_cancel *cancel;
    pthread_t thread;
    bool started, running;
    unsigned seed;
};

/* Cache changes; the caller holds the write lock. Objects are taken. */
void kp_cache_upsert(kp_informer *inf, const char *key, cJSON *obj, kp_changes *out);
void kp_cache_delete(kp_informer *inf, const char *key, cJSON *obj, kp_changes *out);
/* Replace the whole cache with `items` (an array, emptied). */
void kp_cache_replace(kp_informer *inf, cJSON *items, kp_changes *out);
void kp_cache_free(kp_informer *inf);

/* Report and free `changes` (no lock held). */
void kp_changes_deliver(kp_informer *inf, kp_changes *changes);

#endif
