/*
 * "No NodePool can launch a node for this pod", told at admission
 * (shared/webhook/pod_warning): the check on the provisioner's solver, the
 * cases it keeps quiet about, the budget the warner never exceeds, and the
 * handler that turns it into an AdmissionReview warning on CREATE only.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "webhook/handler.h"
#include "webhook/pod_warning.h"

#define CLASS "\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"}"

/* ---------------------------------------------------------------- a source */

typedef struct pools {
    cJSON *items[4];
    size_t n;
    bool ready;
    /* A gate the visit waits on (the warner tests): NULL: none. */
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    bool *open;
    bool *reached; /* set when a visit waits at the gate */
} pools;

static bool pools_ready(void *ctx)
{
    return ((pools *)ctx)->ready;
}

static void pools_foreach(void *ctx, kp_pod_warning_visit visit, void *vctx)
{
    pools *p = ctx;
    if (p->mu) {
        pthread_mutex_lock(p->mu);
        *p->reached = true;
        pthread_cond_broadcast(p->cv);
        while (!*p->open)
            pthread_cond_wait(p->cv, p->mu);
        pthread_mutex_unlock(p->mu);
    }
    for (size_t i = 0; i < p->n; i++)
        visit(vctx, p->items[i]);
}

static void add_pool(pools *p, const char *name, const char *spec_extra, const char *template_extra)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s\"template\":{\"spec\":{" CLASS ",%s\"requirements\":[]}}}}",
             name, spec_extra, template_extra);
    p->items[p->n] = cJSON_Parse(json);
    cr_assert_not_null(p->items[p->n], "bad test JSON: %s", json);
    p->n++;
}

static void pools_free(pools *p)
{
    for (size_t i = 0; i < p->n; i++)
        cJSON_Delete(p->items[i]);
}

typedef struct fixture {
    pools pools;
    kp_catalog *catalog;
    kp_pod_warning_source src;
    kp_arena *arena;
} fixture;

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof(*f));
    f->pools.ready = true;
    cr_assert_eq(kp_catalog_open("builtin", &f->catalog), 0, "%s", kp_error_last());
    f->src = (kp_pod_warning_source){pools_ready, pools_foreach, &f->pools, f->catalog};
    f->arena = kp_arena_new();
}

static void fixture_free(fixture *f)
{
    pools_free(&f->pools);
    kp_catalog_free(f->catalog);
    kp_arena_free(f->arena);
}

/* A pod with `spec_extra` members before its containers and a CPU request. */
static cJSON *pod(const char *spec_extra, const char *cpu)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"team\"},"
             "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":"
             "\"%s\"}}}]}}",
             spec_extra, cpu);
    cJSON *p = cJSON_Parse(json);
    cr_assert_not_null(p, "bad test JSON: %s", json);
    return p;
}

static enum kp_pod_verdict check(fixture *f, const char *spec_extra, const char *cpu, const char **warning)
{
    cJSON *p = pod(spec_extra, cpu);
    enum kp_pod_verdict v;
    cr_assert_eq(kp_pod_warning_check(&f->src, p, NULL, f->arena, &v, warning), 0, "%s", kp_error_last());
    cJSON_Delete(p);
    return v;
}

static void expect_never(fixture *f, const char *spec_extra, const char *cpu, const char *needle)
{
    const char *w = NULL;
    cr_expect_eq(check(f, spec_extra, cpu, &w), KP_POD_NEVER, "%s / %s: not warned", spec_extra, cpu);
    cr_assert_not_null(w);
    cr_expect(strncmp(w, "no NodePool can launch a node for this pod: ", 44) == 0, "%s", w);
    cr_expect(strstr(w, needle) != NULL, "want \"%s\" in: %s", needle, w);
    cr_expect_leq(strlen(w), KP_POD_WARNING_MAX);
}

/* ---------------------------------------------------------------- the check */

Test(pod_warning, a_pod_some_nodepool_can_run_fits)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    const char *w = "unset";
    cr_expect_eq(check(&f, "", "1", &w), KP_POD_FITS);
    cr_expect_null(w);
    fixture_free(&f);
}

Test(pod_warning, requirements_no_nodepool_meets)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    expect_never(&f, "\"nodeSelector\":{\"kubernetes.io/arch\":\"s390x\"},", "1", "kubernetes.io/arch");
    fixture_free(&f);
}

Test(pod_warning, a_taint_it_does_not_tolerate)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "gpu", "", "\"taints\":[{\"key\":\"gpu\",\"value\":\"true\",\"effect\":\"NoSchedule\"}],");
    expect_never(&f, "", "1", "did not tolerate taint gpu=true:NoSchedule");
    const char *w;
    cr_expect_eq(check(&f, "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}],", "1", &w), KP_POD_FITS);
    fixture_free(&f);
}

