/*
 * Solver scenarios, topology spread part 3: several constraints at once
 * (zone, hostname, capacity type, a NodePool's own label), matchLabelKeys,
 * and the node inclusion policies (nodeTaintsPolicy, nodeAffinityPolicy)
 * that decide which nodes and NodePools count as domains. Cases follow
 * Karpenter's topology suite.
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
#define ZONES(v) "{key: " ZONE ", operator: In, values: [" v "]}"
#define SMALL "cpu: 100m, memory: 1Gi, pods: '110'"
#define CPU1 "cpu: '1'"
#define LBL "fake-label"

static void default_pool(yb *y)
{
    pool(y, "default", CT_EXISTS, NULL, NULL, NULL);
}

/* Instance types offered as spot and on-demand in all three zones. */
#define OFFER(zone, ct, price) "{\"zone\":\"" zone "\",\"capacityType\":\"" ct "\",\"price\":" price ",\"available\":true}"
#define OFFERS_ALL(p)                                                                                          \
    "[" OFFER("test-zone-1", "spot", p) "," OFFER("test-zone-2", "spot", p) "," OFFER("test-zone-3", "spot", p) "," \
    OFFER("test-zone-1", "on-demand", p) "," OFFER("test-zone-2", "on-demand", p) "," OFFER("test-zone-3", "on-demand", p) "]"
#define ITYPE(name, cpu, price)                                                                                \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"" cpu "\",\"memory\":\"16Gi\",\"pods\":\"110\"},"           \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"operatingSystems\":[\"linux\"],\"offerings\":" OFFERS_ALL(price) "}"
#define ALL_PAIRS "json:[" ITYPE("c-1", "1", "0.1") "," ITYPE("c-2", "2", "0.2") "," ITYPE("c-4", "4", "0.4") "]"

/* Largest minus smallest pod count over `domains` domains (missing ones hold 0). */
static int spread_of(kp_scenario *s, const char *key, int domains)
{
    const char *text = skew(s, key);
    int max = 0, min = 0, n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        cr_assert_neq(end, p);
        if (n == 0)
            max = (int)v;
        min = (int)v;
        n++;
        p = *end == ',' ? end + 1 : end;
    }
    return n < domains ? max : max - min;
}

/* The largest count of a domain. */
static int most_of(kp_scenario *s, const char *key)
{
    return (int)strtol(skew(s, key), NULL, 10);
}

/* ---------- combined constraints ---------- */

typedef struct combined_row {
    int pods;
    const char *want;
} combined_row;

Test(spread_combined, zone_max_skew_one_with_hostname_max_skew_three)
{
    static const combined_row rows[] = {{2, "1,1"}, {5, "2,2,1"}, {10, "4,3,3"}, {21, "7,7,7"}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        yb y = {0};
        kp_scenario s;
        default_pool(&y);
        pods(&y, "p", rows[i].pods, NULL, SPREAD(HARD(ZONE, 1) ", " HARD(HOST, 3)));
        run(&s, &y, "synthetic:10", NULL);
        cr_expect_str_eq(skew(&s, ZONE), rows[i].want, "%d pods", rows[i].pods);
        cr_expect_eq(s.plan->n_errors, 0);
        cr_expect_leq(most_of(&s, HOST), 3, "%d pods: hostname counts %s", rows[i].pods, skew(&s, HOST));
        kp_scenario_free(&s);
    }
}

Test(spread_combined, capacity_type_max_skew_one_with_hostname_max_skew_three)
{
    static const combined_row rows[] = {{2, "1,1"}, {5, "3,2"}, {10, "5,5"}, {21, "11,10"}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        yb y = {0};
        kp_scenario s;
        default_pool(&y);
        pods(&y, "p", rows[i].pods, NULL, SPREAD(HARD(CT, 1) ", " HARD(HOST, 3)));
        run(&s, &y, "synthetic:10", NULL);
        cr_expect_str_eq(skew(&s, CT), rows[i].want, "%d pods", rows[i].pods);
        cr_expect_eq(s.plan->n_errors, 0);
        cr_expect_leq(most_of(&s, HOST), 3, "%d pods: hostname counts %s", rows[i].pods, skew(&s, HOST));
        kp_scenario_free(&s);
    }
}

