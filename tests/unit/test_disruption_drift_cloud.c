/*
 * Drift from the cloud provider and from the catalog (Karpenter's
 * nodeclaim/disruption/drift.go: NodePoolDrifted, RequirementsDrifted,
 * InstanceTypeNotFound from an hour after creation, then the provider's
 * IsDrifted — AMIDrift, SubnetDrift, SecurityGroupDrift, NodeClassDrift):
 * the caller hands the planner the provider's answer per node
 * (opts.cloud_drift), and the command carries the reason the Drifted
 * condition and the metrics are written with.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"

/* Plan with the provider's answer: `drift` names node=reason pairs. */
static kp_scenario *plan_cloud(sc *c, const char *const *nodes, const char *const *reasons, uint32_t n)
{
    kp_buf_puts(&c->catalog, "]");
    c->ran = true;
    cr_assert_eq(kp_scenario_run(&c->s, kp_buf_cstr(&c->yaml), kp_buf_cstr(&c->catalog), NULL), 0, "%s",
                 kp_error_last());
    static const char *answer[64];
    memset(answer, 0, sizeof(answer));
    cr_assert_leq(c->s.snap->n_nodes, 64);
    for (uint32_t i = 0; i < c->s.snap->n_nodes; i++)
        for (uint32_t k = 0; k < n; k++)
            if (strcmp(c->s.snap->nodes[i].name, nodes[k]) == 0)
                answer[i] = reasons[k];
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    o.cloud_drift = answer;
    cr_assert_eq(kp_scenario_disrupt(&c->s, NOW, &o), 0, "%s", kp_error_last());
    return &c->s;
}

static void three_nodes(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "small"));
    node(c, "b", N(.type = "small"));
    node(c, "c", N(.type = "small", .conditions = DRIFTED));
    pod(c, "pa", "a", "1500m");
    pod(c, "pb", "b", "1500m");
    pod(c, "pc", "c", "1500m");
}

Test(drift_cloud, the_providers_reason_is_the_commands)
{
    sc c;
    sc_init(&c, true);
    three_nodes(&c);
    static const char *const nodes[] = {"a", "b"}, *const reasons[] = {"AMIDrift", "SecurityGroupDrift"};
    kp_scenario *s = plan_cloud(&c, nodes, reasons, 2);
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    for (uint32_t i = 0; i < 2; i++) {
        const kp_disrupt_command *cmd = command_at(s, i);
        cr_expect_eq(cmd->method, KP_DISRUPT_DRIFT);
        cr_expect_str_eq(cmd->reason, "Drifted");
        cr_expect(!cmd->forceful);
        cr_expect_eq(cmd->loop, 0);
    }
    /* Both in one loop, each with its own reason. */
    int ia = kp_scenario_disrupted_by(s, "a"), ib = kp_scenario_disrupted_by(s, "b");
    cr_assert(ia >= 0 && ib >= 0);
    cr_expect_str_eq(command_at(s, (uint32_t)ia)->drift_reason, "AMIDrift");
    cr_expect_str_eq(command_at(s, (uint32_t)ib)->drift_reason, "SecurityGroupDrift");
    /* The provider said nothing about c: its old Drifted condition is not its answer. */
    cr_expect_eq(kp_scenario_disrupted_by(s, "c"), -1);
    cr_expect_eq(s->disruption->eligible_drifted, 2);
    sc_free(&c);
}

Test(drift_cloud, without_the_providers_answer_the_condition_speaks)
{
    sc c;
    sc_init(&c, true);
    three_nodes(&c);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "c");
    cr_expect_str_eq(command_at(s, 0)->drift_reason, "AMIDrifted");
    sc_free(&c);
}

Test(drift_cloud, the_nodepool_hash_comes_first)
{
    sc c;
    sc_init(&c, true);
    add(&c, "%s",
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default, annotations: "
        "{karpenter.sh/nodepool-hash: new, karpenter.sh/nodepool-hash-version: v3}}\n"
        "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: "
        "default}, requirements: [" OD_ONLY "]}}, disruption: {" UNDERUTILIZED "}}\n");
    node(&c, "a", N(.type = "small", .claim_meta = ", annotations: {karpenter.sh/nodepool-hash: old, "
                                                   "karpenter.sh/nodepool-hash-version: v3}"));
    pod(&c, "pa", "a", "1500m");
    static const char *const nodes[] = {"a"}, *const reasons[] = {"AMIDrift"};
    kp_scenario *s = plan_cloud(&c, nodes, reasons, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(command_at(s, 0)->drift_reason, "NodePoolDrifted");
    sc_free(&c);
}

Test(drift_cloud, an_instance_type_gone_from_the_catalog)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* An hour after creation, a type the catalog no longer offers drifts... */
    node(&c, "old", N(.type = "small", .type_label = "retired"));
    pod(&c, "po", "old", "1500m");
    /* ...but not within the first hour (Karpenter checks from then on). */
    node(&c, "young", N(.type = "small", .type_label = "retired", .created = "2026-11-21T11:30:00Z"));
    pod(&c, "py", "young", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "old");
    cr_expect_str_eq(command_at(s, 0)->drift_reason, "InstanceTypeNotFound");
    cr_expect_eq(kp_scenario_disrupted_by(s, "young"), -1);
    sc_free(&c);
}

Test(drift_cloud, an_offering_gone_from_the_nodes_zone)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small", .zone = "test-zone-1z"));
    pod(&c, "pa", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(command_at(s, 0)->drift_reason, "InstanceTypeNotFound");
    sc_free(&c);
}

Test(drift_cloud, the_json_carries_the_drift_reason)
{
    sc c;
    sc_init(&c, true);
    three_nodes(&c);
    static const char *const nodes[] = {"a"}, *const reasons[] = {"SubnetDrift"};
    kp_scenario *s = plan_cloud(&c, nodes, reasons, 1);
    const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(s->disruption_json, "disruption");
    const cJSON *first = cJSON_GetArrayItem(cmds, 0);
    cr_assert_not_null(first);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(first, "driftReason")->valuestring, "SubnetDrift");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(first, "reason")->valuestring, "Drifted");
    sc_free(&c);
}
