/*
 * Karpenter's rules about a NodeClaim against its NodePool, in one place for
 * the disruption planner and the nodeclaim.disruption controller (which
 * writes them as the Drifted and Consolidatable conditions):
 *
 *   static drift   "NodePoolDrifted" when the claim's karpenter.sh/nodepool-hash
 *                  differs from the pool's at the same hash version (a version
 *                  change is never drift), else "RequirementsDrifted" when the
 *                  claim's labels no longer satisfy the pool's requirements;
 *   consolidatable consolidateAfter has passed since the last pod event (or
 *                  since the claim initialized; `created_ns` without either).
 */
#ifndef KP_API_NODECLAIM_RULES_H
#define KP_API_NODECLAIM_RULES_H

#include "api/objects.h"
#include "api/symtab.h"
#include "base/arena.h"

#include <stdint.h>

/* The static drift reason, or NULL. `scratch` holds temporary requirements. */
const char *kp_nodeclaim_static_drift(const kp_nodepool *np, const kp_nodeclaim *nc, kp_symtab *symtab,
                                      kp_arena *scratch);

enum kp_consolidatable {
    KP_CONSOLIDATABLE_NEVER,   /* consolidateAfter: Never */
    KP_CONSOLIDATABLE_NOT_YET, /* the window has not passed: *ready_at_ns says when it does */
    KP_CONSOLIDATABLE_YES,
};
enum kp_consolidatable kp_nodeclaim_consolidatable(const kp_nodepool *np, const kp_nodeclaim *nc, int64_t created_ns,
                                                   int64_t now_ns, int64_t *ready_at_ns);

#endif
