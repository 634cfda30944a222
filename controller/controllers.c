/* The leader's controllers and their wiring (see controllers.h). */
#include "controller/controllers.h"
#include "base/xalloc.h"
#include "cloud/aws/provider.h"
#include "controller/capacitybuffer_ctrl.h"
#include "controller/caps_ctrl.h"
#include "controller/cloud_aws.h"
#include "controller/consistency_ctrl.h"
#include "controller/disruption_ctrl.h"
#include "controller/gc.h"
#include "controller/state_metrics.h"
#include "controller/interruption_ctrl.h"
#include "controller/lifecycle.h"
#include "controller/node_health.h"
#include "controller/nodeclaim_disruption.h"
#include "controller/nodeclass_ctrl.h"
#include "controller/nodeoverlay_ctrl.h"
#include "controller/nodepool_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "controller/podevents.h"
#include "controller/provisioner.h"
#include "controller/static_ctrl.h"
#include "controller/termination.h"

#include <stdlib.h>
#include <string.h>

struct kp_controllers {
    kp_ctrl *c;
    kp_workqueue *q_lifecycle, *q_termination, *q_nodepool, *q_podevents, *q_nodeclass, *q_claim_disruption, *q_health;
    kp_reconciler *lifecycle, *termination, *nodepool, *podevents, *nodeclass, *claim_disruption, *health;
    kp_workqueue *q_static; /* StaticCapacity: static NodePools by name */
    kp_reconciler *static_pools;
    kp_workqueue *q_buffers; /* CapacityBuffer: buffers by namespace/name */
    kp_reconciler *buffer_ctrl;
    kp_buffers *buffers;
    kp_claim_disruption *claim_disruption_state;
    kp_loop *aws_upkeep;
    int64_t aws_refresh_due_ns;
    kp_provisioner *provisioner;
    kp_disruption_ctrl *disruption_state;
    kp_loop *disruption;
    kp_loop *interruption;
    kp_loop *gc;
    kp_loop *state_metrics;
    kp_caps_ctrl *caps; /* NULL: no metrics registry */
    kp_loop *caps_headroom;
    kp_workqueue *q_overlay; /* NodeOverlay gate */
    kp_reconciler *overlay;
    kp_workqueue *q_consistency; /* NodeClaims, checked against their Nodes */
    kp_reconciler *consistency;
    kp_consistency *consistency_state;
    bool started;
};

/* ---------------------------------------------------------------- handlers */

static void pod_seen(kp_controllers *cs, const cJSON *old_obj, const cJSON *obj)
{
    if (kp_pod_json_provisionable(obj))
        kp_provisioner_trigger(cs->provisioner);
    if (kp_podevent_is_event(old_obj, obj))
        kp_workqueue_add(cs->q_podevents, kp_obj_str(obj, "spec.nodeName"));
}

static void pod_changed(void *ctx, const cJSON *obj)
{
    pod_seen(ctx, NULL, obj);
}

static void pod_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    pod_seen(ctx, old_obj, new_obj);
}

static void enqueue_pool_of(kp_controllers *cs, const cJSON *obj)
{
    const char *pool = kp_obj_label(obj, "karpenter.sh/nodepool");
    if (pool)
        kp_workqueue_add(cs->q_nodepool, pool);
}

/* A claim came, went, began deleting, or was taken by or given back from a
 * disruption: its NodePool's replicas may need a look (StaticCapacity). */
static void enqueue_static(kp_controllers *cs, const cJSON *old_obj, const cJSON *obj)
{
    const char *pool = kp_obj_label(obj, "karpenter.sh/nodepool");
    if (!pool || !cs->q_static)
        return;
    if (old_obj) {
        const char *was = kp_obj_condition(old_obj, "DisruptionReason"), *is = kp_obj_condition(obj, "DisruptionReason");
        bool deleting = !kp_obj_str(old_obj, "metadata.deletionTimestamp") && kp_obj_str(obj, "metadata.deletionTimestamp");
        if (!deleting && (was ? is && !strcmp(was, is) : !is))
            return;
    }
    kp_workqueue_add(cs->q_static, pool);
}

/* A new object another provider owns is logged once (ownership.h). */
static void report(kp_controllers *cs, enum kp_ctrl_kind kind, const cJSON *obj)
{
    const char *name = kp_obj_str(obj, "metadata.name");
    if (name)
        kp_ctrl_report_foreign_one(cs->c, kind, name, obj);
}

