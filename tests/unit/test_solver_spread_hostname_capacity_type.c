/*
 * Solver scenarios: hostname and capacity-type
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

#include "solver_spread.h"

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
