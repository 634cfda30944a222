/* The kwok cloud provider's table of functions (see kwok.h). */
#include "cloud/kwok/kwok_internal.h"

#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/ownership.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX_LEN (sizeof(KP_KWOK_PROVIDER_PREFIX) - 1)

static const char *kwok_name(const kp_cloud_provider *cp)
{
    (void)cp;
    return "kwok";
}

/* The instance a kwok Node stands for; strings in `arena`. */
static int node_instance(const cJSON *json, kp_arena *arena, kp_cloud_instance *out)
{
    kp_node n;
    int err = kp_decode_node(arena, json, &n);
    if (err < 0) return kp_error_wrap(err, "kwok: reading node %s", kp_kube_meta(json, "name"));
    kp_cloud_instance in;
    memset(&in, 0, sizeof(in));
    in.provider_id = n.provider_id;
    in.nodeclaim = n.meta.name; /* kwok names the Node after its claim */
    in.nodepool = kp_labels_get(&n.meta.labels, KP_LABEL_NODEPOOL);
    in.instance_type = kp_labels_get(&n.meta.labels, KP_LABEL_INSTANCE_TYPE);
    in.zone = kp_labels_get(&n.meta.labels, KP_LABEL_ZONE);
    in.capacity_type = kp_labels_get(&n.meta.labels, KP_LABEL_CAPACITY_TYPE);
    in.labels = n.meta.labels;
    in.capacity = n.capacity;
    in.allocatable = n.allocatable;
    in.created_ns = n.meta.creation_timestamp.set ? n.meta.creation_timestamp.ns : 0;
    in.terminating = n.meta.deletion_timestamp.set;
    *out = in;
    return 0;
}

static bool terminating(const cJSON *node)
{
    return kp_obj_get(node, "metadata.deletionTimestamp") != NULL &&
           !cJSON_IsNull(kp_obj_get(node, "metadata.deletionTimestamp"));
}

/* A retried create finds the Node it made the first time. */
static int existing_node(kwok_provider *p, const char *name, cJSON **out)
{
    cJSON *node = NULL;
    int err = kp_kube_get(p->client, KP_RES_NODE, NULL, name, &node);
    if (err < 0) return err;
    if (!kwok_is_kwok_node(node))
        err = kp_error_set(KP_ECONFLICT, "node %s exists and is not a kwok node", name);
    else if (terminating(node))
        err = kp_error_set(KP_ERETRY, "node %s exists and is terminating", name);
    if (err < 0) {
        cJSON_Delete(node);
        return err;
    }
    *out = node;
    return 0;
}

/* The claim's KWOKNodeClass must exist (Karpenter's kwok provider treats a
 * missing one as no capacity) and must not be Ready=False. */
static int check_node_class(kwok_provider *p, const kp_nodeclaim *claim)
{
    const kp_node_class_ref *ref = &claim->spec.node_class_ref;
    if (!claim->spec.has_node_class_ref || !kp_cloud_serves_node_class(&p->base, ref->group, ref->kind))
        return kp_error_set(KP_EINVALID, "kwok: nodeclaim %s does not reference a %s/%s", claim->meta.name,
                            KP_KWOK_NODE_CLASS_GROUP, KP_KWOK_NODE_CLASS_KIND);
    cJSON *nc = NULL;
    int err = kp_kube_get(p->client, KP_RES_KWOKNODECLASS, NULL, ref->name ? ref->name : "", &nc);
    if (err == KP_ENOTFOUND)
        return kp_error_set(KP_EINSUFFICIENT_CAPACITY, "kwok: KWOKNodeClass %s not found", ref->name);
    if (err < 0) return kp_error_wrap(err, "kwok: nodeclaim %s: reading KWOKNodeClass %s", claim->meta.name, ref->name);
    const cJSON *ready = kp_obj_condition_get(nc, "Ready");
    const char *status = kp_obj_str(ready, "status");
    if (status && strcmp(status, "False") == 0) {
        const char *msg = kp_obj_str(ready, "message");
        err = kp_error_set(KP_ENOTREADY, "kwok: KWOKNodeClass %s is not ready%s%s", ref->name,
                           msg && *msg ? ": " : "", msg ? msg : "");
    }
    cJSON_Delete(nc);
    return err;
}

