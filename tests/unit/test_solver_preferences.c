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

#include "solver_cases.h"

static const char *node_pref(int weight, const char *key, const char *op, const char *values)
{
    return frag("{weight: %d, preference: {matchExpressions: [{key: %s, operator: %s, values: [%s]}]}}", weight, key,
                op, values);
}

/* Karpenter's PreferencePolicy=Ignore, without the repacking pass (as the harness default). */
static const kp_solve_opts ignore = {.ignore_preferences = true, .max_instance_types = 60};

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