/* A Node change concerns its termination, its NodeClaim and its NodePool. */
static void node_changed(void *ctx, const cJSON *obj)
{
    kp_controllers *cs = ctx;
    const char *name = kp_obj_str(obj, "metadata.name");
    if (name && kp_obj_str(obj, "metadata.deletionTimestamp"))
        kp_workqueue_add(cs->q_termination, name);
    char *claim = kp_claim_for_provider_id(cs->c, kp_obj_str(obj, "spec.providerID"));
    if (claim)
        kp_workqueue_add(cs->q_lifecycle, claim), kp_workqueue_add(cs->q_consistency, claim);
    free(claim);
    enqueue_pool_of(cs, obj);
}

static void node_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    (void)old_obj;
    node_changed(ctx, new_obj);
}

static void node_added(void *ctx, const cJSON *obj)
{
    report(ctx, KP_CK_NODE, obj);
    node_changed(ctx, obj);
}

static void claim_changed(void *ctx, const cJSON *obj)
{
    enqueue_pool_of(ctx, obj);
    enqueue_static(ctx, NULL, obj);
}

static void claim_added(void *ctx, const cJSON *obj)
{
    report(ctx, KP_CK_NODECLAIM, obj);
    claim_changed(ctx, obj);
}

static void claim_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    enqueue_pool_of(ctx, new_obj);
    enqueue_static(ctx, old_obj, new_obj);
}

static void enqueue_pool(void *ctx, const char *key, const cJSON *obj)
{
    (void)obj;
    kp_workqueue_add(ctx, key);
}

/* A NodePool's change (hash, requirements, consolidateAfter) may change its
 * claims' Drifted and Consolidatable conditions. */
static void enqueue_claims_of(kp_controllers *cs, const cJSON *pool)
{
    const char *name = kp_obj_str(pool, "metadata.name");
    if (name)
        kp_informer_foreach_indexed(cs->c->informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, name, enqueue_pool,
                                    cs->q_claim_disruption);
}

/* A NodePool or node class changed: pending pods may have somewhere to go now. */
static void pool_changed(void *ctx, const cJSON *obj)
{
    kp_controllers *cs = ctx;
    (void)obj;
    kp_provisioner_trigger(cs->provisioner);
}

/* A static NodePool is looked at when it arrives, when spec.replicas
 * changes, and when it becomes Ready (Karpenter's predicates). */
static void static_pool_event(kp_controllers *cs, const cJSON *old_obj, const cJSON *obj)
{
    if (!cs->q_static || !kp_static_pool_json(obj))
        return;
    if (old_obj) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old_obj, "spec"), "replicas");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "replicas");
        bool ready_now = kp_obj_condition_is_true(obj, "Ready") && !kp_obj_condition_is_true(old_obj, "Ready");
        if (!ready_now && cJSON_IsNumber(a) && a->valuedouble == b->valuedouble)
            return;
    }
    if (kp_obj_str(obj, "metadata.name"))
        kp_workqueue_add(cs->q_static, kp_obj_str(obj, "metadata.name"));
}

static void pool_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    pool_changed(ctx, new_obj);
    enqueue_claims_of(ctx, new_obj);
    static_pool_event(ctx, old_obj, new_obj);
}

static void pool_added(void *ctx, const cJSON *obj)
{
    kp_controllers *cs = ctx;
    report(ctx, KP_CK_NODEPOOL, obj);
    kp_static_warn_gate_off(cs->c, obj);
    static_pool_event(cs, NULL, obj);
    pool_changed(ctx, obj);
}



/* A node class changed (turned Ready, say): the NodePools' NodeClassReady and
 * Ready follow, and their change triggers the provisioner. */
static void class_changed(void *ctx, const cJSON *obj)
{
    kp_controllers *cs = ctx;
    (void)obj;
    kp_informer_foreach(cs->c->informers[KP_CK_NODEPOOL], enqueue_pool, cs->q_nodepool);
}

typedef struct class_claims {
    kp_controllers *cs;
    const char *name;
} class_claims;

static void enqueue_claim_of_class(void *ctx, const char *key, const cJSON *claim)
{
    class_claims *cc = ctx;
    const char *ref = kp_obj_str(claim, "spec.nodeClassRef.name");
    if (!ref || strcmp(ref, cc->name) != 0)
        return;
    kp_claim_disruption_forget(cc->cs->claim_disruption_state, kp_obj_str(claim, "metadata.uid"));
    kp_workqueue_add(cc->cs->q_claim_disruption, key);
}

