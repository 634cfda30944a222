/* NodeClaim lifecycle: deletion and the reconcile entry point (see lifecycle.h). */
#include "controller/lifecycle_internal.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclaim.lifecycle"

/* ---------------------------------------------------------------- finalize */

/* With a terminationGracePeriod, the time by which the node must be gone is
 * recorded once, so every controller draining it agrees on the deadline. */
static int termination_deadline(claim_ctx *x)
{
    int64_t tgp_ns = x->nc.spec.has_termination_grace_period ? x->nc.spec.termination_grace_period.ns
                                                             : x->c->opts.default_tgp_ms * KP_NS_PER_MS;
    if (kp_obj_annotation(x->orig, KP_ANNOTATION_TERMINATION_TIMESTAMP) || tgp_ns <= 0 ||
        !x->nc.meta.deletion_timestamp.set)
        return 0;
    char when[32];
    kp_time_format_rfc3339(x->nc.meta.deletion_timestamp.ns + tgp_ns, when, sizeof(when));
    cJSON *want = cJSON_Duplicate(x->orig, 1);
    kp_obj_set_annotation(want, KP_ANNOTATION_TERMINATION_TIMESTAMP, when);
    int err = kp_obj_patch(x->c->kube, KP_RES_NODECLAIM, x->orig, want, 0);
    cJSON_Delete(want);
    if (err >= 0)
        KP_LOG(KP_LOG_INFO, LOGGER, "annotated nodeclaim", KP_ANNOTATION_TERMINATION_TIMESTAMP, when);
    return err < 0 && err != KP_ENOTFOUND ? err : 0;
}

/* Delete the claim's Nodes (each drains under its own finalizer); true
 * while any is left. */
static int delete_nodes(claim_ctx *x, bool *left)
{
    int count = 0;
    char *key = kp_node_for_provider_id(x->c, kp_obj_str(x->orig, "status.providerID"), &count);
    *left = key != NULL;
    if (!key)
        return 0;
    cJSON *node = kp_ctrl_get(x->c, KP_CK_NODE, key);
    int err = 0;
    if (node && !kp_obj_str(node, "metadata.deletionTimestamp"))
        err = kp_kube_delete(x->c->kube, KP_RES_NODE, NULL, key, NULL);
    cJSON_Delete(node);
    free(key);
    return err == KP_ENOTFOUND ? 0 : err;
}

static int terminate_instance(claim_ctx *x, bool *gone)
{
    *gone = true;
    if (!kp_obj_str(x->orig, "status.providerID"))
        return 0;
    int64_t start = x->c->clock->monotonic(x->c->clock);
    int err = x->c->cloud->ops->delete_instance(x->c->cloud, &x->nc);
    lc_observe_cloud(x->c, "Delete", start, err);
    if (err < 0 && err != KP_ENOTFOUND)
        return err;
    *gone = err == KP_ENOTFOUND;
    int64_t asked = kp_obj_condition_is_true(x->orig, "InstanceTerminating")
                        ? kp_obj_condition_since(x->orig, "InstanceTerminating")
                        : 0;
    if (*gone && asked && x->c->m)
        kp_ctrl_observe(x->c->m->nodeclaims_instance_termination_duration, (const char *const[]){x->pool},
                        (double)(x->now - asked) / 1e9);
    if (kp_obj_set_condition(x->obj, "InstanceTerminating", "True", "InstanceTerminating", "", x->now)) {
        int perr = kp_obj_patch(x->c->kube, KP_RES_NODECLAIM, x->orig, x->obj, KP_KUBE_STATUS | KP_OBJ_LOCK);
        if (perr == KP_ECONFLICT)
            *gone = false;
        else if (perr < 0 && perr != KP_ENOTFOUND)
            return perr;
    }
    return 0;
}

int lc_finalize(claim_ctx *x)
{
    if (!kp_obj_has_finalizer(x->orig, KP_FINALIZER_TERMINATION))
        return 0;
    int err = termination_deadline(x);
    bool left = false, gone = true;
    if (!err && kp_obj_condition_is_true(x->orig, "Registered"))
        err = delete_nodes(x, &left);
    if (err || left) {
        lc_requeue(x, 5000);
        return err;
    }
    if ((err = terminate_instance(x, &gone)) < 0 || !gone) {
        lc_requeue(x, 5000);
        return err;
    }
    cJSON *want = cJSON_Duplicate(x->orig, 1);
    kp_obj_remove_finalizer(want, KP_FINALIZER_TERMINATION);
    err = kp_obj_patch(x->c->kube, KP_RES_NODECLAIM, x->orig, want, KP_OBJ_LOCK);
    cJSON_Delete(want);
    if (err == KP_ECONFLICT) {
        lc_requeue(x, 100);
        return 0;
    }
    if (err < 0)
        return err == KP_ENOTFOUND ? 0 : err;
    lc_forget_launch(x->c, x->nc.meta.uid);
    KP_LOG(KP_LOG_INFO, LOGGER, "deleted nodeclaim", "NodeClaim", x->nc.meta.name);
    kp_ctrl_count(x->c->m ? x->c->m->nodeclaims_terminated : NULL,
                  (const char *const[]){x->pool, kp_ctrl_capacity_type(x->c, x->orig),
                                        kp_obj_label(x->orig, KP_LABEL_ZONE)});
    if (x->c->m)
        kp_ctrl_observe(x->c->m->nodeclaims_termination_duration, (const char *const[]){x->pool},
                        (double)(x->now - x->nc.meta.deletion_timestamp.ns) / 1e9);
    return 0;
}

/* --------------------------------------------------------------- reconcile */

