/*
 * Pods with Dynamic Resource Allocation requirements (IGNORE_DRA_REQUESTS,
 * true in Karpenter by default and the only setting supported here): such a
 * pod is not provisioned for, with Karpenter's reason, and a DaemonSet with
 * them is not counted as node overhead. Cases follow Karpenter's scheduler
 * (HasDRARequirements: spec.resourceClaims, or resources.claims in any
 * container or init container).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/pod_rules.h"
#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

#define CT_ALL "{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand, reserved]}"
#define POD_CLAIMS "resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-template}]"

static void expect_dra_refused(const char *spec)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_ALL, NULL, NULL, NULL);
    pod(&y, "plain", "cpu: 1", NULL);
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: dra}\nspec: {%s}\n", spec);
    run(&s, &y, FAKE_CATALOG);
    cr_expect_geq(kp_scenario_claim_of(&s, "plain"), 0, "the other pod is provisioned for");
    cr_expect_eq(kp_scenario_claim_of(&s, "dra"), -1, "%s: placed", spec);
    const char *why = kp_scenario_error_of(&s, "dra");
    cr_expect_str_eq(why ? why : "", KP_POD_DRA_UNSUPPORTED, "%s", spec);
    kp_scenario_free(&s);
    free(y.s);
}

Test(dra, a_pod_with_resource_claims_is_not_provisioned_for)
{
    expect_dra_refused("containers: [{name: c, resources: {requests: {cpu: 1}}}], " POD_CLAIMS);
}

Test(dra, a_container_consuming_a_claim_is_enough)
{
    expect_dra_refused("containers: [{name: c, resources: {requests: {cpu: 1}, claims: [{name: gpu}]}}]");
}

Test(dra, an_init_container_consuming_a_claim_is_enough)
{
    expect_dra_refused("initContainers: [{name: i, resources: {claims: [{name: gpu}]}}], "
                       "containers: [{name: c, resources: {requests: {cpu: 1}}}]");
}

Test(dra, empty_claim_lists_are_not_dra)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_ALL, NULL, NULL, NULL);
    pod(&y, "p", "cpu: 1", "resourceClaims: []");
    run(&s, &y, FAKE_CATALOG);
    cr_expect_geq(kp_scenario_claim_of(&s, "p"), 0, "%s", kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
    free(y.s);
}

/* A DaemonSet that would need more CPU than any instance type has: counted as
 * overhead it leaves no room for the pod; with DRA requirements it is not
 * counted (Karpenter skips it, since it would not be scheduled for either). */
static int claim_for_pod_beside(const char *ds_spec)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_ALL, NULL, NULL, NULL);
    daemonset(&y, "big", "cpu: 1000", ds_spec);
    pod(&y, "p", "cpu: 1", NULL);
    run(&s, &y, FAKE_CATALOG);
    int c = kp_scenario_claim_of(&s, "p");
    kp_scenario_free(&s);
    free(y.s);
    return c;
}

Test(dra, a_daemonset_with_dra_is_not_node_overhead)
{
    cr_expect_eq(claim_for_pod_beside(NULL), -1, "the control: the DaemonSet as overhead leaves no room");
    cr_expect_geq(claim_for_pod_beside(POD_CLAIMS), 0, "the DRA DaemonSet is not counted");
}
