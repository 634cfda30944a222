/*
 * Karpenter's scheduling benchmark, rebuilt: the diverse pod mix of
 * scheduling_benchmark_test.go (generic, zonal spread, hostname spread, zonal
 * self-affinity, hostname anti-affinity; CPU from {100,250,500,1000,1500}m,
 * memory from {100,256,512,1024,2048,4096}Mi, label values from a..g) against
 * the synthetic 400-type catalog, one NodePool with huge limits, empty cluster.
 * Prints pods, NodeClaims, ms per solve (wall clock, and the CPU time the
 * solve used, which a busy shared machine inflates less; the fastest of
 * --repeat solves, 3 by default), pods/s, the RSS of the built input and the
 * peak RSS of the process that built and solved that count (each count runs
 * in its own process), and how the CPU time grows from 20k to 100k pods.
 * Figures only: nothing is asserted.
 *
 *   bench_scheduling [--plain] [--no-limits] [--repeat=N] [COUNT...]
 *       default counts: 1 50 100 500 1000 2000 5000 10000 20000 50000 100000
 *       --plain: the solver's plain scan (every place tried in turn) instead
 *       of its index, for comparison
 *       --no-limits: no NodePool limits. Karpenter's limits (memory
 *       10000000Gi, counted per NodeClaim at its largest option, 800Gi here)
 *       stop at 12,500 NodeClaims, so at 100k pods 7,500 stay pending; this
 *       places them all
 */
#include "api/quantity.h"
#include "cloud/instance_types.h"
#include "scheduling/solver.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (INT64_C(1024) * 1024)

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t rng_intn(rng *r, uint32_t n)
{
    /* splitmix64: any decent uniform source reproduces the distributions. */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (uint32_t)(z % n);
}

static const char *const label_values[] = {"a", "b", "c", "d", "e", "f", "g"};
static const int64_t cpus[] = {100, 250, 500, 1000, 1500};
static const int64_t mems[] = {100, 256, 512, 1024, 2048, 4096};

typedef struct bench_opts {
    bool plain, no_limits;
    uint32_t repeats; /* solves per count; the fastest is printed */
} bench_opts;

typedef struct bench {
    kp_snapshot *snap;
    rng r;
    uint32_t seq;
    kp_sym ns;
} bench;

static kp_symlabels one_label(bench *b, const char *key, const char *value)
{
    return kp_snapshot_labels(b->snap, &key, &value, 1);
}

static kp_selector match_one(bench *b, const char *key, const char *value)
{
    kp_selector sel;
    memset(&sel, 0, sizeof(sel));
    kp_symlabels l = one_label(b, key, value);
    sel.match = l.items;
    sel.n_match = 1;
    return sel;
}

static kp_spod *new_pod(bench *b, const char *key, const char *value)
{
    kp_spod *p = kp_snapshot_add_pod(b->snap);
    char name[64];
    snprintf(name, sizeof(name), "default/pod-%06u", b->seq++);
    p->ns_name = kp_arena_strdup(b->snap->arena, name);
    p->uid = p->ns_name;
    p->ns = b->ns;
    p->labels = one_label(b, key, value);
    return p;
}

static void set_requests(bench *b, kp_spod *p)
{
    p->requests.v[KP_RES_CPU] = cpus[rng_intn(&b->r, 5)];
    p->requests.v[KP_RES_MEMORY] = mems[rng_intn(&b->r, 6)] * MIB * 1000;
    p->requests.v[KP_RES_PODS] = 1000;
}

static void generic(bench *b)
{
    kp_spod *p = new_pod(b, "my-label", label_values[rng_intn(&b->r, 7)]);
    set_requests(b, p);
}

static void spread(bench *b, kp_sym key)
{
    kp_spod *p = new_pod(b, "my-label", label_values[rng_intn(&b->r, 7)]);
    kp_spread *sp = KP_ARENA_NEW(b->snap->arena, kp_spread, 1);
    sp->key = key;
    sp->max_skew = 1;
    sp->do_not_schedule = true;
    sp->honor_affinity = true;
    sp->selector = match_one(b, "my-label", label_values[rng_intn(&b->r, 7)]);
    p->spreads = sp;
    p->n_spreads = 1;
    set_requests(b, p);
}

