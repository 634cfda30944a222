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
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}, volumeName: "
        "pv-%s}\n"
        "status: {phase: Bound}",
        name, name);
}

/* An unbound claim of storage class `class`. */
static void claim(const char *name, const char *class)
{
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}, "
        "storageClassName: %s}",
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
    cr_expect_eq(on_n1, 1, "one of a (%s) and b (%s) fits the second attachment", place("a"),
                 place("b"));
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

/* --- new NodeClaims: the instance type's EBS estimate stands in for a CSINode --- */

/* One type that holds every pod of these tests; `limit` < 0 leaves ebsVolumeLimit out. */
static const char *one_type_catalog(int limit)
{
    return frag("json:[{\"name\":\"big\",\"capacity\":{\"cpu\":\"16\",\"memory\":\"64Gi\",\"pods\":"
                "\"110\"},"
                "\"labels\":{\"kubernetes.io/arch\":\"amd64\"}%s,\"offerings\":" OFFERS("1.0") "}]",
                limit < 0 ? "" : frag(",\"ebsVolumeLimit\":%d", limit));
}

/* Pod `name` mounting `n` fresh claims of class gp3. */
static void pod_with_volumes(const char *name, int n)
{
    kp_buf b = KP_BUF_INIT(1 << 16);
    for (int i = 0; i < n; i++) {
        const char *c = frag("%s-data-%d", name, i);
        claim(c, "gp3");
        cr_assert(kp_buf_printf(&b, "%s{name: v%d, persistentVolumeClaim: {claimName: %s}}",
                                i ? ", " : "", i, c) == 0);
    }
    pod(name, "app: db", "100m", frag(", volumes: [%s]", kp_buf_cstr(&b)));
    kp_buf_free(&b);
}

static void many_volume_pods(void)
{
    nodepool("default", "");
    storage_class("gp3", EBS);
    for (int i = 0; i < 3; i++)
        pod_with_volumes(frag("db-%d", i), 12);
}

Test(volume_limits, a_new_claim_takes_no_more_ebs_volumes_than_its_type_attaches)
{
    many_volume_pods();
    solve(one_type_catalog(26));
    cr_expect_eq(sc.plan->n_claims, 2, "36 volumes on types that attach 26: two NodeClaims, not %u",
                 sc.plan->n_claims);
    for (int i = 0; i < 3; i++)
        expect_scheduled(frag("db-%d", i));
}

Test(volume_limits, types_without_an_estimate_are_not_limited)
{
    many_volume_pods();
    solve(one_type_catalog(-1));
    cr_expect_eq(sc.plan->n_claims, 1, "no ebsVolumeLimit: the pods share one NodeClaim");
    teardown(), setup();
    many_volume_pods();
    solve(one_type_catalog(0));
    cr_expect_eq(sc.plan->n_claims, 1, "ebsVolumeLimit 0: unknown, not limited");
    teardown(), setup();
    many_volume_pods();
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_claims, 1, "Karpenter's fake types carry no estimate");
}

Test(volume_limits, a_pod_past_every_types_limit_is_unschedulable_with_the_reason)
{
    nodepool("default", "");
    storage_class("gp3", EBS);
    pod_with_volumes("huge", 30);
    solve(one_type_catalog(26));
    cr_expect_eq(sc.plan->n_claims, 0);
    const char *why = NULL;
    for (uint32_t i = 0; i < sc.plan->n_errors; i++)
        why = sc.plan->errors[i].reason;
    cr_assert_not_null(why);
    cr_expect(strstr(why, "30 volumes of " EBS) != NULL, "%s", why);
}

Test(volume_limits, a_smaller_type_is_dropped_for_a_larger_one)
{
    nodepool("default", "");
    storage_class("gp3", EBS);
    pod_with_volumes("db", 20);
    solve(
        "json:[{\"name\":\"cheap\",\"capacity\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"20\"},"
        "\"ebsVolumeLimit\":10,\"offerings\":" OFFERS(
            "0.1") "},"
                   "{\"name\":\"roomy\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":"
                   "\"20\"},"
                   "\"ebsVolumeLimit\":31,\"offerings\":" OFFERS("0.2") "}]");
    cr_assert_eq(sc.plan->n_claims, 1);
    const kp_plan_claim *c = &sc.plan->claims[0];
    cr_assert_eq(c->n_its, 1, "only the type that attaches 20 volumes remains");
    cr_expect_str_eq(sc.snap->its[c->its[0]].src->name, "roomy");
}
