/*
 * Prices: two sorted arrays (on-demand by type; spot by type then zone)
 * behind one mutex, rebuilt by merging on each successful update. Names live
 * in an arena that only grows with names never seen before, so replaced
 * prices never leave dangling strings.
 */
#include "cloud/aws/pricing_provider.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/ec2.h"
#include "cloud/aws/pricing.h"
#include "cloud/aws_catalog.h"

typedef struct od_price {
    const char *type;
    double price;
} od_price;

typedef struct spot_price {
    const char *type;
    const char *zone;
    double price;
    int64_t timestamp_ns;
} spot_price;

struct kp_aws_prices {
    char *region;
    kp_aws_client *ec2, *pricing;
    bool isolated_vpc;
    const kp_clock *clock;
    pthread_mutex_t lock;
    kp_arena *names; /* type and zone strings, shared by both arrays */
    od_price *od;
    size_t n_od, cap_od;
    spot_price *spot;
    size_t n_spot, cap_spot;
    bool spot_updated;
    uint64_t seqnum;
};

static int od_cmp(const void *a, const void *b)
{
    return strcmp(((const od_price *)a)->type, ((const od_price *)b)->type);
}

static int spot_cmp(const void *a, const void *b)
{
    const spot_price *x = a, *y = b;
    int c = strcmp(x->type, y->type);
    return c ? c : strcmp(x->zone, y->zone);
}

static od_price *od_find(const kp_aws_prices *p, const char *type)
{
    od_price key = {type, 0};
    return p->n_od ? bsearch(&key, p->od, p->n_od, sizeof(*p->od), od_cmp) : NULL;
}

static spot_price *spot_find(const kp_aws_prices *p, const char *type, const char *zone)
{
    spot_price key = {type, zone, 0, 0};
    return p->n_spot ? bsearch(&key, p->spot, p->n_spot, sizeof(*p->spot), spot_cmp) : NULL;
}

/* Merge a batch of on-demand prices over the current ones (lock held): known
 * types are found by binary search in the sorted prefix, new ones appended
 * (a batch naming a type twice keeps the last, as a map assignment would) and
 * the array sorted once. */
static void od_merge(kp_aws_prices *p, const char *const *types, const double *prices, size_t n)
{
    size_t sorted = p->n_od;
    for (size_t i = 0; i < n; i++) {
        od_price key = {types[i], 0};
        od_price *hit = sorted ? bsearch(&key, p->od, sorted, sizeof(*p->od), od_cmp) : NULL;
        for (size_t j = sorted; !hit && j < p->n_od; j++)
            if (strcmp(p->od[j].type, types[i]) == 0) hit = &p->od[j];
        if (hit) {
            hit->price = prices[i];
            continue;
        }
        p->od = kp_xgrow(p->od, &p->cap_od, p->n_od + 1, sizeof(*p->od));
        p->od[p->n_od++] = (od_price){kp_arena_strdup(p->names, types[i]), prices[i]};
    }
    if (p->n_od != sorted) qsort(p->od, p->n_od, sizeof(*p->od), od_cmp);
}

/* Order by key, then by time, so the newest record of a key comes last. */
static int spot_time_cmp(const void *a, const void *b)
{
    const spot_price *x = a, *y = b;
    int c = spot_cmp(a, b);
    if (c) return c;
    return (x->timestamp_ns > y->timestamp_ns) - (x->timestamp_ns < y->timestamp_ns);
}

/* Sort `batch` and keep only the newest record per (type, zone); returns the count. */
static size_t spot_newest(spot_price *batch, size_t n)
{
    if (n == 0) return 0;
    qsort(batch, n, sizeof(*batch), spot_time_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (kept && spot_cmp(&batch[kept - 1], &batch[i]) == 0)
            batch[kept - 1] = batch[i];
        else
            batch[kept++] = batch[i];
    }
    return kept;
}

/* Merge a sorted, de-duplicated batch over the stored records (lock held):
 * the batch wins on equal keys, unless `newer_only` and it is older. */
static void spot_merge(kp_aws_prices *p, const spot_price *batch, size_t n, bool newer_only)
{
    spot_price *merged = kp_xcalloc(p->n_spot + n + 1, sizeof(*merged));
    size_t i = 0, j = 0, k = 0;
    while (i < p->n_spot || j < n) {
        int c = i == p->n_spot ? 1 : j == n ? -1 : spot_cmp(&p->spot[i], &batch[j]);
        if (c < 0) {
            merged[k++] = p->spot[i++];
        } else if (c > 0) {
            merged[k] = batch[j++];
            merged[k].type = kp_arena_strdup(p->names, merged[k].type);
            merged[k].zone = kp_arena_strdup(p->names, merged[k].zone);
            k++;
        } else {
            bool keep_old = newer_only && batch[j].timestamp_ns < p->spot[i].timestamp_ns;
            merged[k++] = keep_old ? p->spot[i] : batch[j];
            merged[k - 1].type = p->spot[i].type; /* stored strings stay valid */
            merged[k - 1].zone = p->spot[i].zone;
            i++, j++;
        }
    }
    free(p->spot);
    p->spot = merged;
    p->n_spot = k;
    p->cap_spot = p->n_spot + n + 1;
}

