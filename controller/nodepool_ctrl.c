/* NodePool hash, counters and readiness (see nodepool_ctrl.h). */
#include "controller/nodepool_ctrl.h"
#include "api/admission.h"
#include "api/decode.h"
#include "api/nodepool_hash.h"
#include "api/quantity.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "controller/registration_health.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodepool"
#define MAX_RESOURCES 32

const char *kp_index_nodepool_label(const cJSON *obj)
{
    return kp_obj_label(obj, KP_LABEL_NODEPOOL);
}

/* ------------------------------------------------------------------ hash */

typedef struct restamp_ctx {
    kp_ctrl *c;
    const char *hash;
    int err;
} restamp_ctx;

static void restamp(void *ctx, const char *key, const cJSON *claim)
{
    restamp_ctx *r = ctx;
    const char *v = kp_obj_annotation(claim, KP_ANNOTATION_NODEPOOL_HASH_VERSION);
    if ((v && !strcmp(v, KP_NODEPOOL_HASH_VERSION)) || !kp_ctrl_owns_claim(r->c, claim))
        return;
    char patch[256];
    snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"%s\":\"%s\",\"%s\":\"%s\"}}}",
             KP_ANNOTATION_NODEPOOL_HASH, r->hash, KP_ANNOTATION_NODEPOOL_HASH_VERSION, KP_NODEPOOL_HASH_VERSION);
    int err = kp_kube_patch(r->c->kube, KP_RES_NODECLAIM, NULL, key, KP_PATCH_MERGE, patch, 0, NULL);
    if (err < 0 && err != KP_ENOTFOUND)
        r->err = err;
}

static int hash(kp_ctrl *c, const cJSON *pool, const char *name)
{
    char h[KP_NODEPOOL_HASH_LEN];
    kp_nodepool_hash(pool, h, sizeof(h));
    const char *have = kp_obj_annotation(pool, KP_ANNOTATION_NODEPOOL_HASH);
    const char *ver = kp_obj_annotation(pool, KP_ANNOTATION_NODEPOOL_HASH_VERSION);
    if (!have || strcmp(have, h) || !ver || strcmp(ver, KP_NODEPOOL_HASH_VERSION)) {
        cJSON *want = cJSON_Duplicate(pool, 1);
        kp_obj_set_annotation(want, KP_ANNOTATION_NODEPOOL_HASH, h);
        kp_obj_set_annotation(want, KP_ANNOTATION_NODEPOOL_HASH_VERSION, KP_NODEPOOL_HASH_VERSION);
        int err = kp_obj_patch(c->kube, KP_RES_NODEPOOL, pool, want, 0);
        cJSON_Delete(want);
        if (err < 0)
            return err;
    }
    restamp_ctx r = {c, h, 0};
    kp_informer_foreach_indexed(c->informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, name, restamp, &r);
    return r.err;
}

/* ------------------------------------------------------------- counters */

typedef struct usage {
    const char *names[MAX_RESOURCES];
    kp_quantity sums[MAX_RESOURCES];
    size_t n;
    int64_t nodes;
    kp_ctrl *c;
    kp_arena *arena;
} usage;

static void add_resources(usage *u, const cJSON *list)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        kp_quantity q;
        if (!cJSON_IsString(e) || kp_quantity_parse(e->valuestring, &q) < 0)
            continue;
        size_t i = 0;
        while (i < u->n && strcmp(u->names[i], e->string))
            i++;
        if (i == u->n) {
            if (u->n == MAX_RESOURCES)
                continue;
            u->names[u->n] = kp_arena_strdup(u->arena, e->string);
            u->sums[u->n++] = q;
        } else if (kp_quantity_add(u->sums[i], q, &u->sums[i]) < 0) {
            continue;
        }
    }
}

static void count_node(void *ctx, const char *key, const cJSON *node)
{
    usage *u = ctx;
    (void)key;
    if (!kp_ctrl_owns_node(u->c, node))
        return;
    u->nodes++;
    add_resources(u, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "status"), "capacity"));
}

/* NodeClaims whose node has not registered count with their own capacity. */
static void count_claim(void *ctx, const char *key, const cJSON *claim)
{
    usage *u = ctx;
    (void)key;
    if (!kp_ctrl_owns_claim(u->c, claim))
        return;
    char *node = kp_node_for_provider_id(u->c, kp_obj_str(claim, "status.providerID"), NULL);
    if (node) {
        free(node);
        return;
    }
    u->nodes++;
    add_resources(u, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "status"), "capacity"));
}

