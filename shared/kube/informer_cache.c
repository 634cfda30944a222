/*
 * The informer's cache: objects by key, indexes, and the changes to report
 * (see informer.h). Writers are the informer thread only; readers anywhere.
 * Objects are trimmed to what the program reads before they are cached
 * (informer_transform.h).
 */
#include "base/xalloc.h"
#include "kube/informer_internal.h"
#include "kube/informer_transform.h"
#include "kube/ops.h"

#include <stdlib.h>
#include <string.h>

static void *const MARK = (void *)1;

static void free_key_set(void *set)
{
    kp_strmap_clear(set, NULL);
    free(set);
}

static void index_add(kp_index *ix, const char *value, const char *key)
{
    kp_strmap *set = kp_strmap_get(&ix->values, value);
    if (!set) {
        set = kp_xcalloc(1, sizeof(*set));
        kp_strmap_put(&ix->values, value, set);
    }
    kp_strmap_put(set, key, MARK);
}

static void index_remove(kp_index *ix, const char *value, const char *key)
{
    kp_strmap *set = kp_strmap_get(&ix->values, value);
    if (!set) return;
    kp_strmap_remove(set, key);
    if (!set->count) free_key_set(kp_strmap_remove(&ix->values, value));
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void indexes_update(kp_informer *inf, const char *key, const cJSON *old_obj,
                           const cJSON *new_obj)
{
    for (size_t i = 0; i < inf->nindexes; i++) {
        kp_index *ix = &inf->indexes[i];
        const char *ov = old_obj ? ix->fn(old_obj) : NULL;
        const char *nv = new_obj ? ix->fn(new_obj) : NULL;
        if (same(ov, nv)) continue;
        if (ov) index_remove(ix, ov, key);
        if (nv) index_add(ix, nv, key);
    }
}

static void change_push(kp_changes *c, int type, const char *key, cJSON *old_obj,
                        const cJSON *new_obj)
{
    c->items = kp_xgrow(c->items, &c->cap, c->n + 1, sizeof(*c->items));
    c->items[c->n++] = (kp_change){type, kp_xstrdup(key), old_obj, new_obj};
}

static bool same_version(const cJSON *a, const cJSON *b)
{
    return same(kp_kube_meta(a, "resourceVersion"), kp_kube_meta(b, "resourceVersion"));
}

void kp_cache_upsert(kp_informer *inf, const char *key, cJSON *obj, kp_changes *out)
{
    kp_informer_trim(inf->res, obj);
    cJSON *old = kp_strmap_put(&inf->cache, key, obj);
    indexes_update(inf, key, old, obj);
    if (old && same_version(old, obj)) {
        cJSON_Delete(old);
        return;
    }
    change_push(out, old ? KP_CHANGE_UPDATE : KP_CHANGE_ADD, key, old, obj);
}

void kp_cache_delete(kp_informer *inf, const char *key, cJSON *obj, kp_changes *out)
{
    cJSON *old = kp_strmap_remove(&inf->cache, key);
    indexes_update(inf, key, old, NULL);
    /* Report the object's final state, from the event when there is one. */
    if (obj) {
        kp_informer_trim(inf->res, obj);
        cJSON_Delete(old);
        old = obj;
    }
    if (old) change_push(out, KP_CHANGE_DELETE, key, old, NULL);
}

typedef struct leftovers {
    kp_changes *out;
} leftovers;

static void report_gone(void *ctx, const char *key, void *value)
{
    leftovers *l = ctx;
    change_push(l->out, KP_CHANGE_DELETE, key, value, NULL);
}

static void reindex(void *ctx, const char *key, void *value)
{
    indexes_update(ctx, key, NULL, value);
}

void kp_cache_replace(kp_informer *inf, cJSON *items, kp_changes *out)
{
    kp_strmap fresh = KP_STRMAP_INIT;
    while (items->child) {
        cJSON *obj = cJSON_DetachItemViaPointer(items, items->child);
        kp_informer_trim(inf->res, obj);
        char key[512];
        if (kp_kube_object_key(obj, key, sizeof(key)) < 0 || kp_strmap_has(&fresh, key)) {
            cJSON_Delete(obj);
            continue;
        }
        cJSON *old = kp_strmap_remove(&inf->cache, key);
        kp_strmap_put(&fresh, key, obj);
        if (old && same_version(old, obj))
            cJSON_Delete(old);
        else
            change_push(out, old ? KP_CHANGE_UPDATE : KP_CHANGE_ADD, key, old, obj);
    }
    leftovers l = {out};
    kp_strmap_foreach(&inf->cache, report_gone, &l);
    kp_strmap_clear(&inf->cache, NULL); /* the objects now belong to the changes */
    inf->cache = fresh;
    for (size_t i = 0; i < inf->nindexes; i++)
        kp_strmap_clear(&inf->indexes[i].values, free_key_set);
    kp_strmap_foreach(&inf->cache, reindex, inf);
}

static void delete_object(void *value)
{
    cJSON_Delete(value);
}

void kp_cache_free(kp_informer *inf)
{
    kp_strmap_clear(&inf->cache, delete_object);
    for (size_t i = 0; i < inf->nindexes; i++) {
        kp_strmap_clear(&inf->indexes[i].values, free_key_set);
        free(inf->indexes[i].name);
    }
    free(inf->indexes);
}

static void notify(const kp_informer_handler *h, const kp_change *c)
{
    if (c->type == KP_CHANGE_ADD && h->on_add)
        h->on_add(h->ctx, c->new_obj);
    else if (c->type == KP_CHANGE_UPDATE && h->on_update)
        h->on_update(h->ctx, c->old_obj, c->new_obj);
    else if (c->type == KP_CHANGE_DELETE && h->on_delete)
        h->on_delete(h->ctx, c->old_obj);
}

void kp_changes_deliver(kp_informer *inf, kp_changes *changes)
{
    for (size_t i = 0; i < changes->n; i++) {
        kp_change *c = &changes->items[i];
        for (size_t h = 0; h < inf->nhandlers; h++)
            notify(&inf->handlers[h], c);
        for (size_t q = 0; q < inf->nqueues; q++)
            kp_workqueue_add(inf->queues[q], c->key);
        cJSON_Delete(c->old_obj);
        free(c->key);
    }
    free(changes->items);
    memset(changes, 0, sizeof(*changes));
}
