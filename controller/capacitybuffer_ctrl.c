/* CapacityBuffers: status, the store of ready ones, Provisioning (see capacitybuffer_ctrl.h). */
#include "controller/capacitybuffer_ctrl.h"
#include "api/capacitybuffer.h"
#include "api/decode.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/objutil.h"
#include "controller/provisioner.h"
#include "kube/ops.h"
#include "kube/strmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "capacitybuffer"
#define REQUEUE_MS 30000 /* Karpenter resolves every buffer again after 30 s */

/* A ready buffer: the object (with the status we wrote) and one chunk's
 * template, {"template": {metadata, spec}}. */
typedef struct entry {
    cJSON *buffer;
    cJSON *template;
} entry;

struct kp_buffers {
    pthread_mutex_t mu;
    kp_strmap ready; /* "namespace/name" -> entry */
};

static void entry_free(void *v)
{
    entry *e = v;
    if (!e)
        return;
    cJSON_Delete(e->buffer);
    cJSON_Delete(e->template);
    free(e);
}

kp_buffers *kp_buffers_new(void)
{
    kp_buffers *b = kp_xcalloc(1, sizeof(*b));
    pthread_mutex_init(&b->mu, NULL);
    return b;
}

kp_buffers *kp_buffers_free(kp_buffers *b)
{
    if (!b)
        return NULL;
    kp_strmap_clear(&b->ready, entry_free);
    pthread_mutex_destroy(&b->mu);
    free(b);
    return NULL;
}

static void store(kp_buffers *b, const char *key, entry *e)
{
    pthread_mutex_lock(&b->mu);
    entry_free(e ? kp_strmap_put(&b->ready, key, e) : kp_strmap_remove(&b->ready, key));
    pthread_mutex_unlock(&b->mu);
}

void kp_buffers_forget(kp_buffers *b, const char *key)
{
    if (b && key)
        store(b, key, NULL);
}

/* ------------------------------------------------------------- lookups */

typedef struct lookup_ctx {
    kp_ctrl *c;
    cJSON *template; /* what the lookup found: {"template": ...} */
} lookup_ctx;

static void keep_template(lookup_ctx *l, const cJSON *template)
{
    cJSON_Delete(l->template);
    l->template = cJSON_CreateObject();
    cJSON_AddItemToObject(l->template, "template", cJSON_Duplicate(template, 1));
}

static int get(kp_ctrl *c, enum kp_kube_res res, const char *ns, const char *name, cJSON **out)
{
    int err = kp_kube_get(c->kube, res, ns, name, out);
    if (err == KP_ENOTFOUND)
        return kp_error_set(KP_ENOTFOUND, "%s \"%s\" not found", kp_kube_resource_get(res)->plural, name);
    return err;
}

static int pod_template(void *ctx, const char *ns, const char *name, kp_arena *arena, kp_pod *out, int64_t *generation)
{
    lookup_ctx *l = ctx;
    cJSON *obj = NULL;
    int err = get(l->c, KP_RES_PODTEMPLATE, ns, name, &obj);
    if (!err)
        err = kp_decode_pod_template_object(arena, obj, out);
    if (!err) {
        const cJSON *gen = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                            "generation");
        *generation = cJSON_IsNumber(gen) ? (int64_t)gen->valuedouble : 0;
        keep_template(l, cJSON_GetObjectItemCaseSensitive(obj, "template"));
    }
    cJSON_Delete(obj);
    return err;
}

static int workload(void *ctx, const char *ns, const char *kind, const char *name, kp_arena *arena, kp_workload *out)
{
    lookup_ctx *l = ctx;
    enum kp_kube_res res = !strcmp(kind, "Deployment") ? KP_RES_DEPLOYMENT
                           : !strcmp(kind, "StatefulSet") ? KP_RES_STATEFULSET : KP_RES_REPLICASET;
    enum kp_kind k = res == KP_RES_DEPLOYMENT ? KP_KIND_DEPLOYMENT
                     : res == KP_RES_STATEFULSET ? KP_KIND_STATEFULSET : KP_KIND_REPLICASET;
    cJSON *obj = NULL;
    int err = get(l->c, res, ns, name, &obj);
    if (!err)
        err = kp_decode_workload(arena, obj, k, out);
    if (!err)
        keep_template(l, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "template"));
    cJSON_Delete(obj);
    return err;
}

/* ------------------------------------------------------------- status */

static void put(cJSON *o, const char *key, cJSON *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    if (value)
        cJSON_AddItemToObject(o, key, value);
}

/* What Karpenter writes: on success the chunks and (for a podTemplateRef)
 * the template used; ReadyForProvisioning always; the strategy copied. */
