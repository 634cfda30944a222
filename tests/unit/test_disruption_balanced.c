/*
 * consolidationPolicy: Balanced (Karpenter v1.14, balanced.go,
 * balanced_test.go, balanced_scoring_test.go, designs/balanced-consolidation.md):
 * a consolidation is approved when (savings / NodePool cost) / (disruption /
 * NodePool disruption cost) >= 1/k, k = 2; the scores travel on the command
 * (ConsolidationApproved) or on the node kept (no event: metrics only), and
 * every move is listed for karpenter_consolidation_moves_total.
 *
 * The catalog: five sizes doubling in CPU, memory and price (small 2 CPU
 * $0.10 ... 2xlarge 32 CPU $1.60), on-demand and spot.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers/scenario.h"
#include "disruption_scenarios.h"

/* ---------- Karpenter's ScoreMove ---------- */

typedef struct score_case {
    double savings, disruption, pool_cost, pool_disruption;
    int k;
    double score;
    bool approved, infinite;
} score_case;

/* balanced_scoring_test.go's table (totals 100/100), then balanced_test.go's
 * RFC pool: eight m7i.xlarge and two m7i.2xlarge, $58.08/day, 80 pods. */
static const score_case score_cases[] = {
    {20.0, 5.0, 100, 100, 2, 4.0, true, false},
    {10.0, 10.0, 100, 100, 2, 1.0, true, false},
    {5.0, 50.0, 100, 100, 2, 0.10, false, false},
    {10.0, 0.0, 100, 100, 2, 0, true, true},
    {0.0, 10.0, 100, 100, 2, 0, false, false},
    {-5.0, 10.0, 100, 100, 2, 0, false, false},
    {7.26, 4.0, 58.08, 90, 2, (7.26 / 58.08) / (4.0 / 90), true, false},  /* oversized node */
    {4.84, 5.0, 58.08, 90, 2, (4.84 / 58.08) / (5.0 / 90), true, false},  /* spare capacity */
    {2.42, 9.0, 58.08, 90, 2, (2.42 / 58.08) / (9.0 / 90), false, false}, /* marginal */
    {2.42, 9.0, 58.08, 90, 3, (2.42 / 58.08) / (9.0 / 90), true, false},  /* the same at k = 3 */
    {2.42, 9.0, 58.08, 90, 1, (2.42 / 58.08) / (9.0 / 90), false, false}, /* and k = 1 */
    {2.42, 9.0, 48.40, 90, 2, (2.42 / 48.40) / (9.0 / 90), true, false},  /* a uniform pool */
    {4.84, 32.0, 58.08, 117, 2, (4.84 / 58.08) / (32.0 / 117), false, false}, /* high disruption */
    {4.84, 5.0, 0, 90, 2, 0, false, false},                               /* no pool cost */
    {0.0, 0.0, 58.08, 90, 2, 0, false, false},
};

ParameterizedTestParameters(balanced_score, karpenters_table)
{
    static size_t idx[sizeof(score_cases) / sizeof(score_cases[0])];
    for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, sizeof(idx) / sizeof(idx[0]));
}

ParameterizedTest(size_t *i, balanced_score, karpenters_table)
{
    const score_case *k = &score_cases[*i];
    kp_disrupt_score s = kp_disrupt_score_move(k->savings, k->disruption, k->pool_cost, k->pool_disruption, k->k);
    if (k->infinite)
        cr_expect(isinf(s.score) && s.score > 0, "case %zu: %f", *i, s.score);
    else
        cr_expect_float_eq(s.score, k->score, 1e-9, "case %zu: %f", *i, s.score);
    cr_expect_eq(s.approved, k->approved, "case %zu", *i);
    cr_expect_float_eq(s.threshold, 1.0 / k->k, 1e-12);
    cr_expect(s.scored);
}

Test(balanced_score, scale_invariance)
{
    kp_disrupt_score small = kp_disrupt_score_move(7.26, 4.0, 58.08, 90, 2);
    kp_disrupt_score big = kp_disrupt_score_move(7.26 * 10, 4.0 * 10, 580.8, 900, 2);
    cr_expect_float_eq(small.score, big.score, 1e-9);
}

/* ---------- scenarios ---------- */

/* Three xlarge nodes full to the last 50m (11 pods of 1450m): none can move,
 * each costs 1 + 11 in disruption. */
