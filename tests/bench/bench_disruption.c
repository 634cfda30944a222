/*
 * Disruption planning at scale: a cluster of N on-demand nodes from the
 * built-in catalog (m/c/r sizes xlarge to 4xlarge), each running pods that
 * fill it to about 40%, one NodePool with Karpenter's default budget (10%).
 * Prints the time to compute the whole plan (every method, loop after loop,
 * until nothing changes), the loops and commands, and the hourly cost before,
 * after, and the lower bound for the same pods. Figures only.
 *
 *   bench_disruption [NODES...]      default: 100 1000 5000
 */
#include "cloud/instance_types.h"
#include "disruption/disruption.h"
#include "scheduling/solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MIB (INT64_C(1024) * 1024)
#define NOW_NS (INT64_C(1800000000) * 1000000000)

static uint32_t next(uint64_t *s, uint32_t n)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) % n);
}

static const char *const node_types[] = {"m6i.xlarge", "m6i.2xlarge", "c6i.2xlarge", "r6i.xlarge",
                                         "m6i.4xlarge", "c6i.xlarge"};
static const char *const zones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
static const int64_t cpus[] = {100, 250, 500, 1000};
static const int64_t mems[] = {128, 256, 512, 1024, 2048};

static void add_pool(kp_snapshot *snap, const kp_catalog *catalog)
{
    kp_template *t = kp_snapshot_add_template(snap);
    const char *k[] = {"karpenter.sh/nodepool"}, *v[] = {"default"};
    const char *cats[] = {"c", "m", "r"}, *od[] = {"on-demand"};
    kp_requirement r;
    t->name = "default";
    t->name_sym = kp_sym_intern(snap->symtab, "default");
    t->labels = kp_snapshot_labels(snap, k, v, 1);
    kp_requirements_init(&t->spec_reqs);
    kp_requirement_new(&r, snap->symtab, snap->arena, "karpenter.k8s.aws/instance-category", KP_OP_IN, cats, 3, 0);
    kp_requirements_add(&t->spec_reqs, snap->symtab, snap->arena, &r);
    kp_requirement_new(&r, snap->symtab, snap->arena, "karpenter.sh/capacity-type", KP_OP_IN, od, 1, 0);
    kp_requirements_add(&t->spec_reqs, snap->symtab, snap->arena, &r);
    kp_requirements_copy(&t->reqs, snap->arena, &t->spec_reqs);
    kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, "karpenter.sh/nodepool", "default");
    int first = kp_snapshot_add_catalog(snap, catalog);
    kp_snapshot_template_use_its(snap, 0, (uint32_t)first, (uint32_t)catalog->count);
}

static int find_it(const kp_snapshot *snap, const char *name)
{
    kp_sym s = kp_sym_lookup(snap->symtab, name);
    for (uint32_t i = 0; i < snap->n_its; i++)
        if (snap->its[i].name == s)
            return (int)i;
    return -1;
}

static void add_node(kp_snapshot *snap, uint64_t *rng, uint32_t i, uint32_t *pod_seq)
{
    const char *type = node_types[next(rng, 6)];
    const char *zone = zones[next(rng, 3)];
    const kp_sit *it = &snap->its[find_it(snap, type)];
    char name[32];
    snprintf(name, sizeof(name), "node-%05u", i);
    const char *keys[] = {"karpenter.sh/nodepool", "node.kubernetes.io/instance-type", "topology.kubernetes.io/zone",
                          "karpenter.sh/capacity-type", "kubernetes.io/hostname", "karpenter.sh/initialized"};
    const char *vals[] = {"default", type, zone, "on-demand", name, "true"};
    kp_snode *n = kp_snapshot_add_node(snap);
    n->name = kp_arena_strdup(snap->arena, name);
    n->hostname = kp_sym_intern(snap->symtab, name);
    n->labels = kp_snapshot_labels(snap, keys, vals, 6);
    n->capacity = it->capacity;
    n->allocatable = it->allocatable;
    n->managed = n->initialized = true;
    n->instance_type = kp_sym_str(snap->symtab, it->name);
    n->created_ns = NOW_NS - INT64_C(86400) * 1000000000; /* a day old: not expired */
    kp_resvec used;
    kp_resvec_zero(&used);
    kp_sym ns = kp_sym_intern(snap->symtab, "default");
    while (used.v[KP_RES_CPU] < it->allocatable.v[KP_RES_CPU] * 2 / 5) {
        kp_spod *p = kp_snapshot_add_pod(snap);
        char pn[48];
        snprintf(pn, sizeof(pn), "default/pod-%07u", (*pod_seq)++);
        p->ns_name = kp_arena_strdup(snap->arena, pn);
        p->ns = ns;
        p->requests.v[KP_RES_CPU] = cpus[next(rng, 4)];
        p->requests.v[KP_RES_MEMORY] = mems[next(rng, 5)] * MIB * 1000;
        p->requests.v[KP_RES_PODS] = 1000;
        p->node = (int32_t)(snap->n_nodes - 1);
        p->scheduled = true;
        kp_resvec_add(&used, &p->requests, KP_RES_MAX);
    }
}