/* Spot is not offered in zone 3, and each constraint picks its domain on its
 * own: a pod can be told "zone 3" and "spot" at once and stay pending, as in
 * Karpenter. Only the limits hold for every count (Karpenter's bounds). */
typedef struct pair_row {
    int pods, most_ct, most_zone;
} pair_row;

Test(spread_combined, zone_and_capacity_type_limits_hold)
{
    static const pair_row rows[] = {{2, 1, 1}, {5, 3, 2}, {8, 5, 4}, {19, 11, 7}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const pair_row *r = &rows[i];
        yb y = {0};
        kp_scenario s;
        default_pool(&y);
        pods(&y, "p", r->pods, NULL, SPREAD(HARD(CT, 1) ", " HARD(ZONE, 1)));
        run(&s, &y, "synthetic:10", NULL);
        cr_expect_geq(s.plan->n_scheduled, 2, "%d pods", r->pods);
        cr_expect_leq(spread_of(&s, CT, 2), 1, "%d pods: %s", r->pods, skew(&s, CT));
        cr_expect_leq(spread_of(&s, ZONE, 3), 1, "%d pods: %s", r->pods, skew(&s, ZONE));
        cr_expect_leq(most_of(&s, CT), r->most_ct, "%d pods: %s", r->pods, skew(&s, CT));
        cr_expect_leq(most_of(&s, ZONE), r->most_zone, "%d pods: %s", r->pods, skew(&s, ZONE));
        kp_scenario_free(&s);
    }
}

Test(spread_combined, zone_and_capacity_type_with_every_pair_offered)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 19, NULL, SPREAD(HARD(CT, 1) ", " HARD(ZONE, 1)));
    run(&s, &y, ALL_PAIRS, NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, CT), "10,9");
    cr_assert_str_eq(skew(&s, ZONE), "7,6,6");
    kp_scenario_free(&s);
}

Test(spread_combined, hostname_zone_and_capacity_type_for_one_to_fourteen_pods)
{
    for (int n = 1; n < 15; n++) {
        yb y = {0};
        kp_scenario s;
        default_pool(&y);
        pods(&y, "p", n, NULL, SPREAD(HARD(CT, 1) ", " HARD(ZONE, 2) ", " HARD(HOST, 3)));
        run(&s, &y, ALL_PAIRS, NULL);
        cr_expect_eq(s.plan->n_errors, 0, "%d pods", n);
        cr_expect_leq(spread_of(&s, CT, 2), 1, "%d pods: %s", n, skew(&s, CT));
        cr_expect_leq(spread_of(&s, ZONE, 3), 2, "%d pods: %s", n, skew(&s, ZONE));
        cr_expect_leq(spread_of(&s, HOST, 0), 3, "%d pods: %s", n, skew(&s, HOST));
        kp_scenario_free(&s);
    }
}

