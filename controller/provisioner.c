/* The provisioner: batches, solves, creates NodeClaims (see provisioner.h). */
#include "controller/provisioner.h"
#include "api/capacitybuffer.h"
#include "api/nodepool_hash.h"
#include "api/pod_rules.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/capacitybuffer_ctrl.h"
#include "controller/eventq.h"
#include "controller/metrics_ctrl.h"
#include "controller/scheduler_metrics.h"
#include "controller/view.h"
#include "kube/objutil.h"
#include "kube/ops.h"
#include "provisioning/nodeclaim_object.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "provisioner"

struct kp_provisioner {
    kp_ctrl *c;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;        /* a batch is open */
    int64_t first_ns; /* monotonic: when it opened */
    int64_t last_ns;  /* monotonic: the latest trigger */
    bool stopping;
    bool started;
    pthread_t thread;
};

static int64_t mono(const kp_provisioner *p)
{
    return p->c->clock->monotonic(p->c->clock);
}

bool kp_pod_json_provisionable(const cJSON *pod)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status");
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(spec, "nodeName");
    if (cJSON_IsString(node) && *node->valuestring)
        return false;
    if (kp_kube_meta(pod, "deletionTimestamp"))
        return false;
    const cJSON *phase = cJSON_GetObjectItemCaseSensitive(status, "phase");
    if (cJSON_IsString(phase) && (!strcmp(phase->valuestring, "Succeeded") || !strcmp(phase->valuestring, "Failed")))
        return false;
    const char *reason = kp_obj_str(kp_obj_condition_get(pod, "PodScheduled"), "reason");
    return reason && !strcmp(reason, "Unschedulable");
}

kp_provisioner *kp_provisioner_new(kp_ctrl *c)
{
    kp_provisioner *p = kp_xcalloc(1, sizeof(*p));
    p->c = c;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return p;
}

void kp_provisioner_trigger(kp_provisioner *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    int64_t now = mono(p);
    if (!p->open)
        p->open = true, p->first_ns = now;
    p->last_ns = now;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void wait_ns(kp_provisioner *p, int64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t at = (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec + (ns > 0 ? ns : 0);
    ts.tv_sec = at / KP_NS_PER_SEC, ts.tv_nsec = at % KP_NS_PER_SEC;
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

/* Wait for a batch to close: idle for batch_idle_ms, or open for batch_max_ms.
 * False when stopping. */
static bool wait_batch(kp_provisioner *p)
{
    const kp_ctrl_opts *o = &p->c->opts;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->stopping) {
            pthread_mutex_unlock(&p->mu);
            return false;
        }
        if (!p->open) {
            wait_ns(p, 1000 * KP_NS_PER_MS);
            continue;
        }
        int64_t idle_end = p->last_ns + o->batch_idle_ms * KP_NS_PER_MS;
        int64_t max_end = p->first_ns + o->batch_max_ms * KP_NS_PER_MS;
        int64_t end = idle_end < max_end ? idle_end : max_end, now = mono(p);
        if (now >= end)
            break;
        wait_ns(p, end - now);
    }
    p->open = false;
    pthread_mutex_unlock(&p->mu);
    return true;
}

static void *batch_thread(void *arg)
{
    kp_provisioner *p = arg;
    while (wait_batch(p)) {
        kp_provision_result r;
        kp_error_clear();
        int err = kp_provisioner_run_once(p, &r);
        if (err < 0) {
            kp_ctrl_log_error(LOGGER, "provisioning failed", NULL, err);
            kp_provisioner_trigger(p); /* try again after the idle period */
        }
    }
    return NULL;
}

int kp_provisioner_start(kp_provisioner *p)
{
    if (pthread_create(&p->thread, NULL, batch_thread, p) != 0)
        return kp_error_set(KP_ERROR, "provisioner: cannot start its thread");
    p->started = true;
    return 0;
}

kp_provisioner *kp_provisioner_free(kp_provisioner *p)
{
    if (!p)
        return NULL;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->started)
        pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
}

/* ------------------------------------------------------------ one batch */

typedef struct batch {
    kp_provisioner *p;
    kp_ctrl_view *view;
    kp_plan *plan;
    const char **claim_names; /* as the API server named them; NULL when refused */
    kp_provision_result *result;
} batch;

