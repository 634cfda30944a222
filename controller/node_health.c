/* Node auto-repair (see node_health.h). */
#include "controller/node_health.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "node.health"
#define BLOCKED_RECHECK_MS (5 * 60 * 1000)
#define BLOCKED_EVENT_NS (15LL * 60 * KP_NS_PER_SEC)

int64_t kp_node_health_allowed(const char *threshold, int64_t total)
{
    char *end;
    errno = 0;
    long long n = strtoll(threshold ? threshold : "", &end, 10);
    if (end == threshold || errno || n < 0)
        return -1;
    if (*end == '%' && !end[1])
        return n > 100 ? -1 : (total * n + 99) / 100; /* rounded up, as intstr scaling with roundUp */
    return *end ? -1 : n;
}

/* The matching policy whose toleration ends first; NULL when healthy. */
static const kp_repair_policy *unhealthy(const kp_ctrl *c, const cJSON *node, int64_t *until_ns)
{
    const kp_repair_policy *found = NULL;
    const kp_cloud_provider_ops *ops = c->cloud->ops;
    for (size_t i = 0; i < ops->n_repair_policies; i++) {
        const kp_repair_policy *p = &ops->repair_policies[i];
        const char *status = kp_obj_condition(node, p->type);
        if (!status || strcmp(status, p->status) != 0)
            continue;
        int64_t end = kp_obj_condition_since(node, p->type) + p->toleration_ns;
        if (!found || end < *until_ns)
            found = p, *until_ns = end;
    }
    return found;
}

typedef struct pool_health {
    const kp_ctrl *c;
    int64_t total, unhealthy;
} pool_health;

static void count_node(void *ctx, const char *key, const cJSON *node)
{
    pool_health *h = ctx;
    int64_t until;
    (void)key;
    if (!kp_ctrl_owns_node(h->c, node))
        return;
    h->total++;
    h->unhealthy += unhealthy(h->c, node, &until) != NULL;
}

/* Karpenter's isNodePoolHealthy: unhealthy nodes at most the threshold. */
static bool pool_healthy(const kp_ctrl *c, const char *pool)
{
    pool_health h = {c, 0, 0};
    kp_informer_foreach_indexed(c->informers[KP_CK_NODE], KP_INDEX_NODEPOOL, pool, count_node, &h);
    int64_t allowed = kp_node_health_allowed(c->opts.node_repair_threshold, h.total);
    return h.unhealthy <= allowed;
}

/* Karpenter's dedupe: once per 15 minutes per object, whatever the message. */
static void post_blocked(kp_ctrl *c, enum kp_kube_res res, const cJSON *obj, const char *msg)
{
    const char *uid = kp_obj_str(obj, "metadata.uid");
    char key[320];
    snprintf(key, sizeof(key), "NodeRepairBlocked/%s", uid ? uid : kp_obj_str(obj, "metadata.name"));
    kp_eventq_post_dedupe(c->events, res, obj, "Warning", "NodeRepairBlocked", msg, key, BLOCKED_EVENT_NS);
}

static void blocked(kp_ctrl *c, const cJSON *node, const cJSON *claim, const char *pool)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "more than %s nodes are unhealthy in the nodepool", c->opts.node_repair_threshold);
    post_blocked(c, KP_RES_NODE, node, msg);
    post_blocked(c, KP_RES_NODECLAIM, claim, msg);
    cJSON *np = kp_ctrl_get(c, KP_CK_NODEPOOL, pool);
    if (np)
        post_blocked(c, KP_RES_NODEPOOL, np, msg);
    cJSON_Delete(np);
}

/* "AcceleratedHardwareReady" -> "accelerated_hardware_ready" (Karpenter's label value). */
static void snake_case(const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; in[i] && n + 2 < size; i++) {
        if (isupper((unsigned char)in[i]) && i > 0)
            out[n++] = '_';
        out[n++] = (char)tolower((unsigned char)in[i]);
    }
    out[n] = '\0';
}

/* Forceful: the termination timestamp is now, so the drain does not wait. */
static int repair(kp_ctrl *c, const cJSON *node, const cJSON *claim, const char *claim_key,
                  const kp_repair_policy *policy)
{
    if (kp_obj_str(claim, "metadata.deletionTimestamp"))
        return 0;
    char now[32];
    kp_time_format_rfc3339(c->clock->now(c->clock), now, sizeof(now));
    cJSON *want = cJSON_Duplicate(claim, 1);
    kp_obj_set_annotation(want, KP_ANNOTATION_TERMINATION_TIMESTAMP, now);
    int err = kp_obj_patch(c->kube, KP_RES_NODECLAIM, claim, want, 0);
    cJSON_Delete(want);
    if (err >= 0 || err == KP_KUBE_UNCHANGED)
        err = kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, claim_key, NULL);
    if (err < 0)
        return err == KP_ENOTFOUND ? 0 : err;
    const char *pool = kp_obj_label(node, KP_LABEL_NODEPOOL), *ct = kp_obj_label(node, KP_LABEL_CAPACITY_TYPE);
    const char *image = kp_obj_str(claim, "status.imageID");
    char cond[96];
    snake_case(policy->type, cond, sizeof(cond));
    KP_LOG(KP_LOG_INFO, LOGGER, "deleting unhealthy node", "Node", kp_obj_str(node, "metadata.name"), "NodeClaim",
           claim_key, "condition", policy->type, "status", policy->status);
    kp_ctrl_count(c->m ? c->m->nodeclaims_disrupted : NULL, (const char *const[]){"unhealthy", pool, ct});
    kp_ctrl_count(c->m ? c->m->nodeclaims_unhealthy_disrupted : NULL,
                  (const char *const[]){cond, pool, ct, image ? image : ""});
    return 0;
}

static int check(kp_ctrl *c, const cJSON *node, int64_t *requeue_ms)
{
    int64_t until = 0, now = c->clock->now(c->clock);
    const kp_repair_policy *policy = unhealthy(c, node, &until);
    if (!policy)
        return 0;
    if (now < until) {
        *requeue_ms = (until - now) / KP_NS_PER_MS + 1;
        return 0;
    }
    char *claim_key = kp_claim_for_provider_id(c, kp_obj_str(node, "spec.providerID"));
    cJSON *claim = claim_key ? kp_ctrl_get(c, KP_CK_NODECLAIM, claim_key) : NULL;
    const char *pool = kp_obj_label(node, KP_LABEL_NODEPOOL);
    int err = 0;
    if (claim && kp_ctrl_owns_claim(c, claim) && pool) {
        if (pool_healthy(c, pool))
            err = repair(c, node, claim, claim_key, policy);
        else
            blocked(c, node, claim, pool), *requeue_ms = BLOCKED_RECHECK_MS;
    }
    cJSON_Delete(claim);
    free(claim_key);
    return err;
}

int kp_node_health_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state;
    cJSON *node = kp_ctrl_get(c, KP_CK_NODE, key);
    int err = 0;
    if (node && c->opts.node_repair && kp_ctrl_owns_node(c, node) && !kp_obj_str(node, "metadata.deletionTimestamp"))
        err = check(c, node, requeue_ms);
    cJSON_Delete(node);
    return err;
}
