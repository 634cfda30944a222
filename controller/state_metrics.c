/* Metrics about the cluster as it is (see state_metrics.h). */
#include "controller/state_metrics.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/xalloc.h"
#include "controller/metrics_ctrl.h"
#include "controller/node_metrics.h"
#include "kube/objutil.h"
#include "controller/pod_metrics.h"
#include "controller/reconcile_metrics.h"
#include "controller/status_metrics.h"
#include "kube/strmap.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ offerings */

/* Karpenter's AWS cloudprovider.metrics controller: every instance type's
 * vCPUs and memory, every offering's availability and price. */
static void publish_catalog(kp_ctrl *c, kp_ctrl_metrics *m)
{
    const kp_catalog *cat = NULL;
    if (!c->cloud || c->cloud->ops->instance_types(c->cloud, NULL, &cat) < 0 || !cat)
        return;
    kp_metric *families[] = {m->offering_available, m->offering_price, m->instance_type_cpu, m->instance_type_memory};
    for (size_t i = 0; i < 4; i++)
        kp_metric_mark(families[i]);
    for (size_t i = 0; i < cat->count; i++) {
        const kp_instance_type *it = &cat->types[i];
        for (uint32_t k = 0; k < it->n_capacity; k++) {
            if (!strcmp(it->capacity[k].name, "cpu"))
                kp_ctrl_set(m->instance_type_cpu, (const char *const[]){it->name}, (double)it->capacity[k].milli / 1000);
            if (!strcmp(it->capacity[k].name, "memory"))
                kp_ctrl_set(m->instance_type_memory, (const char *const[]){it->name},
                            (double)it->capacity[k].milli / 1000);
        }
        for (uint32_t k = 0; k < it->n_offerings; k++) {
            const kp_offering *o = &it->offerings[k];
            const char *labels[] = {it->name, o->capacity_type, o->zone};
            /* An offering listed twice (reservations) is available when any is. */
            kp_metric_series *s = kp_metric_with(m->offering_available, labels);
            kp_gauge_set(s, o->available || kp_metric_series_value(s) > 0 ? 1 : 0);
            kp_ctrl_set(m->offering_price, labels, o->price);
        }
    }
    for (size_t i = 0; i < 4; i++)
        kp_metric_sweep(families[i]);
}

/* ------------------------------------------------------------ NodePool cost */

typedef struct cost_pass {
    kp_ctrl *c;
    kp_strmap pools;   /* NodePool name -> double* hourly cost */
    kp_strmap failing; /* NodeClaims whose offering has no price now -> pool (strdup'd) */
} cost_pass;

static double offering_price(const kp_catalog *cat, const char *type, const char *zone, const char *ct, bool *found)
{
    for (size_t i = 0; cat && i < cat->count; i++) {
        if (strcmp(cat->types[i].name, type) != 0)
            continue;
        for (uint32_t k = 0; k < cat->types[i].n_offerings; k++) {
            const kp_offering *o = &cat->types[i].offerings[k];
            if (!strcmp(o->zone, zone) && !strcmp(o->capacity_type, ct)) {
                *found = true;
                return o->price;
            }
        }
    }
    *found = false;
    return 0;
}

/* The catalog the NodePool launches from (with its NodeOverlays' prices). */
static const kp_catalog *pool_catalog(kp_ctrl *c, const char *pool, kp_arena *a)
{
    const kp_catalog *cat = NULL;
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODEPOOL, pool);
    kp_nodepool np;
    if (!obj || kp_decode_nodepool(a, obj, &np) < 0 || c->cloud->ops->instance_types(c->cloud, &np, &cat) < 0)
        cat = NULL;
    cJSON_Delete(obj);
    return cat;
}

typedef struct claim_offering {
    char *name, *pool, *type, *zone, *ct;
} claim_offering;

static void collect_claim(void *ctx, const char *key, const cJSON *claim)
{
    kp_strmap *claims = ctx;
    const char *pool = kp_obj_label(claim, KP_LABEL_NODEPOOL);
    if (!pool)
        return;
    claim_offering *o = kp_xcalloc(1, sizeof(*o));
    const char *type = kp_obj_label(claim, KP_LABEL_INSTANCE_TYPE), *zone = kp_obj_label(claim, KP_LABEL_ZONE),
               *ct = kp_obj_label(claim, KP_LABEL_CAPACITY_TYPE);
    *o = (claim_offering){kp_xstrdup(key), kp_xstrdup(pool), type ? kp_xstrdup(type) : NULL,
                          zone ? kp_xstrdup(zone) : NULL, ct ? kp_xstrdup(ct) : NULL};
    kp_strmap_put(claims, key, o);
}

static void free_offering(void *v)
{
    claim_offering *o = v;
    free(o->name), free(o->pool), free(o->type), free(o->zone), free(o->ct);
    free(o);
}

static void cost_of(void *ctx, const char *key, void *value)
{
    cost_pass *p = ctx;
    claim_offering *o = value;
    (void)key;
    double *sum = kp_strmap_get(&p->pools, o->pool);
    if (!sum)
        kp_strmap_put(&p->pools, o->pool, sum = kp_xcalloc(1, sizeof(double)));
    if (!o->type || !o->zone || !o->ct)
        return; /* not launched yet: nothing to price (Karpenter skips it too) */
    kp_arena *a = kp_arena_new();
    bool found = false;
    *sum += offering_price(pool_catalog(p->c, o->pool, a), o->type, o->zone, o->ct, &found);
    kp_arena_free(a);
    if (!found)
        kp_strmap_put(&p->failing, o->name, kp_xstrdup(o->pool));
}

static void publish_cost_one(void *ctx, const char *pool, void *value)
{
    kp_ctrl_set(((kp_ctrl_metrics *)ctx)->nodepool_cost, (const char *const[]){pool}, *(double *)value);
}