Test(pod_warning, more_than_every_instance_type_has)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    expect_never(&f, "", "100000", "no instance type has enough resources");
    fixture_free(&f);
}

Test(pod_warning, limits_of_zero)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "frozen", "\"limits\":{\"cpu\":\"0\"},", "");
    expect_never(&f, "", "1", "exceed nodepool \"frozen\" limits: cpu 0");
    fixture_free(&f);
}

Test(pod_warning, one_nodepool_that_fits_is_enough)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "frozen", "\"limits\":{\"cpu\":\"0\"},", "");
    add_pool(&f.pools, "open", "", "");
    const char *w;
    cr_expect_eq(check(&f, "", "1", &w), KP_POD_FITS);
    fixture_free(&f);
}

Test(pod_warning, what_depends_on_other_pods_is_left_out)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    const char *w;
    /* Anti-affinity to itself by hostname and a spread: other pods decide those, not the NodePools. */
    cr_expect_eq(check(&f,
                       "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
                       "\"topologyKey\":\"kubernetes.io/hostname\",\"labelSelector\":{\"matchLabels\":{\"a\":\"b\"}}"
                       "}]}},\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"topology.kubernetes.io/"
                       "zone\",\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{}}],",
                       "1", &w),
                 KP_POD_FITS);
    fixture_free(&f);
}

Test(pod_warning, quiet_when_it_cannot_know)
{
    fixture f;
    fixture_init(&f);
    const char *w;
    cr_expect_eq(check(&f, "", "100000", &w), KP_POD_SKIPPED, "no NodePools: maybe not Karpenter's pods");
    add_pool(&f.pools, "default", "", "");
    f.pools.ready = false;
    cr_expect_eq(check(&f, "", "100000", &w), KP_POD_SKIPPED, "NodePools not known yet");
    f.pools.ready = true;
    cr_expect_eq(check(&f, "\"nodeName\":\"n1\",", "100000", &w), KP_POD_SKIPPED, "bound already");
    fixture_free(&f);

    fixture_init(&f);
    add_pool(&f.pools, "custom", "",
             "\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\",\"values\":["
             "\"not-in-this-catalog\"]}],");
    cr_expect_eq(check(&f, "", "100000", &w), KP_POD_SKIPPED, "the catalog is not this NodePool's");
    fixture_free(&f);
}

Test(pod_warning, daemonset_pods_are_not_checked)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    cJSON *p = pod("", "100000");
    cJSON_AddItemToObject(cJSON_GetObjectItem(p, "metadata"), "ownerReferences",
                          cJSON_Parse("[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"d\",\"uid\":\"u\","
                                      "\"controller\":true}]"));
    enum kp_pod_verdict v;
    const char *w;
    cr_assert_eq(kp_pod_warning_check(&f.src, p, NULL, f.arena, &v, &w), 0);
    cr_expect_eq(v, KP_POD_SKIPPED);
    cJSON_Delete(p);
    fixture_free(&f);
}

Test(pod_warning, a_malformed_pod_is_an_error_the_caller_ignores)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    cJSON *p = cJSON_Parse("{\"kind\":\"Pod\",\"metadata\":{\"name\":7},\"spec\":{\"containers\":\"x\"}}");
    enum kp_pod_verdict v = KP_POD_FITS;
    const char *w = "unset";
    cr_expect_lt(kp_pod_warning_check(&f.src, p, NULL, f.arena, &v, &w), 0);
    cr_expect_eq(v, KP_POD_SKIPPED);
    cr_expect_null(w);
    cJSON_Delete(p);
    fixture_free(&f);
}

Test(pod_warning, a_long_reason_is_cut_on_a_character_boundary)
{
    fixture f;
    fixture_init(&f);
    char spec[1024], value[400];
    memset(value, 0, sizeof(value));
    for (size_t i = 0; i + 2 < 300; i += 2)
        memcpy(value + i, "\xc3\xa9", 2); /* é, two bytes each */
    add_pool(&f.pools, "default", "", "");
    snprintf(spec, sizeof(spec), "\"nodeSelector\":{\"kubernetes.io/arch\":\"%s\"},", value);
    const char *w = NULL;
    cr_assert_eq(check(&f, spec, "1", &w), KP_POD_NEVER);
    size_t n = strlen(w);
    cr_expect_leq(n, KP_POD_WARNING_MAX);
    cr_expect_str_eq(w + n - 3, "...");
    cr_expect_eq((unsigned char)w[n - 4], 0xa9, "the cut falls among the é: after a whole one, never inside");
    fixture_free(&f);
}

/* ---------------------------------------------------------------- the warner */

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open, reached;
} gate;