Test(spread_combined, zone_spread_keeps_out_of_a_zone_only_a_disabled_nodepool_offers)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), NULL, NULL, NULL);
    pool(&y, "disabled", ZONES("test-zone-3"), NULL, NULL, "limits: {cpu: '0'}");
    pods(&y, "p", 10, NULL, SPREAD(HARD(ZONE, 1) ", " SOFT(HOST, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 3 is a domain (its NodePool names it) that can never grow: zones 1 and 2 take one each. */
    cr_assert_str_eq(skew(&s, ZONE), "1,1");
    cr_assert_str_eq(skew(&s, HOST), "1,1");
    expect_errors(&s, 8, ZONE);
    kp_scenario_free(&s);
}

/* ---------- a label the NodePools define ---------- */

#define SPREAD_KEY "capacity.spread.4-1"

Test(spread_custom_label, four_to_one_over_two_nodepools)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "spot", CTS("spot") ", {key: " SPREAD_KEY ", operator: In, values: ['2', '3', '4', '5']}", NULL, NULL, NULL);
    pool(&y, "on-demand", CTS("on-demand") ", {key: " SPREAD_KEY ", operator: In, values: ['1']}", NULL, NULL, NULL);
    pods(&y, "p", 20, NULL, SPREAD(HARD(SPREAD_KEY, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_scheduled, 20);
    cr_assert_str_eq(skew(&s, SPREAD_KEY), "4,4,4,4,4");
    /* Four of the five domains are spot's. */
    cr_assert_str_eq(skew(&s, CT), "16,4");
    kp_scenario_free(&s);
}

Test(spread_custom_label, claims_carry_the_chosen_value)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: rack, operator: In, values: [r1, r2, r3]}", NULL, NULL, NULL);
    pods(&y, "p", 6, NULL, SPREAD(HARD("rack", 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, "rack"), "2,2,2");
    cr_assert_eq(s.plan->n_claims, 3);
    for (int c = 0; c < 3; c++) {
        const char *r = kp_scenario_claim_req(&s, c, "rack");
        cr_assert_not_null(r);
        cr_expect(strcmp(r, "In [r1]") == 0 || strcmp(r, "In [r2]") == 0 || strcmp(r, "In [r3]") == 0, "%s", r);
    }
    kp_scenario_free(&s);
}

Test(spread_custom_label, template_labels_of_two_nodepools)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "a", NULL, "rack: r1", NULL, NULL);
    pool(&y, "b", NULL, "rack: r2", NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD("rack", 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, "rack"), "2,2");
    kp_scenario_free(&s);
}

Test(spread_custom_label, existing_nodes_add_domains_the_nodepool_cannot_launch)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, "rack: r1", NULL, NULL);
    node(&y, "n2", "rack: r2", NULL, SMALL);
    bound(&y, "old", 1, "n2");
    pods(&y, "p", 4, CPU1, SPREAD(HARD("rack", 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* r2 holds one and cannot grow: r1 may go to two. */
    cr_assert_str_eq(skew(&s, "rack"), "2,1");
    expect_errors(&s, 2, "rack");
    kp_scenario_free(&s);
}

/* ---------- matchLabelKeys ---------- */

#define MLK(key, labels) TSC(key, 1, "DoNotSchedule", ", matchLabelKeys: [" labels "]")

Test(spread_match_label_keys, each_value_spreads_on_its_own)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "a", 2, NULL, "test: test, test-label: value-a", NULL, SPREAD(MLK(HOST, "test-label")));
    pods_ns(&y, "b", 2, NULL, "test: test, test-label: value-b", NULL, SPREAD(MLK(HOST, "test-label")));
    run(&s, &y, "synthetic:10", NULL);
    /* Two nodes, one pod of each value on each; without matchLabelKeys it would be four nodes. */
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_str_eq(skew(&s, HOST), "2,2");
    cr_assert_neq(kp_scenario_claim_of(&s, "a-0"), kp_scenario_claim_of(&s, "a-1"));
    cr_assert_neq(kp_scenario_claim_of(&s, "b-0"), kp_scenario_claim_of(&s, "b-1"));
    kp_scenario_free(&s);
}

Test(spread_match_label_keys, key_the_pod_lacks_is_ignored)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(MLK(HOST, "test-label")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_claims, 4);
    cr_assert_str_eq(skew(&s, HOST), "1,1,1,1");
    kp_scenario_free(&s);
}

Test(spread_match_label_keys, pods_of_an_older_revision_do_not_count)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound_ns(&y, "old", 2, "n1", NULL, "test: test, pod-template-hash: old", NULL);
    pods_ns(&y, "new", 3, NULL, "test: test, pod-template-hash: new", CPU1, SPREAD(MLK(ZONE, "pod-template-hash")));
    run(&s, &y, "synthetic:10", NULL);
    /* The new revision spreads by itself: one per zone, zone 1 included. */
    cr_assert_str_eq(skew(&s, ZONE), "3,1,1");
    cr_assert_eq(s.plan->n_errors, 0);
    kp_scenario_free(&s);
}

