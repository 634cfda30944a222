/*
 * The disruption planner, part two: the reason given for every managed node
 * left in place, one case per reason the planner can give (facts.c for what
 * makes a node no candidate at all, methods.c and simulate.c for what a
 * method found when it looked at it), exactly as `simulate --disrupt` prints
 * it under "blocked", and as data: the kind, and the event Karpenter
 * publishes for it — Unconsolidatable or DisruptionBlocked, with Karpenter's
 * message (consolidation.go, statenode.go, consolidation_test.go "Events",
 * suite_test.go "Candidate Filtering") — which the controller writes.
 *
 * The catalog is test_disruption_consolidation_1.c's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"

/* ---------- the catalog ---------- */

/* ---------- every reason a node stays ---------- */

typedef struct reason_case {
    const char *name;
    void (*build)(sc *c); /* the cluster; "a" is the node explained */
    const char *node;
    const char *reason; /* the exact reason, or its beginning when `prefix` */
    bool prefix;
    bool spot_to_spot;
    uint32_t loops;
    /* As data: the kind, and Karpenter's event (reason NULL: none; message
     * exact, or its beginning when `prefix`). */
    enum kp_disrupt_block kind;
    const char *event;
    const char *message;
    const char *object;
    bool serial; /* Karpenter's one command per loop */
    bool no_split;
} reason_case;

static void r_in_flight(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    add(c, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: a, "
           "creationTimestamp: '" OLD "', "
           "labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: large}}\n"
           "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n"
           "status: {conditions: [{type: Launched, status: 'True'}]}\n");
}

static void r_uninitialized(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.uninitialized = true));
}

static void r_deleting(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.meta = DELETING));
    pod(c, "p", "a", "1");
}

static void r_node_dnd(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.meta = ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"));
}

static void r_nominated(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge"));
    pod(c, "p", "a", "1");
    pod_full(c, "w", NULL, "1", NULL, NULL, ", nodeSelector: {kubernetes.io/hostname: a}");
}

static void r_unknown_pool(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.pool = "ghost"));
}

static void r_pod_dnd(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge"));
    pod_full(c, "p", "a", "1", NULL, DND_POD, NULL);
}

#define PDB(name, allowed)                                                                         \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: " name                \
    ", namespace: default}\n"                                                                      \
    "spec: {maxUnavailable: 1, selector: {matchLabels: {app: test}}}\nstatus: "                    \
    "{disruptionsAllowed: " allowed "}\n"

static void r_two_pdbs(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge"));
    pod(c, "p", "a", "1");
    add(c, PDB("pdb1", "1") PDB("pdb2", "1"));
}

static void r_pdb(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge"));
    pod(c, "p", "a", "1");
    add(c, PDB("pdb", "0"));
}

static void r_never(sc *c)
{
    pool(c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never, budgets: "
         "[{nodes: '100%'}]");
    node(c, "a", N(.type = "xlarge"));
    pod(c, "p", "a", "1");
}

static void r_not_elapsed(sc *c)
{
    pool(c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1h, budgets: [{nodes: "
         "'100%'}]");
    node(c, "a", N(.type = "xlarge", .pod_event = "2026-11-21T11:50:00Z"));
    pod(c, "p", "a", "1");
}

static void r_budget(sc *c)
{
    pool(c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "
         "'0'}]");
    node(c, "a", N(.type = "xlarge"));
    pod(c, "p", "a", "1");
}

static void r_empty_budget(sc *c)
{
    pool(c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "
         "'0', reasons: "
         "[Empty]}]");
    node(c, "a", N(.type = "xlarge"));
}

static void r_drift_budget(sc *c)
{
    pool(c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '0', reasons: "
         "[Drifted]}]");
    node(c, "a", N(.type = "small", .conditions = DRIFTED));
    pod(c, "p", "a", "1500m");
}

static void r_drift_nowhere(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "small", .conditions = DRIFTED, .labels = ", rack: r1"));
    pod_full(c, "p", "a", "1500m", NULL, NULL, ", nodeSelector: {rack: r1}");
}

static void r_spot_feature(sc *c)
{
    pool(c, "default", BOTH, NULL);
    node(c, "a", N(.type = "xlarge", .ct = "spot"));
    pod(c, "p", "a", "1");
}

