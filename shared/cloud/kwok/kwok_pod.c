/*
 * The kwok kubelet's pod reconciler: pods bound to a kwok node are
 * reported Running at once, and terminating ones are finished when their
 * grace period is over (a real kubelet's containers would be gone by then).
 */
#include "cloud/kwok/kwok_internal.h"

#include "base/error.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool being_deleted(const cJSON *pod)
{
    const cJSON *ts = kp_obj_get(pod, "metadata.deletionTimestamp");
    return ts && !cJSON_IsNull(ts);
}

static bool phase_is(const cJSON *pod, const char *phase)
{
    const char *p = kp_obj_str(pod, "status.phase");
    return p && strcmp(p, phase) == 0;
}

/* Running and Ready already, or finished: nothing to report. */
static bool settled(const cJSON *pod)
{
    return phase_is(pod, "Succeeded") || phase_is(pod, "Failed") ||
           (phase_is(pod, "Running") && kp_obj_condition_is_true(pod, "Ready"));
}

/* Delete with grace period 0 once deletionTimestamp (the end of the grace
 * period) is reached; the uid precondition spares a successor of the same
 * name (a StatefulSet's). */
static int finish(kp_kwok_kubelet *k, const cJSON *pod, int64_t *requeue_ms)
{
    const char *ns = kp_kube_meta(pod, "namespace"), *name = kp_kube_meta(pod, "name");
    int64_t due = 0, now = k->clock->now(k->clock);
    const char *ts = kp_obj_str(pod, "metadata.deletionTimestamp");
    if (!k->opts.finish_immediately && ts && kp_time_parse_rfc3339(ts, &due) == 0 && now < due) {
        *requeue_ms = kwok_ms_until(now, due);
        return 0;
    }
    kp_kube_delete_opts o = KP_KUBE_DELETE_OPTS_INIT;
    o.uid = kp_kube_meta(pod, "uid");
    o.grace_period_seconds = 0;
    int err = kp_kube_delete(k->client, KP_RES_POD, ns, name, &o);
    if (err == KP_ENOTFOUND || err == KP_ECONFLICT) return 0;
    if (err < 0) return kp_error_wrap(err, "kwok kubelet: finishing pod %s/%s", ns, name);
    atomic_fetch_add(&k->pods_finished, 1);
    return 0;
}

/* PodScheduled keeps the time the scheduler gave it. */
static cJSON *pod_conditions(const cJSON *pod, const char *now)
{
    static const char *const types[] = {"Initialized", "Ready", "ContainersReady", "PodScheduled"};
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
        const cJSON *old = kp_obj_condition_get(pod, types[i]);
        const char *since =
            kp_obj_condition_is_true(pod, types[i]) ? kp_obj_str(old, "lastTransitionTime") : NULL;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", types[i]);
        cJSON_AddStringToObject(c, "status", "True");
        cJSON_AddStringToObject(c, "lastTransitionTime", since ? since : now);
        cJSON_AddItemToArray(list, c);
    }
    return list;
}

static cJSON *container_status(const cJSON *pod, const cJSON *container, bool completed,
                               const char *now)
{
    const char *name = kp_obj_str(container, "name"), *image = kp_obj_str(container, "image");
    const char *uid = kp_kube_meta(pod, "uid");
    char id[512];
    snprintf(id, sizeof(id), "kwok://%s-%s", uid ? uid : "", name ? name : "");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", name ? name : "");
    cJSON_AddStringToObject(s, "image", image ? image : "");
    cJSON_AddStringToObject(s, "imageID", "");
    cJSON_AddStringToObject(s, "containerID", id);
    cJSON_AddBoolToObject(s, "ready", true);
    cJSON_AddBoolToObject(s, "started", !completed);
    cJSON_AddNumberToObject(s, "restartCount", 0);
    cJSON *state = cJSON_AddObjectToObject(s, "state");
    if (!completed) {
        cJSON_AddStringToObject(cJSON_AddObjectToObject(state, "running"), "startedAt", now);
        return s;
    }
    cJSON *t = cJSON_AddObjectToObject(state, "terminated");
    cJSON_AddNumberToObject(t, "exitCode", 0);
    cJSON_AddStringToObject(t, "reason", "Completed");
    cJSON_AddStringToObject(t, "startedAt", now);
    cJSON_AddStringToObject(t, "finishedAt", now);
    cJSON_AddStringToObject(t, "containerID", id);
    return s;
}

