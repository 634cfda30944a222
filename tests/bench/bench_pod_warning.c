/*
 * Benchmark of the webhook's Pod warning ("no NodePool can launch a node for
 * this pod"): the check on its own (kp_pod_warning_check) and through the
 * warner that admission waits on (kp_pod_warner_warn, 100 ms budget), against
 * three NodePools and the built-in catalog, for pods that fit and pods that
 * never will. Prints p50, p99 and max latency and how many answers were late;
 * asserts nothing.
 *
 *   bench_pod_warning [checks]   (at least 40; default 400)
 */
#include "base/error.h"
#include "webhook/pod_warning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct pools {
    cJSON *items[3];
} pools;

static bool ready(void *ctx)
{
    (void)ctx;
    return true;
}

static void foreach_pool(void *ctx, kp_pod_warning_visit visit, void *vctx)
{
    pools *p = ctx;
    for (size_t i = 0; i < 3; i++)
        visit(vctx, p->items[i]);
}

static cJSON *parse(const char *json)
{
    cJSON *v = cJSON_Parse(json);
    if (!v) {
        fprintf(stderr, "bench: bad JSON: %s\n", json);
        exit(1);
    }
    return v;
}

static void make_pools(pools *p)
{
    static const char *const specs[3] = {
        "\"requirements\":[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"spot\","
        "\"on-demand\"]},{\"key\":\"karpenter.k8s.aws/instance-category\",\"operator\":\"In\",\"values\":[\"c\","
        "\"m\",\"r\"]},{\"key\":\"karpenter.k8s.aws/instance-generation\",\"operator\":\"Gt\",\"values\":[\"2\"]}]",
        "\"taints\":[{\"key\":\"nvidia.com/gpu\",\"effect\":\"NoSchedule\"}],\"requirements\":[{\"key\":"
        "\"karpenter.k8s.aws/instance-category\",\"operator\":\"In\",\"values\":[\"g\",\"p\"]}]",
        "\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"arm64\"]}]",
    };
    static const char *const names[3] = {"general", "gpu", "arm"};
    for (int i = 0; i < 3; i++) {
        char json[2048];
        snprintf(json, sizeof(json),
                 "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
                 "\"limits\":{\"cpu\":\"1000\"},\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s."
                 "aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"},%s}}}}",
                 names[i], specs[i]);
        p->items[i] = parse(json);
    }
}

/* Even: fits the general pool. Odd: an architecture no pool offers. */
static cJSON *make_pod(int i)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\",\"namespace\":\"default\"},"
             "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":"
             "\"%dm\",\"memory\":\"256Mi\"}}}]}}",
             i, i % 2 ? "\"nodeSelector\":{\"kubernetes.io/arch\":\"s390x\"}," : "", 100 + (i % 7) * 250);
    return parse(json);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *ms, int n, int warned, int silent)
{
    qsort(ms, (size_t)n, sizeof(double), cmp_double);
    printf("%-34s %5d checks  p50 %7.3f ms  p99 %7.3f ms  max %7.3f ms  (%d warned, %d no answer)\n", what, n,
           ms[n / 2], ms[(int)((double)n * 0.99)], ms[n - 1], warned, silent);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 400;
    if (n < 40)
        n = 40;
    pools p;
    make_pools(&p);
    kp_catalog *catalog = NULL;
    if (kp_catalog_open("builtin", &catalog) < 0) {
        fprintf(stderr, "bench: %s\n", kp_error_last());
        return 1;
    }
    kp_pod_warning_source src = {ready, foreach_pool, &p, catalog};
    double *ms = calloc((size_t)n, sizeof(double));
    int warned = 0, silent = 0;
    kp_pod_checker *checker = kp_pod_checker_new(&src);
    for (int i = 0; i < n; i++) {
        cJSON *pod = make_pod(i);
        kp_arena *a = kp_arena_new();
        enum kp_pod_verdict v;
        const char *w;
        double t0 = now_ms();
        if (i < 20) /* cold: the NodePools and the catalog compiled for this pod alone */
            kp_pod_warning_check(&src, pod, NULL, a, &v, &w);
        else
            kp_pod_checker_check(checker, pod, NULL, a, &v, &w);
        ms[i] = now_ms() - t0;
        warned += v == KP_POD_NEVER;
        kp_arena_free(a);
        cJSON_Delete(pod);
    }
    kp_pod_checker_free(checker);
    report("cold check (compile, then solve)", ms, 20, 10, 0);
    report("check, NodePools compiled once", ms + 20, n - 20, warned - 10, 0);

    kp_pod_warner_opts o = KP_POD_WARNER_OPTS_INIT;
    o.source = src;
    kp_pod_warner *warner = NULL;
    if (kp_pod_warner_new(&o, &warner) < 0) {
        fprintf(stderr, "bench: %s\n", kp_error_last());
        return 1;
    }
    warned = 0;
    for (int i = 0; i < n; i++) {
        cJSON *pod = make_pod(i);
        kp_arena *a = kp_arena_new();
        double t0 = now_ms();
        const char *w = kp_pod_warner_warn(warner, pod, NULL, a);
        ms[i] = now_ms() - t0;
        warned += w != NULL;
        silent += !w && i % 2;
        kp_arena_free(a);
        cJSON_Delete(pod);
    }
    report("admission wait (warner, 100 ms)", ms, n, warned, silent);
    kp_pod_warner_free(warner);
    free(ms);
    kp_catalog_free(catalog);
    for (int i = 0; i < 3; i++)
        cJSON_Delete(p.items[i]);
    return 0;
}
