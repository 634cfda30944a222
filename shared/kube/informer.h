/*
 * Informers: an in-memory copy of every object of one kind (optionally one
 * namespace or selector), kept current by list + watch on the informer's own
 * thread, as client-go's shared informers.
 *
 *   - The thread lists (paginated), replaces the cache, then watches from the
 *     list's resourceVersion with bookmarks, applying events. A watch the
 *     server ends is resumed from the last resourceVersion seen; a failed one
 *     after an exponential back-off (opts.backoff_*); 410 Gone (the
 *     resourceVersion was compacted away) relists, after a back-off of its
 *     own (the same figures; reset after 2 quiet minutes) so that a server
 *     answering every watch with 410 is not listed in a tight loop.
 *   - Failures are logged at debug, and at warn from the 5th in a row (then
 *     "recovered" at info): the thread has no caller to return them to.
 *   - Cache: "namespace/name" (or "name") -> object (cJSON) behind a
 *     read-write lock. Indexes map a value computed from each object (e.g. a
 *     Pod's spec.nodeName) to the keys that have it.
 *   - Notifications: handlers get add/update/delete with the objects; work
 *     queues get the object's key. Both run on the informer thread, after the
 *     cache has changed and outside its lock, in event order. A relist that
 *     finds objects gone reports them deleted; unchanged objects (same
 *     resourceVersion) are not reported again.
 *   - Synced: true once the first list is in the cache and notified.
 *
 * Set-up (indexes, handlers, queues) happens before kp_informer_start. The
 * informer borrows the client and the queues: they must outlive it.
 */
#ifndef KP_KUBE_INFORMER_H
#define KP_KUBE_INFORMER_H

#include "kube/resources.h"
#include "kube/rest.h"
#include "kube/workqueue.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct kp_informer kp_informer;

typedef struct kp_informer_opts {
    const char *namespace; /* NULL: every namespace */
    const char *label_selector;
    const char *field_selector;
    int page_size;              /* list page size */
    int watch_timeout_seconds;  /* each watch lasts this to twice this, at random */
    int64_t backoff_initial_ms; /* first wait after a failure */
    int64_t backoff_max_ms;     /* the wait doubles up to this */
} kp_informer_opts;

/* client-go reflector's figures: watches of 5-10 minutes, back-off 0.8-30 s. */
#define KP_INFORMER_OPTS_INIT                                                                      \
    {                                                                                              \
        NULL, NULL, NULL, 500, 300, 800, 30000                                                     \
    }

/* The value an index files an object under (borrowed from the object), or
 * NULL to leave the object out of the index. */
typedef const char *(*kp_informer_index_fn)(const cJSON *obj);

/* Called on the informer thread with borrowed objects (valid for the call). */
typedef struct kp_informer_handler {
    void (*on_add)(void *ctx, const cJSON *obj);
    void (*on_update)(void *ctx, const cJSON *old_obj, const cJSON *new_obj);
    void (*on_delete)(void *ctx, const cJSON *obj);
    void *ctx;
} kp_informer_handler;

/* Visits a cached object under the cache's read lock: do not call informer
 * functions from it and do not keep the pointer (duplicate what you need). */
typedef void (*kp_informer_visit_fn)(void *ctx, const char *key, const cJSON *obj);

/* `opts` may be NULL (the defaults); strings are copied. */
kp_informer *kp_informer_new(kp_kube_client *client, enum kp_kube_res res,
                             const kp_informer_opts *opts);
/* Stops the informer if running. Accepts NULL, returns NULL. */
kp_informer *kp_informer_free(kp_informer *inf);

/* Before start: KP_EINVALID once started or for a duplicate index name. */
int kp_informer_add_index(kp_informer *inf, const char *name, kp_informer_index_fn fn);
int kp_informer_add_handler(kp_informer *inf, const kp_informer_handler *handler);
int kp_informer_add_queue(kp_informer *inf, kp_workqueue *queue);

int kp_informer_start(kp_informer *inf);
/* Stop the thread (wakes a blocked watch at once); the cache stays readable. */
void kp_informer_stop(kp_informer *inf);

bool kp_informer_synced(kp_informer *inf);
/* Wait until synced: 0, or KP_ETIMEOUT after `timeout_ms`. */
int kp_informer_wait_synced(kp_informer *inf, int64_t timeout_ms);

/* A copy of the cached object (the caller frees it), or NULL. */
cJSON *kp_informer_get(kp_informer *inf, const char *key);
size_t kp_informer_len(kp_informer *inf);
void kp_informer_foreach(kp_informer *inf, kp_informer_visit_fn fn, void *ctx);
/* The objects filed under `value` in index `index` (none for an unknown index). */
void kp_informer_foreach_indexed(kp_informer *inf, const char *index, const char *value,
                                 kp_informer_visit_fn fn, void *ctx);

/* Index function: a Pod's spec.nodeName (pods by node). */
const char *kp_informer_index_pod_node(const cJSON *obj);

typedef struct kp_informer_stats {
    unsigned long lists;    /* successful lists (the first one and relists) */
    unsigned long relists;  /* lists caused by 410 Gone */
    unsigned long watches;  /* watch requests made */
    unsigned long failures; /* lists and watches that failed and were retried */
    unsigned long events;   /* watch events applied, bookmarks included */
} kp_informer_stats;

void kp_informer_get_stats(kp_informer *inf, kp_informer_stats *out);
/* The resourceVersion the informer resumes from (malloc'd), or NULL. */
char *kp_informer_resource_version(kp_informer *inf);

#endif
