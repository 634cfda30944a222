/*
 * Solver scenarios, topology spread part 2: hostname and capacity-type
 * spread. A hostname domain is a node, and a new NodeClaim is always an empty
 * one; capacity types are domains like zones (the synthetic catalog offers
 * spot in zones 1 and 2 only). Cases follow the Hostname and CapacityType
 * contexts of Karpenter's topology suite.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

/* ---- helpers, the same in every test_solver_spread_*.c (each file is its own
 * program and tests/unit/helpers/ stays generic) ---- */

/* Manifests: YAML documents appended one by one, in flow style. */
typedef struct yb {
    char *s;
    size_t len, cap;
} yb;

static inline void yb_add(yb *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void yb_add(yb *y, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    cr_assert_geq(n, 0);
    size_t need = y->len + (size_t)n + 8;
    if (need > y->cap) {
        y->cap = need * 2;
        y->s = realloc(y->s, y->cap);
    }
    if (y->len) {
        memcpy(y->s + y->len, "---\n", 4);
        y->len += 4;
    }
    va_start(ap, fmt);
    vsnprintf(y->s + y->len, y->cap - y->len, fmt, ap);
    va_end(ap);
    y->len += (size_t)n;
}

#define OR(x) ((x) ? (x) : "")
#define SEP(x) ((x) && *(x) ? ", " : ""), OR(x)

#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"
#define CT "karpenter.sh/capacity-type"
#define SEL "labelSelector: {matchLabels: {test: test}}"
/* A spread constraint on KEY selecting test=test; `more` adds fields. */
#define TSC(key, skew, when, more) "{topologyKey: " key ", maxSkew: " #skew ", whenUnsatisfiable: " when ", " SEL more "}"
#define HARD(key, skew) TSC(key, skew, "DoNotSchedule", "")
#define SOFT(key, skew) TSC(key, skew, "ScheduleAnyway", "")
#define SPREAD(...) "topologySpreadConstraints: [" __VA_ARGS__ "]"

/* A NodePool: `reqs` the inside of its requirements list, `labels` the inside
 * of the template's labels map, `tspec` more template spec fields, `spec` more spec fields. */
static inline void pool(yb *y, const char *name, const char *reqs, const char *labels, const char *tspec, const char *spec)
{
    yb_add(y,
           "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\n"
           "spec: {template: {metadata: {labels: {%s}}, spec: {nodeClassRef: {group: karpenter.k8s.aws, "
           "kind: EC2NodeClass, name: default}, requirements: [%s]%s%s}}%s%s}\n",
           name, OR(labels), OR(reqs), SEP(tspec), SEP(spec));
}

/* `n` pending pods PREFIX-0 .. in namespace `ns` (NULL: default) labelled
 * `labels` (inside of the map), requesting `requests`, with more spec fields `spec`. */
static inline void pods_ns(yb *y, const char *prefix, int n, const char *ns, const char *labels, const char *requests,
                    const char *spec)
{
    for (int i = 0; i < n; i++)
        yb_add(y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: %s, labels: {%s}}\n"
               "spec: {containers: [{name: c, resources: {requests: {%s}}}]%s%s}\n",
               prefix, i, ns ? ns : "default", OR(labels), OR(requests), SEP(spec));
}

static inline void pods(yb *y, const char *prefix, int n, const char *requests, const char *spec)
{
    pods_ns(y, prefix, n, NULL, "test: test", requests, spec);
}

/* A Node: `labels` the inside of its labels map, `spec` the inside of its spec, `alloc` its allocatable and capacity. */
static inline void node(yb *y, const char *name, const char *labels, const char *spec, const char *alloc)
{
    yb_add(y,
           "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s}}\nspec: {%s}\n"
           "status: {capacity: {%s}, allocatable: {%s}}\n",
           name, OR(labels), OR(spec), alloc, alloc);
}

/* `n` running pods PREFIX-0 .. bound to `node_name`, labelled test=test unless `labels` says otherwise. */
static inline void bound_ns(yb *y, const char *prefix, int n, const char *node_name, const char *ns, const char *labels,
                     const char *requests)
{
    for (int i = 0; i < n; i++)
        yb_add(y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: %s, labels: {%s}}\n"
               "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {%s}}}]}\n"
               "status: {phase: Running}\n",
               prefix, i, ns ? ns : "default", labels ? labels : "test: test", node_name, OR(requests));
}

static inline void bound(yb *y, const char *prefix, int n, const char *node_name)
{
    bound_ns(y, prefix, n, node_name, NULL, NULL, NULL);
}

