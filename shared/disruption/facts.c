/*
 * Facts about each node for one disruption loop (Karpenter's Candidate and
 * the state checks behind it): is it ours and initialised, what pods would
 * need a new home, do PodDisruptionBudgets or do-not-disrupt annotations
 * protect them, what does it cost per hour and to disrupt, and is it empty,
 * consolidatable, drifted or expired.
 */
#include "disruption/disruption_internal.h"
#include "api/nodeclaim_rules.h"
#include "api/pod_rules.h"
#include "api/wellknown.h"
#include "base/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t facts_now(const planner *p)
{
    return p->opts->now_ns;
}

static const char *annotation(const kp_labels *l, const char *key)
{
    return l ? kp_labels_get(l, key) : NULL;
}

/* "true", or a duration counted from the pod's start (api/pod_rules.h). */
static bool do_not_disrupt_active(const planner *p, const kp_pod *pod)
{
    return kp_pod_do_not_disrupt_active(pod, facts_now(p));
}

static bool active(const kp_spod *s)
{
    return !s->terminal && !s->terminating;
}

static bool reschedulable(const kp_spod *s)
{
    const kp_pod *pod = s->src;
    bool stateful_leaving = pod && pod->owned_by_statefulset && s->terminating;
    return (active(s) || stateful_leaving) && !s->daemon && !(pod && (pod->owned_by_node || pod->is_mirror));
}

/* Karpenter's EvictionCost: 1, plus deletion cost and priority scaled down, clamped. */
double kp_disrupt_eviction_cost(const kp_pod *pod)
{
    double cost = 1.0;
    const char *dc = pod ? annotation(&pod->meta.annotations, "controller.kubernetes.io/pod-deletion-cost") : NULL;
    if (dc) {
        char *end;
        double v = strtod(dc, &end);
        if (!*end)
            cost += v / 134217728.0; /* 2^27 */
    }
    if (pod && pod->has_priority)
        cost += (double)pod->priority / 33554432.0; /* 2^25 */
    return cost < -10 ? -10 : cost > 10 ? 10 : cost;
}

static bool tolerates_disrupted_taint(const kp_spod *s)
{
    kp_taint t = {KP_TAINT_DISRUPTED, "", KP_EFFECT_NO_SCHEDULE};
    return kp_taints_tolerated(&t, 1, s->tolerations, s->n_tolerations);
}

static bool pdb_matches(const kp_pdb *pdb, const kp_pod *pod)
{
    if (pdb->selects_none || strcmp(pdb->meta.namespace, pod->meta.namespace) != 0)
        return false;
    const kp_label_selector *ls = &pdb->selector;
    for (size_t i = 0; i < ls->match_labels.count; i++) {
        const char *v = kp_labels_get(&pod->meta.labels, ls->match_labels.items[i].key);
        if (!v || strcmp(v, ls->match_labels.items[i].value) != 0)
            return false;
    }
    for (size_t i = 0; i < ls->n_match_expressions; i++) {
        const kp_selector_req *r = &ls->match_expressions[i];
        const char *v = kp_labels_get(&pod->meta.labels, r->key);
        bool in = false;
        for (size_t j = 0; v && j < r->n_values && !in; j++)
            in = strcmp(v, r->values[j]) == 0;
        bool ok = r->op == KP_OP_IN ? in : r->op == KP_OP_NOT_IN ? !in : r->op == KP_OP_EXISTS ? v != NULL : !v;
        if (!ok)
            return false;
    }
    return true;
}

static bool unready(const kp_pod *pod)
{
    const kp_condition *c = kp_conditions_get(&pod->conditions, "Ready");
    return c && c->status == KP_CONDITION_FALSE;
}

/* The PodDisruptionBudget that keeps `pod` from being evicted now, or NULL;
 * *several* is set when more than one selects it (the API server then refuses
 * every eviction). An unready pod under an AlwaysAllow budget may go. */
static const kp_pdb *blocking_pdb(const kp_snapshot *snap, const kp_pod *pod, const kp_pdb **several)
{
    const kp_pdb *match = NULL;
    *several = NULL;
    for (uint32_t b = 0; b < snap->n_pdbs; b++) {
        if (!pdb_matches(snap->pdbs[b], pod))
            continue;
        if (match) {
            *several = snap->pdbs[b];
            return match;
        }
        match = snap->pdbs[b];
    }
    if (!match || (match->always_allow_unhealthy && unready(pod)))
        return NULL;
    return match->disruptions_allowed <= 0 ? match : NULL;
}

bool facts_pod_reschedulable_now(const planner *p, const kp_spod *s)
{
    if (!s->src)
        return true;
    if (do_not_disrupt_active(p, s->src))
        return false;
    if (tolerates_disrupted_taint(s) || s->src->owned_by_node || s->src->is_mirror)
        return true;
    const kp_pdb *several;
    return blocking_pdb(p->snap, s->src, &several) == NULL && !several;
}

