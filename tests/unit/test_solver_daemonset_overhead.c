/*
 * Solver scenarios: DaemonSet overhead. Only DaemonSets whose
 * pod template tolerates a NodePool's taints and matches its requirements and
 * an instance type count on that type; the overhead changes which types can
 * hold the pods and is added once to a NodeClaim's requests. Cases follow
 * Karpenter's provisioning suite.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

/* ---------- DaemonSet overhead on new NodeClaims ---------- */

/* The pod every case places: 1 core, 1Gi. The 2-core type holds it alone
 * (1.9 cores allocatable), the 4-core type also holds a 2-core DaemonSet. */
#define APP "cpu: '1', memory: 1Gi"
#define DS_2 "cpu: '2', memory: 2Gi"

static void pool_with(yb *y, const char *tspec, const char *tmeta)
{
    pool(y, "default", NULL, tspec, tmeta, NULL);
}

/* Which type the pod's NodeClaim launches with. */
static const char *launched(kp_scenario *s, const char *pod_name)
{
    int c = kp_scenario_claim_of(s, pod_name);
    cr_assert_geq(c, 0, "%s: %s", pod_name, kp_scenario_error_of(s, pod_name));
    return kp_scenario_claim_type(s, c);
}

static const struct ds_case {
    const char *name;
    const char *tspec; /* NodePool template spec fields */
    const char *tmeta; /* NodePool template metadata fields */
    const char *ds_requests;
    const char *ds_spec;
    const char *pod_spec;
    const char *want; /* default-instance-type: counted; small-instance-type: ignored */
} ds_cases[] = {
    {"plain daemonset counts", NULL, NULL, DS_2, NULL, NULL, "default-instance-type"},
    {"startup taints do not keep daemons away", "startupTaints: [{key: foo.com/taint, effect: NoSchedule}]", NULL,
     DS_2, NULL, NULL, "default-instance-type"},
    {"intolerant daemonset is ignored", "taints: [{key: foo, value: bar, effect: NoSchedule}]", NULL, DS_2, NULL,
     "tolerations: [{operator: Exists}]", "small-instance-type"},
    {"tolerant daemonset counts", "taints: [{key: foo, value: bar, effect: NoSchedule}]", NULL, DS_2,
     "tolerations: [{key: foo, operator: Exists}]", "tolerations: [{operator: Exists}]", "default-instance-type"},
    {"PreferNoSchedule taints do not keep daemons away", "taints: [{key: test, effect: PreferNoSchedule}]", NULL,
     DS_2, NULL, NULL, "default-instance-type"},
    {"selector on an unknown label is ignored", NULL, NULL, DS_2, "nodeSelector: {node: invalid}", NULL,
     "small-instance-type"},
    {"selector on a template label counts", NULL, "labels: {purpose: monitoring}", DS_2,
     "nodeSelector: {purpose: monitoring}", NULL, "default-instance-type"},
    {"selector on another template label value is ignored", NULL, "labels: {purpose: monitoring}", DS_2,
     "nodeSelector: {purpose: logging}", NULL, "small-instance-type"},
    {"required type no type has is ignored", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
     " [{key: node.kubernetes.io/instance-type, operator: In, values: [non-existent-instance-type]}]}]}}}",
     NULL, "small-instance-type"},
    {"NotIn on an undefined key counts", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
     " [{key: foo, operator: NotIn, values: [bar]}]}]}}}",
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}", "default-instance-type"},
    {"second of two required terms matches", NULL, "labels: {foo: bar}", DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
     "{matchExpressions: [{key: foo, operator: In, values: [voo]}]},"
     " {matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}}",
     NULL, "default-instance-type"},
    {"no required term matches", NULL, "labels: {foo: bar}", DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
     "{matchExpressions: [{key: foo, operator: In, values: [voo]}]},"
     " {matchExpressions: [{key: foo, operator: In, values: [zoo]}]}]}}}",
     NULL, "small-instance-type"},
    {"incompatible preference does not matter", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference:"
     " {matchExpressions: [{key: node, operator: In, values: [invalid]}]}}]}}",
     NULL, "default-instance-type"},
    {"daemon on the pool's karpenter labels counts", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
     " [{key: karpenter.sh/initialized, operator: In, values: ['true']},"
     " {key: karpenter.sh/registered, operator: Exists}, {key: karpenter.sh/nodepool, operator: In, values: [default]}]}]}}}",
     NULL, "default-instance-type"},
    {"daemon for another nodepool is ignored", NULL, NULL, DS_2, "nodeSelector: {karpenter.sh/nodepool: other}", NULL,
     "small-instance-type"},
    {"daemonset without requests fits anywhere", NULL, NULL, "", NULL, NULL, "small-instance-type"},
};

