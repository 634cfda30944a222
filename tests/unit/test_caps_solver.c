/*
 * Cluster-wide caps and NodePool dollar caps in the solver and the disruption
 * planner (shared/scheduling/caps.c). The catalog is disruption_scenarios.h's:
 * five sizes doubling in CPU, memory and price (small 2 CPU $0.10 on-demand,
 * $0.04 spot ... 2xlarge 32 CPU $1.60).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "disruption_scenarios.h"
#include "scheduling/caps.h"

#define HOST_SPREAD                                                                                \
    ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "             \
    "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: test}}}]"

static kp_scenario *solve(sc *c, const kp_caps *caps)
{
    KP_ASSERT_OK(kp_buf_puts(&c->catalog, "]"));
    c->ran = true;
    kp_solve_opts o = KP_SOLVE_OPTS_INIT;
    o.improve = false;
    o.caps = caps;
    KP_ASSERT_OK(kp_scenario_run(&c->s, kp_yaml_text(&c->yaml), kp_buf_cstr(&c->catalog), &o));
    return &c->s;
}

static void pending(sc *c, int n, const char *cpu)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "w%d", i);
        pod(c, name, NULL, cpu);
    }
}

/* A Node no NodePool made (Cluster Autoscaler counts it; so do we). */
static void unmanaged_node(sc *c, const char *name)
{
    add(c, "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s}}\n"
           "status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}, allocatable: {cpu: '4', memory: 8Gi, "
           "pods: '110'}, conditions: [{type: Ready, status: 'True'}]}\n",
        name, name);
}

static void expect_error(const kp_scenario *s, const char *pod_name, const char *needle)
{
    const char *why = kp_scenario_error_of(s, pod_name);
    cr_assert_not_null(why, "%s was placed", pod_name);
    cr_expect(strstr(why, needle) != NULL, "%s: %s", pod_name, why);
}

static bool claim_offers(const kp_scenario *s, int claim, const char *type)
{
    const kp_plan_claim *c = &s->plan->claims[claim];
    for (uint32_t k = 0; k < c->n_its; k++)
        if (!strcmp(kp_sym_str(s->snap->symtab, s->snap->its[c->its[k]].name), type))
            return true;
    return false;
}

Test(caps_solver, node_cap_counts_every_node_and_names_itself)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    unmanaged_node(&c, "control-plane");
    /* Each pod needs a whole 2xlarge: one new node each. */
    pending(&c, 3, "20");
    kp_caps caps = KP_CAPS_INIT;
    caps.max_nodes = 3;
    kp_scenario *s = solve(&c, &caps);
    cr_expect_eq(s->plan->n_claims, 1, "two nodes exist, so one more fits under 3");
    cr_expect_eq(s->plan->n_errors, 2);
    expect_error(s, "w1", "cluster-wide cap --max-nodes-total=3 is reached (3 nodes and NodeClaims)");
    sc_free(&c);
}

Test(caps_solver, without_caps_nothing_changes)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    pending(&c, 3, "20");
    kp_scenario *s = solve(&c, NULL);
    cr_expect_eq(s->plan->n_claims, 3);
    cr_expect_eq(s->plan->n_errors, 0);
    sc_free(&c);
}

Test(caps_solver, cores_cap_narrows_the_options_to_what_fits)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "medium")); /* 4 cores */
    pending(&c, 1, "1");
    kp_caps caps = KP_CAPS_INIT;
    caps.has_cores = true, caps.cores = 8000; /* 4 cores left */
    pod(&c, "big", NULL, "6");
    kp_scenario *s = solve(&c, &caps);
    /* w0 fits on node a; "big" needs 6 cores of a new node, which would be a large (8). */
    cr_expect_str_eq(kp_scenario_node_of(s, "w0"), "a");
    expect_error(s, "big", "(options left by the caps: cluster-wide cap --cores-total=8 leaves 4 cores)");
    sc_free(&c);
}

Test(caps_solver, a_new_claim_keeps_only_options_within_the_cores_left)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    pending(&c, 1, "1");
    kp_caps caps = KP_CAPS_INIT;
    caps.has_cores = true, caps.cores = 4000;
    kp_scenario *s = solve(&c, &caps);
    cr_assert_eq(s->plan->n_claims, 1);
    cr_expect(claim_offers(s, 0, "medium"), "4 cores fit");
    cr_expect_not(claim_offers(s, 0, "large"), "8 cores would break the cap whichever launches");
    sc_free(&c);
}

Test(caps_solver, memory_cap)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    pending(&c, 4, "1");
    kp_caps caps = KP_CAPS_INIT;
    caps.has_memory = true, caps.memory = (kp_milli128)12 * 1024 * 1024 * 1024 * 1000; /* 12Gi */
    kp_scenario *s = solve(&c, &caps);
    /* A medium (8Gi) holds at most 4 pods of 1Gi... then 4Gi are left: a small. */
    for (uint32_t i = 0; i < s->plan->n_claims; i++)
        cr_expect_not(claim_offers(s, (int)i, "large"), "16Gi never fits in 12Gi");
    cr_expect_eq(s->plan->n_errors, 0, "4 pods of 1Gi fit in 12Gi of nodes");
    sc_free(&c);
}

