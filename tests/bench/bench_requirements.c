/*
 * Benchmark of the requirement checks the solver runs in its inner loop: a
 * NodePool's requirements (5 keys) and a pod's against 400 instance types
 * (12 keys each). Prints nanoseconds per check; asserts nothing.
 *
 *   bench_requirements [rounds]
 */
#include "api/requirements.h"
#include "api/wellknown.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { TYPES = 400 };

static kp_symtab *st;
static kp_arena *arena;

static void add(kp_requirements *reqs, const char *key, enum kp_selector_op op,
                const char *const *values, size_t n)
{
    kp_requirement r;
    if (kp_requirement_new(&r, st, arena, key, op, values, n, 0) < 0) {
        fprintf(stderr, "bench: bad requirement on %s\n", key);
        exit(1);
    }
    kp_requirements_add(reqs, st, arena, &r);
}

static void add_label(kp_requirements *reqs, const char *key, const char *value)
{
    kp_requirements_add_label(reqs, st, arena, key, value);
}

static void nodepool(kp_requirements *np)
{
    static const char *const capacity[] = {"spot", "on-demand"}, *const arch[] = {"amd64"};
    static const char *const category[] = {"c", "m", "r"}, *const gen[] = {"2"};
    static const char *const os[] = {"linux"};
    kp_requirements_init(np);
    add(np, KP_LABEL_CAPACITY_TYPE, KP_OP_IN, capacity, 2);
    add(np, KP_LABEL_ARCH, KP_OP_IN, arch, 1);
    add(np, KP_LABEL_INSTANCE_CATEGORY, KP_OP_IN, category, 3);
    add(np, KP_LABEL_INSTANCE_GENERATION, KP_OP_GT, gen, 1);
    add(np, KP_LABEL_OS, KP_OP_IN, os, 1);
}

static void pod(kp_requirements *p)
{
    static const char *const zones[] = {"us-west-2a", "us-west-2b"};
    static const char *const gpu[] = {"nvidia"};
    kp_requirements_init(p);
    add(p, KP_LABEL_ZONE, KP_OP_IN, zones, 2);
    add(p, KP_LABEL_INSTANCE_GPU_MANUFACTURER, KP_OP_NOT_IN, gpu, 1);
    add_label(p, KP_LABEL_ARCH, "amd64");
}