const char *kp_ctrl_pool_hash(kp_ctrl *c, const kp_nodepool *np, char *buf, size_t size)
{
    const char *h = kp_labels_get(&np->meta.annotations, KP_ANNOTATION_NODEPOOL_HASH);
    const char *v = kp_labels_get(&np->meta.annotations, KP_ANNOTATION_NODEPOOL_HASH_VERSION);
    if (h && v && strcmp(v, KP_NODEPOOL_HASH_VERSION) == 0)
        return h;
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODEPOOL, np->meta.name);
    if (!obj)
        return NULL;
    kp_nodepool_hash(obj, buf, size);
    cJSON_Delete(obj);
    return buf;
}

/* Create claim `i` (any thread: reads the plan and the view only). The
 * object as the API server returned it, or NULL when refused (logged). */
static cJSON *create_one(batch *b, uint32_t i)
{
    kp_ctrl *c = b->p->c;
    const kp_snapshot *snap = b->view->snap;
    const kp_template *t = &snap->templates[b->plan->claims[i].template_index];
    char hash[KP_NODEPOOL_HASH_LEN];
    cJSON *obj =
        kp_nodeclaim_object(b->plan, snap, i, t->src ? kp_ctrl_pool_hash(c, t->src, hash, sizeof(hash)) : NULL);
    cJSON *created = NULL;
    int err = obj ? kp_kube_create(c->kube, KP_RES_NODECLAIM, NULL, obj, &created) : KP_EINVALID;
    cJSON_Delete(obj);
    if (err < 0) {
        kp_ctrl_log_error(LOGGER, "creating nodeclaim failed", t->name, err);
        return NULL;
    }
    return created;
}

/* The batch's bookkeeping for claim `i` (the batch's thread). */
static void record_claim(batch *b, uint32_t i, const cJSON *created)
{
    const kp_template *t = &b->view->snap->templates[b->plan->claims[i].template_index];
    if (!created) {
        b->result->claims_failed++;
        return;
    }
    const char *name = kp_kube_meta(created, "name");
    b->claim_names[i] = kp_arena_strdup(b->view->arena, name ? name : "");
    b->result->claims_created++;
    char n_pods[16];
    snprintf(n_pods, sizeof(n_pods), "%u", b->plan->claims[i].n_pods);
    KP_LOG(KP_LOG_INFO, LOGGER, "created nodeclaim", "NodeClaim", b->claim_names[i], "NodePool", t->name, "pods",
           n_pods);
    kp_ctrl_count(b->p->c->m ? b->p->c->m->nodeclaims_created : NULL,
                  (const char *const[]){"provisioning", t->name, "false"});
}

/* At most this many NodeClaim creations in flight (Karpenter creates a
 * batch's claims all at once; a bound keeps a huge batch's threads few). */
enum { CREATE_WORKERS = 16 };

typedef struct creator {
    batch *b;
    cJSON **created;
    bool *tried; /* not all are when stopping */
    atomic_uint next;
} creator;

static void *create_worker(void *arg)
{
    creator *cr = arg;
    uint32_t n = cr->b->plan->n_claims;
    for (uint32_t i; (i = atomic_fetch_add(&cr->next, 1)) < n && !kp_ctrl_stopping(cr->b->p->c);) {
        cr->created[i] = create_one(cr->b, i);
        cr->tried[i] = true;
    }
    return NULL;
}

/* The batch's claims, created in parallel: the API server takes tens to
 * hundreds of milliseconds a write, so 2000 claims one at a time took minutes. */
static void create_claims(batch *b)
{
    uint32_t n = b->plan->n_claims, want = n < CREATE_WORKERS ? n : CREATE_WORKERS, started = 0;
    creator cr = {b, kp_xcalloc(n ? n : 1, sizeof(cJSON *)), kp_xcalloc(n ? n : 1, sizeof(bool)), 0};
    pthread_t threads[CREATE_WORKERS];
    while (started < want && pthread_create(&threads[started], NULL, create_worker, &cr) == 0)
        started++;
    if (started == 0)
        create_worker(&cr); /* no thread to be had: this one does them all */
    for (uint32_t i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    for (uint32_t i = 0; i < n; i++) {
        if (cr.tried[i])
            record_claim(b, i, cr.created[i]);
        cJSON_Delete(cr.created[i]);
    }
    free(cr.created);
    free(cr.tried);
}

/* An event on the pod, through the cached object (for its uid); none for a
 * CapacityBuffer's virtual pods, which do not exist. */
static void pod_event(batch *b, uint32_t pod, const char *type, const char *reason, const char *message)
{
    const kp_pod *src = b->view->cluster.pods[pod];
    kp_ctrl *c = b->p->c;
    if (!c->events || kp_pod_is_buffer_virtual(src, NULL, NULL))
        return;
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "kind", "Pod");
    cJSON *meta = cJSON_AddObjectToObject(ref, "metadata");
    cJSON_AddStringToObject(meta, "name", src->meta.name);
    cJSON_AddStringToObject(meta, "namespace", src->meta.namespace);
    cJSON_AddStringToObject(meta, "uid", src->meta.uid ? src->meta.uid : "");
    kp_eventq_post(c->events, KP_RES_POD, ref, type, reason, message);
    cJSON_Delete(ref);
}

