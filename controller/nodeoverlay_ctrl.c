/* The NodeOverlay controller (see nodeoverlay_ctrl.h). */
#include "controller/nodeoverlay_ctrl.h"

#include "api/decode.h"
#include "api/nodeoverlay.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "controller/provisioner.h"
#include "kube/ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeoverlay"
/* Condition messages stay readable (the CRD allows 32768). */
#define MAX_MESSAGE 1024

struct kp_overlay_state {
    pthread_mutex_t mu;
    kp_overlay_store *store;
};

kp_overlay_state *kp_overlay_state_new(void)
{
    kp_overlay_state *s = kp_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

kp_overlay_state *kp_overlay_state_free(kp_overlay_state *s)
{
    if (!s) return NULL;
    kp_overlay_store_unref(s->store);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
}

kp_overlay_store *kp_overlay_state_get(kp_overlay_state *s)
{
    pthread_mutex_lock(&s->mu);
    kp_overlay_store *store = kp_overlay_store_ref(s->store);
    pthread_mutex_unlock(&s->mu);
    return store;
}

static void publish(kp_overlay_state *s, kp_overlay_store *store)
{
    pthread_mutex_lock(&s->mu);
    kp_overlay_store *old = s->store;
    s->store = store;
    pthread_mutex_unlock(&s->mu);
    kp_overlay_store_unref(old);
}

kp_catalog *kp_nodeoverlay_claim_catalog(void *ctx, const kp_nodeclaim *claim, const kp_catalog *catalog)
{
    const char *pool = kp_labels_get(&claim->meta.labels, KP_LABEL_NODEPOOL);
    kp_overlay_store *store = pool ? kp_overlay_state_get(ctx) : NULL;
    kp_catalog *out = NULL;
    if (store && kp_overlay_store_apply(store, pool, catalog, &out) < 0) out = NULL;
    kp_overlay_store_unref(store);
    return out;
}

bool kp_nodeoverlay_update_matters(const cJSON *old_obj, const cJSON *new_obj)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old_obj, "metadata"),
                                                      "generation");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(new_obj, "metadata"),
                                                      "generation");
    return !old_obj || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || a->valuedouble != b->valuedouble;
}

/* ------------------------------------------------------------ gathering */

typedef struct gathered {
    kp_ctrl *c;
    kp_arena *arena;
    cJSON **objs; /* the overlays as cached, in step with `overlays` */
    const kp_nodeoverlay **overlays;
    size_t n, cap;
    kp_overlay_pool *pools;
    size_t n_pools, cap_pools;
} gathered;

/* An overlay that does not decode is still reported on, as failing validation. */
static void gather_overlay(void *ctx, const char *key, const cJSON *obj)
{
    gathered *g = ctx;
    kp_nodeoverlay *o = KP_ARENA_NEW(g->arena, kp_nodeoverlay, 1);
    if (kp_nodeoverlay_from_json(g->arena, obj, o) < 0) {
        o->meta.name = kp_arena_strdup(g->arena, key);
        o->invalid = kp_arena_strdup(g->arena, kp_error_last());
    }
    size_t cap = g->cap;
    g->objs = kp_xgrow(g->objs, &cap, g->n + 1, sizeof(*g->objs));
    g->overlays = kp_xgrow(g->overlays, &g->cap, g->n + 1, sizeof(*g->overlays));
    g->objs[g->n] = cJSON_Duplicate(obj, 1);
    g->overlays[g->n++] = o;
}

static void gather_pool(void *ctx, const char *key, const cJSON *obj)
{
    gathered *g = ctx;
    (void)key;
    kp_nodepool *np = KP_ARENA_NEW(g->arena, kp_nodepool, 1);
    if (!kp_ctrl_owns_pool(g->c, obj) || kp_decode_nodepool(g->arena, obj, np) < 0) return;
    g->pools = kp_xgrow(g->pools, &g->cap_pools, g->n_pools + 1, sizeof(*g->pools));
    g->pools[g->n_pools++] = (kp_overlay_pool){np, NULL};
}

/* Each NodePool's instance types from the provider; one it cannot give stays
 * unevaluated, and the first such error is returned (retried with back-off). */
