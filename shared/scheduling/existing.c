/*
 * Existing nodes (and NodeClaims in flight) as places for pending pods
 * (Karpenter's ExistingNode): what is left after the pods already bound and
 * the DaemonSet pods that will still arrive, and whether a pod fits, tolerates
 * the taints, matches the labels and keeps its topology constraints.
 */
#include "scheduling/solver_internal.h"

#include <stdlib.h>
#include <string.h>

/* Would DaemonSet `d` run on node `n`? (taints and required node constraints) */
static bool daemon_targets(solver *s, const kp_spod *d, const kp_snode *n, const kp_requirements *labels)
{
    if (!kp_taints_tolerated(n->taints, n->n_taints, d->tolerations, d->n_tolerations))
        return false;
    return daemon_term_matches(s, d, labels, 0, NULL);
}

/* Requests of the DaemonSets that would run on the node. */
static kp_resvec daemon_want(solver *s, const kp_snode *n, const kp_requirements *labels)
{
    kp_resvec want;
    kp_resvec_zero(&want);
    for (uint32_t d = 0; d < s->snap->n_daemons; d++)
        if (daemon_targets(s, &s->snap->daemons[d], n, labels))
            kp_resvec_add(&want, &s->snap->daemons[d].requests, s->n_res);
    return want;
}

/* Requests of DaemonSets that target the node but have no pod there yet. */
static kp_resvec missing_daemons(solver *s, const kp_resvec *wanted, const kp_resvec *daemon_pods_there)
{
    kp_resvec want = *wanted;
    kp_resvec_sub(&want, daemon_pods_there, s->n_res);
    for (uint32_t r = 0; r < s->n_res; r++)
        if (want.v[r] < 0)
            want.v[r] = 0;
    return want;
}

static void label_requirements(solver *s, kp_arena *arena, const kp_snode *n, kp_requirements *out)
{
    kp_requirements_init(out);
    for (uint32_t i = 0; i < n->labels.count; i++) {
        kp_requirement r = req_single(arena, n->labels.items[i].key, n->labels.items[i].value);
        kp_requirements_add(out, s->symtab, arena, &r);
    }
    kp_requirement h = req_single(arena, KP_SYM_HOSTNAME, n->hostname);
    kp_requirements_add(out, s->symtab, arena, &h);
}

/* Cache what every solve would recompute for nodes added since the last one. */
static void extend_node_cache(solver *s)
{
    solver_cache *c = s->snap->solver_cache;
    if (c->n_nodes >= s->snap->n_nodes)
        return;
    if (s->snap->n_nodes > c->cap_nodes) {
        uint32_t cap = s->snap->n_nodes * 2;
        c->nodes = kp_arena_grow(c->arena, c->nodes, c->n_nodes, cap, sizeof(node_static));
        c->cap_nodes = cap;
    }
    for (uint32_t i = c->n_nodes; i < s->snap->n_nodes; i++) {
        const kp_snode *n = &s->snap->nodes[i];
        label_requirements(s, c->arena, n, &c->nodes[i].reqs);
        c->nodes[i].daemon_want = daemon_want(s, n, &c->nodes[i].reqs);
    }
    c->n_nodes = s->snap->n_nodes;
}

static void init_enode(solver *s, enode *e, uint32_t node, const uint32_t *pods, uint32_t n_pods)
{
    const kp_snode *n = &s->snap->nodes[node];
    kp_resvec used, daemons_there;
    kp_resvec_zero(&used);
    kp_resvec_zero(&daemons_there);
    const node_static *st = &((const solver_cache *)s->snap->solver_cache)->nodes[node];
    e->node = node;
    e->sn = n;
    e->reqs = st->reqs; /* shared, read-only: commits replace it with their own copy */
    e->bound = n_pods ? kp_arena_memdup(s->arena, pods, n_pods * sizeof(uint32_t))
                      : KP_ARENA_NEW(s->arena, uint32_t, 1);
    e->n_bound = n_pods;
    for (uint32_t k = 0; k < n_pods; k++) {
        const kp_spod *p = &s->snap->pods[pods[k]];
        if (s->ps_of_pod[pods[k]] >= 0)
            continue; /* being moved elsewhere: its room is free */
        kp_resvec_add(&used, &p->requests, s->n_res);
        if (p->daemon)
            kp_resvec_add(&daemons_there, &p->requests, s->n_res);
    }
    e->remaining = n->allocatable;
    kp_resvec_sub(&e->remaining, &used, s->n_res);
    kp_resvec missing = missing_daemons(s, &st->daemon_want, &daemons_there);
    kp_resvec_sub(&e->remaining, &missing, s->n_res);
}

