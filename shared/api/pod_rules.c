/* Karpenter's pod rules (see pod_rules.h). */
#include "api/pod_rules.h"
#include "api/duration.h"
#include "api/taints.h"
#include "api/wellknown.h"

#include <string.h>

const char *kp_pod_dra_unsupported(const kp_pod *p)
{
    return p->has_dra ? KP_POD_DRA_UNSUPPORTED : NULL;
}

bool kp_pod_is_terminal(const kp_pod *p)
{
    return p->phase == KP_POD_PHASE_SUCCEEDED || p->phase == KP_POD_PHASE_FAILED;
}

bool kp_pod_is_active(const kp_pod *p)
{
    return !kp_pod_is_terminal(p) && !p->meta.deletion_timestamp.set;
}

bool kp_pod_tolerates_disrupted(const kp_pod *p)
{
    kp_taint taint = {KP_TAINT_DISRUPTED, "", KP_EFFECT_NO_SCHEDULE};
    return kp_taints_tolerated(&taint, 1, p->tolerations, p->n_tolerations);
}

bool kp_pod_is_stuck_terminating(const kp_pod *p, int64_t now_ns)
{
    return p->meta.deletion_timestamp.set && now_ns - p->meta.deletion_timestamp.ns > KP_POD_STUCK_TERMINATING_NS;
}

bool kp_pod_is_drainable(const kp_pod *p, int64_t now_ns)
{
    return !kp_pod_tolerates_disrupted(p) && !kp_pod_is_stuck_terminating(p, now_ns) && !p->owned_by_node &&
           !p->is_mirror;
}

bool kp_pod_is_waiting_eviction(const kp_pod *p, int64_t now_ns)
{
    return !kp_pod_is_terminal(p) && kp_pod_is_drainable(p, now_ns);
}

enum kp_do_not_disrupt kp_pod_do_not_disrupt(const kp_pod *p, int64_t now_ns, int64_t *until_ns)
{
    const char *v = kp_labels_get(&p->meta.annotations, KP_ANNOTATION_DO_NOT_DISRUPT);
    kp_duration d;
    if (until_ns)
        *until_ns = 0;
    if (!v)
        return KP_DND_NONE;
    if (strcmp(v, "true") == 0)
        return KP_DND_ACTIVE;
    if (kp_duration_parse(v, &d) < 0 || d.never || d.ns <= 0)
        return KP_DND_INVALID;
    if (!p->start_time.set)
        return KP_DND_ACTIVE;
    int64_t until = p->start_time.ns + d.ns;
    if (until_ns)
        *until_ns = until;
    return now_ns < until ? KP_DND_ACTIVE : KP_DND_NONE;
}

bool kp_pod_do_not_disrupt_active(const kp_pod *p, int64_t now_ns)
{
    return kp_pod_do_not_disrupt(p, now_ns, NULL) == KP_DND_ACTIVE;
}

bool kp_pod_is_evictable(const kp_pod *p, int64_t now_ns)
{
    return kp_pod_is_active(p) && !kp_pod_tolerates_disrupted(p) && !p->owned_by_node && !p->is_mirror &&
           !kp_pod_do_not_disrupt_active(p, now_ns);
}
