/*
 * Shared by the affinity, preference, host-port and volume solver suites
 * (test_solver_*affinity*.c, _preferences, _host_ports, _volume_*): a YAML buffer the helpers append documents to, builders for
 * NodePools, pods, Deployments and spreads, where-did-it-go lookups, and
 * Karpenter's fake catalog (5 pods per type; spot in zones 1-2, on-demand in
 * 1-3). Static, so each program has its own copy and tests/unit/helpers/
 * stays generic.
 */
#ifndef KP_TEST_SOLVER_CASES_H
#define KP_TEST_SOLVER_CASES_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"


#define HELPER static __attribute__((unused))

static kp_yaml yaml;
static kp_arena *arena;
static kp_scenario sc;

static void setup(void)
{
    arena = kp_arena_new();
    memset(&sc, 0, sizeof(sc));
}

static void teardown(void)
{
    kp_scenario_free(&sc);
    kp_arena_free(arena);
    kp_yaml_free(&yaml);
}

/* Append one YAML document. */
HELPER void __attribute__((format(printf, 1, 2))) add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_yaml_vdoc(&yaml, fmt, ap);
    va_end(ap);
}

/* A YAML fragment that lives until the test ends. */
HELPER const char *__attribute__((format(printf, 1, 2))) frag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *s = kp_arena_vprintf(arena, fmt, ap);
    va_end(ap);
    return s;
}

/* A NodePool; `spec` holds more template spec fields, each starting with ", ". */
HELPER void nodepool_with(const char *name, const char *requirements, const char *spec)
{
    kp_yaml_nodepool(&yaml, &(kp_yaml_pool){.name = name,
                                           .requirements = requirements,
                                           .template_spec = spec + strspn(spec, ", ")});
}

HELPER void weighted_nodepool(const char *name, int weight, const char *requirements, const char *spec)
{
    kp_yaml_nodepool(&yaml, &(kp_yaml_pool){.name = name,
                                           .requirements = requirements,
                                           .template_spec = spec + strspn(spec, ", "),
                                           .spec = frag("weight: %d", weight)});
}

HELPER void nodepool(const char *name, const char *requirements)
{
    nodepool_with(name, requirements, "");
}

/* A pod: "name" or "namespace/name"; `labels` and `extra` (more spec fields,
 * each starting with ", ") in flow style. */
HELPER void pod(const char *id, const char *labels, const char *cpu, const char *extra)
{
    const char *slash = strchr(id, '/');
    const char *ns = slash ? frag("%.*s", (int)(slash - id), id) : "default";
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {%s}}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '%s'}}}]%s}",
        slash ? slash + 1 : id, ns, labels, cpu, extra);
}

/* `replicas` pods NAME-0 .. NAME-(n-1). */
HELPER void deployment(const char *name, int replicas, const char *labels, const char *cpu, const char *extra)
{
    add("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  replicas: %d\n"
        "  selector: {matchLabels: {%s}}\n  template:\n    metadata: {labels: {%s}}\n"
        "    spec: {containers: [{name: c, resources: {requests: {cpu: '%s'}}}]%s}",
        name, replicas, labels, labels, cpu, extra);
}

/* A node not managed by Karpenter, in `zone`, with `cpu` cores and `pods` slots. */
HELPER void node(const char *name, const char *zone, const char *cpu, int pods)
{
    add("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s, "
        "topology.kubernetes.io/zone: %s, kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n"
        "status: {capacity: {cpu: '%s', memory: 16Gi, pods: '%d'}}",
        name, name, zone, cpu, pods);
}

/* One required (anti-)affinity term: kind is podAffinity or podAntiAffinity. */
HELPER const char *required(const char *kind, const char *key, const char *selector)
{
    return frag(", affinity: {%s: {requiredDuringSchedulingIgnoredDuringExecution: "
                "[{labelSelector: {matchLabels: {%s}}, topologyKey: %s}]}}",
                kind, selector, key);
}

/* One preferred (anti-)affinity term. */
HELPER const char *preferred(const char *kind, int weight, const char *key, const char *selector)
{
    return frag(", affinity: {%s: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: %d, "
                "podAffinityTerm: {labelSelector: {matchLabels: {%s}}, topologyKey: %s}}]}}",
                kind, weight, selector, key);
}

/* A DoNotSchedule spread constraint, maxSkew 1. */
HELPER const char *spread(const char *key, const char *selector)
{
    return frag(", topologySpreadConstraints: [{maxSkew: 1, topologyKey: %s, whenUnsatisfiable: DoNotSchedule, "
                "labelSelector: {matchLabels: {%s}}}]",
                key, selector);
}