/* Why the pods on `node` may not be evicted now, or NULL (Karpenter's
 * ValidatePodsDisruptable: do-not-disrupt, then PodDisruptionBudgets). */
static const kp_disrupt_blocked *pods_protected(planner *p, uint32_t node)
{
    const kp_snapshot *snap = p->snap;
    kp_arena *a = p->plan->arena;
    for (uint32_t k = p->pods_first[node]; k < p->pods_first[node + 1]; k++) {
        const kp_spod *s = &snap->pods[p->pods_list[k]];
        if (!s->src || !active(s))
            continue;
        if (do_not_disrupt_active(p, s->src))
            return why_new(p, KP_BLOCK_POD_DO_NOT_DISRUPT, s->ns_name,
                           kp_arena_printf(a, "pod %s has the %s annotation", s->ns_name, KP_ANNOTATION_DO_NOT_DISRUPT),
                           NULL);
        if (tolerates_disrupted_taint(s) || s->src->owned_by_node || s->src->is_mirror)
            continue;
        const kp_pdb *several, *match = blocking_pdb(snap, s->src, &several);
        if (several)
            return why_new(p, KP_BLOCK_PDB_MULTIPLE,
                           kp_arena_printf(a, "%s/%s %s/%s", match->meta.namespace, match->meta.name,
                                           several->meta.namespace, several->meta.name),
                           kp_arena_printf(a, "pod %s is selected by more than one PodDisruptionBudget (%s and %s): "
                                           "eviction cannot proceed", s->ns_name, match->meta.name, several->meta.name),
                           NULL);
        if (match) {
            kp_disrupt_blocked *w = (kp_disrupt_blocked *)why_new(
                p, KP_BLOCK_PDB, kp_arena_printf(a, "%s/%s", match->meta.namespace, match->meta.name),
                kp_arena_printf(a, "PodDisruptionBudget %s/%s allows 0 disruptions (pod %s)", match->meta.namespace,
                                match->meta.name, s->ns_name),
                NULL);
            w->pod = s->ns_name;
            return w;
        }
    }
    return NULL;
}

static const kp_disrupt_blocked *node_not_disruptable(planner *p, const kp_snode *n)
{
    const kp_labels *na = n->src_node ? &n->src_node->meta.annotations : NULL;
    const kp_labels *ca = n->src_claim ? &n->src_claim->meta.annotations : NULL;
    const char *dnd = annotation(na, KP_ANNOTATION_DO_NOT_DISRUPT);
    if (!dnd)
        dnd = annotation(ca, KP_ANNOTATION_DO_NOT_DISRUPT);
    if (n->in_flight)
        return why_new(p, KP_BLOCK_IN_FLIGHT, NULL, "its NodeClaim has no node yet", NULL);
    if (!n->initialized)
        return why_new(p, KP_BLOCK_NOT_INITIALIZED, NULL, "node is not initialized", NULL);
    if (n->deleting)
        return why_new(p, KP_BLOCK_DELETING, NULL, "node is being deleted", NULL);
    uint32_t node = (uint32_t)(n - p->snap->nodes);
    if (p->nominated && p->nominated[node] >= 0) {
        const char *pod = p->snap->pods[p->nominated[node]].ns_name;
        return why_new(p, KP_BLOCK_NOMINATED, pod,
                       kp_arena_printf(p->plan->arena, "node is nominated for pending pod %s", pod), NULL);
    }
    if (dnd && strcmp(dnd, "true") == 0)
        return why_new(p, KP_BLOCK_NODE_DO_NOT_DISRUPT, NULL,
                       "disruption is blocked by the karpenter.sh/do-not-disrupt annotation on the node", NULL);
    if (n->template_index < 0) {
        const char *pool = kp_sym_str(p->snap->symtab, kp_symlabels_get(&n->labels, KP_SYM_NODEPOOL));
        return why_new(p, KP_BLOCK_NODEPOOL_NOT_FOUND, pool,
                       kp_arena_printf(p->plan->arena, "its NodePool %s is not known", pool), NULL);
    }
    return NULL;
}

static double node_price(const planner *p, uint32_t node)
{
    const kp_snode *n = &p->snap->nodes[node];
    int32_t it = p->it_of_node[node];
    if (it < 0)
        return 0;
    kp_sym zone = kp_symlabels_get(&n->labels, KP_SYM_ZONE), ct = kp_symlabels_get(&n->labels, KP_SYM_CAPACITY_TYPE);
    const kp_sit *sit = &p->snap->its[it];
    for (uint32_t o = 0; o < sit->n_offerings; o++)
        if (sit->offerings[o].zone == zone && sit->offerings[o].capacity_type == ct)
            return sit->offerings[o].price;
    return 0;
}

