/*
 * The disruption planner's loop (planner.c; Karpenter's disruption
 * controller, controller.go, and suite_test.go): the methods in Karpenter's
 * order on every loop — expiration (forceful, ours), emptiness, drift,
 * multi-node then single-node consolidation — each adding its commands to
 * the loop (or, with max_commands_per_loop 1, Karpenter's serial pass: the
 * first method with a command wins the loop); max_loops; every method at once
 * (all_methods_once); commands applied between loops (replacements become
 * nodes that later loops use); nodes already disrupting, whose pods need room
 * in every simulation; the savingsHourly of each kind of command and the
 * plan's cost before and after; and the reason given for each kind of node
 * left in place, one case per reason the planner can give.
 *
 * The catalog is disruption_scenarios.h's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"

/* Karpenter's serial pass: one command per loop. */
static kp_scenario *plan_serial(sc *c, uint32_t loops)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = loops;
    o.max_commands_per_loop = 1;
    return plan_opts(c, &o);
}

/* ---------- the order of the methods ---------- */

/* One node for each method, each a candidate of that method only:
 *  exp     expired; its pod has do-not-disrupt (expiration is forceful, the
 *          graceful methods respect it) and a selector only exp satisfies;
 *  empty   empty;
 *  drifted drifted, with a grace period and a do-not-disrupt pod (drift may
 *          proceed, consolidation may not);
 *  m0, m1  xlarge nodes with a small pod each (multi-node merges them,
 *          single-node would replace either). */
static void one_of_each(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "exp", N(.type = "small", .claim_spec = EXPIRING, .labels = ", role: exp"));
    pod_full(c, "pe", "exp", "1", NULL, DND_POD, ", nodeSelector: {role: exp}");
    node(c, "empty", N(.type = "large"));
    node(c, "drifted", N(.type = "small", .claim_spec = GRACE, .conditions = DRIFTED));
    pod_full(c, "pd", "drifted", "500m", NULL, DND_POD, NULL);
    node(c, "m0", N(.type = "xlarge"));
    node(c, "m1", N(.type = "xlarge"));
    pod(c, "p0", "m0", "1");
    pod(c, "p1", "m1", "1");
}

Test(plan_order, every_method_once_in_karpenters_order)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.all_methods_once = true;
    kp_scenario *s = plan_opts(&c, &o);
    cr_assert_eq(kp_scenario_n_commands(s), 5);
    expect_command(s, 0, "expiration", "exp", 0);
    expect_command(s, 1, "emptiness", "empty", 0);
    cr_expect_str_eq(kp_scenario_command_method(s, 2), "drift");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 2), "drifted");
    /* Nothing is applied, so their pods may go to the empty node. */
    expect_command(s, 3, "multi-node consolidation", "m0,m1", 0);
    cr_expect_str_eq(kp_scenario_command_method(s, 4), "single-node consolidation");
    cr_expect_eq(command_at(s, 4)->n_candidates, 1);
    for (uint32_t i = 0; i < 5; i++)
        cr_expect_eq(command_at(s, i)->loop, 0);
    /* Nothing was applied: every node is still in the snapshot's cluster. */
    cr_expect_eq(s->snap->n_nodes, 5);
    sc_free(&c);
}

Test(plan_order, every_method_adds_to_the_first_loop_in_that_order)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 4);
    static const char *const want[] = {"expiration", "emptiness", "drift",
                                       "multi-node consolidation"};
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), want[i]);
        cr_expect_eq(command_at(s, i)->loop, 0);
    }
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "exp");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 1), "empty");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 2), "drifted");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 3), "m0,m1");
    cr_expect_eq(s->disruption->n_loops, 1);
    sc_free(&c);
}

Test(plan_order, serially_one_method_per_loop_in_that_order)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_serial(&c, 0);
    cr_assert_geq(kp_scenario_n_commands(s), 4);
    static const char *const want[] = {"expiration", "emptiness", "drift",
                                       "multi-node consolidation"};
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), want[i]);
        cr_expect_eq(command_at(s, i)->loop, i);
    }
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "exp");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 1), "empty");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 2), "drifted");
    sc_free(&c);
}

Test(plan_order, serially_the_first_loop_acts_on_the_first_method_only)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_serial(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "expiration", "exp", 0);
    /* Expiration does not wait for a place for the pod (only exp has its
     * label): it goes pending. */
    cr_expect_eq(kp_scenario_disrupted_by(s, "empty"), -1);
    cr_expect_not_null(kp_scenario_blocked_reason(s, "empty"));
    sc_free(&c);
}

static void drift_and_two_to_merge(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "m0", N(.type = "xlarge"));
    node(c, "m1", N(.type = "xlarge"));
    node(c, "d", N(.type = "small", .conditions = DRIFTED));
    pod(c, "p0", "m0", "1");
    pod(c, "p1", "m1", "1");
    pod(c, "pd", "d", "1500m");
}