static kp_pod_term *self_term(bench *b, kp_spod *p, kp_sym key)
{
    kp_pod_term *t = KP_ARENA_NEW(b->snap->arena, kp_pod_term, 1);
    t->key = key;
    t->selector.match = p->labels.items;
    t->selector.n_match = p->labels.count;
    /* in the snapshot's arena: `b` lives on build()'s stack, the snapshot outlives it */
    kp_sym *ns = KP_ARENA_NEW(b->snap->arena, kp_sym, 1);
    *ns = b->ns;
    t->namespaces = ns;
    t->n_namespaces = 1;
    return t;
}

static void affinity(bench *b)
{
    kp_spod *p = new_pod(b, "my-affininity", label_values[rng_intn(&b->r, 7)]);
    p->affinity = self_term(b, p, KP_SYM_ZONE);
    p->n_affinity = 1;
    set_requests(b, p);
}

static void anti_affinity(bench *b)
{
    kp_spod *p = new_pod(b, "app", "nginx");
    p->anti = self_term(b, p, KP_SYM_HOSTNAME);
    p->n_anti = 1;
    set_requests(b, p);
}

static void add_nodepool(bench *b, bool limits)
{
    kp_snapshot *snap = b->snap;
    kp_template *t = kp_snapshot_add_template(snap);
    const char *keys[] = {"karpenter.sh/nodepool", "karpenter.test.sh/testnodeclass"};
    const char *values[] = {"default", "default"};
    t->name = "default";
    t->name_sym = kp_sym_intern(snap->symtab, "default");
    t->labels = kp_snapshot_labels(snap, keys, values, 2);
    kp_requirements_init(&t->reqs);
    kp_requirements_init(&t->spec_reqs);
    for (uint32_t i = 0; i < 2; i++)
        kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, keys[i], values[i]);
    kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, "karpenter.sh/registered", "true");
    kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, "karpenter.sh/initialized", "true");
    /* Karpenter's benchmark limits: cpu 10,000,000, memory 10000000Gi. */
    kp_quantity cpu, memory;
    kp_quantity_parse("10000000", &cpu);
    kp_quantity_parse("10000000Gi", &memory);
    t->has_limits = limits;
    t->limited[KP_RES_CPU] = t->limited[KP_RES_MEMORY] = true;
    t->limits.v[KP_RES_CPU] = kp_quantity_milli128(cpu);
    t->limits.v[KP_RES_MEMORY] = kp_quantity_milli128(memory);
}

