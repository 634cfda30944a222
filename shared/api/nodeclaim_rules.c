/* NodeClaim rules (see nodeclaim_rules.h). */
#include "api/nodeclaim_rules.h"
#include "api/requirements.h"
#include "api/wellknown.h"

#include <string.h>

static bool pool_hash_drifted(const kp_nodepool *np, const kp_nodeclaim *nc)
{
    const char *ph = kp_labels_get(&np->meta.annotations, KP_ANNOTATION_NODEPOOL_HASH);
    const char *pv = kp_labels_get(&np->meta.annotations, KP_ANNOTATION_NODEPOOL_HASH_VERSION);
    const char *ch = kp_labels_get(&nc->meta.annotations, KP_ANNOTATION_NODEPOOL_HASH);
    const char *cv = kp_labels_get(&nc->meta.annotations, KP_ANNOTATION_NODEPOOL_HASH_VERSION);
    return ph && pv && ch && cv && strcmp(pv, cv) == 0 && strcmp(ph, ch) != 0;
}

static bool requirements_drifted(const kp_nodepool *np, const kp_nodeclaim *nc, kp_symtab *symtab, kp_arena *a)
{
    kp_arena_mark m = kp_arena_mark_get(a);
    kp_requirements pool, labels;
    kp_requirements_init(&pool);
    kp_requirements_init(&labels);
    bool ok = true;
    for (size_t i = 0; i < np->template.n_requirements && ok; i++) {
        const kp_selector_req *r = &np->template.requirements[i];
        kp_requirement req;
        ok = kp_requirement_new(&req, symtab, a, r->key, r->op, (const char *const *)r->values, r->n_values, 0) == 0;
        if (ok)
            kp_requirements_add(&pool, symtab, a, &req);
    }
    for (size_t i = 0; i < nc->meta.labels.count; i++)
        kp_requirements_add_label(&labels, symtab, a, nc->meta.labels.items[i].key, nc->meta.labels.items[i].value);
    bool drifted = ok && !kp_requirements_compatible(symtab, &labels, &pool, 0, NULL);
    kp_arena_rewind(a, m);
    return drifted;
}

const char *kp_nodeclaim_static_drift(const kp_nodepool *np, const kp_nodeclaim *nc, kp_symtab *symtab,
                                      kp_arena *scratch)
{
    if (pool_hash_drifted(np, nc))
        return "NodePoolDrifted";
    return requirements_drifted(np, nc, symtab, scratch) ? "RequirementsDrifted" : NULL;
}

enum kp_consolidatable kp_nodeclaim_consolidatable(const kp_nodepool *np, const kp_nodeclaim *nc, int64_t created_ns,
                                                   int64_t now_ns, int64_t *ready_at_ns)
{
    kp_duration after = {0, false};
    if (np && np->disruption.has_consolidate_after)
        after = np->disruption.consolidate_after;
    if (after.never)
        return KP_CONSOLIDATABLE_NEVER;
    int64_t since = created_ns;
    const kp_condition *init = nc ? kp_conditions_get(&nc->conditions, "Initialized") : NULL;
    if (nc && nc->last_pod_event_time.set)
        since = nc->last_pod_event_time.ns;
    else if (init && init->last_transition_time.set)
        since = init->last_transition_time.ns;
    *ready_at_ns = since + after.ns;
    return now_ns >= *ready_at_ns ? KP_CONSOLIDATABLE_YES : KP_CONSOLIDATABLE_NOT_YET;
}
