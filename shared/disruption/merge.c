/*
 * Grouped multi-node consolidation (beyond Karpenter's prefix search):
 * nodes whose pods together fit one node of the type that hosts the NodePool's
 * pod mix most cheaply are merged onto it, when it costs less than they do.
 * Karpenter's multi-node consolidation only tries the first N candidates in
 * savings order; packing nodes as items (CPU and memory, first fit
 * decreasing) finds the groups whose pods balance each other — a
 * memory-heavy node beside CPU-heavy ones — which one cheap general-purpose
 * node can take where each alone needed a dearer shape. Every group is an
 * ordinary multi-node command, proved by the same simulation, price filter,
 * same-type filter and Balanced score.
 */
#include "disruption/disruption_internal.h"

#include <stdlib.h>

/* Aim below the host's capacity: pods do not pack perfectly. */
#define MERGE_FILL 0.97
/* A merged node should be at least this full. */
#define MERGE_MIN_FILL 0.85

typedef struct item {
    uint32_t node;
    double cpu, mem, share;
} item;

static int cmp_share(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->share != y->share)
        return x->share > y->share ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* The NodePool's instance type that runs `cpu` and `mem` (the items' totals,
 * in that proportion) most cheaply per node-worth; NULL when none. */
static const kp_sit *host_type(const planner *p, uint32_t t, double cpu, double mem)
{
    const kp_template *tp = &p->snap->templates[t];
    const kp_sit *best = NULL;
    double best_cost = 0;
    for (uint32_t k = 0; k < tp->n_its && cpu > 0 && mem > 0; k++) {
        const kp_sit *it = &p->snap->its[tp->its[k]];
        double price = pool_launch_price(p, t, tp->its[k]), ac = (double)it->allocatable.v[KP_RES_CPU],
               am = (double)it->allocatable.v[KP_RES_MEMORY];
        if (price <= 0 || ac <= 0 || am <= 0)
            continue;
        double hosted = ac / cpu < am / mem ? ac / cpu : am / mem; /* fraction of the totals one node holds */
        double cost = price / hosted;
        if (!best || cost < best_cost || (cost == best_cost && ac > (double)best->allocatable.v[KP_RES_CPU]))
            best = it, best_cost = cost;
    }
    return best;
}

/* The items of NodePool `t`: its candidates still available. */
static uint32_t items_of(planner *p, uint32_t t, const uint32_t *cands, uint32_t n, item *out)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = cands[i];
        if (p->snap->nodes[node].template_index != (int32_t)t || !available(p, node))
            continue;
        const node_facts *f = &p->facts[node];
        item it = {node, 0, 0, 0};
        for (uint32_t j = 0; j < f->n_pods; j++) {
            it.cpu += (double)p->snap->pods[f->pods[j]].requests.v[KP_RES_CPU];
            it.mem += (double)p->snap->pods[f->pods[j]].requests.v[KP_RES_MEMORY];
        }
        out[k++] = it;
    }
    return k;
}

typedef struct bin {
    double cpu, mem;
    const item **items;
    uint32_t n;
} bin;

/* First fit decreasing of the items into bins the size of `host`. */
static uint32_t pack(planner *p, item *items, uint32_t n, const kp_sit *host, bin *bins)
{
    double cap_cpu = (double)host->allocatable.v[KP_RES_CPU] * MERGE_FILL;
    double cap_mem = (double)host->allocatable.v[KP_RES_MEMORY] * MERGE_FILL;
    uint32_t n_bins = 0;
    for (uint32_t i = 0; i < n; i++) {
        double sc = items[i].cpu / cap_cpu, sm = items[i].mem / cap_mem;
        items[i].share = sc > sm ? sc : sm;
    }
    qsort(items, n, sizeof(*items), cmp_share);
    for (uint32_t i = 0; i < n; i++) {
        if (items[i].share > 0.5)
            continue; /* a node half the host's size gains nothing from merging */
        uint32_t b = 0;
        while (b < n_bins && (bins[b].cpu + items[i].cpu > cap_cpu || bins[b].mem + items[i].mem > cap_mem))
            b++;
        if (b == n_bins)
            bins[n_bins++] = (bin){0, 0, KP_ARENA_NEW(p->scratch, const item *, n), 0};
        bins[b].cpu += items[i].cpu, bins[b].mem += items[i].mem;
        bins[b].items[bins[b].n++] = &items[i];
    }
    return n_bins;
}

/* How full the cheapest instance type that holds `cpu` and `mem` would be. */
static double fill_of_cheapest(const planner *p, uint32_t t, double cpu, double mem)
{
    const kp_template *tp = &p->snap->templates[t];
    double best = -1, fill = 0;
    for (uint32_t k = 0; k < tp->n_its; k++) {
        const kp_sit *it = &p->snap->its[tp->its[k]];
        double ac = (double)it->allocatable.v[KP_RES_CPU], am = (double)it->allocatable.v[KP_RES_MEMORY];
        double price = pool_launch_price(p, t, tp->its[k]);
        if (price < 0 || ac < cpu || am < mem || (best >= 0 && price >= best))
            continue;
        best = price;
        fill = cpu / ac > mem / am ? cpu / ac : mem / am;
    }
    return fill;
}

