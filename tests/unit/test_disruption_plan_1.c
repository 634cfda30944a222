/*
 * The disruption planner's loop (planner.c; Karpenter's disruption
 * controller, controller.go, and suite_test.go): the methods in Karpenter's
 * order on every loop — expiration (forceful, ours), emptiness, drift,
 * multi-node then single-node consolidation — the first method with a
 * command winning the loop; max_loops; every method at once
 * (all_methods_once); commands applied between loops (replacements become
 * nodes that later loops use); nodes already disrupting, whose pods need room
 * in every simulation; the savingsHourly of each kind of command and the
 * plan's cost before and after; and the reason given for each kind of node
 * left in place, one case per reason the planner can give.
 *
 * The catalog is test_disruption_consolidation_1.c's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"

#define NOW "2026-11-21T12:00:00Z"
#define OLD "2026-11-20T08:00:00Z"

/* ---------- the catalog ---------- */

typedef struct itype {
    const char *name;
    int cpu;
    int mem_gi;
    double od;
    double spot;
} itype;

static const itype TYPES[] = {
    {"small", 2, 4, 0.10, 0.04},    {"medium", 4, 8, 0.20, 0.08},    {"large", 8, 16, 0.40, 0.16},
    {"xlarge", 16, 32, 0.80, 0.32}, {"2xlarge", 32, 64, 1.60, 0.64},
};