/* The cloud provider's drift (AMIs, subnets, security groups, the class hash)
 * is measured against the class: its claims are looked at again at once, as
 * Karpenter's nodeclaim.disruption controller watches node classes. */
static void class_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    kp_controllers *cs = ctx;
    (void)old_obj;
    class_changed(ctx, new_obj);
    class_claims cc = {cs, kp_obj_str(new_obj, "metadata.name")};
    if (cc.name)
        kp_informer_foreach(cs->c->informers[KP_CK_NODECLAIM], enqueue_claim_of_class, &cc);
}

/* A deleted buffer wants no room any more; the provisioner's next batch
 * writes no virtual pods for it. */
static void buffer_deleted(void *ctx, const cJSON *obj)
{
    kp_controllers *cs = ctx;
    char key[512];
    if (kp_kube_object_key(obj, key, sizeof(key)) == 0)
        kp_buffers_forget(cs->buffers, key);
}

/* NodeOverlays are evaluated together, against every NodePool and node
 * class: any change of one is the same key (Karpenter watches the three). */
static void overlays_changed(void *ctx, const cJSON *obj)
{
    (void)obj;
    kp_workqueue_add(ctx, KP_NODEOVERLAY_KEY);
}

static void overlays_updated(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    if (kp_nodeoverlay_update_matters(old_obj, new_obj))
        kp_workqueue_add(ctx, KP_NODEOVERLAY_KEY);
}

static void wire_overlays(kp_controllers *cs)
{
    kp_ctrl *c = cs->c;
    const enum kp_ctrl_kind kinds[] = {KP_CK_NODEOVERLAY, KP_CK_NODEPOOL, KP_CK_NODECLASS};
    for (size_t i = 0; cs->q_overlay && i < sizeof(kinds) / sizeof(*kinds); i++)
        if (c->informers[kinds[i]])
            kp_informer_add_handler(c->informers[kinds[i]], &(kp_informer_handler){overlays_changed, overlays_updated,
                                                                                  overlays_changed, cs->q_overlay});
}

static void wire(kp_controllers *cs)
{
    kp_ctrl *c = cs->c;
    if (cs->q_buffers) {
        kp_informer_add_queue(c->informers[KP_CK_CAPACITYBUFFER], cs->q_buffers);
        kp_informer_add_handler(c->informers[KP_CK_CAPACITYBUFFER],
                                &(kp_informer_handler){NULL, NULL, buffer_deleted, cs});
    }
    kp_informer_add_handler(c->informers[KP_CK_POD], &(kp_informer_handler){pod_changed, pod_updated, NULL, cs});
    kp_informer_add_handler(c->informers[KP_CK_NODE],
                            &(kp_informer_handler){node_added, node_updated, node_changed, cs});
    kp_informer_add_queue(c->informers[KP_CK_NODECLAIM], cs->q_lifecycle);
    kp_informer_add_queue(c->informers[KP_CK_NODECLAIM], cs->q_claim_disruption);
    kp_informer_add_queue(c->informers[KP_CK_NODECLAIM], cs->q_consistency);
    if (cs->q_health) /* NodeRepair: every Node change is a health check */
        kp_informer_add_queue(c->informers[KP_CK_NODE], cs->q_health);
    kp_informer_add_handler(c->informers[KP_CK_NODECLAIM],
                            &(kp_informer_handler){claim_added, claim_updated, claim_changed, cs});
    kp_informer_add_queue(c->informers[KP_CK_NODEPOOL], cs->q_nodepool);
    kp_informer_add_handler(c->informers[KP_CK_NODEPOOL], &(kp_informer_handler){pool_added, pool_updated, NULL, cs});
    if (cs->q_nodeclass)
        kp_informer_add_queue(c->informers[KP_CK_NODECLASS], cs->q_nodeclass);
    if (c->informers[KP_CK_NODECLASS])
        kp_informer_add_handler(c->informers[KP_CK_NODECLASS],
                                &(kp_informer_handler){class_changed, class_updated, class_changed, cs});
    wire_overlays(cs);
}

/* --------------------------------------------------------------- life cycle */

