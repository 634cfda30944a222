/*
 * Node-class resolution: subnets, security groups and the instance profile,
 * and the status object with its conditions (AMIs: nodeclass_amis.c).
 */
#include "cloud/aws/nodeclass_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/iam.h"

/* ----------------------------------------------------------------- filters */

void kp_ncr_filter_add(kp_arena *arena, kp_ncr_filters *f, const char *name, const char *value)
{
    const char **v = KP_ARENA_NEW(arena, const char *, 1);
    v[0] = value;
    f->items = kp_arena_grow(arena, f->items, f->n, f->n + 1, sizeof(*f->items));
    f->items[f->n++] = (kp_ec2_filter){name, v, 1};
}

void kp_ncr_filter_tags(kp_arena *arena, kp_ncr_filters *f, const kp_labels *tags)
{
    for (size_t i = 0; i < tags->count; i++) {
        const kp_label *t = &tags->items[i];
        if (strcmp(t->value, "*") == 0)
            kp_ncr_filter_add(arena, f, "tag-key", t->key);
        else
            kp_ncr_filter_add(arena, f, kp_arena_printf(arena, "tag:%s", t->key), t->value);
    }
}

char *kp_ncr_filters_key(kp_arena *arena, const char *kind, const kp_ncr_filters *f)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    kp_buf_puts(&b, kind);
    for (size_t i = 0; i < f->n; i++) {
        kp_buf_printf(&b, "|%s=", f->items[i].name);
        for (size_t j = 0; j < f->items[i].n_values; j++)
            kp_buf_printf(&b, "%s%s", j ? "," : "", f->items[i].values[j]);
    }
    char *key = kp_arena_strdup(arena, kp_buf_cstr(&b));
    kp_buf_free(&b);
    return key;
}

/* One query per tag/name term; id terms share one id query, as Karpenter asks. */
static size_t term_queries(kp_arena *a, const kp_ec2_selector_term *terms, size_t n,
                           const char *id_filter, const char *name_filter, kp_ncr_filters *q)
{
    size_t k = 0;
    kp_ncr_filters ids = {0};
    for (size_t i = 0; i < n; i++) {
        if (terms[i].id && *terms[i].id) {
            kp_ncr_filter_add(a, &ids, id_filter, terms[i].id);
            continue;
        }
        q[k] = (kp_ncr_filters){0};
        kp_ncr_filter_tags(a, &q[k], &terms[i].tags);
        if (name_filter && terms[i].name && *terms[i].name)
            kp_ncr_filter_add(a, &q[k], name_filter, terms[i].name);
        if (q[k].n) k++;
    }
    if (ids.n) {
        /* one filter, many values */
        const char **values = KP_ARENA_NEW(a, const char *, ids.n);
        for (size_t i = 0; i < ids.n; i++)
            values[i] = ids.items[i].values[0];
        q[k] = (kp_ncr_filters){0};
        kp_ncr_filter_add(a, &q[k], id_filter, values[0]);
        q[k].items[0].values = values;
        q[k].items[0].n_values = ids.n;
        k++;
    }
    return k;
}

static bool has_id(const cJSON *list, const char *id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "id"));
        if (s && strcmp(s, id) == 0) return true;
    }
    return false;
}

/* Append the entries of `add` that `all` lacks (by id). */
static void merge(cJSON *all, const cJSON *add)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, add)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "id"));
        if (id && !has_id(all, id)) cJSON_AddItemToArray(all, cJSON_Duplicate(e, 1));
    }
}

/* ----------------------------------------------------------------- subnets */

