/*
 * AL2023 user data: the user's parts, then a nodeadm NodeConfig Karpenter
 * generates, in one MIME archive. The NodeConfig is built as JSON with keys
 * sorted (Karpenter marshals it through JSON, which sorts map keys) and
 * written as YAML.
 */
#include "cloud/aws/userdata_internal.h"

#include <string.h>

#include "base/error.h"
#include "format/json_out.h"
#include "format/yaml.h"

static int key_cmp(const cJSON *a, const cJSON *b)
{
    return strcmp(a->string, b->string);
}

/* Insertion sort on cJSON's member list: objects here are small. */
static void sort_members(cJSON *item, bool recursive)
{
    for (cJSON *c = recursive ? item->child : NULL; c; c = c->next)
        sort_members(c, true);
    if (!cJSON_IsObject(item) || !item->child) return;
    cJSON *sorted = NULL;
    for (cJSON *c = item->child, *next; c; c = next) {
        next = c->next;
        c->prev = c->next = NULL;
        if (!sorted || key_cmp(c, sorted) < 0) {
            c->next = sorted;
            sorted = c;
            continue;
        }
        cJSON *at = sorted;
        while (at->next && key_cmp(at->next, c) <= 0)
            at = at->next;
        c->next = at->next;
        at->next = c;
    }
    cJSON *last = sorted;
    for (cJSON *c = sorted; c; c = c->next) {
        if (c->next) c->next->prev = c;
        last = c;
    }
    sorted->prev = last; /* cJSON keeps the tail in the head's prev */
    item->child = sorted;
}

void kp_ud_json_sort_keys(cJSON *item)
{
    sort_members(item, true);
}

void kp_ud_json_sort_keys_shallow(cJSON *item)
{
    sort_members(item, false);
}

static void replace(cJSON *obj, const char *key, cJSON *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddItemToObject(obj, key, value);
}

static cJSON *reserved_map(const kp_labels *m)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < m->count; i++)
        if (kp_ud_static_quantity(m->items[i].value))
            cJSON_AddStringToObject(o, m->items[i].key, m->items[i].value);
    return o;
}

static cJSON *taints_json(const kp_aws_userdata_opts *o)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < o->n_taints; i++) {
        cJSON *t = cJSON_CreateObject();
        const char *effect = kp_taint_effect_name(o->taints[i].effect);
        if (*effect) cJSON_AddStringToObject(t, "effect", effect);
        cJSON_AddStringToObject(t, "key", o->taints[i].key);
        if (o->taints[i].value && *o->taints[i].value)
            cJSON_AddStringToObject(t, "value", o->taints[i].value);
        cJSON_AddItemToArray(a, t);
    }
    return a;
}

/* spec.kubelet as written, plus what Karpenter decides for the node. */
static cJSON *kubelet_config(const kp_aws_userdata_opts *o)
{
    const kp_kubelet_config *k = o->kubelet;
    cJSON *cfg = NULL;
    if (k && k->present && k->raw_json && *k->raw_json) cfg = cJSON_Parse(k->raw_json);
    if (!cJSON_IsObject(cfg)) {
        cJSON_Delete(cfg);
        cfg = cJSON_CreateObject();
    }
    if (o->max_pods > 0) replace(cfg, "maxPods", cJSON_CreateNumber(o->max_pods));
    if (k && k->present && k->kube_reserved.count)
        replace(cfg, "kubeReserved", reserved_map(&k->kube_reserved));
    if (k && k->present && k->system_reserved.count)
        replace(cfg, "systemReserved", reserved_map(&k->system_reserved));
    if (!(k && k->cluster_dns.count) && o->kube_dns_ip && *o->kube_dns_ip) {
        cJSON *dns = cJSON_CreateArray();
        cJSON_AddItemToArray(dns, cJSON_CreateString(o->kube_dns_ip));
        replace(cfg, "clusterDNS", dns);
    }
    replace(cfg, "registerWithTaints", taints_json(o));
    return cfg;
}

static int node_labels_flag(const kp_aws_userdata_opts *o, cJSON *kubelet)
{
    if (o->labels.count == 0) return 0;
    kp_buf joined = KP_BUF_INIT(KP_UD_BUF_MAX), flag = KP_BUF_INIT(KP_UD_BUF_MAX);
    int err = 0;
    for (size_t i = 0; i < o->labels.count && err == 0; i++)
        err = kp_buf_printf(&joined, "%s%s=%s", i ? "," : "", o->labels.items[i].key,
                            o->labels.items[i].value);
    if (err == 0) err = kp_buf_puts(&flag, "--node-labels=");
    if (err == 0) err = kp_ud_quote(&flag, kp_buf_cstr(&joined));
    if (err == 0) {
        cJSON *flags = cJSON_AddArrayToObject(kubelet, "flags");
        cJSON_AddItemToArray(flags, cJSON_CreateString(kp_buf_cstr(&flag)));
    }
    kp_buf_free(&joined);
    kp_buf_free(&flag);
    return err;
}