Test(solver_basic_daemons, which_daemonsets_count_towards_overhead)
{
    for (size_t i = 0; i < sizeof(ds_cases) / sizeof(ds_cases[0]); i++) {
        const struct ds_case *tc = &ds_cases[i];
        yb y = {0};
        kp_scenario s;
        pool_with(&y, tc->tspec, tc->tmeta);
        daemonset(&y, "ds", tc->ds_requests, tc->ds_spec);
        pod(&y, "p", APP, tc->pod_spec);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_str_eq(launched(&s, "p"), tc->want, "%s", tc->name);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_daemons, no_daemonset_means_the_smallest_type)
{
    /* The baseline the table compares against. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    pod(&y, "p", APP, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "small-instance-type");
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_filtered_by_instance_type_labels)
{
    /* The 10-core daemon only targets large types, the 1-core one small types:
     * on the 2-core type 1 + 1 cores do not fit (1.9 allocatable). */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "small-ds", "cpu: '1'", "nodeSelector: {karpenter.k8s.aws/instance-size: small}");
    daemonset(&y, "large-ds", "cpu: '10'", "nodeSelector: {karpenter.k8s.aws/instance-size: large}");
    pod(&y, "p", APP, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    /* arm-instance-type (16 cores, large) carries only the 10-core daemon and stays an option. */
    cr_assert(claim_has_it(&s, 0, "arm-instance-type"));
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_too_big_for_every_type)
{
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "ds", "cpu: '10000', memory: 10000Gi", NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

/* DaemonSet pod templates as the API server would not default them: requests
 * come from limits where missing, init containers count. */
static const struct ds_resources_case {
    const char *name;
    const char *containers; /* spec fields of the template */
    bool schedulable;
} ds_resources_cases[] = {
    {"limits stand in for a missing memory request",
     "containers: [{name: c, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 10000Gi}}" DS_PORT "}]",
     false},
    {"init container too big",
     "initContainers: [{name: i, resources: {requests: {cpu: '10000', memory: 10000Gi}}}],"
     " containers: [{name: c" DS_PORT "}]",
     false},
    {"init container limits too big",
     "initContainers: [{name: i, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 10000Gi}}}],"
     " containers: [{name: c, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 1Gi}}" DS_PORT "}]",
     false},
    {"no requests and no limits", "containers: [{name: c" DS_PORT "}]", true},
};

Test(solver_basic_daemons, daemonset_requests_from_limits_and_init_containers)
{
    for (size_t i = 0; i < sizeof(ds_resources_cases) / sizeof(ds_resources_cases[0]); i++) {
        const struct ds_resources_case *tc = &ds_resources_cases[i];
        yb y = {0};
        kp_scenario s;
        pool_with(&y, NULL, NULL);
        yb_add(&y,
               "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {%s}}}\n",
               tc->containers);
        pod(&y, "p", NULL, NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(kp_scenario_claim_of(&s, "p") >= 0, tc->schedulable, "%s: %s", tc->name,
                     kp_scenario_error_of(&s, "p"));
        kp_scenario_free(&s);
    }
}

Test(solver_basic_daemons, daemonset_init_container_maximum)
{
    /* max(1, 3) cores and max(1Gi, 3Gi) from limits: only the 4-core, 4Gi types hold the daemon. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {"
               "initContainers: [{name: i, resources: {requests: {cpu: '3'}, limits: {cpu: '10000', memory: 3Gi}}}],"
               " containers: [{name: c, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 1Gi}}" DS_PORT
               "}]}}}\n");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    cr_assert(!claim_has_it(&s, 0, "small-instance-type"));
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_host_port_blocks_the_pod)
{
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {"
               "containers: [{name: c, resources: {requests: {" DS_2 "}}, ports: [{containerPort: 8080, hostPort: 8080}]}]}}}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {containers: [{name: c, resources: {requests: {" APP "}},"
               " ports: [{containerPort: 8080, hostPort: 8080}]}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_host_port_only_where_the_daemon_runs)
{
    /* The daemon holding port 8080 only runs on large types; the pod wants a
     * small type, so the port is free there (and the 2-core small daemon counts). */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: large-ds}\n"
               "spec: {selector: {matchLabels: {ds: l}}, template: {metadata: {labels: {ds: l}}, spec: {"
               "nodeSelector: {karpenter.k8s.aws/instance-size: large}, containers: [{name: c,"
               " resources: {requests: {cpu: '4', memory: 4Gi}}, ports: [{containerPort: 8080, hostPort: 8080}]}]}}}\n");
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: small-ds}\n"
               "spec: {selector: {matchLabels: {ds: s}}, template: {metadata: {labels: {ds: s}}, spec: {"
               "nodeSelector: {karpenter.k8s.aws/instance-size: small}, containers: [{name: c,"
               " resources: {requests: {" DS_2 "}}, ports: [{containerPort: 8081, hostPort: 8081}]}]}}}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {nodeSelector: {karpenter.k8s.aws/instance-size: small}, containers: [{name: c,"
               " resources: {requests: {" APP "}}, ports: [{containerPort: 8080, hostPort: 8080}]}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, "karpenter.k8s.aws/instance-size"), "In [small]");
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, nodeclaim_requests_include_daemon_overhead_once)
{
    for (int pods = 1; pods <= 2; pods++) {
        yb y = {0};
        kp_scenario s;
        pool_with(&y, NULL, NULL);
        daemonset(&y, "ds", "cpu: '1', memory: 1Mi", NULL);
        deploy(&y, "app", pods, "cpu: '1', memory: 1Mi", NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(s.plan->n_claims, 1);
        cr_assert_eq(claim_request(&s, 0, "cpu"), (pods + 1) * 1000);
        cr_assert_eq(claim_request(&s, 0, "memory"), (int64_t)(pods + 1) * 1024 * 1024 * 1000);
        cr_assert_eq(claim_request(&s, 0, "pods"), (pods + 1) * 1000);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_daemons, daemon_overhead_differs_by_type)
{
    /* A 3-core daemon only on arm64 types: amd64 types carry nothing, so the
     * amd64 claim asks for its pod alone and the arm64 one for pod and daemon. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "arm-only", "cpu: '3'", "nodeSelector: {kubernetes.io/arch: arm64}");
    pod(&y, "amd", APP, "nodeSelector: {kubernetes.io/arch: amd64}");
    pod(&y, "arm", APP, "nodeSelector: {kubernetes.io/arch: arm64}");
    run(&s, &y, FAKE_CATALOG);
    int amd = kp_scenario_claim_of(&s, "amd"), arm = kp_scenario_claim_of(&s, "arm");
    cr_assert(amd >= 0 && arm >= 0 && amd != arm);
    cr_assert_str_eq(kp_scenario_claim_type(&s, amd), "small-instance-type");
    cr_assert_eq(claim_request(&s, amd, "cpu"), 1000);
    cr_assert_str_eq(kp_scenario_claim_type(&s, arm), "arm-instance-type");
    cr_assert_eq(claim_request(&s, arm, "cpu"), 4000);
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, unconstrained_pods_share_a_claim_across_daemon_groups)
{
    /* The second pod narrows the first pod's claim to arm64 rather than opening
     * a new one: the arm type holds both pods and its 3-core daemon. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "arm-only", "cpu: '3'", "nodeSelector: {kubernetes.io/arch: arm64}");
    pod(&y, "any", APP, NULL);
    pod(&y, "arm", APP, "nodeSelector: {kubernetes.io/arch: arm64}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "arm-instance-type");
    cr_assert_eq(claim_request(&s, 0, "cpu"), 5000);
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, overhead_fills_a_node_sooner)
{
    /* 4-core types hold three 1-core pods alone, two beside a 1-core daemon. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}", NULL,
         NULL, NULL);
    daemonset(&y, "ds", "cpu: '1'", NULL);
    deploy(&y, "app", 6, "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_scheduled, 6);
    cr_assert_eq(s.plan->n_claims, 3);
    for (int c = 0; c < 3; c++)
        cr_assert_eq(kp_scenario_claim_pods(&s, c), 2);
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, registered_and_initialized_are_for_daemons_only)
{
    /* Two daemons that select karpenter.sh/initialized and karpenter.sh/registered
     * count (3 cores with the 1-core pod no longer fit 2-core types), but those
     * labels are not requirements of the NodeClaim. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "ds1", "cpu: '1'", "nodeSelector: {karpenter.sh/initialized: 'true'}");
    daemonset(&y, "ds2", "cpu: '1'", "nodeSelector: {karpenter.sh/registered: 'true'}");
    pod(&y, "p", "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    cr_assert_eq(claim_request(&s, 0, "cpu"), 3000);
    cr_assert(!json_claim_has_req(&s, 0, "karpenter.sh/registered"));
    cr_assert(!json_claim_has_req(&s, 0, "karpenter.sh/initialized"));
    cr_assert(json_claim_has_req(&s, 0, "karpenter.sh/nodepool"));
    cr_assert_null(json_claim_label(&s, 0, "karpenter.sh/initialized"));
    kp_scenario_free(&s);
}
