/* Node termination: taint, drain, volumes, terminate, let go (see termination.h). */
#include "controller/termination.h"
#include "api/decode.h"
#include "api/pod_rules.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "node.termination"
/* Karpenter's MinDrainTime: a drain is not over before this long, so pods
 * scheduled just before the taint was seen are drained too. */
#define MIN_DRAIN_NS (5 * KP_NS_PER_SEC)
/* What the API server says when a pod is selected by several PDBs. */
#define MULTIPLE_PDBS "more than one PodDisruptionBudget"

typedef struct term_ctx {
    kp_ctrl *c;
    const cJSON *node;
    const char *name;
    char *claim_key;   /* the node's NodeClaim, or NULL */
    cJSON *claim;      /* its cached object */
    cJSON *claim_want; /* the claim with this pass's conditions; NULL without a claim */
    int64_t now;
    int64_t deadline;  /* terminationGracePeriod expiry, 0 when none */
    kp_arena *arena;
} term_ctx;

static void set_condition(term_ctx *t, const char *type, const char *status, const char *reason)
{
    if (t->claim_want)
        kp_obj_set_condition(t->claim_want, type, status, reason, reason, t->now);
}

static void node_event(term_ctx *t, const char *type, const char *reason, const char *message)
{
    kp_eventq_post(t->c->events, KP_RES_NODE, t->node, type, reason, message);
}

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
    const char *when = t->claim ? kp_obj_annotation(t->claim, KP_ANNOTATION_TERMINATION_TIMESTAMP) : NULL;
    if (!when || kp_time_parse_rfc3339(when, &t->deadline) < 0) {
        t->deadline = 0;
        return;
    }
    char msg[96];
    snprintf(msg, sizeof(msg), "All pods will be deleted by %s", when);
    node_event(t, "Warning", "TerminationGracePeriodExpiring", msg);
    kp_eventq_post(t->c->events, KP_RES_NODECLAIM, t->claim, "Warning", "TerminationGracePeriodExpiring", msg);
}

/* Karpenter's eviction reason: the claim's DisruptionReason, else forceful. */
static const char *eviction_reason(const term_ctx *t)
{
    const char *reason = kp_obj_str(kp_obj_condition_get(t->claim, "DisruptionReason"), "reason");
    if (reason && kp_obj_condition_is_true(t->claim, "DisruptionReason"))
        return reason;
    return "Forceful Termination";
}

/* --------------------------------------------------------------- taint */

/* 0 when tainted, 1 when the write lost a race (try again), or KP_E*. */
static int taint(term_ctx *t)
{
    if (kp_node_has_disrupted_taint(t->node) &&
        kp_obj_label(t->node, "node.kubernetes.io/exclude-from-external-load-balancers"))
        return 0;
    cJSON *want = cJSON_Duplicate(t->node, 1);
    kp_node_set_disrupted_taint(want, true);
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

static pod_list pods_on_node(term_ctx *t)
{
    pod_list l = {t, NULL, 0, 0};
    kp_informer_foreach_indexed(t->c->informers[KP_CK_POD], KP_INDEX_POD_NODE, t->name, collect_pod, &l);
    return l;
}

static int group_of(const kp_pod *p)
{
    const char *pc = p->priority_class_name ? p->priority_class_name : "";
    bool critical = !strcmp(pc, "system-cluster-critical") || !strcmp(pc, "system-node-critical");
    return (critical ? 2 : 0) + (p->owned_by_daemonset ? 1 : 0);
}

/* The eviction API's answer as the HTTP status Karpenter labels it with. */
static const char *http_code(int err)
{
    switch (err) {
    case 0: return "200";
    case KP_ENOTFOUND: return "404";
    case KP_ECONFLICT: return "409";
    case KP_ERETRY: return "429";
    case KP_EFORBIDDEN: return "403";
    case KP_EUNAUTHORIZED: return "401";
    default: return "500";
    }
}

static void pod_event(term_ctx *t, const kp_pod *p, const char *reason, const char *message)
{
    cJSON *ref = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(ref, "metadata");
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "kind", "Pod");
    cJSON_AddStringToObject(meta, "name", p->meta.name);
    cJSON_AddStringToObject(meta, "namespace", p->meta.namespace);
    cJSON_AddStringToObject(meta, "uid", p->meta.uid ? p->meta.uid : "");
    kp_eventq_post(t->c->events, KP_RES_POD, ref, "Normal", reason, message);
    cJSON_Delete(ref);
}

