/* Garbage collection of claims without instances and instances without claims (see gc.h). */
#include "controller/gc.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "cloud/ownership.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"
#include "kube/strmap.h"

#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclaim.garbagecollection"

typedef struct gc_pass {
    kp_ctrl *c;
    kp_strmap listed; /* provider IDs the cloud lists */
    int64_t now;
    int err;
} gc_pass;

/* How long ago the claim launched (its Launched condition, else its creation). */
static int64_t launched_ms_ago(const gc_pass *g, const cJSON *claim)
{
    int64_t ns = kp_obj_condition_since(claim, "Launched");
    const char *created = kp_obj_str(claim, "metadata.creationTimestamp");
    if (!ns && (!created || kp_time_parse_rfc3339(created, &ns) < 0)) return 0;
    return (g->now - ns) / KP_NS_PER_MS;
}

/* A launched claim the cloud does not list: confirm with Get, then delete it. */
static void check_claim(void *ctx, const char *key, const cJSON *obj)
{
    gc_pass *g = ctx;
    const char *pid = kp_obj_str(obj, "status.providerID");
    /* Only our own claims, and only provider IDs of our own scheme: a get()
     * that cannot read another provider's ID must never look like "gone". */
    if (!pid || !*pid || !kp_ctrl_owns_claim(g->c, obj)) return;
    if (kp_strmap_has(&g->listed, pid) || kp_obj_str(obj, "metadata.deletionTimestamp")) return;
    if (launched_ms_ago(g, obj) < KP_GC_CLAIM_GRACE_MS) return;
    kp_arena *a = kp_arena_new();
    kp_cloud_instance in;
    int64_t start = g->c->clock->monotonic(g->c->clock);
    int err = g->c->cloud->ops->get(g->c->cloud, pid, a, &in);
    kp_ctrl_observe_cloud(g->c, LOGGER, "Get", start, err);
    kp_arena_free(a);
    if (err != KP_ENOTFOUND) return; /* there after all, or unknown: next pass */
    err = kp_kube_delete(g->c->kube, KP_RES_NODECLAIM, NULL, key, NULL);
    if (err < 0 && err != KP_ENOTFOUND) {
        g->err = err;
        return;
    }
    KP_LOG(KP_LOG_INFO, LOGGER, "deleted nodeclaim: its instance is gone", "NodeClaim", key, "provider-id", pid);
}

/* The Node of a terminated orphan goes at once, as Karpenter's instance GC
 * does, so nothing is scheduled to a machine that is gone. */
static int delete_node(gc_pass *g, const char *provider_id)
{
    char *key = kp_node_for_provider_id(g->c, provider_id, NULL);
    cJSON *node = key ? kp_ctrl_get(g->c, KP_CK_NODE, key) : NULL;
    int err = 0;
    if (node && kp_ctrl_owns_node(g->c, node)) {
        err = kp_kube_delete(g->c->kube, KP_RES_NODE, NULL, key, NULL);
        if (err == KP_ENOTFOUND) err = 0;
        if (!err) KP_LOG(KP_LOG_INFO, LOGGER, "deleted the node of a terminated instance", "Node", key);
    }
    cJSON_Delete(node);
    free(key);
    return err;
}

/* An instance no claim owns: terminate it and delete its Node. */
static int collect_instance(gc_pass *g, const kp_cloud_instance *in)
{
    if (!kp_cloud_owns_provider_id(g->c->cloud, in->provider_id)) return 0;
    char *claim = kp_claim_for_provider_id(g->c, in->provider_id);
    if (claim) {
        free(claim);
        return 0;
    }
    if (in->terminating || !in->created_ns || (g->now - in->created_ns) / KP_NS_PER_MS < KP_GC_INSTANCE_GRACE_MS)
        return 0;
    kp_nodeclaim stand_in;
    memset(&stand_in, 0, sizeof(stand_in));
    stand_in.meta.name = in->nodeclaim ? in->nodeclaim : "";
    stand_in.provider_id = in->provider_id;
    int64_t start = g->c->clock->monotonic(g->c->clock);
    int err = g->c->cloud->ops->delete_instance(g->c->cloud, &stand_in);
    kp_ctrl_observe_cloud(g->c, LOGGER, "Delete", start, err);
    if (err < 0 && err != KP_ENOTFOUND) return err;
    KP_LOG(KP_LOG_INFO, LOGGER, "terminated an instance no nodeclaim owns", "provider-id", in->provider_id);
    return delete_node(g, in->provider_id);
}

int kp_gc_pass(kp_ctrl *c, void *state)
{
    (void)state;
    kp_arena *a = kp_arena_new();
    kp_cloud_instance *list = NULL;
    uint32_t n = 0;
    int64_t start = c->clock->monotonic(c->clock);
    int err = c->cloud->ops->list(c->cloud, a, &list, &n);
    kp_ctrl_observe_cloud(c, LOGGER, "List", start, err);
    if (err < 0) {
        kp_arena_free(a);
        return err;
    }
    gc_pass g = {c, KP_STRMAP_INIT, c->clock->now(c->clock), 0};
    for (uint32_t i = 0; i < n; i++) kp_strmap_put(&g.listed, list[i].provider_id, (void *)1);
    kp_informer_foreach(c->informers[KP_CK_NODECLAIM], check_claim, &g);
    for (uint32_t i = 0; i < n && !g.err; i++) g.err = collect_instance(&g, &list[i]);
    kp_strmap_clear(&g.listed, NULL);
    kp_arena_free(a);
    return g.err;
}