static int kwok_create(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *arena,
                       kp_cloud_instance *out)
{
    kwok_provider *p = (kwok_provider *)cp;
    const char *name = claim->meta.name;
    if (!name || !*name) return kp_error_set(KP_EINVALID, "kwok: the nodeclaim has no name");
    int err = check_node_class(p, claim);
    if (err < 0) return err;
    kwok_choice choice;
    kp_catalog *overlaid = p->overlaid ? p->overlaid(p->overlaid_ctx, claim, p->catalog) : NULL;
    err = kwok_choose(overlaid ? overlaid : p->catalog, claim, &choice);
    cJSON *node = err < 0 ? NULL : kwok_node_object(p, claim, &choice), *created = NULL;
    kp_catalog_free(overlaid); /* the choice points into it */
    if (err < 0) return err;
    cJSON_Delete(choice.labels);
    err = kp_kube_create(p->client, KP_RES_NODE, NULL, node, &created);
    if (err == KP_ECONFLICT) err = existing_node(p, name, &created);
    cJSON_Delete(node);
    if (err < 0) return kp_error_wrap(err, "kwok: creating node %s", name);
    kp_cloud_instance in;
    err = node_instance(created, arena, &in);
    cJSON_Delete(created);
    if (err < 0) return err;
    if (!in.created_ns) in.created_ns = p->clock->now(p->clock);
    *out = in;
    return 0;
}

/* The Node name in a kwok provider ID; NULL for another provider's. */
static const char *node_name(const char *provider_id)
{
    if (!provider_id || strncmp(provider_id, KP_KWOK_PROVIDER_PREFIX, PREFIX_LEN) != 0 ||
        !provider_id[PREFIX_LEN])
        return NULL;
    return provider_id + PREFIX_LEN;
}

/* The Node behind `provider_id`, if it is a live kwok one. */
static int live_node(kwok_provider *p, const char *provider_id, cJSON **out)
{
    const char *name = node_name(provider_id);
    if (!name) return kp_error_set(KP_ENOTFOUND, "kwok: %s is not a kwok provider ID", provider_id);
    cJSON *node = NULL;
    int err = kp_kube_get(p->client, KP_RES_NODE, NULL, name, &node);
    if (err == KP_ENOTFOUND)
        return kp_error_set(KP_ENOTFOUND, "kwok: instance %s not found", provider_id);
    if (err < 0) return kp_error_wrap(err, "kwok: reading node %s", name);
    const char *id = kp_obj_str(node, "spec.providerID");
    if (!id || strcmp(id, provider_id) != 0)
        err = kp_error_set(KP_ENOTFOUND, "kwok: instance %s not found (node %s is another one)",
                           provider_id, name);
    else if (terminating(node))
        err = kp_error_set(KP_ENOTFOUND, "kwok: instance %s is terminating", provider_id);
    if (err < 0) {
        cJSON_Delete(node);
        return err;
    }
    *out = node;
    return 0;
}

static int kwok_delete(kp_cloud_provider *cp, const kp_nodeclaim *claim)
{
    kwok_provider *p = (kwok_provider *)cp;
    char id[512];
    /* A claim whose launch answer was lost has no provider ID yet; its Node
     * would carry its name. */
    if (claim->provider_id && *claim->provider_id)
        snprintf(id, sizeof(id), "%s", claim->provider_id);
    else
        snprintf(id, sizeof(id), "%s%s", KP_KWOK_PROVIDER_PREFIX, claim->meta.name);
    cJSON *node = NULL;
    int err = live_node(p, id, &node);
    if (err < 0) return err;
    kp_kube_delete_opts o = KP_KUBE_DELETE_OPTS_INIT;
    o.uid = kp_kube_meta(node, "uid");
    err = kp_kube_delete(p->client, KP_RES_NODE, NULL, kp_kube_meta(node, "name"), &o);
    cJSON_Delete(node);
    /* 409: the precondition failed, so the Node we saw is gone already. */
    if (err == KP_ENOTFOUND || err == KP_ECONFLICT)
        return kp_error_set(KP_ENOTFOUND, "kwok: instance %s is gone", id);
    return err < 0 ? kp_error_wrap(err, "kwok: deleting instance %s", id) : 0;
}