static inline void run(kp_scenario *s, yb *y, const char *catalog, const kp_solve_opts *opts)
{
    int err = kp_scenario_run(s, y->s, catalog, opts);
    cr_assert_eq(err, 0, "%s", kp_error_last());
    free(y->s);
    memset(y, 0, sizeof(*y));
}

/* ---- reading the plan ---- */

static inline bool pod_selected(const kp_scenario *s, const kp_spod *p, const char *ns)
{
    size_t n = strlen(ns);
    if (strncmp(p->ns_name, ns, n) != 0 || p->ns_name[n] != '/')
        return false;
    kp_sym key = kp_sym_lookup(s->snap->symtab, "test");
    kp_sym value = kp_sym_lookup(s->snap->symtab, "test");
    return key && value && kp_symlabels_get(&p->labels, key) == value;
}

static inline const char *node_domain(const kp_scenario *s, uint32_t node, const char *key)
{
    const kp_snode *n = &s->snap->nodes[node];
    if (strcmp(key, HOST) == 0)
        return n->name;
    kp_sym k = kp_sym_lookup(s->snap->symtab, key);
    kp_sym v = k ? kp_symlabels_get(&n->labels, k) : KP_SYM_NONE;
    return v == KP_SYM_NONE ? NULL : kp_sym_str(s->snap->symtab, v);
}

/* Where claim `c` lands for `key`: its launch offering's zone and capacity
 * type, its own name for hostnames, else its single-valued requirement. */
static inline const char *claim_domain(kp_scenario *s, int c, const char *key)
{
    const kp_plan_claim *pc = &s->plan->claims[c];
    if (strcmp(key, ZONE) == 0)
        return kp_sym_str(s->snap->symtab, pc->zone);
    if (strcmp(key, CT) == 0)
        return kp_sym_str(s->snap->symtab, pc->capacity_type);
    if (strcmp(key, HOST) == 0)
        return kp_arena_printf(s->arena, "claim-%d", c);
    const char *r = kp_scenario_claim_req(s, c, key);
    if (!r || strncmp(r, "In [", 4) != 0 || strchr(r + 4, ' '))
        return NULL;
    return kp_arena_strndup(s->arena, r + 4, strlen(r + 4) - 1);
}

/* Where pod `i` runs or will run for `key`, or NULL. */
static inline const char *pod_domain(kp_scenario *s, uint32_t i, const char *key)
{
    const kp_spod *p = &s->snap->pods[i];
    if (p->node >= 0)
        return node_domain(s, (uint32_t)p->node, key);
    const char *name = p->ns_name;
    if (strncmp(name, "default/", 8) == 0)
        name += 8;
    int c = kp_scenario_claim_of(s, name);
    if (c >= 0)
        return claim_domain(s, c, key);
    const char *placed = kp_scenario_node_of(s, name);
    for (uint32_t n = 0; placed && n < s->snap->n_nodes; n++)
        if (strcmp(s->snap->nodes[n].name, placed) == 0)
            return node_domain(s, n, key);
    return NULL;
}

static inline int cmp_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

/* Karpenter's ExpectSkew: pods labelled test=test in namespace `ns` that run
 * (or are planned) on a node with a `key` domain, counted per domain; the
 * counts largest first, as "4,3,3" ("" when none). */
