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

#include "solver_cases.h"

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
