/* What one disruption plan says, on the cluster (see disruption_exec.h). */
#include "controller/disruption_exec.h"
#include "base/xalloc.h"
#include "controller/disruption_metrics.h"
#include "controller/eventq.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ------------------------------------------------- consolidation commands */

/* Karpenter's event dedupe by default: 2 minutes. */
#define COMMAND_DEDUPE_NS (2LL * 60 * 1000000000)

struct kp_consolidation_ref {
    enum kp_disrupt_decision decision;
    uint32_t n_replacements;
    double savings;
    uint32_t n;
    char **nodes;  /* per candidate: its node's name (Karpenter's Candidate.Name()) */
    char **claims; /* and its NodeClaim's, or NULL */
};

kp_consolidation_ref *kp_consolidation_ref_new(const kp_snapshot *snap, const kp_disrupt_command *cmd)
{
    if (cmd->method != KP_DISRUPT_SINGLE_NODE && cmd->method != KP_DISRUPT_MULTI_NODE)
        return NULL;
    kp_consolidation_ref *r = kp_xcalloc(1, sizeof(*r));
    r->decision = cmd->decision;
    r->n_replacements = cmd->simulation ? cmd->simulation->n_claims : 0;
    r->savings = cmd->savings_hourly;
    r->n = cmd->n_candidates;
    r->nodes = kp_xcalloc(r->n ? r->n : 1, sizeof(char *));
    r->claims = kp_xcalloc(r->n ? r->n : 1, sizeof(char *));
    for (uint32_t i = 0; i < r->n; i++) {
        const kp_snode *n = &snap->nodes[cmd->candidates[i]];
        r->nodes[i] = kp_xstrdup(n->name);
        r->claims[i] = n->nodeclaim ? kp_xstrdup(n->nodeclaim) : NULL;
    }
    return r;
}

kp_consolidation_ref *kp_consolidation_ref_free(kp_consolidation_ref *r)
{
    if (!r)
        return NULL;
    for (uint32_t i = 0; i < r->n; i++)
        free(r->nodes[i]), free(r->claims[i]);
    free(r->nodes);
    free(r->claims);
    free(r);
    return NULL;
}

/* Karpenter's Command.StringForNode for a command that has no method and ID
 * yet (its consolidation computes and validates commands before they get
 * them): the whole command for one candidate, else this one's share. */
static void command_text(const kp_consolidation_ref *r, uint32_t i, char *buf, size_t size)
{
    const char *decision = kp_disrupt_decision_name(r->decision);
    if (r->n > 1)
        snprintf(buf, size, "%s: [%s] (part of %u-node consolidation)", decision, r->nodes[i], r->n);
    else if (r->n_replacements)
        snprintf(buf, size, "%s: [%s] -> [%u %s]", decision, r->nodes[i], r->n_replacements,
                 r->n_replacements == 1 ? "replacement" : "replacements");
    else
        snprintf(buf, size, "%s: [%s]", decision, r->nodes[i]);
}

/* One event on the Node and the NodeClaim of candidate `i`, deduplicated by
 * object and `dedupe` (Karpenter's DedupeValues after the uid). */
static void candidate_event(kp_ctrl *c, const kp_consolidation_ref *r, uint32_t i, const char *reason,
                            const char *message, const char *dedupe)
{
    cJSON *objs[2] = {kp_ctrl_get(c, KP_CK_NODE, r->nodes[i]),
                      r->claims[i] ? kp_ctrl_get(c, KP_CK_NODECLAIM, r->claims[i]) : NULL};
    const enum kp_kube_res res[2] = {KP_RES_NODE, KP_RES_NODECLAIM};
    for (int k = 0; k < 2; k++) {
        if (!objs[k])
            continue;
        const char *uid = kp_obj_str(objs[k], "metadata.uid");
        char key[1024];
        snprintf(key, sizeof(key), "%s/%s/%s", reason, uid ? uid : kp_obj_str(objs[k], "metadata.name"), dedupe);
        kp_eventq_post_dedupe(c->events, res[k], objs[k], "Normal", reason, message, key, COMMAND_DEDUPE_NS);
        cJSON_Delete(objs[k]);
    }
}

