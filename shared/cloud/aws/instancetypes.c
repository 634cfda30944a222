/*
 * The instance-type provider: the latest snapshot of what EC2 offers, and a
 * cache of one catalog per node class, rebuilt when anything it was built
 * from changes. One mutex guards both; catalogs are built under it (a few
 * milliseconds for a region's ~900 types), which also keeps two callers from
 * building the same catalog twice.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/instancetypes_internal.h"
#include "cloud/aws/provider_internal.h"

/* A replaced catalog stays alive this long: a solve or a launch started
 * before the replacement reads it without a lock, and none lasts a minute. */
#define RETIRE_NS (60 * KP_NS_PER_SEC)

typedef struct retired_catalog {
    kp_catalog *catalog;
    int64_t since_ns;
    struct retired_catalog *next;
} retired_catalog;

typedef struct class_entry {
    char *name; /* the node class; "" for the default catalog */
    char *key;  /* kp_aws_it_class_key of the inputs it was built from */
    uint64_t snap_gen, prices_seq, ice_seq, crs_seq;
    kp_catalog *catalog;
    retired_catalog *retired; /* replaced ones callers may still be reading, newest first */
} class_entry;

/* A node's real memory, per type and AMI set (Karpenter's discovered capacity). */
typedef struct mem_entry {
    char *type;
    uint64_t amis;
    int64_t bytes;
    int64_t expires_ns;
} mem_entry;

#define DISCOVERED_TTL_NS (INT64_C(60) * 24 * 3600 * KP_NS_PER_SEC)

struct kp_aws_instancetypes {
    kp_aws_client *ec2;
    kp_aws_prices *prices;
    kp_aws_ice_cache *ice;
    kp_aws_reservations *crs;
    const kp_clock *clock;
    kp_aws_instancetypes_opts opts;
    char *region;
    pthread_mutex_t lock;
    it_snapshot *snap; /* NULL before the first refresh */
    uint64_t snap_gen;
    class_entry *classes;
    size_t n_classes, cap_classes;
    mem_entry *mem;
    size_t n_mem, cap_mem;
};

static it_snapshot *snapshot_free(it_snapshot *s)
{
    if (s) {
        kp_arena_free(s->arena);
        free(s);
    }
    return NULL;
}

/* Free retired catalogs retired before `cutoff_ns` (INT64_MAX: all). */
static void retire_older(retired_catalog **list, int64_t cutoff_ns)
{
    for (retired_catalog **p = list; *p;) {
        retired_catalog *r = *p;
        if (r->since_ns < cutoff_ns || cutoff_ns == INT64_MAX) {
            *p = r->next;
            kp_catalog_free(r->catalog);
            free(r);
        } else {
            p = &r->next;
        }
    }
}

static void clear_classes(kp_aws_instancetypes *it)
{
    for (size_t i = 0; i < it->n_classes; i++) {
        free(it->classes[i].name);
        free(it->classes[i].key);
        kp_catalog_free(it->classes[i].catalog);
        retire_older(&it->classes[i].retired, INT64_MAX);
    }
    it->n_classes = 0;
}

static void set_region(kp_aws_instancetypes *it, const char *region)
{
    free(it->region);
    if (!region && it->ec2) region = kp_aws_client_region(it->ec2);
    it->region = kp_xstrdup(region ? region : KP_AWS_REGION);
}

int kp_aws_instancetypes_new(kp_aws_instancetypes **out, kp_aws_client *ec2, kp_aws_prices *prices,
                             kp_aws_ice_cache *ice, const kp_clock *clock)
{
    kp_aws_instancetypes *it = kp_xcalloc(1, sizeof(*it));
    it->ec2 = ec2;
    it->prices = prices;
    it->ice = ice;
    it->clock = clock ? clock : kp_clock_system();
    it->opts = (kp_aws_instancetypes_opts)KP_AWS_INSTANCETYPES_OPTS_INIT;
    set_region(it, NULL);
    pthread_mutex_init(&it->lock, NULL);
    *out = it;
    return 0;
}

kp_aws_instancetypes *kp_aws_instancetypes_free(kp_aws_instancetypes *it)
{
    if (!it) return NULL;
    clear_classes(it);
    free(it->classes);
    for (size_t i = 0; i < it->n_mem; i++)
        free(it->mem[i].type);
    free(it->mem);
    snapshot_free(it->snap);
    pthread_mutex_destroy(&it->lock);
    free(it->region);
    free(it);
    return NULL;
}