static void collect_pods(planner *p, uint32_t node, node_facts *f)
{
    const kp_snapshot *snap = p->snap;
    uint32_t first = p->pods_first[node], end = p->pods_first[node + 1];
    f->cost = 1.0;
    f->pods = KP_ARENA_NEW(p->loop_arena, uint32_t, end > first ? end - first : 1);
    for (uint32_t k = first; k < end; k++) {
        uint32_t i = p->pods_list[k];
        const kp_spod *s = &snap->pods[i];
        if (!reschedulable(s))
            continue;
        f->pods[f->n_pods++] = i;
        double c = kp_disrupt_eviction_cost(s->src);
        f->cost += c > 0 ? c : 0;
    }
    f->empty = f->cost <= 1.0;
}

static const kp_nodepool *pool_of(const planner *p, const kp_snode *n)
{
    return n->template_index >= 0 ? p->snap->templates[n->template_index].src : NULL;
}

/* consolidateAfter, counted from the last pod event or initialisation
 * (Karpenter's Consolidatable condition). */
static void consolidation_window(planner *p, const kp_snode *n, node_facts *f)
{
    const kp_nodepool *np = pool_of(p, n);
    kp_duration after = {0, false};
    if (np && np->disruption.has_consolidate_after)
        after = np->disruption.consolidate_after;
    if (after.never) {
        f->not_consolidatable = why_new(p, KP_BLOCK_CONSOLIDATION_DISABLED, np->meta.name,
                                        kp_arena_printf(p->plan->arena, "NodePool %s has consolidateAfter: Never",
                                                        np->meta.name),
                                        NULL);
        return;
    }
    int64_t ready_at = 0;
    enum kp_consolidatable state =
        kp_nodeclaim_consolidatable(np, n->src_claim, n->created_ns, facts_now(p), &ready_at);
    f->consolidatable = state == KP_CONSOLIDATABLE_YES;
    f->closed_to_moves = !f->consolidatable && after.ns > 0;
    if (!f->consolidatable) {
        char when[32];
        kp_time_format_rfc3339(ready_at, when, sizeof(when));
        f->not_consolidatable = why_new(
            p, KP_BLOCK_CONSOLIDATE_AFTER, NULL,
            kp_arena_printf(p->plan->arena, "consolidateAfter has not elapsed (until %s)", when), NULL);
    }
}

/* A static NodePool's nodes are never consolidated, whatever its
 * consolidateAfter (Karpenter's emptiness and consolidation pass over them
 * without an event); drift replaces them one for one (static_drift.c). */
static void static_pool(planner *p, const kp_snode *n, node_facts *f)
{
    const char *pool = p->snap->templates[n->template_index].name;
    f->consolidatable = f->closed_to_moves = false;
    f->not_consolidatable = why_new(
        p, KP_BLOCK_STATIC_NODEPOOL, pool,
        kp_arena_printf(p->plan->arena, "NodePool %s is static (spec.replicas): consolidation never removes its nodes",
                        pool),
        NULL);
}

/* Karpenter's InstanceTypeNotFound: the NodeClaim's instance type is not
 * offered any more (unknown, or no offering in its zone and capacity type,
 * available or not); checked from an hour after the claim was created. */
static bool instance_type_gone(const planner *p, uint32_t node, const kp_nodeclaim *nc)
{
    const kp_snode *n = &p->snap->nodes[node];
    if (facts_now(p) - nc->meta.creation_timestamp.ns <= INT64_C(3600) * KP_NS_PER_SEC || !n->instance_type)
        return false;
    int32_t it = p->it_of_node[node];
    if (it < 0)
        return true;
    kp_sym zone = kp_symlabels_get(&n->labels, KP_SYM_ZONE), ct = kp_symlabels_get(&n->labels, KP_SYM_CAPACITY_TYPE);
    const kp_sit *sit = &p->snap->its[it];
    for (uint32_t o = 0; o < sit->n_offerings; o++)
        if ((!zone || sit->offerings[o].zone == zone) &&
            (!ct || sit->offerings[o].capacity_type == ct ||
             (ct == KP_SYM_RESERVED && sit->offerings[o].capacity_type == KP_SYM_ON_DEMAND)))
            return false;
    return true;
}

/* Karpenter's order: the NodePool hash, the NodePool's requirements against
 * the NodeClaim's labels, the instance type, then the cloud provider — its
 * answer when the caller asked it (opts.cloud_drift), else the NodeClaim's
 * Drifted condition (what an earlier pass found). */
