/*
 * Cluster-wide caps and NodePool dollar caps (api/caps.h) as the solver
 * counts and enforces them: kp_solve_opts.caps, plus every NodePool's
 * KP_ANNOTATION_MAX_HOURLY_COST, bound the NodeClaims a solve may add.
 *
 * What is counted, per snapshot node that is not being deleted:
 *   nodes, cores, memory   every Node, managed or not (as Cluster Autoscaler
 *                          counts), and every NodeClaim without a Node; a
 *                          NodeClaim not launched yet counts as its largest
 *                          option;
 *   dollars                the nodes and NodeClaims of known NodePools: a
 *                          launched one at its offering's price (instance
 *                          type, zone, capacity type), one not launched yet at
 *                          the dearest offering its requirements allow.
 * A new NodeClaim keeps only options that fit in what is left (each its
 * capacity and the dearest offering it may launch into), and is charged the
 * largest and dearest of them: whichever option launches, the caps hold.
 * Like NodePool limits, a cap that leaves nothing for one NodePool lets the
 * next (by weight) try. A pod held back gets a reason naming the cap.
 *
 * Disruption simulations (kp_solve_opts.exclude_nodes) may use what their
 * candidates free: what is left is max(cap, usage with the candidates) minus
 * usage without them, so a cluster above a cap (the cap was lowered) can
 * still replace nodes, and no move ever grows it further.
 *
 * With a cap in force for a NodePool the repacking pass (--no-improve's) leaves
 * its NodeClaims as planned: they were charged as they are.
 */
#ifndef KP_SCHEDULING_CAPS_H
#define KP_SCHEDULING_CAPS_H

#include "api/caps.h"
#include "scheduling/snapshot.h"

typedef struct kp_caps_usage {
    int64_t nodes;
    kp_milli128 cores, memory; /* milli-units */
    double hourly_cost;
    uint32_t unpriced; /* managed nodes the catalog has no offering for: counted at $0 */
} kp_caps_usage;

/* What the snapshot's nodes use (none excluded), and per template the dollars
 * of its nodes (`pool_cost`: n_templates entries, or NULL). */
void kp_caps_measure(kp_snapshot *snap, kp_caps_usage *total, double *pool_cost);

#endif
