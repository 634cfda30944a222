/*
 * Existing nodes (and NodeClaims in flight) as places for pending pods
 * (Karpenter's ExistingNode): what is left after the pods already bound and
 * the DaemonSet pods that will still arrive, and whether a pod fits, tolerates
 * the taints, matches the labels and keeps its topology constraints.
 */
#include "scheduling/solver_internal.h"

#include <stddef.h>
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

/* Nodes in the order they are tried: initialized ones first (consolidation
 * prefers them), then by name, then by index (names should be unique). */
int node_try_order(const kp_snapshot *snap, uint32_t a, uint32_t b)
{
    const kp_snode *x = &snap->nodes[a], *y = &snap->nodes[b];
    if (x->initialized != y->initialized)
        return x->initialized ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : (a > b) - (a < b);
}

static int cmp_node(const void *a, const void *b, void *snap)
{
    return node_try_order(snap, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* The cached order with nodes first..n-1 merged in (nodes are only ever added). */
static void extend_order(solver *s, solver_cache *c, uint32_t first)
{
    const kp_snapshot *snap = s->snap;
    uint32_t n = snap->n_nodes, i = 0, j = first, k = 0;
    uint32_t *added = kp_arena_alloc(s->scratch, (n - first) * sizeof(uint32_t));
    uint32_t *order = kp_arena_alloc(c->arena, n * sizeof(uint32_t));
    for (uint32_t x = first; x < n; x++)
        added[x - first] = x;
    qsort_r(added, n - first, sizeof(uint32_t), cmp_node, (void *)snap);
    while (i < first || j < n) {
        bool old_first = j == n || (i < first && node_try_order(snap, c->order[i], added[j - first]) < 0);
        order[k++] = old_first ? c->order[i++] : added[j++ - first];
    }
    c->order = order;
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
    extend_order(s, c, c->n_nodes);
    c->n_nodes = s->snap->n_nodes;
}

/* What is left on the node once its pods (`used`, of which `daemons_there`
 * are DaemonSet pods) and the DaemonSets still to arrive have their share. */
static void set_remaining(solver *s, enode *e, const kp_resvec *used, const kp_resvec *daemons_there)
{
    const node_static *st = &((const solver_cache *)s->snap->solver_cache)->nodes[e->node];
    e->remaining = e->sn->allocatable;
    kp_resvec_sub(&e->remaining, used, s->n_res);
    kp_resvec missing = missing_daemons(s, &st->daemon_want, daemons_there);
    kp_resvec_sub(&e->remaining, &missing, s->n_res);
}

/* Every field set (the array is not zeroed): remaining comes after. */
static void init_enode(solver *s, enode *e, uint32_t node, const uint32_t *pods, uint32_t n_pods)
{
    memset(e, 0, offsetof(enode, remaining));
    memset(&e->pods, 0, sizeof(*e) - offsetof(enode, pods));
    e->node = node;
    e->sn = &s->snap->nodes[node];
    e->reqs = ((const solver_cache *)s->snap->solver_cache)->nodes[node].reqs; /* shared, read-only: commits
                                                                                  replace it with their own copy */
    e->bound = pods;
    e->n_bound = n_pods;
}

static bool bound_to(const kp_spod *p, uint32_t n_nodes)
{
    return p->node >= 0 && (uint32_t)p->node < n_nodes && !p->terminal;
}

/* Pods running on each node, bucketed in one pass over the pods. */
static void pods_by_node(const kp_snapshot *snap, kp_arena *arena, uint32_t **start, uint32_t **list)
{
    uint32_t *first = KP_ARENA_NEW(arena, uint32_t, snap->n_nodes + 1);
    uint32_t *items = KP_ARENA_NEW(arena, uint32_t, snap->n_pods ? snap->n_pods : 1);
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (bound_to(&snap->pods[i], snap->n_nodes))
            first[snap->pods[i].node + 1]++;
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        first[i + 1] += first[i];
    uint32_t *fill = kp_arena_memdup(arena, first, (snap->n_nodes + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (bound_to(&snap->pods[i], snap->n_nodes))
            items[fill[snap->pods[i].node]++] = i;
    *start = first;
    *list = items;
}

void kp_solve_base_build(const kp_snapshot *snap, kp_arena *arena, kp_solve_base *out)
{
    uint32_t *first, *pods, n = snap->n_nodes;
    pods_by_node(snap, arena, &first, &pods);
    kp_resvec *used = KP_ARENA_NEW(arena, kp_resvec, n ? n : 1);
    kp_resvec *daemons = KP_ARENA_NEW(arena, kp_resvec, n ? n : 1);
    uint32_t *anti = KP_ARENA_NEW(arena, uint32_t, first[n] ? first[n] : 1), n_anti = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = first[i]; k < first[i + 1]; k++) {
            const kp_spod *p = &snap->pods[pods[k]];
            kp_resvec_add(&used[i], &p->requests, snap->restab.count);
            if (p->daemon)
                kp_resvec_add(&daemons[i], &p->requests, snap->restab.count);
        }
    }
    for (uint32_t i = 0; i < snap->n_pods; i++) /* in index order, as a solve without a base meets them */
        if (snap->pods[i].n_anti && bound_to(&snap->pods[i], n))
            anti[n_anti++] = i;
    *out = (kp_solve_base){n, snap->n_pods, first, pods, used, daemons, anti, n_anti};
}

/* The base this solve can use: the caller's, when it fits the snapshot. */
const kp_solve_base *solve_base(const solver *s)
{
    const kp_solve_base *b = s->opts->base;
    return b && b->n_nodes == s->snap->n_nodes && b->n_pods == s->snap->n_pods ? b : NULL;
}

static bool node_skipped(const solver *s, uint32_t i)
{
    return s->snap->nodes[i].deleting || (s->opts->exclude_nodes && s->opts->exclude_nodes[i]);
}

/* What the node's pods use, the pods being placed now left out (their room is free). */
static void count_bound(solver *s, enode *e)
{
    kp_resvec used, daemons_there;
    kp_resvec_zero(&used);
    kp_resvec_zero(&daemons_there);
    for (uint32_t k = 0; k < e->n_bound; k++) {
        const kp_spod *p = &s->snap->pods[e->bound[k]];
        if (s->ps_of_pod[e->bound[k]] >= 0)
            continue;
        kp_resvec_add(&used, &p->requests, s->n_res);
        if (p->daemon)
            kp_resvec_add(&daemons_there, &p->requests, s->n_res);
    }
    set_remaining(s, e, &used, &daemons_there);
}

/* Every node from the base, then the room of the pods being placed now given
 * back: a pod that is no DaemonSet pod leaves the DaemonSets' share as it was. */
static void enodes_from_base(solver *s, const kp_solve_base *b)
{
    const kp_snapshot *snap = s->snap;
    int32_t *slot = kp_arena_alloc(s->scratch, (snap->n_nodes ? snap->n_nodes : 1) * sizeof(int32_t));
    memset(slot, 0xff, snap->n_nodes * sizeof(int32_t)); /* -1: not a place */
    const uint32_t *order = ((const solver_cache *)snap->solver_cache)->order;
    for (uint32_t k = 0; k < snap->n_nodes; k++) {
        uint32_t i = order[k];
        if (node_skipped(s, i))
            continue;
        slot[i] = (int32_t)s->n_enodes;
        enode *e = &s->enodes[s->n_enodes++];
        init_enode(s, e, i, b->pods + b->first[i], b->first[i + 1] - b->first[i]);
        set_remaining(s, e, &b->used[i], &b->daemons[i]);
    }
    for (uint32_t k = 0; k < s->n_ps; k++) {
        const kp_spod *p = &snap->pods[s->ps[k].pod];
        if (!bound_to(p, snap->n_nodes) || slot[p->node] < 0)
            continue;
        enode *e = &s->enodes[slot[p->node]];
        if (p->daemon)
            count_bound(s, e);
        else
            kp_resvec_add(&e->remaining, &p->requests, s->n_res);
    }
}

/* Every node, its pods counted one by one. */
static void enodes_scan(solver *s)
{
    const kp_snapshot *snap = s->snap;
    uint32_t *first, *pods;
    pods_by_node(snap, s->scratch, &first, &pods);
    const uint32_t *order = ((const solver_cache *)snap->solver_cache)->order;
    for (uint32_t k = 0; k < snap->n_nodes; k++) {
        uint32_t i = order[k];
        if (node_skipped(s, i))
            continue;
        uint32_t n = first[i + 1] - first[i];
        enode *e = &s->enodes[s->n_enodes++];
        init_enode(s, e, i, n ? kp_arena_memdup(s->arena, pods + first[i], n * sizeof(uint32_t)) : NULL, n);
        count_bound(s, e);
    }
}

int enodes_init(solver *s)
{
    kp_snapshot *snap = s->snap;
    const kp_solve_base *b = solve_base(s);
    extend_node_cache(s);
    s->enodes = kp_arena_alloc(s->arena, (snap->n_nodes ? snap->n_nodes : 1) * sizeof(enode)); /* see init_enode */
    s->n_enodes = 0;
    if (b)
        enodes_from_base(s, b);
    else
        enodes_scan(s);
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
        !ports_free(s, e, p) || !volumes_fit(s, e, p))
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
