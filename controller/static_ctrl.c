/* Static NodePools: replicas kept, surplus removed (see static_ctrl.h). */
#include "controller/static_ctrl.h"
#include "api/nodepool_hash.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "controller/provisioner.h"
#include "controller/view.h"
#include "disruption/disruption.h"
#include "kube/ops.h"
#include "provisioning/nodeclaim_object.h"
#include "scheduling/static_pools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "static"
#define REQUEUE_MS 60000       /* Karpenter looks again every minute */
#define LIMIT_REQUEUE_MS 30000 /* ... and after 30 s when limits.nodes binds */
#define CACHE_WAIT_TRIES 100   /* x 50 ms: how long a change waits to show in the cache */

bool kp_static_pool_json(const cJSON *pool)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pool, "spec");
    return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(spec, "replicas"));
}

void kp_static_warn_gate_off(kp_ctrl *c, const cJSON *pool)
{
    if (c->opts.static_capacity || !kp_static_pool_json(pool) || !kp_ctrl_owns_pool(c, pool))
        return;
    KP_LOG(KP_LOG_WARN, LOGGER, "static NodePool ignored: the StaticCapacity feature gate is off, so nothing "
           "launches or removes its replicas (FEATURE_GATES=StaticCapacity=true)", "NodePool",
           kp_obj_str(pool, "metadata.name"));
}

/* The template of NodePool `name` in the snapshot, or -1 (not Ready, being
 * deleted, or not ours). */
static int32_t template_of(const kp_snapshot *snap, const char *name)
{
    for (uint32_t t = 0; t < snap->n_templates; t++)
        if (!strcmp(snap->templates[t].name, name))
            return (int32_t)t;
    return -1;
}

/* Wait (briefly) until the cache shows `names` present (or, with `deleting`,
 * deleting or gone), so the next reconcile counts what this one did. */
static void await_cache(kp_ctrl *c, char **names, uint32_t n, bool deleting)
{
    for (int tries = 0; tries < CACHE_WAIT_TRIES && !kp_ctrl_stopping(c); tries++) {
        bool all = true;
        for (uint32_t i = 0; i < n && all; i++) {
            if (!names[i])
                continue;
            cJSON *o = kp_ctrl_get(c, KP_CK_NODECLAIM, names[i]);
            all = deleting ? !o || kp_obj_str(o, "metadata.deletionTimestamp") : o != NULL;
            cJSON_Delete(o);
        }
        if (all)
            return;
        kp_kube_cancel_sleep(c->stop, 50);
    }
}

static int create_one(kp_ctrl *c, const kp_snapshot *snap, const kp_plan *plan, char **name)
{
    const kp_template *tp = &snap->templates[plan->claims[0].template_index];
    char hash[KP_NODEPOOL_HASH_LEN];
    cJSON *obj = kp_nodeclaim_object(plan, snap, 0, kp_ctrl_pool_hash(c, tp->src, hash, sizeof(hash)));
    cJSON *created = NULL;
    int err = obj ? kp_kube_create(c->kube, KP_RES_NODECLAIM, NULL, obj, &created) : KP_EINVALID;
    cJSON_Delete(obj);
    if (err < 0)
        return err;
    *name = kp_xstrdup(kp_kube_meta(created, "name") ? kp_kube_meta(created, "name") : "");
    KP_LOG(KP_LOG_INFO, LOGGER, "created nodeclaim", "NodeClaim", *name, "NodePool", tp->name);
    kp_ctrl_count(c->m ? c->m->nodeclaims_created : NULL, (const char *const[]){"provisioned", tp->name, "false"});
    cJSON_Delete(created);
    return 0;
}