Test(caps_solver, hourly_cost_counts_nodes_at_their_price_and_new_claims_at_their_dearest_option)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large")); /* $0.40 on-demand */
    pod(&c, "fill", "a", "7");
    pending(&c, 2, "3");
    kp_caps caps = KP_CAPS_INIT;
    caps.max_hourly_cost = 0.65; /* $0.25 left: a small ($0.10) or a medium ($0.20), not both */
    kp_scenario *s = solve(&c, &caps);
    cr_assert_eq(s->plan->n_claims, 1);
    cr_expect_not(claim_offers(s, 0, "large"), "a large would break the cap");
    cr_expect_eq(s->plan->n_errors, 1);
    const char *why = s->plan->errors[0].reason;
    cr_expect(strstr(why, "cluster-wide cap --max-hourly-cost=0.65 leaves $0.0500/hour") != NULL, "%s", why);
    kp_caps_usage u;
    kp_caps_measure(s->snap, &u, NULL);
    cr_expect_float_eq(u.hourly_cost, 0.40, 1e-9);
    cr_expect_eq(u.nodes, 1);
    sc_free(&c);
}

static uint32_t placed_under_5_cents(const char *requirements)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", requirements, NULL);
    pending(&c, 1, "1");
    kp_caps caps = KP_CAPS_INIT;
    caps.max_hourly_cost = 0.05;
    kp_scenario *s = solve(&c, &caps);
    uint32_t n = s->plan->n_claims;
    sc_free(&c);
    return n;
}

Test(caps_solver, spot_claims_are_charged_at_spot_prices)
{
    cr_expect_eq(placed_under_5_cents(BOTH), 1, "a launch takes spot ($0.04 at worst)");
    cr_expect_eq(placed_under_5_cents(OD_ONLY), 0, "on-demand costs $0.10");
}

Test(caps_solver, a_capped_nodepool_lets_the_next_one_launch)
{
    sc c;
    sc_init(&c, true);
    add(&c, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: cheap, annotations: "
            "{karpenter-c.dev/max-hourly-cost: '0.05'}}\nspec: {weight: 50, template: {spec: {nodeClassRef: "
            "{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: [" OD_ONLY "]}}}\n");
    pool(&c, "fallback", OD_ONLY, NULL);
    pending(&c, 1, "1");
    kp_scenario *s = solve(&c, NULL);
    cr_assert_eq(s->plan->n_claims, 1);
    cr_expect_str_eq(kp_scenario_claim_pool(s, 0), "fallback", "the heavier pool is capped at $0.05");
    sc_free(&c);
}

Test(caps_solver, a_nodepool_cap_names_its_annotation)
{
    sc c;
    sc_init(&c, true);
    add(&c, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: cheap, annotations: "
            "{karpenter-c.dev/max-hourly-cost: '0.15'}}\nspec: {template: {spec: {nodeClassRef: "
            "{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: [" OD_ONLY "]}}}\n");
    pending(&c, 2, "1.5");
    kp_scenario *s = solve(&c, NULL);
    cr_expect_eq(s->plan->n_claims, 1, "one small ($0.10) fits under $0.15, a second does not");
    cr_assert_eq(s->plan->n_errors, 1);
    cr_expect(strstr(s->plan->errors[0].reason, "nodepool \"cheap\" cap karpenter-c.dev/max-hourly-cost=0.15 "
                                                "leaves $0.0500/hour") != NULL,
              "%s", s->plan->errors[0].reason);
    sc_free(&c);
}

Test(caps_solver, a_malformed_annotation_launches_nothing_and_says_why)
{
    sc c;
    sc_init(&c, true);
    add(&c, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: typo, annotations: "
            "{karpenter-c.dev/max-hourly-cost: '$5'}}\nspec: {template: {spec: {nodeClassRef: "
            "{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: [" OD_ONLY "]}}}\n");
    pending(&c, 1, "1");
    kp_scenario *s = solve(&c, NULL);
    cr_expect_eq(s->plan->n_claims, 0, "fail closed");
    expect_error(s, "w0", "nodepool \"typo\" launches nothing: NodePool typo: annotation "
                          "karpenter-c.dev/max-hourly-cost $5: want dollars an hour");
    sc_free(&c);
}

Test(caps_solver, a_claim_not_launched_counts_as_its_largest_and_dearest_option)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    add(&c, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: inflight, labels: "
            "{karpenter.sh/nodepool: default}}\nspec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, "
            "name: default}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [small, "
            "xlarge]}, " OD_ONLY "]}\n");
    kp_scenario *s = solve(&c, NULL);
    kp_caps_usage u;
    kp_caps_measure(s->snap, &u, NULL);
    cr_expect_eq(u.nodes, 1);
    cr_expect(u.cores == (kp_milli128)16000, "the xlarge's 16 cores, not the small's 2");
    cr_expect_float_eq(u.hourly_cost, 0.80, 1e-9);
    sc_free(&c);
}

/* ------------------------------------------------------------ disruption */

static kp_scenario *disrupt_with(sc *c, const kp_caps *caps, uint32_t split_max)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    o.split_max = split_max;
    o.caps = caps;
    return plan_opts(c, &o);
}

Test(caps_solver, a_cluster_over_its_cap_still_consolidates)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_caps caps = KP_CAPS_INIT;
    caps.max_nodes = 0; /* lowered below what runs */
    caps.has_cores = true, caps.cores = 1000;
    kp_scenario *s = disrupt_with(&c, &caps, 3);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

Test(caps_solver, a_split_never_takes_the_cluster_past_the_node_cap)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        pod_full(&c, name, "a", "1", NULL, NULL, HOST_SPREAD);
    }
    kp_caps caps = KP_CAPS_INIT;
    caps.max_nodes = 2;
    kp_scenario *s = disrupt_with(&c, &caps, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 0, "three small nodes would make three");
    cr_expect_eq(kp_scenario_disrupted_by(s, "a"), -1);
    sc_free(&c);

    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", i);
        pod_full(&c, name, "a", "1", NULL, NULL, HOST_SPREAD);
    }
    caps.max_nodes = 3;
    s = disrupt_with(&c, &caps, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 1, "with room for three, the split goes ahead");
    sc_free(&c);
}