static cJSON *node_config(const kp_aws_userdata_opts *o)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "apiVersion", "node.eks.aws/v1alpha1");
    cJSON_AddStringToObject(root, "kind", "NodeConfig");
    cJSON_AddObjectToObject(root, "metadata");
    cJSON *spec = cJSON_AddObjectToObject(root, "spec");
    cJSON *cluster = cJSON_AddObjectToObject(spec, "cluster");
    cJSON_AddStringToObject(cluster, "apiServerEndpoint", o->cluster_endpoint);
    if (o->ca_bundle && *o->ca_bundle)
        cJSON_AddStringToObject(cluster, "certificateAuthority", o->ca_bundle);
    cJSON_AddStringToObject(cluster, "cidr", o->cluster_cidr);
    cJSON_AddStringToObject(cluster, "name", o->cluster_name);
    cJSON_AddObjectToObject(spec, "containerd");
    cJSON *storage =
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "instance"), "localStorage");
    if (o->raid0) cJSON_AddStringToObject(storage, "strategy", "RAID0");
    cJSON *kubelet = cJSON_AddObjectToObject(spec, "kubelet");
    cJSON_AddItemToObject(kubelet, "config", kubelet_config(o));
    if (node_labels_flag(o, kubelet) < 0) {
        cJSON_Delete(root);
        return NULL;
    }
    kp_ud_json_sort_keys(root);
    return root;
}

/* Plain YAML (a mapping, or nothing but comments) is a NodeConfig of the
 * user's; anything else is run as a shell script. */
static const char *plain_content_type(const char *text)
{
    cJSON *root = NULL;
    int err = kp_yaml_parse_one(&root, text, strlen(text), "userData", NULL);
    bool yaml = err == 0 && (!root || cJSON_IsObject(root));
    cJSON_Delete(root);
    kp_error_clear();
    return yaml ? KP_UD_TYPE_NODECONFIG : KP_UD_TYPE_SHELL;
}

static int user_parts(kp_arena *arena, const char *custom, kp_ud_parts *parts)
{
    if (!custom || !*custom) return 0;
    if (!kp_ud_is_mime(custom)) {
        kp_ud_parts_add(arena, parts, plain_content_type(custom), custom);
        return 0;
    }
    kp_ud_parts raw = {0};
    int err = kp_ud_mime_parse(arena, custom, &raw);
    /* nodeadm reads a part's Content-Type only; other headers are dropped. */
    for (size_t i = 0; err == 0 && i < raw.count; i++) {
        const char *type = "";
        for (size_t h = 0; h < raw.items[i].n_headers; h++)
            if (strcmp(raw.items[i].headers[h].name, "Content-Type") == 0)
                type = raw.items[i].headers[h].value;
        kp_ud_parts_add(arena, parts, type, raw.items[i].content);
    }
    return err;
}

int kp_ud_al2023(kp_arena *arena, const kp_aws_userdata_opts *o, kp_buf *out)
{
    if (!o->cluster_cidr || !*o->cluster_cidr)
        return kp_error_set(KP_ENOTREADY, "user data: resolving cluster CIDR: the service CIDR "
                                          "is unknown (AL2023 nodes need it)");
    kp_ud_parts parts = {0};
    int err = user_parts(arena, o->custom, &parts);
    if (err < 0) return err;
    cJSON *cfg = node_config(o);
    if (!cfg) return kp_error_set(KP_EINVALID, "user data: node labels too long");
    kp_buf yaml = KP_BUF_INIT(KP_UD_BUF_MAX);
    err = kp_buf_puts(&yaml, "# Karpenter Generated NodeConfig\n");
    if (err == 0) err = kp_json_out_yaml(&yaml, cfg, 0);
    cJSON_Delete(cfg);
    if (err == 0) {
        kp_ud_parts_add(arena, &parts, KP_UD_TYPE_NODECONFIG,
                        kp_arena_strdup(arena, kp_buf_cstr(&yaml)));
        err = kp_ud_mime_write(out, &parts);
    }
    kp_buf_free(&yaml);
    return err;
}