static const itype *type_of(const char *name)
{
    for (size_t i = 0; i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
        if (strcmp(TYPES[i].name, name) == 0) return &TYPES[i];
    return &TYPES[2];
}

static void catalog_type(kp_buf *b, const char *name, int cpu, int mem_gi, double od, double spot)
{
    kp_buf_printf(
        b,
        "%s{\"name\":\"%s\",\"capacity\":{\"cpu\":\"%d\",\"memory\":\"%dGi\",\"pods\":\"110\"},"
        "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"offerings\":[",
        b->len > strlen("json:[") ? "," : "", name, cpu, mem_gi);
    static const char *const zones[] = {"test-zone-1a", "test-zone-1b", "test-zone-1c"};
    for (int z = 0; z < 3; z++) {
        if (od > 0)
            kp_buf_printf(b, "%s{\"zone\":\"%s\",\"capacityType\":\"on-demand\",\"price\":%.4f}",
                          z ? "," : "", zones[z], od);
        if (spot > 0)
            kp_buf_printf(b, "%s{\"zone\":\"%s\",\"capacityType\":\"spot\",\"price\":%.4f}",
                          z || od > 0 ? "," : "", zones[z], spot);
    }
    kp_buf_puts(b, "]}");
}

/* ---------- the scenario builder ---------- */

typedef struct sc {
    kp_buf yaml;
    kp_buf catalog;
    kp_scenario s;
    bool ran;
} sc;

static void sc_init(sc *c, bool default_types)
{
    memset(c, 0, sizeof(*c));
    kp_buf_init(&c->yaml, 1u << 22);
    kp_buf_init(&c->catalog, 1u << 22);
    kp_buf_puts(&c->catalog, "json:[");
    for (size_t i = 0; default_types && i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
        catalog_type(&c->catalog, TYPES[i].name, TYPES[i].cpu, TYPES[i].mem_gi, TYPES[i].od,
                     TYPES[i].spot);
}

static void sc_free(sc *c)
{
    kp_buf_free(&c->yaml);
    kp_buf_free(&c->catalog);
    if (c->ran) kp_scenario_free(&c->s);
}

__attribute__((format(printf, 2, 3))) static void add(sc *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cr_assert_eq(kp_buf_vprintf(&c->yaml, fmt, ap), 0, "scenario too large");
    va_end(ap);
}

#define OD_ONLY   "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}"
#define SPOT_ONLY "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}"
#define BOTH      "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, spot]}"
#define UNDERUTILIZED                                                                              \
    "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "      \
    "'100%'}]"

static void pool(sc *c, const char *name, const char *requirements, const char *disruption)
{
    add(c,
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\n"
        "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, "
        "name: default}, "
        "requirements: [%s]}}, disruption: {%s}}\n",
        name, requirements ? requirements : OD_ONLY, disruption ? disruption : UNDERUTILIZED);
}

typedef struct nopt {
    const char *pool;       /* "default" */
    const char *type;       /* "large" */
    const char *type_label; /* the instance-type label, when not `type` (which sizes the node) */
    const char *zone;       /* "test-zone-1a" */
    const char *ct;         /* "on-demand" */
    const char *created;    /* OLD */
    const char *labels;     /* extra labels: ", key: value" */
    const char *meta;       /* extra Node metadata: ", annotations: {...}" */
    const char *claim_meta;
    const char *claim_spec; /* extra NodeClaim spec: ", terminationGracePeriod: 1h" */
    const char *pod_event;  /* the NodeClaim's lastPodEventTime */
    const char *conditions; /* extra NodeClaim conditions: ", {type: Drifted, ...}" */
    bool no_zone;           /* neither Node nor NodeClaim has a zone label */
    bool uninitialized;
} nopt;

/* A Node and its NodeClaim, allocatable as its instance type's capacity. */
static void node(sc *c, const char *name, nopt o)
{
    const itype *t = type_of(o.type ? o.type : "large");
    const char *type_name = o.type_label ? o.type_label : t->name;
    const char *pool_name = o.pool ? o.pool : "default", *created = o.created ? o.created : OLD;
    const char *ct = o.ct ? o.ct : "on-demand";
    char zone[64] = "";
    if (!o.no_zone)
        snprintf(zone, sizeof(zone), "topology.kubernetes.io/zone: %s, ",
                 o.zone ? o.zone : "test-zone-1a");
    add(c,
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, creationTimestamp: '%s'%s, labels: {"
        "karpenter.sh/nodepool: %s, karpenter.sh/registered: 'true'%s, "
        "node.kubernetes.io/instance-type: %s, "
        "%skarpenter.sh/capacity-type: %s, kubernetes.io/hostname: %s, kubernetes.io/arch: amd64, "
        "kubernetes.io/os: linux%s}}\nspec: {providerID: 'fake:///%s'}\n"
        "status: {capacity: {cpu: '%d', memory: %dGi, pods: '110'}, "
        "allocatable: {cpu: '%d', memory: %dGi, pods: '110'}, conditions: [{type: Ready, status: "
        "'True'}]}\n",
        name, created, o.meta ? o.meta : "", pool_name,
        o.uninitialized ? "" : ", karpenter.sh/initialized: 'true'", type_name, zone, ct, name,
        o.labels ? o.labels : "", name, t->cpu, t->mem_gi, t->cpu, t->mem_gi);
    add(c,
        "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: %s-claim, "
        "creationTimestamp: '%s'%s, "
        "labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: %s, %s"
        "karpenter.sh/capacity-type: %s, kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n"
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}%s}\n"
        "status: {providerID: 'fake:///%s', nodeName: %s%s%s%s, conditions: [{type: Launched, "
        "status: 'True'}%s%s]}\n",
        name, created, o.claim_meta ? o.claim_meta : "", pool_name, type_name, zone, ct,
        o.claim_spec ? o.claim_spec : "", name, name, o.pod_event ? ", lastPodEventTime: '" : "",
        o.pod_event ? o.pod_event : "", o.pod_event ? "'" : "",
        o.uninitialized ? ""
                        : ", {type: Initialized, status: 'True', lastTransitionTime: '" OLD "'}",
        o.conditions ? o.conditions : "");
}

#define RS "{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}"

/* A running pod on `node` (pending when NULL) asking for `cpu` and 1Gi;
 * `labels` replaces "app: test". */
static void pod_full(sc *c, const char *name, const char *node_name, const char *cpu,
                     const char *labels, const char *meta, const char *spec)
{
    add(c,
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, labels: {%s}%s, "
        "ownerReferences: [" RS "]}\n"
        "spec: {%s%s%scontainers: [{name: c, resources: {requests: {cpu: '%s', memory: 1Gi}}}]%s}\n"
        "status: {phase: %s}\n",
        name, labels ? labels : "app: test", meta ? meta : "", node_name ? "nodeName: " : "",
        node_name ? node_name : "", node_name ? ", " : "", cpu, spec ? spec : "",
        node_name ? "Running" : "Pending");
}

static void pod(sc *c, const char *name, const char *node_name, const char *cpu)
{
    pod_full(c, name, node_name, cpu, NULL, NULL, NULL);
}

static kp_scenario *plan_opts(sc *c, const kp_disrupt_opts *opts)
{
    kp_buf_puts(&c->catalog, "]");
    c->ran = true;
    cr_assert_eq(kp_scenario_run(&c->s, kp_buf_cstr(&c->yaml), kp_buf_cstr(&c->catalog), NULL), 0,
                 "%s", kp_error_last());
    cr_assert_eq(kp_scenario_disrupt(&c->s, NOW, opts), 0, "%s", kp_error_last());
    return &c->s;
}

/* The first decision only (what one pass of Karpenter's controller acts on). */
static kp_scenario *plan1(sc *c, bool spot_to_spot)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    o.spot_to_spot = spot_to_spot;
    return plan_opts(c, &o);
}