/* Past the node's deadline a pod is deleted with what time is left, PDBs and
 * do-not-disrupt notwithstanding (Karpenter's terminationGracePeriod). */
static void delete_past_deadline(term_ctx *t, const kp_pod *p)
{
    kp_kube_delete_opts o = KP_KUBE_DELETE_OPTS_INIT;
    int64_t left = (t->deadline - t->now) / KP_NS_PER_SEC;
    o.uid = p->meta.uid;
    o.grace_period_seconds = left > 0 ? (long)left : 0;
    int err = kp_kube_delete(t->c->kube, KP_RES_POD, p->meta.namespace, p->meta.name, &o);
    if (err < 0 && err != KP_ENOTFOUND && err != KP_ECONFLICT) {
        kp_ctrl_log_error(LOGGER, "deleting pod failed", p->meta.name, err);
        return;
    }
    char when[32], msg[400];
    kp_time_format_rfc3339(t->deadline, when, sizeof(when));
    snprintf(msg, sizeof(msg),
             "Deleting the pod to accommodate the terminationTime %s of the node. The pod was granted %ld seconds of "
             "grace-period of its %lld terminationGracePeriodSeconds. This bypasses the PDB of the pod and the "
             "do-not-disrupt annotation.",
             when, o.grace_period_seconds, (long long)(p->has_termination_grace_period ? p->termination_grace_period_seconds : 30));
    pod_event(t, p, "Disrupted", msg);
}

/* Through the Eviction API, for this incarnation of the pod only. */
static void evict(term_ctx *t, const kp_pod *p)
{
    kp_ctrl *c = t->c;
    kp_kube_delete_opts o = KP_KUBE_DELETE_OPTS_INIT;
    o.uid = p->meta.uid;
    int err = kp_kube_evict(c->kube, p->meta.namespace, p->meta.name, &o);
    kp_ctrl_count(c->m ? c->m->eviction_requests : NULL, (const char *const[]){http_code(err)});
    if (err == KP_ENOTFOUND || err == KP_ECONFLICT)
        return; /* gone, or another pod of that name */
    /* The API server refuses a pod under several PDBs with a 500 whose
     * message says so, whatever the budgets allow: Karpenter reports it as
     * a drain failure too, not as an error. */
    bool multiple = err < 0 && strstr(kp_error_last(), MULTIPLE_PDBS) != NULL;
    if (err == KP_ERETRY || multiple) {
        char msg[600];
        snprintf(msg, sizeof(msg), "Failed to drain node, %s (Pod=%s/%s)",
                 multiple ? "eviction does not support multiple PDBs" : "evicting pod violates a PDB",
                 p->meta.namespace, p->meta.name);
        node_event(t, "Warning", "FailedDraining", msg);
        return;
    }
    if (err < 0) {
        kp_ctrl_log_error(LOGGER, "evicting pod failed", p->meta.name, err);
        return;
    }
    const char *reason = eviction_reason(t);
    char msg[300];
    snprintf(msg, sizeof(msg), "Evicted pod: %s", reason);
    pod_event(t, p, "Evicted", msg);
    kp_ctrl_count(c->m ? c->m->pods_drained : NULL, (const char *const[]){reason});
}

/* Evict the first non-empty group; the number of pods still waited for.
 * do-not-disrupt pods (durations counted, kp_pod_do_not_disrupt) are waited
 * for and never evicted, until the node's deadline. */
static size_t drain(term_ctx *t)
{
    pod_list l = pods_on_node(t);
    size_t n_waiting = 0;
    int first_group = 4;
    bool past_deadline = t->deadline && t->now >= t->deadline;
    for (size_t i = 0; i < l.n; i++) {
        if (!kp_pod_is_waiting_eviction(l.items[i], t->now))
            continue;
        n_waiting++;
        int g = group_of(l.items[i]);
        first_group = g < first_group ? g : first_group;
    }
    for (size_t i = 0; i < l.n; i++) {
        const kp_pod *p = l.items[i];
        if (!kp_pod_is_waiting_eviction(p, t->now) || (group_of(p) != first_group && !past_deadline))
            continue;
        bool grace_too_long = t->deadline &&
                              t->now + (p->has_termination_grace_period ? p->termination_grace_period_seconds : 30) *
                                               KP_NS_PER_SEC > t->deadline;
        if (grace_too_long && (!p->meta.deletion_timestamp.set || p->meta.deletion_timestamp.ns > t->deadline))
            delete_past_deadline(t, p);
        else if (!p->meta.deletion_timestamp.set && kp_pod_is_evictable(p, t->now))
            evict(t, p);
    }
    return n_waiting;
}