/* Set KP_DUMP=1 to print each plan while debugging a scenario. */
HELPER void solve_with(const char *catalog, const kp_solve_opts *opts)
{
    int err = kp_scenario_run(&sc, kp_yaml_text(&yaml), catalog, opts);
    cr_assert_eq(err, 0, "scenario failed: %s", kp_error_last());
    if (getenv("KP_DUMP")) {
        char *text = cJSON_Print(sc.json);
        fprintf(stderr, "%s\n", text);
        free(text);
    }
}

HELPER void solve(const char *catalog)
{
    solve_with(catalog, NULL);
}

HELPER void expect_scheduled(const char *p)
{
    cr_expect(kp_scenario_claim_of(&sc, p) >= 0 || kp_scenario_node_of(&sc, p) != NULL,
              "%s not scheduled: %s", p, kp_scenario_error_of(&sc, p) ? kp_scenario_error_of(&sc, p) : "?");
}

HELPER void expect_pending(const char *p)
{
    cr_expect(kp_scenario_claim_of(&sc, p) < 0 && kp_scenario_node_of(&sc, p) == NULL, "%s was scheduled", p);
    cr_expect_not_null(kp_scenario_error_of(&sc, p), "%s has no reason", p);
}

/* Where a pod went, as one string: "claim:N", "node:NAME" or "pending". */
HELPER const char *place(const char *p)
{
    int c = kp_scenario_claim_of(&sc, p);
    if (c >= 0)
        return frag("claim:%d", c);
    const char *n = kp_scenario_node_of(&sc, p);
    return n ? frag("node:%s", n) : "pending";
}

HELPER const char *zone_req(int claim)
{
    return kp_scenario_claim_req(&sc, claim, "topology.kubernetes.io/zone");
}

/* The zone the NodeClaim launches in (its cheapest offering's), the label its node gets. */
HELPER const char *launch_zone(int claim)
{
    if (claim < 0 || (uint32_t)claim >= sc.plan->n_claims || sc.plan->claims[claim].zone == KP_SYM_NONE)
        return NULL;
    return kp_sym_str(sc.snap->symtab, sc.plan->claims[claim].zone);
}

/* The zone requirement of the pod's NodeClaim ("In [z]"), or the zone label
 * of its node ("node z"), or NULL. */
HELPER const char *zone_of(const char *p)
{
    int c = kp_scenario_claim_of(&sc, p);
    if (c >= 0)
        return zone_req(c);
    const char *n = kp_scenario_node_of(&sc, p);
    if (!n)
        return NULL;
    for (uint32_t i = 0; i < sc.snap->n_nodes; i++) {
        if (strcmp(sc.snap->nodes[i].name, n) != 0)
            continue;
        kp_sym key = kp_sym_lookup(sc.snap->symtab, "topology.kubernetes.io/zone");
        kp_sym z = key ? kp_symlabels_get(&sc.snap->nodes[i].labels, key) : KP_SYM_NONE;
        return z != KP_SYM_NONE ? frag("node %s", kp_sym_str(sc.snap->symtab, z)) : NULL;
    }
    return NULL;
}

/* Karpenter's fake cloud provider: every type has 5 pod slots and offerings
 * spot in zones 1-2, on-demand in zones 1-3. */
#define OFFERS(price)                                                                                          \
    "[{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":" price "},"                               \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"spot\",\"price\":" price "},"                                \
    "{\"zone\":\"test-zone-1\",\"capacityType\":\"on-demand\",\"price\":" price "},"                           \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"on-demand\",\"price\":" price "},"                           \
    "{\"zone\":\"test-zone-3\",\"capacityType\":\"on-demand\",\"price\":" price "}]"
#define FAKE_CATALOG                                                                                           \
    "json:[{\"name\":\"small-instance-type\",\"capacity\":{\"cpu\":\"2\",\"memory\":\"2Gi\",\"pods\":\"5\"},"  \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"offerings\":" OFFERS("0.41") "},"                          \
    "{\"name\":\"default-instance-type\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"5\"},"       \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"offerings\":" OFFERS("0.83") "},"                          \
    "{\"name\":\"arm-instance-type\",\"capacity\":{\"cpu\":\"16\",\"memory\":\"128Gi\",\"pods\":\"5\"},"        \
    "\"labels\":{\"kubernetes.io/arch\":\"arm64\"},\"offerings\":" OFFERS("15.3") "}]"

#define HOST "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"
#define ARCH "kubernetes.io/arch"

#endif
