/* Capacity reservations: listing and availability (see capacityreservation.h). */
#include "cloud/aws/capacityreservation.h"
#include "api/crd_tables.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/nodeclass_internal.h"

typedef struct avail_entry {
    char *id;
    int32_t count;
    int64_t expires_ns;
} avail_entry;

struct kp_aws_reservations {
    const kp_clock *clock;
    kp_aws_cache *answers; /* query key -> JSON array of raw reservations */
    pthread_mutex_t lock;  /* guards the rest */
    avail_entry *avail;
    size_t n, cap;
    uint64_t seq;
};

kp_aws_reservations *kp_aws_reservations_new(const kp_clock *clock)
{
    kp_aws_reservations *r = kp_xcalloc(1, sizeof(*r));
    r->clock = clock ? clock : kp_clock_system();
    r->answers = kp_aws_cache_new(r->clock);
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

kp_aws_reservations *kp_aws_reservations_free(kp_aws_reservations *r)
{
    if (!r) return NULL;
    kp_aws_cache_free(r->answers);
    for (size_t i = 0; i < r->n; i++)
        free(r->avail[i].id);
    free(r->avail);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return NULL;
}

/* ------------------------------------------------------------- availability */

/* Under the lock: the live entry for `id` (expired ones swept), or NULL. */
static avail_entry *entry(kp_aws_reservations *r, const char *id)
{
    int64_t now = r->clock->monotonic(r->clock);
    for (size_t i = r->n; i-- > 0;) {
        if (r->avail[i].expires_ns > now) continue;
        if (r->avail[i].count > 0) r->seq++;
        free(r->avail[i].id);
        r->avail[i] = r->avail[--r->n];
    }
    for (size_t i = 0; id && i < r->n; i++)
        if (strcmp(r->avail[i].id, id) == 0) return &r->avail[i];
    return NULL;
}

/* Set a count, noting any change: catalogs carry the count, and a solve
 * plans no more claims into a reservation than it has left. Lock held. */
static void set_count(kp_aws_reservations *r, avail_entry *e, int32_t count)
{
    count = count < 0 ? 0 : count;
    if (e->count != count) r->seq++;
    e->count = count;
}

void kp_aws_crs_set_available(kp_aws_reservations *r, const char *id, int32_t count)
{
    if (!id || !*id) return;
    pthread_mutex_lock(&r->lock);
    avail_entry *e = entry(r, id);
    if (!e) {
        r->avail = kp_xgrow(r->avail, &r->cap, r->n + 1, sizeof(*r->avail));
        e = &r->avail[r->n++];
        *e = (avail_entry){kp_xstrdup(id), 0, 0};
    }
    e->expires_ns = r->clock->monotonic(r->clock) + KP_AWS_CR_AVAILABILITY_TTL_NS;
    set_count(r, e, count);
    pthread_mutex_unlock(&r->lock);
}

int32_t kp_aws_crs_available(kp_aws_reservations *r, const char *id)
{
    pthread_mutex_lock(&r->lock);
    avail_entry *e = entry(r, id);
    int32_t n = e ? e->count : 0;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* Add `delta` to a known reservation's count; delta 0 zeroes it. */
static void adjust(kp_aws_reservations *r, const char *id, int delta)
{
    if (!id || !*id) return;
    pthread_mutex_lock(&r->lock);
    avail_entry *e = entry(r, id);
    if (e) set_count(r, e, delta == 0 ? 0 : e->count + delta);
    pthread_mutex_unlock(&r->lock);
}

void kp_aws_crs_mark_launched(kp_aws_reservations *r, const char *id)
{
    adjust(r, id, -1);
}

void kp_aws_crs_mark_terminated(kp_aws_reservations *r, const char *id)
{
    adjust(r, id, +1);
}

void kp_aws_crs_mark_unavailable(kp_aws_reservations *r, const char *id)
{
    adjust(r, id, 0);
}

uint64_t kp_aws_crs_seqnum(kp_aws_reservations *r)
{
    pthread_mutex_lock(&r->lock);
    entry(r, NULL); /* expiry is a change too */
    uint64_t s = r->seq;
    pthread_mutex_unlock(&r->lock);
    return s;
}

/* ------------------------------------------------------------------ listing */

static bool known(const char *value, const char *const *set)
{
    for (size_t i = 0; set[i]; i++)
        if (value && strcmp(value, set[i]) == 0) return true;
    return false;
}

/* One EC2 reservation as cached: the status fields, its end and its count. */
static cJSON *raw_json(const kp_ec2_capacity_reservation *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "availabilityZone", c->availability_zone ? c->availability_zone : "");
    cJSON_AddStringToObject(o, "instanceType", c->instance_type ? c->instance_type : "");
    cJSON_AddStringToObject(o, "ownerID", c->owner_id ? c->owner_id : "");
    cJSON_AddStringToObject(o, "instanceMatchCriteria",
                            c->instance_match_criteria ? c->instance_match_criteria : "");
    cJSON_AddStringToObject(o, "reservationType",
                            c->reservation_type && *c->reservation_type ? c->reservation_type
                                                                        : "default");
    cJSON_AddBoolToObject(o, "interruptible", c->interruptible);
    cJSON_AddNumberToObject(o, "endNs", (double)c->end_date_ns);
    cJSON_AddNumberToObject(o, "available", c->available_instance_count);
    return o;
}

static int describe(kp_aws_client *ec2, kp_arena *a, const kp_ncr_filters *q, const char *id,
                    cJSON **out)
{
    kp_ec2_capacity_reservation_list l = {0};
    int err = kp_ec2_describe_capacity_reservations(ec2, a, id ? &id : NULL, id ? 1 : 0, q->items,
                                                    q->n, &l);
    if (err == KP_ENOTFOUND) err = 0, l = (kp_ec2_capacity_reservation_list){0};
    if (err < 0) return err;
    *out = cJSON_CreateArray();
    for (size_t i = 0; i < l.n; i++)
        if (l.items[i].id && *l.items[i].id) cJSON_AddItemToArray(*out, raw_json(&l.items[i]));
    return 0;
}

/* The filters of one term's query; `*id` set for an id term. false: no query. */
static bool term_query(kp_arena *a, const kp_ec2_selector_term *t, kp_ncr_filters *q,
                       const char **id)
{
    *q = (kp_ncr_filters){0};
    *id = NULL;
    kp_ncr_filter_add(a, q, "state", "active");
    if (t->id && *t->id) {
        *id = t->id;
        return true;
    }
    bool imc = t->instance_match_criteria && *t->instance_match_criteria;
    if (!t->tags.count && !imc) return false;
    if (t->owner_id && *t->owner_id) kp_ncr_filter_add(a, q, "owner-id", t->owner_id);
    kp_ncr_filter_tags(a, q, &t->tags);
    if (imc) kp_ncr_filter_add(a, q, "instance-match-criteria", t->instance_match_criteria);
    return true;
}

static void sync_counts(kp_aws_reservations *r, const cJSON *list)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "id"));
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "available");
        kp_aws_crs_set_available(r, id, cJSON_IsNumber(n) ? (int32_t)n->valuedouble : 0);
    }
}

