/* "No NodePool can ever run this pod" at admission (see pod_warning.h). */
#include "webhook/pod_warning.h"
#include "api/decode.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "scheduling/snapshot_build.h"
#include "scheduling/solver.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- the check */

/* Checks past this many rebuild the snapshot: each pod leaves its symbols and
 * compiled requirements in it. */
enum { REUSE_MAX = 256, KEY_MAX = 4u << 20 };


/* The NodePools' identity, to know when the snapshot is stale. */
typedef struct pool_key {
    kp_buf buf;
    bool overflow; /* past KEY_MAX: never taken as unchanged */
} pool_key;

/* A NodePool's part: name and resourceVersion (an informer's objects change
 * version with every write), or the whole object without one. */
static void key_visit(void *vctx, const cJSON *obj)
{
    pool_key *key = vctx;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
    const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion"));
    if (name && rv) {
        key->overflow |= kp_buf_printf(&key->buf, "%s\n%s\n", name, rv) < 0;
        return;
    }
    char *text = cJSON_PrintUnformatted(obj);
    key->overflow |= !text || kp_buf_printf(&key->buf, "%s\n", text) < 0;
    free(text);
}

struct kp_pod_checker {
    kp_pod_warning_source src;
    pool_key key;      /* the NodePools the snapshot was built from */
    kp_arena *arena;   /* their decoded objects */
    kp_snapshot *snap; /* their templates and the catalog; NULL: none yet */
    size_t n_pools;
    bool misses;       /* a NodePool matches no instance type of the catalog */
    unsigned uses;
};

typedef struct pools {
    kp_arena *arena;
    pool_key *key;
    const kp_nodepool **items;
    size_t n, cap;
} pools;

/* A NodePool as "ever" sees it: readiness and static replicas aside. */
static void visit_pool(void *vctx, const cJSON *obj)
{
    pools *p = vctx;
    key_visit(p->key, obj);
    kp_nodepool *np = kp_arena_calloc(p->arena, 1, sizeof(*np));
    if (kp_decode_nodepool(p->arena, obj, np) < 0 || np->meta.deletion_timestamp.set)
        return; /* one the controller could not read either; or going away */
    memset(&np->conditions, 0, sizeof(np->conditions));
    np->has_replicas = false;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        const kp_nodepool **items = KP_ARENA_NEW(p->arena, const kp_nodepool *, cap);
        if (p->n)
            memcpy(items, p->items, p->n * sizeof(*items));
        p->items = items, p->cap = cap;
    }
    p->items[p->n++] = np;
}

/* A NodePool that matches no instance type of the catalog: the catalog may
 * not be its provider's, so nothing can be concluded about it. */
static bool catalog_misses_a_pool(const kp_snapshot *snap)
{
    for (uint32_t t = 0; t < snap->n_templates; t++)
        if (snap->templates[t].n_its == 0)
            return true;
    return false;
}

static void drop_snapshot(kp_pod_checker *c)
{
    c->snap = kp_snapshot_free(c->snap);
    c->arena = kp_arena_free(c->arena);
    kp_buf_reset(&c->key.buf);
    c->key.overflow = false;
    c->n_pools = 0;
}

/* The NodePools (read again, with the key) and the catalog, compiled. */
static int rebuild(kp_pod_checker *c)
{
    drop_snapshot(c);
    c->arena = kp_arena_new();
    pools p = {c->arena, &c->key, NULL, 0, 0};
    c->src.foreach(c->src.ctx, visit_pool, &p);
    c->n_pools = p.n;
    c->uses = 0;
    kp_cluster cl;
    memset(&cl, 0, sizeof(cl));
    cl.nodepools = p.items, cl.n_nodepools = p.n;
    cl.catalog = c->src.catalog;
    int err = kp_snapshot_build(&cl, &c->snap);
    if (err < 0) {
        drop_snapshot(c);
        return err;
    }
    c->misses = catalog_misses_a_pool(c->snap);
    return 0;
}

/* The snapshot for the NodePools as they are now. */
static int current(kp_pod_checker *c)
{
    pool_key key = {KP_BUF_INIT(KEY_MAX), false};
    c->src.foreach(c->src.ctx, key_visit, &key);
    bool same = c->snap && c->uses < REUSE_MAX && !key.overflow && !c->key.overflow &&
                key.buf.len == c->key.buf.len &&
                (key.buf.len == 0 || memcmp(key.buf.data, c->key.buf.data, key.buf.len) == 0);
    kp_buf_free(&key.buf);
    return same ? 0 : rebuild(c);
}

