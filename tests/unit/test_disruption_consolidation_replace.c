/*
 * Consolidation: delete or replace, and what a replacement may be
 * (Karpenter's consolidation_test.go "Replace" and "Delete", and
 * computeConsolidation / computeSpotToSpotConsolidation in consolidation.go):
 * a node whose pods fit elsewhere is deleted; otherwise it is replaced only by
 * one cheaper NodeClaim; spot is replaced by spot only with the
 * SpotToSpotConsolidation feature and 15 cheaper spot types (the 15 cheapest
 * then being the launch's options); on-demand is replaced by spot when the
 * NodePool allows both.
 *
 * The catalog is small and known: five sizes doubling in CPU, memory and
 * price, each offered on-demand and as spot (40% of on-demand) in three zones.
 * The NodePool consolidates WhenEmptyOrUnderutilized at once with a 100%
 * budget unless a case says otherwise, as in Karpenter's BeforeEach.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"
#include "helpers/assert.h"

/* ---------- the catalog ---------- */

/* A node without the karpenter.sh/nodepool label: room Karpenter does not own. */
static void unmanaged(sc *c, const char *name, int cpu)
{
    add(c,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, creationTimestamp: '" OLD
        "', labels: {"
        "node.kubernetes.io/instance-type: other, topology.kubernetes.io/zone: test-zone-1a, "
        "kubernetes.io/hostname: %s, kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n"
        "spec: {providerID: 'fake:///%s'}\n"
        "status: {allocatable: {cpu: '%d', memory: 64Gi, pods: '110'}, conditions: [{type: Ready, "
        "status: 'True'}]}\n",
        name, name, name, cpu);
}

/* `n` spot-only types "s00".. of 8 CPUs, priced 1.00, 1.10, ... in order;
 * `cheap`, when >= 0, is priced 0.001 instead (cheapest of all, though late
 * in the list). */
static void spot_types(sc *c, int n, int cheap)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%02d", i);
        catalog_type(&c->catalog, name, 8, 16, 0, i == cheap ? 0.001 : 1.0 + 0.1 * i);
    }
}

/* A spot node of type `type` (from spot_types) with one small pod. */
static void spot_node_with_a_pod(sc *c, const char *type)
{
    add(c,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: '" OLD
        "', labels: {"
        "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
        "karpenter.sh/initialized: 'true', "
        "node.kubernetes.io/instance-type: %s, topology.kubernetes.io/zone: test-zone-1a, "
        "karpenter.sh/capacity-type: spot, kubernetes.io/hostname: a, kubernetes.io/arch: amd64, "
        "kubernetes.io/os: linux}}\nspec: {providerID: 'fake:///a'}\n"
        "status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}, conditions: [{type: Ready, "
        "status: 'True'}]}\n",
        type);
    pod(c, "p", "a", "500m");
}

/* ---------- replace ---------- */

Test(consolidation_replace, on_demand_node_gets_a_cheaper_on_demand_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    cr_expect_str_eq(replacement_ct(s, 0), "on-demand");
    cr_expect_not(replacement_offers(s, 0, "xlarge"),
                  "the replacement may launch as the node's own type");
    cr_expect_float_eq(s->disruption->commands[0].savings_hourly, 0.80 - 0.10, 1e-9);
    sc_free(&c);
}

Test(consolidation_replace, every_replacement_option_is_cheaper_than_the_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "3"); /* needs medium (4 CPUs) or larger */
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    const kp_plan_claim *r = replacement(s, 0);
    cr_expect_eq(r->n_its, 2, "medium and large are cheaper than xlarge and fit: %u options",
                 r->n_its);
    cr_expect(replacement_offers(s, 0, "medium") && replacement_offers(s, 0, "large"));
    cr_expect_not(replacement_offers(s, 0, "small"), "small cannot hold 3 CPUs");
    cr_expect_not(replacement_offers(s, 0, "xlarge") || replacement_offers(s, 0, "2xlarge"));
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "medium");
    sc_free(&c);
}