Test(plan_order, drift_comes_before_consolidation)
{
    sc c;
    sc_init(&c, true);
    drift_and_two_to_merge(&c);
    kp_scenario *s = plan_serial(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "drift");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "d");
    sc_free(&c);
    /* In one loop: drift's command, then consolidation's — of the xlarge
     * node that did not receive the drifted node's pod (a node receiving pods
     * is no candidate in the same loop). */
    sc_init(&c, true);
    drift_and_two_to_merge(&c);
    s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "drift");
    cr_expect_eq(command_at(s, 0)->decision, KP_DISRUPT_DELETE);
    cr_expect_str_eq(command_at(s, 1)->reason, "Underutilized");
    cr_expect_eq(command_at(s, 1)->loop, 0);
    const kp_plan_node *dest = &command_at(s, 0)->simulation->nodes[0];
    cr_expect_neq(command_at(s, 1)->candidates[0], dest->node);
    sc_free(&c);
}

Test(plan_order, multi_node_comes_before_single_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "m0", N(.type = "xlarge"));
    node(&c, "m1", N(.type = "xlarge"));
    pod(&c, "p0", "m0", "1");
    pod(&c, "p1", "m1", "1");
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.all_methods_once = true;
    kp_scenario *s = plan_opts(&c, &o);
    /* Both would act; the loop takes multi-node's. */
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "multi-node consolidation");
    cr_expect_str_eq(kp_scenario_command_method(s, 1), "single-node consolidation");
    sc_free(&c);
}

/* ---------- loops ---------- */

/* xlarge nodes reporting 8 CPUs with a 5-CPU pod each: no two fit one of
 * them, and each alone fits a large. */
static void four_large_pods(sc *c, const char *disruption)
{
    pool(c, "default", OD_ONLY, disruption);
    for (int i = 0; i < 4; i++) {
        char name[16], pod_name[24];
        snprintf(name, sizeof(name), "n%d", i);
        snprintf(pod_name, sizeof(pod_name), "p%d", i);
        node(c, name, N(.type = "large", .type_label = "xlarge"));
        pod(c, pod_name, name, "5");
    }
}

Test(plan_loops, max_loops_bounds_the_plan)
{
    for (uint32_t loops = 1; loops <= 3; loops++) {
        sc c;
        sc_init(&c, true);
        four_large_pods(&c, NULL);
        /* Serially, one single-node replacement per loop. */
        kp_scenario *s = plan_serial(&c, loops);
        cr_expect_eq(kp_scenario_n_commands(s), loops, "max_loops %u: %u commands", loops,
                     kp_scenario_n_commands(s));
        for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
            cr_expect_eq(command_at(s, i)->loop, i);
        sc_free(&c);
    }
}

Test(plan_loops, until_nothing_changes)
{
    sc c;
    sc_init(&c, true);
    four_large_pods(&c, NULL);
    kp_scenario *s = plan_loops(&c, 0);
    /* Loop 0: four single-node replacements (a large each) at once; loop 1:
     * three of the larges merge into an xlarge. */
    cr_assert_eq(kp_scenario_n_commands(s), 5);
    cr_expect_eq(s->disruption->n_loops, 2);
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), "single-node consolidation");
        cr_expect_str_eq(kp_scenario_command_replacement_type(s, i, 0), "large");
        cr_expect_eq(command_at(s, i)->loop, 0);
    }
    cr_expect_str_eq(kp_scenario_command_method(s, 4), "multi-node consolidation");
    cr_expect_eq(command_at(s, 4)->n_candidates, 3);
    cr_expect_eq(command_at(s, 4)->loop, 1);
    cr_expect_float_eq(s->disruption->cost_after, 0.80 + 0.40, 1e-9);
    /* The last loop found nothing: it looked at every node left and says why
     * each stays (the default reason is for nodes no method looked at). */
    cr_expect_eq(s->disruption->n_blocked, 2);
    for (uint32_t i = 0; i < s->disruption->n_blocked; i++)
        cr_expect(strstr(s->disruption->blocked[i].reason, "no cheaper replacement") != NULL, "%s",
                  s->disruption->blocked[i].reason);
    sc_free(&c);
}

Test(plan_loops, a_loop_takes_what_the_budget_allows)
{
    sc c;
    sc_init(&c, true);
    four_large_pods(&c, "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, "
                        "budgets: [{nodes: '2'}]");
    kp_scenario *s = plan_loops(&c, 1);
    /* Two of the four replacements fit the budget of loop 0; the others wait. */
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    uint32_t waiting = 0;
    for (uint32_t i = 0; i < s->disruption->n_blocked; i++) {
        const kp_disrupt_blocked *b = &s->disruption->blocked[i];
        if (b->kind != KP_BLOCK_BUDGET)
            continue;
        waiting++;
        cr_expect_str_eq(b->budget_reason, "Underutilized");
        cr_expect_str_eq(b->object, "default");
        cr_expect_str_eq(b->event_reason, "DisruptionBlocked");
    }
    cr_expect_eq(waiting, 2);
    sc_free(&c);
}