/* A NodeClaim whose offering has no price counts once, when it starts failing. */
static void count_new_failure(void *ctx, const char *claim, void *pool)
{
    kp_ctrl_metrics *m = ctx;
    if (!kp_strmap_has(m->cost_failing, claim))
        kp_ctrl_count(m->cost_tracker_errors, (const char *const[]){pool});
}

static void publish_cost(kp_ctrl *c, kp_ctrl_metrics *m)
{
    kp_strmap claims = KP_STRMAP_INIT;
    if (!c->cloud || !c->informers[KP_CK_NODECLAIM])
        return;
    kp_informer_foreach(c->informers[KP_CK_NODECLAIM], collect_claim, &claims);
    cost_pass p = {c, KP_STRMAP_INIT, KP_STRMAP_INIT};
    kp_strmap_foreach(&claims, cost_of, &p);
    kp_metric_mark(m->nodepool_cost);
    kp_strmap_foreach(&p.pools, publish_cost_one, m);
    kp_metric_sweep(m->nodepool_cost);
    if (!m->cost_failing)
        m->cost_failing = kp_xcalloc(1, sizeof(kp_strmap));
    kp_strmap_foreach(&p.failing, count_new_failure, m);
    kp_strmap_clear(m->cost_failing, free);
    *m->cost_failing = p.failing;
    kp_strmap_clear(&p.pools, free);
    kp_strmap_clear(&claims, free_offering);
}

/* --------------------------------------------------------- cluster state */

typedef struct count_ctx {
    kp_ctrl *c;
    size_t in_flight;
} count_ctx;

/* A NodeClaim without a Node yet is a node of cluster state too. */
static void count_in_flight(void *ctx, const char *key, const cJSON *claim)
{
    count_ctx *n = ctx;
    (void)key;
    const char *pid = kp_obj_str(claim, "status.providerID");
    n->in_flight += !pid || !*pid;
}

static void publish_cluster(kp_ctrl *c, kp_ctrl_metrics *m, size_t nodes)
{
    count_ctx n = {c, 0};
    if (c->informers[KP_CK_NODECLAIM])
        kp_informer_foreach(c->informers[KP_CK_NODECLAIM], count_in_flight, &n);
    kp_ctrl_set(m->cluster_node_count, NULL, (double)(nodes + n.in_flight));
    bool synced = true;
    for (int k = 0; k < KP_CK_COUNT; k++)
        synced &= !c->informers[k] || kp_informer_synced(c->informers[k]);
    kp_reconcile_metrics_synced(m->reconciles, synced);
}

int kp_state_metrics_pass(kp_ctrl *c, void *state)
{
    (void)state;
    kp_ctrl_metrics *m = c->m;
    if (!m)
        return 0;
    int64_t now = c->clock->now(c->clock);
    kp_node_table *t = kp_node_table_build(c);
    kp_node_table_publish(t, m, now);
    kp_pod_metrics_pass(m->pods, c->informers[KP_CK_POD], kp_node_table_lookup, t, now);
    publish_cluster(c, m, kp_node_table_len(t));
    kp_node_table_free(t);
    kp_informer *const kinds[KP_STATUS_KINDS] = {c->informers[KP_CK_NODECLAIM], c->informers[KP_CK_NODE],
                                                 c->informers[KP_CK_NODEPOOL], c->informers[KP_CK_NODECLASS]};
    kp_status_metrics_pass(m, kinds, now);
    publish_catalog(c, m);
    publish_cost(c, m);
    return 0;
}

/* --------------------------------------------------------- the handlers */

static void pod_added(void *ctx, const cJSON *obj)
{
    kp_ctrl *c = ctx;
    kp_pod_metrics_update(c->m->pods, obj);
}

static void pod_updated(void *ctx, const cJSON *old, const cJSON *obj)
{
    (void)old;
    pod_added(ctx, obj);
}

static void pod_deleted(void *ctx, const cJSON *obj)
{
    kp_ctrl *c = ctx;
    kp_pod_metrics_delete(c->m->pods, obj);
}

static void obj_added(void *ctx, const cJSON *obj)
{
    kp_status_watch *w = ctx;
    kp_status_metrics_update(w->c->m, w->kind, NULL, obj);
}

static void obj_updated(void *ctx, const cJSON *old, const cJSON *obj)
{
    kp_status_watch *w = ctx;
    kp_status_metrics_update(w->c->m, w->kind, old, obj);
}

static void obj_deleted(void *ctx, const cJSON *obj)
{
    kp_status_watch *w = ctx;
    kp_status_metrics_delete(w->c->m, w->kind, obj, w->c->clock->now(w->c->clock));
}

int kp_state_metrics_watch(kp_ctrl *c)
{
    if (!c->m || !c->m->conditions)
        return 0;
    int err = 0;
    if (c->informers[KP_CK_POD])
        err = kp_informer_add_handler(c->informers[KP_CK_POD],
                                      &(kp_informer_handler){pod_added, pod_updated, pod_deleted, c});
    static const enum kp_ctrl_kind kinds[KP_STATUS_KINDS] = {KP_CK_NODECLAIM, KP_CK_NODE, KP_CK_NODEPOOL,
                                                             KP_CK_NODECLASS};
    for (int k = 0; k < KP_STATUS_KINDS && !err; k++) {
        if (!c->informers[kinds[k]])
            continue;
        kp_status_watch *w = &c->m->watch[k];
        *w = (kp_status_watch){c, (enum kp_status_kind)k};
        err = kp_informer_add_handler(c->informers[kinds[k]],
                                      &(kp_informer_handler){obj_added, obj_updated, obj_deleted, w});
    }
    return err;
}