static void r_no_cheaper_spot(sc *c)
{
    pool(c, "default", BOTH, NULL);
    node(c, "a", N(.type = "small", .ct = "spot"));
    pod(c, "p", "a", "1500m");
}

static void r_spot_15(sc *c)
{
    pool(c, "default", BOTH, NULL);
    node(c, "a", N(.type = "2xlarge", .ct = "spot"));
    pod(c, "p", "a", "1");
}

static void r_claims(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge"));
    const char *spread =
        ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
        "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: test}}}]";
    pod_full(c, "p0", "a", "1", NULL, NULL, spread);
    pod_full(c, "p1", "a", "1", NULL, NULL, spread);
    pod_full(c, "p2", "a", "1", NULL, NULL, spread);
}

static void r_no_cheaper(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "small"));
    pod(c, "p", "a", "1500m");
}

static void r_unknown_type(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    /* Created within the hour: not yet drifted (InstanceTypeNotFound). */
    node(c, "a", N(.type = "xlarge", .type_label = "mystery", .created = "2026-11-21T11:30:00Z"));
    pod(c, "p", "a", "1");
}

static void r_no_zone(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge", .no_zone = true));
    pod(c, "p", "a", "1");
}

static void r_when_empty(sc *c)
{
    pool(c, "default", OD_ONLY,
         "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '100%'}]");
    node(c, "a", N(.type = "xlarge"));
    pod(c, "p", "a", "1");
}

static void r_nowhere(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "a", N(.type = "xlarge", .labels = ", rack: r1"));
    pod_full(c, "p", "a", "1", NULL, NULL, ", nodeSelector: {rack: r1}");
}

static void r_uninitialized_destination(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "u", N(.type = "xlarge", .uninitialized = true));
    node(c, "a", N(.type = "small"));
    pod(c, "pu", "u", "1");
    pod(c, "p", "a", "1500m");
}

static void r_not_looked_at(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    /* With one loop, single-node stops at b, the better saving. */
    node(c, "b", N(.type = "2xlarge"));
    node(c, "a", N(.type = "xlarge"));
    pod(c, "pb", "b", "9");
    pod(c, "p", "a", "9");
}

#define BLOCKED "DisruptionBlocked"
#define UNCONSOLIDATABLE "Unconsolidatable"