/* The pod without what depends on other pods and objects. */
static int decode_pod(const cJSON *obj, const char *ns, kp_arena *arena, kp_pod *pod)
{
    int err = kp_decode_pod(arena, obj, pod);
    if (err < 0)
        return err;
    if (!*pod->meta.namespace)
        pod->meta.namespace = ns ? ns : "default";
    memset(&pod->affinity.pod, 0, sizeof(pod->affinity.pod));
    memset(&pod->affinity.pod_anti, 0, sizeof(pod->affinity.pod_anti));
    pod->topology_spread = NULL, pod->n_topology_spread = 0;
    pod->volumes = NULL, pod->n_volumes = 0;
    pod->host_ports = NULL, pod->n_host_ports = 0;
    return 0;
}

static bool never_checked(const kp_pod *pod)
{
    return *pod->node_name || pod->owned_by_daemonset || pod->owned_by_node || pod->is_mirror;
}

/* "...: <reason>", cut to KP_POD_WARNING_MAX bytes on a character boundary. */
static const char *warning_text(kp_arena *arena, const char *reason)
{
    char *w = kp_arena_printf(arena, "no NodePool can launch a node for this pod: %s", reason);
    size_t n = strlen(w);
    if (n <= KP_POD_WARNING_MAX)
        return w;
    n = KP_POD_WARNING_MAX - 3;
    while (n > 0 && ((unsigned char)w[n] & 0xC0) == 0x80)
        n--;
    memcpy(w + n, "...", 4);
    return w;
}

/* The pod added to the snapshot, solved alone, and taken away again. */
static int solve_one(kp_pod_checker *c, const kp_pod *pod, kp_arena *arena, enum kp_pod_verdict *verdict,
                     const char **warning)
{
    kp_cluster cl;
    memset(&cl, 0, sizeof(cl));
    cl.pods = &pod, cl.n_pods = 1;
    uint32_t at = c->snap->n_pods;
    kp_plan *plan = NULL;
    int err = kp_snapshot_build_pods(c->snap, &cl);
    kp_solve_opts so = KP_SOLVE_OPTS_INIT;
    so.ignore_preferences = true, so.min_values_best_effort = true, so.improve = false, so.skip_lower_bound = true;
    if (!err)
        err = kp_solve(c->snap, &so, &at, 1, &plan);
    if (!err && plan->n_errors) {
        *verdict = KP_POD_NEVER;
        *warning = warning_text(arena, plan->errors[0].reason);
    } else if (!err) {
        *verdict = KP_POD_FITS;
    }
    kp_plan_free(plan);
    c->snap->n_pods = at;
    c->uses++;
    if (err < 0)
        drop_snapshot(c); /* whatever it holds now is not trusted */
    return err;
}

kp_pod_checker *kp_pod_checker_new(const kp_pod_warning_source *src)
{
    kp_pod_checker *c = kp_xcalloc(1, sizeof(*c));
    c->src = *src;
    kp_buf_init(&c->key.buf, KEY_MAX);
    return c;
}

kp_pod_checker *kp_pod_checker_free(kp_pod_checker *c)
{
    if (!c)
        return NULL;
    drop_snapshot(c);
    kp_buf_free(&c->key.buf);
    free(c);
    return NULL;
}

int kp_pod_checker_check(kp_pod_checker *c, const cJSON *obj, const char *ns, kp_arena *arena,
                         enum kp_pod_verdict *verdict, const char **warning)
{
    *verdict = KP_POD_SKIPPED;
    *warning = NULL;
    if (!c->src.catalog || (c->src.ready && !c->src.ready(c->src.ctx)))
        return 0;
    kp_pod *pod = kp_arena_calloc(arena, 1, sizeof(*pod));
    int err = decode_pod(obj, ns, arena, pod);
    if (err < 0 || never_checked(pod))
        return err;
    if ((err = current(c)) < 0)
        return err;
    if (!c->n_pools || c->misses)
        return 0;
    return solve_one(c, pod, arena, verdict, warning);
}

int kp_pod_warning_check(const kp_pod_warning_source *src, const cJSON *pod, const char *ns, kp_arena *arena,
                         enum kp_pod_verdict *verdict, const char **warning)
{
    kp_pod_checker *c = kp_pod_checker_new(src);
    int err = kp_pod_checker_check(c, pod, ns, arena, verdict, warning);
    kp_pod_checker_free(c);
    return err;
}

/* ------------------------------------------------------------- the warner */

enum { R_WARNED, R_FITS, R_SKIPPED, R_LATE, R_BUSY, R_ERROR, R_COUNT };
static const char *const result_names[R_COUNT] = {"warned", "fits", "skipped", "late", "busy", "error"};

typedef struct job {
    struct job *next;
    cJSON *pod;
    char *ns;
    char *warning; /* malloc'd answer */
    int result;
    bool done, abandoned;
} job;

struct kp_pod_warner {
    kp_pod_warner_opts o;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    job *head, *tail;
    unsigned queued;
    bool stop;
    pthread_t *threads;
    unsigned n_threads;
    kp_metric_series *results[R_COUNT];
};

static void job_free(job *j)
{
    cJSON_Delete(j->pod);
    free(j->ns);
    free(j->warning);
    free(j);
}