static int kwok_get(kp_cloud_provider *cp, const char *provider_id, kp_arena *arena,
                    kp_cloud_instance *out)
{
    cJSON *node = NULL;
    int err = live_node((kwok_provider *)cp, provider_id, &node);
    if (err < 0) return err;
    err = node_instance(node, arena, out);
    cJSON_Delete(node);
    return err;
}

static int kwok_list(kp_cloud_provider *cp, kp_arena *arena, kp_cloud_instance **out, uint32_t *n)
{
    kwok_provider *p = (kwok_provider *)cp;
    cJSON *list = NULL;
    int err = kp_kube_list(p->client, KP_RES_NODE, NULL, &list);
    if (err < 0) return kp_error_wrap(err, "kwok: listing nodes");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *item;
    kp_cloud_instance *all =
        KP_ARENA_NEW(arena, kp_cloud_instance, (size_t)cJSON_GetArraySize(items) + 1);
    uint32_t count = 0;
    cJSON_ArrayForEach(item, items)
    {
        if (!kwok_is_kwok_node(item)) continue;
        if ((err = node_instance(item, arena, &all[count])) < 0) break;
        count++;
    }
    cJSON_Delete(list);
    if (err < 0) return err;
    *out = all;
    *n = count;
    return 0;
}

static int kwok_instance_types(kp_cloud_provider *cp, const kp_nodepool *pool,
                               const kp_catalog **out)
{
    (void)pool;
    *out = ((kwok_provider *)cp)->catalog;
    return 0;
}

static int kwok_is_drifted(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *arena,
                           const char **reason)
{
    (void)cp, (void)claim, (void)arena;
    *reason = NULL;
    return 0;
}

static void kwok_free(kp_cloud_provider *cp)
{
    kwok_provider *p = (kwok_provider *)cp;
    kp_catalog_free(p->owned_catalog);
    free(p->kubelet_version);
    free(p);
}

/* Karpenter's kwok provider: Ready False or Unknown for 10 minutes. */
static const kp_repair_policy repair_policies[] = {
    {"Ready", "False", 10LL * 60 * 1000000000},
    {"Ready", "Unknown", 10LL * 60 * 1000000000},
};

static const kp_cloud_provider_ops kwok_ops = {
    kwok_name, kwok_create,         kwok_delete,     kwok_get,
    kwok_list, kwok_instance_types, kwok_is_drifted, kwok_free,
    KP_KWOK_NODE_CLASS_GROUP, KP_KWOK_NODE_CLASS_KIND, "kwok",
    repair_policies, 2,
};

int kp_kwok_provider_new(kp_kube_client *client, const kp_kwok_opts *opts, kp_cloud_provider **out)
{
    kp_kwok_opts o = KP_KWOK_OPTS_INIT;
    if (opts) o = *opts;
    kp_catalog *owned = NULL;
    if (!o.catalog) {
        int err = kp_catalog_builtin_aws(NULL, &owned);
        if (err < 0) return kp_error_wrap(err, "kwok: the built-in catalog");
        o.catalog = owned;
    }
    kwok_provider *p = kp_xcalloc(1, sizeof(*p));
    p->base.ops = &kwok_ops;
    p->client = client;
    p->catalog = o.catalog;
    p->owned_catalog = owned;
    p->clock = o.clock ? o.clock : kp_clock_system();
    p->overlaid = o.overlaid;
    p->overlaid_ctx = o.overlaid_ctx;
    p->kubelet_version =
        kp_xstrdup(o.kubelet_version ? o.kubelet_version : KP_KWOK_KUBELET_VERSION);
    *out = &p->base;
    return 0;
}