int kp_aws_instancetypes_set_opts(kp_aws_instancetypes *it, const kp_aws_instancetypes_opts *o)
{
    if (!(o->vm_memory_overhead_percent >= 0 && o->vm_memory_overhead_percent < 1) ||
        o->reserved_enis < 0)
        return kp_error_set(KP_EINVALID, "instance types: the VM memory overhead must be in "
                                         "[0, 1) and reserved ENIs >= 0");
    pthread_mutex_lock(&it->lock);
    it->opts.vm_memory_overhead_percent = o->vm_memory_overhead_percent;
    it->opts.reserved_enis = o->reserved_enis;
    set_region(it, o->region);
    it->opts.region = it->region;
    clear_classes(it);
    pthread_mutex_unlock(&it->lock);
    return 0;
}

/* ---- snapshots --------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The union of every row's zones, sorted. */
static void collect_zones(it_snapshot *s)
{
    size_t total = 0;
    for (uint32_t i = 0; i < s->n; i++)
        total += s->rows[i].n_zones;
    const char **all = KP_ARENA_NEW(s->arena, const char *, total + 1);
    size_t k = 0;
    for (uint32_t i = 0; i < s->n; i++)
        for (uint32_t z = 0; z < s->rows[i].n_zones; z++)
            all[k++] = s->rows[i].zones[z];
    qsort(all, k, sizeof(*all), str_cmp);
    uint32_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (n == 0 || strcmp(all[n - 1], all[i]) != 0) all[n++] = all[i];
    s->zones = all;
    s->n_zones = n;
}

/* Publish `s` (taking it) and drop catalogs built from the old one lazily:
 * their generation no longer matches. */
static void publish(kp_aws_instancetypes *it, it_snapshot *s)
{
    collect_zones(s);
    pthread_mutex_lock(&it->lock);
    it_snapshot *old = it->snap;
    it->snap = s;
    it->snap_gen++;
    pthread_mutex_unlock(&it->lock);
    snapshot_free(old);
}

static const char *dup_or_null(kp_arena *a, const char *s)
{
    return s ? kp_arena_strdup(a, s) : NULL;
}

static void copy_row(kp_arena *a, const kp_aws_type_row *src, kp_aws_type_row *dst)
{
    *dst = *src;
    kp_aws_type_info *t = &dst->info;
    t->name = kp_arena_strdup(a, src->info.name);
    t->family = dup_or_null(a, src->info.family);
    t->size = dup_or_null(a, src->info.size);
    t->category = dup_or_null(a, src->info.category);
    t->cpu_manufacturer = dup_or_null(a, src->info.cpu_manufacturer);
    t->gpu_name = dup_or_null(a, src->info.gpu_name);
    t->gpu_manufacturer = dup_or_null(a, src->info.gpu_manufacturer);
    t->accel_name = dup_or_null(a, src->info.accel_name);
    t->accel_manufacturer = dup_or_null(a, src->info.accel_manufacturer);
    const char **zones = KP_ARENA_NEW(a, const char *, src->n_zones + 1);
    for (uint32_t i = 0; i < src->n_zones; i++)
        zones[i] = kp_arena_strdup(a, src->zones[i]);
    qsort(zones, src->n_zones, sizeof(*zones), str_cmp);
    dst->zones = zones;
    int32_t *cards = KP_ARENA_NEW(a, int32_t, src->n_cards + 1);
    for (uint32_t i = 0; i < src->n_cards; i++)
        cards[i] = src->card_max_enis[i];
    dst->card_max_enis = cards;
}

static int row_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_aws_type_row *)a)->info.name, ((const kp_aws_type_row *)b)->info.name);
}

void kp_aws_instancetypes_set_rows(kp_aws_instancetypes *it, const kp_aws_type_row *rows,
                                   uint32_t n)
{
    it_snapshot *s = kp_xcalloc(1, sizeof(*s));
    s->arena = kp_arena_new();
    s->rows = KP_ARENA_NEW(s->arena, kp_aws_type_row, n + 1);
    for (uint32_t i = 0; i < n; i++)
        copy_row(s->arena, &rows[i], &s->rows[i]);
    s->n = n;
    qsort(s->rows, n, sizeof(*s->rows), row_cmp);
    publish(it, s);
}

int kp_aws_instancetypes_refresh(kp_aws_instancetypes *it)
{
    if (!it->ec2) return kp_error_set(KP_EINVALID, "instance types: no EC2 client to refresh from");
    it_snapshot *s = kp_xcalloc(1, sizeof(*s));
    s->arena = kp_arena_new();
    int err = kp_aws_instancetypes_fetch(it->ec2, s->arena, &s->rows, &s->n);
    if (err == 0 && s->n == 0) err = kp_error_set(KP_ENOTFOUND, "no instance types found");
    if (err < 0) {
        snapshot_free(s);
        return err;
    }
    publish(it, s);
    return 0;
}