/* Karpenter names the NodeClaim and the Node it became, whichever exist:
 * "nodeclaim/X" in flight, "nodeclaim/X, node/Y" once registered, "node/Y"
 * for a node it does not manage. */
static void nominated_on(const kp_snode *n, char *msg, size_t size)
{
    const char *claim = n->nodeclaim ? n->nodeclaim : n->in_flight ? n->name : NULL;
    if (n->in_flight)
        snprintf(msg, size, "Pod should schedule on: nodeclaim/%s", claim);
    else if (claim)
        snprintf(msg, size, "Pod should schedule on: nodeclaim/%s, node/%s", claim, n->name);
    else
        snprintf(msg, size, "Pod should schedule on: node/%s", n->name);
}

static void events(batch *b)
{
    const kp_plan *plan = b->plan;
    char msg[512];
    for (uint32_t i = 0; i < plan->n_claims; i++)
        for (uint32_t k = 0; k < plan->claims[i].n_pods && b->claim_names[i]; k++) {
            snprintf(msg, sizeof(msg), "Pod should schedule on: nodeclaim/%s", b->claim_names[i]);
            pod_event(b, plan->claims[i].pods[k], "Normal", "Nominated", msg);
        }
    for (uint32_t i = 0; i < plan->n_nodes; i++) {
        nominated_on(&b->view->snap->nodes[plan->nodes[i].node], msg, sizeof(msg));
        for (uint32_t k = 0; k < plan->nodes[i].n_pods; k++)
            pod_event(b, plan->nodes[i].pods[k], "Normal", "Nominated", msg);
    }
    for (uint32_t i = 0; i < plan->n_errors; i++) {
        snprintf(msg, sizeof(msg), "Failed to schedule pod, %s", plan->errors[i].reason);
        pod_event(b, plan->errors[i].pod, "Warning", "FailedScheduling", msg);
        const kp_pod *src = b->view->cluster.pods[plan->errors[i].pod];
        if (kp_pod_is_buffer_virtual(src, NULL, NULL))
            continue;
        char key[320];
        snprintf(key, sizeof(key), "%s/%s", src->meta.namespace, src->meta.name);
        if (kp_pod_dra_unsupported(src))
            KP_LOG(KP_LOG_INFO, LOGGER, "skipping pod with Dynamic Resource Allocation requirements, not yet supported "
                   "by Karpenter", "Pod", key);
        else
            KP_LOG(KP_LOG_ERROR, LOGGER, "could not schedule pod", "Pod", key, "error", plan->errors[i].reason);
    }
}

/* Karpenter's scheduler drops a NodePool whose own requirements leave no
 * instance type, and says so on it once a minute (its dedupe). */
#define NO_TYPES_DEDUPE_NS (60 * KP_NS_PER_SEC)

static void pool_types_events(batch *b)
{
    kp_ctrl *c = b->p->c;
    const kp_snapshot *snap = b->view->snap;
    for (uint32_t t = 0; t < snap->n_templates && b->plan->template_types; t++) {
        uint8_t why = b->plan->template_types[t];
        if (why == KP_TEMPLATE_TYPES_OK)
            continue;
        bool min_values = why == KP_TEMPLATE_TYPES_MIN_VALUES;
        KP_LOG(KP_LOG_INFO, LOGGER, "skipping, nodepool requirements filtered out all instance types", "NodePool",
               snap->templates[t].name, "minValuesIncompatible", min_values ? "true" : "false");
        cJSON *np = c->events ? kp_ctrl_get(c, KP_CK_NODEPOOL, snap->templates[t].name) : NULL;
        if (!np)
            continue;
        char key[320];
        const char *uid = kp_obj_str(np, "metadata.uid");
        snprintf(key, sizeof(key), "NoCompatibleInstanceTypes/%s", uid ? uid : snap->templates[t].name);
        kp_eventq_post_dedupe(c->events, KP_RES_NODEPOOL, np, "Warning", "NoCompatibleInstanceTypes",
                              min_values ? "NodePool requirements filtered out all compatible available instance "
                                           "types due to minValues incompatibility"
                                         : "NodePool requirements filtered out all compatible available instance types",
                              key, NO_TYPES_DEDUPE_NS);
        cJSON_Delete(np);
    }
}

