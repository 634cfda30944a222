/*
 * Solver scenarios: zonal spread. Pods spread over
 * the zones the NodePools can launch in and the zones existing nodes sit in;
 * DoNotSchedule keeps maxSkew, minDomains counts the domains that exist.
 * Cases follow the Zonal context of Karpenter's topology suite.
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
/* Existing nodes are this small: pods requesting a core need new NodeClaims. */
#define SMALL "cpu: 100m, memory: 1Gi, pods: '110'"
#define CPU1 "cpu: '1'"

static void default_pool(yb *y)
{
    pool(y, "default", CT_EXISTS, NULL, NULL, NULL);
}

/* ---------- balance ---------- */

Test(spread_zonal, balances_four_pods_over_three_zones)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "2,1,1");
    expect_errors(&s, 0, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, selector_by_match_expressions_balances_the_same)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL,
         SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule, "
                "labelSelector: {matchExpressions: [{key: test, operator: In, values: [test]}]}}"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "2,1,1");
    kp_scenario_free(&s);
}

Test(spread_zonal, deployment_of_nine_gets_three_per_zone)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    yb_add(&y, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
               "spec: {replicas: 9, selector: {matchLabels: {test: test}}, template: {metadata: {labels: {test: test}}, "
               "spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}], " SPREAD(HARD(ZONE, 1)) "}}}\n");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,3,3");
    cr_assert_eq(s.plan->n_scheduled, 9);
    /* One NodeClaim per zone: each holds its zone's three pods. */
    cr_assert_eq(s.plan->n_claims, 3);
    for (int c = 0; c < 3; c++)
        cr_expect_eq(kp_scenario_claim_pods(&s, c), 3);
    kp_scenario_free(&s);
}

Test(spread_zonal, each_claim_is_pinned_to_one_zone)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 3, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_claims, 3);
    const char *seen[3];
    for (int c = 0; c < 3; c++) {
        const char *r = kp_scenario_claim_req(&s, c, ZONE);
        cr_assert_not_null(r);
        cr_expect(strncmp(r, "In [test-zone-", 14) == 0 && !strchr(r + 4, ' '), "claim %d: %s", c, r);
        seen[c] = r;
    }
    cr_expect(strcmp(seen[0], seen[1]) && strcmp(seen[0], seen[2]) && strcmp(seen[1], seen[2]));
    kp_scenario_free(&s);
}

/* maxSkew 1, 2 and 3 with a zone that already holds pods: how many new pods
 * each zone can take before the skew would pass the limit. */
typedef struct skew_row {
    int max_skew, existing, pending;
    const char *want;
    uint32_t unschedulable;
} skew_row;

Test(spread_zonal, max_skew_table_with_a_loaded_zone)
{
    /* Zone 1 holds `existing` pods; the NodePool launches only in zones 2 and 3. */
    static const skew_row rows[] = {
        {1, 1, 10, "2,2,1", 6}, {2, 1, 10, "3,3,1", 4}, {3, 1, 10, "4,4,1", 2},
        {1, 3, 3, "3,2,1", 0},  {2, 4, 4, "4,2,2", 0},  {3, 2, 11, "5,5,2", 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const skew_row *r = &rows[i];
        char spread[256];
        yb y = {0};
        kp_scenario s;
        snprintf(spread, sizeof(spread), SPREAD("{topologyKey: " ZONE ", maxSkew: %d, whenUnsatisfiable: DoNotSchedule, " SEL "}"),
                 r->max_skew);
        pool(&y, "default", ZONES("test-zone-2, test-zone-3"), NULL, NULL, NULL);
        node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
        bound(&y, "old", r->existing, "n1");
        pods(&y, "p", r->pending, CPU1, spread);
        run(&s, &y, "synthetic:10", NULL);
        cr_expect_str_eq(skew(&s, ZONE), r->want, "row %zu", i);
        expect_errors(&s, r->unschedulable, ZONE);
        kp_scenario_free(&s);
    }
}

/* ---------- NodePool zone constraints ---------- */

Test(spread_zonal, nodepool_listing_all_three_zones)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2, test-zone-3"), NULL, NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "2,1,1");
    kp_scenario_free(&s);
}

Test(spread_zonal, nodepool_requirements_limit_the_domains)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), NULL, NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 3 is no domain: nothing could launch there. */
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    expect_errors(&s, 0, ZONE);
    for (uint32_t c = 0; c < s.plan->n_claims; c++)
        cr_expect_neq(strcmp(kp_scenario_claim_req(&s, (int)c, ZONE), "In [test-zone-3]"), 0);
    kp_scenario_free(&s);
}