Test(spread_match_label_keys, without_them_older_pods_count)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound_ns(&y, "old", 2, "n1", NULL, "test: test, pod-template-hash: old", NULL);
    pods_ns(&y, "new", 3, NULL, "test: test, pod-template-hash: new", CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "2,2,1");
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "new-%d", i);
        int c = kp_scenario_claim_of(&s, name);
        cr_assert_geq(c, 0);
        cr_expect_str_neq(claim_domain(&s, c, ZONE), "test-zone-1");
    }
    kp_scenario_free(&s);
}

/* ---------- nodeTaintsPolicy ---------- */

#define TAINTED "taints: [{key: taintname, value: taintvalue, effect: NoSchedule}]"
#define TAINTS_POLICY(p) SPREAD(TSC(LBL, 1, "DoNotSchedule", ", nodeTaintsPolicy: " p))

/* Two tainted nodes add domains foo and bar; the NodePool launches baz. */
static void tainted_nodes(yb *y)
{
    pool(y, "default", CT_EXISTS, LBL ": baz", NULL, NULL);
    node(y, "n1", LBL ": foo", TAINTED, SMALL);
    node(y, "n2", LBL ": bar", TAINTED, SMALL);
}

Test(spread_taints_policy, ignore_counts_tainted_nodes)
{
    yb y = {0};
    kp_scenario s;
    tainted_nodes(&y);
    pods(&y, "p", 5, CPU1, TAINTS_POLICY("Ignore"));
    run(&s, &y, "synthetic:10", NULL);
    /* foo and bar are empty domains that cannot grow: baz takes one pod. */
    cr_assert_str_eq(skew(&s, LBL), "1");
    expect_errors(&s, 4, LBL);
    kp_scenario_free(&s);
}

