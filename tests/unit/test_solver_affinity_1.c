/*
 * Solver scenarios: required pod affinity (Karpenter's topology_test.go,
 * "Pod Affinity/Anti-Affinity"), on hostname, zone and arch, to pods of the
 * same batch and to pods already running, with the namespaces a term
 * selects.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"

/* ---------- building scenarios (each solver test file has its own copy) ---------- */

#define HELPER static __attribute__((unused))

static kp_buf yaml;
static kp_arena *arena;
static kp_scenario sc;

static void setup(void)
{
    kp_buf_init(&yaml, 1 << 20);
    arena = kp_arena_new();
    memset(&sc, 0, sizeof(sc));
}

static void teardown(void)
{
    kp_scenario_free(&sc);
    kp_arena_free(arena);
    kp_buf_free(&yaml);
}

/* Append one YAML document. */
HELPER void __attribute__((format(printf, 1, 2))) add(const char *fmt, ...)
{
    va_list ap;
    if (yaml.len)
        kp_buf_puts(&yaml, "---\n");
    va_start(ap, fmt);
    kp_buf_vprintf(&yaml, fmt, ap);
    va_end(ap);
    kp_buf_putc(&yaml, '\n');
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
    add("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n  template:\n"
        "    spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "requirements: [%s]%s}",
        name, requirements, spec);
}

HELPER void weighted_nodepool(const char *name, int weight, const char *requirements, const char *spec)
{
    add("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n  weight: %d\n  template:\n"
        "    spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "requirements: [%s]%s}",
        name, weight, requirements, spec);
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
    int err = kp_scenario_run(&sc, kp_buf_cstr(&yaml), catalog, opts);
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

TestSuite(pod_affinity, .init = setup, .fini = teardown);

/* ---------- within one batch ---------- */

Test(pod_affinity, empty_affinity_and_anti_affinity_change_nothing)
{
    nodepool("default", "");
    pod("p", "", "0", ", affinity: {podAffinity: {}, podAntiAffinity: {}}");
    solve(FAKE_CATALOG);
    expect_scheduled("p");
    cr_expect_eq(sc.plan->n_claims, 1);
}

