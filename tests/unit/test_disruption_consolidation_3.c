/*
 * Consolidation, part three: multi-node and single-node consolidation
 * (Karpenter's multinodeconsolidation.go, singlenodeconsolidation.go, and
 * consolidation_test.go "Multi-NodeClaim", "Node Lifetime Consideration" and
 * "Budgets", singlenodeconsolidation_test.go "Candidate Shuffling", the
 * eviction-cost cases of suite_test.go): several nodes into one cheaper node
 * or none, a replacement of one of the candidates' own types only when
 * cheaper than that candidate, the cap on the candidates one multi-node
 * command considers, candidates ordered by savings per unit of disruption
 * (price over 1 + the pods' eviction costs; deletion cost and priority weigh,
 * node age does not), and single-node taking the first node in that order,
 * NodePools interleaved, that can be consolidated.
 *
 * The catalog is test_disruption_consolidation_1.c's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"

/* ---------- the catalog ---------- */

/* `n` nodes "<prefix>0".. with one pod of `cpu` each. */

/* Karpenter's serial pass (one command per loop) with a cap on multi-node. */
static kp_scenario *plan_max(sc *c, uint32_t loops, bool spot_to_spot, uint32_t multi_node_max)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = loops;
    o.max_commands_per_loop = 1;
    o.spot_to_spot = spot_to_spot;
    o.multi_node_max = multi_node_max;
    return plan_opts(c, &o);
}

/* ---------- multi-node ---------- */

Test(consolidation_multi, three_on_demand_nodes_into_one)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    nodes_with_a_pod(&c, "n", 3, N(.type = "xlarge"), "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "n0,n1,n2", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "medium");
    cr_expect_eq(replacement(s, 0)->n_pods, 3);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 3 * 0.80 - 0.20, 1e-9);
    sc_free(&c);
}

Test(consolidation_multi, three_spot_nodes_into_one_without_the_15_type_rule)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", BOTH, NULL);
    nodes_with_a_pod(&c, "n", 3, N(.type = "xlarge", .ct = "spot"), "1");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* Only three spot types are cheaper than the three nodes: fine for several nodes. */
    expect_command(s, 0, "multi-node consolidation", "n0,n1,n2", 1);
    cr_expect_str_eq(replacement_ct(s, 0), "spot");
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "medium");
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 3 * 0.32 - 0.08, 1e-9);
    sc_free(&c);
}

Test(consolidation_multi, spot_nodes_without_the_feature_are_deleted_not_replaced)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", BOTH, NULL);
    nodes_with_a_pod(&c, "n", 3, N(.type = "xlarge", .ct = "spot"), "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* All three into a spot replacement needs spot-to-spot; two of them into
     * the third does not. */
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "multi-node consolidation");
    cr_expect_eq(command_at(s, 0)->n_candidates, 2);
    cr_expect_eq(kp_scenario_command_replacements(s, 0), 0);
    sc_free(&c);
}

Test(consolidation_multi, spot_and_on_demand_candidates_merge)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", BOTH, NULL);
    nodes_with_a_pod(&c, "n", 2, N(.type = "xlarge"), "1");
    node(&c, "s0", N(.type = "xlarge", .ct = "spot"));
    pod(&c, "s0-p", "s0", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "n0,n1,s0", 1);
    cr_expect_str_eq(replacement_ct(s, 0), "spot");
    sc_free(&c);
}

Test(consolidation_multi, a_candidates_own_type_must_be_cheaper_than_that_candidate)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Karpenter's example: [xlarge, xlarge, small] -> one small is just
     * deleting the two xlarge nodes with more pods moved. */
    nodes_with_a_pod(&c, "x", 2, N(.type = "xlarge"), "500m");
    node(&c, "s", N(.type = "small"));
    pod(&c, "s-p", "s", "500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "x0,x1", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 1.60, 1e-9);
    cr_expect_eq(kp_scenario_disrupted_by(s, "s"), -1);
    sc_free(&c);
}

