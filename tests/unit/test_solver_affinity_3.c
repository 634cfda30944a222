/*
 * Solver scenarios: preferences. Preferred pod affinity and anti-affinity are
 * followed when they can be and dropped when they cannot; Karpenter relaxes
 * a pod one step at a time in a fixed order (required node-affinity OR-terms,
 * preferred pod affinity, preferred pod anti-affinity, preferred node
 * affinity, ScheduleAnyway spreads, then PreferNoSchedule taints), and the
 * ignore_preferences option drops every preference up front (Karpenter's
 * topology_test.go and provisioning suite_test.go, "Preferential Fallback"
 * and "Ignore Preferences").
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

static const char *node_pref(int weight, const char *key, const char *op, const char *values)
{
    return frag("{weight: %d, preference: {matchExpressions: [{key: %s, operator: %s, values: [%s]}]}}", weight, key,
                op, values);
}

static const kp_solve_opts ignore = {true, false, 60, NULL, true};

TestSuite(preferences, .init = setup, .fini = teardown);

/* ---------- preferred pod (anti-)affinity ---------- */

Test(preferences, preferred_affinity_to_a_missing_pod_is_dropped)
{
    nodepool("default", "");
    deployment("spread", 10, "test: test", "0", spread(HOST, "test: test"));
    pod("aff", "", "0", preferred("podAffinity", 50, HOST, "security: s2"));
    solve(FAKE_CATALOG);
    expect_scheduled("aff");
    cr_expect_eq(sc.plan->n_scheduled, 11);
}

Test(preferences, preferred_anti_affinity_is_dropped_when_every_zone_is_taken)
{
    nodepool("default", "");
    deployment("spread", 3, "test: test", "0", spread(ZONE, "test: test"));
    deployment("anti", 10, "app: anti", "0", preferred("podAntiAffinity", 50, ZONE, "test: test"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 13);
}

/* One pod per host is required; sharing the target's host is only preferred. */
Test(preferences, preferred_affinity_yields_to_a_required_spread)
{
    nodepool("default", "");
    deployment("web", 3, "test: test", "0",
               frag("%s%s", spread(HOST, "test: test"), preferred("podAffinity", 50, HOST, "security: s2")));
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 4);
    cr_expect_eq(sc.plan->n_claims, 3);
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            cr_expect_str_neq(place(frag("web-%d", i)), place(frag("web-%d", j)));
}

/* Two NodeClaims with one pod each; without the preference the follower
 * would join the first (an amd64 one). */
