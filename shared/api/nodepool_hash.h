/*
 * The NodePool template hash behind drift (karpenter.sh/nodepool-hash): a
 * NodeClaim records the hash of its NodePool's spec.template when it is
 * created; when the NodePool's hash moves on, the NodeClaim has drifted.
 *
 * Karpenter hashes the Go struct with hashstructure, which no C program can
 * reproduce bit for bit, so our hash carries its own version
 * (KP_NODEPOOL_HASH_VERSION). Karpenter's rule for a version mismatch is to
 * re-stamp the NodeClaim rather than call it drifted, so NodeClaims made by
 * Karpenter itself are adopted without a wave of replacements.
 *
 * What is hashed matches Karpenter's choices: the whole template (labels,
 * annotations, taints, startup taints, nodeClassRef, expireAfter,
 * terminationGracePeriod...) except requirements and resources, which change
 * what new nodes look like without making old ones wrong; lists are sets and
 * empty or zero values count as absent.
 */
#ifndef KP_API_NODEPOOL_HASH_H
#define KP_API_NODEPOOL_HASH_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define KP_NODEPOOL_HASH_VERSION "c1"

enum { KP_NODEPOOL_HASH_LEN = 24 }; /* a decimal uint64 and its NUL */

/* The hash of `nodepool` (a NodePool object) as decimal text. A NodePool
 * without spec.template hashes like an empty template. Returns buf. */
char *kp_nodepool_hash(const cJSON *nodepool, char *buf, size_t size);

#endif
