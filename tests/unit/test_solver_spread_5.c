/*
 * Solver scenarios, topology spread part 5: finer points — which existing
 * pods count under the node inclusion policies, selectors that do not pick
 * the pods they constrain, the order in which soft constraints give way, the
 * lowest-count choice under a large maxSkew, and minDomains against the zones
 * a pod may use. Cases follow Karpenter's topology and preference code.
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
#define ZONES(v) "{key: " ZONE ", operator: In, values: [" v "]}"
#define SMALL "cpu: 100m, memory: 1Gi, pods: '110'"
#define CPU1 "cpu: '1'"
#define TAINT "{key: dedicated, value: batch, effect: NoSchedule}"
#define TOLERATE "tolerations: [{key: dedicated, operator: Equal, value: batch, effect: NoSchedule}]"
#define REQUIRED_TERMS(terms) \
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" terms "]}}}"
#define TERM(expr) "{matchExpressions: [" expr "]}"
#define PREFERRED(expr) \
    "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [" expr "]}}]}}"

static void default_pool(yb *y)
{
    pool(y, "default", CT_EXISTS, NULL, NULL, NULL);
}

static int claim_count_in(kp_scenario *s, const char *key, const char *domain)
{
    int n = 0;
    for (uint32_t c = 0; c < s->plan->n_claims; c++)
        n += strcmp(claim_domain(s, (int)c, key), domain) == 0 ? (int)kp_scenario_claim_pods(s, (int)c) : 0;
    return n;
}

/* ---------- existing pods under nodeTaintsPolicy ---------- */

/* Zone 1 has a tainted node with three matching pods. */
static void tainted_zone_one(yb *y)
{
    default_pool(y);
    node(y, "t1", ZONE ": test-zone-1", "taints: [" TAINT "]", SMALL);
    bound(y, "old", 3, "t1");
}

Test(spread_policies, taints_ignore_counts_pods_on_tainted_nodes)
{
    yb y = {0};
    kp_scenario s;
    tainted_zone_one(&y);
    pods(&y, "p", 4, CPU1, SPREAD(TSC(ZONE, 1, "DoNotSchedule", ", nodeTaintsPolicy: Ignore")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,2,2");
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 0);
    kp_scenario_free(&s);
}

Test(spread_policies, taints_honor_skips_pods_on_untolerated_nodes)
{
    yb y = {0};
    kp_scenario s;
    tainted_zone_one(&y);
    pods(&y, "p", 3, CPU1, SPREAD(TSC(ZONE, 1, "DoNotSchedule", ", nodeTaintsPolicy: Honor")));
    run(&s, &y, "synthetic:10", NULL);
    /* The tainted node does not count: zone 1 is as empty as the others. */
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 1);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-2"), 1);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-3"), 1);
    kp_scenario_free(&s);
}

Test(spread_policies, taints_honor_counts_nodes_the_pod_tolerates)
{
    yb y = {0};
    kp_scenario s;
    tainted_zone_one(&y);
    pods(&y, "p", 4, CPU1, SPREAD(TSC(ZONE, 1, "DoNotSchedule", ", nodeTaintsPolicy: Honor")) ", " TOLERATE);
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,2,2");
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 0);
    kp_scenario_free(&s);
}

Test(spread_policies, taints_honor_with_a_tolerated_nodepool_taint_by_exists)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "plain", CT_EXISTS ", {key: rack, operator: In, values: [r1]}", NULL, NULL, NULL);
    pool(&y, "tainted", CT_EXISTS ", {key: rack, operator: In, values: [r2]}", NULL, "taints: [" TAINT "]", NULL);
    pods(&y, "p", 4, NULL,
         SPREAD(TSC("rack", 1, "DoNotSchedule", ", nodeTaintsPolicy: Honor")) ", tolerations: [{key: dedicated, operator: Exists}]");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, "rack"), "2,2");
    kp_scenario_free(&s);
}

/* ---------- existing pods under nodeAffinityPolicy ---------- */

/* Zone 1 has a node outside the pods' nodeSelector (tier: web), holding three matching pods. */
static void other_tier_zone_one(yb *y)
{
    pool(y, "default", CT_EXISTS, "tier: web", NULL, NULL);
    node(y, "n1", ZONE ": test-zone-1, tier: db", NULL, SMALL);
    bound(y, "old", 3, "n1");
}

Test(spread_policies, affinity_honor_skips_pods_on_nodes_the_pod_cannot_use)
{
    yb y = {0};
    kp_scenario s;
    other_tier_zone_one(&y);
    pods(&y, "p", 3, CPU1, SPREAD(HARD(ZONE, 1)) ", nodeSelector: {tier: web}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 1);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-2"), 1);
    kp_scenario_free(&s);
}

Test(spread_policies, affinity_ignore_counts_them)
{
    yb y = {0};
    kp_scenario s;
    other_tier_zone_one(&y);
    pods(&y, "p", 4, CPU1, SPREAD(TSC(ZONE, 1, "DoNotSchedule", ", nodeAffinityPolicy: Ignore")) ", nodeSelector: {tier: web}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,2,2");
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 0);
    kp_scenario_free(&s);
}