static void drift(planner *p, uint32_t node, node_facts *f)
{
    const kp_snode *n = &p->snap->nodes[node];
    const kp_nodepool *np = pool_of(p, n);
    const kp_nodeclaim *nc = n->src_claim;
    if (!np || !nc)
        return;
    const kp_condition *cond = kp_conditions_get(&nc->conditions, "Drifted");
    const char *cloud = NULL;
    if (p->opts->cloud_drift)
        cloud = node < p->n_initial ? p->opts->cloud_drift[node] : NULL;
    else if (cond && cond->status == KP_CONDITION_TRUE)
        cloud = *cond->reason ? cond->reason : "Drifted";
    f->drifted_ns = cond && cond->last_transition_time.set ? cond->last_transition_time.ns : facts_now(p);
    kp_arena_mark m = kp_arena_mark_get(p->scratch);
    const char *static_drift = kp_nodeclaim_static_drift(np, nc, p->snap->symtab, p->scratch);
    kp_arena_rewind(p->scratch, m); /* the reason is a literal, not in scratch */
    if (static_drift)
        f->drift_reason = static_drift;
    else if (instance_type_gone(p, node, nc))
        f->drift_reason = "InstanceTypeNotFound";
    else if (cloud && *cloud)
        f->drift_reason = kp_arena_strdup(p->plan->arena, cloud);
    f->drifted = f->drift_reason != NULL;
}

static void expiry(planner *p, const kp_snode *n, node_facts *f)
{
    const kp_nodepool *np = pool_of(p, n);
    kp_duration after = {INT64_C(720) * 3600 * KP_NS_PER_SEC, false}; /* the CRD default */
    int64_t created = n->created_ns;
    if (n->src_claim && n->src_claim->spec.has_expire_after) {
        after = n->src_claim->spec.expire_after;
        created = n->src_claim->meta.creation_timestamp.ns;
    } else if (np && np->template.has_expire_after) {
        after = np->template.expire_after;
    }
    f->expired = !after.never && created > 0 && facts_now(p) >= created + after.ns;
}

static void budget_flags(const kp_snode *n, node_facts *f)
{
    /* A claim whose instance is already terminating is gone as far as budgets go. */
    bool terminating = n->src_claim && kp_conditions_is_true(&n->src_claim->conditions, "InstanceTerminating");
    f->counts_for_budget = f->managed && n->initialized && !n->in_flight && !terminating;
    bool ready = true;
    if (n->src_node)
        ready = kp_conditions_is_true(&n->src_node->conditions, "Ready");
    f->consumes_budget = f->counts_for_budget && (!ready || n->deleting);
}

static void facts_for(planner *p, uint32_t i, node_facts *f)
{
    const kp_snode *n = &p->snap->nodes[i];
    memset(f, 0, sizeof(*f));
    f->managed = n->managed && n->template_index >= 0;
    if (!n->managed)
        return;
    f->blocked = node_not_disruptable(p, n);
    collect_pods(p, i, f);
    f->price = node_price(p, i);
    kp_sym ct = kp_symlabels_get(&n->labels, KP_SYM_CAPACITY_TYPE);
    f->spot = ct == KP_SYM_SPOT;
    budget_flags(n, f);
    /* Expiration is forceful: nothing on the node holds it back. */
    if (!n->in_flight)
        expiry(p, n, f);
    if (f->blocked)
        return;
    consolidation_window(p, n, f);
    if (p->snap->templates[n->template_index].is_static)
        static_pool(p, n, f);
    drift(p, i, f);
    const kp_disrupt_blocked *protected_pods = pods_protected(p, i);
    f->eligible = protected_pods == NULL;
    /* Drift is eventual: with a termination grace period bounding it, pods
     * that block eviction delay the node's end but do not prevent it. */
    f->eligible_forced = f->eligible || (n->src_claim && n->src_claim->spec.has_termination_grace_period);
    if (protected_pods)
        f->blocked = protected_pods;
}

/* Bucket the pods by node once per loop. */
static void index_pods(planner *p)
{
    const kp_snapshot *snap = p->snap;
    uint32_t *first = KP_ARENA_NEW(p->loop_arena, uint32_t, snap->n_nodes + 1);
    uint32_t *list = KP_ARENA_NEW(p->loop_arena, uint32_t, snap->n_pods ? snap->n_pods : 1);
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (snap->pods[i].node >= 0)
            first[snap->pods[i].node + 1]++;
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        first[i + 1] += first[i];
    uint32_t *fill = kp_arena_memdup(p->loop_arena, first, (snap->n_nodes + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (snap->pods[i].node >= 0)
            list[fill[snap->pods[i].node]++] = i;
    p->pods_first = first;
    p->pods_list = list;
}

void facts_compute(planner *p)
{
    index_pods(p);
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        if (p->gone[i]) {
            memset(&p->facts[i], 0, sizeof(node_facts));
            continue;
        }
        facts_for(p, i, &p->facts[i]);
    }
}