static void count(kp_pod_warner *w, int result)
{
    kp_counter_inc(w->results[result]);
}

static void run_job(kp_pod_checker *checker, job *j)
{
    kp_arena *arena = kp_arena_new();
    enum kp_pod_verdict v;
    const char *warning = NULL;
    int err = kp_pod_checker_check(checker, j->pod, j->ns, arena, &v, &warning);
    j->result = err < 0 ? R_ERROR : v == KP_POD_NEVER ? R_WARNED : v == KP_POD_FITS ? R_FITS : R_SKIPPED;
    j->warning = warning ? kp_xstrdup(warning) : NULL;
    kp_arena_free(arena);
}

/* Each worker keeps its own checker: its snapshot is compiled once for the
 * NodePools as they are, not once per pod. */
static void *worker(void *arg)
{
    kp_pod_warner *w = arg;
    kp_pod_checker *checker = kp_pod_checker_new(&w->o.source);
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && !w->head)
            pthread_cond_wait(&w->work, &w->mu);
        if (w->stop)
            break;
        job *j = w->head;
        w->head = j->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
        if (j->abandoned) { /* late before it started: not worth the work */
            job_free(j);
            continue;
        }
        pthread_mutex_unlock(&w->mu);
        run_job(checker, j);
        pthread_mutex_lock(&w->mu);
        if (j->abandoned) {
            job_free(j); /* counted late already */
        } else {
            count(w, j->result);
            j->done = true;
            pthread_cond_broadcast(&w->done);
        }
    }
    pthread_mutex_unlock(&w->mu);
    kp_pod_checker_free(checker);
    return NULL;
}

static void result_series(kp_pod_warner *w)
{
    for (int r = 0; r < R_COUNT && w->o.results; r++) {
        const char *v[1] = {result_names[r]};
        w->results[r] = kp_metric_with(w->o.results, v);
    }
}

int kp_pod_warner_new(const kp_pod_warner_opts *opts, kp_pod_warner **out)
{
    if (!opts->source.foreach || opts->workers == 0 || opts->queue == 0 || opts->budget_ms <= 0)
        return kp_error_set(KP_EINVALID, "pod warnings: a NodePool source, workers, a queue and a budget are needed");
    kp_pod_warner *w = kp_xcalloc(1, sizeof(*w));
    w->o = *opts;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->done, &attr);
    pthread_condattr_destroy(&attr);
    int err = 0;
    result_series(w);
    w->threads = kp_xcalloc(opts->workers, sizeof(pthread_t));
    for (unsigned i = 0; i < opts->workers && err == 0; i++, w->n_threads++)
        if (pthread_create(&w->threads[i], NULL, worker, w) != 0)
            err = kp_error_set(KP_ERROR, "pod warnings: cannot start a worker thread");
    if (err < 0) {
        kp_pod_warner_free(w);
        return err;
    }
    *out = w;
    return 0;
}

kp_pod_warner *kp_pod_warner_free(kp_pod_warner *w)
{
    if (!w)
        return NULL;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->work);
    pthread_mutex_unlock(&w->mu);
    for (unsigned i = 0; i < w->n_threads; i++)
        pthread_join(w->threads[i], NULL);
    while (w->head) {
        job *j = w->head;
        w->head = j->next;
        job_free(j); /* queued: nobody waits for it any more (the server stopped first) */
    }
    free(w->threads);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return NULL;
}

static struct timespec deadline_after(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = ts.tv_nsec + (ms % 1000) * 1000000;
    ts.tv_sec += (time_t)(ms / 1000 + ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    return ts;
}

/* Queue a copy of the pod; NULL when the queue is full. Under the lock. */
static job *enqueue(kp_pod_warner *w, const cJSON *pod, const char *ns)
{
    if (w->queued >= w->o.queue || w->stop)
        return NULL;
    job *j = kp_xcalloc(1, sizeof(*j));
    j->pod = cJSON_Duplicate(pod, 1);
    j->ns = ns ? kp_xstrdup(ns) : NULL;
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    w->queued++;
    pthread_cond_signal(&w->work);
    return j;
}

const char *kp_pod_warner_warn(kp_pod_warner *w, const cJSON *pod, const char *ns, kp_arena *arena)
{
    struct timespec until = deadline_after(w->o.budget_ms);
    const char *answer = NULL;
    pthread_mutex_lock(&w->mu);
    job *j = enqueue(w, pod, ns);
    if (!j) {
        count(w, R_BUSY);
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    while (!j->done && pthread_cond_timedwait(&w->done, &w->mu, &until) == 0)
        ;
    if (j->done) {
        answer = j->warning ? kp_arena_strdup(arena, j->warning) : NULL;
        job_free(j);
    } else {
        j->abandoned = true; /* the worker frees it */
        count(w, R_LATE);
    }
    pthread_mutex_unlock(&w->mu);
    return answer;
}