static const reason_case reason_cases[] = {
    {"NodeClaim without a Node", r_in_flight, "a", "its NodeClaim has no node yet", .kind = KP_BLOCK_IN_FLIGHT,
     .event = BLOCKED, .message = "Nodeclaim does not have an associated node"},
    {"not initialized", r_uninitialized, "a", "node is not initialized", .kind = KP_BLOCK_NOT_INITIALIZED,
     .event = BLOCKED, .message = "Node isn't initialized"},
    {"being deleted", r_deleting, "a", "node is being deleted", .kind = KP_BLOCK_DELETING, .event = BLOCKED,
     .message = "Node is deleting or marked for deletion"},
    {"do-not-disrupt node", r_node_dnd, "a",
     "disruption is blocked by the karpenter.sh/do-not-disrupt annotation on the node",
     .kind = KP_BLOCK_NODE_DO_NOT_DISRUPT, .event = BLOCKED,
     .message = "Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation"},
    {"nominated", r_nominated, "a", "node is nominated for pending pod default/w", .kind = KP_BLOCK_NOMINATED,
     .event = BLOCKED, .message = "Node is nominated for a pending pod", .object = "default/w"},
    {"unknown NodePool", r_unknown_pool, "a", "its NodePool ghost is not known", .kind = KP_BLOCK_NODEPOOL_NOT_FOUND,
     .event = BLOCKED, .message = "NodePool not found (NodePool=ghost)", .object = "ghost"},
    {"do-not-disrupt pod", r_pod_dnd, "a", "pod default/p has the karpenter.sh/do-not-disrupt annotation",
     .kind = KP_BLOCK_POD_DO_NOT_DISRUPT, .event = BLOCKED,
     .message = "Pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=default/p)", .object = "default/p"},
    {"two PDBs", r_two_pdbs, "a",
     "pod default/p is selected by more than one PodDisruptionBudget (pdb1 and pdb2): eviction "
     "cannot proceed",
     .kind = KP_BLOCK_PDB_MULTIPLE, .event = BLOCKED,
     .message = "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/pdb1 default/pdb2])",
     .object = "default/pdb1 default/pdb2"},
    {"PDB at zero", r_pdb, "a", "PodDisruptionBudget default/pdb allows 0 disruptions (pod default/p)",
     .kind = KP_BLOCK_PDB, .event = BLOCKED, .message = "Pdb prevents pod evictions (PodDisruptionBudget=[default/pdb])",
     .object = "default/pdb"},
    {"consolidateAfter Never", r_never, "a", "NodePool default has consolidateAfter: Never",
     .kind = KP_BLOCK_CONSOLIDATION_DISABLED, .event = UNCONSOLIDATABLE,
     .message = "NodePool \"default\" has consolidation disabled", .object = "default"},
    {"consolidateAfter not elapsed", r_not_elapsed, "a", "consolidateAfter has not elapsed (until 2026-11-21T12:50:00Z)",
     .kind = KP_BLOCK_CONSOLIDATE_AFTER},
    {"Underutilized budget", r_budget, "a",
     "the disruption budgets of NodePool default allow no more Underutilized disruptions now", .kind = KP_BLOCK_BUDGET,
     .event = BLOCKED,
     .message = "No allowed disruptions for disruption reason Underutilized due to blocking budget (NodePool=default)",
     .object = "default"},
    {"Empty budget", r_empty_budget, "a",
     "the disruption budgets of NodePool default allow no more Empty disruptions now", .kind = KP_BLOCK_BUDGET,
     .event = BLOCKED,
     .message = "No allowed disruptions for disruption reason Empty due to blocking budget (NodePool=default)",
     .object = "default"},
    {"Drifted budget", r_drift_budget, "a",
     "the disruption budgets of NodePool default allow no more Drifted disruptions now", .kind = KP_BLOCK_BUDGET,
     .event = BLOCKED,
     .message = "No allowed disruptions for disruption reason Drifted due to blocking budget (NodePool=default)",
     .object = "default"},
    {"drifted with nowhere to go", r_drift_nowhere, "a", "drifted (AMIDrifted), but pod default/p would have nowhere to go: ",
     true, .kind = KP_BLOCK_DRIFT_UNSCHEDULABLE, .event = BLOCKED,
     .message = "Not all pods would schedule, default/p => ", .object = "default/p"},
    {"spot to spot off", r_spot_feature, "a", "replacing spot with spot needs the SpotToSpotConsolidation feature",
     .kind = KP_BLOCK_SPOT_TO_SPOT_DISABLED, .event = UNCONSOLIDATABLE,
     .message = "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"},
    {"no cheaper spot", r_no_cheaper_spot, "a", "no cheaper spot replacement", false, true, .kind = KP_BLOCK_NO_CHEAPER,
     .event = UNCONSOLIDATABLE, .message = "Can't replace with a cheaper node"},
    {"fewer than 15 cheaper spot types", r_spot_15, "a", "spot-to-spot consolidation needs 15 cheaper instance types, found 4",
     false, true, .kind = KP_BLOCK_SPOT_TO_SPOT_OPTIONS, .event = UNCONSOLIDATABLE,
     .message = "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to "
                "consolidate, got 4"},
    {"several NodeClaims", r_claims, "a", "its pods would need 3 new NodeClaims", .kind = KP_BLOCK_NEEDS_SEVERAL,
     .event = UNCONSOLIDATABLE, .message = "Can't remove without creating 3 candidates", .no_split = true},
    {"no cheaper replacement", r_no_cheaper, "a", "no cheaper replacement: its pods need $0.1000/hour, it costs $0.1000/hour",
     .kind = KP_BLOCK_NO_CHEAPER, .event = UNCONSOLIDATABLE, .message = "Can't replace with a cheaper node"},
    {"instance type not in the catalog", r_unknown_type, "a", "its instance type mystery is not in the catalog",
     .kind = KP_BLOCK_INSTANCE_TYPE_NOT_FOUND, .event = UNCONSOLIDATABLE, .message = "Instance Type \"mystery\" not found",
     .object = "mystery"},
    {"no zone label", r_no_zone, "a", "node has no zone or capacity-type label", .kind = KP_BLOCK_MISSING_LABEL,
     .event = UNCONSOLIDATABLE, .message = "Node does not have label \"topology.kubernetes.io/zone\"",
     .object = "topology.kubernetes.io/zone"},
    {"WhenEmpty", r_when_empty, "a", "NodePool default consolidates only empty nodes (WhenEmpty)",
     .kind = KP_BLOCK_WHEN_EMPTY, .event = UNCONSOLIDATABLE,
     .message = "NodePool \"default\" has consolidation policy WhenEmpty, but node is not empty", .object = "default"},
    {"nowhere to go", r_nowhere, "a", "pod default/p would have nowhere to go: ", true, .kind = KP_BLOCK_UNSCHEDULABLE,
     .event = UNCONSOLIDATABLE, .message = "Not all pods would schedule, default/p => ", .object = "default/p"},
    {"uninitialized destination", r_uninitialized_destination, "a", "pods would move to u, which is not initialized yet",
     .kind = KP_BLOCK_UNINITIALIZED_TARGET, .event = UNCONSOLIDATABLE,
     .message = "Not all pods would schedule, default/p => would schedule against uninitialized nodeclaim/u-claim, "
                "node/u ",
     .object = "u"},
    {"not looked at in the loop", r_not_looked_at, "a", "no cheaper way to run its pods was found", .loops = 1,
     .kind = KP_BLOCK_NOTHING_TO_DO, .serial = true},
};