/* Karpenter's awaitDrain: Drained Unknown while pods remain (and for at
 * least MIN_DRAIN_NS), then True. 1: not yet. */
static int await_drain(term_ctx *t)
{
    if (t->claim_want && !kp_obj_condition(t->claim_want, "Drained"))
        set_condition(t, "Drained", "Unknown", "Draining");
    size_t waiting = drain(t);
    if (waiting) {
        char msg[96];
        snprintf(msg, sizeof(msg), "Failed to drain node, %zu pods are waiting to be evicted", waiting);
        node_event(t, "Warning", "FailedDraining", msg);
        return 1;
    }
    if (t->claim_want) {
        const char *s = kp_obj_condition(t->claim_want, "Drained");
        int64_t since = kp_obj_condition_since(t->claim_want, "Drained");
        if (s && !strcmp(s, "Unknown") && t->now - since < MIN_DRAIN_NS)
            return 1;
        set_condition(t, "Drained", "True", "Drained");
    }
    return 0;
}

/* ------------------------------------------------------------- volumes */

typedef struct va_scan {
    term_ctx *t;
    const char *const *skip_pvs; /* PVs of pods that are not drained: not waited for */
    size_t n_skip;
    char names[256];
    int count;
} va_scan;

static void pending_va(void *ctx, const char *key, const cJSON *va)
{
    va_scan *s = ctx;
    const char *node = kp_obj_str(va, "spec.nodeName"), *pv = kp_obj_str(va, "spec.source.persistentVolumeName");
    if (!node || strcmp(node, s->t->name) != 0 || !pv)
        return;
    for (size_t i = 0; i < s->n_skip; i++)
        if (s->skip_pvs[i] && !strcmp(s->skip_pvs[i], pv))
            return;
    if (s->count++ < 5) {
        size_t len = strlen(s->names);
        snprintf(s->names + len, sizeof(s->names) - len, "%s%s", len ? ", " : "", key);
    }
}

/* The PVs behind the volumes of pods the drain does not wait for (they stay
 * attached with their pod, as Karpenter's filterVolumeAttachments). */
static const char *const *undrained_pvs(term_ctx *t, size_t *n)
{
    pod_list l = pods_on_node(t);
    const char **out = KP_ARENA_NEW(t->arena, const char *, 64);
    *n = 0;
    for (size_t i = 0; i < l.n && *n < 64; i++) {
        const kp_pod *p = l.items[i];
        if (kp_pod_is_drainable(p, t->now))
            continue;
        for (size_t v = 0; v < p->n_volumes && *n < 64; v++) {
            const char *claim = p->volumes[v].claim_name;
            char key[600];
            snprintf(key, sizeof(key), "%s/%s", p->meta.namespace, claim ? claim : "");
            cJSON *pvc = claim ? kp_ctrl_get(t->c, KP_CK_PVC, key) : NULL;
            const char *pv = pvc ? kp_obj_str(pvc, "spec.volumeName") : NULL;
            if (pv)
                out[(*n)++] = kp_arena_strdup(t->arena, pv);
            cJSON_Delete(pvc);
        }
    }
    return out;
}

/* Karpenter's awaitVolumeDetachment: the instance is terminated only once the
 * node's VolumeAttachments are gone (EBS cannot attach a volume to the next
 * node before), unless the terminationGracePeriod has run out. 1: not yet. */