static void set_status_resources(cJSON *want, const usage *u)
{
    cJSON *status = kp_obj_ensure(want, "status");
    cJSON_DeleteItemFromObjectCaseSensitive(status, "resources");
    cJSON *res = cJSON_AddObjectToObject(status, "resources");
    for (size_t i = 0; i < u->n; i++) {
        char q[KP_QUANTITY_STRLEN];
        cJSON_AddStringToObject(res, u->names[i], kp_quantity_format(u->sums[i], q, sizeof(q)));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(status, "nodes");
    cJSON_AddNumberToObject(status, "nodes", (double)u->nodes);
}

/* ------------------------------------------------------------ conditions */

static void validation(cJSON *want, const cJSON *pool, int64_t now, kp_arena *arena)
{
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    int err = kp_admission_validate(KP_ADMIT_NODEPOOL, KP_ADMIT_CREATE, pool, NULL, &res);
    if (err < 0 || res.errors.count) {
        const char *why = err < 0 ? kp_error_last() : kp_field_errors_string(arena, &res.errors);
        kp_obj_set_condition(want, "ValidationSucceeded", "False", "NodePoolValidationFailed", why, now);
    } else {
        kp_obj_set_condition(want, "ValidationSucceeded", "True", "ValidationSucceeded", "", now);
    }
    kp_admission_result_clear(&res);
}

/* The node class must exist and be Ready where the provider has node
 * classes (EC2NodeClass); kwok has none to wait for. */
static void node_class(kp_ctrl *c, cJSON *want, const cJSON *pool, int64_t now)
{
    if (!c->informers[KP_CK_NODECLASS]) {
        kp_obj_set_condition(want, "NodeClassReady", "True", "NodeClassReady", "", now);
        kp_reghealth_reconcile_pool(c, want, NULL, now);
        return;
    }
    const char *name = kp_obj_str(pool, "spec.template.spec.nodeClassRef.name");
    cJSON *nc = name ? kp_ctrl_get(c, KP_CK_NODECLASS, name) : NULL;
    if (nc) /* Karpenter leaves the condition alone while the class is missing */
        kp_reghealth_reconcile_pool(c, want, nc, now);
    if (!nc)
        kp_obj_set_condition(want, "NodeClassReady", "False", "NodeClassNotFound", "NodeClass not found on cluster", now);
    else if (!kp_obj_condition_is_true(nc, "Ready"))
        kp_obj_set_condition(want, "NodeClassReady", "False", "NodeClassNotReady", "NodeClass is not ready", now);
    else
        kp_obj_set_condition(want, "NodeClassReady", "True", "NodeClassReady", "", now);
    cJSON_Delete(nc);
}

static void ready(cJSON *want, int64_t now)
{
    static const char *const deps[] = {"ValidationSucceeded", "NodeClassReady"};
    kp_obj_set_root_condition(want, "Ready", deps, 2, now);
}

/* karpenter_nodepools_usage and _limit. Limits are read decoded: the API
 * server keeps a bare number (cpu: 1000) as a JSON number. */
static void export_metrics(kp_ctrl *c, const char *name, const cJSON *pool, const usage *u, kp_arena *arena)
{
    if (!c->m)
        return;
    char label[256];
    for (size_t i = 0; i < u->n; i++) {
        kp_ctrl_resource_label(label, sizeof(label), u->names[i]);
        kp_ctrl_set(c->m->nodepool_usage, (const char *const[]){label, name},
                    kp_ctrl_resource_value(u->names[i], kp_quantity_milli_value(u->sums[i])));
    }
    kp_nodepool np;
    if (kp_decode_nodepool(arena, pool, &np) < 0)
        return;
    for (size_t i = 0; i < np.limits.count; i++) {
        const kp_resource *l = &np.limits.items[i];
        kp_ctrl_resource_label(label, sizeof(label), l->name);
        kp_ctrl_set(c->m->nodepool_limit, (const char *const[]){label, name},
                    kp_ctrl_resource_value(l->name, kp_quantity_milli_value(l->quantity)));
    }
}

int kp_nodepool_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state;
    cJSON *pool = kp_ctrl_get(c, KP_CK_NODEPOOL, key);
    if (!pool || !kp_ctrl_owns_pool(c, pool)) {
        cJSON_Delete(pool); /* another provider's pool: its status is not ours to write */
        return 0;
    }
    int err = kp_obj_str(pool, "metadata.deletionTimestamp") ? 0 : hash(c, pool, key);
    kp_arena *arena = kp_arena_new();
    usage u;
    memset(&u, 0, sizeof(u));
    u.c = c, u.arena = arena;
    kp_informer_foreach_indexed(c->informers[KP_CK_NODE], KP_INDEX_NODEPOOL, key, count_node, &u);
    kp_informer_foreach_indexed(c->informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, key, count_claim, &u);
    int64_t now = c->clock->now(c->clock);
    cJSON *want = cJSON_Duplicate(pool, 1);
    set_status_resources(want, &u);
    validation(want, pool, now, arena);
    node_class(c, want, pool, now);
    ready(want, now);
    int perr = kp_obj_patch(c->kube, KP_RES_NODEPOOL, pool, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    if (perr == KP_ECONFLICT)
        *requeue_ms = 100;
    else if (perr < 0 && perr != KP_ENOTFOUND && !err)
        err = perr;
    export_metrics(c, key, pool, &u, arena);
    cJSON_Delete(want);
    cJSON_Delete(pool);
    kp_arena_free(arena);
    return err;
}
