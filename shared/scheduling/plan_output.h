/*
 * A plan as people and programs read it: the `simulate -o json` contract
 * (docs/simulate.md) and a table for terminals.
 */
#ifndef KP_SCHEDULING_PLAN_OUTPUT_H
#define KP_SCHEDULING_PLAN_OUTPUT_H

#include "base/buf.h"
#include "scheduling/solver.h"

#include <cjson/cJSON.h>

/* {"nodeClaims":[...],"existingNodes":[...],"unschedulable":[...],"summary":{...}} */
cJSON *kp_plan_to_json(const kp_plan *plan, const kp_snapshot *snap, uint32_t n_pending);

/* One planned NodeClaim as it appears in "nodeClaims". */
cJSON *kp_plan_claim_json(const kp_plan *plan, const kp_snapshot *snap, uint32_t claim);

/* NodeClaims with instance type, zone, capacity type, price, pods and
 * utilisation; existing nodes that receive pods; pending pods with reasons.
 * KP_ETOOLARGE when `out` fills up (the table is then incomplete: do not
 * print it). */
int kp_plan_write_table(const kp_plan *plan, const kp_snapshot *snap, uint32_t n_pending, kp_buf *out);

/* The NodeClaim's name in plans: "<nodepool>-<n>", n counting from 1 per NodePool. */
const char *kp_plan_claim_name(const kp_plan *plan, const kp_snapshot *snap, uint32_t claim, char *buf,
                               size_t size);

#endif