static inline const char *skew_ns(kp_scenario *s, const char *key, const char *ns)
{
    const char *names[256];
    int counts[256], n = 0;
    for (uint32_t i = 0; i < s->snap->n_pods; i++) {
        const kp_spod *p = &s->snap->pods[i];
        if (p->terminal || p->terminating || p->daemon || !pod_selected(s, p, ns))
            continue;
        const char *d = pod_domain(s, i, key);
        if (!d)
            continue;
        int j = 0;
        while (j < n && strcmp(names[j], d) != 0)
            j++;
        if (j == n) {
            cr_assert_lt(n, 256);
            names[n] = d;
            counts[n++] = 0;
        }
        counts[j]++;
    }
    qsort(counts, (size_t)n, sizeof(int), cmp_desc);
    char buf[2048];
    size_t len = 0;
    buf[0] = '\0';
    for (int j = 0; j < n; j++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", j ? "," : "", counts[j]);
    return kp_arena_strdup(s->arena, buf);
}

static inline const char *skew(kp_scenario *s, const char *key)
{
    return skew_ns(s, key, "default");
}

/* Every pending pod that was not placed names a topology spread on `key`. */
static inline void expect_errors(const kp_scenario *s, uint32_t n, const char *key)
{
    cr_expect_eq(s->plan->n_errors, n, "%u pods unschedulable, want %u", s->plan->n_errors, n);
    for (uint32_t i = 0; i < s->plan->n_errors; i++) {
        const char *why = s->plan->errors[i].reason;
        cr_expect(strstr(why, "topology spread") && strstr(why, key), "reason: %s", why);
    }
}

/* ---- end of helpers ---- */

#define CT_EXISTS "{key: " CT ", operator: Exists}"
#define CTS(v) "{key: " CT ", operator: In, values: [" v "]}"
#define SMALL "cpu: 100m, memory: 1Gi, pods: '110'"
#define BIG "cpu: '16', memory: 64Gi, pods: '110'"

static void default_pool(yb *y)
{
    pool(y, "default", CT_EXISTS, NULL, NULL, NULL);
}

/* One amd64 and one arm64 type, each offered in every zone as spot and on-demand. */
#define OFFERS(price)                                                                                          \
    "[{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":" price ",\"available\":true},"          \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"spot\",\"price\":" price ",\"available\":true},"           \
    "{\"zone\":\"test-zone-3\",\"capacityType\":\"spot\",\"price\":" price ",\"available\":true},"           \
    "{\"zone\":\"test-zone-1\",\"capacityType\":\"on-demand\",\"price\":" price ",\"available\":true},"      \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"on-demand\",\"price\":" price ",\"available\":true},"      \
    "{\"zone\":\"test-zone-3\",\"capacityType\":\"on-demand\",\"price\":" price ",\"available\":true}]"
#define ITYPE(name, arch, price)                                                                               \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},"                  \
    "\"labels\":{\"kubernetes.io/arch\":\"" arch "\"},\"operatingSystems\":[\"linux\"],\"offerings\":" OFFERS(price) "}"
#define TWO_ARCH "json:[" ITYPE("amd-4", "amd64", "0.2") "," ITYPE("arm-4", "arm64", "0.1") "]"

static uint32_t claims_from(const kp_scenario *s, const char *pool_name)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < s->plan->n_claims; c++)
        n += strcmp(kp_scenario_claim_pool(s, (int)c), pool_name) == 0;
    return n;
}

/* ---------- hostname ---------- */

Test(spread_hostname, max_skew_one_gives_each_pod_its_own_nodeclaim)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_claims, 4);
    cr_assert_str_eq(skew(&s, HOST), "1,1,1,1");
    for (int c = 0; c < 4; c++)
        cr_expect_eq(kp_scenario_claim_pods(&s, c), 1);
    kp_scenario_free(&s);
}

Test(spread_hostname, max_skew_four_packs_four_pods_together)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(HOST, 4)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_str_eq(skew(&s, HOST), "4");
    kp_scenario_free(&s);
}

Test(spread_hostname, max_skew_two_pairs_the_pods)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 5, NULL, SPREAD(HARD(HOST, 2)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_claims, 3);
    cr_assert_str_eq(skew(&s, HOST), "2,2,1");
    kp_scenario_free(&s);
}

Test(spread_hostname, deployment_replicas_land_on_separate_nodeclaims)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    yb_add(&y, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
               "spec: {replicas: 3, selector: {matchLabels: {test: test}}, template: {metadata: {labels: {test: test}}, "
               "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}], " SPREAD(HARD(HOST, 1)) "}}}\n");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_scheduled, 3);
    cr_assert_eq(s.plan->n_claims, 3);
    cr_assert_neq(kp_scenario_claim_of(&s, "web-0"), kp_scenario_claim_of(&s, "web-1"));
    cr_assert_neq(kp_scenario_claim_of(&s, "web-1"), kp_scenario_claim_of(&s, "web-2"));
    kp_scenario_free(&s);
}

/* Two spreads that each select their own app share NodeClaims: one pod of each app per node. */
#define APP_SPREAD(app) \
    SPREAD("{topologyKey: " HOST ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: " app "}}}")

Test(spread_hostname, two_deployments_share_the_minimum_of_nodes)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "one", 2, NULL, "app: app1", NULL, APP_SPREAD("app1"));
    pods_ns(&y, "two", 2, NULL, "app: app2", NULL, APP_SPREAD("app2"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_scheduled, 4);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_neq(kp_scenario_claim_of(&s, "one-0"), kp_scenario_claim_of(&s, "one-1"));
    cr_assert_neq(kp_scenario_claim_of(&s, "two-0"), kp_scenario_claim_of(&s, "two-1"));
    kp_scenario_free(&s);
}

