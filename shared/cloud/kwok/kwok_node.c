/*
 * The kwok kubelet's node reconciler: the Ready heartbeat (node status),
 * the node Lease, the not-ready and unreachable taints, and the clean-up
 * once a Node is gone. Every step is idempotent; timers are the key's next
 * re-add.
 */
#include "cloud/kwok/kwok_internal.h"

#include "base/error.h"
#include "kube/ops.h"

#include <stdlib.h>
#include <string.h>

/* A node whose status is someone else's to write: with this annotation "true"
 * the stand-in reports no status for it (conditions stay as set, e.g. Ready
 * False by a test playing a failing kubelet) but still renews its Lease, as a
 * live kubelet on an unhealthy node does. Removing it makes the node Ready again. */
#define KWOK_ANNOTATION_HOLD_STATUS "karpenter.kwok.sh/hold-node-status"

static bool status_held(const cJSON *node)
{
    const char *v = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(kp_obj_get(node, "metadata.annotations"), KWOK_ANNOTATION_HOLD_STATUS));
    return v && strcmp(v, "true") == 0;
}

static int64_t lease_interval_ns(const kp_kwok_kubelet *k)
{
    return k->opts.lease_interval_ms * KP_NS_PER_MS;
}

/* When the status was last reported: by us, or as the cache has it. */
static int64_t last_heartbeat(const cJSON *node, const kwok_node_state *st)
{
    int64_t ns = 0;
    const char *t = kp_obj_str(kp_obj_condition_get(node, "Ready"), "lastHeartbeatTime");
    if (!t || kp_time_parse_rfc3339(t, &ns) < 0) ns = 0;
    return ns > st->status_ns ? ns : st->status_ns;
}

static bool status_due(const kp_kwok_kubelet *k, const cJSON *node, const kwok_node_state *st,
                       int64_t now)
{
    return !kp_node_is_ready(node) || !kp_obj_get(node, "status.addresses") ||
           (k->opts.status_interval_ms > 0 &&
            now - last_heartbeat(node, st) >= k->opts.status_interval_ms * KP_NS_PER_MS);
}

/* Conditions merge by type in a strategic patch; a Node made by hand
 * without addresses gets ours. */
static int patch_status(kp_kwok_kubelet *k, const char *name, const cJSON *node, int64_t now,
                        cJSON **out)
{
    char t[32];
    kwok_time(now, t, sizeof(t));
    cJSON *patch = cJSON_CreateObject(), *status = cJSON_AddObjectToObject(patch, "status");
    cJSON_AddItemToObject(status, "conditions", kwok_node_conditions(node, t));
    if (!kp_obj_get(node, "status.addresses"))
        cJSON_AddItemToObject(status, "addresses", kwok_node_addresses(name));
    char *body = cJSON_PrintUnformatted(patch);
    int err = kp_kube_patch(k->client, KP_RES_NODE, NULL, name, KP_PATCH_STRATEGIC, body,
                            KP_KUBE_STATUS, out);
    free(body);
    cJSON_Delete(patch);
    if (err < 0) return kp_error_wrap(err, "kwok kubelet: node %s status", name);
    atomic_fetch_add(&k->node_status, 1);
    kwok_kubelet_note(k, name, now, 0, NULL);
    return 0;
}

static bool kubelet_removes(const char *key)
{
    return key &&
           (strcmp(key, KWOK_TAINT_NOT_READY) == 0 || strcmp(key, KWOK_TAINT_UNREACHABLE) == 0);
}

/* spec.taints has no merge key: the patch carries the whole list and the
 * resourceVersion it was read at, so a taint added meanwhile makes it fail
 * (409) instead of being lost. */
static int remove_taints(kp_kwok_kubelet *k, const char *name, const cJSON *node)
{
    const cJSON *t;
    cJSON *keep = cJSON_CreateArray();
    int removed = 0;
    cJSON_ArrayForEach(t, kp_obj_get(node, "spec.taints"))
    {
        if (kubelet_removes(kp_obj_str(t, "key")))
            removed++;
        else
            cJSON_AddItemToArray(keep, cJSON_Duplicate(t, 1));
    }
    if (!removed) {
        cJSON_Delete(keep);
        return 0;
    }
    cJSON *patch = cJSON_CreateObject();
    const char *rv = kp_kube_meta(node, "resourceVersion");
    if (rv && *rv)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "resourceVersion", rv);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(patch, "spec"), "taints", keep);
    char *body = cJSON_PrintUnformatted(patch);
    int err = kp_kube_patch(k->client, KP_RES_NODE, NULL, name, KP_PATCH_MERGE, body, 0, NULL);
    free(body);
    cJSON_Delete(patch);
    if (err < 0) return kp_error_wrap(err, "kwok kubelet: node %s taints", name);
    atomic_fetch_add(&k->taints_removed, (unsigned long)removed);
    return 0;
}