Test(consolidation_replace, no_cheaper_type_keeps_the_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan1(&c, true);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_replace, pods_that_need_the_whole_node_keep_it)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large"));
    pod(&c, "p", "a", "5");
    pod(&c, "q", "a", "2");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_replace, on_demand_goes_to_spot_when_the_nodepool_allows_both)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", BOTH, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    /* Filtered by the spot price it assumes, so it is pinned to spot: should
     * spot be short, the launch fails rather than buying dearer on-demand. */
    cr_expect_str_eq(replacement_ct(s, 0), "spot");
    const kp_requirement *ct = kp_requirements_get(
        &replacement(s, 0)->reqs, kp_sym_lookup(s->snap->symtab, "karpenter.sh/capacity-type"));
    cr_assert_not_null(ct);
    cr_expect_not(
        kp_requirement_has(s->snap->symtab, ct, kp_sym_lookup(s->snap->symtab, "on-demand")),
        "the replacement may still launch on-demand");
    cr_expect_float_eq(s->disruption->commands[0].savings_hourly, 0.80 - 0.04, 1e-9);
    sc_free(&c);
}

Test(consolidation_replace, on_demand_replacement_dearer_than_the_node_is_refused)
{
    sc c;
    sc_init(&c, false);
    /* Karpenter's case: the node's own offering (0.5) is no longer available;
     * the only other type costs 0.6 on-demand (0.2/0.3 as spot, which the
     * on-demand NodePool cannot use). */
    KP_ASSERT_OK(kp_buf_puts(&c.catalog,
                "{\"name\":\"large\",\"capacity\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":"
                "\"110\"},\"offerings\":["
                "{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.5,"
                "\"available\":false}]},"
                "{\"name\":\"other\",\"capacity\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":"
                "\"110\"},\"offerings\":["
                "{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.6},"
                "{\"zone\":\"test-zone-1b\",\"capacityType\":\"on-demand\",\"price\":0.6},"
                "{\"zone\":\"test-zone-1b\",\"capacityType\":\"spot\",\"price\":0.2},"
                "{\"zone\":\"test-zone-1c\",\"capacityType\":\"spot\",\"price\":0.3}]}"));
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_replace, replacement_whose_dearest_spot_offering_costs_more_is_refused)
{
    sc c;
    sc_init(&c, false);
    /* The replacement's spot offerings cost 1.0, 0.2 and 0.4 by zone: the
     * launch may get any of them, so it is judged at 1.0 against the node's 0.5. */
    KP_ASSERT_OK(kp_buf_puts(&c.catalog,
                "{\"name\":\"large\",\"capacity\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":"
                "\"110\"},\"offerings\":["
                "{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.5,"
                "\"available\":false}]},"
                "{\"name\":\"other\",\"capacity\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":"
                "\"110\"},\"offerings\":["
                "{\"zone\":\"test-zone-1a\",\"capacityType\":\"spot\",\"price\":1.0},"
                "{\"zone\":\"test-zone-1b\",\"capacityType\":\"spot\",\"price\":0.2},"
                "{\"zone\":\"test-zone-1c\",\"capacityType\":\"spot\",\"price\":0.4}]}"));
    pool(&c, "default", BOTH, NULL);
    node(&c, "a", N(.type = "large"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(kp_scenario_disrupted_by(s, "a"), -1);
    cr_expect_not_null(kp_scenario_blocked_reason(s, "a"));
    sc_free(&c);
}

Test(consolidation_replace, another_nodepool_without_instance_types_does_not_matter)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    pool(&c, "nothing",
         "{key: node.kubernetes.io/instance-type, operator: In, values: [does-not-exist]}", NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

/* ---------- spot to spot ---------- */

Test(consolidation_spot, spot_node_gets_the_15_cheapest_spot_types)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, -1);
    pool(&c, "default", BOTH, NULL);
    spot_node_with_a_pod(&c, "s17");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(replacement_ct(s, 0), "spot");
    cr_expect_eq(replacement(s, 0)->n_its, 15, "%u options", replacement(s, 0)->n_its);
    cr_expect(replacement_offers(s, 0, "s00") && replacement_offers(s, 0, "s14"));
    cr_expect_not(replacement_offers(s, 0, "s15") || replacement_offers(s, 0, "s16") ||
                  replacement_offers(s, 0, "s17"));
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "s00");
    cr_expect_float_eq(s->disruption->commands[0].savings_hourly, 2.7 - 1.0, 1e-9);
    sc_free(&c);
}

