/*
 * Solver scenarios: CSI attach limits (Karpenter's VolumeUsage). A node's
 * CSINode caps the volumes each driver may attach; a pending pod whose claims
 * would pass the cap goes to a new NodeClaim instead, a claim shared by pods
 * on the node counts once, drivers and nodes without a count are unlimited,
 * and in-tree EBS counts against the EBS CSI driver.
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
#include "scheduling/volume_limits.h"

#include "solver_cases.h"

#define EBS "ebs.csi.aws.com"

TestSuite(volume_limits, .init = setup, .fini = teardown);

static void csinode(const char *node_name, const char *driver, int count)
{
    add("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: %s}\n"
        "spec: {drivers: [{name: %s, nodeID: %s, allocatable: {count: %d}}]}",
        node_name, driver, node_name, count);
}

static void storage_class(const char *name, const char *provisioner)
{
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\nprovisioner: %s\n"
        "volumeBindingMode: WaitForFirstConsumer",
        name, provisioner);
}

/* A claim bound to a volume of `driver`. */
static void bound_claim(const char *name, const char *driver)
{
    add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-%s}\n"
        "spec: {capacity: {storage: 10Gi}, csi: {driver: %s, volumeHandle: vol-%s}}",
        name, driver, name);
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default, "
        "annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}, volumeName: pv-%s}\n"
        "status: {phase: Bound}",
        name, name);
}

/* An unbound claim of storage class `class`. */
static void claim(const char *name, const char *class)
{
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}, storageClassName: %s}",
        name, class);
}

static const char *mounts(const char *claim_name)
{
    return frag(", volumes: [{name: v, persistentVolumeClaim: {claimName: %s}}]", claim_name);
}

static const char *mounts_on(const char *node_name, const char *claim_name)
{
    return frag(", nodeName: %s%s", node_name, mounts(claim_name));
}

/* Node n1 (plenty of room) in test-zone-1 running `holder` with claim data-0. */
static void cluster(void)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "16", 100);
    storage_class("gp3", EBS);
    bound_claim("data-0", EBS);
    pod("holder", "app: db", "1", mounts_on("n1", "data-0"));
}

Test(volume_limits, a_pod_past_the_drivers_count_goes_to_a_new_node)
{
    cluster();
    csinode("n1", EBS, 2);
    claim("data-1", "gp3");
    claim("data-2", "gp3");
    pod("a", "app: db", "1", mounts("data-1"));
    pod("b", "app: db", "1", mounts("data-2"));
    solve(FAKE_CATALOG);
    int on_n1 = !strcmp(place("a"), "node:n1") + !strcmp(place("b"), "node:n1");
    cr_expect_eq(on_n1, 1, "one of a (%s) and b (%s) fits the second attachment", place("a"), place("b"));
    cr_expect_eq(sc.plan->n_claims, 1, "the other gets a NodeClaim");
}

Test(volume_limits, a_shared_claim_counts_once)
{
    cluster();
    csinode("n1", EBS, 1);
    claim("data-1", "gp3");
    pod("reader", "app: db", "1", mounts("data-0"));
    pod("writer", "app: db", "1", mounts("data-1"));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("reader"), "node:n1", "data-0 is attached there already");
    cr_expect_str_neq(place("writer"), "node:n1", "a second volume passes the count of 1");
    expect_scheduled("writer");
}

Test(volume_limits, other_drivers_and_nodes_without_a_csinode_are_unlimited)
{
    cluster();
    csinode("n1", "efs.csi.aws.com", 0);
    node("n2", "test-zone-1", "16", 100);
    for (int i = 1; i <= 3; i++) {
        const char *name = frag("data-%d", i);
        claim(name, "gp3");
        pod(frag("p%d", i), "app: db", "1", mounts(name));
    }
    solve(FAKE_CATALOG);
    for (int i = 1; i <= 3; i++)
        cr_expect(!strncmp(place(frag("p%d", i)), "node:", 5), "p%d: %s", i, place(frag("p%d", i)));
    cr_expect_eq(sc.plan->n_claims, 0);
}

Test(volume_limits, in_tree_ebs_counts_against_the_csi_driver)
{
    cluster();
    csinode("n1", EBS, 1);
    storage_class("legacy", "kubernetes.io/aws-ebs");
    claim("data-1", "legacy");
    pod("a", "app: db", "1", mounts("data-1"));
    solve(FAKE_CATALOG);
    cr_expect_str_neq(place("a"), "node:n1");
    expect_scheduled("a");
    cr_expect_str_eq(kp_csi_driver_name("kubernetes.io/gce-pd"), "pd.csi.storage.gke.io");
    cr_expect_str_eq(kp_csi_driver_name("example.com/mine"), "example.com/mine");
}

Test(volume_limits, pods_without_claims_are_not_limited)
{
    cluster();
    csinode("n1", EBS, 1);
    pod("plain", "app: web", "1", "");
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("plain"), "node:n1");
}
