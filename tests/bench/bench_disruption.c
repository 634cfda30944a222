/*
 * Disruption planning at scale: a cluster of N on-demand nodes from the
 * built-in catalog (m/c/r sizes xlarge to 4xlarge), each running pods that
 * fill it to about 40%, one NodePool with Karpenter's default budget (10%).
 * Prints the time to compute the whole plan (every method, loop after loop,
 * until nothing changes; wall and CPU time, since the machine may be shared),
 * the loops, commands and scheduling simulations, and the hourly cost before,
 * after, and the lower bound for the same pods. Figures only.
 *
 *   bench_disruption [--serial] [--spread] [NODES...]      default: 100 1000 5000
 *
 * --serial plans one command per loop, as Karpenter's controller acts (and
 * as this planner did before loops held several commands); --spread gives a
 * quarter of the pods a zone spread. KP_BENCH_VERBOSE=1 prints each loop and
 * the nodes left.
 */
#include "cloud/instance_types.h"
#include "disruption/disruption.h"
#include "scheduling/solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

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

/* With --spread, every fourth pod belongs to one of 50 Deployments spread
 * over zones (ScheduleAnyway): the planner's room-only shortcuts do not apply
 * to them. */
static bool spread;

static void add_spread(kp_snapshot *snap, kp_spod *p, uint32_t seq)
{
    char app[16];
    snprintf(app, sizeof(app), "app-%02u", seq % 50);
    const char *k[] = {"app"}, *v[] = {app};
    p->labels = kp_snapshot_labels(snap, k, v, 1);
    kp_spread *sp = KP_ARENA_NEW(snap->arena, kp_spread, 1);
    sp->key = KP_SYM_ZONE;
    sp->max_skew = 1;
    sp->honor_affinity = true;
    sp->selector.match = p->labels.items;
    sp->selector.n_match = p->labels.count;
    p->spreads = sp;
    p->n_spreads = 1;
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
        if (spread && *pod_seq % 4 == 0)
            add_spread(snap, p, *pod_seq / 4);
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

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* With KP_BENCH_VERBOSE: what each loop did, and the nodes left. */
static void verbose(const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    for (uint32_t l = 0; l < plan->n_loops; l++) {
        uint32_t cmds = 0, cands = 0, repl = 0;
        double saved = 0;
        for (uint32_t i = 0; i < plan->n_commands; i++) {
            const kp_disrupt_command *c = &plan->commands[i];
            if (c->loop != l)
                continue;
            cmds++, cands += c->n_candidates, saved += c->savings_hourly;
            repl += c->simulation ? c->simulation->n_claims : 0;
        }
        fprintf(stderr, "loop %u: %u commands, %u nodes out, %u new, saves %.3f/h\n", l, cmds, cands, repl, saved);
    }
    bool *gone = calloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(bool));
    int64_t *cpu = calloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(int64_t));
    for (uint32_t i = 0; i < plan->n_commands; i++)
        for (uint32_t k = 0; k < plan->commands[i].n_candidates; k++)
            gone[plan->commands[i].candidates[k]] = true;
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (snap->pods[i].node >= 0)
            cpu[snap->pods[i].node] += snap->pods[i].requests.v[KP_RES_CPU];
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        if (!gone[i])
            fprintf(stderr, "left %-16s cpu %5.1f%%\n", snap->nodes[i].instance_type,
                    100.0 * (double)cpu[i] / (double)snap->nodes[i].allocatable.v[KP_RES_CPU]);
    free(gone);
    free(cpu);
}

static int run(const kp_catalog *catalog, uint32_t n_nodes, uint32_t per_loop)
{
    uint32_t pods;
    kp_snapshot *snap = cluster(catalog, n_nodes, &pods);
    double lb = bound(snap);
    kp_disrupt_opts opts = KP_DISRUPT_OPTS_INIT;
    opts.now_ns = NOW_NS;
    opts.max_commands_per_loop = per_loop;
    kp_disruption_plan *plan;
    double cpu0 = cpu_ms();
    if (kp_disruption_plan_compute(snap, &opts, &plan) < 0)
        return 1;
    double cpu = cpu_ms() - cpu0;
    if (getenv("KP_BENCH_VERBOSE"))
        verbose(snap, plan);
    uint32_t removed = 0;
    for (uint32_t i = 0; i < plan->n_commands; i++)
        removed += plan->commands[i].n_candidates;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%7u %7u %9.1f %9.1f %6u %8u %8u %6u %9.2f %9.2f %9.2f %6.3f %8ld\n", n_nodes, pods,
           (double)plan->compute_ns / 1e6, cpu, plan->n_loops, plan->n_commands, removed, plan->simulations,
           plan->cost_before, plan->cost_after, lb, lb > 0 ? plan->cost_after / lb : 0, ru.ru_maxrss / 1024);
    kp_disruption_plan_free(plan);
    kp_snapshot_free(snap);
    return 0;
}

int main(int argc, char **argv)
{
    static const uint32_t defaults[] = {100, 1000, 5000};
    uint32_t per_loop = 0, sizes[16], n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--serial") == 0)
            per_loop = 1;
        else if (strcmp(argv[i], "--spread") == 0)
            spread = true;
        else if (n < 16)
            sizes[n++] = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    if (n == 0)
        memcpy(sizes, defaults, sizeof(defaults)), n = 3;
    kp_catalog *catalog;
    if (kp_catalog_builtin_aws(NULL, &catalog) < 0)
        return 1;
    int rc = 0;
    printf("disruption benchmark, ~40%% utilised on-demand nodes, one NodePool, default budget (10%%)%s\n",
           spread ? ", a quarter of the pods spread over zones" : "");
    /* The convergence table first: its sizes ascend, so each row's peak RSS is its own. */
    printf("\nuntil nothing changes: loop after loop, each applied; %s\n",
           per_loop ? "one command per loop (Karpenter's serial loop, --serial)"
                    : "a loop holds every command its budgets allow (run in parallel)");
    printf("%7s %7s %9s %9s %6s %8s %8s %6s %9s %9s %9s %6s %8s\n", "nodes", "pods", "plan ms", "cpu ms", "loops",
           "commands", "removed", "sims", "cost/h", "after/h", "bound/h", "ratio", "peakMiB");
    for (uint32_t i = 0; i < n; i++)
        rc |= run(catalog, sizes[i], per_loop);
    printf("\none disruption loop, every method (expiration, emptiness, drift, multi-node, single-node) over every "
           "candidate, each method's first command, none applied\n");
    printf("%7s %7s %12s %9s %12s\n", "nodes", "pods", "plan ms", "commands", "nodes kept");
    for (uint32_t i = 0; i < n; i++)
        rc |= run_once(catalog, sizes[i]);
    kp_catalog_free(catalog);
    return rc;
}