/* Create `count` NodeClaims of static template `t`. */
static int scale_up(kp_ctrl *c, const kp_snapshot *snap, uint32_t t, uint32_t count)
{
    kp_plan plan = {0};
    plan.arena = kp_arena_new();
    kp_plan_claim claim;
    int err = kp_static_claim(snap, t, plan.arena, &claim);
    plan.claims = &claim, plan.n_claims = err < 0 ? 0 : 1;
    char **names = kp_xcalloc(count, sizeof(char *));
    uint32_t made = 0;
    for (; !err && made < count && !kp_ctrl_stopping(c); made++)
        err = create_one(c, snap, &plan, &names[made]);
    if (made)
        await_cache(c, names, made, false);
    for (uint32_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    kp_arena_free(plan.arena);
    return err;
}

/* Delete the NodeClaims of `nodes`. */
static int scale_down(kp_ctrl *c, const kp_snapshot *snap, const uint32_t *nodes, uint32_t n)
{
    char **names = kp_xcalloc(n ? n : 1, sizeof(char *));
    int first_err = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *claim = snap->nodes[nodes[i]].nodeclaim;
        if (!claim)
            continue;
        int err = kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, claim, NULL);
        if (err < 0 && err != KP_ENOTFOUND) {
            if (!first_err)
                first_err = err;
            continue;
        }
        names[i] = kp_xstrdup(claim);
        KP_LOG(KP_LOG_DEBUG, LOGGER, "deleting nodeclaim", "NodeClaim", claim);
    }
    await_cache(c, names, n, true);
    for (uint32_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return first_err;
}

static void log_counts(const char *message, const char *pool, const kp_static_count *n, int64_t replicas,
                       const char *what, uint32_t count)
{
    char cur[24], want[24], k[24];
    snprintf(cur, sizeof(cur), "%u", n->active);
    snprintf(want, sizeof(want), "%lld", (long long)replicas);
    snprintf(k, sizeof(k), "%u", count);
    KP_LOG(KP_LOG_INFO, LOGGER, message, "NodePool", pool, "current", cur, "desired", want, what, k);
}

/* Bring template `t` to its replicas: up (within limits.nodes) or down. */
static int reconcile_template(kp_ctrl *c, kp_snapshot *snap, uint32_t t, int64_t *requeue_ms)
{
    const kp_template *tp = &snap->templates[t];
    kp_static_count n;
    kp_static_count_nodes(snap, t, NULL, &n);
    if ((int64_t)n.active + (int64_t)n.pending < tp->replicas) {
        uint32_t missing = kp_static_missing(snap, t);
        if (missing == 0) {
            KP_LOG(KP_LOG_INFO, LOGGER, "nodepool node limit reached", "NodePool", tp->name);
            *requeue_ms = LIMIT_REQUEUE_MS;
            return 0;
        }
        log_counts("provisioning nodeclaims to satisfy replica count", tp->name, &n, tp->replicas,
                   "provision-count", missing);
        return scale_up(c, snap, t, missing);
    }
    uint32_t excess = kp_static_excess(snap, t);
    if (excess == 0)
        return 0;
    log_counts("deprovisioning nodeclaims to satisfy replica count", tp->name, &n, tp->replicas,
               "deprovision-count", excess);
    uint32_t *nodes = kp_xcalloc(excess, sizeof(uint32_t));
    uint32_t k = kp_static_scale_down(snap, t, excess, c->clock->now(c->clock), nodes);
    int err = scale_down(c, snap, nodes, k);
    free(nodes);
    return err;
}

int kp_static_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state;
    cJSON *pool = kp_ctrl_get(c, KP_CK_NODEPOOL, key);
    bool mine = pool && kp_static_pool_json(pool) && !kp_obj_str(pool, "metadata.deletionTimestamp") &&
                kp_ctrl_owns_pool(c, pool);
    cJSON_Delete(pool);
    if (!mine || !c->opts.static_capacity)
        return 0;
    kp_ctrl_view *view = NULL;
    int err = kp_ctrl_view_build_cloud(c, &view);
    if (err < 0)
        return err;
    *requeue_ms = REQUEUE_MS;
    int32_t t = template_of(view->snap, key);
    if (t >= 0) /* else not Ready yet: its update brings it back */
        err = reconcile_template(c, view->snap, (uint32_t)t, requeue_ms);
    kp_ctrl_view_free(view);
    return err;
}