/* Init containers have completed, except sidecars (restartPolicy Always), which run. */
static cJSON *container_statuses(const cJSON *pod, const char *field, bool init, const char *now)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *c;
    cJSON_ArrayForEach(c, kp_obj_get(pod, field))
    {
        const char *restart = kp_obj_str(c, "restartPolicy");
        bool sidecar = restart && strcmp(restart, "Always") == 0;
        cJSON_AddItemToArray(list, container_status(pod, c, init && !sidecar, now));
    }
    return list;
}

static void add_ips(cJSON *status, const cJSON *pod, const char *host_ip)
{
    char ip[32], seed[512];
    const char *uid = kp_kube_meta(pod, "uid"), *ns = kp_kube_meta(pod, "namespace");
    snprintf(seed, sizeof(seed), "%s/%s/%s", ns ? ns : "", kp_kube_meta(pod, "name"),
             uid ? uid : "");
    kwok_made_up_ip(seed, true, ip, sizeof(ip));
    if (cJSON_IsTrue(kp_obj_get(pod, "spec.hostNetwork"))) snprintf(ip, sizeof(ip), "%s", host_ip);
    cJSON_AddStringToObject(status, "hostIP", host_ip);
    cJSON_AddStringToObject(status, "podIP", ip);
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "ip", ip);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(status, "podIPs"), one);
}

/* The status a kubelet reports once every container runs. */
static cJSON *running_patch(const cJSON *pod, const char *host_ip, const char *now)
{
    cJSON *patch = cJSON_CreateObject();
    const char *uid = kp_kube_meta(pod, "uid");
    if (uid) /* a uid in the patch is a precondition: never a successor's status */
        cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "uid", uid);
    cJSON *status = cJSON_AddObjectToObject(patch, "status");
    const char *started = kp_obj_str(pod, "status.startTime");
    cJSON_AddStringToObject(status, "phase", "Running");
    cJSON_AddItemToObject(status, "conditions", pod_conditions(pod, now));
    cJSON_AddStringToObject(status, "startTime", started ? started : now);
    add_ips(status, pod, host_ip);
    cJSON_AddItemToObject(status, "initContainerStatuses",
                          container_statuses(pod, "spec.initContainers", true, now));
    cJSON_AddItemToObject(status, "containerStatuses",
                          container_statuses(pod, "spec.containers", false, now));
    return patch;
}

static int set_running(kp_kwok_kubelet *k, const cJSON *pod, const char *node)
{
    const char *ns = kp_kube_meta(pod, "namespace"), *name = kp_kube_meta(pod, "name");
    kwok_node_state st;
    char now[32];
    if (!kwok_kubelet_node_state(k, node, &st) || !st.ip[0])
        kwok_made_up_ip(node, false, st.ip, sizeof(st.ip));
    kwok_time(k->clock->now(k->clock), now, sizeof(now));
    cJSON *patch = running_patch(pod, st.ip, now);
    char *body = cJSON_PrintUnformatted(patch);
    int err = kp_kube_patch(k->client, KP_RES_POD, ns, name, KP_PATCH_STRATEGIC, body,
                            KP_KUBE_STATUS, NULL);
    free(body);
    cJSON_Delete(patch);
    /* Gone, or replaced by a pod of the same name (the uid no longer
     * matches: 422 on a real server): that one has its own event. */
    if (err == KP_ENOTFOUND || err == KP_ECONFLICT) return 0;
    if (err == KP_EINVALID) { /* no retry can succeed */
        atomic_fetch_add(&k->failures, 1);
        return 0;
    }
    if (err < 0) return kp_error_wrap(err, "kwok kubelet: pod %s/%s status", ns, name);
    atomic_fetch_add(&k->pods_running, 1);
    return 0;
}

int kwok_reconcile_pod(kp_kwok_kubelet *k, const char *key, int64_t *requeue_ms)
{
    cJSON *pod = kp_informer_get(k->pods, key);
    if (!pod) return 0;
    const char *node = kp_obj_str(pod, "spec.nodeName");
    int err = 0;
    if (node && *node && kwok_kubelet_has_node(k, node)) {
        if (being_deleted(pod))
            err = finish(k, pod, requeue_ms);
        else if (!settled(pod))
            err = set_running(k, pod, node);
    }
    cJSON_Delete(pod);
    return err;
}