void kp_consolidation_candidate_events(kp_ctrl *c, const kp_consolidation_ref *r)
{
    if (!r || r->decision != KP_DISRUPT_REPLACE)
        return; /* Karpenter announces replacements only */
    for (uint32_t i = 0; i < r->n; i++) {
        char text[600], msg[800];
        command_text(r, i, text, sizeof(text));
        snprintf(msg, sizeof(msg), "Consolidation candidate: %s (savings: $%.2f)", text, r->savings);
        candidate_event(c, r, i, "ConsolidationCandidate", msg, text);
    }
}

/* How Karpenter's validation would have failed for node `name`, by the
 * new plan: 2 churn, 1 budget, 0 scheduling. */
static int rejection_of(const kp_snapshot *snap, const kp_disruption_plan *plan, const char *name)
{
    uint32_t at = UINT32_MAX;
    for (uint32_t i = 0; i < snap->n_nodes && at == UINT32_MAX; i++)
        if (snap->nodes[i].name && !strcmp(snap->nodes[i].name, name))
            at = i;
    if (at == UINT32_MAX)
        return 2;
    for (uint32_t i = 0; i < plan->n_blocked; i++) {
        if (plan->blocked[i].node != at || plan->blocked[i].replacement)
            continue;
        switch (plan->blocked[i].kind) {
        case KP_BLOCK_NOMINATED:
        case KP_BLOCK_BUDGET:
            return 1;
        case KP_BLOCK_UNSCHEDULABLE: case KP_BLOCK_UNINITIALIZED_TARGET: case KP_BLOCK_NEEDS_SEVERAL:
        case KP_BLOCK_NO_CHEAPER: case KP_BLOCK_MIN_VALUES: case KP_BLOCK_SPOT_TO_SPOT_DISABLED:
        case KP_BLOCK_SPOT_TO_SPOT_OPTIONS: case KP_BLOCK_BALANCED: case KP_BLOCK_DRIFT_UNSCHEDULABLE:
        case KP_BLOCK_IN_PLAN: case KP_BLOCK_NOTHING_TO_DO: case KP_BLOCK_NONE:
            return 0;
        default: /* no longer a candidate: deleting, do-not-disrupt, PDB, policy, ... */
            return 2;
        }
    }
    return 0;
}

void kp_consolidation_rejected_events(kp_ctrl *c, const kp_consolidation_ref *r, const kp_snapshot *snap,
                                      const kp_disruption_plan *plan)
{
    if (!r)
        return;
    int worst = 0; /* Karpenter checks the candidates (churn, then budget) before the simulation */
    for (uint32_t i = 0; i < r->n; i++) {
        int k = rejection_of(snap, plan, r->nodes[i]);
        worst = k > worst ? k : worst;
    }
    static const char *const reasons[] = {"scheduling", "budget", "churn"};
    for (uint32_t i = 0; i < r->n; i++) {
        char text[600], msg[800], dedupe[640];
        command_text(r, i, text, sizeof(text));
        snprintf(msg, sizeof(msg), "Consolidation rejected: %s, reason: %s (savings: $%.2f)", text, reasons[worst],
                 r->savings);
        snprintf(dedupe, sizeof(dedupe), "%s/%s", text, reasons[worst]);
        candidate_event(c, r, i, "ConsolidationRejected", msg, dedupe);
    }
}

/* Each consolidation command of the plan's first loop, as it is computed. */
static void explain_commands(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    for (uint32_t i = 0; i < plan->n_commands; i++) {
        if (plan->commands[i].loop != 0)
            continue;
        kp_consolidation_ref *r = kp_consolidation_ref_new(snap, &plan->commands[i]);
        kp_consolidation_candidate_events(c, r);
        kp_consolidation_ref_free(r);
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
    explain_commands(c, snap, plan);
    explain_metrics(c, snap, plan);
    kp_disruption_metrics_plan(c, plan);
}
