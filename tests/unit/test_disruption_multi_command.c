/*
 * A loop of the plan holds every command its budgets allow, for the
 * controller to run in parallel (Karpenter's orchestration queue, queue.go:
 * candidates of commands in flight are excluded and count against budgets,
 * helpers.go BuildDisruptionBudgetMapping). What makes the commands of a loop
 * valid together: disjoint candidates; no candidate receives another
 * command's pods; no pod moves onto a replacement launched in the same loop;
 * one budget per NodePool shared by every method, the expired nodes (deleted
 * at once, without a budget) counting as disrupting too.
 *
 * The catalog: five sizes doubling in CPU, memory and price (small 2 CPU
 * $0.10 ... 2xlarge 32 CPU $1.60), on-demand and spot.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers/scenario.h"
#include "disruption_scenarios.h"

#define BUDGET(n)                                                                                  \
    "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: '" n   \
    "'}]"

/* One node for each method: an expired one (whose pod only it can run: it
 * goes pending), an empty one, a drifted one, and two xlarge nodes one small
 * pod each could leave. */
static void one_of_each(sc *c, const char *disruption)
{
    pool(c, "default", OD_ONLY, disruption);
    node(c, "exp", N(.type = "small", .claim_spec = EXPIRING, .labels = ", role: exp"));
    pod_full(c, "pe", "exp", "1500m", NULL, NULL, ", nodeSelector: {role: exp}");
    node(c, "empty", N(.type = "large"));
    node(c, "drifted", N(.type = "small", .conditions = DRIFTED));
    pod(c, "pd", "drifted", "1500m");
    node(c, "m0", N(.type = "xlarge"));
    node(c, "m1", N(.type = "xlarge"));
    pod(c, "p0", "m0", "1");
    pod(c, "p1", "m1", "1");
}

Test(multi_command, one_budget_for_every_method_of_a_loop)
{
    sc c;
    sc_init(&c, true);
    /* Two disruptions allowed: expiration takes none of the budget but its
     * node is disrupting, so emptiness gets the one left, and drift and
     * consolidation wait for the next loop. */
    one_of_each(&c, BUDGET("2"));
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    expect_command(s, 0, "expiration", "exp", 0);
    cr_expect(command_at(s, 0)->forceful);
    expect_command(s, 1, "emptiness", "empty", 0);
    cr_expect(!command_at(s, 1)->forceful);
    const kp_disrupt_blocked *d = blocked_of(s, "drifted");
    cr_assert_not_null(d);
    cr_expect_eq(d->kind, KP_BLOCK_BUDGET);
    cr_expect_str_eq(d->budget_reason, "Drifted");
    cr_expect_eq(blocked_of(s, "m0")->kind, KP_BLOCK_BUDGET);
    sc_free(&c);
}

Test(multi_command, expiration_needs_no_budget)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c, BUDGET("0"));
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* Its pod has nowhere to go: it waits pending, the node goes anyway. */
    expect_command(s, 0, "expiration", "exp", 0);
    cr_expect(command_at(s, 0)->forceful);
    cr_expect_eq(command_at(s, 0)->decision, KP_DISRUPT_DELETE);
    cr_expect_eq(command_at(s, 0)->simulation->n_errors, 1);
    sc_free(&c);
}

Test(multi_command, a_loop_runs_every_method_and_the_next_sees_it_done)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c, BUDGET("2"));
    kp_scenario *s = plan_loops(&c, 0);
    /* Loop 0: expiration and emptiness; loop 1: drift and a consolidation. */
    cr_assert_geq(kp_scenario_n_commands(s), 4);
    cr_expect_eq(command_at(s, 2)->loop, 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 2), "drift");
    cr_expect_eq(command_at(s, 3)->loop, 1);
    cr_expect_str_eq(command_at(s, 3)->reason, "Underutilized");
    sc_free(&c);
}

Test(multi_command, serial_is_one_command_per_loop)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c, NULL);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_commands_per_loop = 1;
    kp_scenario *s = plan_opts(&c, &o);
    cr_assert_geq(kp_scenario_n_commands(s), 4);
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        cr_expect_eq(command_at(s, i)->loop, i);
    cr_expect_eq(s->disruption->n_loops, kp_scenario_n_commands(s));
    sc_free(&c);
}

/* Something for every method: three nodes whose pod a cheaper node takes
 * alone, two that merge, an empty one, a drifted one, and a full one. */
