/* operatorpkg's status metrics (see status_metrics.h). */
#include "controller/status_metrics.h"
#include "api/wellknown.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "kube/objutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXTRA 3

/* How one kind is labeled. */
typedef struct kind_info {
    char prefix[96];                 /* "operator_nodeclaim" */
    const char *group, *kind;        /* for the deprecated families; NULL: not fed */
    char kind_buf[64], group_buf[96];
    const char *extra_names[MAX_EXTRA]; /* Prometheus label names */
    const char *extra_keys[MAX_EXTRA];  /* the object labels they are read from */
    size_t n_extra;
    char node_class_key[160]; /* "karpenter.k8s.aws/ec2nodeclass" */
} kind_info;

struct kp_status_metrics {
    kind_info kinds[KP_STATUS_KINDS];
};

kp_status_metrics *kp_status_metrics_free(kp_status_metrics *sm)
{
    free(sm);
    return NULL;
}

/* operatorpkg's buckets: 0.5 s to 8192 s by doubling (Karpenter's kinds),
 * Prometheus' defaults otherwise. */
static const double doubling_buckets[] = {0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};

static void lower(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
    for (char *p = dst; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

/* operatorpkg's label name for an object label: '/', '.' and '-' become '_'. */
static void prometheus_label(char *dst, size_t size, const char *key)
{
    snprintf(dst, size, "%s", key);
    for (char *p = dst; *p; p++)
        if (*p == '/' || *p == '.' || *p == '-')
            *p = '_';
}

static void kind_setup(kp_ctrl_metrics *m, kind_info *k, enum kp_status_kind kind, const char *group,
                       const char *class_kind)
{
    static const char *const names[] = {"nodeclaim", "node", "nodepool"};
    char lower_kind[64];
    lower(lower_kind, sizeof(lower_kind), class_kind);
    snprintf(k->prefix, sizeof(k->prefix), "operator_%s", kind == KP_STATUS_NODECLASS ? lower_kind : names[kind]);
    snprintf(k->node_class_key, sizeof(k->node_class_key), "%s/%s", group, lower_kind);
    snprintf(k->group_buf, sizeof(k->group_buf), "%s", group);
    snprintf(k->kind_buf, sizeof(k->kind_buf), "%s", class_kind);
    if (kind == KP_STATUS_NODECLAIM || kind == KP_STATUS_NODE) {
        k->extra_names[0] = m->node_class_label, k->extra_keys[0] = k->node_class_key;
        k->extra_names[1] = "karpenter_sh_nodepool", k->extra_keys[1] = KP_LABEL_NODEPOOL;
        k->n_extra = 2;
    }
    if (kind == KP_STATUS_NODE)
        k->extra_names[2] = "karpenter_sh_initialized", k->extra_keys[2] = KP_LABEL_INITIALIZED, k->n_extra = 3;
    if (kind == KP_STATUS_NODECLAIM)
        k->group = "karpenter.sh", k->kind = "NodeClaim";
    if (kind == KP_STATUS_NODEPOOL)
        k->group = "karpenter.sh", k->kind = "NodePool";
    if (kind == KP_STATUS_NODECLASS)
        k->group = k->group_buf, k->kind = k->kind_buf;
}

/* ------------------------------------------------------------ registration */

/* Labels: `lead` (up to five), then `extra`. */
static size_t labels(const char **out, const char *const *lead, size_t n_lead, const char *const *extra, size_t n_extra)
{
    for (size_t i = 0; i < n_lead; i++)
        out[i] = lead[i];
    for (size_t i = 0; i < n_extra; i++)
        out[n_lead + i] = extra[i];
    return n_lead + n_extra;
}

typedef struct set_entry {
    kp_metric **slot;
    enum kp_metric_type type;
    const char *suffix, *help;
    const char *const *lead;
    size_t n_lead;
} set_entry;

static int register_set(kp_metrics *r, kp_status_families *f, const char *prefix, const char *const *extra,
                        size_t n_extra, const double *buckets, size_t n_buckets)
{
    static const char *const nn[] = {"namespace", "name"}, *const tsr[] = {"type", "status", "reason"},
                             *const nntsr[] = {"namespace", "name", "type", "status", "reason"};
    const set_entry set[] = {
        {&f->termination_duration, KP_METRIC_HISTOGRAM, "termination_duration_seconds",
         "Seconds from an object's deletion until it was gone.", NULL, 0},
        {&f->termination_current, KP_METRIC_GAUGE, "termination_current_time_seconds",
         "Seconds each object being deleted has been at it.", nn, 2},
        {&f->transitions, KP_METRIC_COUNTER, "status_condition_transitions_total",
         "Status conditions that changed status (or appeared), by type, new status and reason.", tsr, 3},
        {&f->transition_seconds, KP_METRIC_HISTOGRAM, "status_condition_transition_seconds",
         "Seconds a status condition held a status before it changed, by type and that status.", tsr, 2},
        {&f->current_status, KP_METRIC_GAUGE, "status_condition_current_status_seconds",
         "Seconds each object's status condition has held its status.", nntsr, 5},
        {&f->count, KP_METRIC_GAUGE, "status_condition_count",
         "1 per object and status condition it has, by type, status and reason.", nntsr, 5},
    };
    for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
        const char *l[5 + MAX_EXTRA + 2];
        char name[192];
        snprintf(name, sizeof(name), "%s_%s", prefix, set[i].suffix);
        size_t n = labels(l, set[i].lead, set[i].n_lead, extra, n_extra);
        int err = kp_ctrl_metric_add(r, set[i].slot, set[i].type, name, set[i].help, l, n, buckets, n_buckets);
        if (err < 0)
            return err;
    }
    return 0;
}

int kp_ctrl_metrics_init_status(kp_ctrl_metrics *m, kp_metrics *r, const char *group, const char *kind)
{
    char key[160], lower_kind[64];
    lower(lower_kind, sizeof(lower_kind), kind);
    snprintf(key, sizeof(key), "%s/%s", group, lower_kind);
    prometheus_label(m->node_class_label, sizeof(m->node_class_label), key);
    kp_status_metrics *sm = kp_xcalloc(1, sizeof(*sm));
    int err = 0;
    for (int k = 0; k < KP_STATUS_KINDS && !err; k++) {
        kind_info *ki = &sm->kinds[k];
        kind_setup(m, ki, (enum kp_status_kind)k, group, kind);
        bool doubling = k != KP_STATUS_NODECLASS; /* Karpenter sets them for its own kinds only */
        err = register_set(r, &m->status[k], ki->prefix, ki->extra_names, ki->n_extra,
                           doubling ? doubling_buckets : kp_metrics_default_buckets,
                           doubling ? sizeof(doubling_buckets) / sizeof(double) : 11);
    }
    static const char *const gk[] = {"group", "kind"};
    if (!err)
        err = register_set(r, &m->status_deprecated, "operator", gk, 2, kp_metrics_default_buckets, 11);
    if (err < 0) {
        free(sm);
        return err;
    }
    kp_status_metrics_free(m->conditions);
    m->conditions = sm;
    return 0;
}

/* ------------------------------------------------------------- labels */

/* The label values of one series: `lead` then the kind's extra values. */
typedef struct values {
    const char *v[5 + MAX_EXTRA];
    size_t n;
} values;

static void extra_values(values *out, const kind_info *k, const cJSON *obj)
{
    for (size_t i = 0; i < k->n_extra; i++) {
        const char *v = kp_obj_label(obj, k->extra_keys[i]);
        out->v[out->n++] = v ? v : "";
    }
}

static values make(const char *const *lead, size_t n_lead, const kind_info *k, const cJSON *obj)
{
    values out = {{NULL}, 0};
    for (size_t i = 0; i < n_lead; i++)
        out.v[out.n++] = lead[i] ? lead[i] : "";
    if (obj)
        extra_values(&out, k, obj);
    return out;
}

/* The same figure for the deprecated family: lead then group and kind. */
static values make_deprecated(const char *const *lead, size_t n_lead, const kind_info *k)
{
    values out = {{NULL}, 0};
    for (size_t i = 0; i < n_lead; i++)
        out.v[out.n++] = lead[i] ? lead[i] : "";
    out.v[out.n++] = k->group, out.v[out.n++] = k->kind;
    return out;
}

/* ------------------------------------------------------------ transitions */

static int64_t since(const cJSON *cond)
{
    int64_t ns = 0;
    const char *t = kp_obj_str(cond, "lastTransitionTime");
    return t && kp_time_parse_rfc3339(t, &ns) == 0 ? ns : 0;
}

static void count_transition(kp_ctrl_metrics *m, const kind_info *k, enum kp_status_kind kind, const cJSON *obj,
                             const cJSON *was, const cJSON *now)
{
    const char *tsr[] = {kp_obj_str(now, "type"), kp_obj_str(now, "status"), kp_obj_str(now, "reason")};
    values v = make(tsr, 3, k, obj);
    kp_ctrl_count(m->status[kind].transitions, v.v);
    if (k->group) {
        values d = make_deprecated(tsr, 3, k);
        kp_ctrl_count(m->status_deprecated.transitions, d.v);
    }
    if (!was)
        return;
    const char *ts[] = {kp_obj_str(was, "type"), kp_obj_str(was, "status")};
    double held = (double)(since(now) - since(was)) / 1e9;
    values h = make(ts, 2, k, obj);
    kp_ctrl_observe(m->status[kind].transition_seconds, h.v, held);
    if (k->group) {
        values d = make_deprecated(ts, 2, k);
        kp_ctrl_observe(m->status_deprecated.transition_seconds, d.v, held);
    }
}

void kp_status_metrics_update(kp_ctrl_metrics *m, enum kp_status_kind kind, const cJSON *old, const cJSON *obj)
{
    if (!m || !m->conditions || !kp_ctrl_metrics_leading(m))
        return;
    const kind_info *k = &m->conditions->kinds[kind];
    const cJSON *c;
    cJSON_ArrayForEach(c, kp_obj_get(obj, "status.conditions"))
    {
        const char *type = kp_obj_str(c, "type"), *status = kp_obj_str(c, "status");
        if (!type || !status)
            continue;
        const cJSON *was = old ? kp_obj_condition_get(old, type) : NULL;
        const char *was_status = was ? kp_obj_str(was, "status") : NULL;
        if (was_status && !strcmp(was_status, status))
            continue;
        count_transition(m, k, kind, obj, was, c);
    }
}

void kp_status_metrics_delete(kp_ctrl_metrics *m, enum kp_status_kind kind, const cJSON *obj, int64_t now_ns)
{
    if (!m || !m->conditions || !kp_ctrl_metrics_leading(m))
        return;
    const char *deleted = kp_obj_str(obj, "metadata.deletionTimestamp");
    int64_t at = 0;
    if (!deleted || kp_time_parse_rfc3339(deleted, &at) < 0)
        return;
    const kind_info *k = &m->conditions->kinds[kind];
    double took = (double)(now_ns - at) / 1e9;
    values v = make(NULL, 0, k, obj);
    kp_ctrl_observe(m->status[kind].termination_duration, v.v, took);
    if (k->group) {
        values d = make_deprecated(NULL, 0, k);
        kp_ctrl_observe(m->status_deprecated.termination_duration, d.v, took);
    }
}

/* ------------------------------------------------------------------ gauges */

typedef struct pass {
    kp_ctrl_metrics *m;
    const kind_info *k;
    enum kp_status_kind kind;
    int64_t now;
} pass;

static void set_both(const pass *p, kp_metric *current, kp_metric *deprecated, const char *const *lead, size_t n,
                     const cJSON *obj, double value)
{
    values v = make(lead, n, p->k, obj);
    kp_ctrl_set(current, v.v, value);
    if (p->k->group) {
        values d = make_deprecated(lead, n, p->k);
        kp_ctrl_set(deprecated, d.v, value);
    }
}

static void visit(void *ctx, const char *key, const cJSON *obj)
{
    pass *p = ctx;
    (void)key;
    const char *ns = kp_obj_str(obj, "metadata.namespace"), *name = kp_obj_str(obj, "metadata.name");
    const kp_status_families *f = &p->m->status[p->kind], *d = &p->m->status_deprecated;
    const char *deleted = kp_obj_str(obj, "metadata.deletionTimestamp");
    int64_t at = 0;
    if (deleted && kp_time_parse_rfc3339(deleted, &at) == 0) {
        const char *nn[] = {ns ? ns : "", name};
        set_both(p, f->termination_current, d->termination_current, nn, 2, obj, (double)(p->now - at) / 1e9);
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, kp_obj_get(obj, "status.conditions"))
    {
        const char *lead[] = {ns ? ns : "", name, kp_obj_str(c, "type"), kp_obj_str(c, "status"),
                              kp_obj_str(c, "reason")};
        if (!lead[2] || !lead[3])
            continue;
        set_both(p, f->count, d->count, lead, 5, obj, 1);
        int64_t t = since(c);
        set_both(p, f->current_status, d->current_status, lead, 5, obj, t ? (double)(p->now - t) / 1e9 : 0);
    }
}

static void mark_or_sweep(const kp_status_families *f, bool mark)
{
    kp_metric *gauges[] = {f->termination_current, f->count, f->current_status};
    for (size_t i = 0; i < 3; i++)
        (mark ? kp_metric_mark : kp_metric_sweep)(gauges[i]);
}

void kp_status_metrics_pass(kp_ctrl_metrics *m, kp_informer *const informers[KP_STATUS_KINDS], int64_t now_ns)
{
    if (!m || !m->conditions)
        return;
    /* The deprecated families gather several kinds: one mark and sweep around all. */
    mark_or_sweep(&m->status_deprecated, true);
    for (int k = 0; k < KP_STATUS_KINDS; k++) {
        if (!informers[k])
            continue;
        mark_or_sweep(&m->status[k], true);
        pass p = {m, &m->conditions->kinds[k], (enum kp_status_kind)k, now_ns};
        kp_informer_foreach(informers[k], visit, &p);
        mark_or_sweep(&m->status[k], false);
    }
    mark_or_sweep(&m->status_deprecated, false);
}
