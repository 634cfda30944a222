/* Cluster views from the informer caches (see view.h). */
#include "controller/view.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "controller/capacitybuffer_ctrl.h"
#include "controller/nodeoverlay_ctrl.h"
#include "controller/ownership.h"

#include <stdlib.h>
#include <string.h>

typedef int (*decode_fn)(kp_arena *arena, const cJSON *json, void *out);

/* Decoders with one signature, for the collector below. */
static int dec_pod(kp_arena *a, const cJSON *j, void *o) { return kp_decode_pod(a, j, o); }
static int dec_node(kp_arena *a, const cJSON *j, void *o) { return kp_decode_node(a, j, o); }
static int dec_pool(kp_arena *a, const cJSON *j, void *o) { return kp_decode_nodepool(a, j, o); }
static int dec_claim(kp_arena *a, const cJSON *j, void *o) { return kp_decode_nodeclaim(a, j, o); }
static int dec_ds(kp_arena *a, const cJSON *j, void *o) { return kp_decode_workload(a, j, KP_KIND_DAEMONSET, o); }
static int dec_pdb(kp_arena *a, const cJSON *j, void *o) { return kp_decode_pdb(a, j, o); }
static int dec_pvc(kp_arena *a, const cJSON *j, void *o) { return kp_decode_pvc(a, j, o); }
static int dec_pv(kp_arena *a, const cJSON *j, void *o) { return kp_decode_pv(a, j, o); }
static int dec_sc(kp_arena *a, const cJSON *j, void *o) { return kp_decode_storage_class(a, j, o); }
static int dec_csinode(kp_arena *a, const cJSON *j, void *o) { return kp_decode_csinode(a, j, o); }

/* Whether a cached object takes part (NULL: every one does). */
typedef bool (*owned_fn)(const kp_ctrl *c, const cJSON *obj);

typedef struct collector {
    kp_ctrl_view *view;
    const kp_ctrl *c;
    owned_fn owned;
    decode_fn decode;
    size_t elem_size;
    const void **items;
    size_t n, cap;
} collector;

static void collect_one(void *ctx, const char *key, const cJSON *obj)
{
    collector *col = ctx;
    kp_ctrl_view *v = col->view;
    if (col->owned && !col->owned(col->c, obj))
        return;
    void *out = kp_arena_calloc(v->arena, 1, col->elem_size);
    if (col->decode(v->arena, obj, out) < 0) {
        if (!v->skipped++)
            v->first_skip = kp_arena_printf(v->arena, "%s: %s", key, kp_error_last());
        return;
    }
    col->items = kp_xgrow(col->items, &col->cap, col->n + 1, sizeof(void *));
    col->items[col->n++] = out;
}

/* Decode every cached object of `kind`; the array lives in the view's arena. */
static const void *const *collect(kp_ctrl *c, kp_ctrl_view *v, enum kp_ctrl_kind kind, owned_fn owned,
                                  decode_fn fn, size_t elem_size, size_t *n)
{
    collector col = {v, c, owned, fn, elem_size, NULL, 0, 0};
    if (c->informers[kind])
        kp_informer_foreach(c->informers[kind], collect_one, &col);
    const void **arr = KP_ARENA_NEW(v->arena, const void *, col.n ? col.n : 1);
    if (col.n)
        memcpy(arr, col.items, col.n * sizeof(void *));
    free(col.items);
    *n = col.n;
    return arr;
}

static void collect_namespace(void *ctx, const char *key, const cJSON *obj)
{
    collector *col = ctx;
    kp_ctrl_view *v = col->view;
    kp_object_meta meta;
    (void)key;
    if (kp_decode_meta(v->arena, obj, &meta) < 0)
        return;
    kp_namespace_info *ns = KP_ARENA_NEW(v->arena, kp_namespace_info, 1);
    ns->name = meta.name, ns->labels = meta.labels;
    col->items = kp_xgrow(col->items, &col->cap, col->n + 1, sizeof(void *));
    col->items[col->n++] = ns;
}

static void namespaces(kp_ctrl *c, kp_ctrl_view *v)
{
    collector col = {v, c, NULL, NULL, 0, NULL, 0, 0};
    if (c->informers[KP_CK_NAMESPACE])
        kp_informer_foreach(c->informers[KP_CK_NAMESPACE], collect_namespace, &col);
    kp_namespace_info *arr = KP_ARENA_NEW(v->arena, kp_namespace_info, col.n ? col.n : 1);
    for (size_t i = 0; i < col.n; i++)
        arr[i] = *(const kp_namespace_info *)col.items[i];
    free(col.items);
    v->cluster.namespaces = arr;
    v->cluster.n_namespaces = col.n;
}