Test(spread_zonal, nodepool_zone_label_makes_one_domain)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_EXISTS, ZONE ": test-zone-1", NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "4");
    expect_errors(&s, 0, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, nodepool_zone_label_narrows_its_requirements)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), ZONE ": test-zone-1", NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "4");
    kp_scenario_free(&s);
}

Test(spread_zonal, zone_labels_across_two_nodepools)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "a", ZONES("test-zone-1, test-zone-2"), ZONE ": test-zone-1", NULL, NULL);
    pool(&y, "b", NULL, ZONE ": test-zone-2", NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    bool used_a = false, used_b = false;
    for (uint32_t c = 0; c < s.plan->n_claims; c++) {
        used_a |= strcmp(kp_scenario_claim_pool(&s, (int)c), "a") == 0;
        used_b |= strcmp(kp_scenario_claim_pool(&s, (int)c), "b") == 0;
    }
    cr_expect(used_a && used_b);
    kp_scenario_free(&s);
}

/* ---------- existing pods ---------- */

Test(spread_zonal, existing_pod_outside_the_nodepool_zones_still_counts)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), NULL, NULL, NULL);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    bound(&y, "old", 1, "n3");
    pods(&y, "p", 6, "cpu: 1100m", SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 3 holds one pod and gets no more: zones 1 and 2 stop at two. */
    cr_assert_str_eq(skew(&s, ZONE), "2,2,1");
    expect_errors(&s, 2, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, non_minimum_domain_when_it_is_all_there_is)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-3"), NULL, NULL, NULL);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    node(&y, "n2", ZONE ": test-zone-2", NULL, SMALL);
    bound(&y, "a", 1, "n1");
    bound(&y, "b", 1, "n2");
    pods(&y, "p", 10, "cpu: 1100m", SPREAD(HARD(ZONE, 5)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "6,1,1");
    expect_errors(&s, 4, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, only_minimum_domains_while_skew_is_violated)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 3, "n1");
    pods(&y, "p", 3, "cpu: 1100m", SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,2,1");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p-%d", i);
        int c = kp_scenario_claim_of(&s, name);
        cr_assert_geq(c, 0);
        cr_expect_str_neq(claim_domain(&s, c, ZONE), "test-zone-1");
    }
    kp_scenario_free(&s);
}

Test(spread_zonal, schedule_anyway_fills_the_zones_it_has)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-2, test-zone-3"), NULL, NULL, NULL);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 10, "cpu: 1100m", SPREAD(SOFT(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* The preference gives way once it cannot hold; zones 2 and 3 stay balanced. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "5,5,1");
    kp_scenario_free(&s);
}

Test(spread_zonal, do_not_schedule_reason_names_the_constraint)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-2"), NULL, NULL, NULL);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    pods(&y, "p", 2, "cpu: 1100m", SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 1 is known (empty) and cannot grow: zone 2 takes one pod only. */
    cr_assert_str_eq(skew(&s, ZONE), "1");
    expect_errors(&s, 1, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, counts_only_running_matching_pods_on_zoned_nodes)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    node(&y, "n2", ZONE ": test-zone-2", NULL, SMALL);
    node(&y, "n3", NULL, NULL, SMALL); /* no zone label */
    bound_ns(&y, "unlabelled", 1, "n1", NULL, "app: other", NULL);
    bound(&y, "nozone", 1, "n3");
    bound_ns(&y, "elsewhere", 1, "n1", "other", NULL, NULL);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: failed, labels: {test: test}}\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Failed}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: done, labels: {test: test}}\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Succeeded}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: leaving, labels: {test: test}, "
               "deletionTimestamp: '2024-01-01T00:00:00Z'}\n"
               "spec: {nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Running}\n");
    bound(&y, "one", 2, "n1");
    bound(&y, "two", 1, "n2");
    pods(&y, "p", 2, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* Counted: 2 in zone 1, 1 in zone 2. The new pods go to zone 3 and zone 2. */
    cr_assert_str_eq(skew(&s, ZONE), "2,2,1");
    int c0 = kp_scenario_claim_of(&s, "p-0"), c1 = kp_scenario_claim_of(&s, "p-1");
    cr_assert(c0 >= 0 && c1 >= 0);
    cr_expect(strcmp(claim_domain(&s, c0, ZONE), "test-zone-1") && strcmp(claim_domain(&s, c1, ZONE), "test-zone-1"));
    kp_scenario_free(&s);
}

/* ---------- selectors ---------- */

Test(spread_zonal, nil_selector_selects_nothing)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 2, NULL, SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule}"));
    run(&s, &y, "synthetic:10", NULL);
    /* Nothing is counted, so nothing is spread: both pods share one NodeClaim. */
    cr_assert_eq(s.plan->n_scheduled, 2);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_str_eq(skew(&s, ZONE), "2");
    kp_scenario_free(&s);
}