static void mixed(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    for (int i = 0; i < 3; i++) {
        char name[16], pod_name[24];
        snprintf(name, sizeof(name), "r%d", i);
        snprintf(pod_name, sizeof(pod_name), "pr%d", i);
        node(c, name, N(.type = "large", .type_label = "xlarge"));
        pod(c, pod_name, name, "5");
    }
    node(c, "m0", N(.type = "xlarge"));
    node(c, "m1", N(.type = "xlarge"));
    pod(c, "pm0", "m0", "1");
    pod(c, "pm1", "m1", "1");
    node(c, "empty", N(.type = "large"));
    node(c, "drifted", N(.type = "small", .conditions = DRIFTED));
    pod(c, "pd", "drifted", "1500m");
    node(c, "full", N(.type = "xlarge"));
    pod(c, "pf", "full", "15");
}

static bool in(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

Test(multi_command, the_commands_of_a_loop_are_valid_together)
{
    sc c;
    sc_init(&c, true);
    mixed(&c);
    kp_scenario *s = plan_opts(&c, NULL);
    const kp_disruption_plan *plan = s->disruption;
    cr_assert_geq(plan->n_commands, 4);
    bool several = false;
    for (uint32_t a = 0; a < plan->n_commands; a++) {
        const kp_disrupt_command *x = &plan->commands[a];
        for (uint32_t b = 0; b < plan->n_commands; b++) {
            const kp_disrupt_command *y = &plan->commands[b];
            if (a == b || x->loop != y->loop)
                continue;
            several = true;
            /* Disjoint candidates; no candidate takes the other's pods. */
            for (uint32_t i = 0; i < x->n_candidates; i++) {
                cr_expect(!in(y->candidates, y->n_candidates, x->candidates[i]), "commands %u and %u share", a, b);
                for (uint32_t k = 0; y->simulation && k < y->simulation->n_nodes; k++)
                    cr_expect_neq(y->simulation->nodes[k].node, x->candidates[i],
                                  "command %u moves pods onto command %u's candidate", b, a);
            }
        }
        /* Nothing lands on a replacement of the same loop: a replacement of
         * loop L is a node named "...-replacement-N" that the commands of
         * loop L created; check every destination was a node before. */
        for (uint32_t k = 0; x->simulation && k < x->simulation->n_nodes; k++) {
            const kp_snode *dest = &s->snap->nodes[x->simulation->nodes[k].node];
            if (!strstr(dest->name, "replacement"))
                continue;
            bool earlier = false; /* created by a command of an earlier loop */
            for (uint32_t b = 0; b < plan->n_commands && plan->commands[b].loop < x->loop && !earlier; b++)
                earlier = plan->commands[b].simulation && plan->commands[b].simulation->n_claims > 0;
            cr_expect(earlier, "command %u moves pods onto a replacement of its own loop", a);
        }
    }
    cr_expect(several, "no loop had several commands");
    cr_expect_lt(plan->cost_after, plan->cost_before);
    sc_free(&c);
}

Test(multi_command, the_budget_grows_back_as_nodes_go)
{
    sc c;
    sc_init(&c, true);
    /* 50% of 8 empty-ish nodes: at most 4 in loop 0, then 50% of what is left. */
    pool(&c, "default", OD_ONLY, BUDGET("50%"));
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", i);
        node(&c, name, N(.type = "large"));
    }
    kp_scenario *s = plan_opts(&c, NULL);
    uint32_t per_loop[8] = {0};
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        per_loop[command_at(s, i)->loop] += command_at(s, i)->n_candidates;
    cr_expect_eq(per_loop[0], 4);
    cr_expect_eq(per_loop[1], 2);
    cr_expect_eq(per_loop[2], 1);
    cr_expect_eq(per_loop[3], 1);
    sc_free(&c);
}

Test(multi_command, the_allowances_say_what_blocks_a_nodepool)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: '0', reasons: "
         "[Drifted]}, {nodes: '1'}]");
    node(&c, "a", N(.type = "large", .meta = DELETING));
    node(&c, "b", N(.type = "large"));
    pod(&c, "pb", "b", "1");
    kp_scenario *s = plan1(&c, false);
    const kp_disruption_plan *plan = s->disruption;
    cr_assert_eq(plan->n_allowances, 3);
    for (uint32_t i = 0; i < plan->n_allowances; i++) {
        const kp_disrupt_allowance *a = &plan->allowances[i];
        cr_expect_eq(a->disrupting, 1, "%s", a->reason); /* a is being deleted */
        if (strcmp(a->reason, "Drifted") == 0) {
            cr_expect_eq(a->budget, 0);
            cr_expect_eq(a->allowed, 0);
            cr_expect_str_eq(a->blocked_message,
                             "No allowed disruptions for disruption reason Drifted due to blocking budget");
        } else {
            cr_expect_eq(a->budget, 1, "%s", a->reason);
            cr_expect_eq(a->allowed, 0, "%s", a->reason); /* the deleting node uses it */
            cr_expect_null(a->blocked_message, "%s", a->reason);
        }
    }
    sc_free(&c);
}