static bool listed(const cJSON *all, const char *id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, all)
    {
        const char *have = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "id"));
        if (have && strcmp(have, id) == 0) return true;
    }
    return false;
}

/* The status entry of a raw one, NULL when Karpenter would leave it out. */
static cJSON *status_entry(const cJSON *raw, int64_t now)
{
    static const char *const types[] = {"default", "capacity-block", NULL};
    const char *imc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(raw, "instanceMatchCriteria"));
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(raw, "reservationType"));
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(raw, "endNs");
    int64_t end_ns = cJSON_IsNumber(end) ? (int64_t)end->valuedouble : 0;
    if (!known(imc, kp_crd_instance_match_criteria_names) || !known(type, types) || (end_ns && end_ns <= now)) return NULL;
    cJSON *o = cJSON_Duplicate(raw, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(o, "endNs");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "available");
    bool expiring = !strcmp(type, "capacity-block") && end_ns && now >= end_ns - KP_AWS_CR_EXPIRING_NS;
    cJSON_AddStringToObject(o, "state", expiring ? "expiring" : "active");
    if (end_ns) {
        char ts[32];
        kp_time_format_rfc3339(end_ns, ts, sizeof(ts));
        cJSON_AddStringToObject(o, "endTime", ts);
    }
    return o;
}

static int id_cmp(const void *a, const void *b)
{
    const char *x = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)a, "id"));
    const char *y = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)b, "id"));
    return strcmp(x ? x : "", y ? y : "");
}

/* Every query's answer (cached), merged by id into status entries. */
static int run(kp_aws_reservations *r, kp_aws_client *ec2, kp_arena *a,
               const kp_ec2_selector_term *terms, size_t n, cJSON *out)
{
    int64_t now = r->clock->now(r->clock);
    for (size_t i = 0; i < n; i++) {
        kp_ncr_filters q;
        const char *id = NULL;
        if (!term_query(a, &terms[i], &q, &id)) continue;
        const char *key = kp_ncr_filters_key(a, id ? kp_arena_printf(a, "cr:%s", id) : "cr", &q);
        cJSON *found = kp_aws_cache_get(r->answers, key);
        if (!found) {
            int err = describe(ec2, a, &q, id, &found);
            if (err < 0) return err;
            kp_aws_cache_put(r->answers, key, found, KP_AWS_CR_TTL_NS);
            sync_counts(r, found);
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, found)
        {
            const char *eid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "id"));
            cJSON *st = eid && !listed(out, eid) ? status_entry(e, now) : NULL;
            if (st) cJSON_AddItemToArray(out, st);
        }
        cJSON_Delete(found);
    }
    return 0;
}

int kp_aws_crs_list(kp_aws_reservations *r, kp_aws_client *ec2, const kp_ec2_selector_term *terms,
                    size_t n_terms, cJSON **status)
{
    kp_arena *a = kp_arena_new();
    cJSON *all = cJSON_CreateArray();
    int err = run(r, ec2, a, terms, n_terms, all);
    kp_arena_free(a);
    if (err < 0) {
        cJSON_Delete(all);
        return kp_error_wrap(err, "listing capacity reservations");
    }
    kp_ncr_sort_array(all, id_cmp);
    *status = all;
    return 0;
}

/* ------------------------------------------------------ reading the status */

const kp_nc_capacity_reservation *kp_aws_nc_reservation(const kp_ec2nodeclass *nc, const char *id)
{
    for (size_t i = 0; nc && id && i < nc->n_status_capacity_reservations; i++)
        if (nc->status_capacity_reservations[i].id &&
            strcmp(nc->status_capacity_reservations[i].id, id) == 0)
            return &nc->status_capacity_reservations[i];
    return NULL;
}

const char *kp_aws_cr_type(const kp_nc_capacity_reservation *cr)
{
    return cr->reservation_type && *cr->reservation_type ? cr->reservation_type : "default";
}

bool kp_aws_cr_expiring(const kp_nc_capacity_reservation *cr)
{
    return cr->state && strcmp(cr->state, "expiring") == 0;
}
