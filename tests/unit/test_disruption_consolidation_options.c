/*
 * Consolidation: the replacement's options and requirements
 * (spot-to-spot with minValues, requirements narrowed to the options the
 * price filter kept, reserved capacity), what the planner leaves in the
 * snapshot, and a Node without a NodeClaim (where we deliberately differ).
 * Each case names the Karpenter reference it follows.
 *
 * The catalog is disruption_scenarios.h's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"
#include "helpers/assert.h"

/* ---------- the catalog ---------- */

/* `n` spot-only types "s00".. of 8 CPUs, priced 1.00, 1.10, ... in order;
 * `cheap`, when >= 0, is priced 0.001 instead. */
static void spot_types(sc *c, int n, int cheap)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%02d", i);
        catalog_type(&c->catalog, name, 8, 16, 0, i == cheap ? 0.001 : 1.0 + 0.1 * i);
    }
}

/* How many types the replacement's instance-type requirement names; fails
 * the test when it names `must_not_have`. */
static uint32_t replacement_type_requirement(const kp_scenario *s, uint32_t i,
                                             const char *must_not_have)
{
    const kp_plan_claim *c = replacement(s, i);
    const kp_requirement *r = kp_requirements_get(
        &c->reqs, kp_sym_lookup(s->snap->symtab, "node.kubernetes.io/instance-type"));
    cr_assert_not_null(r, "the replacement has no instance-type requirement");
    if (must_not_have)
        cr_expect_not(
            kp_requirement_has(s->snap->symtab, r, kp_sym_lookup(s->snap->symtab, must_not_have)),
            "the replacement may still launch as %s: %s", must_not_have,
            kp_requirement_string(s->snap->symtab, s->arena, r));
    return r->n_values;
}

/*
 * 1. Spot-to-spot keeps more than 15 options when minValues needs them.
 * Karpenter: consolidation.go computeSpotToSpotConsolidation, "if
 * results.NewNodeClaims[0].Requirements.HasMinValues()" keeps
 * max(15, the cheapest options minValues needs); consolidation_test.go:1357
 * ("...minValues in requirement is greater than 15") expects 16 options.
 */
Test(consolidation_spot, spot_to_spot_min_values_above_15_widens_the_cut)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, 16);
    pool(&c, "default",
         BOTH ", {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 16}", NULL);
    node(&c, "a", N(.type = "large", .type_label = "s17", .ct = "spot"));
    pod(&c, "p", "a", "500m");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 16, "%u options", replacement(s, 0)->n_its);
    cr_expect(replacement_offers(s, 0, "s16") && replacement_offers(s, 0, "s14"));
    sc_free(&c);
}

/*
 * 2. The replacement's requirements allow only the types the price filter
 * kept. Karpenter creates the replacement NodeClaim from its
 * InstanceTypeOptions (nodeclaimtemplate.go ToNodeClaim: instance-type In
 * the options, after RemoveInstanceTypeOptionsByPriceAndMinValues and the
 * spot-to-spot cut), so a launch can only pick a cheaper type, never the
 * node's own type or a dearer one.
 */
Test(consolidation_replace, replacement_requirements_allow_only_cheaper_types)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "2xlarge"));
    pod(&c, "p", "a", "5");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 2, "large and xlarge are cheaper than 2xlarge");
    uint32_t n = replacement_type_requirement(s, 0, "2xlarge");
    cr_expect_eq(n, replacement(s, 0)->n_its, "the requirement names %u types, the options are %u",
                 n, replacement(s, 0)->n_its);
    sc_free(&c);
}

Test(consolidation_spot, spot_to_spot_requirements_name_the_15_options)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, -1);
    pool(&c, "default", BOTH, NULL);
    node(&c, "a", N(.type = "large", .type_label = "s17", .ct = "spot"));
    pod(&c, "p", "a", "500m");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 15);
    uint32_t n = replacement_type_requirement(s, 0, "s17");
    cr_expect_eq(n, 15, "the requirement names %u types", n);
    sc_free(&c);
}

/*
 * 3. A spot node moves into reserved capacity.
 * Karpenter (ReservedCapacity on by default, options.go): the scheduler pins a
 * NodeClaim that holds reserved offerings to capacity-type reserved
 * (nodeclaim.go FinalizeScheduling), so computeConsolidation does not take
 * the spot-to-spot path and the spot node is replaced by its own type,
 * reserved, with or without SpotToSpotConsolidation: consolidation_test.go:4887
 * "can consolidate into reserved capacity for the same instance pool", Entry
 * "from spot".
 */
