/* NodeClaim lifecycle (see lifecycle.h). */
#include "controller/lifecycle_internal.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/eventq.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/registration_health.h"
#include "kube/ops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclaim.lifecycle"
#define LAUNCH_TIMEOUT_MS (5 * 60 * 1000)

/* ------------------------------------------------------------- lookups */

const char *kp_index_node_provider_id(const cJSON *obj)
{
    const char *p = kp_obj_str(obj, "spec.providerID");
    return p && *p ? p : NULL;
}

const char *kp_index_claim_provider_id(const cJSON *obj)
{
    const char *p = kp_obj_str(obj, "status.providerID");
    return p && *p ? p : NULL;
}

typedef struct first_key {
    char *key;
    int count;
} first_key;

static void take_first(void *ctx, const char *key, const cJSON *obj)
{
    first_key *f = ctx;
    (void)obj;
    if (!f->count++)
        f->key = strdup(key);
}

char *kp_claim_for_provider_id(const kp_ctrl *c, const char *provider_id)
{
    first_key f = {NULL, 0};
    if (provider_id && *provider_id && c->informers[KP_CK_NODECLAIM])
        kp_informer_foreach_indexed(c->informers[KP_CK_NODECLAIM], KP_INDEX_PROVIDER_ID, provider_id, take_first, &f);
    return f.key;
}

char *kp_node_for_provider_id(const kp_ctrl *c, const char *provider_id, int *count)
{
    first_key f = {NULL, 0};
    if (provider_id && *provider_id && c->informers[KP_CK_NODE])
        kp_informer_foreach_indexed(c->informers[KP_CK_NODE], KP_INDEX_PROVIDER_ID, provider_id, take_first, &f);
    if (count)
        *count = f.count;
    return f.key;
}

/* --------------------------------------------------------------- helpers */

void lc_requeue(claim_ctx *x, int64_t ms)
{
    if (ms > 0 && (x->requeue_ms == 0 || ms < x->requeue_ms))
        x->requeue_ms = ms;
}

void lc_event(claim_ctx *x, const char *type, const char *reason, const char *msg)
{
    kp_eventq_post(x->c->events, KP_RES_NODECLAIM, x->orig, type, reason, msg);
}

void lc_observe_cloud(kp_ctrl *c, const char *method, int64_t start, int err)
{
    kp_ctrl_observe_cloud(c, LOGGER, method, start, err);
}

/* ----------------------------------------------------------------- launch */

static void put_resources(cJSON *status, const char *key, const kp_resource_list *list)
{
    cJSON_DeleteItemFromObjectCaseSensitive(status, key);
    cJSON *o = cJSON_AddObjectToObject(status, key);
    for (size_t i = 0; i < list->count; i++) {
        char q[KP_QUANTITY_STRLEN];
        kp_quantity_format(list->items[i].quantity, q, sizeof(q));
        cJSON_AddStringToObject(o, list->items[i].name, q);
    }
}

/* What a launch writes, kept apart from the claim so that it can be applied
 * again: Karpenter's PopulateNodeClaimDetails (the provider's labels under
 * the claim's own, and what the instance is). */
static cJSON *launch_record(const kp_cloud_instance *in)
{
    cJSON *rec = cJSON_CreateObject();
    cJSON *labels = cJSON_AddObjectToObject(rec, "labels");
    for (size_t i = 0; i < in->labels.count; i++)
        cJSON_AddStringToObject(labels, in->labels.items[i].key, in->labels.items[i].value);
    cJSON *status = cJSON_AddObjectToObject(rec, "status");
    cJSON_AddStringToObject(status, "providerID", in->provider_id);
    if (in->image_id)
        cJSON_AddStringToObject(status, "imageID", in->image_id);
    put_resources(status, "capacity", &in->capacity);
    put_resources(status, "allocatable", &in->allocatable);
    return rec;
}

