/* First solver scenarios; the full suites live in test_solver_*.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

static const char *const nodepool = "apiVersion: karpenter.sh/v1\n"
                                    "kind: NodePool\n"
                                    "metadata: {name: default}\n"
                                    "spec:\n"
                                    "  template:\n"
                                    "    spec:\n"
                                    "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
                                    "      requirements: []\n";

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 8;
    char *s = malloc(n);
    snprintf(s, n, "%s---\n%s", a, b);
    return s;
}

Test(solver_basics, deployment_of_ten_half_cores_gets_one_nodeclaim)
{
    char *yaml = join(nodepool, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                                "spec:\n  replicas: 10\n  selector: {matchLabels: {app: web}}\n"
                                "  template:\n    metadata: {labels: {app: web}}\n"
                                "    spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\n");
    kp_scenario s;
    cr_assert_eq(kp_scenario_run(&s, yaml, "synthetic:20", NULL), 0, "%s", kp_error_last());
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_eq(s.plan->n_scheduled, 10);
    cr_assert_eq(kp_scenario_claim_of(&s, "web-0"), 0);
    cr_assert_eq(kp_scenario_claim_of(&s, "web-9"), 0);
    /* 5 cores of pods + 100m overhead: the 6-core type is the cheapest that fits. */
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "fake-it-5");
    kp_scenario_free(&s);
    free(yaml);
}

Test(solver_basics, pod_without_nodepool_reports_why)
{
    kp_scenario s;
    const char *yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: lonely}\n"
                       "spec: {containers: [{name: c}]}\n";
    cr_assert_eq(kp_scenario_run(&s, yaml, "synthetic:4", NULL), 0, "%s", kp_error_last());
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "lonely"));
    cr_assert(strstr(kp_scenario_error_of(&s, "lonely"), "no nodepool"), "%s", kp_scenario_error_of(&s, "lonely"));
    kp_scenario_free(&s);
}
