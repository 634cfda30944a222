/*
 * Solver scenarios: node affinity. nodeSelector and required terms with
 * every operator against NodePool requirements, template labels and
 * instance-type labels; required terms ORed (the next term is tried when
 * one cannot be met); preferred terms heaviest first (Karpenter's
 * scheduling suite_test.go, "Custom Constraints" and "Preferential
 * Fallback").
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_cases.h"

static void labeled_nodepool(const char *labels, const char *requirements)
{
    add("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n"
        "    metadata: {labels: {%s}}\n"
        "    spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "requirements: [%s]}",
        labels, requirements);
}

/* ", affinity: {nodeAffinity: {required...: {nodeSelectorTerms: [{matchExpressions: [EXPRS]}]}}}" */
static const char *node_required(const char *exprs)
{
    return frag(", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                "[{matchExpressions: [%s]}]}}}",
                exprs);
}

/* Required match expressions and one preferred term (weight 1), together. */
static const char *node_required_preferred(const char *exprs, const char *preferred_exprs)
{
    return frag(", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                "[{matchExpressions: [%s]}]}, preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, "
                "preference: {matchExpressions: [%s]}}]}}",
                exprs, preferred_exprs);
}

/* The label the launched node would carry, from the plan's JSON. */
static const char *claim_label(int claim, const char *key)
{
    const cJSON *claims = cJSON_GetObjectItemCaseSensitive(sc.json, "nodeClaims");
    const cJSON *c = cJSON_GetArrayItem(claims, claim);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "labels"), key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The single value instance type `it` has for `key`, or NULL. */
static const char *type_label(uint32_t it, const char *key)
{
    kp_sym k = kp_sym_lookup(sc.snap->symtab, key);
    const kp_requirement *r = k ? kp_requirements_get(&sc.snap->its[it].reqs, k) : NULL;
    return r && !r->complement && r->n_values == 1 ? kp_sym_str(sc.snap->symtab, r->values[0]) : NULL;
}

#define TEST_KEY "test-key"

TestSuite(node_affinity, .init = setup, .fini = teardown);

/* ---------- one expression against NodePool requirements ---------- */

typedef struct op_case {
    const char *pool;   /* NodePool requirements */
    const char *expr;   /* the pod's one required match expression */
    const char *label;  /* test-key label of the node, "" for none; NULL when the pod stays pending */
} op_case;

Test(node_affinity, operators_against_a_custom_key)
{
    static const char *const defined = "{key: " TEST_KEY ", operator: In, values: [test-value]}";
    static const op_case cases[] = {
        {"", "{key: " TEST_KEY ", operator: In, values: [test-value]}", NULL},
        /* a concrete value outside the set, as Karpenter's Requirement.Any() gives */
        {"", "{key: " TEST_KEY ", operator: NotIn, values: [test-value]}", "0"},
        {"", "{key: " TEST_KEY ", operator: Exists}", NULL},
        {"", "{key: " TEST_KEY ", operator: DoesNotExist}", ""},
        {defined, "{key: " TEST_KEY ", operator: In, values: [test-value]}", "test-value"},
        {defined, "{key: " TEST_KEY ", operator: NotIn, values: [test-value]}", NULL},
        {defined, "{key: " TEST_KEY ", operator: Exists}", "test-value"},
        {defined, "{key: " TEST_KEY ", operator: DoesNotExist}", NULL},
        {defined, "{key: " TEST_KEY ", operator: In, values: [another-value]}", NULL},
        {defined, "{key: " TEST_KEY ", operator: NotIn, values: [another-value]}", "test-value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", cases[i].pool);
        pod("p", "", "0", node_required(cases[i].expr));
        solve(FAKE_CATALOG);
        int c = kp_scenario_claim_of(&sc, "p");
        if (!cases[i].label) {
            cr_expect_lt(c, 0, "case %zu: scheduled", i);
            cr_expect_not_null(kp_scenario_error_of(&sc, "p"), "case %zu", i);
            continue;
        }
        cr_assert_geq(c, 0, "case %zu: %s", i, kp_scenario_error_of(&sc, "p"));
        const char *label = claim_label(c, TEST_KEY);
        cr_expect_str_eq(label ? label : "", cases[i].label, "case %zu", i);
    }
}

Test(node_affinity, unconstrained_pod_gets_the_nodepools_requirement_as_label)
{
    nodepool("default", "{key: " TEST_KEY ", operator: In, values: [test-value]}");
    pod("p", "", "0", "");
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0);
    cr_expect_str_eq(claim_label(0, TEST_KEY), "test-value");
}