static cJSON *lease_spec(const kp_kwok_kubelet *k, const char *name, const char *renew)
{
    cJSON *spec = cJSON_CreateObject();
    cJSON_AddStringToObject(spec, "holderIdentity", name);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", k->opts.lease_duration_s);
    cJSON_AddStringToObject(spec, "renewTime", renew);
    return spec;
}

/* Owned by the Node, so the garbage collector removes it with the Node too. */
static int create_lease(kp_kwok_kubelet *k, const char *name, const cJSON *node, const char *renew)
{
    cJSON *lease = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(lease, "metadata");
    cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(lease, "kind", "Lease");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", KWOK_LEASE_NAMESPACE);
    const char *uid = kp_kube_meta(node, "uid");
    if (uid) {
        cJSON *ref = cJSON_CreateObject();
        cJSON_AddStringToObject(ref, "apiVersion", "v1");
        cJSON_AddStringToObject(ref, "kind", "Node");
        cJSON_AddStringToObject(ref, "name", name);
        cJSON_AddStringToObject(ref, "uid", uid);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), ref);
    }
    cJSON_AddItemToObject(lease, "spec", lease_spec(k, name, renew));
    int err = kp_kube_create(k->client, KP_RES_LEASE, KWOK_LEASE_NAMESPACE, lease, NULL);
    cJSON_Delete(lease);
    return err;
}

static int renew_lease(kp_kwok_kubelet *k, const char *name, const cJSON *node, int64_t now)
{
    char t[40];
    kwok_micro_time(now, t, sizeof(t));
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddItemToObject(patch, "spec", lease_spec(k, name, t));
    char *body = cJSON_PrintUnformatted(patch);
    int err = kp_kube_patch(k->client, KP_RES_LEASE, KWOK_LEASE_NAMESPACE, name, KP_PATCH_MERGE,
                            body, 0, NULL);
    free(body);
    cJSON_Delete(patch);
    if (err == KP_ENOTFOUND) err = create_lease(k, name, node, t);
    if (err < 0) return kp_error_wrap(err, "kwok kubelet: node %s lease", name);
    atomic_fetch_add(&k->leases, 1);
    kwok_kubelet_note(k, name, 0, now, NULL);
    return 0;
}

static int node_gone(kp_kwok_kubelet *k, const char *name)
{
    if (!kwok_kubelet_forget(k, name) || k->opts.lease_interval_ms <= 0) return 0;
    int err = kp_kube_delete(k->client, KP_RES_LEASE, KWOK_LEASE_NAMESPACE, name, NULL);
    if (err == KP_ENOTFOUND) return 0;
    if (err < 0) {
        kwok_kubelet_know(k, name, NULL); /* so the retry deletes it */
        return kp_error_wrap(err, "kwok kubelet: node %s lease", name);
    }
    return 0;
}

/* When the next heartbeat or renewal is due; 0 when neither ever is. */
static int64_t next_due(const kp_kwok_kubelet *k, const kwok_node_state *st)
{
    int64_t due = 0;
    if (k->opts.status_interval_ms > 0)
        due = st->status_ns + k->opts.status_interval_ms * KP_NS_PER_MS;
    if (k->opts.lease_interval_ms > 0 && (!due || st->lease_ns + lease_interval_ns(k) < due))
        due = st->lease_ns + lease_interval_ns(k);
    return due;
}

static int run_node(kp_kwok_kubelet *k, const char *name, const cJSON *node, int64_t *requeue_ms)
{
    kwok_node_state st;
    kwok_kubelet_know(k, name, kwok_node_internal_ip(node));
    kwok_kubelet_node_state(k, name, &st);
    int64_t now = k->clock->now(k->clock);
    cJSON *fresh = NULL;
    int err = 0;
    if (!status_held(node) && status_due(k, node, &st, now)) err = patch_status(k, name, node, now, &fresh);
    const cJSON *cur = fresh ? fresh : node;
    kwok_kubelet_note(k, name, 0, 0, kwok_node_internal_ip(cur));
    if (err == 0 && kp_node_is_ready(cur)) err = remove_taints(k, name, cur);
    if (err == 0 && k->opts.lease_interval_ms > 0 && now - st.lease_ns >= lease_interval_ns(k))
        err = renew_lease(k, name, cur, now);
    if (err == 0 && kwok_kubelet_node_state(k, name, &st)) {
        st.status_ns = last_heartbeat(cur, &st);
        int64_t due = next_due(k, &st);
        *requeue_ms = due ? kwok_ms_until(now, due) : 0;
    }
    cJSON_Delete(fresh);
    return err;
}

int kwok_reconcile_node(kp_kwok_kubelet *k, const char *name, int64_t *requeue_ms)
{
    cJSON *node = kp_informer_get(k->nodes, name);
    int err =
        node && kwok_is_kwok_node(node) ? run_node(k, name, node, requeue_ms) : node_gone(k, name);
    cJSON_Delete(node);
    return err;
}