/* The static table: the built-in us-east-1 prices, as Karpenter falls back
 * to its us-east-1 table for regions it has none for. */
static void load_static(kp_aws_prices *p)
{
    size_t n = 0;
    const kp_aws_type_info *rows = kp_aws_catalog_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].price_micro_usd <= 0) continue;
        p->od = kp_xgrow(p->od, &p->cap_od, p->n_od + 1, sizeof(*p->od));
        p->od[p->n_od++] = (od_price){rows[i].name, (double)rows[i].price_micro_usd / 1e6};
    }
    qsort(p->od, p->n_od, sizeof(*p->od), od_cmp);
}

int kp_aws_prices_new(kp_aws_prices **out, const kp_aws_prices_opts *o)
{
    const char *region = o->region;
    if (!region && o->ec2) region = kp_aws_client_region(o->ec2);
    if (!region || !*region) return kp_error_set(KP_EINVALID, "prices: no region");
    kp_aws_prices *p = kp_xcalloc(1, sizeof(*p));
    p->region = kp_xstrdup(region);
    p->ec2 = o->ec2;
    p->pricing = o->pricing;
    p->isolated_vpc = o->isolated_vpc;
    p->clock = o->clock ? o->clock : kp_clock_system();
    p->names = kp_arena_new();
    pthread_mutex_init(&p->lock, NULL);
    load_static(p);
    *out = p;
    return 0;
}

kp_aws_prices *kp_aws_prices_free(kp_aws_prices *p)
{
    if (!p) return NULL;
    pthread_mutex_destroy(&p->lock);
    kp_arena_free(p->names);
    free(p->od);
    free(p->spot);
    free(p->region);
    free(p);
    return NULL;
}

static const kp_pricing_filter COMMON_FILTERS[] = {
    {"serviceCode", "AmazonEC2"}, {"preInstalledSw", "NA"},     {"operatingSystem", "Linux"},
    {"capacitystatus", "Used"},   {"marketoption", "OnDemand"},
};
enum { N_COMMON = sizeof(COMMON_FILTERS) / sizeof(COMMON_FILTERS[0]) };

/* One GetProducts query: the common filters, the region, and `tenancy`/`family`. */
static int fetch_on_demand(kp_aws_prices *p, kp_arena *a, const char *tenancy, const char *family,
                           kp_pricing_price_list *out)
{
    kp_pricing_filter f[N_COMMON + 3];
    f[0] = (kp_pricing_filter){"regionCode", p->region};
    memcpy(f + 1, COMMON_FILTERS, sizeof(COMMON_FILTERS));
    f[N_COMMON + 1] = (kp_pricing_filter){"tenancy", tenancy};
    f[N_COMMON + 2] = (kp_pricing_filter){"productFamily", family};
    const char *currency = strncmp(p->region, "cn-", 3) == 0 ? "CNY" : "USD";
    return kp_pricing_get_products(p->pricing, a, f, N_COMMON + 3, currency, out);
}

static void merge_list(kp_aws_prices *p, const kp_pricing_price_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const char *t = l->items[i].instance_type;
        od_merge(p, &t, &l->items[i].price, 1);
    }
}

int kp_aws_prices_update_on_demand(kp_aws_prices *p)
{
    if (p->isolated_vpc || !p->pricing || strncmp(p->region, "us-gov", 6) == 0) return 0;
    kp_arena *a = kp_arena_new();
    kp_pricing_price_list shared = {0}, metal = {0};
    int err = fetch_on_demand(p, a, "Shared", "Compute Instance", &shared);
    if (err == 0) err = fetch_on_demand(p, a, "Dedicated", "Compute Instance (bare metal)", &metal);
    if (err < 0) {
        err = kp_error_wrap(err, "retrieving on-demand pricing data");
    } else if (shared.n == 0 || metal.n == 0) {
        err = kp_error_set(KP_ENOTFOUND, "no on-demand pricing found");
    } else {
        pthread_mutex_lock(&p->lock);
        merge_list(p, &shared);
        merge_list(p, &metal);
        p->seqnum++;
        pthread_mutex_unlock(&p->lock);
    }
    kp_arena_free(a);
    return err;
}