static void expect_command(kp_scenario *s, uint32_t i, const char *method, const char *nodes,
                           uint32_t replacements)
{
    cr_assert_gt(kp_scenario_n_commands(s), i, "no command %u", i);
    cr_expect_str_eq(kp_scenario_command_method(s, i), method);
    cr_expect_str_eq(kp_scenario_command_nodes(s, i), nodes);
    cr_expect_eq(kp_scenario_command_replacements(s, i), replacements,
                 "command %u: %u replacements", i, kp_scenario_command_replacements(s, i));
}

static void expect_kept(const kp_scenario *s, const char *node_name, const char *needle)
{
    cr_expect_eq(kp_scenario_disrupted_by(s, node_name), -1, "%s was disrupted", node_name);
    const char *why = kp_scenario_blocked_reason(s, node_name);
    cr_assert_not_null(why, "%s has no reason", node_name);
    cr_expect(strstr(why, needle) != NULL, "reason for %s lacks \"%s\": %s", node_name, needle,
              why);
}

/* The replacement of command `i`: its launch offering. */
static const kp_plan_claim *replacement(const kp_scenario *s, uint32_t i)
{
    cr_assert_gt(kp_scenario_n_commands(s), i);
    const kp_plan *sim = s->disruption->commands[i].simulation;
    cr_assert(sim && sim->n_claims == 1, "command %u has no single replacement", i);
    return &sim->claims[0];
}

#define N(...) ((nopt){__VA_ARGS__})

static const kp_disrupt_command *command_at(const kp_scenario *s, uint32_t i)
{
    cr_assert_gt(kp_scenario_n_commands(s), i, "no command %u", i);
    return &s->disruption->commands[i];
}

static kp_scenario *plan_loops(sc *c, uint32_t loops)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = loops;
    return plan_opts(c, &o);
}

#define DND_POD ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"
#define DRIFTED                                                                                    \
    ", {type: Drifted, status: 'True', reason: AMIDrifted, lastTransitionTime: "                   \
    "'2026-11-21T09:00:00Z'}"
#define EXPIRING ", expireAfter: 1h"
#define GRACE    ", terminationGracePeriod: 1h"
#define DELETING                                                                                   \
    ", deletionTimestamp: '2026-11-21T11:58:00Z', finalizers: [karpenter.sh/termination]"

/* ---------- the order of the methods ---------- */

/* One node for each method, each a candidate of that method only:
 *  exp     expired; its pod has do-not-disrupt (expiration is forceful, the
 *          graceful methods respect it) and a selector only exp satisfies;
 *  empty   empty;
 *  drifted drifted, with a grace period and a do-not-disrupt pod (drift may
 *          proceed, consolidation may not);
 *  m0, m1  xlarge nodes with a small pod each (multi-node merges them,
 *          single-node would replace either). */
static void one_of_each(sc *c)
{
    pool(c, "default", OD_ONLY, NULL);
    node(c, "exp", N(.type = "small", .claim_spec = EXPIRING, .labels = ", role: exp"));
    pod_full(c, "pe", "exp", "1", NULL, DND_POD, ", nodeSelector: {role: exp}");
    node(c, "empty", N(.type = "large"));
    node(c, "drifted", N(.type = "small", .claim_spec = GRACE, .conditions = DRIFTED));
    pod_full(c, "pd", "drifted", "500m", NULL, DND_POD, NULL);
    node(c, "m0", N(.type = "xlarge"));
    node(c, "m1", N(.type = "xlarge"));
    pod(c, "p0", "m0", "1");
    pod(c, "p1", "m1", "1");
}

Test(plan_order, every_method_once_in_karpenters_order)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.all_methods_once = true;
    kp_scenario *s = plan_opts(&c, &o);
    cr_assert_eq(kp_scenario_n_commands(s), 5);
    expect_command(s, 0, "expiration", "exp", 0);
    expect_command(s, 1, "emptiness", "empty", 0);
    cr_expect_str_eq(kp_scenario_command_method(s, 2), "drift");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 2), "drifted");
    /* Nothing is applied, so their pods may go to the empty node. */
    expect_command(s, 3, "multi-node consolidation", "m0,m1", 0);
    cr_expect_str_eq(kp_scenario_command_method(s, 4), "single-node consolidation");
    cr_expect_eq(command_at(s, 4)->n_candidates, 1);
    for (uint32_t i = 0; i < 5; i++)
        cr_expect_eq(command_at(s, i)->loop, 0);
    /* Nothing was applied: every node is still in the snapshot's cluster. */
    cr_expect_eq(s->snap->n_nodes, 5);
    sc_free(&c);
}