static cJSON *subnets_json(const kp_ec2_subnet_list *l)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < l->n; i++) {
        const kp_ec2_subnet *s = &l->items[i];
        if (!s->id || !*s->id) continue; /* nothing to launch into */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", s->id ? s->id : "");
        cJSON_AddStringToObject(o, "zone", s->availability_zone ? s->availability_zone : "");
        if (s->availability_zone_id) cJSON_AddStringToObject(o, "zoneID", s->availability_zone_id);
        cJSON_AddNumberToObject(o, "availableIPs", (double)s->available_ip_count);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

static int subnet_cmp(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    double dx = num(x, "availableIPs"), dy = num(y, "availableIPs");
    if (dx != dy) return dx > dy ? -1 : 1;
    return strcmp(str(x, "id"), str(y, "id"));
}

static int id_cmp(const void *a, const void *b)
{
    return strcmp(str(*(const cJSON *const *)a, "id"), str(*(const cJSON *const *)b, "id"));
}

void kp_ncr_sort_array(cJSON *a, int (*cmp)(const void *, const void *))
{
    int n = cJSON_GetArraySize(a);
    if (n < 2) return;
    cJSON **items = kp_xcalloc((size_t)n, sizeof(*items));
    for (int i = n; i-- > 0;)
        items[i] = cJSON_DetachItemFromArray(a, i);
    qsort(items, (size_t)n, sizeof(*items), cmp);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, items[i]);
    free(items);
}

typedef int (*describe_fn)(kp_aws_client *c, kp_arena *a, const kp_ncr_filters *q, cJSON **out);

static int describe_subnets(kp_aws_client *c, kp_arena *a, const kp_ncr_filters *q, cJSON **out)
{
    kp_ec2_subnet_list l = {0};
    int err = kp_ec2_describe_subnets(c, a, NULL, 0, q->items, q->n, &l);
    if (err == 0) *out = subnets_json(&l);
    return err;
}

static int describe_groups(kp_aws_client *c, kp_arena *a, const kp_ncr_filters *q, cJSON **out)
{
    kp_ec2_security_group_list l = {0};
    int err = kp_ec2_describe_security_groups(c, a, NULL, 0, q->items, q->n, &l);
    if (err < 0) return err;
    *out = cJSON_CreateArray();
    for (size_t i = 0; i < l.n; i++) {
        if (!l.items[i].id || !*l.items[i].id) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", l.items[i].id);
        cJSON_AddStringToObject(o, "name", l.items[i].name ? l.items[i].name : "");
        cJSON_AddItemToArray(*out, o);
    }
    return 0;
}

/* Every query (cached per query), merged by id. */
static int run_queries(kp_aws_nc_resolver *r, kp_aws_client *c, const char *kind,
                       const kp_ec2_selector_term *terms, size_t n, const char *id_filter,
                       const char *name_filter, describe_fn fn, int64_t ttl, cJSON **out)
{
    kp_arena *a = kp_arena_new();
    kp_ncr_filters *q = KP_ARENA_NEW(a, kp_ncr_filters, n + 1);
    size_t nq = term_queries(a, terms, n, id_filter, name_filter, q);
    cJSON *all = cJSON_CreateArray();
    int err = 0;
    for (size_t i = 0; i < nq && err == 0; i++) {
        const char *key = kp_ncr_filters_key(a, kind, &q[i]);
        cJSON *found = kp_aws_cache_get(r->cache, key);
        if (!found && (err = fn(c, a, &q[i], &found)) == 0)
            kp_aws_cache_put(r->cache, key, found, ttl);
        if (err == 0) merge(all, found);
        cJSON_Delete(found);
    }
    kp_arena_free(a);
    if (err < 0) {
        cJSON_Delete(all);
        return err;
    }
    *out = all;
    return 0;
}

int kp_ncr_subnets(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                   cJSON **out)
{
    int err = run_queries(r, ec2, "subnets", nc->subnet_selector_terms, nc->n_subnet_selector_terms,
                          "subnet-id", NULL, describe_subnets, r->subnet_ttl_ns, out);
    if (err == 0) kp_ncr_sort_array(*out, subnet_cmp);
    return err;
}

int kp_ncr_security_groups(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                           cJSON **out)
{
    int err = run_queries(r, ec2, "security-groups", nc->security_group_selector_terms,
                          nc->n_security_group_selector_terms, "group-id", "group-name",
                          describe_groups, KP_NC_SG_TTL_NS, out);
    if (err == 0) kp_ncr_sort_array(*out, id_cmp);
    return err;
}
