/*
 * Solver scenarios: required pod anti-affinity, both ways (a pod with the
 * term keeps away from what it selects; a pod with no term is kept out of
 * the domains of running or planned pods whose term selects it), on
 * hostname, zone and arch (Karpenter's topology_test.go, "Pod
 * Affinity/Anti-Affinity").
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

TestSuite(pod_anti_affinity, .init = setup, .fini = teardown);

/* ---------- hostname ---------- */

/* Run with the repelling pod first and last in the queue (names sort it). */
Test(pod_anti_affinity, hostname_term_separates_nodes_in_either_order)
{
    static const char *const orders[][2] = {{"a-avoider", "z-target"}, {"z-avoider", "a-target"}};
    for (size_t i = 0; i < 2; i++) {
        teardown();
        setup();
        nodepool("default", "");
        pod(orders[i][0], "", "0", required("podAntiAffinity", HOST, "security: s2"));
        pod(orders[i][1], "security: s2", "0", "");
        solve(FAKE_CATALOG);
        expect_scheduled(orders[i][0]);
        expect_scheduled(orders[i][1]);
        cr_expect_str_neq(place(orders[i][0]), place(orders[i][1]), "order %zu", i);
        cr_expect_eq(sc.plan->n_claims, 2, "order %zu", i);
    }
}