/* The lifecycle counters, for each condition this reconcile turned True and
 * stored: a stale cache can run a step twice, but only one status write
 * under the resourceVersion lock flips the condition, so each transition
 * counts once. */
static void count_transitions(claim_ctx *x)
{
    kp_ctrl_metrics *m = x->c->m;
    if (!m)
        return;
    const char *pool[] = {x->pool};
    if (!kp_obj_condition_is_true(x->orig, "Launched") && kp_obj_condition_is_true(x->obj, "Launched"))
        kp_ctrl_count(m->nodeclaims_launched, pool);
    if (!kp_obj_condition_is_true(x->orig, "Registered") && kp_obj_condition_is_true(x->obj, "Registered")) {
        kp_ctrl_count(m->nodeclaims_registered, pool);
        kp_ctrl_count(m->nodes_created, (const char *const[]){x->pool, kp_obj_label(x->obj, KP_LABEL_ZONE)});
    }
    if (!kp_obj_condition_is_true(x->orig, "Initialized") && kp_obj_condition_is_true(x->obj, "Initialized"))
        kp_ctrl_count(m->nodeclaims_initialized, pool);
}

/* Write what the steps changed: labels first, then status. In that order no
 * reader sees Launched without the labels the launch set (drift would call
 * the claim RequirementsDrifted). Both writes are under the resourceVersion
 * lock (conditions replace each other): the first against the version read,
 * the second against the version the first made. */
static int persist(claim_ctx *x)
{
    cJSON *written = NULL, *base = NULL;
    int err = kp_obj_patch_out(x->c->kube, KP_RES_NODECLAIM, x->orig, x->obj, KP_OBJ_LOCK, &written);
    const char *rv = written ? kp_obj_str(written, "metadata.resourceVersion") : NULL;
    if (err >= 0 && rv) {
        base = cJSON_Duplicate(x->orig, 1);
        cJSON *meta = kp_obj_ensure(base, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
    }
    if (err >= 0)
        err = kp_obj_patch(x->c->kube, KP_RES_NODECLAIM, base ? base : x->orig, x->obj, KP_KUBE_STATUS | KP_OBJ_LOCK);
    if (err >= 0 && err != KP_KUBE_UNCHANGED)
        count_transitions(x); /* this write turned them True */
    cJSON_Delete(base);
    cJSON_Delete(written);
    if (err == KP_ECONFLICT) {
        lc_requeue(x, 100);
        return 0;
    }
    return err < 0 && err != KP_ENOTFOUND ? err : 0;
}

static void ready(claim_ctx *x)
{
    static const char *const steps[] = {"Launched", "Registered", "Initialized"};
    kp_obj_set_root_condition(x->obj, "Ready", steps, 3, x->now);
}

static int steps(claim_ctx *x)
{
    /* The finalizer first: nothing may be launched that deletion would not clean up. */
    cJSON *want = cJSON_Duplicate(x->orig, 1);
    int err = 0;
    if (kp_obj_add_finalizer(want, KP_FINALIZER_TERMINATION)) {
        err = kp_obj_patch(x->c->kube, KP_RES_NODECLAIM, x->orig, want, KP_OBJ_LOCK);
        lc_requeue(x, 10);
    }
    cJSON_Delete(want);
    if (err == KP_ECONFLICT || err == KP_ENOTFOUND || x->requeue_ms)
        return err < 0 && err != KP_ECONFLICT && err != KP_ENOTFOUND ? err : 0;
    if (err < 0)
        return err;
    int launched = lc_launch(x);
    if (launched < 0 || launched == 1) {
        ready(x);
        int perr = persist(x);
        lc_requeue(x, 10);
        return launched < 0 ? launched : perr;
    }
    if (!kp_obj_str(x->obj, "metadata.deletionTimestamp") && !kp_obj_condition_is_true(x->obj, "Launched") &&
        !kp_obj_str(x->obj, "status.providerID"))
        return 0; /* deleted for lack of capacity */
    int errs[3] = {lc_registration(x), lc_initialization(x), lc_liveness(x)};
    ready(x);
    int perr = persist(x);
    for (size_t i = 0; i < 3; i++)
        if (errs[i] < 0)
            return errs[i];
    return perr;
}

int kp_lifecycle_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state;
    cJSON *orig = kp_ctrl_get(c, KP_CK_NODECLAIM, key);
    if (!orig || !kp_ctrl_owns_claim(c, orig)) {
        cJSON_Delete(orig); /* another provider's claim is not ours to launch or finalize */
        return 0;
    }
    claim_ctx x;
    memset(&x, 0, sizeof(x));
    x.now = c->clock->now(c->clock);
    bool deleting = kp_obj_str(orig, "metadata.deletionTimestamp") != NULL;
    if (deleting)
        lc_recall_launch(c, orig, x.now); /* an instance not yet recorded is still terminated */
    x.c = c, x.orig = orig, x.obj = cJSON_Duplicate(orig, 1), x.arena = kp_arena_new();
    if (!deleting)
        lc_recall_launch(c, x.obj, x.now); /* written again by persist() */
    int err = kp_decode_nodeclaim(x.arena, orig, &x.nc);
    if (err == 0) {
        const char *pool = kp_obj_label(orig, KP_LABEL_NODEPOOL);
        x.pool = pool ? pool : "";
        err = x.nc.meta.deletion_timestamp.set ? lc_finalize(&x) : steps(&x);
    }
    *requeue_ms = x.requeue_ms;
    cJSON_Delete(x.obj);
    cJSON_Delete(orig);
    kp_arena_free(x.arena);
    return err;
}