Test(multi_command, grouped_merges_find_what_the_prefix_misses)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* The prefix (by savings per disruption) starts with big, whose 30-CPU
     * pod no cheaper node takes, so every prefix fails; grouped, two of the
     * three xlarge nodes with 3 CPUs each go onto the third (a group the
     * size of one large: three would half fill an xlarge). */
    node(&c, "big", N(.type = "2xlarge"));
    pod(&c, "pbig", "big", "30");
    nodes_with_a_pod(&c, "x", 3, N(.type = "xlarge"), "3");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "x0,x1", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 1.6, 1e-9);
    cr_expect_eq(kp_scenario_disrupted_by(s, "big"), -1);
    sc_free(&c);
}

Test(multi_command, a_destination_waits_and_replacements_are_forecasts)
{
    sc c;
    sc_init(&c, true);
    /* Drift moves d's pod onto one of the xlarge nodes, which then is no
     * candidate in this loop; the other is replaced by a smaller node. */
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "m0", N(.type = "xlarge"));
    node(&c, "m1", N(.type = "xlarge"));
    node(&c, "d", N(.type = "small", .conditions = DRIFTED));
    pod(&c, "p0", "m0", "1");
    pod(&c, "p1", "m1", "1");
    pod(&c, "pd", "d", "1500m");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    uint32_t dest = command_at(s, 0)->simulation->nodes[0].node;
    const kp_disrupt_blocked *b = blocked_of(s, s->snap->nodes[dest].name);
    cr_assert_not_null(b);
    cr_expect_eq(b->kind, KP_BLOCK_IN_PLAN, "%s", kp_disrupt_block_name(b->kind));
    cr_expect_null(b->event_reason);
    cr_expect(!b->replacement);
    sc_free(&c);
    /* A replacement the plan launches is listed as such: no node to write to. */
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_assert_eq(s->disruption->n_blocked, 1);
    cr_expect(s->disruption->blocked[0].replacement);
    cr_expect(strstr(s->snap->nodes[s->disruption->blocked[0].node].name, "replacement") != NULL);
    sc_free(&c);
}

/* c8 is the cheapest per CPU and hosts the pool's pods best; g32 and g48
 * are dearer per CPU. */
static void three_shapes(sc *c)
{
    sc_init(c, false);
    catalog_type(&c->catalog, "c8", 8, 16, 0.30, 0);
    catalog_type(&c->catalog, "g32", 32, 64, 1.60, 0);
    catalog_type(&c->catalog, "g48", 48, 96, 2.60, 0);
    pool(c, "default", OD_ONLY, NULL);
}

Test(multi_command, a_replacement_larger_than_the_host_type_only_for_pods_that_need_it)
{
    sc c;
    three_shapes(&c);
    /* Two g48 nodes with a 12-CPU pod each: neither pod fits a c8, so one g32
     * for both is no dear shape chosen over a cheap one. */
    node(&c, "n0", N(.type = "large", .type_label = "g48"));
    node(&c, "n1", N(.type = "large", .type_label = "g48"));
    pod(&c, "p0", "n0", "12");
    pod(&c, "p1", "n1", "12");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "n0,n1", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "g32");
    sc_free(&c);
}

Test(multi_command, the_host_type_bounds_a_multi_node_replacement)
{
    sc c;
    three_shapes(&c);
    /* Five g48 nodes with a 3-CPU pod each: Karpenter's longest prefix would
     * put all five on one g32 ($0.10 a CPU); the planner keeps multi-node
     * replacements to the c8 that hosts these pods at $0.0375 a CPU. */
    nodes_with_a_pod(&c, "n", 5, N(.type = "large", .type_label = "g48"), "3");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_geq(kp_scenario_n_commands(s), 1);
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        for (uint32_t r = 0; r < kp_scenario_command_replacements(s, i); r++)
            cr_expect_str_eq(kp_scenario_command_replacement_type(s, i, r), "c8");
    sc_free(&c);
}
