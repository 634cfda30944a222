/* A TTL cache of JSON values for the AWS provider (see provider_internal.h). */
#include "cloud/aws/provider_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

typedef struct cache_entry {
    char *key;
    cJSON *value;
    int64_t expires_ns;
} cache_entry;

struct kp_aws_cache {
    pthread_mutex_t lock;
    const kp_clock *clock;
    cache_entry *items;
    size_t n, cap;
};

kp_aws_cache *kp_aws_cache_new(const kp_clock *clock)
{
    kp_aws_cache *c = kp_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    c->clock = clock ? clock : kp_clock_system();
    return c;
}

static void drop(kp_aws_cache *c, size_t i)
{
    free(c->items[i].key);
    cJSON_Delete(c->items[i].value);
    c->items[i] = c->items[--c->n];
}

void kp_aws_cache_flush(kp_aws_cache *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->n)
        drop(c, c->n - 1);
    pthread_mutex_unlock(&c->lock);
}

kp_aws_cache *kp_aws_cache_free(kp_aws_cache *c)
{
    if (!c) return NULL;
    kp_aws_cache_flush(c);
    free(c->items);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return NULL;
}

/* Under the lock: the live entry for `key`, expired entries swept. */
static cache_entry *find(kp_aws_cache *c, const char *key)
{
    int64_t now = c->clock->monotonic(c->clock);
    cache_entry *hit = NULL;
    for (size_t i = c->n; i-- > 0;) {
        if (c->items[i].expires_ns <= now) drop(c, i);
    }
    for (size_t i = 0; i < c->n && !hit; i++)
        if (strcmp(c->items[i].key, key) == 0) hit = &c->items[i];
    return hit;
}

cJSON *kp_aws_cache_get(kp_aws_cache *c, const char *key)
{
    pthread_mutex_lock(&c->lock);
    cache_entry *e = find(c, key);
    cJSON *copy = e ? cJSON_Duplicate(e->value, 1) : NULL;
    pthread_mutex_unlock(&c->lock);
    return copy;
}

void kp_aws_cache_put(kp_aws_cache *c, const char *key, const cJSON *value, int64_t ttl_ns)
{
    pthread_mutex_lock(&c->lock);
    cache_entry *e = find(c, key);
    if (!e) {
        c->items = kp_xgrow(c->items, &c->cap, c->n + 1, sizeof(*c->items));
        e = &c->items[c->n++];
        e->key = kp_xstrdup(key);
        e->value = NULL;
    }
    cJSON_Delete(e->value);
    e->value = cJSON_Duplicate(value, 1);
    e->expires_ns = c->clock->monotonic(c->clock) + ttl_ns;
    pthread_mutex_unlock(&c->lock);
}

void kp_aws_cache_delete(kp_aws_cache *c, const char *key)
{
    pthread_mutex_lock(&c->lock);
    cache_entry *e = find(c, key);
    if (e) drop(c, (size_t)(e - c->items));
    pthread_mutex_unlock(&c->lock);
}

size_t kp_aws_cache_keys(kp_aws_cache *c, const char *prefix, kp_arena *a, const char ***out)
{
    pthread_mutex_lock(&c->lock);
    find(c, ""); /* sweep the expired */
    const char **keys = KP_ARENA_NEW(a, const char *, c->n + 1);
    size_t n = 0, len = strlen(prefix);
    for (size_t i = 0; i < c->n; i++)
        if (strncmp(c->items[i].key, prefix, len) == 0) keys[n++] = kp_arena_strdup(a, c->items[i].key);
    pthread_mutex_unlock(&c->lock);
    *out = keys;
    return n;
}

uint64_t kp_aws_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}
