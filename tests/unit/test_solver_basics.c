/* First solver scenarios; the full suites live in test_solver_*.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"
#include "scheduling/plan_output.h"

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
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "synthetic:20", NULL));
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_eq(s.plan->n_scheduled, 10);
    cr_assert_eq(kp_scenario_claim_of(&s, "web-0"), 0);
    cr_assert_eq(kp_scenario_claim_of(&s, "web-9"), 0);
    /* 5 cores of pods + 100m overhead: the 6-core type is the cheapest that fits. */
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "fake-it-5");
    kp_scenario_free(&s);
    free(yaml);
}

/* `simulate -o table` never prints a table with rows missing: a buffer too
 * small for it is an error. */
Test(solver_basics, plan_table_that_does_not_fit_is_an_error)
{
    char *yaml = join(nodepool, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                "spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\n");
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "synthetic:20", NULL));
    kp_buf whole = KP_BUF_INIT(1 << 20);
    KP_ASSERT_OK(kp_plan_write_table(s.plan, s.snap, s.n_pending, &whole));
    cr_assert(strstr(kp_buf_cstr(&whole), "1 of 1 pending pods scheduled"), "%s", kp_buf_cstr(&whole));
    for (size_t cap = 0; cap < whole.len; cap += 37) {
        kp_buf small = KP_BUF_INIT(cap);
        cr_expect_eq(kp_plan_write_table(s.plan, s.snap, s.n_pending, &small), KP_ETOOLARGE, "cap %zu", cap);
        kp_buf_free(&small);
    }
    kp_buf_free(&whole);
    kp_scenario_free(&s);
    free(yaml);
}

Test(solver_basics, pod_without_nodepool_reports_why)
{
    kp_scenario s;
    const char *yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: lonely}\n"
                       "spec: {containers: [{name: c}]}\n";
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "synthetic:4", NULL));
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "lonely"));
    cr_assert(strstr(kp_scenario_error_of(&s, "lonely"), "no nodepool"), "%s", kp_scenario_error_of(&s, "lonely"));
    kp_scenario_free(&s);
}

/* Karpenter's TruncateInstanceTypes: minValues must survive keeping only the
 * cheapest types a launch can take. */
Test(solver_basics, min_values_broken_by_truncation_leaves_pods_pending)
{
    static const char *const pool = "apiVersion: karpenter.sh/v1\n"
                                    "kind: NodePool\n"
                                    "metadata: {name: wide}\n"
                                    "spec:\n"
                                    "  template:\n"
                                    "    spec:\n"
                                    "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
                                    "      requirements:\n"
                                    "      - {key: node.kubernetes.io/instance-type, operator: Exists, minValues: %d}\n"
                                    "---\n"
                                    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                    "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n";
    char yaml[1024];
    kp_scenario s;
    snprintf(yaml, sizeof(yaml), pool, 80);
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "synthetic:400", NULL));
    const char *why = kp_scenario_error_of(&s, "p");
    cr_assert_not_null(why, "80 distinct types cannot survive truncation to 60");
    cr_assert(strstr(why, "minValues"), "%s", why);
    cr_assert_eq(s.plan->n_claims, 0);
    kp_scenario_free(&s);

    snprintf(yaml, sizeof(yaml), pool, 50);
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "synthetic:400", NULL));
    cr_assert_null(kp_scenario_error_of(&s, "p"));
    cr_assert_eq(s.plan->claims[0].n_its, 60);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "fake-it-0");
    kp_scenario_free(&s);
}

/* A NodeClaim created by the last batch but not launched yet has no capacity
 * in its status. Pods that were planned onto it (and are still pending) must
 * fit on it again rather than make a second claim: the controller may run a
 * batch in that window, and after a restart it always does. */
Test(solver_basics, unlaunched_nodeclaim_holds_its_pods)
{
    char *yaml = join(nodepool,
                      "apiVersion: karpenter.sh/v1\nkind: NodeClaim\n"
                      "metadata: {name: default-abcde, labels: {karpenter.sh/nodepool: default}}\n"
                      "spec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
                      "  requirements:\n"
                      "    - {key: node.kubernetes.io/instance-type, operator: In, values: [fake-it-5, fake-it-6]}\n"
                      "    - {key: karpenter.sh/nodepool, operator: In, values: [default]}\n"
                      "  resources: {requests: {cpu: '5', pods: '10'}}\n"
                      "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                      "spec:\n  replicas: 10\n  selector: {matchLabels: {app: web}}\n"
                      "  template:\n    metadata: {labels: {app: web}}\n"
                      "    spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\n");
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "synthetic:20", NULL));
    cr_expect_eq(s.plan->n_claims, 0, "a second claim was made for pods the first one holds");
    cr_expect_str_eq(kp_scenario_node_of(&s, "web-0"), "default-abcde");
    cr_expect_str_eq(kp_scenario_node_of(&s, "web-9"), "default-abcde");
    kp_scenario_free(&s);
    free(yaml);
}
