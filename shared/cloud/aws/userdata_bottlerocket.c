/*
 * Bottlerocket user data: the user's TOML with settings.kubernetes taken
 * over by what Karpenter knows (cluster, labels, taints, kubelet settings).
 * Only [settings] survives; inside settings.kubernetes only the keys
 * Bottlerocket's API accepts are kept, in the order Karpenter writes them.
 */
#include "cloud/aws/userdata_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/duration.h"
#include "base/error.h"
#include "base/xalloc.h"

/* settings.kubernetes keys Bottlerocket accepts, in Karpenter's order. */
static const char *const K8S_KEYS[] = {
    "api-server",
    "cloud-provider",
    "cluster-certificate",
    "cluster-name",
    "cluster-dns-ip",
    "credential-providers",
    "node-labels",
    "node-taints",
    "max-pods",
    "static-pods",
    "eviction-hard",
    "eviction-soft",
    "eviction-soft-grace-period",
    "eviction-max-pod-grace-period",
    "kube-reserved",
    "system-reserved",
    "allowed-unsafe-sysctls",
    "server-tls-bootstrap",
    "registry-qps",
    "registry-burst",
    "event-qps",
    "event-burst",
    "kube-api-qps",
    "kube-api-burst",
    "container-log-max-size",
    "container-log-max-files",
    "cpu-manager-policy",
    "cpu-manager-policy-options",
    "cpu-manager-reconcile-period",
    "memory-manager-policy",
    "memory-manager-reserved-memory",
    "topology-manager-scope",
    "topology-manager-policy",
    "topology-manager-policy-options",
    "image-gc-high-threshold-percent",
    "image-gc-low-threshold-percent",
    "ids-per-pod",
    "cpu-cfs-quota-enforced",
    "shutdown-grace-period",
    "shutdown-grace-period-for-critical-pods",
    "cluster-domain",
    "seccomp-default",
    "pod-pids-limit",
    "device-ownership-from-security-context",
    "single-process-oom-kill",
    "container-log-max-workers",
    "container-log-monitor-interval",
    "hostname-override-source",
    "log-level",
};

static cJSON *string_map(const kp_labels *m, bool reserved)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < m->count; i++)
        if (!reserved || kp_ud_static_quantity(m->items[i].value))
            cJSON_AddStringToObject(o, m->items[i].key, m->items[i].value);
    return o;
}

static cJSON *grace_periods(const kp_labels *m)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < m->count; i++) {
        kp_duration d;
        char text[KP_DURATION_STRLEN];
        if (kp_duration_parse(m->items[i].value, &d) == 0)
            cJSON_AddStringToObject(o, m->items[i].key, kp_duration_format(d, text, sizeof(text)));
    }
    return o;
}

/* The user's node-labels under ours. */
static cJSON *node_labels(const cJSON *user, const kp_aws_userdata_opts *o)
{
    cJSON *m = cJSON_IsObject(user) ? cJSON_Duplicate(user, 1) : cJSON_CreateObject();
    for (size_t i = 0; i < o->labels.count; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(m, o->labels.items[i].key);
        cJSON_AddStringToObject(m, o->labels.items[i].key, o->labels.items[i].value);
    }
    return m;
}

static cJSON *node_taints(const kp_aws_userdata_opts *o)
{
    cJSON *m = cJSON_CreateObject();
    for (size_t i = 0; i < o->n_taints; i++) {
        const kp_taint *t = &o->taints[i];
        cJSON *list = cJSON_GetObjectItemCaseSensitive(m, t->key);
        if (!list) list = cJSON_AddArrayToObject(m, t->key);
        const char *value = t->value ? t->value : "", *effect = kp_taint_effect_name(t->effect);
        size_t len = strlen(value) + strlen(effect) + 2;
        char *s = kp_xmalloc(len); /* as long as the taint: a taint cut short is another taint */
        snprintf(s, len, "%s:%s", value, effect);
        cJSON_AddItemToArray(list, cJSON_CreateString(s));
        free(s);
    }
    return m;
}

static void set(cJSON *k8s, const char *key, cJSON *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(k8s, key);
    if (v) cJSON_AddItemToObject(k8s, key, v);
}

static void kubelet_settings(cJSON *k8s, const kp_kubelet_config *k)
{
    char num[24];
    if (k->system_reserved.count)
        set(k8s, "system-reserved", string_map(&k->system_reserved, true));
    if (k->kube_reserved.count) set(k8s, "kube-reserved", string_map(&k->kube_reserved, true));
    if (k->eviction_hard.count) set(k8s, "eviction-hard", string_map(&k->eviction_hard, false));
    if (k->eviction_soft.count) set(k8s, "eviction-soft", string_map(&k->eviction_soft, false));
    if (k->eviction_soft_grace_period.count)
        set(k8s, "eviction-soft-grace-period", grace_periods(&k->eviction_soft_grace_period));
    if (k->has_eviction_max_pod_grace_period)
        set(k8s, "eviction-max-pod-grace-period",
            cJSON_CreateNumber(k->eviction_max_pod_grace_period));
    if (k->has_image_gc_high_threshold_percent) {
        snprintf(num, sizeof(num), "%d", (int)k->image_gc_high_threshold_percent);
        set(k8s, "image-gc-high-threshold-percent", cJSON_CreateString(num));
    }
    if (k->has_image_gc_low_threshold_percent) {
        snprintf(num, sizeof(num), "%d", (int)k->image_gc_low_threshold_percent);
        set(k8s, "image-gc-low-threshold-percent", cJSON_CreateString(num));
    }
    if (k->has_cpu_cfs_quota)
        set(k8s, "cpu-cfs-quota-enforced", cJSON_CreateBool(k->cpu_cfs_quota));
}

