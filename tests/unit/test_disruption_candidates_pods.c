/*
 * Disruption candidates: the pods on a node (Karpenter's
 * ValidatePodsDisruptable: do-not-disrupt pods, PodDisruptionBudgets, which
 * pods count), the NodePool's consolidationPolicy and consolidateAfter
 * (the Consolidatable condition of pkg/controllers/nodeclaim/disruption).
 *
 * Pod cases share one scenario: the subject node "a" holds the case's pods,
 * node "b" holds one pod and has room for a's. A node the planner may take is
 * taken (consolidateAfter 0s, budget 100%).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"
#include "helpers/assert.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

#define POOL_WITH(disruption)                                                                      \
    "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"                \
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: " \
    "default}, "                                                                                   \
    "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}}, "     \
    "disruption: {" disruption "}}\n"
#define POOL                                                                                       \
    POOL_WITH("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: "     \
              "[{nodes: '100%'}]")

#define NODE_AT(name, created)                                                                     \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", creationTimestamp: '" created     \
    "', labels: {"                                                                                 \
    "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', karpenter.sh/initialized: "  \
    "'true', "                                                                                     \
    "node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-east-1a, "       \
    "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: " name                         \
    ", kubernetes.io/arch: amd64, "                                                                \
    "kubernetes.io/os: linux}}\nspec: {providerID: 'aws:///us-east-1a/i-" name "'}\n"              \
    "status: {capacity: {cpu: '4', memory: 16Gi, pods: '58'}, allocatable: {cpu: '4', memory: "    \
    "16Gi, pods: '58'}, "                                                                          \
    "conditions: [{type: Ready, status: 'True'}]}\n"
#define NODE(name) NODE_AT(name, OLD)

/* The NodeClaim of node `node`, initialised at `init`, with `status` extra fields. */
#define CLAIM(node, init, status)                                                                  \
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: " node                    \
    "-claim, creationTimestamp: '" OLD "', "                                                       \
    "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m5.xlarge, "       \
    "topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand}}\n"           \
    "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"        \
    "status: {providerID: 'aws:///us-east-1a/i-" node "', nodeName: " node status ", "             \
    "conditions: [{type: Launched, status: 'True'}, {type: Initialized, status: 'True', "          \
    "lastTransitionTime: '" init "'}]}\n"

#define RS     "{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}"
#define DS     "{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u2, controller: true}"
#define MIRROR "{apiVersion: v1, kind: Node, name: a, uid: u3, controller: true}"
#define DND    ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"

/* A pod bound to `node`: `meta` extra metadata, `owner` its controller, `status` its status fields.
 */
#define POD_FULL(name, node, meta, owner, spec, status)                                            \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default" meta           \
    ", ownerReferences: [" owner "]}\n"                                                            \
    "spec: {nodeName: " node                                                                       \
    ", containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]" spec "}\n"         \
    "status: {" status "}\n"
#define POD_ON_A(name, meta) POD_FULL(name, "a", meta, RS, "", "phase: Running")
#define RUNNING_SINCE(t)     "phase: Running, startTime: '" t "'"

#define PDB_IN(name, ns, match, allowed)                                                           \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: " name                \
    ", namespace: " ns "}\n"                                                                       \
    "spec: {maxUnavailable: 0, selector: {matchLabels: {" match                                    \
    "}}}\nstatus: {disruptionsAllowed: " allowed "}\n"
#define PDB(name, allowed) PDB_IN(name, "default", "app: web", allowed)
#define WEB                ", labels: {app: web}"

typedef struct pod_case {
    const char *name;
    const char *yaml;    /* pods (and PDBs) added to the scenario, on node a */
    bool candidate;      /* a is disrupted */
    const char *needle1; /* when kept: its reason contains these */
    const char *needle2;
} pod_case;

/* Criterion hands parameters to another process: they are indices into
 * these tables, not pointers. */