static int await_volumes(term_ctx *t)
{
    va_scan s = {t, NULL, 0, "", 0};
    if (t->c->informers[KP_CK_VOLUMEATTACHMENT]) {
        s.skip_pvs = undrained_pvs(t, &s.n_skip);
        kp_informer_foreach(t->c->informers[KP_CK_VOLUMEATTACHMENT], pending_va, &s);
    }
    if (s.count == 0) {
        set_condition(t, "VolumesDetached", "True", "VolumesDetached");
        return 0;
    }
    if (!t->deadline || t->now < t->deadline) {
        char msg[320];
        snprintf(msg, sizeof(msg), "Awaiting deletion of bound volumeattachments (%s%s)", s.names,
                 s.count > 5 ? ", ..." : "");
        node_event(t, "Normal", "AwaitingVolumeDetachment", msg);
        set_condition(t, "VolumesDetached", "Unknown", "AwaitingVolumeDetachment");
        return 1;
    }
    set_condition(t, "VolumesDetached", "False", "TerminationGracePeriodElapsed");
    return 0;
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
    int64_t start = t->c->clock->monotonic(t->c->clock);
    int err = t->c->cloud->ops->delete_instance(t->c->cloud, &nc);
    kp_ctrl_observe_cloud(t->c, LOGGER, "Delete", start, err);
    if (err < 0 && err != KP_ENOTFOUND)
        return err;
    set_condition(t, "InstanceTerminating", "True", "InstanceTerminating");
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
    kp_ctrl_node_terminated(t->c, t->node);
    return 0;
}

/* The claim's conditions as this pass left them, under the resourceVersion
 * lock; nodes_drained counts Drained turning True once, after it is stored. */
static int persist_claim(term_ctx *t, int64_t *requeue_ms)
{
    if (!t->claim_want)
        return 0;
    int err = kp_obj_patch(t->c->kube, KP_RES_NODECLAIM, t->claim, t->claim_want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    if (err == KP_ECONFLICT) {
        *requeue_ms = 100;
        return 1;
    }
    if (err < 0 && err != KP_ENOTFOUND && err != KP_KUBE_UNCHANGED)
        return err;
    bool was = kp_obj_condition_is_true(t->claim, "Drained"), is = kp_obj_condition_is_true(t->claim_want, "Drained");
    if (err >= 0 && err != KP_KUBE_UNCHANGED && is && !was)
        kp_ctrl_count(t->c->m ? t->c->m->nodes_drained : NULL,
                      (const char *const[]){kp_obj_label(t->node, KP_LABEL_NODEPOOL)});
    return 0;
}

/* The steps in Karpenter's order; 1 from a step: requeue after `wait_ms`. */
static int steps(term_ctx *t, int64_t *requeue_ms)
{
    int r = await_drain(t);
    if (r) {
        *requeue_ms = 1000;
        return r;
    }
    if ((r = await_volumes(t)) != 0) {
        *requeue_ms = 1000;
        return r;
    }
    bool gone;
    int err = terminate_instance(t, &gone);
    if (err < 0)
        return err;
    if (!gone) {
        *requeue_ms = 5000;
        return 1;
    }
    return 0;
}

static int finish(term_ctx *t, int64_t *requeue_ms)
{
    int err = delete_claim(t);
    if (err < 0)
        return err;
    if (!kp_node_is_ready(t->node)) {
        kp_cloud_instance in;
        int64_t start = t->c->clock->monotonic(t->c->clock);
        int gerr = t->c->cloud->ops->get(t->c->cloud, kp_obj_str(t->node, "spec.providerID"), t->arena, &in);
        kp_ctrl_observe_cloud(t->c, LOGGER, "Get", start, gerr);
        if (gerr == KP_ENOTFOUND)
            return let_go(t);
    }
    read_deadline(t);
    if ((err = taint(t)) != 0) {
        *requeue_ms = 100;
        return err < 0 ? err : 0;
    }
    int r = steps(t, requeue_ms);
    int perr = persist_claim(t, requeue_ms);
    if (r < 0 || perr < 0)
        return r < 0 ? r : perr;
    if (r > 0 || perr > 0)
        return 0;
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
        term_ctx t = {c, node, key, NULL, NULL, NULL, c->clock->now(c->clock), 0, kp_arena_new()};
        t.claim_key = kp_claim_for_provider_id(c, kp_obj_str(node, "spec.providerID"));
        t.claim = t.claim_key ? kp_ctrl_get(c, KP_CK_NODECLAIM, t.claim_key) : NULL;
        t.claim_want = t.claim ? cJSON_Duplicate(t.claim, 1) : NULL;
        err = finish(&t, requeue_ms);
        cJSON_Delete(t.claim_want);
        cJSON_Delete(t.claim);
        free(t.claim_key);
        kp_arena_free(t.arena);
    }
    cJSON_Delete(node);
    return err;
}
