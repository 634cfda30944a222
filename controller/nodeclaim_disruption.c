/* Drifted and Consolidatable on NodeClaims (see nodeclaim_disruption.h). */
#include "controller/nodeclaim_disruption.h"
#include "api/decode.h"
#include "api/nodeclaim_rules.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclaim.disruption"
#define RECHECK_MS (5 * 60 * 1000)
#define TYPE_CHECK_AFTER_NS (3600 * KP_NS_PER_SEC)
#define TYPE_CHECK_EVERY_NS (30 * 60 * KP_NS_PER_SEC)
/* The cloud provider is asked at most this often per claim: claims change
 * often (every pod event), and each answer may cost a cloud API call. */
#define CLOUD_CHECK_EVERY_NS (2 * 60 * KP_NS_PER_SEC)

/* The last cloud-provider answer about a claim. */
typedef struct cloud_answer {
    int64_t at;
    const char *reason; /* static string from the provider, or NULL */
} cloud_answer;

struct kp_claim_disruption {
    pthread_mutex_t mu;
    kp_strmap type_checked; /* claim uid -> (int64_t *) when its instance type was last found */
    kp_strmap cloud;        /* claim uid -> (cloud_answer *) */
};

kp_claim_disruption *kp_claim_disruption_new(void)
{
    kp_claim_disruption *d = kp_xcalloc(1, sizeof(*d));
    pthread_mutex_init(&d->mu, NULL);
    return d;
}

kp_claim_disruption *kp_claim_disruption_free(kp_claim_disruption *d)
{
    if (!d)
        return NULL;
    kp_strmap_clear(&d->type_checked, free);
    kp_strmap_clear(&d->cloud, free);
    pthread_mutex_destroy(&d->mu);
    free(d);
    return NULL;
}

void kp_claim_disruption_forget(kp_claim_disruption *d, const char *claim_uid)
{
    if (!claim_uid)
        return;
    pthread_mutex_lock(&d->mu);
    free(kp_strmap_remove(&d->cloud, claim_uid));
    pthread_mutex_unlock(&d->mu);
}

typedef struct claim_pass {
    kp_ctrl *c;
    kp_claim_disruption *d;
    kp_arena *arena;
    const kp_nodepool *np;
    kp_nodeclaim nc;
    cJSON *want;
    int64_t now;
} claim_pass;

/* Whether the claim's type, zone and capacity type are still offered. */
static bool offering_left(const kp_catalog *cat, const kp_nodeclaim *nc)
{
    const char *type = kp_labels_get(&nc->meta.labels, KP_LABEL_INSTANCE_TYPE);
    const kp_instance_type *it = type ? kp_catalog_find(cat, type) : NULL; /* no label: not found, as Karpenter */
    const char *zone = kp_labels_get(&nc->meta.labels, KP_LABEL_ZONE);
    const char *ct = kp_labels_get(&nc->meta.labels, KP_LABEL_CAPACITY_TYPE);
    for (uint32_t i = 0; it && i < it->n_offerings; i++) {
        const kp_offering *o = &it->offerings[i];
        bool ct_ok = !ct || !strcmp(o->capacity_type, ct) ||
                     (!strcmp(ct, "reserved") && !strcmp(o->capacity_type, "on-demand")); /* demoted reservations */
        if ((!zone || !strcmp(o->zone, zone)) && ct_ok)
            return true;
    }
    return false;
}

/* Karpenter's InstanceTypeNotFound: at most every 30 minutes, from an hour after
 * creation, and only a successful check is remembered. */
static const char *type_drift(claim_pass *x)
{
    const char *uid = x->nc.meta.uid ? x->nc.meta.uid : x->nc.meta.name;
    if (!x->nc.meta.creation_timestamp.set || x->now - x->nc.meta.creation_timestamp.ns < TYPE_CHECK_AFTER_NS)
        return NULL;
    pthread_mutex_lock(&x->d->mu);
    int64_t *last = kp_strmap_get(&x->d->type_checked, uid);
    bool due = !last || x->now - *last >= TYPE_CHECK_EVERY_NS;
    pthread_mutex_unlock(&x->d->mu);
    const kp_catalog *cat = NULL;
    if (!due || x->c->cloud->ops->instance_types(x->c->cloud, x->np, &cat) < 0 || !cat)
        return NULL;
    if (!offering_left(cat, &x->nc))
        return "InstanceTypeNotFound";
    pthread_mutex_lock(&x->d->mu);
    if (!(last = kp_strmap_get(&x->d->type_checked, uid))) {
        last = kp_xcalloc(1, sizeof(*last));
        kp_strmap_put(&x->d->type_checked, uid, last);
    }
    *last = x->now;
    pthread_mutex_unlock(&x->d->mu);
    return NULL;
}

/* The provider's drift reasons are string constants, so a cached answer
 * outlives the pass that got it. */