Test(preferences, preferred_affinity_is_followed_when_possible)
{
    nodepool("default", "");
    pod("other", "app: other", "2", ", nodeSelector: {" ARCH ": amd64}");
    pod("target", "security: s2", "1", ", nodeSelector: {" ARCH ": arm64}");
    pod("follower", "", "0", preferred("podAffinity", 50, HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("follower"), place("target"));
    cr_expect_str_neq(place("follower"), place("other"));
}

Test(preferences, preferred_anti_affinity_is_followed_when_possible)
{
    nodepool("default", "");
    deployment("web", 3, "app: web", "0", preferred("podAntiAffinity", 50, HOST, "app: web"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 3);
    cr_expect_eq(sc.plan->n_claims, 3);
}

/* Every preferred pod-affinity term is held at once, and when they conflict
 * Karpenter drops the heaviest first (preferences.go sorts by weight and
 * removes terms[0]), whatever the order they are written in: the follower
 * ends up with the target of the lighter term. With the heavy target
 * missing, the lighter term is the one left either way. */
Test(preferences, preferred_affinity_terms_drop_heaviest_first)
{
    static const struct {
        bool heavy_exists;
        int w_light, w_heavy;
        const char *expect;
    } cases[] = {
        {true, 1, 100, "light"},
        {true, 100, 1, "heavy"},
        {false, 1, 100, "light"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", "");
        pod("filler", "app: filler", "3", ", nodeSelector: {" ARCH ": amd64}");
        if (cases[i].heavy_exists)
            pod("heavy", "role: heavy", "2", ", nodeSelector: {" ARCH ": arm64}");
        pod("light", "role: light", "1", ", nodeSelector: {" ARCH ": amd64}");
        pod("follower", "", "0",
            frag(", affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
                 "{weight: %d, podAffinityTerm: {labelSelector: {matchLabels: {role: light}}, topologyKey: " HOST
                 "}}, {weight: %d, podAffinityTerm: {labelSelector: {matchLabels: {role: heavy}}, topologyKey: " HOST
                 "}}]}}",
                 cases[i].w_light, cases[i].w_heavy));
        solve(FAKE_CATALOG);
        cr_expect_str_eq(place("follower"), place(cases[i].expect), "case %zu", i);
    }
}

/* Karpenter does not track preferred anti-affinity of other pods. */
Test(preferences, preferred_anti_affinity_of_batch_pods_does_not_repel)
{
    nodepool("default", "");
    const char *anti = preferred("podAntiAffinity", 10, ZONE, "security: s2");
    for (int z = 1; z <= 3; z++)
        pod(frag("zone%d", z), "", "2", frag("%s, nodeSelector: {" ZONE ": test-zone-%d}", anti, z));
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 4);
}

Test(preferences, preferred_anti_affinity_of_running_pods_does_not_repel)
{
    nodepool("default", "");
    const char *anti = preferred("podAntiAffinity", 10, ZONE, "security: s2");
    for (int z = 1; z <= 3; z++) {
        node(frag("n%d", z), frag("test-zone-%d", z), "2", 20);
        pod(frag("zone%d", z), "", "2", frag("%s, nodeName: n%d", anti, z));
    }
    pod("target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    expect_scheduled("target");
}

/* ---------- the relaxation order ---------- */

/* Terms [zone 1] OR [zone 2] and a preferred affinity to a pod pinned to
 * zone 2: the first term goes before the preference, so the pod ends up
 * with the target in zone 2 (the other order would put it in zone 1). */
Test(preferences, required_terms_are_relaxed_before_preferred_affinity)
{
    nodepool("default", "");
    pod("target", "security: s2", "1", ", nodeSelector: {" ZONE ": test-zone-2}");
    pod("p", "", "0",
        frag(", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
             "{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1]}]}, "
             "{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}]}]}}, "
             "podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, podAffinityTerm: "
             "{labelSelector: {matchLabels: {security: s2}}, topologyKey: " HOST "}}]}}"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), place("target"));
    cr_expect_str_eq(zone_of("p"), "In [test-zone-2]");
}

/* Preferring zone 3 and the host of a pod pinned to zone 1: the pod
 * affinity goes first, so the zone preference holds. */
Test(preferences, preferred_affinity_is_relaxed_before_preferred_node_affinity)
{
    nodepool("default", "");
    pod("target", "security: s2", "1", ", nodeSelector: {" ZONE ": test-zone-1}");
    pod("p", "", "0",
        frag(", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [%s]}, "
             "podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, podAffinityTerm: "
             "{labelSelector: {matchLabels: {security: s2}}, topologyKey: " HOST "}}]}}",
             node_pref(1, ZONE, "In", "test-zone-3")));
    solve(FAKE_CATALOG);
    cr_expect_str_neq(place("p"), place("target"));
    cr_expect_str_eq(zone_of("p"), "In [test-zone-3]");
}

Test(preferences, preferred_anti_affinity_is_relaxed_before_preferred_node_affinity)
{
    nodepool("default", "");
    pod("target", "security: s2", "1", ", nodeSelector: {" ZONE ": test-zone-3}");
    pod("p", "", "0",
        frag(", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [%s]}, "
             "podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, podAffinityTerm: "
             "{labelSelector: {matchLabels: {security: s2}}, topologyKey: " ZONE "}}]}}",
             node_pref(1, ZONE, "In", "test-zone-3")));
    solve(FAKE_CATALOG);
    expect_scheduled("p");
    cr_expect_str_eq(zone_of("p"), "In [test-zone-3]");
}

/* Two pods preferring zone 1 with a ScheduleAnyway zone spread: the second
 * drops the zone preference first and keeps the spread. */
Test(preferences, preferred_node_affinity_is_relaxed_before_schedule_anyway_spread)
{
    nodepool("default", "");
    deployment("web", 2, "app: web", "0",
               frag(", topologySpreadConstraints: [{maxSkew: 1, topologyKey: " ZONE ", whenUnsatisfiable: "
                    "ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}], affinity: {nodeAffinity: "
                    "{preferredDuringSchedulingIgnoredDuringExecution: [%s]}}",
                    node_pref(1, ZONE, "In", "test-zone-1")));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 2);
    cr_expect_str_eq(zone_of("web-0"), "In [test-zone-1]");
    cr_assert_not_null(zone_of("web-1"));
    cr_expect_null(strstr(zone_of("web-1"), "test-zone-1"), "web-1 in %s", zone_of("web-1"));
}

/* NodePool "tainted" (heavier, zone 2, PreferNoSchedule) and "plain" (zone
 * 1): the second pod of a ScheduleAnyway spread drops the spread before it
 * tolerates the taint, so it joins the first in zone 1. */
Test(preferences, schedule_anyway_spread_is_relaxed_before_prefer_no_schedule)
{
    weighted_nodepool("tainted", 10, "{key: " ZONE ", operator: In, values: [test-zone-2]}",
                      ", taints: [{key: foo, value: bar, effect: PreferNoSchedule}]");
    nodepool("plain", "{key: " ZONE ", operator: In, values: [test-zone-1]}");
    deployment("web", 2, "app: web", "0",
               ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: " ZONE ", whenUnsatisfiable: "
               "ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}]");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 2);
    for (uint32_t c = 0; c < sc.plan->n_claims; c++)
        cr_expect_str_eq(kp_scenario_claim_pool(&sc, (int)c), "plain");
}

Test(preferences, prefer_no_schedule_is_tolerated_after_node_preferences_are_dropped)
{
    nodepool_with("default", "", ", taints: [{key: foo, value: bar, effect: PreferNoSchedule}]");
    pod("p", "", "0",
        frag(", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [%s, %s]}}",
             node_pref(1, ZONE, "In", "invalid"), node_pref(1, "node.kubernetes.io/instance-type", "In", "invalid")));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(kp_scenario_claim_pool(&sc, 0), "default");
}

/* The untainted NodePool wins even when the tainted one is heavier: the
 * toleration is the last resort. */
Test(preferences, prefer_no_schedule_pool_is_used_only_as_a_last_resort)
{
    weighted_nodepool("tainted", 100, "", ", taints: [{key: foo, value: bar, effect: PreferNoSchedule}]");
    nodepool("plain", "");
    pod("p", "", "0", "");
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0);
    cr_expect_str_eq(kp_scenario_claim_pool(&sc, 0), "plain");
}

