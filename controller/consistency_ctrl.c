/* NodeClaim consistency checks (see consistency_ctrl.h). */
#include "controller/consistency_ctrl.h"
#include "api/quantity.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/ownership.h"
#include "kube/objutil.h"
#include "kube/ops.h"
#include "kube/strmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER  "nodeclaim.consistency"
#define SCAN_NS ((int64_t)KP_CONSISTENCY_SCAN_MS * KP_NS_PER_MS)
#define SWEEP_NS                                                                                   \
    (60LL * KP_NS_PER_SEC) /* expired scan times go once a minute, as Karpenter's cache */
#define MAX_ISSUES 16

struct kp_consistency {
    pthread_mutex_t mu;
    kp_strmap scanned; /* NodeClaim uid -> (int64_t *) when it was last checked */
    int64_t last_sweep;
};

kp_consistency *kp_consistency_new(void)
{
    kp_consistency *s = kp_xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

kp_consistency *kp_consistency_free(kp_consistency *s)
{
    if (!s) return NULL;
    kp_strmap_clear(&s->scanned, free);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
}

/* ------------------------------------------------------------- scan times */

static bool scan_expired(void *ctx, const char *key, void *value)
{
    (void)key;
    return *(const int64_t *)ctx - *(int64_t *)value >= SCAN_NS;
}

/* Under s->mu: forget the scans older than the period (deleted claims). */
static void sweep(kp_consistency *s, int64_t now)
{
    if (now - s->last_sweep < SWEEP_NS) return;
    s->last_sweep = now;
    kp_strmap_remove_if(&s->scanned, scan_expired, &now, free);
}

/* 0 and the scan recorded when `uid` is due a check now; otherwise the
 * nanoseconds until it is (Karpenter's lastScanned cache). */
static int64_t scan_due(kp_consistency *s, const char *uid, int64_t now)
{
    pthread_mutex_lock(&s->mu);
    sweep(s, now);
    int64_t *last = kp_strmap_get(&s->scanned, uid), wait = 0;
    if (last && now - *last < SCAN_NS) {
        wait = SCAN_NS - (now - *last);
    } else {
        if (!last) last = kp_xcalloc(1, sizeof(*last)), kp_strmap_put(&s->scanned, uid, last);
        *last = now;
    }
    pthread_mutex_unlock(&s->mu);
    return wait;
}

static void scan_forget(kp_consistency *s, const char *uid)
{
    pthread_mutex_lock(&s->mu);
    free(kp_strmap_remove(&s->scanned, uid));
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------- the checks */

static kp_quantity quantity_at(const cJSON *obj, const char *path, const char *resource)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(kp_obj_get(obj, path), resource);
    kp_quantity q = {0};
    if (!cJSON_IsString(v) || kp_quantity_parse(v->valuestring, &q) < 0) return (kp_quantity){0};
    return q;
}

static double approx(kp_quantity q)
{
    return (double)kp_quantity_milli128(q) / 1000.0;
}

/* Karpenter's NodeShape check: the Node has at least 90% of the capacity the
 * NodeClaim expected of every resource it requested. Fills `issues` (each
 * malloc'd) and returns how many. */
static size_t node_shape(const cJSON *node, const cJSON *claim, char **issues)
{
    if (!kp_obj_condition_is_true(claim, "Initialized")) return 0;
    size_t n = 0;
    const cJSON *req;
    cJSON_ArrayForEach(req, kp_obj_get(claim, "spec.resources.requests"))
    {
        kp_quantity requested = quantity_at(claim, "spec.resources.requests", req->string);
        kp_quantity expected = quantity_at(claim, "status.capacity", req->string);
        if (kp_quantity_is_zero(requested) || kp_quantity_is_zero(expected) || n == MAX_ISSUES)
            continue;
        kp_quantity found = quantity_at(node, "status.capacity", req->string);
        double pct = approx(found) / approx(expected);
        if (pct >= 0.90) continue;
        char e[KP_QUANTITY_STRLEN], f[KP_QUANTITY_STRLEN], msg[400];
        snprintf(msg, sizeof(msg), "expected %s of resource %s, but found %s (%0.1f%% of expected)",
                 kp_quantity_format(expected, e, sizeof(e)), req->string,
                 kp_quantity_format(found, f, sizeof(f)), pct * 100);
        issues[n++] = kp_xstrdup(msg);
    }
    return n;
}

/* Run the checks, post an event per issue, and set ConsistentStateFound in
 * `want` (False on any issue; True when it is not True yet). */
static void check(kp_ctrl *c, const cJSON *node, const cJSON *claim, cJSON *want)
{
    char *issues[MAX_ISSUES];
    size_t n = node_shape(node, claim, issues);
    for (size_t i = 0; i < n; i++) {
        KP_LOG(KP_LOG_INFO, LOGGER, "failed consistency check", "NodeClaim",
               kp_obj_str(claim, "metadata.name"), "issue", issues[i]);
        kp_eventq_post(c->events, KP_RES_NODECLAIM, claim, "Warning", "FailedConsistencyCheck",
                       issues[i]);
        free(issues[i]);
    }
    int64_t now = c->clock->now(c->clock);
    if (n)
        kp_obj_set_condition(want, "ConsistentStateFound", "False", "ConsistencyCheckFailed",
                             "Consistency Check Failed", now);
    else if (!kp_obj_condition_is_true(claim, "ConsistentStateFound"))
        kp_obj_set_condition(want, "ConsistentStateFound", "True", "ConsistentStateFound", "", now);
}

static int check_claim(kp_ctrl *c, kp_consistency *s, const cJSON *claim, int64_t *requeue_ms)
{
    const char *uid = kp_obj_str(claim, "metadata.uid");
    int64_t wait =
        scan_due(s, uid ? uid : kp_obj_str(claim, "metadata.name"), c->clock->now(c->clock));
    if (wait > 0) {
        *requeue_ms = wait / KP_NS_PER_MS + 1;
        return 0;
    }
    int count = 0;
    char *node_key = kp_node_for_provider_id(c, kp_obj_str(claim, "status.providerID"), &count);
    cJSON *node = node_key && count == 1 ? kp_ctrl_get(c, KP_CK_NODE, node_key) : NULL;
    free(node_key);
    if (!node) /* no Node yet, or several: nothing to compare (Karpenter's) */
        return 0;
    cJSON *want = cJSON_Duplicate(claim, 1);
    check(c, node, claim, want);
    int err = kp_obj_patch(c->kube, KP_RES_NODECLAIM, claim, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    cJSON_Delete(want);
    cJSON_Delete(node);
    *requeue_ms = KP_CONSISTENCY_SCAN_MS;
    if (err == KP_ECONFLICT) { /* check again at once, against the newer claim */
        scan_forget(s, uid ? uid : kp_obj_str(claim, "metadata.name"));
        *requeue_ms = 100;
        return 0;
    }
    return err < 0 && err != KP_ENOTFOUND ? err : 0;
}

int kp_consistency_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    cJSON *claim = kp_ctrl_get(c, KP_CK_NODECLAIM, key);
    const char *pid = claim ? kp_obj_str(claim, "status.providerID") : NULL;
    int err = 0;
    /* A claim being deleted is left alone: the checks assume it is not going. */
    if (claim && pid && *pid && !kp_obj_str(claim, "metadata.deletionTimestamp") &&
        kp_ctrl_owns_claim(c, claim))
        err = check_claim(c, state, claim, requeue_ms);
    cJSON_Delete(claim);
    return err;
}