bool kp_aws_instancetypes_ready(kp_aws_instancetypes *it)
{
    pthread_mutex_lock(&it->lock);
    bool ready = it->snap != NULL;
    pthread_mutex_unlock(&it->lock);
    return ready;
}

/* ---- lookups ----------------------------------------------------------- */

int kp_aws_instancetypes_get(kp_aws_instancetypes *it, const char *name, kp_arena *arena,
                             kp_aws_type_row *out)
{
    pthread_mutex_lock(&it->lock);
    int err = 0;
    const kp_aws_type_row *hit = NULL;
    if (!it->snap) {
        err = kp_error_set(KP_ENOTREADY, "no instance types found");
    } else {
        kp_aws_type_row key = {.info.name = name};
        hit = name ? bsearch(&key, it->snap->rows, it->snap->n, sizeof(key), row_cmp) : NULL;
        if (!hit)
            err = kp_error_set(KP_ENOTFOUND, "instance type %s not found", name ? name : "(null)");
        else
            copy_row(arena, hit, out);
    }
    pthread_mutex_unlock(&it->lock);
    return err;
}

int kp_aws_instancetypes_zones(kp_aws_instancetypes *it, kp_arena *arena, const char ***zones,
                               uint32_t *n)
{
    pthread_mutex_lock(&it->lock);
    int err = 0;
    if (!it->snap) {
        err = kp_error_set(KP_ENOTREADY, "no instance types found");
    } else {
        const char **z = KP_ARENA_NEW(arena, const char *, it->snap->n_zones + 1);
        for (uint32_t i = 0; i < it->snap->n_zones; i++)
            z[i] = kp_arena_strdup(arena, it->snap->zones[i]);
        *zones = z;
        *n = it->snap->n_zones;
    }
    pthread_mutex_unlock(&it->lock);
    return err;
}

int kp_aws_alloc_opts_for_nodeclass(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                    kp_aws_alloc_opts *out)
{
    kp_arena *a = kp_arena_new();
    it_class_inputs in;
    pthread_mutex_lock(&it->lock);
    kp_aws_instancetypes_opts flags = it->opts;
    pthread_mutex_unlock(&it->lock);
    int err = kp_aws_it_class_inputs(&flags, nc, NULL, a, &in);
    if (err == 0) *out = in.opts;
    kp_arena_free(a);
    return err;
}

/* ---- catalogs ---------------------------------------------------------- */

static class_entry *find_class(kp_aws_instancetypes *it, const char *name)
{
    for (size_t i = 0; i < it->n_classes; i++)
        if (strcmp(it->classes[i].name, name) == 0) return &it->classes[i];
    it->classes = kp_xgrow(it->classes, &it->cap_classes, it->n_classes + 1, sizeof(*it->classes));
    class_entry *e = &it->classes[it->n_classes++];
    memset(e, 0, sizeof(*e));
    e->name = kp_xstrdup(name);
    return e;
}

/* What a catalog was built from besides the class: sequence numbers. */
typedef struct seqs {
    uint64_t prices, ice, crs;
} seqs;

static bool fresh(const class_entry *e, const char *key, uint64_t gen, const seqs *q)
{
    return e->catalog && e->key && strcmp(e->key, key) == 0 && e->snap_gen == gen &&
           e->prices_seq == q->prices && e->ice_seq == q->ice && e->crs_seq == q->crs;
}

/* Build for `e` and keep the previous catalog one more round. Lock held. */
static int rebuild(kp_aws_instancetypes *it, class_entry *e, const it_class_inputs *in,
                   const char *key, const seqs *q)
{
    char description[256];
    snprintf(description, sizeof(description), "aws %s %s", it->region,
             *e->name ? e->name : "(default)");
    it_build_env env = {it->snap, it->region, it->prices, it->ice, it->crs};
    kp_catalog *cat = NULL;
    int err = kp_aws_it_build_catalog(&env, in, description, &cat);
    if (err < 0) return err;
    int64_t now = it->clock->now(it->clock);
    retire_older(&e->retired, now - RETIRE_NS);
    if (e->catalog) {
        retired_catalog *r = kp_xcalloc(1, sizeof(*r));
        *r = (retired_catalog){e->catalog, now, e->retired};
        e->retired = r;
    }
    e->catalog = cat;
    free(e->key);
    e->key = kp_xstrdup(key);
    e->snap_gen = it->snap_gen;
    e->prices_seq = q->prices;
    e->ice_seq = q->ice;
    e->crs_seq = q->crs;
    return 0;
}

