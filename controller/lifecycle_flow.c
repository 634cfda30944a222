/* NodeClaim lifecycle: initialization, liveness, deletion, and the
 * reconcile that runs the steps (see lifecycle.h). */
#include "controller/lifecycle_internal.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/metrics_ctrl.h"
#include "controller/objutil.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclaim.lifecycle"
#define LAUNCH_TIMEOUT_MS (5 * 60 * 1000)

/* --------------------------------------------------------- initialization */

/* Taints the kubelet and cloud controllers put on a node while it starts. */
static const char *const ephemeral_taints[] = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
                                               "node.cloudprovider.kubernetes.io/uninitialized"};

static const char *taint_left(const cJSON *node, const cJSON *claim)
{
    const cJSON *taints = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints");
    const cJSON *st, *t;
    cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "spec"),
                                                           "startupTaints"))
    {
        cJSON_ArrayForEach(t, taints) if (lc_taint_matches(t, kp_obj_str(st, "key"), kp_obj_str(st, "effect"))) return
            kp_obj_str(t, "key");
    }
    for (size_t i = 0; i < sizeof(ephemeral_taints) / sizeof(ephemeral_taints[0]); i++)
        cJSON_ArrayForEach(t, taints) if (lc_taint_matches(t, ephemeral_taints[i], NULL)) return ephemeral_taints[i];
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

static bool node_ready(const cJSON *node)
{
    const char *s = kp_obj_condition(node, "Ready");
    return s && strcmp(s, "True") == 0;
}

static int not_yet(claim_ctx *x, const char *reason, const char *msg)
{
    kp_obj_set_condition(x->obj, "Initialized", "Unknown", reason, msg, x->now);
    lc_requeue(x, 10000);
    return 0;
}

int lc_initialization(claim_ctx *x)
{
    if (lc_cond_true(x->obj, "Initialized") || !lc_cond_true(x->obj, "Registered"))
        return 0;
    char *key = kp_node_for_provider_id(x->c, kp_obj_str(x->obj, "status.providerID"), NULL);
    cJSON *node = key ? kp_ctrl_get(x->c, KP_CK_NODE, key) : NULL;
    free(key);
    char msg[300];
    int err = 0;
    const char *what;
    if (!node)
        err = not_yet(x, "NodeNotFound", "Node not registered with cluster");
    else if (!node_ready(node))
        err = not_yet(x, "NodeNotReady", "Node status is NotReady");
    else if ((what = taint_left(node, x->obj)) != NULL) {
        snprintf(msg, sizeof(msg), "Taint \"%s\" still exists", what);
        err = not_yet(x, "StartupTaintsExist", msg);
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
    KP_LOG(KP_LOG_INFO, LOGGER, "deleting nodeclaim that did not come up in time", "NodeClaim", x->nc.meta.name,
           "reason", reason);
    kp_ctrl_count(x->c->m ? x->c->m->nodeclaims_disrupted : NULL,
                  (const char *const[]){reason, x->pool, kp_ctrl_capacity_type(x->c, x->orig)});
    int err = kp_kube_delete(x->c->kube, KP_RES_NODECLAIM, NULL, x->nc.meta.name, NULL);
    return err == KP_ENOTFOUND ? 0 : err;
}

int lc_liveness(claim_ctx *x)
{
    if (lc_cond_true(x->obj, "Registered"))
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
