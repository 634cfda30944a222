/* NodePool registration health (see registration_health.h). */
#include "controller/registration_health.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "kube/objutil.h"
#include "kube/ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define COND "NodeRegistrationHealthy"

typedef struct history {
    bool ok[KP_REGHEALTH_WINDOW]; /* a ring: the oldest is overwritten */
    int len, next;
} history;

static void push(history *h, bool success)
{
    h->ok[h->next] = success;
    h->next = (h->next + 1) % KP_REGHEALTH_WINDOW;
    if (h->len < KP_REGHEALTH_WINDOW)
        h->len++;
}

/* Unhealthy when failures are at least half the window (not of the
 * outcomes seen: two failures out of two already are). */
static enum kp_reghealth judge(const history *h)
{
    if (h->len == 0)
        return KP_REGHEALTH_UNKNOWN;
    int failed = 0;
    for (int i = 0; i < h->len; i++)
        failed += !h->ok[i];
    return 2 * failed >= KP_REGHEALTH_WINDOW ? KP_REGHEALTH_UNHEALTHY : KP_REGHEALTH_HEALTHY;
}

/* The pool's history, created on first use; call with the lock held. */
static history *find(kp_ctrl *c, const char *uid)
{
    history *h = kp_strmap_get(&c->reghealth, uid);
    if (!h && (h = calloc(1, sizeof(*h))) != NULL)
        kp_strmap_put(&c->reghealth, uid, h);
    return h;
}

enum kp_reghealth kp_reghealth_status(kp_ctrl *c, const char *pool_uid)
{
    pthread_mutex_lock(&c->reghealth_mu);
    history *h = find(c, pool_uid ? pool_uid : "");
    enum kp_reghealth s = h ? judge(h) : KP_REGHEALTH_UNKNOWN;
    pthread_mutex_unlock(&c->reghealth_mu);
    return s;
}

enum kp_reghealth kp_reghealth_dry_run(kp_ctrl *c, const char *pool_uid, bool success)
{
    pthread_mutex_lock(&c->reghealth_mu);
    history *h = find(c, pool_uid ? pool_uid : "");
    history copy = h ? *h : (history){0};
    pthread_mutex_unlock(&c->reghealth_mu);
    push(&copy, success);
    return judge(&copy);
}

void kp_reghealth_update(kp_ctrl *c, const char *pool_uid, bool success)
{
    pthread_mutex_lock(&c->reghealth_mu);
    history *h = find(c, pool_uid ? pool_uid : "");
    if (h)
        push(h, success);
    pthread_mutex_unlock(&c->reghealth_mu);
}

void kp_reghealth_set(kp_ctrl *c, const char *pool_uid, enum kp_reghealth status)
{
    pthread_mutex_lock(&c->reghealth_mu);
    history *h = find(c, pool_uid ? pool_uid : "");
    if (h) {
        memset(h, 0, sizeof(*h));
        if (status == KP_REGHEALTH_HEALTHY)
            push(h, true);
        for (int i = 0; status == KP_REGHEALTH_UNHEALTHY && i < KP_REGHEALTH_WINDOW / 2; i++)
            push(h, false);
    }
    pthread_mutex_unlock(&c->reghealth_mu);
}

void kp_reghealth_clear(kp_ctrl *c)
{
    kp_strmap_clear(&c->reghealth, free);
}

/* ------------------------------------------------------------- conditions */

static double number(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The claim is the pool's only if the pool owns it (by UID): a pool deleted
 * and made again under the same name starts afresh. */
static bool owned_by(const cJSON *claim, const char *pool_uid)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "metadata"),
                                                           "ownerReferences"))
    {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind"));
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "uid"));
        if (kind && uid && !strcmp(kind, "NodePool") && !strcmp(uid, pool_uid))
            return true;
    }
    return false;
}

int kp_reghealth_record(kp_ctrl *c, const cJSON *claim, bool success, int64_t now)
{
    const char *name = kp_obj_label(claim, KP_LABEL_NODEPOOL);
    cJSON *pool = name && *name ? kp_ctrl_get(c, KP_CK_NODEPOOL, name) : NULL;
    const char *uid = pool ? kp_obj_str(pool, "metadata.uid") : NULL;
    if (!uid || !owned_by(claim, uid)) {
        cJSON_Delete(pool);
        return 0;
    }
    const char *have = kp_obj_condition(pool, COND);
    cJSON *want = cJSON_Duplicate(pool, 1);
    enum kp_reghealth next = kp_reghealth_dry_run(c, uid, success);
    if (success && next == KP_REGHEALTH_HEALTHY)
        kp_obj_set_condition(want, COND, "True", COND, "", now);
    else if (!success && next == KP_REGHEALTH_UNHEALTHY && !(have && !strcmp(have, "False"))) {
        const cJSON *launched = kp_obj_condition_get(claim, "Launched");
        if (kp_obj_condition_is_true(claim, "Launched"))
            kp_obj_set_condition(want, COND, "False", "RegistrationFailed", "Failed to register node", now);
        else
            kp_obj_set_condition(want, COND, "False",
                                 launched ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(launched, "reason")) : "",
                                 launched ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(launched, "message")) : "",
                                 now);
    }
    int err = kp_obj_patch(c->kube, KP_RES_NODEPOOL, pool, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    if (err >= 0)
        kp_reghealth_update(c, uid, success); /* counted once the condition says it */
    cJSON_Delete(want);
    cJSON_Delete(pool);
    return err == KP_ENOTFOUND ? 0 : err < 0 ? err : 0;
}

void kp_reghealth_reconcile_pool(kp_ctrl *c, cJSON *want, const cJSON *node_class, int64_t now)
{
    const char *uid = kp_obj_str(want, "metadata.uid");
    if (!uid)
        return;
    const char *have = kp_obj_condition(want, COND);
    if (kp_reghealth_status(c, uid) == KP_REGHEALTH_UNKNOWN && have) {
        if (!strcmp(have, "True")) /* after a restart: the condition is the history */
            kp_reghealth_set(c, uid, KP_REGHEALTH_HEALTHY);
        else if (!strcmp(have, "False"))
            kp_reghealth_set(c, uid, KP_REGHEALTH_UNHEALTHY);
    }
    double class_gen = node_class ? number(node_class, "metadata", "generation") : -1;
    double seen_class_gen = number(want, "status", "nodeClassObservedGeneration");
    const cJSON *cond = kp_obj_condition_get(want, COND);
    const cJSON *og = cond ? cJSON_GetObjectItemCaseSensitive(cond, "observedGeneration") : NULL;
    double gen = number(want, "metadata", "generation");
    if (!cond || (class_gen >= 0 && class_gen != seen_class_gen) ||
        (gen >= 0 && (!cJSON_IsNumber(og) || og->valuedouble != gen))) {
        kp_obj_set_condition(want, COND, "Unknown", "AwaitingReconciliation", "object is awaiting reconciliation", now);
        kp_reghealth_set(c, uid, KP_REGHEALTH_UNKNOWN);
    }
    if (class_gen >= 0) {
        cJSON *status = kp_obj_ensure(want, "status");
        cJSON_DeleteItemFromObjectCaseSensitive(status, "nodeClassObservedGeneration");
        cJSON_AddNumberToObject(status, "nodeClassObservedGeneration", class_gen);
    }
}
