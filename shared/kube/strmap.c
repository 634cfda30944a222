#include "kube/strmap.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: keys are short ("namespace/name"), so a simple hash is plenty. */
static unsigned hash_key(const char *key)
{
    unsigned h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

static kp_strmap_entry **find(const kp_strmap *map, const char *key, unsigned hash)
{
    if (!map->nbuckets) return NULL;
    kp_strmap_entry **link = &map->buckets[hash & (map->nbuckets - 1)];
    while (*link && ((*link)->hash != hash || strcmp((*link)->key, key) != 0))
        link = &(*link)->next;
    return link;
}

static void grow(kp_strmap *map)
{
    size_t n = map->nbuckets ? map->nbuckets * 2 : 16;
    kp_strmap_entry **buckets = kp_xcalloc(n, sizeof(*buckets));
    for (size_t i = 0; i < map->nbuckets; i++) {
        kp_strmap_entry *e = map->buckets[i];
        while (e) {
            kp_strmap_entry *next = e->next;
            e->next = buckets[e->hash & (n - 1)];
            buckets[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(map->buckets);
    map->buckets = buckets;
    map->nbuckets = n;
}

void *kp_strmap_get(const kp_strmap *map, const char *key)
{
    kp_strmap_entry **link = find(map, key, hash_key(key));
    return link && *link ? (*link)->value : NULL;
}

bool kp_strmap_has(const kp_strmap *map, const char *key)
{
    kp_strmap_entry **link = find(map, key, hash_key(key));
    return link && *link;
}

void *kp_strmap_put(kp_strmap *map, const char *key, void *value)
{
    unsigned hash = hash_key(key);
    kp_strmap_entry **link = find(map, key, hash);
    if (link && *link) {
        void *old = (*link)->value;
        (*link)->value = value;
        return old;
    }
    if (map->count >= map->nbuckets) grow(map);
    kp_strmap_entry *e = kp_xmalloc(sizeof(*e));
    e->key = kp_xstrdup(key);
    e->value = value;
    e->hash = hash;
    e->next = map->buckets[hash & (map->nbuckets - 1)];
    map->buckets[hash & (map->nbuckets - 1)] = e;
    map->count++;
    return NULL;
}

void *kp_strmap_remove(kp_strmap *map, const char *key)
{
    kp_strmap_entry **link = find(map, key, hash_key(key));
    if (!link || !*link) return NULL;
    kp_strmap_entry *e = *link;
    void *value = e->value;
    *link = e->next;
    free(e->key);
    free(e);
    map->count--;
    return value;
}

void kp_strmap_foreach(const kp_strmap *map, void (*fn)(void *ctx, const char *key, void *value),
                       void *ctx)
{
    for (size_t i = 0; i < map->nbuckets; i++)
        for (kp_strmap_entry *e = map->buckets[i]; e; e = e->next)
            fn(ctx, e->key, e->value);
}

size_t kp_strmap_remove_if(kp_strmap *map, bool (*drop)(void *ctx, const char *key, void *value),
                           void *ctx, void (*free_value)(void *value))
{
    size_t gone = 0;
    for (size_t i = 0; i < map->nbuckets; i++) {
        kp_strmap_entry **link = &map->buckets[i];
        while (*link) {
            kp_strmap_entry *e = *link;
            if (!drop(ctx, e->key, e->value)) {
                link = &e->next;
                continue;
            }
            *link = e->next;
            if (free_value) free_value(e->value);
            free(e->key);
            free(e);
            gone++;
        }
    }
    map->count -= gone;
    return gone;
}

void kp_strmap_clear(kp_strmap *map, void (*free_value)(void *value))
{
    for (size_t i = 0; i < map->nbuckets; i++) {
        kp_strmap_entry *e = map->buckets[i];
        while (e) {
            kp_strmap_entry *next = e->next;
            if (free_value) free_value(e->value);
            free(e->key);
            free(e);
            e = next;
        }
    }
    free(map->buckets);
    map->buckets = NULL;
    map->nbuckets = 0;
    map->count = 0;
}