kp_controllers *kp_controllers_new(kp_ctrl *c)
{
    kp_controllers *cs = kp_xcalloc(1, sizeof(*cs));
    cs->c = c;
    kp_workqueue_opts q = {1000, 60000}; /* Karpenter's controllers: 1 s to 1 min back-off */
    cs->q_lifecycle = kp_workqueue_new(&q);
    cs->q_termination = kp_workqueue_new(&q);
    cs->q_nodepool = kp_workqueue_new(&q);
    cs->q_podevents = kp_workqueue_new(&q);
    cs->q_claim_disruption = kp_workqueue_new(&q);
    cs->q_consistency = kp_workqueue_new(&q);
    cs->consistency_state = kp_consistency_new();
    if (c->opts.node_repair)
        cs->q_health = kp_workqueue_new(&q);
    if (c->opts.static_capacity)
        cs->q_static = kp_workqueue_new(&q);
    if (c->opts.capacity_buffer && c->informers[KP_CK_CAPACITYBUFFER]) {
        cs->q_buffers = kp_workqueue_new(&q);
        cs->buffers = kp_buffers_new();
        c->buffers = cs->buffers;
    }
    cs->claim_disruption_state = kp_claim_disruption_new();
    if (kp_cloud_is_aws(c) && c->informers[KP_CK_NODECLASS])
        cs->q_nodeclass = kp_workqueue_new(&q);
    cs->disruption_state = kp_disruption_ctrl_new();
    if (c->metrics && kp_caps_ctrl_new(c, &cs->caps) < 0)
        kp_ctrl_log_error("caps", "registering karpenter_caps_headroom", NULL, -1);
    if (c->overlays && c->informers[KP_CK_NODEOVERLAY]) /* the NodeOverlay gate (runtime.c) */
        cs->q_overlay = kp_workqueue_new(&q);
    cs->provisioner = kp_provisioner_new(c);
    c->provisioner = cs->provisioner;
    wire(cs);
    return cs;
}

/* Workers per reconciler grow with the CPUs the container asked for
 * (CPU_REQUESTS), as Karpenter scales its controllers' concurrency: `per_cpu`
 * for each whole CPU, at least `per_cpu`, at most `max`. */
static int workers(const kp_ctrl *c, int per_cpu, int max)
{
    int64_t cpus = (c->opts.cpu_requests + 999) / 1000;
    int64_t n = per_cpu * (cpus > 1 ? cpus : 1);
    return (int)(n < max ? n : max);
}

int kp_controllers_start(kp_controllers *cs)
{
    kp_ctrl *c = cs->c;
    cs->lifecycle = kp_reconciler_start(c, "nodeclaim.lifecycle", cs->q_lifecycle, workers(c, 8, 64),
                                        kp_lifecycle_reconcile, NULL);
    cs->termination = kp_reconciler_start(c, "node.termination", cs->q_termination, workers(c, 8, 64),
                                          kp_termination_reconcile, NULL);
    cs->nodepool = kp_reconciler_start(c, "nodepool", cs->q_nodepool, workers(c, 2, 16), kp_nodepool_reconcile, NULL);
    cs->podevents = kp_reconciler_start(c, "nodeclaim.podevents", cs->q_podevents, workers(c, 2, 16),
                                        kp_podevents_reconcile, NULL);
    cs->claim_disruption = kp_reconciler_start(c, "nodeclaim.disruption", cs->q_claim_disruption, workers(c, 4, 32),
                                               kp_claim_disruption_reconcile, cs->claim_disruption_state);
    cs->consistency = kp_reconciler_start(c, "nodeclaim.consistency", cs->q_consistency, workers(c, 2, 16),
                                          kp_consistency_reconcile, cs->consistency_state);
    if (cs->q_health)
        cs->health = kp_reconciler_start(c, "node.health", cs->q_health, workers(c, 2, 16), kp_node_health_reconcile, NULL);
    if (cs->q_static)
        cs->static_pools = kp_reconciler_start(c, "static", cs->q_static, workers(c, 2, 10), kp_static_reconcile, NULL);
    if (cs->q_buffers)
        cs->buffer_ctrl = kp_reconciler_start(c, "capacitybuffer", cs->q_buffers, workers(c, 2, 10),
                                              kp_buffer_reconcile, cs->buffers);
    /* Every second: commands in flight move on at once; plans every poll interval. */
    cs->disruption = kp_loop_start(c, "disruption", 1000, kp_disruption_pass, cs->disruption_state);
    if (cs->q_nodeclass) {
        if (kp_aws_provider_hydrate(c->cloud) < 0)
            kp_ctrl_log_error("aws", "loading the cluster's launch templates", NULL, -1);
        cs->nodeclass = kp_reconciler_start(c, "nodeclass", cs->q_nodeclass, 2, kp_nodeclass_reconcile, NULL);
        cs->aws_upkeep = kp_loop_start(c, "aws.upkeep", 60000, kp_cloud_aws_upkeep, &cs->aws_refresh_due_ns);
    }
    if (!c->opts.disable_cluster_state_observability) /* DISABLE_CLUSTER_STATE_OBSERVABILITY */
        cs->state_metrics = kp_loop_start(c, "metrics.state", 5000, kp_state_metrics_pass, NULL); /* Karpenter: 5 s */
    if (cs->caps)
        cs->caps_headroom = kp_loop_start(c, "caps.headroom", 10000, kp_caps_headroom_pass, cs->caps);
    cs->gc = kp_loop_start(c, "nodeclaim.garbagecollection", c->opts.gc_interval_ms, kp_gc_pass, NULL);
    if (c->interruption) /* receive() waits for notices itself: no pause between passes */
        cs->interruption = kp_loop_start(c, "interruption", 0, kp_interruption_pass, NULL);
    if (cs->q_overlay) { /* one worker: each pass sees every overlay */
        cs->overlay = kp_reconciler_start(c, "nodeoverlay.controller", cs->q_overlay, 1, kp_nodeoverlay_reconcile,
                                          c->overlays);
        kp_workqueue_add(cs->q_overlay, KP_NODEOVERLAY_KEY);
    }
    int err = kp_provisioner_start(cs->provisioner);
    if (err < 0)
        return err;
    cs->started = true;
    kp_provisioner_trigger(cs->provisioner); /* pods that were pending before we led */
    return 0;
}

