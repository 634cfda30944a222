/*
 * Karpenter's rules about a pod, decided here once for the planner, the
 * termination controller and anyone else (pkg/utils/pod in Karpenter):
 * which pods are active, drainable, waited for during a drain, and whether
 * karpenter.sh/do-not-disrupt still protects one. Pure functions of a
 * decoded pod and the time.
 */
#ifndef KP_API_POD_RULES_H
#define KP_API_POD_RULES_H

#include "api/objects.h"

#include <stdbool.h>
#include <stdint.h>

/* How long a terminating pod is waited for past its deletion timestamp. */
#define KP_POD_STUCK_TERMINATING_NS (60LL * 1000000000)

/* Succeeded or Failed. */
/* Why a pod with Dynamic Resource Allocation requirements is not scheduled
 * for (IGNORE_DRA_REQUESTS=true, the only setting supported): Karpenter's
 * words, in its FailedScheduling event and log. NULL for other pods. */
#define KP_POD_DRA_UNSUPPORTED                                                                     \
    "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter"
const char *kp_pod_dra_unsupported(const kp_pod *p);

bool kp_pod_is_terminal(const kp_pod *p);
/* Neither terminal nor being deleted. */
bool kp_pod_is_active(const kp_pod *p);
/* Tolerates karpenter.sh/disrupted:NoSchedule (it would land right back). */
bool kp_pod_tolerates_disrupted(const kp_pod *p);
/* Deleted more than a minute past its deletion timestamp. */
bool kp_pod_is_stuck_terminating(const kp_pod *p, int64_t now_ns);
/* A drain waits for it: not tolerating the disrupted taint, not stuck
 * terminating, not a static pod's mirror. */
bool kp_pod_is_drainable(const kp_pod *p, int64_t now_ns);
/* Drainable and not terminal: the drain is not over while it is there. */
bool kp_pod_is_waiting_eviction(const kp_pod *p, int64_t now_ns);

/* What karpenter.sh/do-not-disrupt says at `now_ns`. */
enum kp_do_not_disrupt {
    KP_DND_NONE = 0, /* absent, or a duration that has run out */
    KP_DND_ACTIVE,   /* "true", or a positive duration since status.startTime not over yet
                      * (no startTime: protected, to be safe) */
    KP_DND_INVALID,  /* neither "true" nor a positive duration: ignored, as Karpenter does */
};
/* *until_ns (may be NULL) gets when a duration's protection ends, 0 for "true". */
enum kp_do_not_disrupt kp_pod_do_not_disrupt(const kp_pod *p, int64_t now_ns, int64_t *until_ns);
bool kp_pod_do_not_disrupt_active(const kp_pod *p, int64_t now_ns);

/* Eviction may be asked for: active, not tolerating the disrupted taint, not
 * a mirror, not protected by do-not-disrupt. */
bool kp_pod_is_evictable(const kp_pod *p, int64_t now_ns);

#endif