/* The next batch must see the claims this one made, or it would place the
 * same pods again: wait (briefly) for the informer to have them. */
static void await_cache(batch *b)
{
    kp_ctrl *c = b->p->c;
    for (int tries = 0; tries < 100 && !kp_ctrl_stopping(c); tries++) {
        bool all = true;
        for (uint32_t i = 0; i < b->plan->n_claims && all; i++) {
            if (!b->claim_names[i])
                continue;
            cJSON *o = kp_ctrl_get(c, KP_CK_NODECLAIM, b->claim_names[i]);
            all = o != NULL;
            cJSON_Delete(o);
        }
        if (all)
            return;
        kp_kube_cancel_sleep(c->stop, 50);
    }
}

static int solve(batch *b, const uint32_t *pending, uint32_t n)
{
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.skip_lower_bound = true;
    opts.ignore_preferences = b->p->c->opts.ignore_preferences;
    opts.min_values_best_effort = b->p->c->opts.min_values_best_effort;
    opts.caps = &b->p->c->opts.caps;
    kp_sched_run run;
    kp_sched_metrics_begin(&run, b->p->c, "provisioner", b->view->snap, pending, n);
    int err = kp_solve(b->view->snap, &opts, pending, n, &b->plan);
    kp_sched_metrics_end(&run, b->p->c, b->view->snap, err < 0 ? NULL : b->plan);
    if (err < 0)
        return err;
    b->result->solve_ns = b->plan->solve_ns;
    b->result->unschedulable = b->plan->n_errors;
    for (uint32_t i = 0; i < b->plan->n_nodes; i++)
        b->result->on_existing += b->plan->nodes[i].n_pods;
    return 0;
}

static int catalog(kp_ctrl *c, const kp_catalog **out)
{
    if (!c->cloud)
        return kp_error_set(KP_EINVALID, "provisioner: no cloud provider");
    return c->cloud->ops->instance_types(c->cloud, NULL, out);
}

/* Karpenter's provisioner, with pods to place, names each NodePool it skips
 * for not being Ready (at error level, every pass, as it does), and places
 * nothing at all when no dynamic NodePool is left: it does not nominate or
 * report the pods then, it says so once and counts them decided. True when
 * some NodePool can launch. */
static bool dynamic_pools(kp_ctrl *c, const kp_ctrl_view *v, const uint32_t *pending, uint32_t n)
{
    const kp_cluster *cl = &v->cluster;
    for (size_t i = 0; i < cl->n_nodepools; i++) {
        const kp_nodepool *np = cl->nodepools[i];
        if (!np->has_replicas && !np->meta.deletion_timestamp.set && !kp_snapshot_nodepool_provisions(cl, np))
            KP_LOG(KP_LOG_ERROR, LOGGER, "ignoring nodepool, not ready", "NodePool", np->meta.name);
    }
    for (uint32_t t = 0; t < v->snap->n_templates; t++)
        if (!v->snap->templates[t].is_static)
            return true;
    KP_LOG(KP_LOG_INFO, LOGGER, "no dynamic nodepools found");
    kp_sched_metrics_no_pools(c, v->snap, pending, n);
    return false;
}

int kp_provisioner_run_once(kp_provisioner *p, kp_provision_result *out)
{
    batch b = {p, NULL, NULL, NULL, out};
    memset(out, 0, sizeof(*out));
    const kp_catalog *cat;
    int err = catalog(p->c, &cat);
    if (!err)
        err = kp_ctrl_view_build(p->c, cat, &b.view);
    if (err < 0)
        return err;
    uint32_t *pending;
    out->pending = kp_ctrl_view_provisionable(b.view, &pending);
    if (out->pending && dynamic_pools(p->c, b.view, pending, out->pending) && !(err = solve(&b, pending, out->pending))) {
        char n[16];
        snprintf(n, sizeof(n), "%u", out->pending);
        KP_LOG(KP_LOG_INFO, LOGGER, "found provisionable pod(s)", "pods", n);
        b.claim_names = KP_ARENA_NEW(b.view->arena, const char *, b.plan->n_claims + 1);
        pool_types_events(&b);
        create_claims(&b);
        events(&b);
        await_cache(&b);
    }
    if (!err) /* every buffer's Provisioning, from this plan (or none) */
        kp_buffers_record(p->c, b.view->cluster.pods, b.plan);
    kp_plan_free(b.plan);
    kp_ctrl_view_free(b.view);
    return err;
}