static int pool_catalogs(gathered *g)
{
    int first = 0;
    for (size_t i = 0; i < g->n_pools; i++) {
        const kp_nodepool *np = g->pools[i].pool;
        int err = g->c->cloud->ops->instance_types(g->c->cloud, np, &g->pools[i].catalog);
        if (err < 0) {
            g->pools[i].catalog = NULL;
            if (!first) first = kp_error_wrap(err, "listing instance types for nodepool %s", np->meta.name);
        }
    }
    return first;
}

static void gathered_clear(gathered *g)
{
    for (size_t i = 0; i < g->n; i++)
        cJSON_Delete(g->objs[i]);
    free(g->objs);
    free(g->overlays);
    free(g->pools);
}

/* --------------------------------------------------------------- status */

static const cJSON *object_of(const gathered *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(g->overlays[i]->meta.name, name)) return g->objs[i];
    return NULL;
}

/* ValidationSucceeded and the Ready it makes (operatorpkg's root condition). */
static int write_status(kp_ctrl *c, const cJSON *obj, const kp_overlay_verdict *v, int64_t now)
{
    cJSON *want = cJSON_Duplicate(obj, 1);
    if (v->outcome == KP_OVERLAY_APPLIED) {
        kp_obj_set_condition(want, "ValidationSucceeded", "True", "ValidationSucceeded", "", now);
        kp_obj_set_condition(want, "Ready", "True", "Ready", "", now);
    } else {
        char message[MAX_MESSAGE];
        snprintf(message, sizeof(message), "%s", v->message);
        const char *reason =
            v->outcome == KP_OVERLAY_CONFLICT ? KP_OVERLAY_REASON_CONFLICT : KP_OVERLAY_REASON_INVALID;
        kp_obj_set_condition(want, "ValidationSucceeded", "False", reason, message, now);
        kp_obj_set_condition(want, "Ready", "False", "UnhealthyDependents", "ValidationSucceeded=False", now);
    }
    int err = kp_obj_patch(c->kube, KP_RES_NODEOVERLAY, obj, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    cJSON_Delete(want);
    return err == KP_KUBE_UNCHANGED ? 0 : err;
}

/* Karpenter evaluates again at once when an overlay changed or went while
 * its status was written (the evaluation is then stale), and publishes
 * nothing meanwhile. */
static int write_statuses(kp_ctrl *c, const gathered *g, const kp_overlay_store *store, bool *stale)
{
    const kp_overlay_verdict *v;
    size_t n = kp_overlay_store_verdicts(store, &v);
    int64_t now = c->clock->now(c->clock);
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *obj = object_of(g, v[i].name);
        int err = obj ? write_status(c, obj, &v[i], now) : 0;
        if (err == KP_ECONFLICT || err == KP_ENOTFOUND) *stale = true;
        else if (err < 0 && !first) first = kp_error_wrap(err, "nodeoverlay %s: writing its status", v[i].name);
        if (v[i].outcome != KP_OVERLAY_APPLIED)
            KP_LOG(KP_LOG_DEBUG, LOGGER, "nodeoverlay not applied", "NodeOverlay", v[i].name, "reason",
                   v[i].message);
    }
    return first;
}

/* ------------------------------------------------------------ reconcile */

int kp_nodeoverlay_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)key;
    gathered g = {c, kp_arena_new(), NULL, NULL, 0, 0, NULL, 0, 0};
    kp_informer_foreach(c->informers[KP_CK_NODEOVERLAY], gather_overlay, &g);
    kp_informer_foreach(c->informers[KP_CK_NODEPOOL], gather_pool, &g);
    int pools_err = pool_catalogs(&g);
    kp_overlay_store *store = NULL;
    int err = kp_overlay_evaluate(g.overlays, g.n, g.pools, g.n_pools, &store);
    bool stale = false;
    if (!err) err = write_statuses(c, &g, store, &stale);
    if (!err && stale) {
        *requeue_ms = 100;
    } else if (!err) {
        publish(state, kp_overlay_store_ref(store));
        if (c->provisioner) kp_provisioner_trigger(c->provisioner); /* NodePools may have become evaluated */
        *requeue_ms = KP_NODEOVERLAY_RESYNC_MS;
        err = pools_err;
    }
    kp_overlay_store_unref(store);
    gathered_clear(&g);
    kp_arena_free(g.arena);
    return err;
}