static void full_xlarges(sc *c, const char *pool_name)
{
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "x%d", i);
        node(c, name, N(.type = "xlarge", .pool = pool_name));
        for (int k = 0; k < 11; k++) {
            char pod_name[24];
            snprintf(pod_name, sizeof(pod_name), "%s-%d", name, k);
            pod(c, pod_name, name, "1450m");
        }
    }
}

/* a: a large node (8 CPU, $0.40) running 6 pods of 500m: a medium ($0.20)
 * would do. Pool: $0.40 + 3 x $0.80 = $2.80; disruption 7 + 36 = 43. Even
 * deleting a scores (0.4/2.8)/(7/43) = 0.88; replacing it saves half of that:
 * 0.44, below 0.5. */
static void marginal(sc *c, const char *disruption)
{
    pool(c, "default", OD_ONLY, disruption);
    full_xlarges(c, NULL);
    node(c, "a", N(.type = "large"));
    for (int k = 0; k < 6; k++) {
        char pod_name[16];
        snprintf(pod_name, sizeof(pod_name), "a-%d", k);
        pod(c, pod_name, "a", "500m");
    }
}

Test(balanced_scenario, a_marginal_replace_is_rejected)
{
    sc c;
    sc_init(&c, true);
    marginal(&c, BALANCED);
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    const kp_disrupt_blocked *b = blocked_of(s, "a");
    cr_assert_not_null(b);
    cr_expect_eq(b->kind, KP_BLOCK_BALANCED, "%s", kp_disrupt_block_name(b->kind));
    cr_expect_str_eq(b->object, "default");
    cr_expect_null(b->event_reason, "Karpenter writes no event for a rejection");
    cr_expect_null(b->score->event_reason);
    cr_expect_str_eq(b->message, "score 0.44 < threshold 0.50 (k: 2, savings 7.1%, disruption 16.3%)");
    cr_assert_not_null(b->score);
    cr_expect(b->score->scored && !b->score->approved);
    cr_expect_float_eq(b->score->savings_fraction, 0.2 / 2.8, 1e-9);
    cr_expect_float_eq(b->score->disruption_fraction, 7.0 / 43.0, 1e-9);
    cr_expect_str_eq(b->score->policy, "Balanced");
    /* Counted as a rejected single-node move. */
    bool counted = false;
    for (uint32_t i = 0; i < s->disruption->n_moves; i++) {
        const kp_disrupt_move *m = &s->disruption->moves[i];
        counted |= !m->approved && strcmp(m->consolidation_type, "single") == 0 && m->score->scored;
    }
    cr_expect(counted, "no rejected move listed");
    sc_free(&c);
}

Test(balanced_scenario, the_same_move_under_when_empty_or_underutilized_goes)
{
    sc c;
    sc_init(&c, true);
    marginal(&c, UNDERUTILIZED);
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "medium");
    /* Scored per NodePool only where the policy is Balanced. */
    const kp_disrupt_command *cmd = command_at(s, 0);
    cr_assert_eq(cmd->n_scores, 1);
    cr_expect(!cmd->scores[0].scored && cmd->scores[0].approved);
    cr_expect_str_eq(cmd->scores[0].policy, "WhenEmptyOrUnderutilized");
    cr_expect_null(cmd->scores[0].event_reason);
    sc_free(&c);
}

Test(balanced_scenario, an_oversized_node_is_approved)
{
    sc c;
    sc_init(&c, true);
    /* b: a 2xlarge ($1.60) running 3 pods of 1 CPU: a medium ($0.20) does.
     * Pool $4.00, disruption 4 + 36 = 40: (1.4/4)/(4/40) = 3.5. */
    pool(&c, "default", OD_ONLY, BALANCED);
    full_xlarges(&c, NULL);
    node(&c, "b", N(.type = "2xlarge"));
    pod(&c, "b-0", "b", "1");
    pod(&c, "b-1", "b", "1");
    pod(&c, "b-2", "b", "1");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 1);
    const kp_disrupt_command *cmd = command_at(s, 0);
    cr_assert_eq(cmd->n_scores, 1);
    const kp_disrupt_score *sc0 = &cmd->scores[0];
    cr_expect(sc0->scored && sc0->approved);
    cr_expect_float_eq(sc0->score, 3.5, 1e-9);
    cr_expect_eq(sc0->k, 2);
    cr_expect_str_eq(sc0->event_reason, "ConsolidationApproved");
    cr_expect_str_eq(sc0->message, "score 3.50 >= threshold 0.50 (k: 2, savings 35.0%, disruption 10.0%)");
    cr_expect_str_eq(sc0->policy, "Balanced");
    cr_expect_str_eq(s->snap->templates[sc0->template_index].name, "default");
    sc_free(&c);
}