/* A group that would leave its node half empty (the last bin, usually)
 * gives up its smallest members until the node it needs is well filled:
 * they are better left to a later group than carried as waste. */
static void trim(const planner *p, uint32_t t, bin *b)
{
    while (b->n > 2 && fill_of_cheapest(p, t, b->cpu, b->mem) < MERGE_MIN_FILL) {
        const item *last = b->items[--b->n];
        b->cpu -= last->cpu, b->mem -= last->mem;
    }
}

/* Prove one group and add it; 1 when added. */
static int merge(planner *p, const uint32_t *nodes, uint32_t n)
{
    kp_plan *sim;
    const kp_disrupt_blocked *why;
    int ok = consolidate(p, nodes, n, false, &sim, &why);
    if (ok <= 0)
        return ok;
    if (sim->n_claims == 1 && !not_same_type(p, &sim->claims[0], nodes, n)) {
        kp_plan_free(sim);
        return 0;
    }
    const kp_disrupt_score *scores;
    uint32_t n_scores;
    bool approved = balanced_approve(p, nodes, n, sim, &scores, &n_scores);
    balanced_record_moves(p, "multi", scores, n_scores, approved);
    if (!approved) {
        kp_plan_free(sim);
        return 0;
    }
    plan_add(p, KP_DISRUPT_MULTI_NODE, nodes, n, sim, scores, n_scores);
    return 1;
}

/* Each NodePool's host type for this loop, from the pods its nodes run. */
void hosts_start_loop(planner *p)
{
    uint32_t nt = p->snap->n_templates ? p->snap->n_templates : 1;
    double *cpu = KP_ARENA_NEW(p->loop_arena, double, nt), *mem = KP_ARENA_NEW(p->loop_arena, double, nt);
    p->host = KP_ARENA_NEW(p->loop_arena, const kp_sit *, nt);
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        int32_t t = p->snap->nodes[i].template_index;
        if (p->gone[i] || !f->managed || t < 0)
            continue;
        for (uint32_t j = 0; j < f->n_pods; j++) {
            cpu[t] += (double)p->snap->pods[f->pods[j]].requests.v[KP_RES_CPU];
            mem[t] += (double)p->snap->pods[f->pods[j]].requests.v[KP_RES_MEMORY];
        }
    }
    for (uint32_t t = 0; t < p->snap->n_templates; t++)
        p->host[t] = host_type(p, t, cpu[t], mem[t]);
}

static bool fits(const kp_resvec *need, const kp_sit *it)
{
    return need->v[KP_RES_CPU] <= it->allocatable.v[KP_RES_CPU] &&
           need->v[KP_RES_MEMORY] <= it->allocatable.v[KP_RES_MEMORY];
}

/* No larger than the host, unless one of its pods needs more than the host. */
bool within_host(const planner *p, const kp_plan_claim *c)
{
    const kp_sit *host = p->host[c->template_index];
    if (!host || fits(&p->snap->its[c->its[0]].allocatable, host))
        return true;
    for (uint32_t i = 0; i < c->n_pods; i++)
        if (!fits(&p->snap->pods[c->pods[i]].requests, host))
            return true;
    return false;
}

int merge_groups(planner *p, const uint32_t *cands, uint32_t n)
{
    item *items = KP_ARENA_NEW(p->scratch, item, n ? n : 1);
    bin *bins = KP_ARENA_NEW(p->scratch, bin, n ? n : 1);
    uint32_t found = 0;
    for (uint32_t t = 0; t < p->snap->n_templates && !loop_full(p); t++) {
        uint32_t k = items_of(p, t, cands, n, items);
        const kp_sit *host = k >= 2 ? p->host[t] : NULL;
        uint32_t n_bins = host ? pack(p, items, k, host, bins) : 0;
        for (uint32_t b = 0; b < n_bins && !loop_full(p); b++) {
            trim(p, t, &bins[b]);
            uint32_t m = 0, *nodes = KP_ARENA_NEW(p->scratch, uint32_t, bins[b].n ? bins[b].n : 1);
            for (uint32_t i = 0; i < bins[b].n; i++) /* earlier merges may have moved pods onto some */
                if (available(p, bins[b].items[i]->node))
                    nodes[m++] = bins[b].items[i]->node;
            int64_t left = budget_left(p, (int32_t)t, REASON_UNDERUTILIZED);
            if (left < m) /* what the budget allows of the group may still pay for a smaller host */
                m = (uint32_t)left;
            if (m > p->opts->multi_node_max + 1) /* Karpenter's cap on a multi-node command */
                m = p->opts->multi_node_max + 1;
            if (m < 2)
                continue;
            int ok = merge(p, nodes, m);
            if (ok < 0)
                return ok;
            found += (uint32_t)ok;
        }
    }
    return (int)found;
}