static void apply_launch(cJSON *obj, const cJSON *rec, int64_t now)
{
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(rec, "labels"))
        if (!kp_obj_label(obj, l->string))
            kp_obj_set_label(obj, l->string, cJSON_GetStringValue(l));
    cJSON *status = kp_obj_ensure(obj, "status");
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(rec, "status"))
    {
        cJSON_DeleteItemFromObjectCaseSensitive(status, f->string);
        cJSON_AddItemToObject(status, f->string, cJSON_Duplicate(f, 1));
    }
    kp_obj_set_condition(obj, "Launched", "True", "Launched", "", now);
}

/* Karpenter's launch cache: an instance is created once per claim UID even
 * when the next reconcile reads a cache that does not show the launch yet
 * (or the status write failed); the record is applied again instead. */
static cJSON *memo_get(kp_ctrl *c, const char *uid)
{
    pthread_mutex_lock(&c->launch_mu);
    const cJSON *rec = uid ? kp_strmap_get(&c->launched, uid) : NULL;
    cJSON *copy = rec ? cJSON_Duplicate(rec, 1) : NULL;
    pthread_mutex_unlock(&c->launch_mu);
    return copy;
}

static void memo_put(kp_ctrl *c, const char *uid, const cJSON *rec)
{
    if (!uid || !*uid)
        return;
    pthread_mutex_lock(&c->launch_mu);
    if (c->launched.count < KP_CTRL_LAUNCHED_MAX || kp_strmap_has(&c->launched, uid))
        cJSON_Delete(kp_strmap_put(&c->launched, uid, cJSON_Duplicate(rec, 1)));
    pthread_mutex_unlock(&c->launch_mu);
}

void lc_forget_launch(kp_ctrl *c, const char *uid)
{
    if (!uid)
        return;
    pthread_mutex_lock(&c->launch_mu);
    cJSON_Delete(kp_strmap_remove(&c->launched, uid));
    pthread_mutex_unlock(&c->launch_mu);
}

void lc_recall_launch(kp_ctrl *c, cJSON *claim, int64_t now)
{
    const char *uid = kp_obj_str(claim, "metadata.uid");
    if (kp_obj_str(claim, "status.providerID")) {
        if (!kp_obj_str(claim, "metadata.deletionTimestamp"))
            lc_forget_launch(c, uid); /* the cache shows the launch: no need to remember it */
        return;
    }
    cJSON *rec = memo_get(c, uid);
    if (rec)
        apply_launch(claim, rec, now);
    cJSON_Delete(rec);
}

/* Capacity the provider could not find, or a node class not ready: the claim
 * goes, and the provisioner places its pods again (with the failed offerings
 * now marked unavailable). */
static int launch_failed_delete(claim_ctx *x, int err, const char *reason)
{
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", kp_error_last());
    KP_LOG(KP_LOG_ERROR, LOGGER, "failed launching nodeclaim", "NodeClaim", x->nc.meta.name, "error", msg);
    char event[640]; /* Karpenter's wording: the claim, then the provider's error */
    snprintf(event, sizeof(event), "NodeClaim %s event: %s", x->nc.meta.name, msg);
    lc_event(x, "Warning", err == KP_EINSUFFICIENT_CAPACITY ? "InsufficientCapacityError" : "NodeClassNotReady", event);
    int derr = kp_kube_delete(x->c->kube, KP_RES_NODECLAIM, NULL, x->nc.meta.name, NULL);
    if (x->c->m)
        kp_ctrl_count(x->c->m->nodeclaims_disrupted,
                      (const char *const[]){reason, x->pool, kp_ctrl_capacity_type(x->c, x->orig)});
    return derr == KP_ENOTFOUND ? 0 : derr;
}