static const pod_case pod_cases[] = {
    /* do-not-disrupt on pods */
    {"do-not-disrupt pod", POD_ON_A("p", DND), false, "default/p", "karpenter.sh/do-not-disrupt"},
    {"do-not-disrupt pod that succeeded", POD_FULL("p", "a", DND, RS, "", "phase: Succeeded"), true,
     NULL, NULL},
    {"do-not-disrupt pod that failed", POD_FULL("p", "a", DND, RS, "", "phase: Failed"), true, NULL,
     NULL},
    {"do-not-disrupt pod terminating",
     POD_FULL("p", "a", DND ", deletionTimestamp: '2026-11-21T11:59:30Z'", RS, "",
              "phase: Running"),
     true, NULL, NULL},
    {"do-not-disrupt DaemonSet pod", POD_FULL("d", "a", DND, DS, "", "phase: Running"), false,
     "default/d", "do-not-disrupt"},
    {"do-not-disrupt mirror pod", POD_FULL("m", "a", DND, MIRROR, "", "phase: Running"), false,
     "default/m", "do-not-disrupt"},
    {"do-not-disrupt false", POD_ON_A("p", ", annotations: {karpenter.sh/do-not-disrupt: 'false'}"),
     true, NULL, NULL},
    {"do-not-disrupt 2m, started 1m ago",
     POD_FULL("p", "a", ", annotations: {karpenter.sh/do-not-disrupt: 2m}", RS, "",
              RUNNING_SINCE("2026-11-21T11:59:00Z")),
     false, "default/p", "do-not-disrupt"},
    {"do-not-disrupt 2m, started 3m ago",
     POD_FULL("p", "a", ", annotations: {karpenter.sh/do-not-disrupt: 2m}", RS, "",
              RUNNING_SINCE("2026-11-21T11:57:00Z")),
     true, NULL, NULL},
    {"do-not-disrupt 2m, not started",
     POD_ON_A("p", ", annotations: {karpenter.sh/do-not-disrupt: 2m}"), false, "default/p",
     "do-not-disrupt"},
    {"do-not-disrupt with an invalid value",
     POD_ON_A("p", ", annotations: {karpenter.sh/do-not-disrupt: invalid-format}"), true, NULL,
     NULL},
    {"do-not-disrupt with a negative duration",
     POD_FULL("p", "a", ", annotations: {karpenter.sh/do-not-disrupt: '-5m'}", RS, "",
              RUNNING_SINCE("2026-11-21T11:59:00Z")),
     true, NULL, NULL},
    {"the longest do-not-disrupt duration holds",
     POD_FULL("p1", "a", ", annotations: {karpenter.sh/do-not-disrupt: 1m}", RS, "",
              RUNNING_SINCE("2026-11-21T11:58:00Z"))
         POD_FULL("p3", "a", ", annotations: {karpenter.sh/do-not-disrupt: 3m}", RS, "",
                  RUNNING_SINCE("2026-11-21T11:58:00Z")),
     false, "default/p3", "do-not-disrupt"},
    /* PodDisruptionBudgets */
    {"PDB allowing no disruption", POD_ON_A("p", WEB) PDB("pdb", "0"), false, "default/pdb",
     "default/p"},
    {"PDB allowing one disruption", POD_ON_A("p", WEB) PDB("pdb", "1"), true, NULL, NULL},
    {"two PDBs on one pod, both allowing", POD_ON_A("p", WEB) PDB("pdb1", "1") PDB("pdb2", "1"),
     false, "pdb1", "pdb2"},
    {"PDB of another namespace", POD_ON_A("p", WEB) PDB_IN("pdb", "other", "app: web", "0"), true,
     NULL, NULL},
    {"PDB selecting other pods", POD_ON_A("p", ", labels: {app: api}") PDB("pdb", "0"), true, NULL,
     NULL},
    {"PDB with matchExpressions",
     POD_ON_A("p", WEB) "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: "
                        "expr, namespace: default}\n"
                        "spec: {maxUnavailable: 0, selector: {matchExpressions: [{key: app, "
                        "operator: In, values: [web, api]}]}}\n"
                        "status: {disruptionsAllowed: 0}\n",
     false, "default/expr", NULL},
    {"blocking PDB on a DaemonSet pod",
     POD_FULL("d", "a", WEB, DS, "", "phase: Running") PDB("pdb", "0"), false, "default/pdb", NULL},
    {"blocking PDB on a mirror pod",
     POD_FULL("m", "a", WEB, MIRROR, "", "phase: Running") PDB("pdb", "0"), true, NULL, NULL},
    {"blocking PDB on terminal pods",
     POD_FULL("s", "a", WEB, RS, "", "phase: Succeeded")
         POD_FULL("f", "a", WEB, RS, "", "phase: Failed") PDB("pdb", "0"),
     true, NULL, NULL},
    {"blocking PDB on a terminating pod",
     POD_FULL("p", "a", WEB ", deletionTimestamp: '2026-11-21T11:59:30Z'", RS, "", "phase: Running")
         PDB("pdb", "0"),
     true, NULL, NULL},
    {"blocking PDB on a pod tolerating the disrupted taint",
     POD_FULL(
         "p", "a", WEB, RS,
         ", tolerations: [{key: karpenter.sh/disrupted, operator: Exists, effect: NoSchedule}]",
         "phase: Running") PDB("pdb", "0"),
     true, NULL, NULL},
    {"blocking PDB on one pod among several",
     POD_ON_A("p1", "") POD_ON_A("p2", WEB) PDB("pdb", "0"), false, "default/pdb", "default/p2"},
};