Test(pod_anti_affinity, self_anti_affinity_on_hostname_gives_one_node_per_pod)
{
    nodepool("default", "");
    deployment("web", 5, "app: web", "0", required("podAntiAffinity", HOST, "app: web"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 5);
    cr_expect_eq(sc.plan->n_claims, 5);
    for (uint32_t c = 0; c < sc.plan->n_claims; c++)
        cr_expect_eq(kp_scenario_claim_pods(&sc, (int)c), 1);
}

/* The running pod's node has room, but the term keeps the new pod off it. */
Test(pod_anti_affinity, hostname_term_avoids_the_node_of_a_running_pod)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    pod("target", "security: s2", "1", ", nodeName: n1");
    pod("avoider", "", "1", required("podAntiAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_scenario_claim_of(&sc, "avoider"), 0);
    cr_expect_eq(sc.plan->n_claims, 1);
}

/* Inverse: the running pod carries the term; the new pod has none. */
Test(pod_anti_affinity, running_pods_term_repels_a_pod_without_one)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    pod("guard", "", "1", frag("%s, nodeName: n1", required("podAntiAffinity", HOST, "app: web")));
    pod("web", "app: web", "1", "");
    pod("other", "app: db", "1", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_scenario_claim_of(&sc, "web"), 0, "web went to %s", place("web"));
    cr_expect_str_eq(place("other"), "node:n1");
}

/* A term selects only its own namespace unless it names others. */
Test(pod_anti_affinity, pods_in_other_namespaces_are_not_avoided)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    pod("team-a/target", "security: s2", "1", ", nodeName: n1");
    pod("avoider", "", "1", required("podAntiAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("avoider"), "node:n1");
}

/* ---------- zone ---------- */

/* Three bigger pods pinned one per zone go first; no zone is left. */
Test(pod_anti_affinity, zone_term_with_every_zone_taken_is_unschedulable)
{
    nodepool("default", "");
    for (int z = 1; z <= 3; z++)
        pod(frag("zone%d", z), "security: s2", "2", frag(", nodeSelector: {" ZONE ": test-zone-%d}", z));
    pod("avoider", "", "0", required("podAntiAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    for (int z = 1; z <= 3; z++)
        expect_scheduled(frag("zone%d", z));
    expect_pending("avoider");
    cr_expect(strstr(kp_scenario_error_of(&sc, "avoider"), "pod anti-affinity on " ZONE),
              "%s", kp_scenario_error_of(&sc, "avoider"));
}

/* The target may launch in any zone, so every zone counts as taken. */
Test(pod_anti_affinity, zone_term_against_an_unpinned_target_is_unschedulable)
{
    nodepool("default", "");
    pod("target", "security: s2", "2", "");
    pod("avoider", "", "0", required("podAntiAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    expect_scheduled("target");
    expect_pending("avoider");
}

/* Self anti-affinity on zone: the first pod's zone is open until launch, so
 * one pod schedules per batch; once earlier ones run in zones 1 and 2 the
 * next gets zone 3, and with all three taken none does. */
Test(pod_anti_affinity, self_zone_term_places_one_pod_per_batch)
{
    nodepool("default", "");
    deployment("s", 3, "security: s2", "0", required("podAntiAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 1);
    cr_expect_eq(sc.plan->n_errors, 2);
}

Test(pod_anti_affinity, self_zone_term_takes_the_zone_left_free)
{
    nodepool("default", "");
    const char *anti = required("podAntiAffinity", ZONE, "security: s2");
    node("n1", "test-zone-1", "4", 20);
    node("n2", "test-zone-2", "4", 20);
    pod("old-1", "security: s2", "0", frag("%s, nodeName: n1", anti));
    pod("old-2", "security: s2", "0", frag("%s, nodeName: n2", anti));
    deployment("s", 3, "security: s2", "0", anti);
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 1);
    cr_assert_eq(sc.plan->n_claims, 1);
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
}

Test(pod_anti_affinity, self_zone_term_with_every_zone_taken_places_nothing)
{
    nodepool("default", "");
    const char *anti = required("podAntiAffinity", ZONE, "security: s2");
    for (int z = 1; z <= 3; z++) {
        node(frag("n%d", z), frag("test-zone-%d", z), "4", 20);
        pod(frag("old-%d", z), "security: s2", "0", frag("%s, nodeName: n%d", anti, z));
    }
    deployment("s", 3, "security: s2", "0", anti);
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 0);
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* Inverse, same batch: three pods with the term, one pinned per zone, go
 * first (bigger); the pod they select has no zone left. */
Test(pod_anti_affinity, inverse_zone_terms_in_the_batch_leave_no_zone)
{
    nodepool("default", "");
    const char *anti = required("podAntiAffinity", ZONE, "security: s2");
    for (int z = 1; z <= 3; z++)
        pod(frag("zone%d", z), "", "2", frag("%s, nodeSelector: {" ZONE ": test-zone-%d}", anti, z));
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    for (int z = 1; z <= 3; z++)
        expect_scheduled(frag("zone%d", z));
    expect_pending("target");
}

/* Karpenter's "Schrödinger" case: the pod with the term may land in any
 * zone, so the pod it selects cannot be placed in this batch ... */
Test(pod_anti_affinity, inverse_zone_term_of_an_unpinned_pod_blocks_every_zone)
{
    nodepool("default", "");
    pod("anywhere", "", "2", required("podAntiAffinity", ZONE, "security: s2"));
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    expect_scheduled("anywhere");
    expect_pending("target");
}

/* ... and once it runs in a zone, the next batch places the pod elsewhere. */
Test(pod_anti_affinity, inverse_zone_term_of_a_running_pod_blocks_its_zone)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "2", 20);
    pod("anywhere", "", "2", frag("%s, nodeName: n1", required("podAntiAffinity", ZONE, "security: s2")));
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    int c = kp_scenario_claim_of(&sc, "target");
    cr_assert_geq(c, 0, "target: %s", place("target"));
    cr_assert_not_null(zone_req(c), "the target's zone must be pinned away from zone 1");
    cr_expect_null(strstr(zone_req(c), "test-zone-1"), "%s", zone_req(c));
}

Test(pod_anti_affinity, inverse_zone_terms_of_running_pods_leave_no_zone)
{
    nodepool("default", "");
    const char *anti = required("podAntiAffinity", ZONE, "security: s2");
    for (int z = 1; z <= 3; z++) {
        node(frag("n%d", z), frag("test-zone-%d", z), "4", 20);
        pod(frag("zone%d", z), "", "2", frag("%s, nodeName: n%d", anti, z));
    }
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    expect_pending("target");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* ---------- other keys ---------- */

/* The bigger arm64 pod goes first; the other must take a different arch. */
Test(pod_anti_affinity, arch_term_picks_the_other_architecture)
{
    nodepool("default", "");
    const char *tsc = spread(HOST, "security: s2");
    pod("aff1", "security: s2", "2", frag("%s, nodeSelector: {" ARCH ": arm64}", tsc));
    pod("aff2", "security: s2", "1", frag("%s%s", tsc, required("podAntiAffinity", ARCH, "security: s2")));
    solve(FAKE_CATALOG);
    int c1 = kp_scenario_claim_of(&sc, "aff1"), c2 = kp_scenario_claim_of(&sc, "aff2");
    cr_assert(c1 >= 0 && c2 >= 0, "aff1 %s, aff2 %s", place("aff1"), place("aff2"));
    cr_expect_str_eq(kp_scenario_claim_req(&sc, c1, ARCH), "In [arm64]");
    cr_expect_str_eq(kp_scenario_claim_req(&sc, c2, ARCH), "In [amd64]");
}

/* A term whose key no NodePool or instance type defines has no domain to
 * offer, so the pod stays pending (as Karpenter treats a spread constraint
 * on an unknown key). */
Test(pod_anti_affinity, term_on_a_key_no_node_has_selects_no_domain)
{
    nodepool("default", "");
    pod("p", "app: a", "0", required("podAntiAffinity", "example.com/rack", "app: a"));
    solve(FAKE_CATALOG);
    expect_pending("p");
}
