/*
 * Consolidation, part four: the replacement's options and requirements
 * (spot-to-spot with minValues, requirements narrowed to the options the
 * price filter kept, reserved capacity), what the planner leaves in the
 * snapshot, and a Node without a NodeClaim (where we deliberately differ).
 * Each case names the Karpenter reference it follows.
 *
 * The catalog is test_disruption_consolidation_1.c's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
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

/* The replacement of command `i`: its launch offering. */
static const kp_plan_claim *replacement(const kp_scenario *s, uint32_t i)
{
    cr_assert_gt(kp_scenario_n_commands(s), i);
    const kp_plan *sim = s->disruption->commands[i].simulation;
    cr_assert(sim && sim->n_claims == 1, "command %u has no single replacement", i);
    return &sim->claims[0];
}

#define N(...) ((nopt){__VA_ARGS__})

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

static bool replacement_offers(const kp_scenario *s, uint32_t i, const char *type)
{
    const kp_plan_claim *c = replacement(s, i);
    for (uint32_t k = 0; k < c->n_its; k++)
        if (strcmp(kp_sym_str(s->snap->symtab, s->snap->its[c->its[k]].name), type) == 0)
            return true;
    return false;
}

static const char *replacement_ct(const kp_scenario *s, uint32_t i)
{
    return kp_sym_str(s->snap->symtab, replacement(s, i)->capacity_type);
}

/* `n` spot-only types "s00".. of 8 CPUs, priced 1.00, 1.10, ... in order;
 * `cheap`, when >= 0, is priced 0.001 instead. */
static void spot_types(sc *c, int n, int cheap)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%02d", i);
        catalog_type(&c->catalog, name, 8, 16, 0, i == cheap ? 0.001 : 1.0 + 0.1 * i);
    }
}

/* How many types the replacement's instance-type requirement names; fails
 * the test when it names `must_not_have`. */
static uint32_t replacement_type_requirement(const kp_scenario *s, uint32_t i,
                                             const char *must_not_have)
{
    const kp_plan_claim *c = replacement(s, i);
    const kp_requirement *r = kp_requirements_get(
        &c->reqs, kp_sym_lookup(s->snap->symtab, "node.kubernetes.io/instance-type"));
    cr_assert_not_null(r, "the replacement has no instance-type requirement");
    if (must_not_have)
        cr_expect_not(
            kp_requirement_has(s->snap->symtab, r, kp_sym_lookup(s->snap->symtab, must_not_have)),
            "the replacement may still launch as %s: %s", must_not_have,
            kp_requirement_string(s->snap->symtab, s->arena, r));
    return r->n_values;
}

/*
 * 1. Spot-to-spot keeps more than 15 options when minValues needs them.
 * Karpenter: consolidation.go computeSpotToSpotConsolidation, "if
 * results.NewNodeClaims[0].Requirements.HasMinValues()" keeps
 * max(15, the cheapest options minValues needs); consolidation_test.go:1357
 * ("...minValues in requirement is greater than 15") expects 16 options.
 */
Test(consolidation_spot, spot_to_spot_min_values_above_15_widens_the_cut)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, 16);
    pool(&c, "default",
         BOTH ", {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 16}", NULL);
    node(&c, "a", N(.type = "large", .type_label = "s17", .ct = "spot"));
    pod(&c, "p", "a", "500m");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 16, "%u options", replacement(s, 0)->n_its);
    cr_expect(replacement_offers(s, 0, "s16") && replacement_offers(s, 0, "s14"));
    sc_free(&c);
}

/*
 * 2. The replacement's requirements allow only the types the price filter
 * kept. Karpenter creates the replacement NodeClaim from its
 * InstanceTypeOptions (nodeclaimtemplate.go ToNodeClaim: instance-type In
 * the options, after RemoveInstanceTypeOptionsByPriceAndMinValues and the
 * spot-to-spot cut), so a launch can only pick a cheaper type, never the
 * node's own type or a dearer one.
 */
Test(consolidation_replace, replacement_requirements_allow_only_cheaper_types)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "2xlarge"));
    pod(&c, "p", "a", "5");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 2, "large and xlarge are cheaper than 2xlarge");
    uint32_t n = replacement_type_requirement(s, 0, "2xlarge");
    cr_expect_eq(n, replacement(s, 0)->n_its, "the requirement names %u types, the options are %u",
                 n, replacement(s, 0)->n_its);
    sc_free(&c);
}

Test(consolidation_spot, spot_to_spot_requirements_name_the_15_options)
{
    sc c;
    sc_init(&c, false);
    spot_types(&c, 18, -1);
    pool(&c, "default", BOTH, NULL);
    node(&c, "a", N(.type = "large", .type_label = "s17", .ct = "spot"));
    pod(&c, "p", "a", "500m");
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(replacement(s, 0)->n_its, 15);
    uint32_t n = replacement_type_requirement(s, 0, "s17");
    cr_expect_eq(n, 15, "the requirement names %u types", n);
    sc_free(&c);
}