int lc_launch(claim_ctx *x)
{
    if (kp_obj_condition_is_true(x->orig, "Launched") || kp_obj_str(x->orig, "status.providerID"))
        return 0;
    if (kp_obj_str(x->obj, "status.providerID"))
        return 1; /* launched before, not yet written (lc_recall_launch) */
    kp_cloud_instance in;
    int64_t start = x->c->clock->monotonic(x->c->clock);
    int err = x->c->cloud->ops->create(x->c->cloud, &x->nc, x->arena, &in);
    lc_observe_cloud(x->c, "Create", start, err);
    if (err == KP_EINSUFFICIENT_CAPACITY)
        return launch_failed_delete(x, err, "insufficient_capacity");
    if (err == KP_ENOTREADY)
        return launch_failed_delete(x, err, "nodeclass_not_ready");
    if (err < 0) {
        char msg[320];
        snprintf(msg, sizeof(msg), "%.300s", kp_error_last());
        kp_obj_set_condition(x->obj, "Launched", "Unknown", "LaunchFailed", msg, x->now);
        return err;
    }
    cJSON *rec = launch_record(&in);
    memo_put(x->c, x->nc.meta.uid, rec);
    apply_launch(x->obj, rec, x->now);
    cJSON_Delete(rec);
    KP_LOG(KP_LOG_INFO, LOGGER, "launched nodeclaim", "NodeClaim", x->nc.meta.name, "provider-id", in.provider_id,
           "instance-type", in.instance_type ? in.instance_type : "", "zone", in.zone ? in.zone : "",
           "capacity-type", in.capacity_type ? in.capacity_type : "");
    return 1; /* launched now: its status must be written before anything else */
}

/* ----------------------------------------------------------- registration */

bool lc_taint_matches(const cJSON *t, const char *key, const char *effect)
{
    const char *k = kp_obj_str(t, "key"), *e = kp_obj_str(t, "effect");
    return k && strcmp(k, key) == 0 && (!effect || (e && strcmp(e, effect) == 0));
}

/* Add the claim's taints that the node lacks (Karpenter's Taints.Merge). */
static void merge_taints(cJSON *node, const cJSON *taints)
{
    cJSON *spec = kp_obj_ensure(node, "spec");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "taints");
    if (!cJSON_IsArray(list)) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "taints");
        list = cJSON_AddArrayToObject(spec, "taints");
    }
    const cJSON *t;
    cJSON_ArrayForEach(t, taints)
    {
        bool have = false;
        const cJSON *n;
        cJSON_ArrayForEach(n, list) have |= lc_taint_matches(n, kp_obj_str(t, "key"), kp_obj_str(t, "effect"));
        if (!have)
            cJSON_AddItemToArray(list, cJSON_Duplicate(t, 1));
    }
}

void lc_remove_taint(cJSON *node, const char *key)
{
    cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints");
    int i = 0;
    for (cJSON *t = list ? list->child : NULL; t;) {
        cJSON *next = t->next;
        if (lc_taint_matches(t, key, NULL))
            cJSON_DeleteItemFromArray(list, i);
        else
            i++;
        t = next;
    }
}

static void copy_map(cJSON *node, const cJSON *claim, const char *map)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "metadata"), map);
    const cJSON *e;
    cJSON_ArrayForEach(e, src)
    {
        if (!cJSON_IsString(e))
            continue;
        if (strcmp(map, "labels") == 0)
            kp_obj_set_label(node, e->string, e->valuestring);
        else
            kp_obj_set_annotation(node, e->string, e->valuestring);
    }
}

static void own_node(cJSON *node, const cJSON *claim)
{
    cJSON *meta = kp_obj_ensure(node, "metadata");
    const char *uid = kp_obj_str(claim, "metadata.uid");
    cJSON *refs = cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences");
    const cJSON *r;
    cJSON_ArrayForEach(r, refs) if (uid && kp_obj_str(r, "uid") && !strcmp(kp_obj_str(r, "uid"), uid)) return;
    if (!cJSON_IsArray(refs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "ownerReferences");
        refs = cJSON_AddArrayToObject(meta, "ownerReferences");
    }
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", "karpenter.sh/v1");
    cJSON_AddStringToObject(ref, "kind", "NodeClaim");
    cJSON_AddStringToObject(ref, "name", kp_obj_str(claim, "metadata.name"));
    cJSON_AddStringToObject(ref, "uid", uid ? uid : "");
    cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
    cJSON_AddItemToArray(refs, ref);
}

