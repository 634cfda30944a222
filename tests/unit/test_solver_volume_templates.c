/*
 * Solver scenarios: volumes whose claims come from a template — generic
 * ephemeral volumes (the claim is "<pod>-<volume>") and StatefulSet
 * volumeClaimTemplates (the expansion creates "<template>-<set>-<ordinal>"
 * unless the manifests hold it already) — and the topology they impose
 * (Karpenter's provisioning suite_test.go, the "(ephemeral volume)" cases).
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

/* A StorageClass; `zones` (comma-separated) become one allowedTopologies
 * term, "" for none. */
HELPER void storage_class(const char *name, const char *mode, const char *zones)
{
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\nprovisioner: ebs.csi.aws.com\n"
        "volumeBindingMode: %s%s",
        name, mode,
        *zones ? frag("\nallowedTopologies: [{matchLabelExpressions: [{key: " ZONE ", values: [%s]}]}]", zones) : "");
}

/* A PersistentVolume whose node affinity is `terms` (flow-style nodeSelectorTerms). */
HELPER void pv(const char *name, const char *terms)
{
    add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\n"
        "spec: {capacity: {storage: 10Gi}, csi: {driver: ebs.csi.aws.com, volumeHandle: %s}, "
        "nodeAffinity: {required: {nodeSelectorTerms: [%s]}}}",
        name, name, terms);
}

HELPER const char *zone_term(const char *zones)
{
    return frag("{matchExpressions: [{key: " ZONE ", operator: In, values: [%s]}]}", zones);
}

/* A claim: `class` NULL leaves storageClassName out; `volume` NULL leaves it
 * unbound. A bound one carries the annotation the binder sets. */
HELPER void pvc(const char *name, const char *class, const char *volume)
{
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default%s}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}%s%s}%s",
        name, volume ? ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}" : "",
        class ? frag(", storageClassName: '%s'", class) : "", volume ? frag(", volumeName: %s", volume) : "",
        volume ? "\nstatus: {phase: Bound}" : "");
}

/* ", volumes: [...]" mounting the named claims. */
HELPER const char *claims(const char *a, const char *b)
{
    if (!b)
        return frag(", volumes: [{name: v0, persistentVolumeClaim: {claimName: %s}}]", a);
    return frag(", volumes: [{name: v0, persistentVolumeClaim: {claimName: %s}}, "
                "{name: v1, persistentVolumeClaim: {claimName: %s}}]",
                a, b);
}

HELPER void expect_reason(const char *p, const char *needle)
{
    const char *why = kp_scenario_error_of(&sc, p);
    cr_assert_not_null(why, "%s was scheduled", p);
    cr_expect(strstr(why, needle), "%s: reason \"%s\" lacks \"%s\"", p, why, needle);
}

/* ", volumes: [...]": one generic ephemeral volume named "scratch". */
static const char *ephemeral(const char *class)
{
    return frag(", volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], "
                "storageClassName: %s, resources: {requests: {storage: 1Gi}}}}}}]",
                class);
}

/* A StatefulSet with one volumeClaimTemplate "data" of `class`. Its pod
 * template also mounts an emptyDir: with no volume of its own the
 * expansion trips UBSan (see test_solver_volume_bugs.c). */
static void statefulset(const char *name, int replicas, const char *class, const char *extra)
{
    add("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: %s}\nspec:\n  replicas: %d\n"
        "  serviceName: %s\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n"
        "    spec: {containers: [{name: c, resources: {requests: {cpu: '0'}}}], volumes: [{name: tmp, emptyDir: {}}]%s}\n"
        "  volumeClaimTemplates: [{metadata: {name: data}, spec: {storageClassName: %s, accessModes: "
        "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]",
        name, replicas, name, name, name, extra, class);
}

TestSuite(volume_templates, .init = setup, .fini = teardown);

/* ---------- generic ephemeral volumes ---------- */

/* The claim does not exist yet. Karpenter waits until the ephemeral-volume
 * controller has made it (volumeutil.GetPersistentVolumeClaim fails until
 * then); we plan with the template's class at once, because offline
 * manifests never contain those claims and the claim the controller will
 * create is exactly the template. */
