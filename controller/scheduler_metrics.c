/* The scheduler's metrics around one simulation (see scheduler_metrics.h). */
#include "controller/scheduler_metrics.h"
#include "api/wellknown.h"
#include "controller/metrics_ctrl.h"
#include "controller/pod_metrics.h"
#include "controller/reconcile_metrics.h"
#include "kube/strmap.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the zone */

/* The zone requirements a pod must meet: its nodeSelector's, its first
 * required node affinity term's (Karpenter's strict requirements) and its
 * volumes' when they leave one alternative. */
typedef struct zone_reqs {
    const kp_requirement *v[3];
    size_t n;
    const kp_requirement *in; /* the first In among the pod's own, else the volumes' */
} zone_reqs;

static void zone_reqs_of(const kp_snapshot *snap, const kp_spod *p, zone_reqs *z)
{
    kp_sym zone = kp_sym_lookup(snap->symtab, KP_LABEL_ZONE);
    const kp_requirement *own[2] = {kp_requirements_get(&p->node_selector, zone),
                                    p->n_required ? kp_requirements_get(&p->required[0], zone) : NULL};
    const kp_requirement *vol = p->n_volume_alts == 1 ? kp_requirements_get(&p->volume_alts[0], zone) : NULL;
    memset(z, 0, sizeof(*z));
    for (size_t i = 0; i < 2; i++)
        if (own[i]) {
            z->v[z->n++] = own[i];
            if (!z->in && kp_requirement_operator(own[i]) == KP_OP_IN)
                z->in = own[i];
        }
    if (vol) {
        z->v[z->n++] = vol;
        if (!z->in && kp_requirement_operator(vol) == KP_OP_IN)
            z->in = vol;
    }
}

const char *kp_sched_effective_zone(const kp_snapshot *snap, const kp_spod *pod, char *buf, size_t size)
{
    zone_reqs z;
    zone_reqs_of(snap, pod, &z);
    if (!z.in)
        return "flexible";
    const char *matched = NULL;
    for (uint32_t i = 0; i < z.in->n_values; i++) {
        bool ok = true;
        for (size_t k = 0; k < z.n && ok; k++)
            ok = kp_requirement_has(snap->symtab, z.v[k], z.in->values[i]);
        if (!ok)
            continue;
        if (matched)
            return "flexible";
        matched = kp_sym_str(snap->symtab, z.in->values[i]);
    }
    if (!matched)
        return "none";
    snprintf(buf, size, "%s", matched);
    return buf;
}

/* ------------------------------------------------------------- begin/end */

/* A version 4 UUID, as Karpenter names each scheduler. */
static void new_uuid(char out[37])
{
    unsigned char b[16] = {0};
    if (RAND_bytes(b, sizeof(b)) != 1)
        memset(b, 0, sizeof(b)); /* an all-zero id still labels the run */
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
             b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

typedef struct zone_ctx {
    kp_metric *metric;
    const char *controller;
} zone_ctx;

static void set_zone(void *ctx, const char *zone, void *count)
{
    zone_ctx *z = ctx;
    kp_ctrl_set(z->metric, (const char *const[]){z->controller, zone}, (double)(intptr_t)count);
}

/* Pending pods by effective zone. Only the provisioner simulates here, so a
 * controller's series are the whole family: replaced as one. */
static void count_zones(kp_ctrl_metrics *m, const char *controller, const kp_snapshot *snap, const uint32_t *pending,
                        uint32_t n)
{
    kp_strmap zones = KP_STRMAP_INIT;
    for (uint32_t i = 0; i < n; i++) {
        char buf[256];
        const char *zone = kp_sched_effective_zone(snap, &snap->pods[pending[i]], buf, sizeof(buf));
        kp_strmap_put(&zones, zone, (void *)((intptr_t)kp_strmap_get(&zones, zone) + 1));
    }
    zone_ctx z = {m->pending_by_zone, controller};
    kp_metric_mark(m->pending_by_zone);
    kp_strmap_foreach(&zones, set_zone, &z);
    kp_metric_sweep(m->pending_by_zone);
    kp_strmap_clear(&zones, NULL);
}

void kp_sched_metrics_begin(kp_sched_run *run, kp_ctrl *c, const char *controller, const kp_snapshot *snap,
                            const uint32_t *pending, uint32_t n)
{
    memset(run, 0, sizeof(*run));
    run->controller = controller;
    kp_ctrl_metrics *m = c->m;
    if (!m)
        return;
    int64_t now = c->clock->now(c->clock);
    uint32_t ignored = 0;
    for (uint32_t i = 0; i < n; i++) {
        const kp_spod *p = &snap->pods[pending[i]];
        kp_pod_metrics_seen(m->pods, p->ns_name, now);
        ignored += p->unschedulable != NULL;
    }
    kp_ctrl_set(m->ignored_pods, NULL, ignored);
    count_zones(m, controller, snap, pending, n);
    new_uuid(run->id);
    kp_metric_reset(m->queue_depth); /* the last simulation's id goes */
    kp_ctrl_set(m->queue_depth, (const char *const[]){controller, run->id}, n);
    kp_reconcile_metrics_solving(m->reconciles, controller, run->id);
}

static void decided(kp_ctrl *c, const kp_snapshot *snap, const uint32_t *pods, uint32_t n, bool placed, int64_t now)
{
    for (uint32_t i = 0; i < n; i++)
        kp_pod_metrics_decided(c->m->pods, snap->pods[pods[i]].ns_name, placed, now);
}

void kp_sched_metrics_no_pools(kp_ctrl *c, const kp_snapshot *snap, const uint32_t *pending, uint32_t n)
{
    if (!c->m)
        return;
    int64_t now = c->clock->now(c->clock);
    for (uint32_t i = 0; i < n; i++)
        kp_pod_metrics_seen(c->m->pods, snap->pods[pending[i]].ns_name, now);
    decided(c, snap, pending, n, false, now);
}

void kp_sched_metrics_end(kp_sched_run *run, kp_ctrl *c, const kp_snapshot *snap, const kp_plan *plan)
{
    kp_ctrl_metrics *m = c->m;
    if (!m)
        return;
    kp_reconcile_metrics_solved(m->reconciles, run->controller);
    kp_ctrl_set(m->queue_depth, (const char *const[]){run->controller, run->id}, 0); /* drained, as Karpenter leaves it */
    if (!plan)
        return;
    const char *ctl[] = {run->controller};
    kp_ctrl_observe(m->scheduling_duration, ctl, (double)plan->solve_ns / 1e9);
    int64_t now = c->clock->now(c->clock);
    for (uint32_t i = 0; i < plan->n_claims; i++)
        decided(c, snap, plan->claims[i].pods, plan->claims[i].n_pods, true, now);
    for (uint32_t i = 0; i < plan->n_nodes; i++)
        decided(c, snap, plan->nodes[i].pods, plan->nodes[i].n_pods, true, now);
    uint32_t unschedulable = 0;
    for (uint32_t i = 0; i < plan->n_errors; i++) {
        const kp_spod *p = &snap->pods[plan->errors[i].pod];
        kp_pod_metrics_decided(m->pods, p->ns_name, false, now);
        unschedulable += p->unschedulable == NULL; /* the ignored ones are not the scheduler's failures */
    }
    kp_ctrl_set(m->unschedulable_pods, ctl, unschedulable);
}