Test(consolidation_spot, feature_off_keeps_the_spot_node)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, -1);
    pool(&c, "default", BOTH, NULL);
    spot_node_with_a_pod(&c, "s17");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "SpotToSpotConsolidation");
    sc_free(&c);
}

Test(consolidation_spot, fewer_than_15_cheaper_types_keep_the_node)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 5, -1);
    pool(&c, "default", BOTH, NULL);
    spot_node_with_a_pod(&c, "s04");
    kp_scenario *s = plan1(&c, true);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "15");
    expect_kept(s, "a", "found 4");
    sc_free(&c);
}

Test(consolidation_spot, node_among_the_15_cheapest_stays)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 20, -1);
    pool(&c, "default", BOTH, NULL);
    spot_node_with_a_pod(&c, "s01"); /* only s00 is cheaper */
    kp_scenario *s = plan1(&c, true);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "found 1");
    sc_free(&c);
}

Test(consolidation_spot, exactly_15_cheaper_types_are_enough)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 16, -1);
    pool(&c, "default", BOTH, NULL);
    spot_node_with_a_pod(&c, "s15");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 15);
    cr_expect_not(replacement_offers(s, 0, "s15"));
    sc_free(&c);
}

Test(consolidation_spot, options_are_ordered_by_price_before_the_cut)
{
    sc c;
    sc_init(&c, false);
    /* s16 is the cheapest of all though listed late: it must be among the 15,
     * and s14, then the 16th cheapest, must not. */
    spot_types(&c, 18, 16);
    pool(&c, "default", BOTH, NULL);
    spot_node_with_a_pod(&c, "s17");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 15);
    cr_expect(replacement_offers(s, 0, "s16"), "the cheapest type was cut");
    cr_expect(replacement_offers(s, 0, "s13"));
    cr_expect_not(replacement_offers(s, 0, "s14"));
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "s16");
    sc_free(&c);
}

Test(consolidation_spot, min_values_below_15_keeps_the_default_cut)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, 16);
    pool(&c, "default",
         BOTH ", {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 2}", NULL);
    spot_node_with_a_pod(&c, "s17");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 15, "%u options", replacement(s, 0)->n_its);
    cr_expect(replacement_offers(s, 0, "s16"));
    sc_free(&c);
}

Test(consolidation_spot, price_filter_that_breaks_min_values_keeps_the_node)
{
    sc c;
    sc_init(&c, false);
    /* s15 has exactly 15 cheaper types, but the NodePool wants 16 to choose from. */
    spot_types(&c, 18, -1);
    pool(&c, "default",
         BOTH ", {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 16}", NULL);
    spot_node_with_a_pod(&c, "s15");
    kp_scenario *s = plan1(&c, true);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(kp_scenario_disrupted_by(s, "a"), -1);
    sc_free(&c);
}

Test(consolidation_spot, on_demand_price_filter_that_breaks_min_values_keeps_the_node)
{
    sc c;
    sc_init(&c, false);
    for (int i = 0; i < 18; i++) {
        char name[16];
        snprintf(name, sizeof(name), "d%02d", i);
        catalog_type(&c.catalog, name, 8, 16, 1.0 + 0.1 * i, 0);
    }
    pool(&c, "default",
         OD_ONLY ", {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 16}",
         NULL);
    node(&c, "a", N(.type = "large", .type_label = "d15"));
    pod(&c, "p", "a", "500m");
    kp_scenario *s = plan1(&c, true);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(kp_scenario_disrupted_by(s, "a"), -1);
    sc_free(&c);
}