Test(volume_templates, ephemeral_volume_without_its_claim_uses_the_template_class)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pod("p", "", "0",
        frag("%s, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
             "[{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1, test-zone-3]}]}]}}}",
             ephemeral("gp3")));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(launch_zone(0), "test-zone-3");
}

Test(volume_templates, ephemeral_volume_class_in_other_zones_is_unschedulable)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pod("p", "", "0", frag(", nodeSelector: {" ZONE ": test-zone-1}%s", ephemeral("gp3")));
    solve(FAKE_CATALOG);
    expect_pending("p");
}

/* Its claim exists and is bound: the volume's zone decides. */
Test(volume_templates, ephemeral_volume_with_a_bound_claim_follows_the_volume)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pv("vol", zone_term("test-zone-3"));
    pvc("p-scratch", "gp3", "vol");
    pod("p", "", "0", ephemeral("gp3"));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
}

Test(volume_templates, ephemeral_volume_bound_in_another_zone_is_unschedulable)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pv("vol", zone_term("test-zone-3"));
    pvc("p-scratch", "gp3", "vol");
    pod("p", "", "0", frag(", nodeSelector: {" ZONE ": test-zone-1}%s", ephemeral("gp3")));
    solve(FAKE_CATALOG);
    expect_pending("p");
}

/* The claim of another pod's volume is not this pod's. */
Test(volume_templates, ephemeral_claim_is_matched_by_pod_and_volume_name)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "");
    pv("vol", zone_term("test-zone-3"));
    pvc("other-scratch", "gp3", "vol");
    pod("p", "", "0", frag(", nodeSelector: {" ZONE ": test-zone-1}%s", ephemeral("gp3")));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(launch_zone(0), "test-zone-1");
}

Test(volume_templates, ephemeral_volume_with_a_missing_class_is_unschedulable)
{
    nodepool("default", "");
    pod("p", "", "0", ephemeral("nowhere"));
    solve(FAKE_CATALOG);
    expect_reason("p", "storageclass \"nowhere\" not found");
}

/* ---------- StatefulSet volumeClaimTemplates ---------- */

Test(volume_templates, statefulset_claims_are_created_and_follow_the_class)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2");
    statefulset("db", 3, "gp3", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_manifests_counts(sc.manifests).pvcs, 3);
    cr_expect_eq(sc.plan->n_scheduled, 3);
    for (uint32_t c = 0; c < sc.plan->n_claims; c++)
        cr_expect_str_eq(zone_req((int)c), "In [test-zone-2]");
}

/* db-0's claim already exists and is bound in zone 3; db-1's is created from the template. */
Test(volume_templates, statefulset_keeps_an_existing_claim)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2");
    pv("vol-0", zone_term("test-zone-3"));
    pvc("data-db-0", "gp3", "vol-0");
    statefulset("db", 2, "gp3", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_manifests_counts(sc.manifests).pvcs, 2);
    cr_expect_str_eq(zone_of("db-0"), "In [test-zone-3]");
    cr_expect_str_eq(zone_of("db-1"), "In [test-zone-2]");
}

Test(volume_templates, statefulset_with_a_missing_class_is_unschedulable)
{
    nodepool("default", "");
    statefulset("db", 2, "nowhere", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 0);
    expect_reason("db-0", "storageclass \"nowhere\" not found");
    expect_reason("db-1", "storageclass \"nowhere\" not found");
}

/* One replica per host, each with its own claim in a zone the class allows. */
Test(volume_templates, statefulset_with_anti_affinity_and_class_zones)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-1, test-zone-2");
    statefulset("db", 3, "gp3", required("podAntiAffinity", HOST, "app: db"));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 3);
    cr_expect_eq(sc.plan->n_claims, 3);
    for (uint32_t c = 0; c < sc.plan->n_claims; c++) {
        const char *z = launch_zone((int)c);
        cr_expect(strcmp(z, "test-zone-1") == 0 || strcmp(z, "test-zone-2") == 0, "claim %u in %s", c, z);
    }
}
