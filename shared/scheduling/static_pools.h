/*
 * Static NodePools (spec.replicas) in plans: the one home of what a static
 * NodePool's NodeClaim is when a plan shows one. A static NodePool keeps
 * exactly `replicas` NodeClaims, launched for the count and never for pods,
 * so the solver opens none from it (kp_template.is_static); what it lacks is
 * launched by the static controller whatever the pods do. Used by
 *
 *   - simulate: the replicas a static NodePool lacks are seeded into the
 *     snapshot as NodeClaims in flight before solving, so pending pods that
 *     fit them go there, and folded into the plan afterwards as planned
 *     NodeClaims of that NodePool (kp_static_seed_new, kp_static_seed_fold);
 *   - the disruption planner: a drifted static node is replaced by one
 *     NodeClaim of its NodePool (kp_static_claim).
 *
 * What launches is what the cloud providers launch for a NodeClaim without
 * an instance-type list: the cheapest available offering the NodePool's
 * requirements allow. A plan shows that instance type first and the other
 * compatible ones after it, cheapest first.
 */
#ifndef KP_SCHEDULING_STATIC_POOLS_H
#define KP_SCHEDULING_STATIC_POOLS_H

#include "scheduling/solver.h"

/* A static template's NodeClaims (with their Nodes, or in flight, or only
 * planned), as Karpenter's NodePoolState counts them; a Node without its
 * NodeClaim is not a replica:
 *   deleting  the Node or NodeClaim has a deletion timestamp, or the
 *             instance is terminating;
 *   pending   a disruption command has taken it (its NodeClaim carries
 *             DisruptionReason=True, or the snapshot marks it deleting while
 *             its objects are not): a replacement is on its way;
 *   active    every other one.
 * `gone` (n_nodes flags, or NULL): nodes a plan has taken away already,
 * left out. */
typedef struct kp_static_count {
    uint32_t active, pending, deleting;
} kp_static_count;

void kp_static_count_nodes(const kp_snapshot *snap, uint32_t t, const bool *gone, kp_static_count *out);

/* Room limits.nodes leaves for `want` more NodeClaims of template `t`
 * (every node counts, deleting ones too): `want` without a limit. */
int64_t kp_static_room(const kp_snapshot *snap, uint32_t t, const kp_static_count *n, int64_t want);

/* NodeClaims static template `t` launches now (Karpenter's static
 * provisioning): none while active + pending reach spec.replicas, else
 * replicas - active, within limits.nodes; 0 for a dynamic template. */
uint32_t kp_static_missing(const kp_snapshot *snap, uint32_t t);

/* NodeClaims static template `t` has beyond spec.replicas (Karpenter's static
 * deprovisioning): active - replicas, or 0. Nodes pending a disruption are
 * not counted: their replacement is the replica. */
uint32_t kp_static_excess(const kp_snapshot *snap, uint32_t t);

/* A planned NodeClaim of template `t` without pods, its memory in `arena`:
 * the template's requirements, its instance types cheapest first (the first
 * is the launch: zone, capacity type and price are that offering's), no
 * requests. KP_ENOTFOUND (with a message) when no instance type of the
 * template has an available offering. */
int kp_static_claim(const kp_snapshot *snap, uint32_t t, kp_arena *arena, kp_plan_claim *out);

typedef struct kp_static_seed kp_static_seed;

/* Before solving: every missing replica of every static template becomes a
 * NodeClaim in flight at the end of `snap` with its launch's room, labels and
 * the template's taints. *out is NULL when nothing is missing. A template
 * with nothing to launch is skipped (kp_static_seed_notes says why). */
int kp_static_seed_new(kp_snapshot *snap, kp_static_seed **out);

/* After solving with the seed in place: the seeded NodeClaims join `plan`
 * as planned NodeClaims of their NodePools, with the pods the plan put on
 * them and their requests; they leave `snap` (which must have grown by
 * nothing else since kp_static_seed_new) and the plan's existing nodes. */
int kp_static_seed_fold(kp_static_seed *seed, kp_snapshot *snap, kp_plan *plan);

/* Static templates that lacked replicas but had nothing to launch, one
 * message each ("nodepool \"x\": ..."). */
size_t kp_static_seed_note_count(const kp_static_seed *seed);
const char *kp_static_seed_note(const kp_static_seed *seed, size_t i);

kp_static_seed *kp_static_seed_free(kp_static_seed *seed);

/* kp_solve as `simulate` plans with static NodePools: their missing replicas
 * are seeded, `pending` solved, and the seed folded into *out as planned
 * NodeClaims of their NodePools. `on_note` (may be NULL) hears why a static
 * NodePool that lacks replicas launches nothing. */
int kp_static_solve(kp_snapshot *snap, const kp_solve_opts *opts, const uint32_t *pending, uint32_t n_pending,
                    void (*on_note)(void *ctx, const char *text), void *ctx, kp_plan **out);

#endif
