/* The disruption plan as JSON: what `simulate --disrupt` adds to the plan. */
#include "disruption/disruption_internal.h"
#include "scheduling/plan_output.h"

#include <math.h>

static cJSON *score_json(const kp_disrupt_score *s, const kp_snapshot *snap)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "nodePool", snap->templates[s->template_index].name);
    cJSON_AddStringToObject(o, "policy", s->policy);
    cJSON_AddBoolToObject(o, "approved", s->approved);
    if (!s->scored)
        return o;
    cJSON_AddNumberToObject(o, "score", isinf(s->score) ? 1e308 : s->score);
    cJSON_AddNumberToObject(o, "threshold", s->threshold);
    cJSON_AddNumberToObject(o, "savingsFraction", s->savings_fraction);
    cJSON_AddNumberToObject(o, "disruptionFraction", s->disruption_fraction);
    cJSON_AddStringToObject(o, "eventReason", s->event_reason);
    cJSON_AddStringToObject(o, "message", s->message);
    return o;
}

static cJSON *command_json(const kp_disrupt_command *c, const kp_snapshot *snap)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", kp_disrupt_method_name(c->method));
    cJSON_AddStringToObject(o, "reason", c->reason);
    if (c->drift_reason)
        cJSON_AddStringToObject(o, "driftReason", c->drift_reason);
    cJSON_AddNumberToObject(o, "loop", c->loop);
    cJSON_AddStringToObject(o, "decision", kp_disrupt_decision_name(c->decision));
    cJSON_AddBoolToObject(o, "forceful", c->forceful);
    cJSON *cands = cJSON_AddArrayToObject(o, "candidates");
    for (uint32_t k = 0; k < c->n_candidates; k++)
        cJSON_AddItemToArray(cands, cJSON_CreateString(snap->nodes[c->candidates[k]].name));
    cJSON *repl = cJSON_AddArrayToObject(o, "replacements");
    for (uint32_t k = 0; c->simulation && k < c->simulation->n_claims; k++)
        cJSON_AddItemToArray(repl, kp_plan_claim_json(c->simulation, snap, k));
    cJSON_AddNumberToObject(o, "savingsHourly", c->savings_hourly);
    if (c->n_scores) {
        cJSON *scores = cJSON_AddArrayToObject(o, "scores");
        for (uint32_t k = 0; k < c->n_scores; k++)
            cJSON_AddItemToArray(scores, score_json(&c->scores[k], snap));
    }
    return o;
}

cJSON *kp_disruption_plan_commands_json(const kp_disruption_plan *plan, const kp_snapshot *snap)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < plan->n_commands; i++)
        cJSON_AddItemToArray(arr, command_json(&plan->commands[i], snap));
    return arr;
}

static void add_optional(cJSON *o, const char *key, const char *value)
{
    if (value)
        cJSON_AddStringToObject(o, key, value);
}

cJSON *kp_disruption_plan_blocked_json(const kp_disruption_plan *plan, const kp_snapshot *snap)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < plan->n_blocked; i++) {
        const kp_disrupt_blocked *b = &plan->blocked[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "node", snap->nodes[b->node].name);
        cJSON_AddStringToObject(o, "reason", b->reason);
        cJSON_AddStringToObject(o, "kind", kp_disrupt_block_name(b->kind));
        if (b->replacement)
            cJSON_AddBoolToObject(o, "replacement", true);
        add_optional(o, "eventReason", b->event_reason);
        add_optional(o, "message", b->event_reason ? b->message : NULL);
        add_optional(o, "object", b->object);
        add_optional(o, "pod", b->pod);
        add_optional(o, "budgetReason", b->budget_reason);
        if (b->score)
            cJSON_AddItemToObject(o, "score", score_json(b->score, snap));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