static void gate_await_worker(gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->reached)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static double counted(kp_metrics *m, const char *result)
{
    kp_buf out = KP_BUF_INIT(1 << 20);
    cr_assert_eq(kp_metrics_write(m, &out), 0);
    char needle[128];
    snprintf(needle, sizeof(needle), "karpenter_webhook_pod_warnings_total{result=\"%s\"} ", result);
    const char *at = strstr(kp_buf_cstr(&out), needle);
    double v = at ? strtod(at + strlen(needle), NULL) : 0;
    kp_buf_free(&out);
    return v;
}

static kp_pod_warner *warner(fixture *f, kp_metrics *m, int64_t budget_ms, unsigned workers, unsigned queue)
{
    static const char *const labels[] = {"result"};
    kp_metric *results = NULL;
    cr_assert_eq(kp_metrics_counter(&results, m, "karpenter_webhook_pod_warnings_total", "test", labels, 1), 0);
    kp_pod_warner_opts o = KP_POD_WARNER_OPTS_INIT;
    o.source = f->src;
    o.budget_ms = budget_ms, o.workers = workers, o.queue = queue, o.results = results;
    kp_pod_warner *w = NULL;
    cr_assert_eq(kp_pod_warner_new(&o, &w), 0, "%s", kp_error_last());
    return w;
}

Test(pod_warner, answers_within_the_budget)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    kp_metrics *m = kp_metrics_new();
    kp_pod_warner *w = warner(&f, m, 5000, 2, 8);
    cJSON *big = pod("", "100000"), *small = pod("", "1");
    const char *said = kp_pod_warner_warn(w, big, NULL, f.arena);
    cr_assert_not_null(said);
    cr_expect(strstr(said, "no instance type has enough resources") != NULL, "%s", said);
    cr_expect_null(kp_pod_warner_warn(w, small, NULL, f.arena));
    w = kp_pod_warner_free(w);
    cr_expect_float_eq(counted(m, "warned"), 1, 0);
    cr_expect_float_eq(counted(m, "fits"), 1, 0);
    cJSON_Delete(big);
    cJSON_Delete(small);
    kp_metrics_free(m);
    fixture_free(&f);
}

/* The check is held at a gate the test opens only after warn() returned: a
 * warner that waited past its budget would never return (Criterion's
 * timeout fails the test), so no clock is read. */
Test(pod_warner, a_late_answer_is_dropped_and_admission_goes_on, .timeout = 30)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};
    f.pools.mu = &g.mu, f.pools.cv = &g.cv, f.pools.open = &g.open, f.pools.reached = &g.reached;
    kp_metrics *m = kp_metrics_new();
    kp_pod_warner *w = warner(&f, m, 20, 1, 1);
    cJSON *big = pod("", "100000");
    cr_expect_null(kp_pod_warner_warn(w, big, NULL, f.arena), "the check is still at the gate");
    gate_await_worker(&g); /* the worker holds the first check: the queue is empty */
    cr_expect_null(kp_pod_warner_warn(w, big, NULL, f.arena), "queued behind it: late too");
    cr_expect_null(kp_pod_warner_warn(w, big, NULL, f.arena), "the queue (1) is full: skipped at once");
    cr_expect_float_eq(counted(m, "busy"), 1, 0);
    cr_expect_float_eq(counted(m, "late"), 2, 0);
    gate_open(&g);
    w = kp_pod_warner_free(w); /* the late checks finish and are freed by the workers */
    cr_expect_float_eq(counted(m, "warned"), 0, 0, "a late answer is not counted as given");
    cJSON_Delete(big);
    kp_metrics_free(m);
    fixture_free(&f);
}

Test(pod_warner, options_are_checked)
{
    kp_pod_warner_opts o = KP_POD_WARNER_OPTS_INIT;
    kp_pod_warner *w = NULL;
    cr_expect_eq(kp_pod_warner_new(&o, &w), KP_EINVALID, "no source");
    cr_expect_null(w);
    cr_expect_null(kp_pod_warner_free(NULL));
}

/* ---------------------------------------------------------------- the handler */

static const char *advise_const(void *ctx, const cJSON *pod_obj, const char *ns, kp_arena *arena)
{
    (void)arena;
    cJSON **seen = ctx;
    cJSON_Delete(*seen);
    *seen = cJSON_Duplicate(pod_obj, 1);
    cJSON_AddStringToObject(*seen, "seenNamespace", ns ? ns : "");
    return "no NodePool can launch a node for this pod: test";
}

