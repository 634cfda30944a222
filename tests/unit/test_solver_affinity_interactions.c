/*
 * Solver scenarios: pod (anti-)affinity meeting the rest of the solver —
 * existing nodes with room, volume-pinned targets, DaemonSets, label-key
 * terms, NodePools with their own zones and taints.
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

TestSuite(affinity_mix, .init = setup, .fini = teardown);

/* A pending target that lands on an existing node draws its follower there. */
Test(affinity_mix, follower_joins_a_target_placed_on_an_existing_node)
{
    nodepool("default", "");
    node("n1", "test-zone-2", "8", 20);
    pod("target", "security: s2", "2", "");
    pod("follower", "", "1", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("target"), "node:n1");
    cr_expect_str_eq(place("follower"), "node:n1");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* Self anti-affinity uses an empty existing node first, then new ones. */
Test(affinity_mix, self_anti_affinity_uses_existing_nodes_first)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    node("n2", "test-zone-2", "8", 20);
    deployment("web", 4, "app: web", "1", required("podAntiAffinity", HOST, "app: web"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 4);
    cr_expect_eq(sc.plan->n_nodes, 2);
    cr_expect_eq(sc.plan->n_claims, 2);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            cr_expect_str_neq(place(frag("web-%d", i)), place(frag("web-%d", j)));
}

/* The target's zone is fixed by its volume, so zonal followers can join it in the same batch. */
Test(affinity_mix, zone_affinity_to_a_target_pinned_by_its_volume)
{
    nodepool("default", "");
    add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: vol}\nspec: {capacity: {storage: 1Gi}, "
        "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: " ZONE
        ", operator: In, values: [test-zone-2]}]}]}}}");
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, annotations: {pv.kubernetes.io/bind-completed: "
        "'yes'}}\nspec: {volumeName: vol}\n"
        "status: {phase: Bound}");
    pod("target", "security: s2", "1", ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]");
    deployment("aff", 3, "app: aff", "1", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 4);
    for (uint32_t c = 0; c < sc.plan->n_claims; c++)
        cr_expect_str_eq(zone_req((int)c), "In [test-zone-2]");
}

/* matchLabelKeys narrows the term to the pod's own revision: old pods of
 * another revision do not repel. Karpenter ignores matchLabelKeys on
 * affinity terms; kube-scheduler honours them (MatchLabelKeysInPodAffinity),
 * and so do we, so the plan is the one the scheduler will carry out. */
Test(affinity_mix, match_label_keys_scope_anti_affinity_to_a_revision)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    const char *term = ", affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
                       "{matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash], topologyKey: " HOST "}]}}";
    pod("old", "app: web, pod-template-hash: aaa", "1", frag("%s, nodeName: n1", term));
    pod("new", "app: web, pod-template-hash: bbb", "1", term);
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("new"), "node:n1");
}

/* A pod with required anti-affinity against pods that are not there at all goes anywhere. */
Test(affinity_mix, anti_affinity_to_absent_pods_constrains_nothing)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    pod("p", "", "1", required("podAntiAffinity", ZONE, "app: ghost"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), "node:n1");
}

/* Zone affinity only offers zones a NodePool can launch in. */
Test(affinity_mix, zone_affinity_to_a_pod_in_a_zone_no_nodepool_offers)
{
    nodepool("default", "{key: " ZONE ", operator: In, values: [test-zone-1]}");
    node("n3", "test-zone-3", "1", 20);
    pod("target", "security: s2", "1", ", nodeName: n3");
    pod("follower", "", "1", required("podAffinity", ZONE, "security: s2"));
    solve(FAKE_CATALOG);
    expect_pending("follower");
}

/* Pods of a running DaemonSet count for affinity like any other pod. */
Test(affinity_mix, affinity_to_a_daemon_pod)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    node("n2", "test-zone-2", "8", 20);
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: agent-n2, labels: {app: agent}, ownerReferences: [{apiVersion: "
        "apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]}\nspec: {nodeName: n2, containers: "
        "[{name: c}]}");
    pod("p", "", "1", required("podAffinity", HOST, "app: agent"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), "node:n2");
}

/* A terminating or finished pod no longer counts for affinity. */
Test(affinity_mix, finished_pods_do_not_attract)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: done, labels: {security: s2}}\nspec: {nodeName: n1, "
        "containers: [{name: c}]}\nstatus: {phase: Succeeded}");
    pod("follower", "", "1", required("podAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    expect_pending("follower");
}

Test(affinity_mix, finished_pods_do_not_repel)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: done, labels: {security: s2}}\nspec: {nodeName: n1, "
        "containers: [{name: c}]}\nstatus: {phase: Failed}");
    pod("p", "", "1", required("podAntiAffinity", HOST, "security: s2"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), "node:n1");
}

/* A pod with a tainted NodePool's toleration bootstraps its self-affinity there. */
Test(affinity_mix, self_affinity_on_a_tainted_nodepool)
{
    nodepool_with("gpu", "", ", taints: [{key: gpu, value: 'true', effect: NoSchedule}]");
    deployment("train", 3, "app: train", "0",
               frag("%s, tolerations: [{key: gpu, operator: Exists}]", required("podAffinity", ZONE, "app: train")));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 3);
    cr_assert_eq(sc.plan->n_claims, 1);
    cr_expect_str_eq(kp_scenario_claim_pool(&sc, 0), "gpu");
}