/* Keep the newest record per (type, zone) of one answer, then merge them over
 * the stored prices: a new answer replaces what an older one said. */
static int apply_spot(kp_aws_prices *p, const kp_ec2_spot_price_list *l)
{
    spot_price *batch = kp_xcalloc(l->n + 1, sizeof(*batch));
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const kp_ec2_spot_price *r = &l->items[i];
        if (r->instance_type && r->availability_zone && r->price_usd > 0)
            batch[n++] =
                (spot_price){r->instance_type, r->availability_zone, r->price_usd, r->timestamp_ns};
    }
    n = spot_newest(batch, n);
    if (n == 0) {
        free(batch);
        return kp_error_set(KP_ENOTFOUND, "no spot pricing found");
    }
    pthread_mutex_lock(&p->lock);
    spot_merge(p, batch, n, false);
    p->spot_updated = true;
    p->seqnum++;
    pthread_mutex_unlock(&p->lock);
    free(batch);
    return 0;
}

int kp_aws_prices_update_spot(kp_aws_prices *p)
{
    if (!p->ec2) return kp_error_set(KP_EINVALID, "prices: no EC2 client for spot prices");
    static const char *const descriptions[] = {"Linux/UNIX", "Linux/UNIX (Amazon VPC)"};
    kp_ec2_spot_price_input in = {
        .product_descriptions = descriptions,
        .n_product_descriptions = 2,
        .start_time_ns = p->clock->now(p->clock),
        .max_results = 2000,
    };
    kp_arena *a = kp_arena_new();
    kp_ec2_spot_price_list list = {0};
    int err = kp_ec2_describe_spot_price_history(p->ec2, a, &in, &list);
    if (err < 0)
        err = kp_error_wrap(err, "retrieving spot pricing data");
    else
        err = apply_spot(p, &list);
    kp_arena_free(a);
    return err;
}

int kp_aws_prices_refresh(kp_aws_prices *p)
{
    int od = kp_aws_prices_update_on_demand(p);
    char first[512] = "";
    if (od < 0) snprintf(first, sizeof(first), "%s", kp_error_last());
    int spot = kp_aws_prices_update_spot(p);
    if (od < 0) return kp_error_set(od, "%s", first);
    return spot;
}

bool kp_aws_prices_on_demand(kp_aws_prices *p, const char *type, double *price)
{
    if (!type) return false;
    pthread_mutex_lock(&p->lock);
    const od_price *hit = od_find(p, type);
    if (hit) *price = hit->price;
    pthread_mutex_unlock(&p->lock);
    return hit != NULL;
}

/* Before the first spot update: the static on-demand price of the type, in
 * every zone (Karpenter seeds spot prices from its static table). */
static bool spot_default(const char *type, double *price)
{
    const kp_aws_type_info *row = kp_aws_catalog_find(type);
    if (!row || row->price_micro_usd <= 0) return false;
    *price = (double)row->price_micro_usd / 1e6;
    return true;
}

bool kp_aws_prices_spot(kp_aws_prices *p, const char *type, const char *zone, double *price)
{
    if (!type || !zone) return false;
    pthread_mutex_lock(&p->lock);
    bool ok = false;
    if (!p->spot_updated) {
        ok = spot_default(type, price);
    } else {
        const spot_price *hit = spot_find(p, type, zone);
        if (hit) {
            *price = hit->price;
            ok = true;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

uint64_t kp_aws_prices_seqnum(const kp_aws_prices *cp)
{
    kp_aws_prices *p = (kp_aws_prices *)(uintptr_t)cp; /* heap object: locking is sound */
    pthread_mutex_lock(&p->lock);
    uint64_t s = p->seqnum;
    pthread_mutex_unlock(&p->lock);
    return s;
}

bool kp_aws_prices_spot_updated(const kp_aws_prices *cp)
{
    kp_aws_prices *p = (kp_aws_prices *)(uintptr_t)cp;
    pthread_mutex_lock(&p->lock);
    bool u = p->spot_updated;
    pthread_mutex_unlock(&p->lock);
    return u;
}

void kp_aws_prices_merge_on_demand(kp_aws_prices *p, const char *const *types, const double *prices,
                                   uint32_t n)
{
    pthread_mutex_lock(&p->lock);
    od_merge(p, types, prices, n);
    p->seqnum++;
    pthread_mutex_unlock(&p->lock);
}

void kp_aws_prices_put_spot(kp_aws_prices *p, const char *type, const char *zone, double price,
                            int64_t timestamp_ns)
{
    spot_price one = {type, zone, price, timestamp_ns};
    pthread_mutex_lock(&p->lock);
    spot_merge(p, &one, 1, true);
    p->spot_updated = true;
    p->seqnum++;
    pthread_mutex_unlock(&p->lock);
}