Test(spread_policies, affinity_honor_without_node_constraints_counts_every_node)
{
    yb y = {0};
    kp_scenario s;
    other_tier_zone_one(&y);
    pods(&y, "p", 4, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,2,2");
    kp_scenario_free(&s);
}

/* ---------- selectors that do not pick the pods they constrain ---------- */

Test(spread_selectors, pods_outside_the_selector_keep_off_a_loaded_zone)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 2, "n1");
    pods_ns(&y, "p", 6, NULL, "app: other", CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* The new pods add nothing to the counts: zone 1 stays two above the
     * minimum, so none of them may go there, and the rest is unconstrained. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 0);
    kp_scenario_free(&s);
}

Test(spread_selectors, exists_expression_counts_every_value)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound_ns(&y, "x", 1, "n1", NULL, "test: something", NULL);
    bound_ns(&y, "y", 1, "n1", NULL, "test: other", NULL);
    pods(&y, "p", 2, CPU1,
         SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule, "
                "labelSelector: {matchExpressions: [{key: test, operator: Exists}]}}"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 0);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-2"), 1);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-3"), 1);
    kp_scenario_free(&s);
}

Test(spread_selectors, not_in_expression_leaves_out_those_values)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound_ns(&y, "canary", 3, "n1", NULL, "test: test, track: canary", NULL);
    pods(&y, "p", 3, CPU1,
         SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule, "
                "labelSelector: {matchLabels: {test: test}, matchExpressions: [{key: track, operator: NotIn, values: [canary]}]}}"));
    run(&s, &y, "synthetic:10", NULL);
    /* The canaries do not count: one new pod per zone. */
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 1);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-2"), 1);
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-3"), 1);
    kp_scenario_free(&s);
}

/* ---------- choosing among allowed domains ---------- */

Test(spread_choice, planned_nodeclaim_is_filled_up_to_max_skew)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 5, NULL, SPREAD(HARD(ZONE, 3)));
    run(&s, &y, "synthetic:10", NULL);
    /* As in Karpenter, a NodeClaim already planned is tried before a new one:
     * the first takes pods until its zone is maxSkew above the empty ones, the
     * second (in the emptiest zone) takes the rest. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_str_eq(skew(&s, ZONE), "3,2");
    kp_scenario_free(&s);
}

Test(spread_choice, two_constraints_on_one_key_both_hold)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 2, "n1");
    pods(&y, "p", 4, CPU1, SPREAD(HARD(ZONE, 3) ", " HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* maxSkew 1 is the tighter: zone 1 gets nothing until the others reach 1. */
    cr_assert_str_eq(skew(&s, ZONE), "2,2,2");
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 0);
    kp_scenario_free(&s);
}

Test(spread_choice, deployment_with_zone_and_hostname_spreads)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    yb_add(&y, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
               "spec: {replicas: 6, selector: {matchLabels: {test: test}}, template: {metadata: {labels: {test: test}}, "
               "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}], " SPREAD(HARD(ZONE, 1) ", " HARD(HOST, 1)) "}}}\n");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_scheduled, 6);
    cr_assert_eq(s.plan->n_claims, 6);
    cr_assert_str_eq(skew(&s, ZONE), "2,2,2");
    kp_scenario_free(&s);
}

/* ---------- soft constraints giving way ---------- */

Test(spread_relax, preferred_node_affinity_gives_way_before_a_soft_spread)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 3, NULL, SPREAD(SOFT(ZONE, 1)) ", " PREFERRED(ZONES("test-zone-1")));
    run(&s, &y, "synthetic:10", NULL);
    /* Karpenter drops preferred node affinity first: the spread survives. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    kp_scenario_free(&s);
}

Test(spread_relax, soft_hostname_gives_way_to_a_node_limit_hard_zone_holds)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_EXISTS, NULL, NULL, "limits: {nodes: '3'}");
    pods(&y, "p", 6, NULL, SPREAD(HARD(ZONE, 1) ", " SOFT(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(s.plan->n_claims, 3);
    cr_assert_str_eq(skew(&s, ZONE), "2,2,2");
    kp_scenario_free(&s);
}

Test(spread_relax, soft_zone_gives_way_when_only_one_zone_has_room)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1"), NULL, NULL, NULL);
    node(&y, "n2", ZONE ": test-zone-2", NULL, SMALL);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    pods(&y, "p", 4, CPU1, SPREAD(SOFT(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "4");
    kp_scenario_free(&s);
}

Test(spread_relax, first_required_term_is_tried_first)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)) ", " REQUIRED_TERMS(TERM(ZONES("test-zone-1")) ", " TERM(ZONES("test-zone-2"))));
    run(&s, &y, "synthetic:10", NULL);
    /* The first term allows zone 1 only; measured over that one domain the
     * skew never grows, so no term needs dropping. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "4");
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 4);
    kp_scenario_free(&s);
}

/* ---------- minDomains and the pod's own zones ---------- */