Test(spread_taints_policy, default_is_ignore)
{
    yb y = {0};
    kp_scenario s;
    tainted_nodes(&y);
    pods(&y, "p", 5, CPU1, SPREAD(HARD(LBL, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "1");
    expect_errors(&s, 4, LBL);
    kp_scenario_free(&s);
}

Test(spread_taints_policy, honor_leaves_out_untolerated_nodes)
{
    yb y = {0};
    kp_scenario s;
    tainted_nodes(&y);
    pods(&y, "p", 5, CPU1, TAINTS_POLICY("Honor"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "5");
    cr_assert_eq(s.plan->n_errors, 0);
    kp_scenario_free(&s);
}

#define TAINT_KEY "taint-key"

/* Domain foo from an untainted NodePool, bar from a tainted one. */
static void tainted_pool(yb *y)
{
    pool(y, "default", CT_EXISTS ", {key: " LBL ", operator: In, values: [foo]}", NULL, NULL, NULL);
    pool(y, "tainted", CT_EXISTS ", {key: " LBL ", operator: In, values: [bar]}", NULL,
         "taints: [{key: " TAINT_KEY ", value: taint-value, effect: NoSchedule}]", NULL);
}

Test(spread_taints_policy, ignore_counts_a_tainted_nodepool_domain)
{
    yb y = {0};
    kp_scenario s;
    tainted_pool(&y);
    pods(&y, "p", 2, NULL, TAINTS_POLICY("Ignore"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "1");
    expect_errors(&s, 1, LBL);
    kp_scenario_free(&s);
}

Test(spread_taints_policy, honor_leaves_out_a_tainted_nodepool_domain)
{
    yb y = {0};
    kp_scenario s;
    tainted_pool(&y);
    pods(&y, "p", 2, NULL, TAINTS_POLICY("Honor"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "2");
    cr_assert_eq(s.plan->n_errors, 0);
    kp_scenario_free(&s);
}

Test(spread_taints_policy, honor_keeps_a_tolerated_nodepool_domain)
{
    yb y = {0};
    kp_scenario s;
    tainted_pool(&y);
    pods(&y, "p", 2, NULL,
         TAINTS_POLICY("Honor") ", tolerations: [{key: " TAINT_KEY ", value: taint-value, effect: NoSchedule}]");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "1,1");
    bool tainted = false;
    for (uint32_t c = 0; c < s.plan->n_claims; c++)
        tainted |= strcmp(kp_scenario_claim_pool(&s, (int)c), "tainted") == 0;
    cr_assert(tainted);
    kp_scenario_free(&s);
}

Test(spread_taints_policy, honor_with_mutually_exclusive_nodepools_sharing_a_domain)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "np0", CT_EXISTS ", {key: " LBL ", operator: In, values: [foo, bar]}", NULL,
         "taints: [{key: " TAINT_KEY ", value: nodepool-0, effect: NoSchedule}]", NULL);
    pool(&y, "np1", CT_EXISTS ", {key: " LBL ", operator: In, values: [foo, baz]}", NULL,
         "taints: [{key: " TAINT_KEY ", value: nodepool-1, effect: NoSchedule}]", NULL);
    pods(&y, "zero", 2, NULL,
         TAINTS_POLICY("Honor") ", tolerations: [{key: " TAINT_KEY ", value: nodepool-0, effect: NoSchedule}]");
    pods(&y, "one", 4, NULL,
         TAINTS_POLICY("Honor") ", tolerations: [{key: " TAINT_KEY ", value: nodepool-1, effect: NoSchedule}]");
    run(&s, &y, "synthetic:10", NULL);
    /* Each set spreads over foo and its own NodePool's other domain. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, LBL), "3,2,1");
    kp_scenario_free(&s);
}

/* ---------- nodeAffinityPolicy ---------- */

#define AFFINITY_POLICY(p) SPREAD(TSC(LBL, 1, "DoNotSchedule", ", nodeAffinityPolicy: " p))

/* Nodes foo and bar that the pods' nodeSelector rules out; the NodePool launches baz. */
static void mismatched_nodes(yb *y)
{
    pool(y, "default", CT_EXISTS, LBL ": baz, selector: value", NULL, NULL);
    node(y, "n1", LBL ": foo, selector: mismatch", NULL, SMALL);
    node(y, "n2", LBL ": bar, selector: mismatch", NULL, SMALL);
}

Test(spread_affinity_policy, ignore_counts_nodes_the_pod_cannot_use)
{
    yb y = {0};
    kp_scenario s;
    mismatched_nodes(&y);
    pods(&y, "p", 5, CPU1, AFFINITY_POLICY("Ignore") ", nodeSelector: {selector: value}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "1");
    expect_errors(&s, 4, LBL);
    kp_scenario_free(&s);
}

Test(spread_affinity_policy, honor_leaves_them_out)
{
    yb y = {0};
    kp_scenario s;
    mismatched_nodes(&y);
    pods(&y, "p", 5, CPU1, AFFINITY_POLICY("Honor") ", nodeSelector: {selector: value}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "5");
    cr_assert_eq(s.plan->n_errors, 0);
    kp_scenario_free(&s);
}

Test(spread_affinity_policy, default_is_honor)
{
    yb y = {0};
    kp_scenario s;
    mismatched_nodes(&y);
    pods(&y, "p", 5, CPU1, SPREAD(HARD(LBL, 1)) ", nodeSelector: {selector: value}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "5");
    kp_scenario_free(&s);
}

Test(spread_affinity_policy, honor_applies_to_required_node_affinity_too)
{
    yb y = {0};
    kp_scenario s;
    mismatched_nodes(&y);
    pods(&y, "p", 5, CPU1,
         AFFINITY_POLICY("Honor") ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                  "{nodeSelectorTerms: [{matchExpressions: [{key: selector, operator: In, values: [value]}]}]}}}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, LBL), "5");
    kp_scenario_free(&s);
}
