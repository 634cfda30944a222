/* Node termination: taint, drain, terminate, let go (see termination.h). */
#include "controller/termination.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "controller/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "node.termination"
#define STUCK_TERMINATING_NS (60 * KP_NS_PER_SEC)

typedef struct term_ctx {
    kp_ctrl *c;
    const cJSON *node;
    const char *name;
    char *claim_key;  /* the node's NodeClaim, or NULL */
    cJSON *claim;     /* its cached object */
    int64_t now;
    int64_t deadline; /* terminationGracePeriod expiry, 0 when none */
    kp_arena *arena;
} term_ctx;

/* ------------------------------------------------------------ the claim */

static int delete_claim(term_ctx *t)
{
    if (!t->claim || kp_obj_str(t->claim, "metadata.deletionTimestamp"))
        return 0;
    int err = kp_kube_delete(t->c->kube, KP_RES_NODECLAIM, NULL, t->claim_key, NULL);
    return err == KP_ENOTFOUND ? 0 : err;
}

static void read_deadline(term_ctx *t)
{
    const char *when = t->claim ? kp_obj_annotation(t->claim, KP_ANNOTATION_TERMINATION_TIME) : NULL;
    if (!when || kp_time_parse_rfc3339(when, &t->deadline) < 0)
        t->deadline = 0;
}

/* --------------------------------------------------------------- taint */

static bool has_disrupted_taint(const cJSON *node)
{
    const cJSON *taint;
    cJSON_ArrayForEach(taint, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"),
                                                              "taints"))
    {
        const char *k = kp_obj_str(taint, "key"), *e = kp_obj_str(taint, "effect");
        if (k && e && !strcmp(k, KP_TAINT_DISRUPTED) && !strcmp(e, "NoSchedule"))
            return true;
    }
    return false;
}

/* 0 when tainted, 1 when the write lost a race (try again), or KP_E*. */
static int taint(term_ctx *t)
{
    if (has_disrupted_taint(t->node) &&
        kp_obj_label(t->node, "node.kubernetes.io/exclude-from-external-load-balancers"))
        return 0;
    cJSON *want = cJSON_Duplicate(t->node, 1);
    if (!has_disrupted_taint(want)) {
        cJSON *spec = kp_obj_ensure(want, "spec");
        cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "taints");
        if (!cJSON_IsArray(list)) {
            cJSON_DeleteItemFromObjectCaseSensitive(spec, "taints");
            list = cJSON_AddArrayToObject(spec, "taints");
        }
        cJSON *taint = cJSON_CreateObject();
        cJSON_AddStringToObject(taint, "key", KP_TAINT_DISRUPTED);
        cJSON_AddStringToObject(taint, "effect", "NoSchedule");
        cJSON_AddItemToArray(list, taint);
    }
    kp_obj_set_label(want, "node.kubernetes.io/exclude-from-external-load-balancers", "karpenter");
    int err = kp_obj_patch(t->c->kube, KP_RES_NODE, t->node, want, KP_OBJ_LOCK);
    cJSON_Delete(want);
    if (err >= 0)
        KP_LOG(KP_LOG_INFO, LOGGER, "tainted node", "Node", t->name, "taint.Key", KP_TAINT_DISRUPTED,
               "taint.Effect", "NoSchedule");
    return err == KP_ECONFLICT ? 1 : err < 0 ? err : 0;
}

/* --------------------------------------------------------------- drain */

typedef struct pod_list {
    term_ctx *t;
    kp_pod **items;
    size_t n, cap;
} pod_list;

static void collect_pod(void *ctx, const char *key, const cJSON *obj)
{
    pod_list *l = ctx;
    kp_pod *p = kp_arena_calloc(l->t->arena, 1, sizeof(*p));
    (void)key;
    if (kp_decode_pod(l->t->arena, obj, p) < 0)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        kp_pod **grown = kp_arena_calloc(l->t->arena, l->cap, sizeof(kp_pod *));
        if (l->n)
            memcpy(grown, l->items, l->n * sizeof(kp_pod *));
        l->items = grown;
    }
    l->items[l->n++] = p;
}