static kp_snapshot *build(const kp_catalog *catalog, uint32_t count, bool limits)
{
    bench b = {kp_snapshot_new(), {42}, 0, 0};
    b.ns = kp_sym_intern(b.snap->symtab, "default");
    add_nodepool(&b, limits);
    int first = kp_snapshot_add_catalog(b.snap, catalog);
    kp_snapshot_template_use_its(b.snap, 0, (uint32_t)first, (uint32_t)catalog->count);
    uint32_t k = count / 5;
    for (uint32_t i = 0; i < k; i++)
        generic(&b);
    for (uint32_t i = 0; i < k; i++)
        spread(&b, KP_SYM_ZONE);
    for (uint32_t i = 0; i < k; i++)
        spread(&b, KP_SYM_HOSTNAME);
    for (uint32_t i = 0; i < k; i++)
        affinity(&b);
    for (uint32_t i = 0; i < k; i++)
        anti_affinity(&b);
    for (uint32_t i = 5 * k; i < count; i++)
        generic(&b);
    return b.snap;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The fastest of `repeats` solves of the same count, each on a snapshot built
 * afresh (the solver caches per snapshot): on a shared machine the other
 * runs are the same work slowed by neighbours. */
static int run(const kp_catalog *catalog, uint32_t count, bench_opts bo, double *cpu_out)
{
    double best_ms = -1, best_cpu = -1;
    long input_kib = 0;
    for (uint32_t rep = 0; rep < bo.repeats; rep++) {
        kp_snapshot *snap = build(catalog, count, !bo.no_limits);
        kp_arena *arena = kp_arena_new();
        uint32_t *pending;
        uint32_t n = kp_snapshot_pending_pods(snap, &pending, arena);
        kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
        opts.plain_scan = bo.plain;
        kp_plan *plan = NULL;
        if (rep == 0)
            input_kib = peak_rss_kib();
        double cpu0 = cpu_ms();
        int err = kp_solve(snap, &opts, pending, n, &plan);
        double cpu = cpu_ms() - cpu0;
        if (err < 0) {
            fprintf(stderr, "solve failed: %d\n", err);
            return 1;
        }
        double ms = (double)plan->solve_ns / 1e6;
        best_ms = best_ms < 0 || ms < best_ms ? ms : best_ms;
        best_cpu = best_cpu < 0 || cpu < best_cpu ? cpu : best_cpu;
        if (rep + 1 == bo.repeats) {
            printf("%8u %8u %10u %10.2f %10.2f %10.0f %10.2f %10.2f %8ld %8ld\n", count, plan->n_scheduled,
                   plan->n_claims, best_ms, best_cpu, best_cpu > 0 ? count / (best_cpu / 1000.0) : 0.0,
                   plan->hourly_cost, plan->lower_bound_cost, input_kib / 1024, peak_rss_kib() / 1024);
            if (plan->n_errors)
                printf("  unschedulable: %u (first: %s)\n", plan->n_errors, plan->errors[0].reason);
        }
        kp_plan_free(plan);
        kp_arena_free(arena);
        kp_snapshot_free(snap);
    }
    *cpu_out = best_cpu;
    fflush(stdout);
    return 0;
}

/* Generic pods (no constraints beyond requests) against the built-in AWS
 * catalog with the general-purpose NodePool of examples/nginx (Linux, c/m/r
 * families of generation 6 and later): what the plan costs against the bound. */
static kp_snapshot *build_generic(const kp_catalog *catalog, uint32_t count)
{
    bench b = {kp_snapshot_new(), {7}, 0, 0};
    b.ns = kp_sym_intern(b.snap->symtab, "default");
    add_nodepool(&b, true);
    kp_template *t = &b.snap->templates[0];
    const char *linux_os[] = {"linux"};
    const char *categories[] = {"c", "m", "r"};
    const char *generation[] = {"5"};
    kp_requirement r;
    kp_requirement_new(&r, b.snap->symtab, b.snap->arena, "kubernetes.io/os", KP_OP_IN, linux_os, 1, 0);
    kp_requirements_add(&t->reqs, b.snap->symtab, b.snap->arena, &r);
    kp_requirement_new(&r, b.snap->symtab, b.snap->arena, "karpenter.k8s.aws/instance-category", KP_OP_IN,
                       categories, 3, 0);
    kp_requirements_add(&t->reqs, b.snap->symtab, b.snap->arena, &r);
    kp_requirement_new(&r, b.snap->symtab, b.snap->arena, "karpenter.k8s.aws/instance-generation", KP_OP_GT,
                       generation, 1, 0);
    kp_requirements_add(&t->reqs, b.snap->symtab, b.snap->arena, &r);
    int first = kp_snapshot_add_catalog(b.snap, catalog);
    kp_snapshot_template_use_its(b.snap, 0, (uint32_t)first, (uint32_t)catalog->count);
    for (uint32_t i = 0; i < count; i++)
        generic(&b);
    return b.snap;
}

static int run_cost(const kp_catalog *catalog, uint32_t count)
{
    kp_snapshot *snap = build_generic(catalog, count);
    kp_arena *arena = kp_arena_new();
    uint32_t *pending;
    uint32_t n = kp_snapshot_pending_pods(snap, &pending, arena);
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    kp_plan *plan = NULL;
    if (kp_solve(snap, &opts, pending, n, &plan) < 0)
        return 1;
    printf("%8u %10u %12.4f %12.4f %8.3f %10.2f\n", count, plan->n_claims, plan->hourly_cost,
           plan->lower_bound_cost, plan->lower_bound_cost > 0 ? plan->hourly_cost / plan->lower_bound_cost : 0,
           (double)plan->solve_ns / 1e6);
    kp_plan_free(plan);
    kp_arena_free(arena);
    kp_snapshot_free(snap);
    return 0;
}

static int cost_table(void)
{
    static const uint32_t counts[] = {10, 50, 100, 500, 1000, 5000};
    kp_catalog *catalog;
    if (kp_catalog_builtin_aws(NULL, &catalog) < 0)
        return 1;
    printf("\ncost benchmark: generic pods vs the built-in AWS catalog (%zu types)\n", catalog->count);
    printf("%8s %10s %12s %12s %8s %10s\n", "pods", "nodeclaims", "cost/h", "bound/h", "ratio", "ms/solve");
    int rc = 0;
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        rc |= run_cost(catalog, counts[i]);
    kp_catalog_free(catalog);
    return rc;
}

/* One count in a child process, so that its peak RSS is its own; its CPU
 * time comes back through a pipe. */
static int run_isolated(const kp_catalog *catalog, uint32_t count, bench_opts bo, double *cpu)
{
    int fd[2];
    *cpu = -1;
    fflush(stdout);
    if (pipe(fd) < 0)
        return run(catalog, count, bo, cpu);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return run(catalog, count, bo, cpu);
    }
    if (pid == 0) {
        close(fd[0]);
        int rc = run(catalog, count, bo, cpu);
        ssize_t w = write(fd[1], cpu, sizeof(*cpu));
        _exit(rc || w != (ssize_t)sizeof(*cpu));
    }
    close(fd[1]);
    ssize_t r = read(fd[0], cpu, sizeof(*cpu));
    close(fd[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || r != (ssize_t)sizeof(*cpu))
        return 1;
    return WEXITSTATUS(status);
}

/* The yardstick: how much longer 100k pods take than 20k (x5 is linear). */
static void growth(const uint32_t *counts, const double *cpu, size_t n, const char *what)
{
    double at20 = -1, at100 = -1;
    for (size_t i = 0; i < n; i++) {
        if (counts[i] == 20000)
            at20 = cpu[i];
        if (counts[i] == 100000)
            at100 = cpu[i];
    }
    if (at20 > 0 && at100 > 0)
        printf("  growth 20k -> 100k pods%s: x%.2f CPU time for x5 pods\n", what, at100 / at20);
}

int main(int argc, char **argv)
{
    static const uint32_t defaults[] = {1, 50, 100, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
    bench_opts bo = {false, false, 3};
    uint32_t counts[64];
    double cpu[64];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plain") == 0)
            bo.plain = true;
        else if (strcmp(argv[i], "--no-limits") == 0)
            bo.no_limits = true;
        else if (strncmp(argv[i], "--repeat=", 9) == 0)
            bo.repeats = (uint32_t)strtoul(argv[i] + 9, NULL, 10);
        else if (n < sizeof(counts) / sizeof(counts[0]))
            counts[n++] = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    if (bo.repeats == 0)
        bo.repeats = 1;
    bool all = n == 0;
    if (all)
        memcpy(counts, defaults, sizeof(defaults)), n = sizeof(defaults) / sizeof(defaults[0]);
    kp_catalog *catalog;
    if (kp_catalog_synthetic(400, &catalog) < 0)
        return 1;
    printf("scheduling benchmark: diverse pods vs synthetic:400 (Karpenter's scheduling_benchmark_test.go)%s%s; "
           "fastest of %u solves\n",
           bo.plain ? ", plain scan" : "", bo.no_limits ? ", no NodePool limits" : "", bo.repeats);
    printf("%8s %8s %10s %10s %10s %10s %10s %10s %8s %8s\n", "pods", "placed", "nodeclaims", "ms/solve",
           "cpu ms", "pods/cpu-s", "cost/h", "bound/h", "inputMiB", "peakMiB");
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        rc |= run_isolated(catalog, counts[i], bo, &cpu[i]);
    growth(counts, cpu, n, "");
    if (all && !bo.no_limits) {
        /* The largest counts again with every pod placed (see --no-limits). */
        static const uint32_t big[] = {20000, 50000, 100000};
        double big_cpu[3];
        printf("the same without NodePool limits (every pod placed)\n");
        bo.no_limits = true;
        for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
            rc |= run_isolated(catalog, big[i], bo, &big_cpu[i]);
        growth(big, big_cpu, 3, ", no limits");
    }
    kp_catalog_free(catalog);
    if (all)
        rc |= cost_table();
    return rc;
}
