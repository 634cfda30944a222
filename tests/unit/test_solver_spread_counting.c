/*
 * Solver scenarios: finer points — which existing
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

#include "solver_spread.h"

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
