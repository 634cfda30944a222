/*
 * Affinity scenarios the solver once got wrong against Karpenter (namespaceSelector
 * over Namespace objects and the kubernetes.io/metadata.name label), kept as
 * regression tests; each comment names Karpenter's rule.
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

TestSuite(affinity_regressions, .init = setup, .fini = teardown);

/* Karpenter resolves a term's namespaceSelector by listing Namespaces
 * (topology.go buildNamespaceList). The manifests loader skips Namespace
 * documents ("not used for planning", shared/scheduling/manifests.c keep /
 * kp_manifests_cluster leave kp_cluster.namespaces empty), so a selector on
 * namespace labels selects nothing and the follower stays pending. */
Test(affinity_regressions, namespace_selector_matches_namespace_labels)
{
    nodepool("default", "");
    add("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}");
    deployment("spread", 4, "test: test", "0", spread(HOST, "test: test"));
    pod("team-a/target", "security: s2", "0", "");
    pod("follower", "", "0",
        ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchLabels: {security: s2}}, namespaceSelector: {matchLabels: {team: a}}, topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    expect_scheduled("follower");
    cr_expect_str_eq(place("follower"), place("team-a/target"));
}

/* Every Namespace carries kubernetes.io/metadata.name (set by the API
 * server), the usual way to select namespaces by name. Without Namespace
 * objects the snapshot knows the namespaces only from pods, with no labels
 * (snapshot_pods.c namespace_labels), so this selector matches nothing. */
Test(affinity_regressions, namespace_selector_on_the_metadata_name_label)
{
    nodepool("default", "");
    deployment("spread", 4, "test: test", "0", spread(HOST, "test: test"));
    pod("team-b/target", "security: s2", "0", "");
    pod("follower", "", "0",
        ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchLabels: {security: s2}}, namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-b}}, "
        "topologyKey: " HOST "}]}}");
    solve(FAKE_CATALOG);
    expect_scheduled("follower");
    cr_expect_str_eq(place("follower"), place("team-b/target"));
}
