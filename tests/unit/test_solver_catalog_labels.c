/*
 * Labels and NodeClaims, as Karpenter treats them:
 *
 *  - the labels an instance-type catalog declares (--instance-types FILE) are
 *    well-known labels of its provider, as a cloud provider's are
 *    (Karpenter's fake provider registers "size", "special", "integer"): a pod
 *    or DaemonSet may select them although no NodePool mentions them, and
 *    DaemonSet overhead and host ports count only on the types they select;
 *  - a NodeClaim whose requirements on a custom key are not one In value
 *    (NotIn, Exists, Gt, Lt, Gte, Lte, several In values) still gets a label
 *    with a value that satisfies them (Karpenter's
 *    NodeClaimTemplate.resolveCustomLabelsFromRequirements with
 *    Requirement.Any()), in simulate's output and on the NodeClaim created,
 *    so that kube-scheduler can place the pods that selected the key.
 */
#include "base/error.h"
#include "provisioning/nodeclaim_object.h"

#include "solver_scenarios.h"

#include <stdlib.h>

#define OFFERS(price) "[{\"zone\":\"z1\",\"capacityType\":\"on-demand\",\"price\":" price "}]"

/* Two 4-core types: "accel" is cheaper and alone carries example.com/accelerator. */
#define CATALOG                                                                                                   \
    "json:[{\"name\":\"accel\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"20\"},"                 \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\",\"example.com/accelerator\":\"a100\"},\"offerings\":" OFFERS(   \
        "0.5") "},"                                                                                               \
    "{\"name\":\"plain\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"20\"},"                       \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"offerings\":" OFFERS("1.0") "}]"

static void plain_pool(yb *y)
{
    pool(y, "default", NULL, NULL, NULL, NULL);
}

Test(catalog_labels, pod_selecting_a_catalog_label_is_schedulable)
{
    yb y = {0};
    kp_scenario s;
    plain_pool(&y);
    pod(&y, "p", "cpu: \"1\"", "nodeSelector: {example.com/accelerator: a100}");
    run(&s, &y, CATALOG);
    cr_assert_eq(s.plan->n_errors, 0, "%s", s.plan->n_errors ? s.plan->errors[0].reason : "");
    cr_assert_eq(s.plan->n_claims, 1);
    cr_expect_str_eq(claim_it(&s, 0, 0), "accel");
    cr_expect_eq(claim_n_its(&s, 0), 1, "only the type with the label");
    kp_scenario_free(&s);
}

Test(catalog_labels, pod_excluding_a_catalog_label_avoids_those_types)
{
    yb y = {0};
    kp_scenario s;
    plain_pool(&y);
    pod(&y, "p", "cpu: \"1\"",
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: example.com/accelerator, operator: DoesNotExist}]}]}}}");
    run(&s, &y, CATALOG);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_expect_str_eq(claim_it(&s, 0, 0), "plain");
    kp_scenario_free(&s);
}

/* The DaemonSet runs only on "accel": a 3.5-core pod fits "accel" only
 * without it, so it must take "plain", the dearer type. */
Test(catalog_labels, daemonset_overhead_counts_where_its_catalog_label_selects)
{
    yb y = {0};
    kp_scenario s;
    plain_pool(&y);
    daemonset(&y, "agent", "cpu: \"1\"", "nodeSelector: {example.com/accelerator: a100}");
    pod(&y, "big", "cpu: 3500m", NULL);
    pod(&y, "small", "cpu: 1500m", "nodeSelector: {example.com/accelerator: a100}");
    run(&s, &y, CATALOG);
    cr_assert_eq(s.plan->n_errors, 0, "%s", s.plan->n_errors ? s.plan->errors[0].reason : "");
    int big = kp_scenario_claim_of(&s, "big"), small = kp_scenario_claim_of(&s, "small");
    cr_assert(big >= 0 && small >= 0 && big != small);
    cr_expect_str_eq(claim_it(&s, big, 0), "plain");
    cr_expect_eq(claim_n_its(&s, big), 1, "3.5 cores and the agent do not fit accel");
    cr_expect_eq(claim_request(&s, small, "cpu"), 2500, "the agent's overhead is requested with the pod's");
    kp_scenario_free(&s);
}

