/* Karpenter's node gauges (see node_metrics.h). */
#include "controller/node_metrics.h"
#include "api/decode.h"
#include "api/quantity.h"
#include "api/wellknown.h"
#include "base/clock.h"
#include "base/xalloc.h"
#include "controller/lifecycle.h"
#include "kube/objutil.h"
#include "kube/strmap.h"

#include <stdlib.h>
#include <string.h>

/* One resource of a Node: what it offers and what its pods take. */
typedef struct res {
    const char *name; /* as a label value: lower case, '-' as '_' */
    double allocatable, capacity, req, lim, ds_req, ds_lim;
    unsigned have; /* which of the above are known: bits in HAVE_* order */
} res;

enum { HAVE_ALLOC = 1, HAVE_CAP = 2, HAVE_REQ = 4, HAVE_LIM = 8, HAVE_DS_REQ = 16, HAVE_DS_LIM = 32 };

typedef struct node_rec {
    const char *name, *phase, *provider_id;
    const char *labels[KP_NODE_METRIC_LABELS]; /* values of kp_node_metric_labels */
    kp_pod_node_info info;
    bool managed;
    int64_t created_ns;
    res *res;
    size_t n_res, cap_res;
} node_rec;

struct kp_node_table {
    kp_ctrl *c;
    kp_arena *arena, *scratch;
    node_rec *nodes;
    size_t n, cap;
    kp_strmap by_name; /* name -> index + 1 */
};

static const char *arena_str(kp_arena *a, const char *s)
{
    return kp_arena_strdup(a, s ? s : "");
}

static res *res_of(kp_node_table *t, node_rec *n, const char *name)
{
    char label[256];
    kp_ctrl_resource_label(label, sizeof(label), name);
    for (size_t i = 0; i < n->n_res; i++)
        if (!strcmp(n->res[i].name, label))
            return &n->res[i];
    n->res = kp_xgrow(n->res, &n->cap_res, n->n_res + 1, sizeof(res));
    res *r = &n->res[n->n_res++];
    memset(r, 0, sizeof(*r));
    r->name = kp_arena_strdup(t->arena, label);
    return r;
}

static void add_list(kp_node_table *t, node_rec *n, const cJSON *list, unsigned which)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, list)
    {
        kp_quantity v;
        if (!cJSON_IsString(q) || !q->string || kp_quantity_parse(q->valuestring, &v) < 0)
            continue;
        res *r = res_of(t, n, q->string);
        double x = kp_ctrl_resource_value(q->string, kp_quantity_milli_value(v));
        if (which == HAVE_ALLOC)
            r->allocatable = x;
        else
            r->capacity = x;
        r->have |= which;
    }
}

static void visit_node(void *ctx, const char *key, const cJSON *node)
{
    kp_node_table *t = ctx;
    t->nodes = kp_xgrow(t->nodes, &t->cap, t->n + 1, sizeof(node_rec));
    node_rec *n = &t->nodes[t->n];
    memset(n, 0, sizeof(*n));
    n->name = arena_str(t->arena, key);
    n->phase = arena_str(t->arena, kp_obj_str(node, "status.phase"));
    n->provider_id = arena_str(t->arena, kp_obj_str(node, "spec.providerID"));
    for (size_t i = 0; i < KP_NODE_METRIC_LABELS; i++)
        n->labels[i] = arena_str(t->arena, kp_obj_label(node, kp_node_metric_labels[i].key));
    n->info = (kp_pod_node_info){arena_str(t->arena, kp_obj_label(node, KP_LABEL_NODEPOOL)),
                                 arena_str(t->arena, kp_obj_label(node, KP_LABEL_ZONE)),
                                 arena_str(t->arena, kp_obj_label(node, KP_LABEL_ARCH)),
                                 arena_str(t->arena, kp_obj_label(node, KP_LABEL_CAPACITY_TYPE)),
                                 arena_str(t->arena, kp_obj_label(node, KP_LABEL_INSTANCE_TYPE))};
    const char *created = kp_obj_str(node, "metadata.creationTimestamp");
    if (created)
        kp_time_parse_rfc3339(created, &n->created_ns);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(node, "status");
    add_list(t, n, cJSON_GetObjectItemCaseSensitive(status, "allocatable"), HAVE_ALLOC);
    add_list(t, n, cJSON_GetObjectItemCaseSensitive(status, "capacity"), HAVE_CAP);
    kp_strmap_put(&t->by_name, key, (void *)(t->n + 1));
    t->n++;
}