static size_t *indices(size_t n)
{
    size_t *idx = cr_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    return idx;
}

ParameterizedTestParameters(disruption_candidates_pods, cases)
{
    size_t n = sizeof(pod_cases) / sizeof(pod_cases[0]);
    return cr_make_param_array(size_t, indices(n), n, NULL);
}

ParameterizedTest(size_t *i, disruption_candidates_pods, cases)
{
    const pod_case *c = &pod_cases[*i];
    static char yaml[1 << 16];
    int n = snprintf(yaml, sizeof(yaml), "%s%s%s%s%s", POOL, NODE("a"), NODE("b"),
                     POD_FULL("q", "b", "", RS, "", "phase: Running"), c->yaml);
    cr_assert(n > 0 && (size_t)n < sizeof(yaml));
    kp_scenario s;
    cr_assert_eq(kp_scenario_run(&s, yaml, "builtin", NULL), 0, "%s: %s", c->name, kp_error_last());
    cr_assert_eq(kp_scenario_disrupt(&s, NOW, NULL), 0, "%s: %s", c->name, kp_error_last());
    const char *why = kp_scenario_blocked_reason(&s, "a");
    if (c->candidate) {
        cr_expect_geq(kp_scenario_disrupted_by(&s, "a"), 0, "%s: a kept (%s)", c->name,
                      why ? why : "no reason");
    } else {
        cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), -1, "%s: a disrupted", c->name);
        cr_assert_not_null(why, "%s: no reason", c->name);
        cr_expect(strstr(why, c->needle1) != NULL, "%s: reason lacks %s: %s", c->name, c->needle1,
                  why);
        if (c->needle2)
            cr_expect(strstr(why, c->needle2) != NULL, "%s: reason lacks %s: %s", c->name,
                      c->needle2, why);
    }
    kp_scenario_free(&s);
}

/* ---------- consolidationPolicy ---------- */

static void run(kp_scenario *s, const char *yaml)
{
    KP_ASSERT_OK(kp_scenario_run(s, yaml, "builtin", NULL));
    KP_ASSERT_OK(kp_scenario_disrupt(s, NOW, NULL));
}

static void expect_reason(const kp_scenario *s, const char *node, const char *needle)
{
    const char *why = kp_scenario_blocked_reason(s, node);
    cr_assert_not_null(why, "%s has no reason", node);
    cr_expect(strstr(why, needle) != NULL, "reason for %s lacks \"%s\": %s", node, needle, why);
}

Test(disruption_candidates_policy, when_empty_takes_empty_nodes_only)
{
    kp_scenario s;
    /* The empty node c is not last: see test_disruption_candidates_bugs.c. */
    run(&s, POOL_WITH(
                "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '100%'}]")
                NODE("c") NODE("a") NODE("b") POD_ON_A("p", "")
                    POD_FULL("q", "b", "", RS, "", "phase: Running"));
    /* a and b could be packed onto one node, but the policy forbids it. */
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "c");
    expect_reason(&s, "a", "WhenEmpty");
    expect_reason(&s, "b", "WhenEmpty");
    kp_scenario_free(&s);
}

Test(disruption_candidates_policy, when_empty_or_underutilized_also_packs)
{
    kp_scenario s;
    run(&s, POOL NODE("a") NODE("b") POD_ON_A("p", "")
                POD_FULL("q", "b", "", RS, "", "phase: Running"));
    cr_assert_geq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_neq(kp_scenario_command_method(&s, 0), "emptiness");
    cr_expect_geq(kp_scenario_disrupted_by(&s, "a"), 0);
    cr_expect_geq(kp_scenario_disrupted_by(&s, "b"), 0);
    kp_scenario_free(&s);
}