Test(consolidation_multi, same_type_replacement_falls_back_to_single_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* xlarge nodes reporting half their type's CPUs (system-reserved), so
     * neither pod fits beside the other. Together the two need an xlarge,
     * their own type: not a multi-node command. Alone each fits a large: a
     * single-node replacement. */
    nodes_with_a_pod(&c, "x", 2, N(.type = "large", .type_label = "xlarge"), "6");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "x0", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "large");
    sc_free(&c);
}

Test(consolidation_multi, waits_for_consolidate_after)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1h, budgets: [{nodes: "
         "'100%'}]");
    nodes_with_a_pod(&c, "n", 3, N(.type = "xlarge", .pod_event = "2026-11-21T11:30:00Z"), "1");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "n0", "consolidateAfter");
    sc_free(&c);
}

Test(consolidation_multi, the_cap_bounds_the_batch)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    nodes_with_a_pod(&c, "n", 6, N(.type = "xlarge"), "1");
    kp_scenario *s = plan_max(&c, 1, false, 3);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "multi-node consolidation");
    /* Karpenter's binary search with a cap of N below the number of
     * candidates tries batches of up to N + 1 (candidates[0:mid+1], mid <= N). */
    cr_expect_eq(command_at(s, 0)->n_candidates, 4, "%u candidates",
                 command_at(s, 0)->n_candidates);
    sc_free(&c);
}

Test(consolidation_multi, without_a_cap_it_takes_every_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    nodes_with_a_pod(&c, "n", 6, N(.type = "xlarge"), "1");
    kp_scenario *s = plan_max(&c, 1, false, 100);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(command_at(s, 0)->n_candidates, 6);
    cr_expect_eq(kp_scenario_command_replacements(s, 0), 1);
    sc_free(&c);
}

Test(consolidation_multi, the_budget_bounds_the_batch)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "
         "'30%'}]");
    nodes_with_a_pod(&c, "n", 10, N(.type = "xlarge"), "100m");
    kp_scenario *s = plan_max(&c, 1, false, 100);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "multi-node consolidation");
    /* 30% of 10: three nodes, their pods onto the other seven. */
    cr_expect_eq(command_at(s, 0)->n_candidates, 3);
    cr_expect_eq(kp_scenario_command_replacements(s, 0), 0);
    sc_free(&c);
}

Test(consolidation_multi, one_node_alone_is_left_to_single_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    nodes_with_a_pod(&c, "n", 1, N(.type = "xlarge"), "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "n0", 1);
    sc_free(&c);
}

/* ---------- the order of candidates ---------- */

/* Pods that only existing nodes can take (new nodes would not have the
 * rack label), so a node goes only if the other can hold its pods; with
 * two such nodes multi-node finds nothing and single-node takes the first
 * in order. */
#define RACK ", nodeSelector: {rack: r1}"

static void rack_node(sc *c, const char *name, const char *type)
{
    node(c, name, N(.type = type, .labels = ", rack: r1"));
}

Test(consolidation_order, the_dearer_node_goes_first)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    rack_node(&c, "a", "large");
    rack_node(&c, "b", "xlarge");
    pod_full(&c, "pa", "a", "1", NULL, NULL, RACK);
    pod_full(&c, "pb", "b", "1", NULL, NULL, RACK);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.80, 1e-9);
    sc_free(&c);
}

Test(consolidation_order, a_node_with_more_pods_goes_later)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    rack_node(&c, "a", "large");
    rack_node(&c, "b", "large");
    pod_full(&c, "pa0", "a", "500m", NULL, NULL, RACK);
    pod_full(&c, "pa1", "a", "500m", NULL, NULL, RACK);
    pod_full(&c, "pb", "b", "1", NULL, NULL, RACK);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* Same price; b costs one eviction, a two. */
    expect_command(s, 0, "single-node consolidation", "b", 0);
    sc_free(&c);
}