Test(spread_hostname, two_deployments_of_different_arch_need_four_nodes)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "one", 2, NULL, "app: app1", NULL,
            APP_SPREAD("app1") ", nodeSelector: {kubernetes.io/arch: amd64}");
    pods_ns(&y, "two", 2, NULL, "app: app2", NULL,
            APP_SPREAD("app2") ", nodeSelector: {kubernetes.io/arch: arm64}");
    run(&s, &y, TWO_ARCH, NULL);
    cr_assert_eq(s.plan->n_scheduled, 4);
    cr_assert_eq(s.plan->n_claims, 4);
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "one-0")), "amd-4");
    cr_assert_str_eq(kp_scenario_claim_type(&s, kp_scenario_claim_of(&s, "two-1")), "arm-4");
    kp_scenario_free(&s);
}

Test(spread_hostname, existing_node_with_a_matching_pod_is_not_reused)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", NULL, NULL, BIG);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 2, "cpu: 100m", SPREAD(HARD(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* n1 already has one: a second there is a skew of 2 over an empty new node. */
    cr_assert_null(kp_scenario_node_of(&s, "p-0"));
    cr_assert_null(kp_scenario_node_of(&s, "p-1"));
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_str_eq(skew(&s, HOST), "1,1,1");
    kp_scenario_free(&s);
}

Test(spread_hostname, existing_node_without_matching_pods_takes_one)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", NULL, NULL, BIG);
    bound_ns(&y, "old", 3, "n1", NULL, "app: other", NULL);
    pods(&y, "p", 3, "cpu: 100m", SPREAD(HARD(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    int on_n1 = 0;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p-%d", i);
        on_n1 += kp_scenario_node_of(&s, name) != NULL;
    }
    cr_assert_eq(on_n1, 1);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_str_eq(skew(&s, HOST), "1,1,1");
    kp_scenario_free(&s);
}

Test(spread_hostname, selector_the_pods_do_not_match_packs_them)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "p", 5, NULL, NULL, NULL, SPREAD(HARD(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* The selector counts no pod, so adding these never raises the skew. */
    cr_assert_eq(s.plan->n_scheduled, 5);
    cr_assert_eq(s.plan->n_claims, 1);
    kp_scenario_free(&s);
}

Test(spread_hostname, schedule_anyway_is_kept_when_it_can_be)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(SOFT(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* A preference is honoured while it can be: one pod per node, as with DoNotSchedule. */
    cr_assert_eq(s.plan->n_claims, 4);
    kp_scenario_free(&s);
}

Test(spread_hostname, schedule_anyway_is_dropped_when_preferences_are_ignored)
{
    yb y = {0};
    kp_scenario s;
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.ignore_preferences = true;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(SOFT(HOST, 1)));
    run(&s, &y, "synthetic:10", &opts);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_eq(s.plan->n_scheduled, 4);
    kp_scenario_free(&s);
}

Test(spread_hostname, do_not_schedule_is_kept_when_preferences_are_ignored)
{
    yb y = {0};
    kp_scenario s;
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.ignore_preferences = true;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(HOST, 1)));
    run(&s, &y, "synthetic:10", &opts);
    cr_assert_eq(s.plan->n_claims, 4);
    kp_scenario_free(&s);
}

Test(spread_hostname, exhausted_nodepool_leaves_the_pod_off_the_loaded_node)
{
    yb y = {0};
    kp_scenario s;
    /* No room for new NodeClaims; n1 has room but already holds a matching pod. */
    pool(&y, "default", CT_EXISTS, NULL, NULL, "limits: {cpu: '0'}");
    node(&y, "n1", NULL, NULL, BIG);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 1, "cpu: 100m", SPREAD(HARD(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_null(kp_scenario_node_of(&s, "p-0"));
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p-0"));
    kp_scenario_free(&s);
}

/* ---------- capacity type ---------- */

Test(spread_capacity_type, balances_over_spot_and_on_demand)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, CT), "2,2");
    kp_scenario_free(&s);
}

Test(spread_capacity_type, nodepool_listing_both_capacity_types)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CTS("spot, on-demand"), NULL, NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, CT), "2,2");
    bool spot = false, od = false;
    for (uint32_t c = 0; c < s.plan->n_claims; c++) {
        spot |= strcmp(claim_domain(&s, (int)c, CT), "spot") == 0;
        od |= strcmp(claim_domain(&s, (int)c, CT), "on-demand") == 0;
    }
    cr_assert(spot && od);
    kp_scenario_free(&s);
}

