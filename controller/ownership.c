/* Ownership of cached objects (see ownership.h). */
#include "controller/ownership.h"
#include "api/wellknown.h"
#include "base/log.h"
#include "cloud/ownership.h"
#include "controller/lifecycle.h"
#include "kube/objutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "controller"

const char *kp_ctrl_pool_foreign(const kp_ctrl *c, const cJSON *pool, char *buf, size_t size)
{
    return kp_cloud_pool_foreign(c->cloud, kp_obj_str(pool, "spec.template.spec.nodeClassRef.group"),
                                 kp_obj_str(pool, "spec.template.spec.nodeClassRef.kind"), buf, size);
}

const char *kp_ctrl_claim_foreign(const kp_ctrl *c, const cJSON *claim, char *buf, size_t size)
{
    return kp_cloud_claim_foreign(c->cloud, kp_obj_str(claim, "spec.nodeClassRef.group"),
                                  kp_obj_str(claim, "spec.nodeClassRef.kind"),
                                  kp_obj_str(claim, "status.providerID"), buf, size);
}

/* Our provider-ID scheme is not enough: another provider on the same cloud
 * (NodeClaims of another node class whose instances are EC2's) makes Nodes
 * with the same scheme. The NodeClaim holding the provider ID says whose the
 * Node is; without one, the NodePool the Node is labelled with. */
static const char *owner_foreign(const kp_ctrl *c, const char *provider_id, const char *pool_name, char *buf,
                                 size_t size)
{
    char why[320];
    char *key = kp_claim_for_provider_id(c, provider_id);
    cJSON *owner = key ? kp_ctrl_get(c, KP_CK_NODECLAIM, key) : NULL;
    const char *kind = "NodeClaim", *name = key;
    if (!owner && pool_name) {
        owner = kp_ctrl_get(c, KP_CK_NODEPOOL, pool_name);
        kind = "NodePool", name = pool_name;
    }
    bool foreign = owner && (!strcmp(kind, "NodeClaim") ? kp_ctrl_claim_foreign(c, owner, why, sizeof(why))
                                                         : kp_ctrl_pool_foreign(c, owner, why, sizeof(why)));
    if (foreign)
        snprintf(buf, size, "its %s %s is another provider's: %s", kind, name, why);
    cJSON_Delete(owner);
    free(key);
    return foreign ? buf : NULL;
}

const char *kp_ctrl_node_id_foreign(const kp_ctrl *c, const char *provider_id, const char *pool_name, char *buf,
                                    size_t size)
{
    const char *why = kp_cloud_node_foreign(c->cloud, provider_id, buf, size);
    return why ? why : owner_foreign(c, provider_id, pool_name, buf, size);
}

const char *kp_ctrl_node_foreign(const kp_ctrl *c, const cJSON *node, char *buf, size_t size)
{
    return kp_ctrl_node_id_foreign(c, kp_obj_str(node, "spec.providerID"), kp_obj_label(node, KP_LABEL_NODEPOOL),
                                   buf, size);
}

bool kp_ctrl_owns_pool(const kp_ctrl *c, const cJSON *pool)
{
    char buf[320];
    return pool && !kp_ctrl_pool_foreign(c, pool, buf, sizeof(buf));
}

bool kp_ctrl_owns_claim(const kp_ctrl *c, const cJSON *claim)
{
    char buf[320];
    return claim && !kp_ctrl_claim_foreign(c, claim, buf, sizeof(buf));
}

bool kp_ctrl_owns_node(const kp_ctrl *c, const cJSON *node)
{
    char buf[320];
    return node && !kp_ctrl_node_foreign(c, node, buf, sizeof(buf));
}

/* ------------------------------------------------------------ reporting */

static const char *kind_name(enum kp_ctrl_kind kind)
{
    return kind == KP_CK_NODEPOOL ? "NodePool" : kind == KP_CK_NODECLAIM ? "NodeClaim" : "Node";
}

void kp_ctrl_report_foreign_one(kp_ctrl *c, enum kp_ctrl_kind kind, const char *key, const cJSON *obj)
{
    char buf[320];
    const char *why = kind == KP_CK_NODEPOOL    ? kp_ctrl_pool_foreign(c, obj, buf, sizeof(buf))
                      : kind == KP_CK_NODECLAIM ? kp_ctrl_claim_foreign(c, obj, buf, sizeof(buf))
                                                : kp_ctrl_node_foreign(c, obj, buf, sizeof(buf));
    if (!why)
        return;
    /* Nodes nobody launched (no provider ID, say a control-plane node) are the
     * normal case, not worth a line each. */
    if (kind == KP_CK_NODE && !kp_obj_str(obj, "spec.providerID") && !kp_obj_label(obj, "karpenter.sh/nodepool"))
        return;
    const char *uid = kp_obj_str(obj, "metadata.uid");
    char id[400];
    snprintf(id, sizeof(id), "%s/%s/%s", kind_name(kind), key, uid ? uid : "");
    pthread_mutex_lock(&c->foreign_mu);
    bool first = !kp_strmap_has(&c->foreign_seen, id) && c->foreign_seen.count < KP_CTRL_FOREIGN_MAX;
    if (first)
        kp_strmap_put(&c->foreign_seen, id, (void *)1);
    pthread_mutex_unlock(&c->foreign_mu);
    if (first)
        KP_LOG(KP_LOG_INFO, LOGGER, "ignoring an object another provider owns", kind_name(kind), key, "reason", why);
}

typedef struct report_ctx {
    kp_ctrl *c;
    enum kp_ctrl_kind kind;
} report_ctx;

static void report_one(void *ctx, const char *key, const cJSON *obj)
{
    report_ctx *r = ctx;
    kp_ctrl_report_foreign_one(r->c, r->kind, key, obj);
}

void kp_ctrl_report_foreign(kp_ctrl *c)
{
    static const enum kp_ctrl_kind kinds[] = {KP_CK_NODEPOOL, KP_CK_NODECLAIM, KP_CK_NODE};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        report_ctx r = {c, kinds[i]};
        if (c->informers[kinds[i]])
            kp_informer_foreach(c->informers[kinds[i]], report_one, &r);
    }
}