typedef struct cost_case {
    const char *name;
    const char *meta; /* pod metadata of a's pod */
    const char *spec; /* pod spec of a's pod */
    const char *first;
} cost_case;

/* a is declared first and wins ties: b going first means a's pod weighs more. */
static const cost_case cost_cases[] = {
    {"no deletion cost or priority: a tie, declaration order", "", "", "a"},
    {"high pod-deletion-cost",
     ", annotations: {controller.kubernetes.io/pod-deletion-cost: '2147483647'}", "", "b"},
    {"low pod-deletion-cost",
     ", annotations: {controller.kubernetes.io/pod-deletion-cost: '-100000000'}", "", "a"},
    {"unparseable pod-deletion-cost is ignored",
     ", annotations: {controller.kubernetes.io/pod-deletion-cost: x}", "", "a"},
    {"high priority", "", ", priority: 1000000000", "b"},
    {"low priority", "", ", priority: -100000000", "a"},
};

ParameterizedTestParameters(consolidation_order, eviction_cost)
{
    static size_t idx[sizeof(cost_cases) / sizeof(cost_cases[0])];
    for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, sizeof(idx) / sizeof(idx[0]));
}

ParameterizedTest(size_t *i, consolidation_order, eviction_cost)
{
    const cost_case *k = &cost_cases[*i];
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    rack_node(&c, "a", "large");
    rack_node(&c, "b", "large");
    char spec[128];
    snprintf(spec, sizeof(spec), "%s%s", RACK, k->spec);
    pod_full(&c, "pa", "a", "1", NULL, k->meta, spec);
    pod_full(&c, "pb", "b", "1", NULL, NULL, RACK);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1, "%s", k->name);
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), k->first, "%s", k->name);
    sc_free(&c);
}

Test(consolidation_order, pods_whose_eviction_costs_clamp_to_zero_leave_the_node_empty)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* 1 - 2147483647/2^27 < 0: the pod adds nothing to the node's disruption
     * cost, and Karpenter counts such a node as empty (emptiness, reason Empty). */
    node(&c, "a", N(.type = "large"));
    pod_full(&c, "cheap", "a", "1", NULL,
             ", annotations: {controller.kubernetes.io/pod-deletion-cost: '-2147483647'}", NULL);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "emptiness", "a", 0);
    sc_free(&c);
}

Test(consolidation_order, node_age_does_not_order_candidates)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* b is a day older than a but has two pods to a's one: a goes first. */
    node(&c, "a", N(.type = "large", .labels = ", rack: r1", .created = "2026-11-21T10:00:00Z"));
    node(&c, "b", N(.type = "large", .labels = ", rack: r1", .created = "2026-11-20T10:00:00Z"));
    pod_full(&c, "pa", "a", "1", NULL, NULL, RACK);
    pod_full(&c, "pb0", "b", "500m", NULL, NULL, RACK);
    pod_full(&c, "pb1", "b", "500m", NULL, NULL, RACK);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 0);
    sc_free(&c);
}

Test(consolidation_order, multi_node_batches_follow_the_order)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Four xlarge nodes with a pod each; the one whose pod has a high
     * deletion cost is last in order, and the batch of three (a cap of 2)
     * leaves it out: their pods move onto it. */
    nodes_with_a_pod(&c, "n", 3, N(.type = "xlarge"), "1");
    node(&c, "dear", N(.type = "xlarge"));
    pod_full(&c, "dear-p", "dear", "1", NULL,
             ", annotations: {controller.kubernetes.io/pod-deletion-cost: '2147483647'}", NULL);
    kp_scenario *s = plan_max(&c, 1, false, 2);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "n0,n1,n2", 0);
    expect_kept(s, "dear", "");
    sc_free(&c);
}

/* ---------- single-node ---------- */

