/* The disruption plan as JSON: what `simulate --disrupt` adds to the plan. */
#include "disruption/disruption_internal.h"
#include "scheduling/plan_output.h"

cJSON *kp_disruption_plan_commands_json(const kp_disruption_plan *plan, const kp_snapshot *snap)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < plan->n_commands; i++) {
        const kp_disrupt_command *c = &plan->commands[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "method", kp_disrupt_method_name(c->method));
        cJSON_AddStringToObject(o, "reason", kp_disrupt_reason(c->method));
        cJSON_AddNumberToObject(o, "loop", c->loop);
        cJSON *cands = cJSON_AddArrayToObject(o, "candidates");
        for (uint32_t k = 0; k < c->n_candidates; k++)
            cJSON_AddItemToArray(cands, cJSON_CreateString(snap->nodes[c->candidates[k]].name));
        cJSON *repl = cJSON_AddArrayToObject(o, "replacements");
        for (uint32_t k = 0; c->simulation && k < c->simulation->n_claims; k++)
            cJSON_AddItemToArray(repl, kp_plan_claim_json(c->simulation, snap, k));
        cJSON_AddNumberToObject(o, "savingsHourly", c->savings_hourly);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

cJSON *kp_disruption_plan_blocked_json(const kp_disruption_plan *plan, const kp_snapshot *snap)
{
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < plan->n_blocked; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "node", snap->nodes[plan->blocked[i].node].name);
        cJSON_AddStringToObject(o, "reason", plan->blocked[i].reason);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