static int cloud_drift(claim_pass *x, const char **reason)
{
    const char *uid = x->nc.meta.uid ? x->nc.meta.uid : x->nc.meta.name;
    pthread_mutex_lock(&x->d->mu);
    cloud_answer *a = kp_strmap_get(&x->d->cloud, uid);
    bool fresh = a && x->now - a->at < CLOUD_CHECK_EVERY_NS;
    *reason = fresh ? a->reason : NULL;
    pthread_mutex_unlock(&x->d->mu);
    if (fresh)
        return 0;
    int64_t start = x->c->clock->monotonic(x->c->clock);
    int err = x->c->cloud->ops->is_drifted(x->c->cloud, &x->nc, x->arena, reason);
    kp_ctrl_observe_cloud(x->c, LOGGER, "IsDrifted", start, err);
    if (err == KP_ENOTFOUND)
        err = 0, *reason = NULL; /* the instance is gone: garbage collection's business */
    if (err < 0)
        return err;
    pthread_mutex_lock(&x->d->mu);
    if (!(a = kp_strmap_get(&x->d->cloud, uid))) {
        a = kp_xcalloc(1, sizeof(*a));
        kp_strmap_put(&x->d->cloud, uid, a);
    }
    a->at = x->now, a->reason = *reason;
    pthread_mutex_unlock(&x->d->mu);
    return 0;
}

static int drifted(claim_pass *x, const char **reason)
{
    kp_symtab *symtab = kp_symtab_new();
    *reason = kp_nodeclaim_static_drift(x->np, &x->nc, symtab, x->arena);
    kp_symtab_free(symtab);
    if (!*reason)
        *reason = type_drift(x);
    return *reason ? 0 : cloud_drift(x, reason);
}

static int drift_condition(claim_pass *x)
{
    if (!kp_conditions_is_true(&x->nc.conditions, "Launched")) {
        kp_obj_clear_condition(x->want, "Drifted");
        return 0;
    }
    const char *reason = NULL;
    int err = drifted(x, &reason);
    if (err < 0)
        return err;
    if (!reason) {
        kp_obj_clear_condition(x->want, "Drifted");
        return 0;
    }
    if (!kp_conditions_is_true(&x->nc.conditions, "Drifted"))
        KP_LOG(KP_LOG_INFO, LOGGER, "marking drifted", "NodeClaim", x->nc.meta.name, "reason", reason);
    kp_obj_set_condition(x->want, "Drifted", "True", reason, reason, x->now);
    return 0;
}

static int64_t consolidatable_condition(claim_pass *x)
{
    int64_t ready_at = 0;
    enum kp_consolidatable state = kp_nodeclaim_consolidatable(
        x->np, &x->nc, x->nc.meta.creation_timestamp.ns, x->now, &ready_at);
    if (!kp_conditions_is_true(&x->nc.conditions, "Initialized") || state != KP_CONSOLIDATABLE_YES) {
        kp_obj_clear_condition(x->want, "Consolidatable");
        bool waiting = state == KP_CONSOLIDATABLE_NOT_YET && kp_conditions_is_true(&x->nc.conditions, "Initialized");
        return waiting ? (ready_at - x->now) / KP_NS_PER_MS + 1 : 0;
    }
    kp_obj_set_condition(x->want, "Consolidatable", "True", "Consolidatable", "", x->now);
    return 0;
}

static int run(claim_pass *x, const cJSON *orig, int64_t *requeue_ms)
{
    int err = drift_condition(x);
    int64_t wait = consolidatable_condition(x);
    *requeue_ms = wait > 0 && wait < RECHECK_MS ? wait : RECHECK_MS;
    int perr = kp_obj_patch(x->c->kube, KP_RES_NODECLAIM, orig, x->want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    if (perr == KP_ECONFLICT) {
        *requeue_ms = 100;
        perr = 0;
    }
    if (err < 0)
        return err;
    return perr < 0 && perr != KP_ENOTFOUND ? perr : 0;
}

int kp_claim_disruption_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    cJSON *orig = kp_ctrl_get(c, KP_CK_NODECLAIM, key);
    const char *pool = orig ? kp_obj_label(orig, KP_LABEL_NODEPOOL) : NULL;
    cJSON *pool_obj = pool ? kp_ctrl_get(c, KP_CK_NODEPOOL, pool) : NULL;
    int err = 0;
    if (orig && pool_obj && kp_ctrl_owns_claim(c, orig) && kp_ctrl_owns_pool(c, pool_obj) &&
        !kp_obj_str(orig, "metadata.deletionTimestamp")) {
        claim_pass x;
        memset(&x, 0, sizeof(x));
        x.c = c, x.d = state, x.arena = kp_arena_new(), x.want = cJSON_Duplicate(orig, 1);
        x.now = c->clock->now(c->clock);
        kp_nodepool *np = kp_arena_calloc(x.arena, 1, sizeof(*np));
        err = kp_decode_nodeclaim(x.arena, orig, &x.nc);
        if (!err)
            err = kp_decode_nodepool(x.arena, pool_obj, np);
        x.np = np;
        if (!err)
            err = run(&x, orig, requeue_ms);
        cJSON_Delete(x.want);
        kp_arena_free(x.arena);
    }
    cJSON_Delete(pool_obj);
    cJSON_Delete(orig);
    return err;
}
