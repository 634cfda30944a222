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

#include "solver_cases.h"

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