/* ---------- delete ---------- */

Test(consolidation_delete, node_whose_pods_fit_elsewhere_is_deleted)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small"));
    pod(&c, "p0", "a", "500m");
    pod(&c, "p1", "a", "500m");
    pod(&c, "p2", "b", "500m");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* b has one pod to move, a two: b is cheaper to disrupt. */
    expect_command(s, 0, "single-node consolidation", "b", 0);
    cr_expect_float_eq(s->disruption->commands[0].savings_hourly, 0.10, 1e-9);
    cr_expect_not_null(kp_scenario_blocked_reason(s, "a"));
    sc_free(&c);
}

Test(consolidation_delete, deletion_is_preferred_to_a_cheaper_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    node(&c, "b", N(.type = "large"));
    pod(&c, "p0", "a", "12"); /* a needs its size: it comes first in savings order, and stays */
    pod(&c, "p1", "b", "1");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* b's pod fits in a's spare 4 CPUs: deleting b saves all of b, more than
     * replacing it with a small node would. */
    expect_command(s, 0, "single-node consolidation", "b", 0);
    cr_expect_float_eq(s->disruption->commands[0].savings_hourly, 0.40, 1e-9);
    sc_free(&c);
}

Test(consolidation_delete, unmanaged_capacity_can_take_the_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    unmanaged(&c, "u", 32);
    node(&c, "a", N(.type = "small"));
    pod(&c, "p0", "a", "500m");
    pod(&c, "p1", "a", "500m");
    pod(&c, "p2", "a", "500m");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 0);
    cr_expect_null(kp_scenario_blocked_reason(s, "u"), "unmanaged nodes are not explained");
    sc_free(&c);
}

Test(consolidation_delete, a_permanently_pending_pod_does_not_block)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small"));
    pod(&c, "p0", "a", "500m");
    pod(&c, "p1", "a", "500m");
    pod(&c, "p2", "b", "500m");
    pod_full(&c, "stuck", NULL, "500m", NULL, NULL, ", nodeSelector: {non-existent: node-label}");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    sc_free(&c);
}

Test(consolidation_delete, a_running_pod_that_would_go_pending_blocks)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small", .labels = ", foo: '1'"));
    node(&c, "b", N(.type = "small", .labels = ", foo: '2'"));
    pod_full(&c, "p0", "a", "500m", NULL, NULL, ", nodeSelector: {foo: '1'}");
    pod_full(&c, "p1", "a", "500m", NULL, NULL, ", nodeSelector: {foo: '1'}");
    pod_full(&c, "p2", "b", "500m", NULL, NULL, ", nodeSelector: {foo: '2'}");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "nowhere to go");
    expect_kept(s, "b", "default/p2");
    sc_free(&c);
}

Test(consolidation_delete, pods_may_not_move_to_an_uninitialized_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge", .uninitialized = true));
    node(&c, "b", N(.type = "small"));
    pod(&c, "p0", "a", "500m");
    pod(&c, "p1", "a", "500m");
    pod(&c, "p2", "b", "500m");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "b", "not initialized");
    expect_kept(s, "a", "not initialized");
    sc_free(&c);
}

Test(consolidation_delete, initialized_room_is_used_before_uninitialized_room)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Several uninitialized nodes with room, one initialized: the pod of the
     * small node "z" can go to the initialized one, so it is deleted. */
    node(&c, "u1", N(.type = "large", .uninitialized = true));
    node(&c, "u2", N(.type = "large", .uninitialized = true));
    node(&c, "i1", N(.type = "large"));
    node(&c, "z", N(.type = "small"));
    pod(&c, "a1", "u1", "6");
    pod(&c, "a2", "u2", "6");
    pod(&c, "a3", "i1", "6");
    pod(&c, "zz", "z", "1");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "z", 0);
    sc_free(&c);
}
