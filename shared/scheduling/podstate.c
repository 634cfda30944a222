/*
 * A pending pod's scheduling state: which of its soft constraints are still
 * in force, and the requirements that follow. Karpenter first treats every
 * preference as required, then relaxes one at a time, in this order:
 * the first of several required node-affinity terms (they are ORed), the
 * heaviest preferred pod affinity, the heaviest preferred pod anti-affinity,
 * the heaviest preferred node affinity, a ScheduleAnyway spread constraint,
 * and finally (when some NodePool has one) PreferNoSchedule taints.
 */
#include "scheduling/solver_internal.h"

void ps_build_requirements(solver *s, podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    kp_requirements_init(&st->strict);
    kp_requirements_add_all(&st->strict, s->symtab, s->arena, &p->node_selector);
    if (p->n_required > 0)
        kp_requirements_add_all(&st->strict, s->symtab, s->arena, &p->required[st->req_term]);
    if (s->opts->ignore_preferences || st->pref_node_removed >= p->n_preferred) {
        st->reqs = st->strict;
        return;
    }
    kp_requirements_copy(&st->reqs, s->arena, &st->strict);
    kp_requirements_add_all(&st->reqs, s->symtab, s->arena, &p->preferred[st->pref_node_removed]);
}

bool ps_spread_active(const podstate *st, uint32_t i)
{
    return i >= 64 || !(st->spreads_removed & (UINT64_C(1) << i));
}

static bool relax_spread(const kp_spod *p, podstate *st)
{
    for (uint32_t i = 0; i < p->n_spreads && i < 64; i++) {
        if (!p->spreads[i].do_not_schedule && ps_spread_active(st, i)) {
            st->spreads_removed |= UINT64_C(1) << i;
            return true;
        }
    }
    return false;
}

/* One step of relaxation; false when nothing is left to relax. */
bool ps_relax(solver *s, podstate *st)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    bool relaxed = true;
    if (p->n_required > st->req_term + 1)
        st->req_term++;
    else if (st->pref_aff_removed < p->n_affinity_pref)
        st->pref_aff_removed++;
    else if (st->pref_anti_removed < p->n_anti_pref)
        st->pref_anti_removed++;
    else if (st->pref_node_removed < p->n_preferred)
        st->pref_node_removed++;
    else if (relax_spread(p, st))
        ;
    else if (s->tolerate_pns_available && !st->tolerate_pns)
        st->tolerate_pns = true;
    else
        relaxed = false;
    if (relaxed)
        ps_build_requirements(s, st);
    return relaxed;
}

/* Back to the pod as written (Karpenter retries the original, not the relaxed copy). */
void ps_reset(solver *s, podstate *st)
{
    st->req_term = 0;
    st->pref_node_removed = st->pref_aff_removed = st->pref_anti_removed = 0;
    st->spreads_removed = 0;
    st->tolerate_pns = false;
    ps_build_requirements(s, st);
}

bool ps_tolerates(const solver *s, const podstate *st, const kp_taint *taints, uint32_t n,
                  long *first_bad)
{
    const kp_spod *p = &s->snap->pods[st->pod];
    for (uint32_t i = 0; i < n; i++) {
        if (st->tolerate_pns && taints[i].effect == KP_EFFECT_PREFER_NO_SCHEDULE)
            continue;
        bool ok = false;
        for (uint32_t j = 0; j < p->n_tolerations && !ok; j++)
            ok = kp_toleration_tolerates(&p->tolerations[j], &taints[i]);
        if (!ok) {
            if (first_bad)
                *first_bad = (long)i;
            return false;
        }
    }
    return true;
}