typedef struct min_row {
    int min_domains, pods;
    const char *want;
    uint32_t unschedulable;
} min_row;

Test(spread_min_domains, counts_only_the_zones_the_pod_may_use)
{
    static const min_row rows[] = {{1, 4, "2,2", 0}, {2, 4, "2,2", 0}, {3, 4, "1,1", 2}, {3, 2, "1,1", 0}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const min_row *r = &rows[i];
        char spread[512];
        yb y = {0};
        kp_scenario s;
        snprintf(spread, sizeof(spread),
                 SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule, minDomains: %d, " SEL "}")
                     ", nodeSelector: {}, " REQUIRED_TERMS(TERM(ZONES("test-zone-1, test-zone-2"))),
                 r->min_domains);
        default_pool(&y);
        pods(&y, "p", r->pods, NULL, spread);
        run(&s, &y, "synthetic:10", NULL);
        cr_expect_str_eq(skew(&s, ZONE), r->want, "row %zu", i);
        expect_errors(&s, r->unschedulable, ZONE);
        kp_scenario_free(&s);
    }
}

Test(spread_min_domains, existing_pods_fill_the_domains_below_the_minimum)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), NULL, NULL, NULL);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 3, CPU1, SPREAD(TSC(ZONE, 1, "DoNotSchedule", ", minDomains: 3")));
    run(&s, &y, "synthetic:10", NULL);
    /* Two domains < 3: the minimum is taken as 0, so zone 1 (one pod) is full
     * and zone 2 takes one. */
    cr_assert_str_eq(skew(&s, ZONE), "1,1");
    expect_errors(&s, 2, ZONE);
    kp_scenario_free(&s);
}

/* ---------- where existing pods run ---------- */

Test(spread_existing, pod_bound_to_a_missing_node_is_not_counted)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    bound(&y, "ghost", 3, "gone");
    pods(&y, "p", 3, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    kp_scenario_free(&s);
}

Test(spread_existing, pod_placed_on_an_existing_node_counts_for_the_next)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, "cpu: '8', memory: 16Gi, pods: '110'");
    pods(&y, "p", 3, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* n1 has room for all three, but after one the zone is full for maxSkew 1. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(s.plan->n_nodes, 1);
    cr_assert_eq(s.plan->nodes[0].n_pods, 1);
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    kp_scenario_free(&s);
}

/* Three db pods planned into zone 1 on a "tier: db" NodePool (scheduled first:
 * they are larger); then web pods spread with the given policy. */
static void db_then_web(yb *y, const char *policy)
{
    char spread[512];
    pool(y, "web", CT_EXISTS, "tier: web", NULL, NULL);
    pool(y, "db", CT_EXISTS, "tier: db", NULL, NULL);
    pods(y, "db", 3, "cpu: '2'", "nodeSelector: {tier: db, " ZONE ": test-zone-1}");
    snprintf(spread, sizeof(spread),
             SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule, nodeAffinityPolicy: %s, " SEL "}")
                 ", nodeSelector: {tier: web}",
             policy);
    pods(y, "web", 3, CPU1, spread);
}

static int web_pods_in(kp_scenario *s, const char *zone)
{
    int n = 0;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "web-%d", i);
        int c = kp_scenario_claim_of(s, name);
        cr_assert_geq(c, 0);
        n += strcmp(claim_domain(s, c, ZONE), zone) == 0;
    }
    return n;
}

Test(spread_policies, affinity_honor_skips_pods_planned_on_other_nodeclaims)
{
    yb y = {0};
    kp_scenario s;
    db_then_web(&y, "Honor");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(web_pods_in(&s, "test-zone-1"), 1);
    cr_assert_eq(web_pods_in(&s, "test-zone-2"), 1);
    kp_scenario_free(&s);
}

Test(spread_policies, affinity_ignore_counts_pods_planned_on_other_nodeclaims)
{
    yb y = {0};
    kp_scenario s;
    db_then_web(&y, "Ignore");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_eq(web_pods_in(&s, "test-zone-1"), 0);
    cr_assert_str_eq(skew(&s, ZONE), "3,2,1");
    kp_scenario_free(&s);
}

Test(spread_policies, taints_honor_needs_even_prefer_no_schedule_tolerated)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "t1", ZONE ": test-zone-1", "taints: [{key: soft, value: x, effect: PreferNoSchedule}]", SMALL);
    bound(&y, "old", 3, "t1");
    pods(&y, "p", 3, CPU1, SPREAD(TSC(ZONE, 1, "DoNotSchedule", ", nodeTaintsPolicy: Honor")));
    run(&s, &y, "synthetic:10", NULL);
    /* Karpenter requires every taint tolerated, PreferNoSchedule too: t1 does not count. */
    cr_assert_eq(claim_count_in(&s, ZONE, "test-zone-1"), 1);
    kp_scenario_free(&s);
}