/* In and NotIn that leave one common value share a node; disjoint In values do not. */
Test(node_affinity, compatible_pods_share_incompatible_pods_split)
{
    static const char *const pool = "{key: " TEST_KEY ", operator: In, values: [test-value, another-value]}";
    nodepool("default", pool);
    pod("a", "", "0", node_required("{key: " TEST_KEY ", operator: In, values: [test-value]}"));
    pod("b", "", "0", node_required("{key: " TEST_KEY ", operator: NotIn, values: [another-value]}"));
    pod("c", "", "0", node_required("{key: " TEST_KEY ", operator: In, values: [another-value]}"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("a"), place("b"));
    cr_expect_str_neq(place("a"), place("c"));
    cr_expect_str_eq(claim_label(kp_scenario_claim_of(&sc, "a"), TEST_KEY), "test-value");
    cr_expect_str_eq(claim_label(kp_scenario_claim_of(&sc, "c"), TEST_KEY), "another-value");
}

/* Exists adds nothing to an In that no zone offers. */
Test(node_affinity, exists_does_not_widen_an_in)
{
    nodepool("default", "");
    pod("p", "", "0",
        node_required("{key: " ZONE ", operator: In, values: [non-existent-zone]}, {key: " ZONE
                      ", operator: Exists}"));
    solve(FAKE_CATALOG);
    expect_pending("p");
}

/* ---------- template labels ---------- */

typedef struct label_case {
    const char *extra;  /* pod spec fields */
    bool scheduled;
} label_case;

Test(node_affinity, nodepool_template_labels)
{
    static const label_case cases[] = {
        {"", true},
        {", nodeSelector: {" TEST_KEY ": different-value}", false},
        {", nodeSelector: {other-key: test-value}", false},
        {", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
         "[{matchExpressions: [{key: " TEST_KEY ", operator: In, values: [test-value, another-value]}]}]}}}",
         true},
        {", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
         "[{matchExpressions: [{key: " TEST_KEY ", operator: In, values: [another-value]}]}]}}}",
         false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        labeled_nodepool(TEST_KEY ": test-value", "");
        pod("p", "", "0", cases[i].extra);
        solve(FAKE_CATALOG);
        int c = kp_scenario_claim_of(&sc, "p");
        cr_expect_eq(c >= 0, cases[i].scheduled, "case %zu: %s", i, place("p"));
        if (c >= 0)
            cr_expect_str_eq(claim_label(c, TEST_KEY), "test-value", "case %zu", i);
    }
}

/* ---------- well-known labels ---------- */

typedef struct zone_case {
    const char *pool;
    const char *extra;
    const char *zone; /* the zone the node launches in; NULL when pending */
} zone_case;

#define ZONES_ALL "test-zone-1, test-zone-2, test-zone-3"

Test(node_affinity, zone_selectors_requirements_and_preferences)
{
    static const zone_case cases[] = {
        /* the NodePool's zone, the pod's nodeSelector within it */
        {"{key: " ZONE ", operator: In, values: [test-zone-2]}", "", "test-zone-2"},
        {"{key: " ZONE ", operator: In, values: [test-zone-1, test-zone-2]}", ", nodeSelector: {" ZONE ": test-zone-2}",
         "test-zone-2"},
        {"", ", nodeSelector: {" HOST ": red-node}", NULL},
        {"{key: " ZONE ", operator: In, values: [test-zone-1]}", ", nodeSelector: {" ZONE ": unknown}", NULL},
        {"{key: " ZONE ", operator: In, values: [test-zone-1]}", ", nodeSelector: {" ZONE ": test-zone-2}", NULL},
        /* required terms */
        {"", "REQ{key: " ZONE ", operator: In, values: [test-zone-3]}", "test-zone-3"},
        {"", "REQ{key: " ZONE ", operator: In, values: [unknown]}", NULL},
        {"", "REQ{key: " ZONE ", operator: NotIn, values: [test-zone-1, test-zone-2, unknown]}", "test-zone-3"},
        {"", "REQ{key: " ZONE ", operator: NotIn, values: [" ZONES_ALL ", unknown]}", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", cases[i].pool);
        const char *extra = cases[i].extra;
        if (strncmp(extra, "REQ", 3) == 0)
            extra = node_required(extra + 3);
        pod("p", "", "0", extra);
        solve(FAKE_CATALOG);
        int c = kp_scenario_claim_of(&sc, "p");
        if (!cases[i].zone) {
            cr_expect_lt(c, 0, "case %zu: scheduled", i);
            continue;
        }
        cr_assert_geq(c, 0, "case %zu: %s", i, kp_scenario_error_of(&sc, "p"));
        cr_expect_str_eq(launch_zone(c), cases[i].zone, "case %zu: %s", i, zone_req(c));
    }
}

Test(node_affinity, required_with_preferred_node_affinity)
{
    static const struct {
        const char *required, *preferred, *zone; /* the launch zone; "" when any */
    } cases[] = {
        {"{key: " ZONE ", operator: In, values: [" ZONES_ALL ", unknown]}",
         "{key: " ZONE ", operator: In, values: [test-zone-2, unknown]}", "test-zone-2"},
        {"{key: " ZONE ", operator: In, values: [" ZONES_ALL ", unknown]}", "{key: " ZONE ", operator: In, values: [unknown]}",
         ""},
        {"{key: " ZONE ", operator: In, values: [" ZONES_ALL ", unknown]}",
         "{key: " ZONE ", operator: NotIn, values: [test-zone-1, test-zone-3]}", "test-zone-2"},
        {"{key: " ZONE ", operator: In, values: [" ZONES_ALL ", unknown]}",
         "{key: " ZONE ", operator: NotIn, values: [" ZONES_ALL "]}", ""},
        /* a preference that contradicts the requirement is dropped */
        {"{key: " ZONE ", operator: In, values: [test-zone-3]}", "{key: " ZONE ", operator: NotIn, values: [test-zone-3]}",
         "test-zone-3"},
        /* a preference that contradicts itself is dropped */
        {"{key: " ZONE ", operator: Exists}",
         "{key: " ZONE ", operator: In, values: [invalid]}, {key: " ZONE ", operator: NotIn, values: [invalid]}", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", "");
        pod("p", "", "0", node_required_preferred(cases[i].required, cases[i].preferred));
        solve(FAKE_CATALOG);
        int c = kp_scenario_claim_of(&sc, "p");
        cr_assert_geq(c, 0, "case %zu: %s", i, kp_scenario_error_of(&sc, "p"));
        if (*cases[i].zone)
            cr_expect_str_eq(launch_zone(c), cases[i].zone, "case %zu: %s", i, zone_req(c));
    }
}

Test(node_affinity, node_selector_requirement_and_preference_combine)
{
    nodepool("default", "");
    pod("p", "", "0",
        frag(", nodeSelector: {" ZONE ": test-zone-3}%s",
             node_required_preferred("{key: " ZONE ", operator: In, values: [" ZONES_ALL "]}",
                                     "{key: " ZONE ", operator: In, values: [" ZONES_ALL "]}")));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0);
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
}

Test(node_affinity, multidimensional_selectors_requirements_and_preferences)
{
    nodepool("default", "");
    pod("p", "", "0",
        frag(", nodeSelector: {" ZONE ": test-zone-3, node.kubernetes.io/instance-type: arm-instance-type}%s",
             node_required_preferred(
                 "{key: " ZONE ", operator: In, values: [test-zone-1, test-zone-3]}, {key: "
                 "node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, arm-instance-type]}",
                 "{key: " ZONE ", operator: NotIn, values: [unknown]}, {key: node.kubernetes.io/instance-type, "
                 "operator: NotIn, values: [unknown]}")));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
    cr_expect_str_eq(kp_scenario_claim_type(&sc, 0), "arm-instance-type");
    cr_expect_eq(sc.plan->claims[0].n_its, 1);
}

/* ---------- integer labels ---------- */

/* The synthetic catalog's "integer" label is the core count (1..20). */
Test(node_affinity, integer_operators_on_nodepool_requirements)
{
    static const struct {
        const char *req;
        long lo, hi; /* every remaining type's value is in [lo, hi] */
        const char *cheapest;
    } cases[] = {
        {"{key: integer, operator: Gt, values: ['8']}", 9, 20, "9"},
        {"{key: integer, operator: Lt, values: ['8']}", 1, 7, "1"},
        {"{key: integer, operator: Gte, values: ['16']}", 16, 20, "16"},
        {"{key: integer, operator: Lte, values: ['2']}", 1, 2, "1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", cases[i].req);
        pod("p", "", "0", "");
        solve("synthetic:20");
        cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "case %zu: %s", i, kp_scenario_error_of(&sc, "p"));
        const kp_plan_claim *c = &sc.plan->claims[0];
        cr_assert_gt(c->n_its, 0);
        cr_expect_str_eq(type_label(c->its[0], "integer"), cases[i].cheapest, "case %zu", i);
        for (uint32_t t = 0; t < c->n_its; t++) {
            long v = strtol(type_label(c->its[t], "integer"), NULL, 10);
            cr_expect(v >= cases[i].lo && v <= cases[i].hi, "case %zu: type with %ld cores", i, v);
        }
    }
}

/* Gt and Lt on the AWS provider's vCPU label, from the pod's side. */
Test(node_affinity, instance_cpu_bounds_from_the_pod_with_the_builtin_catalog)
{
    nodepool("default", "");
    pod("p", "", "1",
        node_required("{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ['7']}, "
                      "{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ['17']}"));
    solve("builtin");
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    const kp_plan_claim *c = &sc.plan->claims[0];
    cr_assert_gt(c->n_its, 0);
    for (uint32_t t = 0; t < c->n_its; t++) {
        const char *v = type_label(c->its[t], "karpenter.k8s.aws/instance-cpu");
        cr_assert_not_null(v);
        long cpus = strtol(v, NULL, 10);
        cr_expect(cpus >= 8 && cpus <= 16, "%s has %ld vCPUs",
                  kp_sym_str(sc.snap->symtab, sc.snap->its[c->its[t]].name), cpus);
    }
}

Test(node_affinity, instance_cpu_bound_no_type_meets_is_unschedulable)
{
    nodepool("default", "");
    pod("p", "", "1", node_required("{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ['100000']}"));
    solve("builtin");
    expect_pending("p");
}

/* ---------- required terms are ORed ---------- */

Test(node_affinity, final_required_term_is_never_relaxed)
{
    nodepool("default", "{key: " ZONE ", operator: In, values: [test-zone-1]}, "
                        "{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}");
    pod("p", "", "0", node_required("{key: " ZONE ", operator: In, values: [invalid]}"));
    solve(FAKE_CATALOG);
    expect_pending("p");
}

/* Terms are tried in order; the first that can be met wins, later ones are never used. */
Test(node_affinity, required_terms_are_tried_in_order)
{
    nodepool("default", "");
    pod("p", "", "0",
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [invalid]}]}, "
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [invalid]}]}, "
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1]}]}, "
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}]}]}}}");
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-1]");
}

