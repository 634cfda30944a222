/*
 * The unavailable-offerings cache: a small array of keyed entries behind a
 * mutex. A few dozen entries at most in practice (each lives 3 minutes), so a
 * linear scan beats a hash table's upkeep. Expired entries are swept whenever
 * the clock is read, and sweeping something bumps the sequence number.
 */
#include "cloud/aws/ice_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

typedef struct ice_entry {
    char *key; /* "spot:m5.large:us-east-1a", or "spot" for a whole capacity type */
    char *reason;
    int64_t expires_ns;
} ice_entry;

struct kp_aws_ice_cache {
    const kp_clock *clock;
    pthread_mutex_t lock;
    ice_entry *entries;
    size_t n, cap;
    uint64_t seqnum;
};

kp_aws_ice_cache *kp_aws_ice_cache_new(const kp_clock *clock)
{
    kp_aws_ice_cache *c = kp_xcalloc(1, sizeof(*c));
    c->clock = clock ? clock : kp_clock_system();
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void entry_clear(ice_entry *e)
{
    free(e->key);
    free(e->reason);
}

kp_aws_ice_cache *kp_aws_ice_cache_free(kp_aws_ice_cache *c)
{
    if (!c) return NULL;
    for (size_t i = 0; i < c->n; i++)
        entry_clear(&c->entries[i]);
    free(c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return NULL;
}

/* Drop expired entries (lock held). */
static void sweep(kp_aws_ice_cache *c, int64_t now)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->entries[i].expires_ns > now) {
            c->entries[kept++] = c->entries[i];
            continue;
        }
        entry_clear(&c->entries[i]);
    }
    if (kept != c->n) {
        c->n = kept;
        c->seqnum++;
    }
}

static ice_entry *find(kp_aws_ice_cache *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->entries[i].key, key) == 0) return &c->entries[i];
    return NULL;
}

static void put(kp_aws_ice_cache *c, char *key, const char *reason)
{
    pthread_mutex_lock(&c->lock);
    int64_t now = c->clock->monotonic(c->clock);
    sweep(c, now);
    ice_entry *e = find(c, key);
    if (e) {
        free(key);
        free(e->reason);
    } else {
        c->entries = kp_xgrow(c->entries, &c->cap, c->n + 1, sizeof(*c->entries));
        e = &c->entries[c->n++];
        e->key = key;
    }
    e->reason = kp_xstrdup(reason ? reason : "");
    e->expires_ns = now + KP_AWS_ICE_TTL_NS;
    c->seqnum++;
    pthread_mutex_unlock(&c->lock);
}

static bool blank(const char *s)
{
    return !s || !*s;
}

/* "a:b:c" in a fresh allocation. */
static char *join3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *key = kp_xmalloc(la + lb + lc + 3);
    memcpy(key, a, la);
    key[la] = ':';
    memcpy(key + la + 1, b, lb);
    key[la + 1 + lb] = ':';
    memcpy(key + la + lb + 2, c, lc + 1);
    return key;
}

void kp_aws_ice_mark(kp_aws_ice_cache *c, const char *capacity_type, const char *instance_type,
                     const char *zone, const char *reason)
{
    if (!c || blank(capacity_type) || blank(instance_type) || blank(zone)) return;
    put(c, join3(capacity_type, instance_type, zone), reason);
}

void kp_aws_ice_mark_capacity_type(kp_aws_ice_cache *c, const char *capacity_type,
                                   const char *reason)
{
    if (!c || blank(capacity_type)) return;
    put(c, kp_xstrdup(capacity_type), reason);
}

bool kp_aws_ice_unavailable(kp_aws_ice_cache *c, const char *capacity_type,
                            const char *instance_type, const char *zone)
{
    if (!c || blank(capacity_type)) return false;
    pthread_mutex_lock(&c->lock);
    sweep(c, c->clock->monotonic(c->clock));
    bool hit = false;
    if (c->n > 0) {
        hit = find(c, capacity_type) != NULL;
        if (!hit && !blank(instance_type) && !blank(zone)) {
            char *key = join3(capacity_type, instance_type, zone);
            hit = find(c, key) != NULL;
            free(key);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

uint64_t kp_aws_ice_seqnum(const kp_aws_ice_cache *cc)
{
    /* The cache is always heap-allocated, never a const object, so sweeping
     * through a const handle is sound; readers need expiry to show here. */
    kp_aws_ice_cache *c = (kp_aws_ice_cache *)(uintptr_t)cc;
    pthread_mutex_lock(&c->lock);
    sweep(c, c->clock->monotonic(c->clock));
    uint64_t seq = c->seqnum;
    pthread_mutex_unlock(&c->lock);
    return seq;
}

void kp_aws_ice_flush(kp_aws_ice_cache *c)
{
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        entry_clear(&c->entries[i]);
    if (c->n) c->seqnum++;
    c->n = 0;
    pthread_mutex_unlock(&c->lock);
}

uint32_t kp_aws_ice_count(kp_aws_ice_cache *c)
{
    pthread_mutex_lock(&c->lock);
    sweep(c, c->clock->monotonic(c->clock));
    uint32_t n = (uint32_t)c->n;
    pthread_mutex_unlock(&c->lock);
    return n;
}
