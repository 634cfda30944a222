/* EC2NodeClass status, hash and finalizer (see nodeclass_ctrl.h). */
#include "controller/nodeclass_ctrl.h"
#include "api/decode.h"
#include "base/error.h"
#include "base/log.h"
#include "cloud/aws/nodeclass.h"
#include "cloud/aws/provider.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "nodeclass"
#define WAIT_FOR_CLAIMS_MS 5000

int kp_nodeclass_lookup(void *ctx, const char *name, kp_arena *arena, const kp_ec2nodeclass **out)
{
    kp_ctrl *c = ctx;
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLASS, name);
    if (!obj) return kp_error_set(KP_ENOTFOUND, "EC2NodeClass %s not found", name);
    kp_ec2nodeclass *nc = kp_arena_alloc(arena, sizeof(*nc));
    int err = kp_decode_ec2nodeclass(arena, obj, nc);
    cJSON_Delete(obj);
    if (err < 0) return err;
    *out = nc;
    return 0;
}

typedef struct users_ctx {
    const char *name;
    int n;
} users_ctx;

static void count_user(void *ctx, const char *key, const cJSON *claim)
{
    (void)key;
    users_ctx *u = ctx;
    const char *ref = kp_obj_str(claim, "spec.nodeClassRef.name");
    const char *kind = kp_obj_str(claim, "spec.nodeClassRef.kind");
    if (ref && !strcmp(ref, u->name) && (!kind || !strcmp(kind, "EC2NodeClass"))) u->n++;
}

/* Deleting: NodeClaims first (Karpenter waits for them), then the provider's
 * leftovers, then the finalizer. */
static int finalize(kp_ctrl *c, const cJSON *obj, const char *name, int64_t *requeue_ms)
{
    if (!kp_obj_has_finalizer(obj, KP_NODECLASS_FINALIZER)) return 0;
    users_ctx u = {name, 0};
    kp_informer_foreach(c->informers[KP_CK_NODECLAIM], count_user, &u);
    if (u.n > 0) {
        *requeue_ms = WAIT_FOR_CLAIMS_MS;
        return 0;
    }
    int err = kp_aws_provider_delete_nodeclass(c->cloud, name, kp_obj_str(obj, "metadata.uid"));
    if (err < 0) return err;
    cJSON *want = cJSON_Duplicate(obj, 1);
    kp_obj_remove_finalizer(want, KP_NODECLASS_FINALIZER);
    err = kp_obj_patch(c->kube, KP_RES_EC2NODECLASS, obj, want, KP_OBJ_LOCK);
    cJSON_Delete(want);
    return err == KP_KUBE_UNCHANGED || err == KP_ENOTFOUND ? 0 : err;
}

typedef struct restamp_ctx {
    kp_ctrl *c;
    const char *name, *hash;
    int err;
} restamp_ctx;

static void restamp_one(void *ctx, const char *key, const cJSON *claim)
{
    restamp_ctx *r = ctx;
    const char *v = kp_obj_annotation(claim, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION);
    const char *ref = kp_obj_str(claim, "spec.nodeClassRef.name");
    if (!v || !strcmp(v, KP_AWS_NODECLASS_HASH_VERSION) || !ref || strcmp(ref, r->name) ||
        !kp_ctrl_owns_claim(r->c, claim))
        return;
    char patch[256];
    if (kp_obj_condition(claim, "Drifted")) /* drifted stays drifted: only the version moves */
        snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"%s\":\"%s\"}}}",
                 KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION, KP_AWS_NODECLASS_HASH_VERSION);
    else
        snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"%s\":\"%s\",\"%s\":\"%s\"}}}",
                 KP_AWS_ANNOTATION_NODECLASS_HASH, r->hash, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION,
                 KP_AWS_NODECLASS_HASH_VERSION);
    int err = kp_kube_patch(r->c->kube, KP_RES_NODECLAIM, NULL, key, KP_PATCH_MERGE, patch, 0, NULL);
    if (err < 0 && err != KP_ENOTFOUND) r->err = err;
}

int kp_nodeclass_restamp_claims(kp_ctrl *c, const char *name, const char *hash)
{
    restamp_ctx r = {c, name, hash, 0};
    if (c->informers[KP_CK_NODECLAIM]) kp_informer_foreach(c->informers[KP_CK_NODECLAIM], restamp_one, &r);
    return r.err;
}

/* Finalizer and hash annotations on the object (and on the claims that carry
 * another hash version), then the resolved status. */
static int upkeep(kp_ctrl *c, const cJSON *obj, const kp_ec2nodeclass *nc, kp_arena *arena)
{
    cJSON *want = cJSON_Duplicate(obj, 1);
    char hash[24];
    snprintf(hash, sizeof(hash), "%llu", (unsigned long long)kp_aws_nodeclass_hash(nc));
    kp_obj_add_finalizer(want, KP_NODECLASS_FINALIZER);
    kp_obj_set_annotation(want, KP_AWS_ANNOTATION_NODECLASS_HASH, hash);
    kp_obj_set_annotation(want, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION, KP_AWS_NODECLASS_HASH_VERSION);
    int err = kp_obj_patch(c->kube, KP_RES_EC2NODECLASS, obj, want, KP_OBJ_LOCK);
    if (err >= 0) err = kp_nodeclass_restamp_claims(c, kp_obj_str(obj, "metadata.name"), hash);
    cJSON *status = NULL;
    if (err >= 0) /* written or KP_KUBE_UNCHANGED */
        err = kp_aws_provider_resolve_nodeclass(c->cloud, nc, arena, &status);
    if (err >= 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(want, "status");
        cJSON_AddItemToObject(want, "status", status);
        err = kp_obj_patch(c->kube, KP_RES_EC2NODECLASS, obj, want, KP_KUBE_STATUS);
    }
    cJSON_Delete(want);
    return err == KP_KUBE_UNCHANGED ? 0 : err;
}

int kp_nodeclass_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state;
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLASS, key);
    if (!obj) return 0;
    int err;
    if (kp_obj_str(obj, "metadata.deletionTimestamp")) {
        err = finalize(c, obj, key, requeue_ms);
    } else {
        kp_arena *arena = kp_arena_new();
        kp_ec2nodeclass nc;
        err = kp_decode_ec2nodeclass(arena, obj, &nc);
        if (err == 0) err = upkeep(c, obj, &nc, arena);
        kp_arena_free(arena);
        /* AMI_REFRESH_INTERVAL / SUBNET_REFRESH_INTERVAL: a class is resolved
         * again (images, subnets and the rest) at the shorter of the two. */
        *requeue_ms = c->opts.ami_refresh_ms < c->opts.subnet_refresh_ms ? c->opts.ami_refresh_ms
                                                                         : c->opts.subnet_refresh_ms;
    }
    cJSON_Delete(obj);
    return err < 0 ? err : 0;
}