static void instance_type(kp_requirements *it, int i)
{
    static const char *const categories[] = {"c", "m", "r", "t", "g", "x", "i"};
    static const char *const sizes[] = {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge"};
    static const char *const capacity[] = {"spot", "on-demand"};
    static const char *const zones[] = {"us-west-2a", "us-west-2b", "us-west-2c"};
    const char *category = categories[i % 7], *size = sizes[i % 5];
    int gen = 3 + i % 5;
    char family[32], name[64], cpu[16], mem[16], gens[16];
    snprintf(family, sizeof(family), "%s%d%s", category, gen, i % 3 == 0 ? "g" : "");
    snprintf(name, sizeof(name), "%s.%s-%d", family, size, i);
    snprintf(cpu, sizeof(cpu), "%d", 2 << (i % 5));
    snprintf(mem, sizeof(mem), "%d", 4096 << (i % 6));
    snprintf(gens, sizeof(gens), "%d", gen);
    kp_requirements_init(it);
    add_label(it, KP_LABEL_INSTANCE_TYPE, name);
    add_label(it, KP_LABEL_ARCH, i % 3 == 0 ? "arm64" : "amd64");
    add_label(it, KP_LABEL_OS, "linux");
    add(it, KP_LABEL_CAPACITY_TYPE, KP_OP_IN, capacity, 2);
    add(it, KP_LABEL_ZONE, KP_OP_IN, zones, 3);
    add_label(it, KP_LABEL_INSTANCE_CATEGORY, category);
    add_label(it, KP_LABEL_INSTANCE_FAMILY, family);
    add_label(it, KP_LABEL_INSTANCE_GENERATION, gens);
    add_label(it, KP_LABEL_INSTANCE_SIZE, size);
    add_label(it, KP_LABEL_INSTANCE_CPU, cpu);
    add_label(it, KP_LABEL_INSTANCE_MEMORY, mem);
    add_label(it, KP_LABEL_INSTANCE_HYPERVISOR, "nitro");
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct fixture {
    kp_requirements nodepool, pod, types[TYPES];
    long rounds;
};

/* Each returns how many checks came out true, so none can be optimised away. */
static long intersects_nodepool(const struct fixture *f)
{
    long hits = 0;
    for (long r = 0; r < f->rounds; r++)
        for (int i = 0; i < TYPES; i++)
            hits += kp_requirements_intersects(st, &f->types[i], &f->nodepool, NULL);
    return hits;
}

static long compatible_nodepool(const struct fixture *f)
{
    long hits = 0;
    for (long r = 0; r < f->rounds; r++)
        for (int i = 0; i < TYPES; i++)
            hits += kp_requirements_compatible(st, &f->types[i], &f->nodepool,
                                               KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN, NULL);
    return hits;
}

static long compatible_pod(const struct fixture *f)
{
    long hits = 0;
    for (long r = 0; r < f->rounds; r++)
        for (int i = 0; i < TYPES; i++)
            hits += kp_requirements_compatible(st, &f->types[i], &f->pod, 0, NULL);
    return hits;
}

static long zone_intersects(const struct fixture *f)
{
    const kp_requirement *zone = kp_requirements_get(&f->pod, KP_SYM_ZONE);
    long hits = 0;
    for (long r = 0; r < f->rounds; r++)
        for (int i = 0; i < TYPES; i++)
            hits +=
                kp_requirement_intersects(st, kp_requirements_get(&f->types[i], KP_SYM_ZONE), zone);
    return hits;
}

/* A NodeClaim's requirements: the NodePool's, then each pod's added. */
static long build_claims(const struct fixture *f)
{
    long hits = 0;
    kp_arena *scratch = kp_arena_new();
    for (long r = 0; r < f->rounds * TYPES; r++) {
        kp_requirements claim;
        kp_requirements_copy(&claim, scratch, &f->nodepool);
        kp_requirements_add_all(&claim, st, scratch, &f->pod);
        hits += claim.count;
        if (r % 1000 == 999) scratch = (kp_arena_free(scratch), kp_arena_new());
    }
    kp_arena_free(scratch);
    return hits;
}

/* Best of five runs: the least disturbed by whatever else the machine does. */
static void measure(const char *what, long (*run)(const struct fixture *), const struct fixture *f)
{
    double best = 0;
    long hits = 0, checks = f->rounds * TYPES;
    for (int i = 0; i < 5; i++) {
        double t = now_ns();
        hits = run(f);
        double ns = (now_ns() - t) / (double)checks;
        if (i == 0 || ns < best) best = ns;
    }
    printf("%-56s %7.1f ns/check  (%ld checks, %ld true)\n", what, best, checks, hits);
}

int main(int argc, char **argv)
{
    static struct fixture f;
    f.rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
    if (f.rounds <= 0) f.rounds = 2000;
    /* Keep freed arena chunks in the heap: the figures are for the algebra,
     * not for the kernel faulting pages back in. */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    st = kp_symtab_new();
    arena = kp_arena_new();
    nodepool(&f.nodepool);
    pod(&f.pod);
    for (int i = 0; i < TYPES; i++)
        instance_type(&f.types[i], i);

    measure("intersects(instance type 12 keys, nodepool 5 keys)", intersects_nodepool, &f);
    measure("compatible(instance type, nodepool, allow well-known)", compatible_nodepool, &f);
    measure("compatible(instance type, pod 3 keys, strict)", compatible_pod, &f);
    measure("get + requirement_intersects(zone In[3], In[2])", zone_intersects, &f);
    measure("copy(nodepool) + add_all(pod): one NodeClaim built", build_claims, &f);
    printf("%d instance types, %zu symbols, %zu arena bytes for the fixture\n", TYPES,
           kp_symtab_count(st), kp_arena_used(arena));
    kp_arena_free(arena);
    kp_symtab_free(st);
    return 0;
}
