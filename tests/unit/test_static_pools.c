/*
 * Static NodePools (spec.replicas) in plans, from the behaviours Karpenter's
 * static provisioning, deprovisioning and StaticDrift suites assert
 * (pkg/controllers/static/{provisioning,deprovisioning}, and
 * pkg/controllers/disruption/staticdrift_test.go):
 * missing replicas launch whatever the pods do and within limits.nodes, the
 * solver never opens a NodeClaim of a static NodePool for a pod, surplus
 * goes unlaunched-first then empty-first, drifted replicas are replaced one
 * for one within the Drifted budget, and consolidation leaves them alone.
 */
#include "disruption_scenarios.h"
#include "provisioning/nodeclaim_object.h"
#include "scheduling/static_pools.h"

#define TOLERATE ", tolerations: [{key: fleet, operator: Exists}]"

/* A static NodePool `name` with `replicas`, its nodes tainted fleet:NoSchedule. */
static void static_pool(sc *c, const char *name, int replicas, const char *extra)
{
    add(c,
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\n"
        "spec: {replicas: %d%s, template: {metadata: {labels: {fleet: %s}}, spec: {nodeClassRef: {group: "
        "karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: [" OD_ONLY
        ", {key: node.kubernetes.io/instance-type, operator: In, values: [medium, large]}], "
        "taints: [{key: fleet, value: x, effect: NoSchedule}]}}, "
        "disruption: {consolidateAfter: 0s, budgets: [{nodes: '100%%'}]}}\n",
        name, replicas, extra ? extra : "", name);
}

/* A NodeClaim of `pool` that has not launched (no provider ID, no Node). */
static void unlaunched(sc *c, const char *name, const char *pool_name)
{
    add(c,
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: %s, creationTimestamp: '" OLD "', "
        "labels: {karpenter.sh/nodepool: %s}}\nspec: {nodeClassRef: {group: karpenter.k8s.aws, kind: "
        "EC2NodeClass, name: default}, requirements: [" OD_ONLY "]}\n",
        name, pool_name);
}

static void run(sc *c)
{
    KP_ASSERT_OK(kp_buf_puts(&c->catalog, "]"));
    c->ran = true;
    cr_assert_eq(kp_scenario_run(&c->s, kp_yaml_text(&c->yaml), kp_buf_cstr(&c->catalog), NULL), 0, "%s",
                 kp_error_last());
}

static int32_t tmpl(const kp_snapshot *snap, const char *name)
{
    for (uint32_t t = 0; t < snap->n_templates; t++)
        if (!strcmp(snap->templates[t].name, name))
            return (int32_t)t;
    cr_assert_fail("no template %s", name);
    return -1;
}

static void collect_note(void *ctx, const char *text)
{
    KP_ASSERT_OK(kp_buf_puts(ctx, text));
}

Test(static_pools, missing_replicas_are_planned_nodeclaims_and_take_the_pods_that_fit)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", NULL, NULL);
    static_pool(&c, "agents", 3, NULL);
    pod_full(&c, "agent", NULL, "1", "app: agent", NULL, TOLERATE ", nodeSelector: {fleet: agents}");
    run(&c);
    cr_expect_not_null(kp_scenario_error_of(&c.s, "agent"), "no dynamic NodePool can take it, the static one "
                       "launches nothing for a pod");
    kp_plan *plan = NULL;
    kp_solve_opts o = KP_SOLVE_OPTS_INIT;
    uint32_t pending = 0;
    for (uint32_t i = 0; i < c.s.snap->n_pods; i++)
        if (!strcmp(c.s.snap->pods[i].ns_name, "default/agent"))
            pending = i;
    cr_assert_eq(kp_static_solve(c.s.snap, &o, &pending, 1, NULL, NULL, &plan), 0, "%s", kp_error_last());
    cr_expect_eq(plan->n_claims, 3, "three replicas planned, got %u", plan->n_claims);
    uint32_t with_pod = 0;
    for (uint32_t i = 0; i < plan->n_claims; i++) {
        cr_expect_eq(plan->claims[i].template_index, (uint32_t)tmpl(c.s.snap, "agents"));
        cr_expect_str_eq(kp_sym_str(c.s.snap->symtab, c.s.snap->its[plan->claims[i].its[0]].name), "medium",
                         "the cheapest type the template allows launches");
        with_pod += plan->claims[i].n_pods;
    }
    cr_expect_eq(with_pod, 1, "the agent goes to a replica");
    cr_expect_eq(plan->n_errors, 0);
    cr_expect_eq(c.s.snap->n_nodes, 0, "the seed left the snapshot");
    cr_expect_float_eq(plan->hourly_cost, 0.6, 1e-9);
    kp_plan_free(plan);
    sc_free(&c);
}