static void spot_and_reservation(sc *c)
{
    KP_ASSERT_OK(kp_buf_puts(
        &c->catalog,
        "{\"name\":\"xlarge\",\"capacity\":{\"cpu\":\"16\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.8},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"spot\",\"price\":0.32},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"reserved\",\"price\":0.0000008}]}"));
    pool(c, "default", "{key: karpenter.sh/capacity-type, operator: In, values: [spot, reserved]}",
         NULL);
    node(c, "a", N(.type = "xlarge", .ct = "spot"));
    pod(c, "p", "a", "1");
}

Test(consolidation_reserved, spot_moves_into_reserved_capacity)
{
    sc c;
    sc_init(&c, false);
    spot_and_reservation(&c);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1, "kept: %s", kp_scenario_blocked_reason(s, "a"));
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(replacement_ct(s, 0), "reserved");
    sc_free(&c);
}

Test(consolidation_reserved, spot_moves_into_reserved_capacity_with_spot_to_spot_on)
{
    sc c;
    sc_init(&c, false);
    spot_and_reservation(&c);
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1, "kept: %s", kp_scenario_blocked_reason(s, "a"));
    cr_expect_str_eq(replacement_ct(s, 0), "reserved");
    sc_free(&c);
}

/*
 * 4. What kp_disruption_plan_compute leaves in the snapshot (disruption.h):
 * the nodes the commands take away stay in snap->nodes, so the indices in
 * the commands and the blocked list stay valid for the caller (simulate
 * prints names by them; the controller executes the first command by them),
 * and the pods they held point at the nodes the simulation moved them to.
 * (No Karpenter counterpart: this is our interface.)
 */
static const char *pod_node(const kp_scenario *s, const char *ns_name)
{
    for (uint32_t i = 0; i < s->snap->n_pods; i++)
        if (strcmp(s->snap->pods[i].ns_name, ns_name) == 0 && s->snap->pods[i].node >= 0)
            return s->snap->nodes[s->snap->pods[i].node].name;
    return NULL;
}

Test(consolidation_snapshot, the_planned_snapshot_keeps_the_nodes_and_moves_the_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small"));
    pod(&c, "pa", "a", "500m");
    pod(&c, "pb", "b", "500m");
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    const kp_disrupt_command *cmd = &s->disruption->commands[0];
    cr_assert_eq(cmd->n_candidates, 1);
    cr_expect_eq(s->snap->n_nodes, 2, "%u nodes", s->snap->n_nodes);
    cr_assert_lt(cmd->candidates[0], s->snap->n_nodes);
    const char *gone = s->snap->nodes[cmd->candidates[0]].name;
    cr_expect_str_eq(gone, kp_scenario_command_nodes(s, 0));
    const char *kept = strcmp(gone, "a") == 0 ? "b" : "a";
    cr_expect_str_eq(pod_node(s, "default/pa"), kept);
    cr_expect_str_eq(pod_node(s, "default/pb"), kept);
    sc_free(&c);
}

/*
 * 5. A Node with the karpenter.sh/nodepool label but no NodeClaim is a
 * candidate. Karpenter refuses it (suite_test.go:1640 "should not consider
 * candidates that has just a Node representation": NewCandidate fails with
 * "node isn't managed by karpenter"). We deliberately differ: `simulate
 * --disrupt` is mostly given Node manifests without their NodeClaims and its
 * users expect those nodes planned (docs/simulate.md says so), while the
 * controller always has the NodeClaims, so it is not affected.
 */
Test(consolidation_candidates, node_without_a_nodeclaim_is_a_candidate)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    add(&c, "---\napiVersion: v1\nkind: Node\nmetadata: {name: orphan, creationTimestamp: '" OLD
            "', labels: {"
            "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
            "karpenter.sh/initialized: 'true', "
            "node.kubernetes.io/instance-type: xlarge, topology.kubernetes.io/zone: test-zone-1a, "
            "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: orphan, "
            "kubernetes.io/arch: amd64, "
            "kubernetes.io/os: linux}}\nspec: {providerID: 'fake:///orphan'}\n"
            "status: {allocatable: {cpu: '16', memory: 32Gi, pods: '110'}, conditions: [{type: "
            "Ready, status: 'True'}]}\n");
    pod(&c, "pa", "a", "1500m");
    pod(&c, "po", "orphan", "1");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_neq(kp_scenario_disrupted_by(s, "orphan"), -1, "the NodeClaim-less node was kept: %s",
                  kp_scenario_blocked_reason(s, "orphan"));
    sc_free(&c);
}
