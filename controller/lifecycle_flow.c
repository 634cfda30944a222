/* NodeClaim lifecycle: initialization, liveness, deletion, and the
 * reconcile that runs the steps (see lifecycle.h). */
#include "controller/lifecycle_internal.h"
#include "api/decode.h"
#include "api/taints.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/registration_health.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclaim.lifecycle"
#define LAUNCH_TIMEOUT_MS (5 * 60 * 1000)

/* --------------------------------------------------------- initialization */

/* A node's taint as the shared taint rules take it; false when malformed. */
static bool taint_of(const cJSON *t, kp_taint *out)
{
    const char *value = kp_obj_str(t, "value");
    int effect = kp_taint_effect_parse(kp_obj_str(t, "effect") ? kp_obj_str(t, "effect") : "");
    out->key = kp_obj_str(t, "key");
    out->value = value ? value : "";
    out->effect = effect < 0 ? KP_EFFECT_ANY : (enum kp_taint_effect)effect;
    return out->key != NULL && effect >= 0;
}

/* Karpenter's StartupTaintsRemoved, then KnownEphemeralTaintsRemoved: the
 * reason of the first taint still on the node (formatted into `buf`), or
 * NULL. karpenter.sh/unregistered is among the ephemeral ones, so a cached
 * node from before registration's write (startup taints not on it yet) does
 * not pass for initialized. */
static const char *taint_left(const cJSON *node, const cJSON *claim, char *buf, size_t size)
{
    const cJSON *taints = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints");
    const cJSON *st, *t;
    kp_taint want, have;
    cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "spec"),
                                                           "startupTaints"))
    {
        if (!taint_of(st, &want))
            continue;
        cJSON_ArrayForEach(t, taints) if (taint_of(t, &have) && kp_taint_matches(&want, &have))
        {
            kp_taint_format(&have, buf, size);
            return "StartupTaint";
        }
    }
    cJSON_ArrayForEach(t, taints) if (taint_of(t, &have) && kp_taint_is_known_ephemeral(&have))
    {
        kp_taint_format(&have, buf, size);
        return "KnownEphemeralTaint";
    }
    return NULL;
}

/* A resource the claim asked for that the node does not offer yet (a device
 * plugin not registered). */
static const char *resource_missing(const cJSON *node, const kp_nodeclaim *nc)
{
    const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "status"), "allocatable");
    for (size_t i = 0; i < nc->spec.resource_requests.count; i++) {
        const kp_resource *r = &nc->spec.resource_requests.items[i];
        if (kp_quantity_is_zero(r->quantity))
            continue;
        const cJSON *have = cJSON_GetObjectItemCaseSensitive(alloc, r->name);
        kp_quantity q;
        if (!cJSON_IsString(have) || kp_quantity_parse(have->valuestring, &q) < 0 || kp_quantity_is_zero(q))
            return r->name;
    }
    return NULL;
}

static int not_yet(claim_ctx *x, const char *reason, const char *msg)
{
    kp_obj_set_condition(x->obj, "Initialized", "Unknown", reason, msg, x->now);
    lc_requeue(x, 10000);
    return 0;
}

int lc_initialization(claim_ctx *x)
{
    if (kp_obj_condition_is_true(x->obj, "Initialized") || !kp_obj_condition_is_true(x->obj, "Registered"))
        return 0;
    char *key = kp_node_for_provider_id(x->c, kp_obj_str(x->obj, "status.providerID"), NULL);
    cJSON *node = key ? kp_ctrl_get(x->c, KP_CK_NODE, key) : NULL;
    free(key);
    char msg[300], taint[200];
    int err = 0;
    const char *what;
    if (!node)
        err = not_yet(x, "NodeNotFound", "Node not registered with cluster");
    else if (!kp_node_is_ready(node))
        err = not_yet(x, "NodeNotReady", "Node status is NotReady");
    else if ((what = taint_left(node, x->obj, taint, sizeof(taint))) != NULL) {
        snprintf(msg, sizeof(msg), "%s \"%s\" still exists", what, taint);
        err = not_yet(x, strcmp(what, "StartupTaint") == 0 ? "StartupTaintsExist" : "KnownEphemeralTaintsExist", msg);
    } else if ((what = resource_missing(node, &x->nc)) != NULL) {
        snprintf(msg, sizeof(msg), "Resource \"%s\" was requested but not registered", what);
        err = not_yet(x, "ResourceNotRegistered", msg);
    } else {
        cJSON *want = cJSON_Duplicate(node, 1);
        kp_obj_set_label(want, KP_LABEL_INITIALIZED, "true");
        err = kp_obj_patch(x->c->kube, KP_RES_NODE, node, want, 0);
        cJSON_Delete(want);
        if (err >= 0) {
            err = 0;
            KP_LOG(KP_LOG_INFO, LOGGER, "initialized nodeclaim", "NodeClaim", x->nc.meta.name);
            kp_obj_set_condition(x->obj, "Initialized", "True", "Initialized", "", x->now);
        }
    }
    cJSON_Delete(node);
    return err;
}

/* --------------------------------------------------------------- liveness */

static int delete_for_timeout(claim_ctx *x, const char *reason)
{
    /* The pool hears of the failure first; a lost race retries before the claim goes. */
    int herr = kp_reghealth_record(x->c, x->obj, false, x->now);
    if (herr == KP_ECONFLICT) {
        lc_requeue(x, 100);
        return 0;
    }
    KP_LOG(KP_LOG_INFO, LOGGER, "deleting nodeclaim that did not come up in time", "NodeClaim", x->nc.meta.name,
           "reason", reason);
    kp_ctrl_count(x->c->m ? x->c->m->nodeclaims_disrupted : NULL,
                  (const char *const[]){reason, x->pool, kp_ctrl_capacity_type(x->c, x->orig)});
    int err = kp_kube_delete(x->c->kube, KP_RES_NODECLAIM, NULL, x->nc.meta.name, NULL);
    return err == KP_ENOTFOUND ? 0 : err;
}

int lc_liveness(claim_ctx *x)
{
    if (kp_obj_condition_is_true(x->obj, "Registered"))
        return 0;
    const char *launched = kp_obj_condition(x->obj, "Launched");
    if (!launched) {
        lc_requeue(x, 1000);
        return 0;
    }
    if (strcmp(launched, "True") != 0) {
        int64_t left = LAUNCH_TIMEOUT_MS - (x->now - kp_obj_condition_since(x->obj, "Launched")) / KP_NS_PER_MS;
        if (left > 0) {
            lc_requeue(x, left);
            return 0;
        }
        return delete_for_timeout(x, "launch_timeout");
    }
    if (!kp_obj_condition(x->obj, "Registered")) {
        lc_requeue(x, 1000);
        return 0;
    }
    int64_t ttl = x->c->opts.registration_ttl_ms;
    int64_t left = ttl - (x->now - kp_obj_condition_since(x->obj, "Registered")) / KP_NS_PER_MS;
    if (left > 0) {
        lc_requeue(x, left);
        return 0;
    }
    return delete_for_timeout(x, "registration_timeout");
}