/* The class's AMI set, as the discovered memory is keyed (0: no AMIs). */
static uint64_t amis_hash(const kp_ec2nodeclass *nc)
{
    uint64_t h = 0;
    for (size_t i = 0; nc && i < nc->n_status_amis; i++) {
        const char *id = nc->status_amis[i].id ? nc->status_amis[i].id : "";
        h = kp_aws_fnv1a(h ? h : KP_AWS_FNV_OFFSET, id, strlen(id) + 1);
    }
    return h;
}

/* Lock held: the live discovered memory for the class's AMIs. */
static void discovered_inputs(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc, kp_arena *a,
                              it_class_inputs *in)
{
    uint64_t h = amis_hash(nc);
    int64_t now = it->clock->now(it->clock);
    in->mem_types = KP_ARENA_NEW(a, const char *, it->n_mem + 1);
    in->mem_bytes = KP_ARENA_NEW(a, int64_t, it->n_mem + 1);
    in->n_mem = 0;
    for (size_t i = 0; h && i < it->n_mem; i++)
        if (it->mem[i].amis == h && it->mem[i].expires_ns > now) {
            in->mem_types[in->n_mem] = it->mem[i].type;
            in->mem_bytes[in->n_mem++] = it->mem[i].bytes;
        }
}

void kp_aws_instancetypes_observe_memory(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                         const char *type, int64_t bytes)
{
    uint64_t h = amis_hash(nc);
    if (!h || !type || bytes <= 0) return;
    pthread_mutex_lock(&it->lock);
    int64_t now = it->clock->now(it->clock);
    mem_entry *e = NULL;
    for (size_t i = 0; i < it->n_mem && !e; i++)
        if (it->mem[i].amis == h && strcmp(it->mem[i].type, type) == 0) e = &it->mem[i];
    if (!e) {
        it->mem = kp_xgrow(it->mem, &it->cap_mem, it->n_mem + 1, sizeof(*it->mem));
        e = &it->mem[it->n_mem++];
        *e = (mem_entry){kp_xstrdup(type), h, bytes, 0};
    }
    if (e->expires_ns <= now || bytes < e->bytes) e->bytes = bytes; /* only ever lowered */
    e->expires_ns = now + DISCOVERED_TTL_NS;
    pthread_mutex_unlock(&it->lock);
}

static int catalog_locked(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                          const kp_aws_pg_info *pg, kp_arena *a, const kp_catalog **out)
{
    if (!it->snap) return kp_error_set(KP_ENOTREADY, "no instance types found");
    if (nc && nc->n_status_subnets == 0) return kp_error_set(KP_ENOTREADY, "no subnets found");
    it_class_inputs in;
    int err = kp_aws_it_class_inputs(&it->opts, nc, pg, a, &in);
    if (err < 0) return err;
    discovered_inputs(it, nc, a, &in);
    const char *key = kp_aws_it_class_key(&in, a);
    seqs q = {it->prices ? kp_aws_prices_seqnum(it->prices) : 0,
              it->ice ? kp_aws_ice_seqnum(it->ice) : 0, it->crs ? kp_aws_crs_seqnum(it->crs) : 0};
    class_entry *e = find_class(it, nc && nc->meta.name ? nc->meta.name : "");
    if (!fresh(e, key, it->snap_gen, &q) && (err = rebuild(it, e, &in, key, &q)) < 0) return err;
    *out = e->catalog;
    return 0;
}

int kp_aws_instancetypes_catalog_pg(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                    const kp_aws_pg_info *pg, const kp_catalog **out)
{
    kp_arena *a = kp_arena_new();
    pthread_mutex_lock(&it->lock);
    int err = catalog_locked(it, nc, pg, a, out);
    pthread_mutex_unlock(&it->lock);
    kp_arena_free(a);
    return err;
}

int kp_aws_instancetypes_catalog(kp_aws_instancetypes *it, const kp_ec2nodeclass *nc,
                                 const kp_catalog **out)
{
    return kp_aws_instancetypes_catalog_pg(it, nc, NULL, out);
}

void kp_aws_instancetypes_set_reservations(kp_aws_instancetypes *it, kp_aws_reservations *crs)
{
    pthread_mutex_lock(&it->lock);
    it->crs = crs;
    pthread_mutex_unlock(&it->lock);
}
