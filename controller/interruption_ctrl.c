/* Acting on cloud interruption notices (see interruption_ctrl.h). */
#include "controller/interruption_ctrl.h"
#include "api/wellknown.h"
#include "cloud/interruption.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/eventq.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <stdlib.h>
#include <string.h>

#define LOGGER "interruption"
#define WAIT_SECONDS 2 /* short, so stopping the loop is quick */

typedef struct match_ctx {
    const kp_ctrl *c;
    const char *id;
    char **keys;
    size_t n, cap;
} match_ctx;

static bool id_matches(const char *provider_id, const char *id)
{
    size_t lp = strlen(provider_id), li = strlen(id);
    if (li == 0 || lp <= li || strcmp(provider_id + lp - li, id) != 0) return false;
    char before = provider_id[lp - li - 1];
    return before == '/'; /* "aws:///zone/i-1" and "kwok://name" both end in "/" + id */
}

static void match_claim(void *ctx, const char *key, const cJSON *obj)
{
    match_ctx *m = ctx;
    const char *pid = kp_obj_str(obj, "status.providerID");
    if (!pid || !id_matches(pid, m->id) || !kp_ctrl_owns_claim(m->c, obj)) return;
    if (m->n + 2 > m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->keys = kp_xrealloc(m->keys, m->cap * sizeof(*m->keys));
    }
    m->keys[m->n++] = kp_xstrdup(key);
    m->keys[m->n] = NULL;
}

char **kp_interruption_claims(kp_ctrl *c, const char *instance_id)
{
    match_ctx m = {c, instance_id, NULL, 0, 0};
    kp_informer_foreach(c->informers[KP_CK_NODECLAIM], match_claim, &m);
    if (!m.keys) m.keys = kp_xcalloc(1, sizeof(*m.keys));
    return m.keys;
}

/* Karpenter's event reason and message per kind. */
static void event_for(enum kp_interruption_kind kind, const char **reason, const char **message)
{
    switch (kind) {
    case KP_INTERRUPT_SPOT:
        *reason = "SpotInterrupted", *message = "Spot interruption warning was triggered";
        return;
    case KP_INTERRUPT_SCHEDULED_CHANGE:
        *reason = "InstanceUnhealthy", *message = "An unhealthy warning was triggered for the instance";
        return;
    case KP_INTERRUPT_STOPPING:
        *reason = "InstanceStopping", *message = "Instance is stopping";
        return;
    case KP_INTERRUPT_TERMINATING:
        *reason = "InstanceTerminating", *message = "Instance is terminating";
        return;
    case KP_INTERRUPT_REBALANCE:
        *reason = "SpotRebalanceRecommendation", *message = "Spot rebalance recommendation was triggered";
        return;
    case KP_INTERRUPT_CAPACITY_RESERVATION:
        *reason = "CapacityReservationInstanceInterrupted",
        *message = "Capacity Reservation interruption warning was triggered";
        return;
    case KP_INTERRUPT_NOOP:
        break;
    }
    *reason = "Interrupted", *message = "Interruption notice";
}

/* On the claim and on its Node; `node_message` (NULL: the same) where
 * Karpenter words the Node's event differently. */
static void post_both(kp_ctrl *c, const cJSON *claim, const char *type, const char *reason, const char *message,
                      const char *node_message)
{
    kp_eventq_post(c->events, KP_RES_NODECLAIM, claim, type, reason, message);
    const char *node_name = kp_obj_str(claim, "status.nodeName");
    cJSON *node = node_name ? kp_ctrl_get(c, KP_CK_NODE, node_name) : NULL;
    if (node) kp_eventq_post(c->events, KP_RES_NODE, node, type, reason, node_message ? node_message : message);
    cJSON_Delete(node);
}

static void post(kp_ctrl *c, const cJSON *claim, const char *type, const char *reason, const char *message)
{
    post_both(c, claim, type, reason, message, NULL);
}

/* Events, then the delete (termination does the rest). */
/* Karpenter's category label when `m` comes from the EC2 instance-status
 * checks (cloud/aws/instancestatus.h names the notice by its message kind),
 * else NULL. */