/* The first term asks for arm64 in zone 3, but arm64 is not offered there by
 * this NodePool; the second term (amd64) is used. */
Test(node_affinity, second_term_is_used_when_the_first_cannot_be_met)
{
    nodepool("default", "{key: " ZONE ", operator: In, values: [test-zone-1, test-zone-2]}");
    pod("p", "", "0",
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
        "{matchExpressions: [{key: " ARCH ", operator: In, values: [arm64]}, {key: " ZONE
        ", operator: In, values: [test-zone-3]}]}, "
        "{matchExpressions: [{key: " ARCH ", operator: In, values: [amd64]}]}]}}}");
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(kp_scenario_claim_req(&sc, 0, ARCH), "In [amd64]");
}

/* A pod whose first term matches an existing node goes there; one whose
 * only matching term is the second does too. */
Test(node_affinity, required_terms_on_an_existing_node)
{
    nodepool("default", "");
    node("n1", "test-zone-2", "4", 20);
    pod("first", "", "1",
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}]}]}}}");
    pod("second", "", "1",
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
        "{matchExpressions: [{key: " HOST ", operator: In, values: [elsewhere]}]}, "
        "{matchExpressions: [{key: " HOST ", operator: In, values: [n1]}]}]}}}");
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("first"), "node:n1");
    cr_expect_str_eq(place("second"), "node:n1");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* An empty list of required terms matches no node (Kubernetes' semantics). */
Test(node_affinity, empty_required_terms_match_nothing)
{
    nodepool("default", "");
    pod("p", "", "0", ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}");
    solve(FAKE_CATALOG);
    expect_pending("p");
}

/* ---------- preferred terms ---------- */

Test(node_affinity, every_preferred_term_can_be_relaxed)
{
    nodepool("default", "");
    pod("p", "", "0",
        ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
        "{weight: 1, preference: {matchExpressions: [{key: " ZONE ", operator: In, values: [invalid]}]}}, "
        "{weight: 1, preference: {matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, "
        "values: [invalid]}]}}]}}");
    solve(FAKE_CATALOG);
    expect_scheduled("p");
}

/* Heaviest first: 100 is impossible, 50 (zone 2) holds, 1 (zone 1) is never reached. */
Test(node_affinity, preferred_terms_fall_back_to_lighter_weights)
{
    nodepool("default", "{key: " ZONE ", operator: In, values: [test-zone-1, test-zone-2]}");
    pod("p", "", "0",
        ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
        "{weight: 1, preference: {matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1]}]}}, "
        "{weight: 100, preference: {matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, "
        "values: [test-zone-3]}]}}, "
        "{weight: 50, preference: {matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}]}}]}}");
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-2]");
}

/* Preferred node affinity picks among existing nodes too. */
Test(node_affinity, preferred_term_chooses_between_existing_nodes)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "4", 20);
    node("n2", "test-zone-2", "4", 20);
    pod("p", "", "1",
        ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
        "{weight: 10, preference: {matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}]}}]}}");
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), "node:n2");
}