void kp_controllers_stop(kp_controllers *cs)
{
    if (!cs || !cs->started)
        return;
    cs->lifecycle = kp_reconciler_stop(cs->lifecycle);
    cs->termination = kp_reconciler_stop(cs->termination);
    cs->nodepool = kp_reconciler_stop(cs->nodepool);
    cs->podevents = kp_reconciler_stop(cs->podevents);
    cs->claim_disruption = kp_reconciler_stop(cs->claim_disruption);
    cs->health = kp_reconciler_stop(cs->health);
    cs->consistency = kp_reconciler_stop(cs->consistency);
    cs->static_pools = kp_reconciler_stop(cs->static_pools);
    cs->buffer_ctrl = kp_reconciler_stop(cs->buffer_ctrl);
    cs->nodeclass = kp_reconciler_stop(cs->nodeclass);
    cs->aws_upkeep = kp_loop_stop(cs->aws_upkeep);
    cs->disruption = kp_loop_stop(cs->disruption);
    cs->interruption = kp_loop_stop(cs->interruption);
    cs->gc = kp_loop_stop(cs->gc);
    cs->state_metrics = kp_loop_stop(cs->state_metrics);
    cs->caps_headroom = kp_loop_stop(cs->caps_headroom);
    cs->overlay = kp_reconciler_stop(cs->overlay);
    cs->started = false;
}

kp_controllers *kp_controllers_free(kp_controllers *cs)
{
    if (!cs)
        return NULL;
    kp_controllers_stop(cs);
    cs->c->provisioner = NULL;
    kp_provisioner_free(cs->provisioner);
    kp_workqueue_free(cs->q_lifecycle);
    kp_workqueue_free(cs->q_termination);
    kp_workqueue_free(cs->q_nodepool);
    kp_workqueue_free(cs->q_podevents);
    kp_workqueue_free(cs->q_claim_disruption);
    kp_workqueue_free(cs->q_consistency);
    cs->consistency_state = kp_consistency_free(cs->consistency_state);
    if (cs->q_health)
        kp_workqueue_free(cs->q_health);
    if (cs->q_static)
        kp_workqueue_free(cs->q_static);
    if (cs->q_buffers)
        kp_workqueue_free(cs->q_buffers);
    cs->c->buffers = NULL;
    cs->buffers = kp_buffers_free(cs->buffers);
    cs->claim_disruption_state = kp_claim_disruption_free(cs->claim_disruption_state);
    if (cs->q_nodeclass)
        kp_workqueue_free(cs->q_nodeclass);
    kp_disruption_ctrl_free(cs->disruption_state);
    cs->caps = kp_caps_ctrl_free(cs->caps);
    if (cs->q_overlay)
        kp_workqueue_free(cs->q_overlay);
    free(cs);
    return NULL;
}