static void desired_status(kp_ctrl *c, cJSON *want, const kp_buffer_resolved *r, bool scalable)
{
    cJSON *status = kp_obj_ensure(want, "status");
    if (r->ready && r->pod_template) {
        cJSON *ref = cJSON_CreateObject();
        cJSON_AddStringToObject(ref, "name", r->pod_template);
        put(status, "podTemplateRef", ref);
        put(status, "podTemplateGeneration", cJSON_CreateNumber((double)r->pod_template_generation));
    } else if (r->ready && scalable) {
        put(status, "podTemplateRef", NULL);
        put(status, "podTemplateGeneration", NULL);
    }
    if (r->ready)
        put(status, "replicas", cJSON_CreateNumber(r->replicas));
    kp_obj_set_condition(want, KP_BUFFER_READY_FOR_PROVISIONING, r->ready ? "True" : "False", r->reason, r->message,
                         c->clock->now(c->clock));
    const char *strategy = kp_obj_str(want, "spec.provisioningStrategy");
    put(status, "provisioningStrategy", strategy ? cJSON_CreateString(strategy) : NULL);
}

/* Resolve `obj`; *template gets the chunk's template when it is ready. */
static int resolve(kp_ctrl *c, const cJSON *obj, kp_arena *arena, kp_buffer_resolved *r, bool *scalable,
                   cJSON **template)
{
    kp_capacity_buffer cb;
    lookup_ctx l = {c, NULL};
    kp_buffer_lookup lookup = {pod_template, workload, &l};
    int err = kp_decode_capacity_buffer(arena, obj, &cb);
    if (err < 0) { /* the API server's schema should have stopped it */
        memset(r, 0, sizeof(*r));
        r->reason = "ResolutionFailed";
        r->message = kp_arena_strdup(arena, kp_error_last());
        return 0;
    }
    *scalable = cb.has_scalable_ref;
    err = kp_capacity_buffer_resolve(&cb, &lookup, arena, r);
    if (r->ready)
        *template = l.template, l.template = NULL;
    cJSON_Delete(l.template);
    return err;
}

int kp_buffer_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    kp_buffers *b = state;
    cJSON *obj = kp_ctrl_get(c, KP_CK_CAPACITYBUFFER, key), *template = NULL;
    if (!obj) {
        kp_buffers_forget(b, key);
        return 0;
    }
    kp_arena *arena = kp_arena_new();
    kp_buffer_resolved r;
    bool scalable = false;
    int err = resolve(c, obj, arena, &r, &scalable, &template);
    cJSON *want = cJSON_Duplicate(obj, 1);
    desired_status(c, want, &r, scalable);
    int perr = kp_obj_patch(c->kube, KP_RES_CAPACITYBUFFER, obj, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
    if (perr == KP_ECONFLICT || perr == KP_ENOTFOUND)
        *requeue_ms = 1000;
    else if (perr < 0 && perr != KP_KUBE_UNCHANGED && !err)
        err = perr;
    if (r.ready) {
        entry *e = kp_xcalloc(1, sizeof(*e));
        e->buffer = want, e->template = template, want = NULL;
        store(b, key, e);
        kp_provisioner_trigger(c->provisioner);
    } else {
        store(b, key, NULL);
        KP_LOG(KP_LOG_DEBUG, LOGGER, "buffer not ready for provisioning", "CapacityBuffer", key, "reason", r.reason,
               "message", r.message ? r.message : "");
    }
    if (!*requeue_ms)
        *requeue_ms = REQUEUE_MS;
    cJSON_Delete(want);
    cJSON_Delete(obj);
    kp_arena_free(arena);
    return err;
}

/* ------------------------------------------------------- virtual pods */

typedef struct pods_ctx {
    kp_arena *arena;
    const kp_pod **pods;
    size_t n, cap;
    size_t left_out;
} pods_ctx;

static void add_pods(void *ctx, const char *key, void *value)
{
    pods_ctx *p = ctx;
    const entry *e = value;
    kp_capacity_buffer cb;
    kp_pod template;
    if (kp_decode_capacity_buffer(p->arena, e->buffer, &cb) < 0 ||
        kp_decode_pod_template_object(p->arena, e->template, &template) < 0) {
        KP_LOG(KP_LOG_ERROR, LOGGER, "skipping buffer", "CapacityBuffer", key, "error", kp_error_last());
        return;
    }
    int32_t n = cb.has_status_replicas ? cb.status_replicas : 0;
    for (int32_t i = 1; i <= n; i++) {
        if (p->n >= KP_BUFFERS_MAX_PODS) {
            p->left_out++;
            continue;
        }
        p->pods = kp_xgrow(p->pods, &p->cap, p->n + 1, sizeof(*p->pods));
        p->pods[p->n++] = kp_capacity_buffer_virtual_pod(p->arena, &cb, &template, i);
    }
}