Test(plan_order, one_method_per_loop_in_that_order)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_geq(kp_scenario_n_commands(s), 4);
    static const char *const want[] = {"expiration", "emptiness", "drift",
                                       "multi-node consolidation"};
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), want[i]);
        cr_expect_eq(command_at(s, i)->loop, i);
    }
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "exp");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 1), "empty");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 2), "drifted");
    sc_free(&c);
}

Test(plan_order, the_first_loop_acts_on_the_first_method_only)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "expiration", "exp", 0);
    /* Expiration does not wait for a place for the pod (only exp has its
     * label): it goes pending. */
    cr_expect_eq(kp_scenario_disrupted_by(s, "empty"), -1);
    cr_expect_not_null(kp_scenario_blocked_reason(s, "empty"));
    sc_free(&c);
}

Test(plan_order, drift_comes_before_consolidation)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "m0", N(.type = "xlarge"));
    node(&c, "m1", N(.type = "xlarge"));
    node(&c, "d", N(.type = "small", .conditions = DRIFTED));
    pod(&c, "p0", "m0", "1");
    pod(&c, "p1", "m1", "1");
    pod(&c, "pd", "d", "1500m");
    kp_scenario *s = plan_loops(&c, 1);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "drift");
    cr_expect_str_eq(kp_scenario_command_nodes(s, 0), "d");
    sc_free(&c);
}

Test(plan_order, multi_node_comes_before_single_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "m0", N(.type = "xlarge"));
    node(&c, "m1", N(.type = "xlarge"));
    pod(&c, "p0", "m0", "1");
    pod(&c, "p1", "m1", "1");
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.all_methods_once = true;
    kp_scenario *s = plan_opts(&c, &o);
    /* Both would act; the loop takes multi-node's. */
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "multi-node consolidation");
    cr_expect_str_eq(kp_scenario_command_method(s, 1), "single-node consolidation");
    sc_free(&c);
}

/* ---------- loops ---------- */

Test(plan_loops, max_loops_bounds_the_plan)
{
    for (uint32_t loops = 1; loops <= 3; loops++) {
        sc c;
        sc_init(&c, true);
        pool(&c, "default", OD_ONLY, NULL);
        /* xlarge nodes reporting 8 CPUs with a 5-CPU pod each: four
         * single-node replacements (a large each), one per loop. */
        for (int i = 0; i < 4; i++) {
            char name[8], pod_name[8];
            snprintf(name, sizeof(name), "n%d", i);
            snprintf(pod_name, sizeof(pod_name), "p%d", i);
            node(&c, name, N(.type = "large", .type_label = "xlarge"));
            pod(&c, pod_name, name, "5");
        }
        kp_scenario *s = plan_loops(&c, loops);
        cr_expect_eq(kp_scenario_n_commands(s), loops, "max_loops %u: %u commands", loops,
                     kp_scenario_n_commands(s));
        sc_free(&c);
    }
}

Test(plan_loops, until_nothing_changes)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    for (int i = 0; i < 4; i++) {
        char name[8], pod_name[8];
        snprintf(name, sizeof(name), "n%d", i);
        snprintf(pod_name, sizeof(pod_name), "p%d", i);
        node(&c, name, N(.type = "large", .type_label = "xlarge"));
        pod(&c, pod_name, name, "5");
    }
    kp_scenario *s = plan_loops(&c, 0);
    /* Four single-node replacements (a large each), after which the three
     * real larges merge into an xlarge. */
    cr_assert_geq(kp_scenario_n_commands(s), 5);
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        cr_expect_eq(command_at(s, i)->loop, i);
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_str_eq(kp_scenario_command_method(s, i), "single-node consolidation");
        cr_expect_str_eq(kp_scenario_command_replacement_type(s, i, 0), "large");
    }
    cr_expect_str_eq(kp_scenario_command_method(s, 4), "multi-node consolidation");
    /* The last loop found nothing: it looked at every node left and says why
     * each stays (the default reason is for nodes no method looked at). */
    cr_expect_eq(s->disruption->n_blocked, 2);
    for (uint32_t i = 0; i < s->disruption->n_blocked; i++)
        cr_expect(strstr(s->disruption->blocked[i].reason, "no cheaper replacement") != NULL, "%s",
                  s->disruption->blocked[i].reason);
    sc_free(&c);
}