static bool tolerates_disrupted(const kp_pod *p)
{
    kp_taint taint = {KP_TAINT_DISRUPTED, "", KP_EFFECT_NO_SCHEDULE};
    return kp_taints_tolerated(&taint, 1, p->tolerations, p->n_tolerations);
}

/* Karpenter's IsWaitingEviction: the pods a drain waits for. */
static bool waiting(const term_ctx *t, const kp_pod *p)
{
    if (p->phase == KP_POD_PHASE_SUCCEEDED || p->phase == KP_POD_PHASE_FAILED)
        return false;
    if (tolerates_disrupted(p) || p->owned_by_node || p->is_mirror)
        return false;
    return !(p->meta.deletion_timestamp.set && t->now - p->meta.deletion_timestamp.ns > STUCK_TERMINATING_NS);
}

static int group_of(const kp_pod *p)
{
    const char *pc = p->priority_class_name ? p->priority_class_name : "";
    bool critical = !strcmp(pc, "system-cluster-critical") || !strcmp(pc, "system-node-critical");
    return (critical ? 2 : 0) + (p->owned_by_daemonset ? 1 : 0);
}

static bool do_not_disrupt(const kp_pod *p)
{
    const char *v = kp_labels_get(&p->meta.annotations, KP_ANNOTATION_DO_NOT_DISRUPT);
    return v && !strcmp(v, "true");
}

static void evict(term_ctx *t, const kp_pod *p)
{
    kp_ctrl *c = t->c;
    int64_t grace = p->has_termination_grace_period ? p->termination_grace_period_seconds : 30;
    int err;
    const char *outcome;
    if (t->deadline && t->now + grace * KP_NS_PER_SEC > t->deadline) {
        /* Past the node's deadline the pod is deleted, with what time is left. */
        kp_kube_delete_opts o = KP_KUBE_DELETE_OPTS_INIT;
        int64_t left = (t->deadline - t->now) / KP_NS_PER_SEC;
        o.grace_period_seconds = left > 0 ? (long)left : 0;
        err = kp_kube_delete(c->kube, KP_RES_POD, p->meta.namespace, p->meta.name, &o);
        outcome = "deleted";
    } else {
        if (do_not_disrupt(p))
            return; /* waited for, never evicted */
        err = kp_kube_evict(c->kube, p->meta.namespace, p->meta.name, NULL);
        outcome = err == KP_ERETRY ? "blocked" : "evicted";
    }
    if (err < 0 && err != KP_ENOTFOUND && err != KP_ERETRY)
        kp_ctrl_log_error(LOGGER, "evicting pod failed", p->meta.name, err), outcome = "error";
    if (err == KP_ERETRY)
        KP_LOG(KP_LOG_DEBUG, LOGGER, "eviction refused for now", "Pod", p->meta.name, "error", kp_error_last());
    kp_ctrl_count(c->m ? c->m->evictions : NULL, (const char *const[]){outcome});
}

/* Evict the first non-empty group; true while any pod is still waited for. */
static bool drain(term_ctx *t)
{
    pod_list l = {t, NULL, 0, 0};
    kp_informer_foreach_indexed(t->c->informers[KP_CK_POD], KP_INDEX_POD_NODE, t->name, collect_pod, &l);
    size_t n_waiting = 0;
    int first_group = 4;
    for (size_t i = 0; i < l.n; i++) {
        if (!waiting(t, l.items[i]))
            continue;
        n_waiting++;
        int g = group_of(l.items[i]);
        first_group = g < first_group ? g : first_group;
    }
    for (size_t i = 0; i < l.n; i++) {
        const kp_pod *p = l.items[i];
        bool past_deadline = t->deadline && t->now >= t->deadline;
        if (waiting(t, p) && (group_of(p) == first_group || past_deadline) && !p->meta.deletion_timestamp.set)
            evict(t, p);
    }
    return n_waiting > 0;
}

