/*
 * What the disruption scenario suites share: a five-size catalog (doubling in
 * CPU, memory and price; on-demand, and spot at 40%, in three zones), builders
 * for NodePools, Nodes with their NodeClaims and Pods as YAML, and the
 * planning and assertion helpers. Included by tests/unit/test_disruption_
 * consolidation_*.c and test_disruption_plan_*.c; everything is static inline
 * so each suite uses what it needs.
 */
#ifndef KP_TESTS_DISRUPTION_SCENARIOS_H
#define KP_TESTS_DISRUPTION_SCENARIOS_H

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

typedef struct itype {
    const char *name;
    int cpu;
    int mem_gi;
    double od;
    double spot;
} itype;

static const itype TYPES[] __attribute__((unused)) = {
    {"small", 2, 4, 0.10, 0.04},    {"medium", 4, 8, 0.20, 0.08},    {"large", 8, 16, 0.40, 0.16},
    {"xlarge", 16, 32, 0.80, 0.32}, {"2xlarge", 32, 64, 1.60, 0.64},
};

static inline const itype *type_of(const char *name)
{
    for (size_t i = 0; i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
        if (strcmp(TYPES[i].name, name) == 0) return &TYPES[i];
    return &TYPES[2];
}

static inline void catalog_type(kp_buf *b, const char *name, int cpu, int mem_gi, double od,
                                double spot)
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

typedef struct sc {
    kp_buf yaml;
    kp_buf catalog;
    kp_scenario s;
    bool ran;
} sc;

static inline void sc_init(sc *c, bool default_types)
{
    memset(c, 0, sizeof(*c));
    kp_buf_init(&c->yaml, 1u << 22);
    kp_buf_init(&c->catalog, 1u << 22);
    kp_buf_puts(&c->catalog, "json:[");
    for (size_t i = 0; default_types && i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
        catalog_type(&c->catalog, TYPES[i].name, TYPES[i].cpu, TYPES[i].mem_gi, TYPES[i].od,
                     TYPES[i].spot);
}

static inline void sc_free(sc *c)
{
    kp_buf_free(&c->yaml);
    kp_buf_free(&c->catalog);
    if (c->ran) kp_scenario_free(&c->s);
}

__attribute__((format(printf, 2, 3))) static inline void add(sc *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cr_assert_eq(kp_buf_vprintf(&c->yaml, fmt, ap), 0, "scenario too large");
    va_end(ap);
}

#define OD_ONLY "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}"

#define SPOT_ONLY "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}"

#define BOTH "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, spot]}"

#define BALANCED                                                                                   \
    "consolidationPolicy: Balanced, consolidateAfter: 0s, budgets: [{nodes: '100%'}]"

#define UNDERUTILIZED                                                                              \
    "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "      \
    "'100%'}]"

static inline void pool(sc *c, const char *name, const char *requirements, const char *disruption)
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
static inline void node(sc *c, const char *name, nopt o)
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
static inline void pod_full(sc *c, const char *name, const char *node_name, const char *cpu,
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

static inline void pod(sc *c, const char *name, const char *node_name, const char *cpu)
{
    pod_full(c, name, node_name, cpu, NULL, NULL, NULL);
}

static inline kp_scenario *plan_opts(sc *c, const kp_disrupt_opts *opts)
{
    kp_buf_puts(&c->catalog, "]");
    c->ran = true;
    cr_assert_eq(kp_scenario_run(&c->s, kp_buf_cstr(&c->yaml), kp_buf_cstr(&c->catalog), NULL), 0,
                 "%s", kp_error_last());
    cr_assert_eq(kp_scenario_disrupt(&c->s, NOW, opts), 0, "%s", kp_error_last());
    return &c->s;
}

/* The first decision only (what one pass of Karpenter's controller acts on:
 * one loop, one command). */
static inline kp_scenario *plan1(sc *c, bool spot_to_spot)
{
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.max_loops = 1;
    o.max_commands_per_loop = 1;
    o.spot_to_spot = spot_to_spot;
    return plan_opts(c, &o);
}

static inline void expect_command(kp_scenario *s, uint32_t i, const char *method, const char *nodes,
                                  uint32_t replacements)
{
    cr_assert_gt(kp_scenario_n_commands(s), i, "no command %u", i);
    cr_expect_str_eq(kp_scenario_command_method(s, i), method);
    cr_expect_str_eq(kp_scenario_command_nodes(s, i), nodes);
    cr_expect_eq(kp_scenario_command_replacements(s, i), replacements,
                 "command %u: %u replacements", i, kp_scenario_command_replacements(s, i));
}

/* The replacement of command `i`: its launch offering. */
static inline const kp_plan_claim *replacement(const kp_scenario *s, uint32_t i)
{
    cr_assert_gt(kp_scenario_n_commands(s), i);
    const kp_plan *sim = s->disruption->commands[i].simulation;
    cr_assert(sim && sim->n_claims == 1, "command %u has no single replacement", i);
    return &sim->claims[0];
}

#define N(...) ((nopt){__VA_ARGS__})

/* `n` nodes named prefix0, prefix1, ... each running one pod ("<node>-p") of `cpu`. */
static inline void nodes_with_a_pod(sc *c, const char *prefix, int n, nopt o, const char *cpu)
{
    for (int i = 0; i < n; i++) {
        char name[32], pod_name[40];
        snprintf(name, sizeof(name), "%s%d", prefix, i);
        snprintf(pod_name, sizeof(pod_name), "%s-p", name);
        node(c, name, o);
        pod(c, pod_name, name, cpu);
    }
}

static inline kp_scenario *plan_loops(sc *c, uint32_t loops)
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

#define GRACE ", terminationGracePeriod: 1h"

#define DELETING                                                                                   \
    ", deletionTimestamp: '2026-11-21T11:58:00Z', finalizers: [karpenter.sh/termination]"

static inline bool replacement_offers(const kp_scenario *s, uint32_t i, const char *type)
{
    const kp_plan_claim *c = replacement(s, i);
    for (uint32_t k = 0; k < c->n_its; k++)
        if (strcmp(kp_sym_str(s->snap->symtab, s->snap->its[c->its[k]].name), type) == 0)
            return true;
    return false;
}

static inline const char *replacement_ct(const kp_scenario *s, uint32_t i)
{
    return kp_sym_str(s->snap->symtab, replacement(s, i)->capacity_type);
}

static inline void expect_kept(const kp_scenario *s, const char *node_name, const char *needle)
{
    cr_expect_eq(kp_scenario_disrupted_by(s, node_name), -1, "%s was disrupted", node_name);
    const char *why = kp_scenario_blocked_reason(s, node_name);
    cr_assert_not_null(why, "%s has no reason", node_name);
    cr_expect(strstr(why, needle) != NULL, "reason for %s lacks \"%s\": %s", node_name, needle,
              why);
}

/* The plan's entry for a node left in place, or NULL. */
static inline const kp_disrupt_blocked *blocked_of(const kp_scenario *s, const char *node_name)
{
    for (uint32_t i = 0; i < s->disruption->n_blocked; i++)
        if (strcmp(s->snap->nodes[s->disruption->blocked[i].node].name, node_name) == 0)
            return &s->disruption->blocked[i];
    return NULL;
}

static inline const kp_disrupt_command *command_at(const kp_scenario *s, uint32_t i)
{
    cr_assert_gt(kp_scenario_n_commands(s), i, "no command %u", i);
    return &s->disruption->commands[i];
}

#endif