Test(static_pools, replicas_count_what_exists_and_stop_at_limits_nodes)
{
    sc c;
    sc_init(&c, true);
    static_pool(&c, "agents", 5, ", limits: {nodes: '4'}");
    node(&c, "a0", N(.pool = "agents", .type = "medium"));
    node(&c, "a1", N(.pool = "agents", .type = "medium", .claim_meta = ", deletionTimestamp: '" OLD "'"));
    node(&c, "a2", N(.pool = "agents", .type = "medium",
                     .conditions = ", {type: DisruptionReason, status: 'True', reason: Drifted}"));
    run(&c);
    uint32_t t = (uint32_t)tmpl(c.s.snap, "agents");
    kp_static_count n;
    kp_static_count_nodes(c.s.snap, t, NULL, &n);
    cr_expect_eq(n.active, 1);
    cr_expect_eq(n.deleting, 1);
    cr_expect_eq(n.pending, 1);
    cr_expect_eq(kp_static_missing(c.s.snap, t), 1, "5 - 1 active wanted, the limit of 4 leaves room for 1");
    cr_expect_eq(kp_static_excess(c.s.snap, t), 0);
    sc_free(&c);
}

Test(static_pools, a_pool_at_its_replicas_with_a_disruption_pending_launches_nothing)
{
    sc c;
    sc_init(&c, true);
    static_pool(&c, "agents", 2, NULL);
    node(&c, "a0", N(.pool = "agents", .type = "medium"));
    node(&c, "a1", N(.pool = "agents", .type = "medium",
                     .conditions = ", {type: DisruptionReason, status: 'True', reason: Drifted}"));
    run(&c);
    uint32_t t = (uint32_t)tmpl(c.s.snap, "agents");
    cr_expect_eq(kp_static_missing(c.s.snap, t), 0, "active + pending reach the replicas");
    cr_expect_eq(kp_static_excess(c.s.snap, t), 0);
    sc_free(&c);
}

Test(static_pools, nothing_to_launch_is_a_note_not_an_error)
{
    sc c;
    sc_init(&c, false);
    catalog_type(&c.catalog, "small", 2, 4, 0.1, 0);
    static_pool(&c, "agents", 2, NULL); /* allows medium and large: the catalog has neither */
    run(&c);
    kp_plan *plan = NULL;
    kp_solve_opts o = KP_SOLVE_OPTS_INIT;
    kp_buf notes = KP_BUF_INIT(4096);
    cr_assert_eq(kp_static_solve(c.s.snap, &o, NULL, 0, collect_note, &notes, &plan), 0, "%s", kp_error_last());
    cr_expect_eq(plan->n_claims, 0);
    cr_expect(strstr(kp_buf_cstr(&notes), "nodepool \"agents\""), "%s", kp_buf_cstr(&notes));
    kp_buf_free(&notes);
    kp_plan_free(plan);
    sc_free(&c);
}

Test(static_pools, surplus_goes_unlaunched_first_then_empty_then_cheapest_to_disrupt)
{
    sc c;
    sc_init(&c, true);
    static_pool(&c, "agents", 1, NULL);
    node(&c, "busy", N(.pool = "agents", .type = "medium"));
    pod_full(&c, "p1", "busy", "100m", NULL, NULL, TOLERATE);
    pod_full(&c, "p2", "busy", "100m", NULL, NULL, TOLERATE);
    node(&c, "light", N(.pool = "agents", .type = "medium"));
    pod_full(&c, "p3", "light", "100m", NULL, NULL, TOLERATE);
    node(&c, "guarded", N(.pool = "agents", .type = "medium"));
    pod_full(&c, "p4", "guarded", "100m", NULL, DND_POD, TOLERATE);
    node(&c, "empty", N(.pool = "agents", .type = "medium"));
    unlaunched(&c, "fresh", "agents");
    run(&c);
    uint32_t t = (uint32_t)tmpl(c.s.snap, "agents");
    cr_assert_eq(kp_static_excess(c.s.snap, t), 4);
    uint32_t out[8];
    uint32_t n = kp_static_scale_down(c.s.snap, t, 4, INT64_C(1795780800000000000), out);
    cr_assert_eq(n, 4);
    const char *want[] = {"fresh", "empty", "light", "busy"};
    for (uint32_t i = 0; i < n; i++)
        cr_expect_str_eq(c.s.snap->nodes[out[i]].nodeclaim, i == 0 ? "fresh" : kp_arena_printf(c.s.arena,
                                                                                           "%s-claim", want[i]),
                         "position %u", i);
    cr_expect_eq(kp_static_scale_down(c.s.snap, t, 5, 0, out), 5, "the do-not-disrupt one goes last");
    cr_expect_str_eq(c.s.snap->nodes[out[4]].nodeclaim, "guarded-claim");
    sc_free(&c);
}