#define COLLECT(field, kind, owned, fn, type)                                                                  \
    v->cluster.field = (const type *const *)collect(c, v, kind, owned, fn, sizeof(type), &v->cluster.n_##field)

/* The pool's instance types from the provider (AWS: its node class's), with
 * the NodeOverlays applied (gate NodeOverlay); NULL when the provider has
 * none for it now (not Ready, no class) or its overlays await evaluation. */
static const kp_catalog *pool_catalog(void *ctx, const kp_nodepool *np)
{
    kp_ctrl_view *v = ctx;
    kp_ctrl *c = v->c;
    const kp_catalog *cat = NULL;
    if (!np || c->cloud->ops->instance_types(c->cloud, np, &cat) < 0) return NULL;
    return v->overlaid ? kp_overlay_catalogs_get(v->overlaid, np, cat) : cat;
}

/* CapacityBuffers' virtual pods join the cluster's pods (after them, so
 * snapshot pod i is still cluster.pods[i]). */
static void add_virtual_pods(kp_ctrl *c, kp_ctrl_view *v)
{
    const kp_pod **extra;
    size_t n = c->buffers ? kp_buffers_virtual_pods(c->buffers, v->arena, &extra) : 0;
    if (n == 0)
        return;
    const kp_pod **all = KP_ARENA_NEW(v->arena, const kp_pod *, v->cluster.n_pods + n);
    if (v->cluster.n_pods)
        memcpy(all, v->cluster.pods, v->cluster.n_pods * sizeof(*all));
    memcpy(all + v->cluster.n_pods, extra, n * sizeof(*all));
    v->cluster.pods = all;
    v->cluster.n_pods += n;
}

static bool node_owned(void *ctx, const kp_node *n)
{
    char buf[320];
    return !kp_ctrl_node_id_foreign(ctx, n->provider_id, kp_labels_get(&n->meta.labels, KP_LABEL_NODEPOOL), buf,
                                    sizeof(buf));
}

int kp_ctrl_view_build(kp_ctrl *c, const kp_catalog *catalog, kp_ctrl_view **out)
{
    kp_ctrl_view *v = kp_xcalloc(1, sizeof(*v));
    v->arena = kp_arena_new();
    /* Another provider's NodePools and NodeClaims are not ours to plan for;
     * its Nodes stay, as room pods may use (node_owned below). */
    COLLECT(nodepools, KP_CK_NODEPOOL, kp_ctrl_owns_pool, dec_pool, kp_nodepool);
    COLLECT(nodes, KP_CK_NODE, NULL, dec_node, kp_node);
    COLLECT(nodeclaims, KP_CK_NODECLAIM, kp_ctrl_owns_claim, dec_claim, kp_nodeclaim);
    COLLECT(pods, KP_CK_POD, NULL, dec_pod, kp_pod);
    add_virtual_pods(c, v);
    COLLECT(daemonsets, KP_CK_DAEMONSET, NULL, dec_ds, kp_workload);
    COLLECT(pvcs, KP_CK_PVC, NULL, dec_pvc, kp_pvc);
    COLLECT(pvs, KP_CK_PV, NULL, dec_pv, kp_pv);
    COLLECT(storage_classes, KP_CK_STORAGECLASS, NULL, dec_sc, kp_storage_class);
    COLLECT(pdbs, KP_CK_PDB, NULL, dec_pdb, kp_pdb);
    COLLECT(csinodes, KP_CK_CSINODE, NULL, dec_csinode, kp_csinode);
    namespaces(c, v);
    v->cluster.catalog = catalog;
    v->cluster.ready_pools_only = true; /* the NodePool controller writes Ready */
    v->c = c;
    if (c->overlays) {
        kp_overlay_store *store = kp_overlay_state_get(c->overlays);
        v->overlaid = kp_overlay_catalogs_new(store, NULL);
        kp_overlay_store_unref(store);
    }
    if (c->cloud) {
        v->cluster.catalog_for = pool_catalog;
        v->cluster.catalog_ctx = v;
        v->cluster.node_owned = node_owned;
        v->cluster.node_owned_ctx = c;
    }
    int err = kp_snapshot_build(&v->cluster, &v->snap);
    if (err < 0) {
        kp_ctrl_view_free(v);
        return err;
    }
    *out = v;
    return 0;
}

int kp_ctrl_view_build_cloud(kp_ctrl *c, kp_ctrl_view **out)
{
    const kp_catalog *cat;
    if (!c->cloud)
        return kp_error_set(KP_EINVALID, "no cloud provider");
    int err = c->cloud->ops->instance_types(c->cloud, NULL, &cat);
    return err < 0 ? err : kp_ctrl_view_build(c, cat, out);
}

kp_ctrl_view *kp_ctrl_view_free(kp_ctrl_view *v)
{
    if (!v)
        return NULL;
    kp_snapshot_free(v->snap);
    kp_overlay_catalogs_free(v->overlaid); /* after the snapshot that read them */
    kp_arena_free(v->arena);
    free(v);
    return NULL;
}

uint32_t kp_ctrl_view_provisionable(const kp_ctrl_view *v, uint32_t **out)
{
    uint32_t *all, n_all = kp_snapshot_pending_pods(v->snap, &all, v->arena), n = 0;
    for (uint32_t i = 0; i < n_all; i++) {
        const kp_pod *p = v->cluster.pods[all[i]];
        if (p->failed_to_schedule && !p->owned_by_daemonset && !p->owned_by_node && !p->is_mirror)
            all[n++] = all[i];
    }
    *out = all;
    return n;
}