Test(spread_capacity_type, do_not_schedule_stops_at_max_skew)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CTS("on-demand"), NULL, NULL, NULL);
    node(&y, "n1", CT ": spot", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 5, "cpu: 1100m", SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, CT), "2,1");
    expect_errors(&s, 3, CT);
    kp_scenario_free(&s);
}

Test(spread_capacity_type, schedule_anyway_passes_max_skew)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CTS("on-demand"), NULL, NULL, NULL);
    node(&y, "n1", CT ": spot", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 5, "cpu: 1100m", SPREAD(SOFT(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, CT), "5,1");
    kp_scenario_free(&s);
}

Test(spread_capacity_type, counts_only_running_matching_pods_on_labelled_nodes)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", CT ": spot", NULL, SMALL);
    node(&y, "n2", CT ": on-demand", NULL, SMALL);
    node(&y, "n3", NULL, NULL, SMALL);
    bound_ns(&y, "unlabelled", 1, "n1", NULL, "app: other", NULL);
    bound(&y, "unknown", 1, "n3");
    bound_ns(&y, "elsewhere", 1, "n1", "other", NULL, NULL);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: failed, labels: {test: test}}\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Failed}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: done, labels: {test: test}}\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Succeeded}\n");
    bound(&y, "spot", 2, "n1");
    bound(&y, "od", 1, "n2");
    pods(&y, "p", 2, "cpu: '1'", SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* spot 2, on-demand 1: the first new pod evens them, the second goes either way. */
    cr_assert_str_eq(skew(&s, CT), "3,2");
    int c0 = kp_scenario_claim_of(&s, "p-0"), c1 = kp_scenario_claim_of(&s, "p-1");
    cr_assert(c0 >= 0 && c1 >= 0);
    cr_assert(strcmp(claim_domain(&s, c0, CT), "on-demand") == 0 || strcmp(claim_domain(&s, c1, CT), "on-demand") == 0);
    kp_scenario_free(&s);
}

Test(spread_capacity_type, selector_the_pods_do_not_match_packs_them)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "p", 5, NULL, "app: other", NULL, SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_eq(s.plan->n_scheduled, 5);
    kp_scenario_free(&s);
}

Test(spread_capacity_type, required_affinity_excludes_the_other_node_from_counting)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1, " CT ": on-demand", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 5, NULL,
         SPREAD(HARD(CT, 1)) ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                             "{nodeSelectorTerms: [{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}, "
                             "{key: " CT ", operator: In, values: [spot]}]}]}}}");
    run(&s, &y, "synthetic:10", NULL);
    /* The pods can only be spot, so on-demand is no domain of theirs: all five go to spot. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, CT), "5,1");
    kp_scenario_free(&s);
}

Test(spread_capacity_type, unconstrained_pods_see_the_existing_on_demand_node)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CTS("spot"), NULL, NULL, NULL);
    node(&y, "n1", CT ": on-demand", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 5, "cpu: '2'", SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, CT), "2,1");
    expect_errors(&s, 3, CT);
    kp_scenario_free(&s);
}

Test(spread_capacity_type, arch_spread_sees_the_existing_amd64_node)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: kubernetes.io/arch, operator: In, values: [arm64]}", NULL, NULL, NULL);
    node(&y, "n1", "kubernetes.io/arch: amd64", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 5, "cpu: '2'", SPREAD(HARD("kubernetes.io/arch", 1)));
    run(&s, &y, TWO_ARCH, NULL);
    cr_assert_str_eq(skew(&s, "kubernetes.io/arch"), "2,1");
    expect_errors(&s, 3, "kubernetes.io/arch");
    kp_scenario_free(&s);
}

Test(spread_capacity_type, spot_only_nodepool_with_on_demand_known_from_a_node)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "spot", CTS("spot"), NULL, NULL, NULL);
    node(&y, "n1", CT ": on-demand", NULL, SMALL);
    pods(&y, "p", 3, "cpu: '1'", SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* on-demand exists (empty, from the node) and cannot grow: spot takes one. */
    cr_assert_str_eq(skew(&s, CT), "1");
    expect_errors(&s, 2, CT);
    cr_assert_eq(claims_from(&s, "spot"), 1);
    kp_scenario_free(&s);
}