/* ------------------------------------------------------------ the end */

static int terminate_instance(term_ctx *t, bool *gone)
{
    *gone = true;
    kp_nodeclaim nc;
    memset(&nc, 0, sizeof(nc));
    if (t->claim && kp_decode_nodeclaim(t->arena, t->claim, &nc) < 0)
        memset(&nc, 0, sizeof(nc));
    if (!nc.provider_id || !*nc.provider_id)
        nc.provider_id = kp_obj_str(t->node, "spec.providerID");
    if (!nc.provider_id || !*nc.provider_id)
        return 0;
    int err = t->c->cloud->ops->delete_instance(t->c->cloud, &nc);
    if (err < 0 && err != KP_ENOTFOUND)
        return err;
    *gone = err == KP_ENOTFOUND;
    return 0;
}

static int let_go(term_ctx *t)
{
    cJSON *want = cJSON_Duplicate(t->node, 1);
    kp_obj_remove_finalizer(want, KP_FINALIZER_TERMINATION);
    int err = kp_obj_patch(t->c->kube, KP_RES_NODE, t->node, want, KP_OBJ_LOCK);
    cJSON_Delete(want);
    if (err < 0)
        return err == KP_ENOTFOUND ? 0 : err;
    KP_LOG(KP_LOG_INFO, LOGGER, "deleted node", "Node", t->name);
    const char *pool = kp_obj_label(t->node, KP_LABEL_NODEPOOL), *zone = kp_obj_label(t->node, KP_LABEL_ZONE);
    kp_ctrl_count(t->c->m ? t->c->m->nodes_terminated : NULL, (const char *const[]){pool, zone});
    return 0;
}

static bool node_ready(const cJSON *node)
{
    const char *s = kp_obj_condition(node, "Ready");
    return s && !strcmp(s, "True");
}

static int finish(term_ctx *t, int64_t *requeue_ms)
{
    int err = delete_claim(t);
    if (err < 0)
        return err;
    if (!node_ready(t->node)) {
        kp_cloud_instance in;
        int gerr = t->c->cloud->ops->get(t->c->cloud, kp_obj_str(t->node, "spec.providerID"), t->arena, &in);
        if (gerr == KP_ENOTFOUND)
            return let_go(t);
    }
    read_deadline(t);
    if ((err = taint(t)) != 0) {
        *requeue_ms = 100;
        return err < 0 ? err : 0;
    }
    if (drain(t)) {
        *requeue_ms = 1000;
        return 0;
    }
    bool gone;
    if ((err = terminate_instance(t, &gone)) < 0)
        return err;
    if (!gone) {
        *requeue_ms = 5000;
        return 0;
    }
    return let_go(t);
}

int kp_termination_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state;
    cJSON *node = kp_ctrl_get(c, KP_CK_NODE, key);
    if (!node)
        return 0;
    int err = 0;
    /* Another Karpenter's Node carries the same finalizer: its provider ID
     * tells whose it is, and only ours are drained and let go. */
    if (kp_obj_str(node, "metadata.deletionTimestamp") && kp_obj_has_finalizer(node, KP_FINALIZER_TERMINATION) &&
        kp_ctrl_owns_node(c, node)) {
        term_ctx t = {c, node, key, NULL, NULL, c->clock->now(c->clock), 0, kp_arena_new()};
        t.claim_key = kp_claim_for_provider_id(c, kp_obj_str(node, "spec.providerID"));
        t.claim = t.claim_key ? kp_ctrl_get(c, KP_CK_NODECLAIM, t.claim_key) : NULL;
        err = finish(&t, requeue_ms);
        cJSON_Delete(t.claim);
        free(t.claim_key);
        kp_arena_free(t.arena);
    }
    cJSON_Delete(node);
    return err;
}