/* After every relaxation the pod is tried again as written: a later pod in
 * the batch can make the preference possible. */
Test(preferences, relaxed_pod_retries_with_its_preferences_later)
{
    nodepool("default", "");
    pod("a-follower", "", "0", required("podAffinity", HOST, "security: s2"));
    pod("b-pref", "", "0", preferred("podAffinity", 50, HOST, "security: s2"));
    pod("z-target", "security: s2", "0", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 3);
    cr_expect_str_eq(place("a-follower"), place("z-target"));
}

/* ---------- ignore_preferences ---------- */

/* zone1 (2 cores) and two zone2 pods (3 cores each) land first; a 1-core pod
 * preferring zone 2 (or the zone-2 pods) goes to the emptier zone-1 node
 * when preferences are ignored, to zone 2 when they are respected. */
static void zone_pods_with(const char *last)
{
    nodepool("default", "");
    pod("zone1", "app: foo", "2", ", nodeSelector: {" ZONE ": test-zone-1}");
    pod("zone2-a", "app: bar", "3", ", nodeSelector: {" ZONE ": test-zone-2}");
    pod("zone2-b", "app: bar", "3", ", nodeSelector: {" ZONE ": test-zone-2}");
    pod("last", "app: baz", "1", last);
}

Test(preferences, ignore_drops_preferred_node_affinity)
{
    zone_pods_with(frag(", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [%s]}}",
                        node_pref(1, ZONE, "In", "test-zone-2")));
    solve_with(FAKE_CATALOG, &ignore);
    cr_expect_str_eq(place("last"), place("zone1"));
}

Test(preferences, respect_keeps_preferred_node_affinity)
{
    zone_pods_with(frag(", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [%s]}}",
                        node_pref(1, ZONE, "In", "test-zone-2")));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("last"), place("zone2-a"));
}

