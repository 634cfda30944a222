/* What one disruption plan says, on the cluster (see disruption_exec.h). */
#include "controller/disruption_exec.h"
#include "controller/disruption_metrics.h"
#include "controller/eventq.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Karpenter dedupes Unconsolidatable for 15 minutes; the other reasons
 * for its default 2. Ours: 15 minutes for every "why this node stays", keyed
 * by the object and the kind of block, so a 1000-node cluster writes about
 * two events a second at most however often it plans. */
#define KEPT_DEDUPE_NS (15LL * 60 * 1000000000)
#define POOL_DEDUPE_NS (60LL * 1000000000)

static void post_kept(kp_ctrl *c, enum kp_kube_res res, const cJSON *obj, const kp_disrupt_blocked *b)
{
    const char *uid = kp_obj_str(obj, "metadata.uid");
    char key[400];
    snprintf(key, sizeof(key), "%s/%s/%d", uid ? uid : kp_obj_str(obj, "metadata.name"), b->event_reason, (int)b->kind);
    kp_eventq_post_dedupe(c->events, res, obj, "Normal", b->event_reason, b->message, key, KEPT_DEDUPE_NS);
}

/* Every node the plan keeps, with Karpenter's event where it has one. */
static void explain_kept(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    for (uint32_t i = 0; i < plan->n_blocked; i++) {
        const kp_disrupt_blocked *b = &plan->blocked[i];
        if (b->replacement || !b->event_reason || !b->message)
            continue;
        const kp_snode *n = &snap->nodes[b->node];
        cJSON *node = n->src_node ? kp_ctrl_get(c, KP_CK_NODE, n->name) : NULL;
        cJSON *claim = n->nodeclaim ? kp_ctrl_get(c, KP_CK_NODECLAIM, n->nodeclaim) : NULL;
        if (node)
            post_kept(c, KP_RES_NODE, node, b);
        if (claim)
            post_kept(c, KP_RES_NODECLAIM, claim, b);
        cJSON_Delete(node);
        cJSON_Delete(claim);
    }
}

static void pool_event(kp_ctrl *c, const char *pool, const char *reason, const char *message)
{
    cJSON *np = kp_ctrl_get(c, KP_CK_NODEPOOL, pool);
    if (!np)
        return;
    char key[400];
    snprintf(key, sizeof(key), "%s/%s/%s", kp_obj_str(np, "metadata.uid") ? kp_obj_str(np, "metadata.uid") : pool,
             reason, message);
    kp_eventq_post_dedupe(c->events, KP_RES_NODEPOOL, np, "Normal", reason, message, key, POOL_DEDUPE_NS);
    cJSON_Delete(np);
}

/* Balanced scores of the commands: single-node on the Node and NodeClaim,
 * multi-node on the NodePool (Karpenter's). */
static void explain_scores(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    for (uint32_t i = 0; i < plan->n_commands; i++) {
        const kp_disrupt_command *cmd = &plan->commands[i];
        for (uint32_t s = 0; s < cmd->n_scores; s++) {
            const kp_disrupt_score *sc = &cmd->scores[s];
            if (!sc->scored || !sc->event_reason)
                continue;
            if (cmd->n_candidates == 1) {
                const kp_snode *n = &snap->nodes[cmd->candidates[0]];
                cJSON *node = kp_ctrl_get(c, KP_CK_NODE, n->name);
                cJSON *claim = n->nodeclaim ? kp_ctrl_get(c, KP_CK_NODECLAIM, n->nodeclaim) : NULL;
                if (node)
                    kp_eventq_post(c->events, KP_RES_NODE, node, "Normal", sc->event_reason, sc->message);
                if (claim)
                    kp_eventq_post(c->events, KP_RES_NODECLAIM, claim, "Normal", sc->event_reason, sc->message);
                cJSON_Delete(node), cJSON_Delete(claim);
            } else {
                pool_event(c, snap->templates[sc->template_index].name, sc->event_reason, sc->message);
            }
        }
    }
}

static void lower(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
    for (char *p = dst; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

static void explain_metrics(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    if (!c->m)
        return;
    for (uint32_t i = 0; i < plan->n_allowances; i++) {
        const kp_disrupt_allowance *a = &plan->allowances[i];
        const char *pool = snap->templates[a->template_index].name;
        kp_ctrl_set(c->m->allowed_disruptions, (const char *const[]){pool, a->reason}, (double)a->budget);
        kp_ctrl_set(c->m->nodes_consuming_budgets, (const char *const[]){pool, a->reason}, (double)a->disrupting);
        if (a->blocked_message)
            pool_event(c, pool, "DisruptionBlocked", a->blocked_message);
    }
    static const char *const reasons[] = {"Empty", "Drifted", "Underutilized"};
    const uint32_t eligible[] = {plan->eligible_empty, plan->eligible_drifted, plan->eligible_underutilized};
    for (size_t i = 0; i < 3; i++) {
        char r[32];
        lower(r, sizeof(r), reasons[i]);
        kp_ctrl_set(c->m->disruption_eligible, (const char *const[]){r}, eligible[i]);
    }
    for (uint32_t i = 0; i < plan->n_moves; i++) {
        const kp_disrupt_move *mv = &plan->moves[i];
        if (!mv->score)
            continue;
        const char *labels[] = {mv->approved ? "approved" : "rejected", snap->templates[mv->score->template_index].name,
                                mv->score->policy ? mv->score->policy : ""};
        kp_ctrl_count(c->m->consolidation_moves, labels);
        if (mv->score->scored)
            kp_ctrl_observe(c->m->consolidation_score, labels, mv->score->score);
    }
}

void kp_disruption_explain(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    explain_kept(c, snap, plan);
    explain_scores(c, snap, plan);
    explain_metrics(c, snap, plan);
    kp_disruption_metrics_plan(c, plan);
}