/*
 * 3. A spot node moves into reserved capacity.
 * Karpenter (ReservedCapacity on by default, options.go): the scheduler pins a
 * NodeClaim that holds reserved offerings to capacity-type reserved
 * (nodeclaim.go FinalizeScheduling), so computeConsolidation does not take
 * the spot-to-spot path and the spot node is replaced by its own type,
 * reserved, with or without SpotToSpotConsolidation: consolidation_test.go:4887
 * "can consolidate into reserved capacity for the same instance pool", Entry
 * "from spot".
 */
static void spot_and_reservation(sc *c)
{
    kp_buf_puts(
        &c->catalog,
        "{\"name\":\"xlarge\",\"capacity\":{\"cpu\":\"16\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
        "\"offerings\":[{\"zone\":\"test-zone-1a\",\"capacityType\":\"on-demand\",\"price\":0.8},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"spot\",\"price\":0.32},"
        "{\"zone\":\"test-zone-1a\",\"capacityType\":\"reserved\",\"price\":0.0000008}]}");
    pool(c, "default", "{key: karpenter.sh/capacity-type, operator: In, values: [spot, reserved]}",
         NULL);
    node(c, "a", N(.type = "xlarge", .ct = "spot"));
    pod(c, "p", "a", "1");
}

Test(consolidation_reserved, spot_moves_into_reserved_capacity)
{
    sc c;
    sc_init(&c, false);
    spot_and_reservation(&c);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1, "kept: %s", kp_scenario_blocked_reason(s, "a"));
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(replacement_ct(s, 0), "reserved");
    sc_free(&c);
}

Test(consolidation_reserved, spot_moves_into_reserved_capacity_with_spot_to_spot_on)
{
    sc c;
    sc_init(&c, false);
    spot_and_reservation(&c);
    kp_scenario *s = plan1(&c, true);
    cr_assert_eq(kp_scenario_n_commands(s), 1, "kept: %s", kp_scenario_blocked_reason(s, "a"));
    cr_expect_str_eq(replacement_ct(s, 0), "reserved");
    sc_free(&c);
}

/*
 * 4. What kp_disruption_plan_compute leaves in the snapshot (disruption.h):
 * the nodes the commands take away stay in snap->nodes, so the indices in
 * the commands and the blocked list stay valid for the caller (simulate
 * prints names by them; the controller executes the first command by them),
 * and the pods they held point at the nodes the simulation moved them to.
 * (No Karpenter counterpart: this is our interface.)
 */
static const char *pod_node(const kp_scenario *s, const char *ns_name)
{
    for (uint32_t i = 0; i < s->snap->n_pods; i++)
        if (strcmp(s->snap->pods[i].ns_name, ns_name) == 0 && s->snap->pods[i].node >= 0)
            return s->snap->nodes[s->snap->pods[i].node].name;
    return NULL;
}

Test(consolidation_snapshot, the_planned_snapshot_keeps_the_nodes_and_moves_the_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small"));
    pod(&c, "pa", "a", "500m");
    pod(&c, "pb", "b", "500m");
    kp_scenario *s = plan_loops(&c, 0);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    const kp_disrupt_command *cmd = &s->disruption->commands[0];
    cr_assert_eq(cmd->n_candidates, 1);
    cr_expect_eq(s->snap->n_nodes, 2, "%u nodes", s->snap->n_nodes);
    cr_assert_lt(cmd->candidates[0], s->snap->n_nodes);
    const char *gone = s->snap->nodes[cmd->candidates[0]].name;
    cr_expect_str_eq(gone, kp_scenario_command_nodes(s, 0));
    const char *kept = strcmp(gone, "a") == 0 ? "b" : "a";
    cr_expect_str_eq(pod_node(s, "default/pa"), kept);
    cr_expect_str_eq(pod_node(s, "default/pb"), kept);
    sc_free(&c);
}

/*
 * 5. A Node with the karpenter.sh/nodepool label but no NodeClaim is a
 * candidate. Karpenter refuses it (suite_test.go:1640 "should not consider
 * candidates that has just a Node representation": NewCandidate fails with
 * "node isn't managed by karpenter"). We deliberately differ: `simulate
 * --disrupt` is mostly given Node manifests without their NodeClaims and its
 * users expect those nodes planned (docs/simulate.md says so), while the
 * controller always has the NodeClaims, so it is not affected.
 */
Test(consolidation_candidates, node_without_a_nodeclaim_is_a_candidate)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    add(&c, "---\napiVersion: v1\nkind: Node\nmetadata: {name: orphan, creationTimestamp: '" OLD
            "', labels: {"
            "karpenter.sh/nodepool: default, karpenter.sh/registered: 'true', "
            "karpenter.sh/initialized: 'true', "
            "node.kubernetes.io/instance-type: xlarge, topology.kubernetes.io/zone: test-zone-1a, "
            "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: orphan, "
            "kubernetes.io/arch: amd64, "
            "kubernetes.io/os: linux}}\nspec: {providerID: 'fake:///orphan'}\n"
            "status: {allocatable: {cpu: '16', memory: 32Gi, pods: '110'}, conditions: [{type: "
            "Ready, status: 'True'}]}\n");
    pod(&c, "pa", "a", "1500m");
    pod(&c, "po", "orphan", "1");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_neq(kp_scenario_disrupted_by(s, "orphan"), -1, "the NodeClaim-less node was kept: %s",
                  kp_scenario_blocked_reason(s, "orphan"));
    sc_free(&c);
}