/* ---------- consolidateAfter ---------- */

Test(disruption_candidates_after, never_keeps_empty_nodes)
{
    kp_scenario s;
    run(&s, POOL_WITH("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never")
                NODE("a"));
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_reason(&s, "a", "Never");
    kp_scenario_free(&s);
}

Test(disruption_candidates_after, never_keeps_underutilized_nodes)
{
    kp_scenario s;
    run(&s,
        POOL_WITH("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never")
            NODE("a") NODE("b") POD_ON_A("p", "") POD_FULL("q", "b", "", RS, "", "phase: Running"));
    cr_expect_eq(kp_scenario_n_commands(&s), 0);
    expect_reason(&s, "a", "Never");
    expect_reason(&s, "b", "Never");
    kp_scenario_free(&s);
}

Test(disruption_candidates_after, unset_means_at_once)
{
    kp_scenario s;
    /* The CRD's default is 0s: an empty node created a minute ago goes. */
    run(&s, POOL_WITH("consolidationPolicy: WhenEmptyOrUnderutilized")
                NODE_AT("a", "2026-11-21T11:59:00Z"));
    cr_assert_eq(kp_scenario_n_commands(&s), 1);
    cr_expect_str_eq(kp_scenario_command_nodes(&s, 0), "a");
    kp_scenario_free(&s);
}

typedef struct after_case {
    const char *name;
    const char *yaml; /* node a (and its NodeClaim) */
    bool consolidatable;
    const char *until; /* when not: the time the reason names */
} after_case;

#define POOL_1H POOL_WITH("consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1h")

static const after_case after_cases[] = {
    {"node created 30m ago", NODE_AT("a", "2026-11-21T11:30:00Z"), false, "2026-11-21T12:30:00Z"},
    {"node created 2h ago", NODE_AT("a", "2026-11-21T10:00:00Z"), true, NULL},
    {"created exactly 1h ago", NODE_AT("a", "2026-11-21T11:00:00Z"), true, NULL},
    {"last pod event 10m ago on an old node",
     NODE("a") CLAIM("a", OLD, ", lastPodEventTime: '2026-11-21T11:50:00Z'"), false,
     "2026-11-21T12:50:00Z"},
    {"last pod event 2h ago",
     NODE("a") CLAIM("a", OLD, ", lastPodEventTime: '2026-11-21T10:00:00Z'"), true, NULL},
    {"initialized 10m ago, no pod event", NODE("a") CLAIM("a", "2026-11-21T11:50:00Z", ""), false,
     "2026-11-21T12:50:00Z"},
    {"initialized 90m ago, no pod event", NODE("a") CLAIM("a", "2026-11-21T10:30:00Z", ""), true,
     NULL},
    {"last pod event wins over initialization",
     NODE("a") CLAIM("a", "2026-11-21T08:00:00Z", ", lastPodEventTime: '2026-11-21T11:30:00Z'"),
     false, "2026-11-21T12:30:00Z"},
};

ParameterizedTestParameters(disruption_candidates_after, windows)
{
    size_t n = sizeof(after_cases) / sizeof(after_cases[0]);
    return cr_make_param_array(size_t, indices(n), n, NULL);
}

ParameterizedTest(size_t *i, disruption_candidates_after, windows)
{
    const after_case *c = &after_cases[*i];
    static char yaml[1 << 14];
    int n = snprintf(yaml, sizeof(yaml), "%s%s", POOL_1H, c->yaml);
    cr_assert(n > 0 && (size_t)n < sizeof(yaml));
    kp_scenario s;
    run(&s, yaml);
    if (c->consolidatable) {
        cr_expect_eq(kp_scenario_disrupted_by(&s, "a"), 0, "%s: kept: %s", c->name,
                     kp_scenario_blocked_reason(&s, "a") ? kp_scenario_blocked_reason(&s, "a")
                                                         : "-");
    } else {
        cr_expect_eq(kp_scenario_n_commands(&s), 0, "%s", c->name);
        expect_reason(&s, "a", "consolidateAfter");
        expect_reason(&s, "a", c->until);
    }
    kp_scenario_free(&s);
}