/* Initialized nodes first (consolidation prefers them), then by name. */
static int cmp_enode(const void *a, const void *b)
{
    const kp_snode *x = ((const enode *)a)->sn;
    const kp_snode *y = ((const enode *)b)->sn;
    if (x->initialized != y->initialized)
        return x->initialized ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Pods running on each node, bucketed in one pass over the pods. */
static void pods_by_node(solver *s, uint32_t **start, uint32_t **list)
{
    const kp_snapshot *snap = s->snap;
    uint32_t *first = KP_ARENA_NEW(s->scratch, uint32_t, snap->n_nodes + 1);
    uint32_t *items = KP_ARENA_NEW(s->scratch, uint32_t, snap->n_pods ? snap->n_pods : 1);
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *p = &snap->pods[i];
        if (p->node >= 0 && (uint32_t)p->node < snap->n_nodes && !p->terminal)
            first[p->node + 1]++;
    }
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        first[i + 1] += first[i];
    uint32_t *fill = kp_arena_memdup(s->scratch, first, (snap->n_nodes + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *p = &snap->pods[i];
        if (p->node >= 0 && (uint32_t)p->node < snap->n_nodes && !p->terminal)
            items[fill[p->node]++] = i;
    }
    *start = first;
    *list = items;
}

int enodes_init(solver *s)
{
    kp_snapshot *snap = s->snap;
    uint32_t *first, *pods;
    extend_node_cache(s);
    pods_by_node(s, &first, &pods);
    s->enodes = KP_ARENA_NEW(s->arena, enode, snap->n_nodes ? snap->n_nodes : 1);
    s->n_enodes = 0;
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        if (snap->nodes[i].deleting || (s->opts->exclude_nodes && s->opts->exclude_nodes[i]))
            continue;
        init_enode(s, &s->enodes[s->n_enodes++], i, pods + first[i], first[i + 1] - first[i]);
    }
    qsort(s->enodes, s->n_enodes, sizeof(enode), cmp_enode);
    return 0;
}

static bool ports_free(const solver *s, const enode *e, const kp_spod *p)
{
    if (p->n_ports == 0)
        return true;
    for (uint32_t i = 0; i < e->n_bound; i++) {
        const kp_spod *q = &s->snap->pods[e->bound[i]];
        if (s->ps_of_pod[e->bound[i]] < 0 && ports_conflict(p->ports, p->n_ports, q->ports, q->n_ports))
            return false;
    }
    for (uint32_t i = 0; i < e->n_pods; i++) {
        const kp_spod *q = &s->snap->pods[e->pods[i]];
        if (ports_conflict(p->ports, p->n_ports, q->ports, q->n_ports))
            return false;
    }
    return true;
}

static void commit(solver *s, enode *e, podstate *st, const kp_requirements *reqs)
{
    const kp_snode *n = &s->snap->nodes[e->node];
    if (e->n_pods == e->cap_pods) {
        uint32_t cap = e->cap_pods ? e->cap_pods * 2 : 8;
        e->pods = kp_arena_grow(s->arena, e->pods, e->n_pods, cap, sizeof(uint32_t));
        e->cap_pods = cap;
    }
    e->pods[e->n_pods++] = st->pod;
    kp_resvec_sub(&e->remaining, &s->snap->pods[st->pod].requests, s->n_res);
    if (!reqs_equal(reqs, &e->reqs))
        reqs_persist(&e->reqs, s->arena, reqs);
    topo_record(s, st, n->taints, n->n_taints, &e->reqs, 0);
}

static bool try_alternative(solver *s, enode *e, podstate *st, kp_requirements *node,
                            const kp_requirements *vol)
{
    kp_requirements domains;
    if (vol) {
        if (!kp_requirements_compatible(s->symtab, node, vol, 0, NULL))
            return false;
        kp_requirements_add_all(node, s->symtab, s->scratch, vol);
    }
    if (!topo_add_requirements(s, st, node, &domains, NULL))
        return false;
    if (!kp_requirements_compatible(s->symtab, node, &domains, 0, NULL))
        return false;
    kp_requirements_add_all(node, s->symtab, s->scratch, &domains);
    commit(s, e, st, node);
    return true;
}

bool enode_try(solver *s, enode *e, podstate *st)
{
    const kp_snode *n = &s->snap->nodes[e->node];
    const kp_spod *p = &s->snap->pods[st->pod];
    if (!kp_resvec_fits(&p->requests, &e->remaining, s->n_res))
        return false;
    if (s->opts->closed_to_moves && s->opts->closed_to_moves[e->node] && s->opts->moved && s->opts->moved[st->pod])
        return false;
    if (topo_quick_rejects(s, st, &e->reqs) || !ps_tolerates(s, st, n->taints, n->n_taints, NULL) ||
        !ports_free(s, e, p))
        return false;
    if (!kp_requirements_compatible(s->symtab, &e->reqs, &st->reqs, 0, NULL))
        return false;
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    kp_requirements node;
    bool ok = false;
    for (uint32_t i = 0; !ok && (i < p->n_volume_alts || (i == 0 && p->n_volume_alts == 0)); i++) {
        kp_requirements_copy(&node, s->scratch, &e->reqs);
        kp_requirements_add_all(&node, s->symtab, s->scratch, &st->reqs);
        ok = try_alternative(s, e, st, &node, p->n_volume_alts ? &p->volume_alts[i] : NULL);
    }
    kp_arena_rewind(s->scratch, m);
    return ok;
}