Test(balanced_scenario, a_node_even_deleting_would_not_pay_for_is_not_simulated)
{
    sc c;
    sc_init(&c, true);
    /* c's six pods carry the highest deletion cost (10 each): deleting it
     * would score (0.4/2.8)/(61/97) = 0.23. */
    pool(&c, "default", OD_ONLY, BALANCED);
    full_xlarges(&c, NULL);
    node(&c, "c", N(.type = "large"));
    for (int k = 0; k < 6; k++) {
        char pod_name[16];
        snprintf(pod_name, sizeof(pod_name), "c-%d", k);
        pod_full(&c, pod_name, "c", "500m", NULL,
                 ", annotations: {controller.kubernetes.io/pod-deletion-cost: '2147483647'}", NULL);
    }
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    const kp_disrupt_blocked *b = blocked_of(s, "c");
    cr_assert_not_null(b);
    cr_expect_eq(b->kind, KP_BLOCK_BALANCED);
    cr_expect_str_eq(b->reason, "Balanced: even deleting it scores 0.23, below 0.50");
    cr_expect_str_eq(b->message, "score 0.23 < threshold 0.50 (k: 2, savings 14.3%, disruption 62.9%)");
    sc_free(&c);
}

Test(balanced_scenario, a_multi_node_move_is_scored_for_its_nodepool)
{
    sc c;
    sc_init(&c, true);
    /* Three xlarge nodes with a 1-CPU pod each become one medium: savings
     * 2.2 of 2.4, disruption 6 of 6: 0.92. */
    pool(&c, "default", OD_ONLY, BALANCED);
    nodes_with_a_pod(&c, "n", 3, N(.type = "xlarge"), "1");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "n0,n1,n2", 1);
    const kp_disrupt_command *cmd = command_at(s, 0);
    cr_assert_eq(cmd->n_scores, 1);
    cr_expect(cmd->scores[0].approved);
    cr_expect_float_eq(cmd->scores[0].score, (2.2 / 2.4) / 1.0, 1e-9);
    cr_expect_str_eq(cmd->consolidation_type, "multi");
    cr_assert_eq(s->disruption->n_moves, 1);
    cr_expect_str_eq(s->disruption->moves[0].consolidation_type, "multi");
    cr_expect(s->disruption->moves[0].approved);
    sc_free(&c);
}

Test(balanced_scenario, empty_nodes_go_whatever_the_score)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, BALANCED);
    full_xlarges(&c, NULL);
    node(&c, "e", N(.type = "small"));
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "emptiness", "e", 0);
    cr_expect_eq(command_at(s, 0)->n_scores, 0);
    sc_free(&c);
}

Test(balanced_scenario, a_move_across_nodepools_shares_its_savings)
{
    sc c;
    sc_init(&c, true);
    /* One xlarge in a Balanced pool, one in a WhenEmptyOrUnderutilized pool,
     * a 1-CPU pod each: together onto one small node. Karpenter scores each
     * Balanced pool with its share of the savings (by its share of the
     * candidates' price): half of 1.6 - 0.1. */
    pool(&c, "a", OD_ONLY, BALANCED);
    pool(&c, "b", OD_ONLY, UNDERUTILIZED);
    node(&c, "a0", N(.type = "xlarge", .pool = "a"));
    node(&c, "b0", N(.type = "xlarge", .pool = "b"));
    pod(&c, "pa", "a0", "1");
    pod(&c, "pb", "b0", "1");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "multi-node consolidation", "a0,b0", 1);
    const kp_disrupt_command *cmd = command_at(s, 0);
    cr_assert_eq(cmd->n_scores, 2);
    for (uint32_t i = 0; i < 2; i++) {
        const kp_disrupt_score *sc0 = &cmd->scores[i];
        if (strcmp(s->snap->templates[sc0->template_index].name, "a") == 0) {
            cr_expect(sc0->scored && sc0->approved);
            cr_expect_float_eq(sc0->savings, (1.6 - 0.1) / 2, 1e-9);
            cr_expect_float_eq(sc0->savings_fraction, 0.75 / 0.8, 1e-9);
            cr_expect_float_eq(sc0->disruption_fraction, 1.0, 1e-9);
        } else {
            cr_expect(!sc0->scored && sc0->approved);
            cr_expect_str_eq(sc0->policy, "WhenEmptyOrUnderutilized");
        }
    }
    sc_free(&c);
}