static double bound(const kp_snapshot *snap)
{
    double unit[2] = {-1, -1}, need[2] = {0, 0};
    for (uint32_t i = 0; i < snap->templates[0].n_its; i++) {
        const kp_sit *it = &snap->its[snap->templates[0].its[i]];
        for (uint32_t o = 0; o < it->n_offerings; o++) {
            if (it->offerings[o].capacity_type != KP_SYM_ON_DEMAND)
                continue;
            for (int r = 0; r < 2; r++) {
                double u = it->offerings[o].price / (double)it->allocatable.v[r];
                if (it->allocatable.v[r] > 0 && (unit[r] < 0 || u < unit[r]))
                    unit[r] = u;
            }
        }
    }
    for (uint32_t i = 0; i < snap->n_pods; i++)
        for (int r = 0; r < 2; r++)
            need[r] += (double)snap->pods[i].requests.v[r];
    return need[0] * unit[0] > need[1] * unit[1] ? need[0] * unit[0] : need[1] * unit[1];
}

static kp_snapshot *cluster(const kp_catalog *catalog, uint32_t n_nodes, uint32_t *pods)
{
    kp_snapshot *snap = kp_snapshot_new();
    uint64_t rng = 11;
    *pods = 0;
    add_pool(snap, catalog);
    for (uint32_t i = 0; i < n_nodes; i++)
        add_node(snap, &rng, i, pods);
    kp_snapshot_sort_templates(snap);
    return snap;
}

/* One loop, every method over every candidate. */
static int run_once(const kp_catalog *catalog, uint32_t n_nodes)
{
    uint32_t pods;
    kp_snapshot *snap = cluster(catalog, n_nodes, &pods);
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.now_ns = NOW_NS;
    opts.all_methods_once = true;
    kp_disruption_plan *plan;
    if (kp_disruption_plan_compute(snap, &opts, &plan) < 0)
        return 1;
    printf("%7u %7u %12.1f %9u %12u\n", n_nodes, pods, (double)plan->compute_ns / 1e6, plan->n_commands,
           plan->n_blocked);
    kp_disruption_plan_free(plan);
    kp_snapshot_free(snap);
    return 0;
}

static int run(const kp_catalog *catalog, uint32_t n_nodes)
{
    uint32_t pods;
    kp_snapshot *snap = cluster(catalog, n_nodes, &pods);
    double lb = bound(snap);
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.now_ns = NOW_NS;
    kp_disruption_plan *plan;
    if (kp_disruption_plan_compute(snap, &opts, &plan) < 0)
        return 1;
    if (getenv("KP_BENCH_VERBOSE"))
        for (uint32_t i = 0; i < plan->n_commands && i < 40; i++)
            fprintf(stderr, "loop %u %s: %u nodes, %u new, saves %.3f\n", plan->commands[i].loop,
                    kp_disrupt_method_name(plan->commands[i].method), plan->commands[i].n_candidates,
                    plan->commands[i].simulation ? plan->commands[i].simulation->n_claims : 0,
                    plan->commands[i].savings_hourly);
    uint32_t loops = plan->n_commands ? plan->commands[plan->n_commands - 1].loop + 1 : 0, removed = 0;
    for (uint32_t i = 0; i < plan->n_commands; i++)
        removed += plan->commands[i].n_candidates;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%7u %7u %10.1f %6u %8u %10.2f %10.2f %10.2f %7.3f %8ld\n", n_nodes, pods, (double)plan->compute_ns / 1e6,
           loops, removed, plan->cost_before, plan->cost_after, lb, lb > 0 ? plan->cost_after / lb : 0,
           ru.ru_maxrss / 1024);
    kp_disruption_plan_free(plan);
    kp_snapshot_free(snap);
    return 0;
}

int main(int argc, char **argv)
{
    static const uint32_t defaults[] = {100, 1000, 5000};
    kp_catalog *catalog;
    if (kp_catalog_builtin_aws(NULL, &catalog) < 0)
        return 1;
    int rc = 0;
    printf("disruption benchmark, ~40%% utilised on-demand nodes, one NodePool, default budget (10%%)\n");
    printf("\none disruption loop, every method (expiration, emptiness, drift, multi-node, single-node) over every candidate\n");
    printf("%7s %7s %12s %9s %12s\n", "nodes", "pods", "plan ms", "commands", "nodes kept");
    for (int i = 1; i < argc || (argc == 1 && i <= 3); i++)
        rc |= run_once(catalog, argc > 1 ? (uint32_t)strtoul(argv[i], NULL, 10) : defaults[i - 1]);
    printf("\nuntil nothing changes: loop after loop, each command applied (Karpenter acts on one command per loop)\n");
    printf("%7s %7s %10s %6s %8s %10s %10s %10s %7s %8s\n", "nodes", "pods", "plan ms", "loops", "removed",
           "cost/h", "after/h", "bound/h", "ratio", "peakMiB");
    for (int i = 1; i < argc || (argc == 1 && i <= 2); i++)
        rc |= run(catalog, argc > 1 ? (uint32_t)strtoul(argv[i], NULL, 10) : defaults[i - 1]);
    kp_catalog_free(catalog);
    return rc;
}