size_t kp_buffers_virtual_pods(kp_buffers *b, kp_arena *arena, const kp_pod ***out)
{
    pods_ctx p = {arena, NULL, 0, 0, 0};
    pthread_mutex_lock(&b->mu);
    kp_strmap_foreach(&b->ready, add_pods, &p);
    pthread_mutex_unlock(&b->mu);
    if (p.left_out) {
        char n[24];
        snprintf(n, sizeof(n), "%zu", p.left_out);
        KP_LOG(KP_LOG_WARN, LOGGER, "too many buffer chunks: some left out of planning", "omitted", n);
    }
    *out = KP_ARENA_NEW(arena, const kp_pod *, p.n ? p.n : 1);
    if (p.n)
        memcpy(*out, p.pods, p.n * sizeof(*p.pods));
    free(p.pods);
    return p.n;
}

/* ------------------------------------------------------------- record */

typedef struct outcomes {
    kp_strmap by_buffer; /* "namespace/name" -> kp_buffer_outcome */
} outcomes;

static kp_buffer_outcome *outcome_of(outcomes *o, const kp_pod *pod)
{
    const char *ns, *name;
    char key[512];
    if (!kp_pod_is_buffer_virtual(pod, &ns, &name) || !ns || !name)
        return NULL;
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    kp_buffer_outcome *v = kp_strmap_get(&o->by_buffer, key);
    if (!v)
        kp_strmap_put(&o->by_buffer, key, v = kp_xcalloc(1, sizeof(*v)));
    return v;
}

static void tally(outcomes *o, const kp_pod *const *pods, const kp_plan *plan)
{
    kp_buffer_outcome *v;
    for (uint32_t i = 0; plan && i < plan->n_nodes; i++)
        for (uint32_t k = 0; k < plan->nodes[i].n_pods; k++)
            if ((v = outcome_of(o, pods[plan->nodes[i].pods[k]])))
                v->existing++;
    for (uint32_t i = 0; plan && i < plan->n_claims; i++)
        for (uint32_t k = 0; k < plan->claims[i].n_pods; k++)
            if ((v = outcome_of(o, pods[plan->claims[i].pods[k]])))
                v->new_claim++;
    for (uint32_t i = 0; plan && i < plan->n_errors; i++)
        if ((v = outcome_of(o, pods[plan->errors[i].pod])))
            v->failed++;
}

typedef struct keys {
    char **v;
    size_t n, cap;
} keys;

static void collect_key(void *ctx, const char *key, const cJSON *obj)
{
    keys *k = ctx;
    (void)obj;
    k->v = kp_xgrow(k->v, &k->cap, k->n + 1, sizeof(char *));
    k->v[k->n++] = kp_xstrdup(key);
}

static void record_one(kp_ctrl *c, const char *key, const kp_buffer_outcome *o)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_CAPACITYBUFFER, key);
    kp_arena *arena = kp_arena_new();
    kp_capacity_buffer cb;
    const char *status, *reason;
    char message[256];
    if (obj && kp_decode_capacity_buffer(arena, obj, &cb) == 0 &&
        kp_capacity_buffer_provisioning(&cb, o, &status, &reason, message, sizeof(message))) {
        cJSON *want = cJSON_Duplicate(obj, 1);
        kp_obj_set_condition(want, KP_BUFFER_PROVISIONING, status, reason, message, c->clock->now(c->clock));
        int err = kp_obj_patch(c->kube, KP_RES_CAPACITYBUFFER, obj, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
        if (err < 0 && err != KP_ECONFLICT && err != KP_ENOTFOUND)
            kp_ctrl_log_error(LOGGER, "updating CapacityBuffer provisioning status", key, err);
        cJSON_Delete(want);
    }
    cJSON_Delete(obj);
    kp_arena_free(arena);
}

void kp_buffers_record(kp_ctrl *c, const kp_pod *const *pods, const kp_plan *plan)
{
    if (!c->buffers || !c->informers[KP_CK_CAPACITYBUFFER])
        return;
    outcomes o = {KP_STRMAP_INIT};
    keys k = {NULL, 0, 0};
    tally(&o, pods, plan);
    kp_informer_foreach(c->informers[KP_CK_CAPACITYBUFFER], collect_key, &k);
    for (size_t i = 0; i < k.n; i++) {
        record_one(c, k.v[i], kp_strmap_get(&o.by_buffer, k.v[i]));
        free(k.v[i]);
    }
    free(k.v);
    kp_strmap_clear(&o.by_buffer, free);
}