Test(spread_zonal, single_pod_without_selector_schedules)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 1, NULL, SPREAD("{topologyKey: " ZONE ", maxSkew: 1, whenUnsatisfiable: DoNotSchedule}"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(kp_scenario_claim_of(&s, "p-0"), 0);
    cr_assert_str_eq(skew(&s, ZONE), "1");
    kp_scenario_free(&s);
}

Test(spread_zonal, selector_the_pods_do_not_match_does_not_spread_them)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "p", 5, NULL, "app: other", NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_scheduled, 5);
    cr_assert_eq(s.plan->n_claims, 1);
    kp_scenario_free(&s);
}

Test(spread_zonal, unknown_topology_key_leaves_the_pod_pending)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "spread", 1, NULL, SPREAD(HARD("unknown", 1)));
    pods_ns(&y, "plain", 1, NULL, NULL, NULL, NULL);
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_null(kp_scenario_error_of(&s, "plain-0"));
    cr_assert_geq(kp_scenario_claim_of(&s, "plain-0"), 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "spread-0"));
    cr_assert_eq(kp_scenario_claim_of(&s, "spread-0"), -1);
    kp_scenario_free(&s);
}

/* ---------- minDomains ---------- */

#define MIN_DOMAINS(n) TSC(ZONE, 1, "DoNotSchedule", ", minDomains: " #n)

Test(spread_zonal, min_domains_above_what_the_nodepool_offers)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), NULL, NULL, NULL);
    pods(&y, "p", 3, NULL, SPREAD(MIN_DOMAINS(3)));
    run(&s, &y, "synthetic:10", NULL);
    /* Two domains < 3: the global minimum counts as 0, so each zone takes one pod. */
    cr_assert_str_eq(skew(&s, ZONE), "1,1");
    expect_errors(&s, 1, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, min_domains_equal_to_the_zones)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2, test-zone-3"), NULL, NULL, NULL);
    pods(&y, "p", 11, NULL, SPREAD(MIN_DOMAINS(3)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "4,4,3");
    expect_errors(&s, 0, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, min_domains_below_the_zones)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2, test-zone-3"), NULL, NULL, NULL);
    pods(&y, "p", 11, NULL, SPREAD(MIN_DOMAINS(2)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "4,4,3");
    kp_scenario_free(&s);
}

Test(spread_zonal, min_domains_met_by_an_existing_node_zone)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-1, test-zone-2"), NULL, NULL, NULL);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    bound(&y, "old", 1, "n3");
    pods(&y, "p", 3, CPU1, SPREAD(MIN_DOMAINS(3)));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 3 (from the existing node) is the third domain, so the minimum is
     * the real one: zones 1 and 2 take one each, then one of them a second. */
    cr_assert_str_eq(skew(&s, ZONE), "2,1,1");
    expect_errors(&s, 0, ZONE);
    kp_scenario_free(&s);
}

Test(spread_zonal, pvc_zone_with_min_domains_when_every_zone_has_a_pod)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: " CT ", operator: In, values: [on-demand]}", NULL, NULL, NULL);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    node(&y, "n2", ZONE ": test-zone-2", NULL, SMALL);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    bound(&y, "a", 1, "n1");
    bound(&y, "b", 1, "n2");
    bound(&y, "c", 1, "n3");
    yb_add(&y, "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\n"
               "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driver: ebs.csi.aws.com, volumeHandle: v}, "
               "claimRef: {namespace: default, name: data}, nodeAffinity: {required: {nodeSelectorTerms: "
               "[{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1]}]}]}}}\n"
               "status: {phase: Bound}\n");
    yb_add(&y, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default, "
               "annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
               "spec: {accessModes: [ReadWriteOnce], volumeName: pv, resources: {requests: {storage: 1Gi}}}\n"
               "status: {phase: Bound}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: vol, labels: {test: test}}\n"
               "spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}], "
               "volumes: [{name: d, persistentVolumeClaim: {claimName: data}}], " SPREAD(MIN_DOMAINS(3)) "}\n");
    run(&s, &y, "synthetic:10", NULL);
    /* The volume pins the NodeClaim to zone 1; the spread still counts all three zones. */
    int c = kp_scenario_claim_of(&s, "vol");
    cr_assert_geq(c, 0, "%s", kp_scenario_error_of(&s, "vol") ? kp_scenario_error_of(&s, "vol") : "");
    cr_assert_str_eq(claim_domain(&s, c, ZONE), "test-zone-1");
    cr_assert_str_eq(skew(&s, ZONE), "2,1,1");
    kp_scenario_free(&s);
}
