/*
 * Solver scenarios: several constraints at once
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

#include "solver_spread.h"

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