static node_rec *find(const kp_node_table *t, const char *name)
{
    size_t i = (size_t)kp_strmap_get(&t->by_name, name);
    return i ? &t->nodes[i - 1] : NULL;
}

/* Kubernetes' limits of a pod: the larger of the containers' sum and each
 * init container, plus the overhead. */
static void add_pod_limits(kp_node_table *t, node_rec *n, const kp_pod *p, bool daemon)
{
    for (size_t c = 0; c < p->n_containers; c++) {
        const kp_resource_list *l = &p->containers[c].limits;
        for (size_t i = 0; i < l->count; i++) {
            res *r = res_of(t, n, l->items[i].name);
            double x = kp_ctrl_resource_value(l->items[i].name, kp_quantity_milli_value(l->items[i].quantity));
            r->lim += x, r->have |= HAVE_LIM;
            if (daemon)
                r->ds_lim += x, r->have |= HAVE_DS_LIM;
        }
    }
    for (size_t i = 0; i < p->overhead.count; i++) {
        res *r = res_of(t, n, p->overhead.items[i].name);
        double x = kp_ctrl_resource_value(p->overhead.items[i].name, kp_quantity_milli_value(p->overhead.items[i].quantity));
        r->lim += x;
        if (daemon)
            r->ds_lim += x;
    }
}

/* Karpenter's RequestsForPods and LimitsForPods count the pods themselves
 * as the resource "pods" (what the capacity dashboard's pods panel reads). */
static void count_pod(kp_node_table *t, node_rec *n, bool daemon)
{
    res *r = res_of(t, n, "pods");
    r->req += 1, r->lim += 1, r->have |= HAVE_REQ | HAVE_LIM;
    if (daemon)
        r->ds_req += 1, r->ds_lim += 1, r->have |= HAVE_DS_REQ | HAVE_DS_LIM;
}

static void visit_pod(void *ctx, const char *key, const cJSON *obj)
{
    kp_node_table *t = ctx;
    (void)key;
    const char *node = kp_obj_str(obj, "spec.nodeName");
    node_rec *n = node && *node ? find(t, node) : NULL;
    if (!n)
        return;
    kp_arena_mark mark = kp_arena_mark_get(t->scratch);
    kp_pod p;
    if (kp_decode_pod(t->scratch, obj, &p) == 0 && p.phase != KP_POD_PHASE_SUCCEEDED &&
        p.phase != KP_POD_PHASE_FAILED) {
        for (size_t i = 0; i < p.requests.count; i++) {
            res *r = res_of(t, n, p.requests.items[i].name);
            double x = kp_ctrl_resource_value(p.requests.items[i].name, kp_quantity_milli_value(p.requests.items[i].quantity));
            r->req += x, r->have |= HAVE_REQ;
            if (p.owned_by_daemonset)
                r->ds_req += x, r->have |= HAVE_DS_REQ;
        }
        add_pod_limits(t, n, &p, p.owned_by_daemonset);
        count_pod(t, n, p.owned_by_daemonset);
    }
    kp_arena_rewind(t->scratch, mark);
}

kp_node_table *kp_node_table_build(kp_ctrl *c)
{
    kp_node_table *t = kp_xcalloc(1, sizeof(*t));
    t->c = c;
    t->arena = kp_arena_new();
    t->scratch = kp_arena_new();
    if (c->informers[KP_CK_NODE])
        kp_informer_foreach(c->informers[KP_CK_NODE], visit_node, t);
    if (c->informers[KP_CK_POD])
        kp_informer_foreach(c->informers[KP_CK_POD], visit_pod, t);
    /* Outside the node cache's lock: which Nodes have a NodeClaim. */
    for (size_t i = 0; i < t->n; i++) {
        char *claim = kp_claim_for_provider_id(c, t->nodes[i].provider_id);
        t->nodes[i].managed = claim != NULL;
        free(claim);
    }
    return t;
}

kp_node_table *kp_node_table_free(kp_node_table *t)
{
    if (!t)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        free(t->nodes[i].res);
    free(t->nodes);
    kp_strmap_clear(&t->by_name, NULL);
    kp_arena_free(t->arena);
    kp_arena_free(t->scratch);
    free(t);
    return NULL;
}