static const char *health_category(const kp_interruption *m)
{
    static const char *const kinds[][2] = {
        {"instance_status", "InstanceStatus"}, {"system_status", "SystemStatus"}, {"event_status", "EventStatus"}};
    for (size_t i = 0; m->kind_name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(m->kind_name, kinds[i][0]))
            return kinds[i][1];
    return NULL;
}

static int act_on_claim(kp_ctrl *c, const kp_interruption *m, const char *key)
{
    cJSON *claim = kp_ctrl_get(c, KP_CK_NODECLAIM, key);
    if (!claim) return 0;
    const char *reason, *message;
    event_for(m->kind, &reason, &message);
    post(c, claim, m->kind == KP_INTERRUPT_REBALANCE ? "Normal" : "Warning", reason, message);
    int err = 0;
    if (kp_interruption_kind_deletes(m->kind) && !kp_obj_str(claim, "metadata.deletionTimestamp")) {
        post_both(c, claim, "Warning", "TerminatingOnInterruption", "Interruption triggered termination for the NodeClaim",
                  "Interruption triggered termination for the Node");
        err = kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, key, NULL);
        if (err == KP_ENOTFOUND) err = 0;
        if (err == 0) {
            const char *labels[] = {m->kind_name, kp_obj_label(claim, "karpenter.sh/nodepool"),
                                    kp_ctrl_capacity_type(c, claim), NULL};
            kp_ctrl_count(c->m->nodeclaims_disrupted, labels);
            if (health_category(m)) /* once per instance: later polls find the claim deleting */
                kp_ctrl_count(c->m->instance_status_unhealthy, (const char *const[]){health_category(m)});
            KP_LOG(KP_LOG_INFO, LOGGER, "deleting nodeclaim on interruption", "NodeClaim", key, "messageKind",
                   m->kind_name, "messageID", m->id ? m->id : "");
        }
    }
    if (c->interruption->ops->observe)
        c->interruption->ops->observe(c->interruption, m, kp_obj_label(claim, "node.kubernetes.io/instance-type"),
                                      kp_obj_label(claim, "topology.kubernetes.io/zone"),
                                      kp_obj_label(claim, KP_LABEL_CAPACITY_TYPE),
                                      kp_obj_label(claim, "karpenter.k8s.aws/capacity-reservation-id"));
    cJSON_Delete(claim);
    return err;
}

static int handle(kp_ctrl *c, const kp_interruption *m)
{
    const char *labels[] = {m->kind_name, NULL};
    bool queued = !health_category(m); /* health checks are polled, not queue messages */
    if (queued)
        kp_ctrl_count(c->m->interruption_messages, labels);
    if (m->parse_error)
        KP_LOG(KP_LOG_ERROR, LOGGER, "interruption message did not parse; dropped", "error", m->parse_error);
    int err = 0;
    for (uint32_t i = 0; i < m->n_ids && !err; i++) {
        char **keys = kp_interruption_claims(c, m->instance_ids[i]);
        for (size_t k = 0; keys[k]; k++) {
            if (!err) err = act_on_claim(c, m, keys[k]);
            free(keys[k]);
        }
        free(keys);
    }
    if (err < 0) return err;
    if (m->start_ns > 0 && queued)
        kp_ctrl_observe(c->m->interruption_queue_duration, NULL,
                        (double)(c->clock->now(c->clock) - m->start_ns) / 1e9);
    err = c->interruption->ops->ack(c->interruption, m);
    if (err == 0 && queued) kp_ctrl_count(c->m->interruption_deleted, NULL);
    return err;
}

int kp_interruption_pass(kp_ctrl *c, void *state)
{
    (void)state;
    if (!c->interruption) return 0;
    kp_arena *arena = kp_arena_new();
    kp_interruption *msgs = NULL;
    uint32_t n = 0;
    int err = c->interruption->ops->receive(c->interruption, arena, &msgs, &n, WAIT_SECONDS);
    for (uint32_t i = 0; err == 0 && i < n; i++) {
        int e = handle(c, &msgs[i]);
        if (e < 0) kp_ctrl_log_error(LOGGER, "handling an interruption message", msgs[i].id, e);
    }
    kp_arena_free(arena);
    return err;
}