static cJSON *handle(const kp_webhook_advisor *adv, const char *policy_yaml, const char *operation)
{
    char body[2048];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
             "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"namespace\":\"team\","
             "\"operation\":\"%s\",%s\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{"
             "\"name\":\"c\"}]}}}}",
             operation, strcmp(operation, "UPDATE") ? "" : "\"oldObject\":{},");
    kp_policy *policy = NULL;
    cr_assert_eq(kp_policy_parse(&policy, policy_yaml, strlen(policy_yaml), NULL), 0, "%s", kp_error_last());
    kp_arena *arena = kp_arena_new();
    kp_buf out = KP_BUF_INIT(KP_WEBHOOK_MAX_RESPONSE);
    kp_webhook_outcome outcome;
    kp_webhook_handle_advised(policy, adv, KP_WEBHOOK_MUTATE, body, strlen(body), arena, &out, &outcome);
    cJSON *root = cJSON_Parse(kp_buf_cstr(&out));
    cr_assert_not_null(root, "%s", kp_buf_cstr(&out));
    kp_buf_free(&out);
    kp_arena_free(arena);
    kp_policy_unref(policy);
    return root;
}

static bool has_warning(const cJSON *root, const char *text)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(cJSON_GetObjectItem(root, "response"), "warnings"))
    {
        if (cJSON_IsString(w) && !strcmp(w->valuestring, text))
            return true;
    }
    return false;
}

Test(pod_warning_handler, the_warning_rides_on_create_and_never_refuses)
{
    cJSON *seen = NULL;
    kp_webhook_advisor adv = {advise_const, &seen};
    cJSON *root = handle(&adv, "pods: {defaultRequests: {cpu: 250m}}", "CREATE");
    cJSON *resp = cJSON_GetObjectItem(root, "response");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(resp, "allowed")));
    cr_expect(has_warning(root, "no NodePool can launch a node for this pod: test"));
    cr_assert_not_null(seen, "the advisor was asked");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(seen, "seenNamespace")), "team");
    const cJSON *req = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
                                                                   cJSON_GetObjectItem(seen, "spec"), "containers"),
                                                                   0),
                                                               "resources"),
                                           "requests");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(req, "cpu")), "250m",
                     "the advisor sees the pod as the policy's patch leaves it");
    cJSON_Delete(root);
    cJSON_Delete(seen);
    seen = NULL;

    root = handle(&adv, "{}", "UPDATE");
    cr_expect_null(seen, "not asked on UPDATE");
    cr_expect_not(has_warning(root, "no NodePool can launch a node for this pod: test"));
    cJSON_Delete(root);
}

/* ---------------------------------------------------------------- the checker's cache */

Test(pod_checker, a_changed_nodepool_is_seen_at_the_next_check)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    cJSON_AddStringToObject(cJSON_GetObjectItem(f.pools.items[0], "metadata"), "resourceVersion", "1");
    kp_pod_checker *c = kp_pod_checker_new(&f.src);
    cJSON *p = pod("", "1");
    enum kp_pod_verdict v;
    const char *w;
    cr_assert_eq(kp_pod_checker_check(c, p, NULL, f.arena, &v, &w), 0, "%s", kp_error_last());
    cr_expect_eq(v, KP_POD_FITS);
    /* The same object, a new version with limits of 0: rebuilt. */
    cJSON *spec = cJSON_GetObjectItem(f.pools.items[0], "spec");
    cJSON_AddItemToObject(spec, "limits", cJSON_Parse("{\"cpu\":\"0\"}"));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(f.pools.items[0], "metadata"), "resourceVersion",
                              cJSON_CreateString("2"));
    cr_assert_eq(kp_pod_checker_check(c, p, NULL, f.arena, &v, &w), 0);
    cr_expect_eq(v, KP_POD_NEVER, "the limit is seen");
    /* Objects without a version are compared whole. */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(f.pools.items[0], "metadata"), "resourceVersion");
    cJSON_ReplaceItemInObject(spec, "limits", cJSON_Parse("{\"cpu\":\"100\"}"));
    cr_assert_eq(kp_pod_checker_check(c, p, NULL, f.arena, &v, &w), 0);
    cr_expect_eq(v, KP_POD_FITS, "the raised limit is seen");
    cJSON_Delete(p);
    kp_pod_checker_free(c);
    fixture_free(&f);
}

Test(pod_checker, many_checks_give_the_same_answers)
{
    fixture f;
    fixture_init(&f);
    add_pool(&f.pools, "default", "", "");
    kp_pod_checker *c = kp_pod_checker_new(&f.src);
    cJSON *fits = pod("", "1"), *never = pod("", "100000");
    for (int i = 0; i < 600; i++) { /* past the rebuild every few hundred checks */
        enum kp_pod_verdict v;
        const char *w;
        kp_arena_mark m = kp_arena_mark_get(f.arena);
        cr_assert_eq(kp_pod_checker_check(c, i % 2 ? never : fits, NULL, f.arena, &v, &w), 0);
        cr_assert_eq(v, i % 2 ? KP_POD_NEVER : KP_POD_FITS, "check %d", i);
        kp_arena_rewind(f.arena, m);
    }
    cJSON_Delete(fits);
    cJSON_Delete(never);
    kp_pod_checker_free(c);
    cr_expect_null(kp_pod_checker_free(NULL));
    fixture_free(&f);
}
