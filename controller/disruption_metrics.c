/* Voluntary disruption metrics (see disruption_metrics.h). */
#include "controller/disruption_metrics.h"
#include "controller/metrics_ctrl.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Karpenter's reason label: the command's reason in lower case. */
static void reason_label(char *buf, size_t size, enum kp_disrupt_method method)
{
    snprintf(buf, size, "%s", kp_disrupt_reason(method));
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

void kp_disruption_metrics_plan(kp_ctrl *c, const kp_disruption_plan *plan)
{
    if (!c->m || !plan)
        return;
    for (int m = KP_DISRUPT_EMPTINESS; m < KP_DISRUPT_METHODS; m++) {
        if (!plan->method_runs[m])
            continue;
        char reason[32];
        reason_label(reason, sizeof(reason), (enum kp_disrupt_method)m);
        const char *labels[] = {reason, kp_disrupt_consolidation_type((enum kp_disrupt_method)m)};
        kp_ctrl_observe(c->m->disruption_evaluation, labels, (double)plan->method_ns[m] / 1e9);
    }
}

/* The candidate's NodeClaim as cached, for its capacity type. */
static const char *capacity_type(kp_ctrl *c, const kp_snode *n)
{
    cJSON *claim = n->nodeclaim ? kp_ctrl_get(c, KP_CK_NODECLAIM, n->nodeclaim) : NULL;
    const char *ct = claim ? kp_ctrl_capacity_type(c, claim) : "";
    cJSON_Delete(claim);
    return ct; /* a static string */
}

static bool pool_counted(const kp_snapshot *snap, const kp_disrupt_command *k, uint32_t upto, int32_t pool)
{
    for (uint32_t i = 0; i < upto; i++)
        if (snap->nodes[k->candidates[i]].template_index == pool)
            return true;
    return false;
}

void kp_disruption_metrics_decision(kp_ctrl *c, const kp_snapshot *snap, const kp_disrupt_command *k)
{
    kp_ctrl_metrics *m = c->m;
    if (!m)
        return;
    char reason[32];
    reason_label(reason, sizeof(reason), k->method);
    const char *decision = kp_disrupt_decision_name(k->decision), *type = k->consolidation_type ? k->consolidation_type : "";
    for (uint32_t i = 0; i < k->n_candidates; i++) {
        const kp_snode *n = &snap->nodes[k->candidates[i]];
        const char *pool = n->template_index >= 0 ? snap->templates[n->template_index].name : "";
        kp_ctrl_count(m->nodeclaims_disrupted, (const char *const[]){reason, pool, capacity_type(c, n)});
        if (!k->forceful && !pool_counted(snap, k, i, n->template_index)) /* once per NodePool of the command */
            kp_ctrl_count(m->disruption_decisions_by_pool, (const char *const[]){pool, decision, reason, type});
    }
    /* Expiration is not a voluntary disruption decision in Karpenter: its
     * own controller deletes and counts karpenter_nodeclaims_disrupted_total only. */
    if (!k->forceful)
        kp_ctrl_count(m->disruption_decisions, (const char *const[]){decision, reason, type});
}

void kp_disruption_metrics_failed_validation(kp_ctrl *c, enum kp_disrupt_method method, uint32_t candidates)
{
    if (!c->m)
        return;
    kp_metric_series *s =
        kp_metric_with(c->m->failed_validations, (const char *const[]){kp_disrupt_consolidation_type(method)});
    kp_counter_add(s, candidates);
}