Test(preferences, ignore_drops_preferred_pod_affinity)
{
    static const char *const keys[] = {ZONE, HOST};
    for (size_t i = 0; i < 2; i++) {
        teardown();
        setup();
        zone_pods_with(preferred("podAffinity", 1, keys[i], "app: bar"));
        solve_with(FAKE_CATALOG, &ignore);
        cr_expect_str_eq(place("last"), place("zone1"), "%s", keys[i]);
        teardown();
        setup();
        zone_pods_with(preferred("podAffinity", 1, keys[i], "app: bar"));
        solve(FAKE_CATALOG);
        cr_expect_str_eq(place("last"), place("zone2-a"), "%s", keys[i]);
    }
}

/* A preference nothing can meet does not keep the pod from the first node either way. */
Test(preferences, ignore_drops_unsatisfiable_node_preferences)
{
    static const char *const keys[] = {ZONE, HOST};
    for (size_t i = 0; i < 2; i++) {
        teardown();
        setup();
        nodepool("default", "");
        pod("first", "app: foo", "2", "");
        pod("second", "app: baz", "1",
            frag(", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [%s]}}",
                 node_pref(1, keys[i], "In", "value-1")));
        solve_with(FAKE_CATALOG, &ignore);
        cr_expect_str_eq(place("second"), place("first"), "%s", keys[i]);
    }
}

Test(preferences, ignore_drops_schedule_anyway_spreads_and_preferred_anti_affinity)
{
    static const char *const keys[] = {ZONE, HOST};
    for (size_t i = 0; i < 4; i++) {
        const char *key = keys[i / 2];
        teardown();
        setup();
        nodepool("default", "");
        if (i % 2 == 0)
            deployment("foo", 5, "app: foo", "0",
                       frag(", topologySpreadConstraints: [{maxSkew: 1, topologyKey: %s, whenUnsatisfiable: "
                            "ScheduleAnyway, labelSelector: {matchLabels: {app: foo}}}]",
                            key));
        else
            deployment("foo", 5, "app: foo", "0", preferred("podAntiAffinity", 1, key, "app: foo"));
        solve_with(FAKE_CATALOG, &ignore);
        cr_expect_eq(sc.plan->n_scheduled, 5, "case %zu", i);
        cr_expect_eq(sc.plan->n_claims, 1, "case %zu", i);
    }
}

Test(preferences, respect_spreads_schedule_anyway_pods_over_hosts)
{
    nodepool("default", "");
    deployment("foo", 5, "app: foo", "0",
               ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: " HOST ", whenUnsatisfiable: "
               "ScheduleAnyway, labelSelector: {matchLabels: {app: foo}}}]");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_claims, 5);
}

/* Required terms stay in force, and so do the inverse terms of other pods. */
Test(preferences, ignore_keeps_required_terms)
{
    nodepool("default", "");
    deployment("web", 3, "app: web", "0", required("podAntiAffinity", HOST, "app: web"));
    pod("follower", "", "0", required("podAffinity", HOST, "app: web"));
    pod("z-pinned", "", "0", ", nodeSelector: {" ZONE ": test-zone-3}");
    solve_with(FAKE_CATALOG, &ignore);
    cr_expect_eq(sc.plan->n_claims, 3);
    cr_expect_eq(sc.plan->n_scheduled, 5);
    int c = kp_scenario_claim_of(&sc, "follower");
    cr_assert_geq(c, 0);
    cr_expect_eq(kp_scenario_claim_pods(&sc, c), 2 + (kp_scenario_claim_of(&sc, "z-pinned") == c));
}

/* Ignoring preferences leaves the other relaxations: the next required
 * term is still tried, and PreferNoSchedule taints are still tolerated
 * when nothing else is left. */
Test(preferences, ignore_still_relaxes_required_terms_and_prefer_no_schedule)
{
    nodepool_with("default", "", ", taints: [{key: foo, value: bar, effect: PreferNoSchedule}]");
    pod("p", "", "0",
        ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [invalid]}]}, "
        "{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-2]}]}]}}}");
    solve_with(FAKE_CATALOG, &ignore);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-2]");
}