/* Karpenter's syncNode, then registration proper. */
static void sync_node(cJSON *node, const cJSON *claim)
{
    kp_obj_add_finalizer(node, KP_FINALIZER_TERMINATION);
    own_node(node, claim);
    const char *no_sync = kp_obj_label(node, KP_LABEL_DO_NOT_SYNC_TAINTS);
    if (!no_sync || strcmp(no_sync, "true") != 0) {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(claim, "spec");
        merge_taints(node, cJSON_GetObjectItemCaseSensitive(spec, "taints"));
        merge_taints(node, cJSON_GetObjectItemCaseSensitive(spec, "startupTaints"));
    }
    copy_map(node, claim, "annotations");
    copy_map(node, claim, "labels");
    lc_remove_taint(node, KP_TAINT_UNREGISTERED);
    kp_obj_set_label(node, KP_LABEL_REGISTERED, "true");
}

/* A node that joins without karpenter.sh/unregistered can take pods
 * before its claim's labels and taints are on it: Karpenter registers it
 * anyway and says so. */
static void warn_unregistered_taint(claim_ctx *x, const cJSON *node)
{
    if (kp_obj_label(node, KP_LABEL_REGISTERED))
        return;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints"))
    {
        if (lc_taint_matches(t, KP_TAINT_UNREGISTERED, "NoExecute"))
            return;
    }
    KP_LOG(KP_LOG_ERROR, LOGGER, "node claim registration error", "NodeClaim", kp_obj_str(x->obj, "metadata.name"),
           "taint", KP_TAINT_UNREGISTERED, "error",
           "missing taint prevents registration-related race conditions on Karpenter-managed nodes");
    lc_event(x, "Warning", "UnregisteredTaintMissing",
             "Missing " KP_TAINT_UNREGISTERED " taint which prevents registration related race conditions on "
             "Karpenter-managed nodes");
}

int lc_registration(claim_ctx *x)
{
    if (!kp_obj_condition_is_true(x->obj, "Launched") || kp_obj_condition_is_true(x->obj, "Registered"))
        return 0;
    int count = 0;
    char *key = kp_node_for_provider_id(x->c, kp_obj_str(x->obj, "status.providerID"), &count);
    cJSON *node = key ? kp_ctrl_get(x->c, KP_CK_NODE, key) : NULL;
    free(key);
    if (!node || count > 1) {
        kp_obj_set_condition(x->obj, "Registered", count > 1 ? "False" : "Unknown",
                             count > 1 ? "MultipleNodesFound" : "NodeNotFound",
                             count > 1 ? "Invariant violated, matched multiple nodes" : "Node not registered with cluster",
                             x->now);
        cJSON_Delete(node);
        lc_requeue(x, 10000);
        return 0;
    }
    warn_unregistered_taint(x, node);
    cJSON *want = cJSON_Duplicate(node, 1);
    sync_node(want, x->obj);
    int err = kp_obj_patch(x->c->kube, KP_RES_NODE, node, want, KP_OBJ_LOCK);
    const char *name = kp_obj_str(node, "metadata.name");
    if (err >= 0) {
        KP_LOG(KP_LOG_INFO, LOGGER, "registered nodeclaim", "NodeClaim", x->nc.meta.name, "Node", name);
        kp_obj_set_condition(x->obj, "Registered", "True", "Registered", "", x->now);
        kp_reghealth_record(x->c, x->obj, true, x->now); /* a write failure only delays the condition */
        cJSON *status = kp_obj_ensure(x->obj, "status");
        cJSON_DeleteItemFromObjectCaseSensitive(status, "nodeName");
        cJSON_AddStringToObject(status, "nodeName", name);
    }
    cJSON_Delete(want);
    cJSON_Delete(node);
    if (err == KP_ECONFLICT) {
        lc_requeue(x, 100);
        return 0;
    }
    return err < 0 ? err : 0;
}