ParameterizedTestParameters(plan_reasons, every_kind)
{
    static size_t idx[sizeof(reason_cases) / sizeof(reason_cases[0])];
    for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, sizeof(idx) / sizeof(idx[0]));
}

ParameterizedTest(size_t *i, plan_reasons, every_kind)
{
    const reason_case *k = &reason_cases[*i];
    sc c;
    sc_init(&c, true);
    k->build(&c);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.spot_to_spot = k->spot_to_spot;
    o.max_loops = k->loops;
    o.max_commands_per_loop = k->serial ? 1 : 0;
    o.split_max = k->no_split ? 1 : o.split_max;
    kp_scenario *s = plan_opts(&c, &o);
    cr_expect_eq(kp_scenario_disrupted_by(s, k->node), -1, "%s: %s was disrupted", k->name,
                 k->node);
    const char *why = kp_scenario_blocked_reason(s, k->node);
    cr_assert_not_null(why, "%s: %s has no reason", k->name, k->node);
    if (k->prefix)
        cr_expect(strncmp(why, k->reason, strlen(k->reason)) == 0 &&
                      strlen(why) > strlen(k->reason),
                  "%s: \"%s\" does not start with \"%s\"", k->name, why, k->reason);
    else
        cr_expect_str_eq(why, k->reason, "%s: \"%s\"", k->name, why);
    /* As data, with Karpenter's event. */
    const kp_disrupt_blocked *b_data = NULL;
    for (uint32_t n = 0; n < s->disruption->n_blocked; n++)
        if (strcmp(s->snap->nodes[s->disruption->blocked[n].node].name, k->node) == 0)
            b_data = &s->disruption->blocked[n];
    cr_assert_not_null(b_data);
    cr_expect_eq(b_data->kind, k->kind, "%s: kind %s", k->name, kp_disrupt_block_name(b_data->kind));
    if (k->event) {
        cr_expect_str_eq(b_data->event_reason, k->event, "%s", k->name);
        if (k->prefix)
            cr_expect(strncmp(b_data->message, k->message, strlen(k->message)) == 0, "%s: message \"%s\"", k->name,
                      b_data->message);
        else
            cr_expect_str_eq(b_data->message, k->message, "%s", k->name);
    } else {
        cr_expect_null(b_data->event_reason, "%s: %s", k->name, b_data->event_reason);
    }
    if (k->object)
        cr_expect_str_eq(b_data->object, k->object, "%s", k->name);
    /* The JSON simulate prints carries the same. */
    const cJSON *blocked = cJSON_GetObjectItemCaseSensitive(s->disruption_json, "blocked"), *b;
    bool listed = false;
    cJSON_ArrayForEach(b, blocked)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(b, "node");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(b, "reason");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(b, "kind");
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(b, "eventReason");
        if (cJSON_IsString(n) && strcmp(n->valuestring, k->node) == 0)
            listed = cJSON_IsString(r) && strcmp(r->valuestring, why) == 0 && cJSON_IsString(kind) &&
                     strcmp(kind->valuestring, kp_disrupt_block_name(k->kind)) == 0 &&
                     (k->event ? cJSON_IsString(ev) && strcmp(ev->valuestring, k->event) == 0 : ev == NULL);
    }
    cr_expect(listed, "%s: not in the blocked JSON", k->name);
    sc_free(&c);
}