size_t kp_node_table_len(const kp_node_table *t)
{
    return t->n;
}

const kp_pod_node_info *kp_node_table_lookup(void *ctx, const char *node)
{
    node_rec *n = find(ctx, node);
    return n ? &n->info : NULL;
}

/* ----------------------------------------------------------------- publish */

/* The node labels of `n`, then node_name, phase, managed, and resource_type
 * when `resource` is not NULL. */
static void node_values(const node_rec *n, const char *resource, const char **out)
{
    size_t k = 0;
    for (; k < KP_NODE_METRIC_LABELS; k++)
        out[k] = n->labels[k];
    out[k++] = n->name, out[k++] = n->phase, out[k++] = n->managed ? "true" : "false";
    out[k] = resource;
}

static void publish_node(const node_rec *n, kp_ctrl_metrics *m, int64_t now_ns)
{
    const char *v[KP_NODE_METRIC_LABELS + 4];
    node_values(n, NULL, v);
    if (n->created_ns)
        kp_ctrl_set(m->nodes_current_lifetime, v, (double)(now_ns - n->created_ns) / 1e9);
    for (size_t i = 0; i < n->n_res; i++) {
        const res *r = &n->res[i];
        node_values(n, r->name, v);
        if (r->have & HAVE_ALLOC)
            kp_ctrl_set(m->nodes_allocatable, v, r->allocatable);
        if ((r->have & HAVE_ALLOC) && (r->have & HAVE_CAP))
            kp_ctrl_set(m->nodes_system_overhead, v, r->capacity - r->allocatable);
        if (r->have & HAVE_REQ)
            kp_ctrl_set(m->nodes_pod_requests, v, r->req);
        if (r->have & HAVE_LIM)
            kp_ctrl_set(m->nodes_pod_limits, v, r->lim);
        if (r->have & HAVE_DS_REQ)
            kp_ctrl_set(m->nodes_daemon_requests, v, r->ds_req);
        if (r->have & HAVE_DS_LIM)
            kp_ctrl_set(m->nodes_daemon_limits, v, r->ds_lim);
    }
}

/* Requests over allocatable, summed over every Node, per resource. */
static void publish_utilization(const kp_node_table *t, kp_ctrl_metrics *m)
{
    kp_strmap alloc = KP_STRMAP_INIT, used = KP_STRMAP_INIT;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < t->nodes[i].n_res; j++) {
            const res *r = &t->nodes[i].res[j];
            double *a = kp_strmap_get(&alloc, r->name), *u = kp_strmap_get(&used, r->name);
            if (!a) {
                a = kp_xcalloc(1, sizeof(double)), u = kp_xcalloc(1, sizeof(double));
                kp_strmap_put(&alloc, r->name, a), kp_strmap_put(&used, r->name, u);
            }
            *a += r->allocatable, *u += r->req;
        }
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < t->nodes[i].n_res; j++) {
            const char *name = t->nodes[i].res[j].name;
            double a = *(double *)kp_strmap_get(&alloc, name), u = *(double *)kp_strmap_get(&used, name);
            if (a > 0)
                kp_ctrl_set(m->cluster_utilization, (const char *const[]){name}, 100 * u / a);
        }
    kp_strmap_clear(&alloc, free);
    kp_strmap_clear(&used, free);
}

void kp_node_table_publish(kp_node_table *t, kp_ctrl_metrics *m, int64_t now_ns)
{
    kp_metric *gauges[] = {m->nodes_current_lifetime, m->nodes_allocatable,    m->nodes_system_overhead,
                           m->nodes_pod_requests,     m->nodes_pod_limits,     m->nodes_daemon_requests,
                           m->nodes_daemon_limits,    m->cluster_utilization};
    size_t n_gauges = sizeof(gauges) / sizeof(gauges[0]);
    for (size_t i = 0; i < n_gauges; i++)
        kp_metric_mark(gauges[i]);
    for (size_t i = 0; i < t->n; i++)
        publish_node(&t->nodes[i], m, now_ns);
    publish_utilization(t, m);
    for (size_t i = 0; i < n_gauges; i++)
        kp_metric_sweep(gauges[i]);
}