/* Host ports of a DaemonSet count only where it lands. */
Test(catalog_labels, daemonset_host_ports_count_only_where_it_lands)
{
    yb y = {0};
    kp_scenario s;
    plain_pool(&y);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\n"
               "spec: {selector: {matchLabels: {ds: agent}}, template: {metadata: {labels: {ds: agent}}, "
               "spec: {nodeSelector: {example.com/accelerator: a100}, containers: [{name: c, "
               "ports: [{containerPort: 9000, hostPort: 9000}], resources: {requests: {cpu: 100m}}}]}}}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {containers: [{name: c, ports: [{containerPort: 9000, hostPort: 9000}], "
               "resources: {requests: {cpu: \"1\"}}}]}\n");
    run(&s, &y, CATALOG);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_expect_str_eq(claim_it(&s, 0, 0), "plain", "port 9000 is the agent's on accel");
    cr_expect_eq(claim_n_its(&s, 0), 1);
    kp_scenario_free(&s);
}

/* ---- concrete labels for requirements that are not one In value ---- */

static const char *created_label(kp_scenario *s, int claim, const char *key)
{
    static char value[128];
    cJSON *nc = kp_nodeclaim_object(s->plan, s->snap, (uint32_t)claim, NULL);
    cr_assert_not_null(nc);
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "metadata"), "labels");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, key);
    const char *out = NULL;
    if (cJSON_IsString(v)) {
        snprintf(value, sizeof(value), "%s", v->valuestring);
        out = value;
    }
    cJSON_Delete(nc);
    return out;
}

/* One NodePool requirement on example.com/tier, one pod; the label both
 * simulate and the created NodeClaim show. */
static void resolved(const char *pool_req, const char *pod_spec, const char *want)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", pool_req, NULL, NULL, NULL);
    pod(&y, "p", "cpu: \"1\"", pod_spec);
    run(&s, &y, "synthetic:20");
    cr_assert_eq(s.plan->n_errors, 0, "%s", s.plan->n_errors ? s.plan->errors[0].reason : "");
    cr_assert_eq(s.plan->n_claims, 1);
    const char *shown = json_claim_label(&s, 0, "example.com/tier");
    const char *created = created_label(&s, 0, "example.com/tier");
    if (!want) {
        cr_expect_null(shown, "%s: labelled %s", pool_req, shown);
        cr_expect_null(created, "%s: labelled %s", pool_req, created);
    } else {
        cr_expect_str_eq(shown ? shown : "(none)", want, "%s / %s", pool_req, pod_spec ? pod_spec : "");
        cr_expect_str_eq(created ? created : "(none)", want, "%s / %s", pool_req, pod_spec ? pod_spec : "");
    }
    kp_scenario_free(&s);
}

#define REQ(op_values) "{key: example.com/tier, " op_values "}"

Test(claim_labels, exists_gets_a_value)
{
    resolved(REQ("operator: Exists"), NULL, "0");
}

Test(claim_labels, not_in_gets_a_value_outside_the_set)
{
    resolved(REQ("operator: NotIn, values: [\"0\", \"1\", gold]"), NULL, "2");
}

Test(claim_labels, bounds_get_a_value_within_them)
{
    resolved(REQ("operator: Gt, values: [\"5\"]"), NULL, "6");
    resolved(REQ("operator: Gte, values: [\"5\"]"), NULL, "5");
    resolved(REQ("operator: Lt, values: [\"3\"]"), NULL, "0");
    resolved(REQ("operator: Lte, values: [\"-4\"]"), NULL, "-4");
}

Test(claim_labels, several_in_values_get_one_of_them)
{
    resolved(REQ("operator: In, values: [silver, gold]"), NULL, "gold");
    resolved(REQ("operator: In, values: [silver]"), NULL, "silver");
}

Test(claim_labels, pod_narrowing_is_resolved_too)
{
    /* The NodePool allows any tier; the pod wants one above 7 and not 8. */
    resolved(REQ("operator: Exists"),
             "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
             "[{matchExpressions: [{key: example.com/tier, operator: Gt, values: [\"7\"]}, "
             "{key: example.com/tier, operator: NotIn, values: [\"8\"]}]}]}}}",
             "9");
}

Test(claim_labels, does_not_exist_and_well_known_keys_get_no_label)
{
    resolved(REQ("operator: DoesNotExist"), NULL, NULL);
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: topology.kubernetes.io/zone, operator: NotIn, values: [test-zone-1]}", NULL, NULL,
         NULL);
    pod(&y, "p", "cpu: \"1\"", NULL);
    run(&s, &y, "synthetic:20");
    cr_assert_eq(s.plan->n_claims, 1);
    cr_expect_null(json_claim_label(&s, 0, "topology.kubernetes.io/zone"), "the provider sets well-known labels");
    kp_scenario_free(&s);
}