Test(static_pools, drifted_replicas_are_replaced_one_for_one_within_the_drifted_budget)
{
    sc c;
    sc_init(&c, true);
    add(&c,
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: agents}\n"
        "spec: {replicas: 3, template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: "
        "default}, requirements: [" OD_ONLY "]}}, disruption: {consolidateAfter: 0s, budgets: [{nodes: '2'}]}}\n");
    node(&c, "a0", N(.pool = "agents", .type = "medium", .conditions = DRIFTED));
    node(&c, "a1", N(.pool = "agents", .type = "medium", .conditions = DRIFTED));
    node(&c, "a2", N(.pool = "agents", .type = "medium", .conditions = DRIFTED));
    pod(&c, "p", "a0", "500m");
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    kp_scenario *s = plan_opts(&c, &o);
    cr_assert_eq(kp_scenario_n_commands(s), 2, "the budget of 2 allows two at once, got %u",
                 kp_scenario_n_commands(s));
    for (uint32_t i = 0; i < 2; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), "drift");
        const kp_plan_claim *r = replacement(s, i);
        cr_expect(s->snap->templates[r->template_index].is_static);
        cr_expect_str_eq(kp_sym_str(s->snap->symtab, s->snap->its[r->its[0]].name), "small",
                         "the template's cheapest type, not one sized for the pods");
    }
    cr_expect_eq(kp_scenario_disrupted_by(s, "a0"), -1, "the empty ones go first");
    sc_free(&c);
}

Test(static_pools, drift_waits_while_the_pool_has_more_than_its_replicas)
{
    sc c;
    sc_init(&c, true);
    static_pool(&c, "agents", 1, NULL);
    node(&c, "a0", N(.pool = "agents", .type = "medium", .conditions = DRIFTED));
    node(&c, "a1", N(.pool = "agents", .type = "medium"));
    kp_scenario *s = plan_loops(&c, 1);
    cr_expect_eq(kp_scenario_disrupted_by(s, "a0"), -1);
    const char *why = kp_scenario_blocked_reason(s, "a0");
    cr_expect(why && strstr(why, "waits for the scale-down"), "%s", why ? why : "(none)");
    sc_free(&c);
}

Test(static_pools, consolidation_never_removes_a_static_node)
{
    sc c;
    sc_init(&c, true);
    static_pool(&c, "agents", 2, NULL);
    node(&c, "a0", N(.pool = "agents", .type = "large"));
    node(&c, "a1", N(.pool = "agents", .type = "large"));
    pod_full(&c, "p", "a1", "100m", NULL, NULL, TOLERATE);
    kp_scenario *s = plan_loops(&c, 3);
    cr_expect_eq(kp_scenario_n_commands(s), 0, "neither the empty node nor the underused one");
    const char *why = kp_scenario_blocked_reason(s, "a0");
    cr_expect(why && strstr(why, "static"), "%s", why ? why : "(none)");
    sc_free(&c);
}

Test(static_pools, the_nodeclaim_is_made_from_the_template_alone)
{
    sc c;
    sc_init(&c, true);
    static_pool(&c, "agents", 1, NULL);
    run(&c);
    kp_plan plan = {0};
    plan.arena = kp_arena_new();
    kp_plan_claim claim;
    cr_assert_eq(kp_static_claim(c.s.snap, (uint32_t)tmpl(c.s.snap, "agents"), plan.arena, &claim), 0);
    plan.claims = &claim, plan.n_claims = 1;
    cJSON *obj = kp_nodeclaim_object(&plan, c.s.snap, 0, "1234");
    cr_assert_not_null(obj);
    char *text = cJSON_PrintUnformatted(obj);
    cr_expect(strstr(text, "\"generateName\":\"agents-\""), "%s", text);
    cr_expect(strstr(text, "\"karpenter.sh/nodepool\":\"agents\""), "%s", text);
    cr_expect(strstr(text, "\"fleet\":\"agents\""), "%s", text);
    cr_expect(strstr(text, "{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\",\"values\":"
                           "[\"medium\",\"large\"]}"),
              "the template's instance types, not a planned list: %s", text);
    cr_expect(strstr(text, "{\"key\":\"fleet\",\"operator\":\"In\",\"values\":[\"agents\"]}"),
              "its labels become requirements: %s", text);
    cr_expect(strstr(text, "\"requests\":{}"), "no requests: %s", text);
    cr_expect(strstr(text, "\"karpenter.sh/nodepool-hash\":\"1234\""), "%s", text);
    cJSON_free(text);
    cJSON_Delete(obj);
    kp_arena_free(plan.arena);
    sc_free(&c);
}
