/*
 * Split consolidation (beyond Karpenter, which says "Can't remove without
 * creating N candidates"): single-node consolidation may replace one node
 * with up to opts.split_max NodeClaims when together they cost less — never
 * to add nodes without saving money, within the same budgets, and with each
 * NodeClaim's options priced so that whatever the launches pick, the total
 * stays below the node's price.
 *
 * The catalog: five sizes doubling in CPU, memory and price (small 2 CPU
 * $0.10 ... 2xlarge 32 CPU $1.60), on-demand and spot.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers/scenario.h"
#include "disruption_scenarios.h"

#define HOST_SPREAD                                                                                \
    ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "             \
    "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: test}}}]"

static kp_scenario *plan_split(sc *c, uint32_t split_max)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    o.split_max = split_max;
    return plan_opts(c, &o);
}

/* `n` replicas spread by hostname, all on one xlarge ($0.80). */
static void spread_on_one_node(sc *c, int n, const char *pool_disruption)
{
    pool(c, "default", OD_ONLY, pool_disruption);
    node(c, "a", N(.type = "xlarge"));
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        pod_full(c, name, "a", "1", NULL, NULL, HOST_SPREAD);
    }
}

/* One 2xlarge ($1.60) running a pod of each size in `cpus` (NULL-terminated). */
static void one_2xlarge(sc *c, const char *const *cpus)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "2xlarge"));
    for (int i = 0; cpus[i]; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        pod(c, name, "a", cpus[i]);
    }
}

/* The sum of the dearest option of every replacement: what the node could
 * cost at worst after the split. */
static double worst_total(const kp_scenario *s, uint32_t cmd)
{
    const kp_plan *sim = command_at(s, cmd)->simulation;
    double total = 0;
    for (uint32_t i = 0; i < sim->n_claims; i++) {
        double worst = 0;
        for (uint32_t k = 0; k < sim->claims[i].n_its; k++) {
            const kp_sit *it = &s->snap->its[sim->claims[i].its[k]];
            for (uint32_t o = 0; o < it->n_offerings; o++)
                if (it->offerings[o].capacity_type == KP_SYM_ON_DEMAND && it->offerings[o].price > worst)
                    worst = it->offerings[o].price;
        }
        total += worst;
    }
    return total;
}

Test(split, spread_replicas_leave_one_node_for_three_small_ones)
{
    sc c;
    sc_init(&c, true);
    spread_on_one_node(&c, 3, NULL);
    kp_scenario *s = plan_split(&c, 3);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 3);
    const kp_disrupt_command *cmd = command_at(s, 0);
    cr_expect_eq(cmd->decision, KP_DISRUPT_REPLACE);
    cr_expect_str_eq(cmd->reason, "Underutilized");
    for (uint32_t i = 0; i < 3; i++)
        cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, i), "small");
    cr_expect_float_eq(cmd->savings_hourly, 0.80 - 3 * 0.10, 1e-9);
    /* Whatever the launches pick, the three cost less than the node. */
    cr_expect_lt(worst_total(s, 0), 0.80);
    sc_free(&c);
}

Test(split, off_it_is_karpenters_answer)
{
    sc c;
    sc_init(&c, true);
    spread_on_one_node(&c, 3, NULL);
    kp_scenario *s = plan_split(&c, 1);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    const kp_disrupt_blocked *b = blocked_of(s, "a");
    cr_assert_not_null(b);
    cr_expect_eq(b->kind, KP_BLOCK_NEEDS_SEVERAL);
    cr_expect_str_eq(b->event_reason, "Unconsolidatable");
    cr_expect_str_eq(b->message, "Can't remove without creating 3 candidates");
    sc_free(&c);
}

Test(split, no_more_nodes_than_split_max)
{
    sc c;
    sc_init(&c, true);
    spread_on_one_node(&c, 4, NULL);
    kp_scenario *s = plan_split(&c, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(blocked_of(s, "a")->kind, KP_BLOCK_NEEDS_SEVERAL);
    sc_free(&c);
    sc_init(&c, true);
    spread_on_one_node(&c, 4, NULL);
    s = plan_split(&c, 4);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(kp_scenario_command_replacements(s, 0), 4);
    sc_free(&c);
}

Test(split, pods_that_fit_no_cheaper_node_together_fit_two)
{
    sc c;
    sc_init(&c, true);
    /* 14 + 6 CPUs need a 2xlarge together, an xlarge and a large ($1.20) apart. */
    one_2xlarge(&c, (const char *const[]){"14", "6", NULL});
    kp_scenario *s = plan_split(&c, 3);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 2);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 1.60 - 0.80 - 0.40, 1e-9);
    cr_expect_lt(worst_total(s, 0), 1.60);
    sc_free(&c);
}

Test(split, never_when_the_nodes_would_cost_as_much)
{
    sc c;
    sc_init(&c, true);
    /* Three 9-CPU pods: one per xlarge, $2.40 for a $1.60 node. */
    one_2xlarge(&c, (const char *const[]){"9", "9", "9", NULL});
    kp_scenario *s = plan_split(&c, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    const kp_disrupt_blocked *b = blocked_of(s, "a");
    cr_assert_not_null(b);
    cr_expect_eq(b->kind, KP_BLOCK_NEEDS_SEVERAL, "%s", b->reason);
    cr_expect_str_eq(b->reason, "its pods would need 3 new NodeClaims costing $2.4000/hour, it costs $1.6000/hour");
    sc_free(&c);
    /* 15 + 15: two xlarges cost what the node does. */
    sc_init(&c, true);
    one_2xlarge(&c, (const char *const[]){"15", "15", NULL});
    s = plan_split(&c, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(kp_scenario_disrupted_by(s, "a"), -1);
    sc_free(&c);
}

Test(split, within_the_budget)
{
    sc c;
    sc_init(&c, true);
    spread_on_one_node(&c, 3, "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, "
                              "budgets: [{nodes: '0'}]");
    kp_scenario *s = plan_split(&c, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(blocked_of(s, "a")->kind, KP_BLOCK_BUDGET);
    sc_free(&c);
}

Test(split, a_spot_node_is_not_split)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", BOTH, NULL);
    node(&c, "a", N(.type = "xlarge", .ct = "spot"));
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        pod_full(&c, name, "a", "1", NULL, NULL, HOST_SPREAD);
    }
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    o.spot_to_spot = true;
    kp_scenario *s = plan_opts(&c, &o);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    sc_free(&c);
}

Test(split, balanced_scores_the_split)
{
    sc c;
    sc_init(&c, true);
    /* One node, one pool: savings 0.5 of 0.8 against all of the disruption:
     * 0.625, approved. */
    spread_on_one_node(&c, 3, BALANCED);
    kp_scenario *s = plan_split(&c, 3);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    const kp_disrupt_command *cmd = command_at(s, 0);
    cr_assert_eq(cmd->n_scores, 1);
    cr_expect(cmd->scores[0].scored && cmd->scores[0].approved);
    cr_expect_float_eq(cmd->scores[0].score, 0.5 / 0.8, 1e-9);
    sc_free(&c);
}