Test(plan_loops, commands_are_applied_between_loops)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1");
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* The snapshot is the cluster after the plan: a replacement node holds p. */
    uint32_t last = s->snap->n_nodes - 1;
    cr_expect(strstr(s->snap->nodes[last].name, "replacement") != NULL, "%s",
              s->snap->nodes[last].name);
    cr_expect_str_eq(s->snap->nodes[last].instance_type, "small");
    bool found = false;
    for (uint32_t i = 0; i < s->snap->n_pods; i++)
        if (strcmp(s->snap->pods[i].ns_name, "default/p") == 0)
            found = s->snap->pods[i].node == (int32_t)last;
    cr_expect(found, "p is not on the replacement");
    sc_free(&c);
}

Test(plan_loops, a_later_loop_uses_an_earlier_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Loop 0 replaces the expired medium node with a medium one (1.5 CPUs
     * spare); b's pod, which the expired node's pod could not have shared,
     * fits there in loop 1, and b goes. */
    node(&c, "exp", N(.type = "medium", .claim_spec = EXPIRING));
    pod(&c, "pe", "exp", "2500m");
    node(&c, "b", N(.type = "small"));
    pod(&c, "pb", "b", "1");
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 2);
    expect_command(s, 0, "expiration", "exp", 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 1), "single-node consolidation");
    cr_expect_eq(kp_scenario_command_replacements(s, 1), 0);
    cr_expect_eq(s->disruption->n_blocked, 1);
    sc_free(&c);
}

/* ---------- savingsHourly and the plan's cost ---------- */

Test(plan_savings, emptiness_saves_every_empty_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large"));
    node(&c, "b", N(.type = "xlarge"));
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "emptiness", "a,b", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.40 + 0.80, 1e-9);
    sc_free(&c);
}

Test(plan_savings, a_delete_saves_the_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    node(&c, "b", N(.type = "medium"));
    pod(&c, "pa", "a", "15");
    pod(&c, "pb", "b", "500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.20, 1e-9);
    sc_free(&c);
}

Test(plan_savings, a_replace_saves_the_difference)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "2xlarge"));
    pod(&c, "pa", "a", "5");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "large");
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 1.60 - 0.40, 1e-9);
    sc_free(&c);
}

Test(plan_savings, expiration_replaced_by_its_own_type_saves_nothing)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small", .claim_spec = EXPIRING));
    pod(&c, "pa", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "expiration", "a", 1);
    cr_expect_float_eq(command_at(s, 0)->savings_hourly, 0.0, 1e-9);
    sc_free(&c);
}

Test(plan_savings, the_plans_cost_falls_by_the_savings)
{
    sc c;
    sc_init(&c, true);
    one_of_each(&c);
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_geq(kp_scenario_n_commands(s), 4);
    double saved = 0;
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        saved += command_at(s, i)->savings_hourly;
    /* small, large, small, xlarge, xlarge */
    cr_expect_float_eq(s->disruption->cost_before, 0.10 + 0.40 + 0.10 + 0.80 + 0.80, 1e-9);
    cr_expect_float_eq(s->disruption->cost_after, s->disruption->cost_before - saved, 1e-9);
    cr_expect_lt(s->disruption->cost_after, s->disruption->cost_before);
    sc_free(&c);
}

/* ---------- nodes already disrupting ---------- */

Test(plan_disrupting, pods_of_a_deleting_node_need_room_in_the_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "gone", N(.type = "large", .meta = DELETING));
    pod(&c, "pg", "gone", "6");
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "pa", "a", "1");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    /* a's 1 CPU alone would take a small node; with gone's 6 it takes a large. */
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "large");
    cr_expect_eq(replacement(s, 0)->n_pods, 2);
    expect_kept(s, "gone", "being deleted");
    sc_free(&c);
}

Test(plan_disrupting, pods_of_a_deleting_node_may_go_to_an_uninitialized_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Karpenter: only the candidates' pods are kept off uninitialized nodes. */
    node(&c, "gone", N(.type = "large", .meta = DELETING));
    pod(&c, "pg", "gone", "7");
    node(&c, "u", N(.type = "large", .uninitialized = true));
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "pa", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    cr_expect_eq(replacement(s, 0)->n_pods, 1);
    sc_free(&c);
}