Test(plan_loops, commands_are_applied_between_loops)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* The snapshot is the cluster after the plan: a replacement node holds p. */
    uint32_t last = s->snap->n_nodes - 1;
    cr_expect(strstr(s->snap->nodes[last].name, "replacement") != NULL, "%s",
              s->snap->nodes[last].name);
    cr_expect_str_eq(s->snap->nodes[last].instance_type, "small");
    bool found = false;
    for (uint32_t i = 0; i < s->snap->n_pods; i++)
        if (strcmp(s->snap->pods[i].ns_name, "default/p") == 0)
            found = s->snap->pods[i].node == (int32_t)last;
    cr_expect(found, "p is not on the replacement");
    sc_free(&c);
}

Test(plan_loops, a_later_loop_uses_an_earlier_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Loop 0 replaces the expired medium node with a medium one (1.5 CPUs
     * spare); b's pod, which the expired node's pod could not have shared,
     * fits there in loop 1, and b goes. */
    node(&c, "exp", N(.type = "medium", .claim_spec = EXPIRING));
    pod(&c, "pe", "exp", "2500m");
    node(&c, "b", N(.type = "small"));
    pod(&c, "pb", "b", "1");
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    expect_command(s, 0, "expiration", "exp", 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 1), "single-node consolidation");
    cr_expect_eq(kp_scenario_command_replacements(s, 1), 0);
    cr_expect_eq(s->disruption->n_blocked, 1);
    sc_free(&c);
}

/* ---------- savingsHourly and the plan's cost ---------- */

Test(plan_savings, emptiness_saves_every_empty_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large"));
    node(&c, "b", N(.type = "xlarge"));
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "emptiness", "a,b", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.40 + 0.80, 1e-9);
    sc_free(&c);
}

Test(plan_savings, a_delete_saves_the_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    node(&c, "b", N(.type = "medium"));
    pod(&c, "pa", "a", "15");
    pod(&c, "pb", "b", "500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.20, 1e-9);
    sc_free(&c);
}

Test(plan_savings, a_replace_saves_the_difference)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "2xlarge"));
    pod(&c, "pa", "a", "5");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "large");
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 1.60 - 0.40, 1e-9);
    sc_free(&c);
}

Test(plan_savings, expiration_replaced_by_its_own_type_saves_nothing)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small", .claim_spec = EXPIRING));
    pod(&c, "pa", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "expiration", "a", 1);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.0, 1e-9);
    sc_free(&c);
}

Test(plan_savings, the_plans_cost_falls_by_the_savings)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_geq(kp_scenario_n_commands(s), 4);
    double saved = 0;
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        saved += command_at(s, i)->savings_hourly;
    /* small, large, small, xlarge, xlarge */
    cr_expect_float_eq(s->disruption->cost_before, 0.10 + 0.40 + 0.10 + 0.80 + 0.80, 1e-9);
    cr_expect_float_eq(s->disruption->cost_after, s->disruption->cost_before - saved, 1e-9);
    cr_expect_lt(s->disruption->cost_after, s->disruption->cost_before);
    sc_free(&c);
}

/* ---------- nodes already disrupting ---------- */

Test(plan_disrupting, pods_of_a_deleting_node_need_room_in_the_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "gone", N(.type = "large", .meta = DELETING));
    pod(&c, "pg", "gone", "6");
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "pa", "a", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    /* a's 1 CPU alone would take a small node; with gone's 6 it takes a large. */
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "large");
    cr_expect_eq(replacement(s, 0)->n_pods, 2);
    expect_kept(s, "gone", "being deleted");
    sc_free(&c);
}

Test(plan_disrupting, pods_of_a_deleting_node_may_go_to_an_uninitialized_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Karpenter: only the candidates' pods are kept off uninitialized nodes. */
    node(&c, "gone", N(.type = "large", .meta = DELETING));
    pod(&c, "pg", "gone", "7");
    node(&c, "u", N(.type = "large", .uninitialized = true));
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "pa", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    cr_expect_eq(replacement(s, 0)->n_pods, 1);
    sc_free(&c);
}

/* A cluster with a NodePool and no node at all: nothing to plan, and no
 * zero-length memset on the planner's empty per-node arrays (UBSan aborted
 * the controller on an empty cluster). */
Test(plan_order, an_empty_cluster_plans_nothing)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    kp_scenario *s = plan_opts(&c, &o);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(s->snap->n_nodes, 0);
    sc_free(&c);
}