/* settings.kubernetes: the user's known keys, then Karpenter's values over
 * them, rebuilt in K8S_KEYS order. */
static cJSON *kubernetes(const cJSON *user, const kp_aws_userdata_opts *o)
{
    cJSON *k8s = cJSON_CreateObject();
    for (const cJSON *c = cJSON_IsObject(user) ? user->child : NULL; c; c = c->next)
        cJSON_AddItemToObject(k8s, c->string, cJSON_Duplicate(c, 1));
    set(k8s, "api-server", cJSON_CreateString(o->cluster_endpoint));
    set(k8s, "cluster-name", cJSON_CreateString(o->cluster_name));
    set(k8s, "cluster-certificate", o->ca_bundle ? cJSON_CreateString(o->ca_bundle) : NULL);
    set(k8s, "node-labels", node_labels(cJSON_GetObjectItemCaseSensitive(user, "node-labels"), o));
    if (o->max_pods > 0) set(k8s, "max-pods", cJSON_CreateNumber(o->max_pods));
    if (kp_ud_cluster_dns(o)) set(k8s, "cluster-dns-ip", cJSON_CreateString(kp_ud_cluster_dns(o)));
    if (o->kubelet && o->kubelet->present) kubelet_settings(k8s, o->kubelet);
    set(k8s, "node-taints", node_taints(o));
    cJSON *ordered = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof(K8S_KEYS) / sizeof(K8S_KEYS[0]); i++) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(k8s, K8S_KEYS[i]);
        if (v) {
            kp_ud_json_sort_keys(v);
            cJSON_AddItemToObject(ordered, K8S_KEYS[i], v);
        }
    }
    cJSON_Delete(k8s); /* keys Bottlerocket would refuse */
    return ordered;
}

static cJSON *raid0_command(void)
{
    static const char *const init[] = {"apiclient", "ephemeral-storage", "init"};
    static const char *const bind[] = {"apiclient",    "ephemeral-storage",   "bind",
                                       "--dirs",       "/var/lib/containerd", "/var/lib/kubelet",
                                       "/var/log/pods"};
    cJSON *cmd = cJSON_CreateObject();
    cJSON *commands = cJSON_AddArrayToObject(cmd, "commands");
    cJSON_AddItemToArray(commands, cJSON_CreateStringArray(init, 3));
    cJSON_AddItemToArray(commands, cJSON_CreateStringArray(bind, 7));
    cJSON_AddStringToObject(cmd, "mode", "always");
    cJSON_AddTrueToObject(cmd, "essential");
    return cmd;
}

int kp_ud_bottlerocket(kp_arena *arena, const kp_aws_userdata_opts *o, kp_buf *out)
{
    (void)arena;
    cJSON *user = NULL;
    int err = kp_ud_toml_parse(o->custom ? o->custom : "", &user);
    if (err < 0) return err;
    cJSON *settings = cJSON_DetachItemFromObjectCaseSensitive(user, "settings");
    cJSON_Delete(user); /* Bottlerocket reads [settings] only */
    if (!cJSON_IsObject(settings)) {
        cJSON_Delete(settings);
        settings = cJSON_CreateObject();
    }
    cJSON *k8s = kubernetes(cJSON_GetObjectItemCaseSensitive(settings, "kubernetes"), o);
    cJSON_DeleteItemFromObjectCaseSensitive(settings, "kubernetes");
    if (o->raid0) {
        cJSON *cmds = cJSON_GetObjectItemCaseSensitive(settings, "bootstrap-commands");
        if (!cJSON_IsObject(cmds)) {
            cJSON_DeleteItemFromObjectCaseSensitive(settings, "bootstrap-commands");
            cmds = cJSON_AddObjectToObject(settings, "bootstrap-commands");
        }
        cJSON_DeleteItemFromObjectCaseSensitive(cmds, "000-mount-instance-storage");
        cJSON_AddItemToObject(cmds, "000-mount-instance-storage", raid0_command());
    }
    kp_ud_json_sort_keys(settings);
    cJSON_AddItemToObject(settings, "kubernetes", k8s);
    kp_ud_json_sort_keys_shallow(settings);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "settings", settings);
    err = kp_ud_toml_write(out, root);
    cJSON_Delete(root);
    return err;
}