Test(consolidation_single, the_first_node_in_order_that_can_go)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    node(&c, "b", N(.type = "large"));
    node(&c, "c", N(.type = "medium"));
    pod(&c, "pa", "a", "14");
    pod(&c, "pb", "b", "7");
    pod(&c, "pc", "c", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* a (the best savings) and b fit nothing cheaper; c's pod fits on a. */
    expect_command(s, 0, "single-node consolidation", "c", 0);
    expect_kept(s, "a", "no cheaper replacement");
    expect_kept(s, "b", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_single, nodepools_take_turns)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "alpha", OD_ONLY, NULL);
    pool(&c, "beta", OD_ONLY, NULL);
    /* By savings: x0, x1, y0. Interleaved by NodePool: x0, y0, x1. x0 can't
     * go; y0 and x1 both could: y0 is tried first. */
    node(&c, "x0", N(.pool = "alpha", .type = "xlarge"));
    node(&c, "x1", N(.pool = "alpha", .type = "large"));
    node(&c, "y0", N(.pool = "beta", .type = "medium"));
    pod(&c, "p0", "x0", "14");
    pod(&c, "p1", "x1", "1");
    pod(&c, "p2", "y0", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "y0", 0);
    sc_free(&c);
}

Test(consolidation_single, one_node_per_command)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* xlarge nodes reporting 8 CPUs, a 5-CPU pod each: no pod fits beside
     * another, any two together need an xlarge (their own type, so no
     * multi-node command), and each alone fits a large: three single-node
     * replacements, one node each, all in the first loop (the budget is
     * 100%). The next loop merges the three larges (plan_1's until_nothing_changes). */
    nodes_with_a_pod(&c, "n", 3, N(.type = "large", .type_label = "xlarge"), "5");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 3);
    for (uint32_t i = 0; i < 3; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), "single-node consolidation");
        cr_expect_eq(command_at(s, i)->n_candidates, 1);
        cr_expect_str_eq(kp_scenario_command_replacement_type(s, i, 0), "large");
        cr_expect_eq(command_at(s, i)->loop, 0);
        cr_expect_eq(command_at(s, i)->decision, KP_DISRUPT_REPLACE);
        cr_expect_str_eq(command_at(s, i)->consolidation_type, "single");
    }
    sc_free(&c);
}

Test(consolidation_single, nothing_to_do_is_a_plan_without_commands)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    nodes_with_a_pod(&c, "n", 2, N(.type = "small"), "1500m");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(s->disruption->n_blocked, 2);
    cr_expect_float_eq(s->disruption->cost_before, 0.20, 1e-9);
    cr_expect_float_eq(s->disruption->cost_after, 0.20, 1e-9);
    sc_free(&c);
}

/* ---------- reserved capacity ---------- */

/* xlarge with a reserved offering at a millionth of its on-demand price, and
 * small without one (Karpenter's "Reserved Capacity" context). */
static void reserved_catalog(sc *c)
{
    kp_buf_puts(
        &c->catalog,
        "{\"name\":\"xlarge\",\"capacity\":{\"cpu\":\"16\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.8},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"spot\",\"price\":0.32},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"reserved\",\"price\":0.0000008}]},"
        "{\"name\":\"small\",\"capacity\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.1},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"spot\",\"price\":0.04}]}");
}

Test(consolidation_reserved, on_demand_moves_into_a_reservation_of_its_own_type)
{
    sc c;
    sc_init(&c, false);
    reserved_catalog(&c);
    pool(&c, "default",
         "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, reserved]}", NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    /* The same type, reserved: cheaper than small on-demand. */
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "xlarge");
    cr_expect_str_eq(replacement_ct(s, 0), "reserved");
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.8 - 0.0000008, 1e-12);
    sc_free(&c);
}

Test(consolidation_reserved, a_reservation_has_nothing_cheaper)
{
    sc c;
    sc_init(&c, false);
    reserved_catalog(&c);
    pool(&c, "default",
         "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, reserved]}", NULL);
    node(&c, "a", N(.type = "xlarge", .ct = "reserved"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "no cheaper replacement");
    sc_free(&c);
}