/* Ten pods spread one per host, plus a target and a pod that must share its host. */
Test(pod_affinity, hostname_affinity_shares_the_target_node)
{
    nodepool("default", "");
    deployment("spread", 10, "test: test", "0", spread(HOST, "test: test"));
    pod("aff1", "security: s2", "0", "");
    pod("aff2", "", "0", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    expect_scheduled("aff1");
    expect_scheduled("aff2");
    cr_expect_str_eq(place("aff1"), place("aff2"));
    cr_expect_eq(sc.plan->n_claims, 10); /* the spread still gets one host per pod */
}

/* The follower sorts first (by name) and must wait for its target: the
 * queue retries it after the target lands. */
Test(pod_affinity, hostname_affinity_waits_for_a_target_placed_later)
{
    nodepool("default", "");
    pod("a-follower", "", "0", required("podAffinity", HOST, "security: s2"));
    pod("z-target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    expect_scheduled("a-follower");
    cr_expect_str_eq(place("a-follower"), place("z-target"));
    cr_expect_eq(sc.plan->n_claims, 1);
}

/* Affinity on arch with a hostname spread: same arch, different hosts. */
Test(pod_affinity, arch_affinity_with_hostname_spread)
{
    nodepool("default", "");
    const char *tsc = spread(HOST, "security: s2");
    pod("aff1", "security: s2", "2", frag("%s, nodeSelector: {kubernetes.io/arch: arm64}", tsc));
    pod("aff2", "security: s2", "1",
        frag("%s%s", tsc, required("podAffinity", ARCH, "security: s2")));
    solve(FAKE_CATALOG);
    int c1 = kp_scenario_claim_of(&sc, "aff1"), c2 = kp_scenario_claim_of(&sc, "aff2");
    cr_assert(c1 >= 0 && c2 >= 0, "aff1 %s, aff2 %s", place("aff1"), place("aff2"));
    cr_expect_neq(c1, c2);
    cr_expect_str_eq(kp_scenario_claim_req(&sc, c1, ARCH), "In [arm64]");
    cr_expect_str_eq(kp_scenario_claim_req(&sc, c2, ARCH), "In [arm64]");
    cr_expect_str_eq(kp_scenario_claim_type(&sc, c2), "arm-instance-type");
}

Test(pod_affinity, self_affinity_on_hostname_packs_one_node)
{
    nodepool("default", "");
    deployment("s", 3, "security: s2", "0", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_claims, 1);
    cr_expect_eq(kp_scenario_claim_pods(&sc, 0), 3);
}

/* Only the first empty domain may bootstrap: once a host holds the group,
 * the pods that do not fit there (5 slots per node) stay pending. */
Test(pod_affinity, self_affinity_on_hostname_bootstraps_only_one_domain)
{
    nodepool("default", "");
    deployment("s", 10, "security: s2", "0", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_claims, 1);
    cr_expect_eq(sc.plan->n_scheduled, 5);
    cr_expect_eq(sc.plan->n_errors, 5);
    for (int i = 0; i < 10; i++) {
        const char *p = frag("s-%d", i);
        if (kp_scenario_claim_of(&sc, p) < 0)
            cr_expect(strstr(kp_scenario_error_of(&sc, p), "pod affinity"), "%s", kp_scenario_error_of(&sc, p));
    }
}

Test(pod_affinity, self_affinity_on_zone_picks_one_zone)
{
    nodepool("default", "");
    deployment("s", 3, "security: s2", "0", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    cr_assert_eq(sc.plan->n_claims, 1);
    cr_expect_eq(kp_scenario_claim_pods(&sc, 0), 3);
    const char *z = zone_req(0);
    cr_assert_not_null(z);
    cr_expect(strncmp(z, "In [", 4) == 0, "%s", z);
    cr_expect_null(strchr(z + 4, ' '), "zone not pinned to one value: %s", z);
}

Test(pod_affinity, self_affinity_on_zone_honours_the_pods_zone_constraint)
{
    nodepool("default", "");
    deployment("s", 3, "security: s2", "0",
               frag("%s, nodeSelector: {" ZONE ": test-zone-3}", required("podAffinity", ZONE, "security: s2")));
    solve(FAKE_CATALOG);
    cr_assert_eq(sc.plan->n_claims, 1);
    cr_expect_eq(kp_scenario_claim_pods(&sc, 0), 3);
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
}

/* Both pods select each other, but their zones differ: each bootstraps its own zone. */
Test(pod_affinity, matching_self_affinities_with_incompatible_zones_get_two_nodes)
{
    nodepool("default", "");
    const char *aff = required("podAffinity", ZONE, "security: s1");
    pod("p1", "security: s1", "0", frag("%s, nodeSelector: {" ZONE ": test-zone-2}", aff));
    pod("p2", "security: s1", "0", frag("%s, nodeSelector: {" ZONE ": test-zone-3}", aff));
    solve(FAKE_CATALOG);
    int c1 = kp_scenario_claim_of(&sc, "p1"), c2 = kp_scenario_claim_of(&sc, "p2");
    cr_assert(c1 >= 0 && c2 >= 0 && c1 != c2, "p1 %s, p2 %s", place("p1"), place("p2"));
    cr_expect_str_eq(zone_req(c1), "In [test-zone-2]");
    cr_expect_str_eq(zone_req(c2), "In [test-zone-3]");
}

Test(pod_affinity, affinity_to_a_pod_that_does_not_exist_is_unschedulable)
{
    nodepool("default", "");
    deployment("aff", 10, "app: aff", "0", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_claims, 0);
    cr_expect_eq(sc.plan->n_errors, 10);
    for (int i = 0; i < 10; i++)
        expect_pending(frag("aff-%d", i));
    cr_expect(strstr(kp_scenario_error_of(&sc, "aff-0"), "pod affinity on " ZONE),
              "%s", kp_scenario_error_of(&sc, "aff-0"));
}

/* A pod whose own labels do not match its term cannot bootstrap a domain. */
Test(pod_affinity, unsatisfiable_dependency_does_not_loop)
{
    nodepool("default", "");
    pod("db", "type: db", "0", required("podAffinity", HOST, "type: web"));
    solve(FAKE_CATALOG);
    expect_pending("db");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* The target's zone is not decided while it sits on a NodeClaim that may
 * launch in any zone, so zonal followers cannot join it in this batch. */
Test(pod_affinity, zone_affinity_to_an_unconstrained_target_waits)
{
    nodepool("default", "");
    pod("target", "security: s2", "0", "");
    deployment("aff", 10, "app: aff", "0", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    expect_scheduled("target");
    cr_expect_eq(sc.plan->n_scheduled, 1);
    for (int i = 0; i < 10; i++)
        expect_pending(frag("aff-%d", i));
}

Test(pod_affinity, zone_affinity_to_a_constrained_target_follows_it)
{
    nodepool("default", "");
    pod("target", "security: s2", "0", ", nodeSelector: {" ZONE ": test-zone-1}");
    deployment("aff", 10, "app: aff", "0", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 11);
    for (uint32_t c = 0; c < sc.plan->n_claims; c++)
        cr_expect_str_eq(zone_req((int)c), "In [test-zone-1]");
}

/* db <- web <- cache <- ui, named so the queue meets them in the worst order. */
Test(pod_affinity, chain_of_dependent_affinities_resolves)
{
    nodepool("default", "");
    pod("a-ui", "type: ui", "0", required("podAffinity", HOST, "type: cache"));
    pod("b-cache", "type: cache", "0", required("podAffinity", HOST, "type: web"));
    pod("c-web", "type: web", "0", required("podAffinity", HOST, "type: db"));
    pod("d-db", "type: db", "0", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 4);
    cr_expect_eq(sc.plan->n_claims, 1);
    cr_expect_str_eq(place("a-ui"), place("d-db"));
}

Test(pod_affinity, match_expressions_selector)
{
    nodepool("default", "");
    pod("target", "tier: db", "0", ", nodeSelector: {" ARCH ": amd64}");
    pod("other", "tier: cache", "0", ", nodeSelector: {" ARCH ": arm64}");
    pod("follower", "", "0",
        ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchExpressions: [{key: tier, operator: In, values: [db, web]}]}, topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("follower"), place("target"));
    cr_expect_str_neq(place("follower"), place("other"));
}

/* ---------- namespaces ---------- */

Test(pod_affinity, term_without_namespaces_ignores_other_namespaces)
{
    nodepool("default", "");
    deployment("spread", 10, "test: test", "0", spread(HOST, "test: test"));
    pod("other-ns-no-match/aff1", "security: s2", "0", "");
    pod("aff2", "", "0", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    expect_scheduled("other-ns-no-match/aff1");
    expect_pending("aff2");
}

Test(pod_affinity, term_namespace_list_selects_other_namespace)
{
    nodepool("default", "");
    deployment("spread", 10, "test: test", "0", spread(HOST, "test: test"));
    pod("other-ns-list/aff1", "security: s2", "0", "");
    pod("aff2", "", "0",
        ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchLabels: {security: s2}}, namespaces: [other-ns-list], topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    expect_scheduled("aff2");
    cr_expect_str_eq(place("aff2"), place("other-ns-list/aff1"));
}

Test(pod_affinity, empty_namespace_selector_selects_every_namespace)
{
    nodepool("default", "");
    deployment("spread", 10, "test: test", "0", spread(HOST, "test: test"));
    pod("empty-ns-selector/aff1", "security: s2", "0", "");
    pod("aff2", "", "0",
        ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchLabels: {security: s2}}, namespaceSelector: {}, topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    expect_scheduled("aff2");
    cr_expect_str_eq(place("aff2"), place("empty-ns-selector/aff1"));
}

/* A namespace list that names only the pod's own namespace still excludes the target. */
Test(pod_affinity, namespace_list_without_the_targets_namespace)
{
    nodepool("default", "");
    pod("team-a/target", "security: s2", "0", "");
    pod("team-b/follower", "", "0",
        ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchLabels: {security: s2}}, namespaces: [team-b, team-c], topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    expect_scheduled("team-a/target");
    expect_pending("team-b/follower");
}

/* ---------- pods already running ---------- */

Test(pod_affinity, hostname_affinity_to_a_running_pod_uses_its_node)
{
    nodepool("default", "");
    node("n1", "test-zone-2", "8", 20);
    node("n2", "test-zone-1", "8", 20);
    pod("target", "security: s2", "1", ", nodeName: n1");
    pod("follower", "", "1", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("follower"), "node:n1");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* The target's node is full: the follower cannot share its host, and a new
 * node is a different host. */
Test(pod_affinity, hostname_affinity_to_a_pod_on_a_full_node_is_unschedulable)
{
    nodepool("default", "");
    node("n1", "test-zone-2", "2", 20);
    pod("target", "security: s2", "2", ", nodeName: n1");
    pod("follower", "", "1", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    expect_pending("follower");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* A full node in zone 2 runs the target: the follower gets a new node pinned to zone 2. */
Test(pod_affinity, zone_affinity_to_a_running_pod_launches_in_its_zone)
{
    nodepool("default", "");
    node("n1", "test-zone-2", "2", 20);
    pod("target", "security: s2", "2", ", nodeName: n1");
    deployment("aff", 10, "app: aff", "1", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 10);
    cr_assert_geq(sc.plan->n_claims, 2); /* 5 pod slots per node */
    for (uint32_t c = 0; c < sc.plan->n_claims; c++)
        cr_expect_str_eq(zone_req((int)c), "In [test-zone-2]");
}

/* A later batch: a self-affine group already holds a full host, so new
 * members cannot start a second one. */
Test(pod_affinity, self_affinity_group_on_a_full_node_blocks_new_members)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "4", 5);
    const char *aff = required("podAffinity", HOST, "security: s2");
    for (int i = 0; i < 5; i++)
        pod(frag("old-%d", i), "security: s2", "0", frag("%s, nodeName: n1", aff));
    deployment("s", 10, "security: s2", "0", aff);
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 0);
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* A member of the group runs in zone 1; pods limited to zones 2 and 3
 * cannot bootstrap a host of their own, though their node selectors differ
 * (node filters apply to spread constraints only). */
Test(pod_affinity, self_affinity_with_a_member_elsewhere_does_not_bootstrap)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "4", 5);
    const char *aff = required("podAffinity", HOST, "security: s2");
    pod("old", "security: s2", "0", frag("%s, nodeName: n1", aff));
    deployment("s", 10, "security: s2", "0",
               ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
               "[{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2, test-zone-3]}]}]}}, "
               "podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: "
               "{security: s2}}, topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 0);
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* An in-flight NodeClaim already pinned to a zone hosts a group member: the
 * next member joins it instead of launching another node. */
Test(pod_affinity, self_zone_affinity_joins_an_in_flight_nodeclaim)
{
    nodepool("default", "");
    add("apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: inflight, labels: {karpenter.sh/nodepool: "
        "default}}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
        "  requirements:\n  - {key: " ZONE ", operator: In, values: [test-zone-2]}\n"
        "  - {key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}\n"
        "status: {capacity: {cpu: '4', memory: 4Gi, pods: '5'}, allocatable: {cpu: '4', memory: 4Gi, pods: '5'}}");
    const char *aff = required("podAffinity", ZONE, "security: s2");
    pod("first", "security: s2", "0", frag("%s, nodeName: inflight", aff));
    pod("second", "security: s2", "0", aff);
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("second"), "node:inflight");
    cr_expect_eq(sc.plan->n_claims, 0);
}
