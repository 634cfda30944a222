/*
 * Solver scenarios: volume topology. A bound claim's PersistentVolume node
 * affinity and an unbound claim's WaitForFirstConsumer StorageClass
 * allowedTopologies limit where the pod may go (ORed terms are
 * alternatives; several volumes intersect); claims the scheduler would
 * refuse make the pod unschedulable with a reason naming the object
 * (Karpenter's provisioning suite_test.go "Volume Topology Requirements" and
 * scheduling suite_test.go "VolumeUsage").
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
static void storage_class(const char *name, const char *mode, const char *zones)
{
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\nprovisioner: ebs.csi.aws.com\n"
        "volumeBindingMode: %s%s",
        name, mode,
        *zones ? frag("\nallowedTopologies: [{matchLabelExpressions: [{key: " ZONE ", values: [%s]}]}]", zones) : "");
}

/* A PersistentVolume whose node affinity is `terms` (flow-style nodeSelectorTerms). */
static void pv(const char *name, const char *terms)
{
    add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\n"
        "spec: {capacity: {storage: 10Gi}, csi: {driver: ebs.csi.aws.com, volumeHandle: %s}, "
        "nodeAffinity: {required: {nodeSelectorTerms: [%s]}}}",
        name, name, terms);
}

static const char *zone_term(const char *zones)
{
    return frag("{matchExpressions: [{key: " ZONE ", operator: In, values: [%s]}]}", zones);
}

/* A claim: `class` NULL leaves storageClassName out; `volume` NULL leaves it
 * unbound. A bound one carries the annotation the binder sets. */
static void pvc(const char *name, const char *class, const char *volume)
{
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default%s}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}%s%s}%s",
        name, volume ? ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}" : "",
        class ? frag(", storageClassName: '%s'", class) : "", volume ? frag(", volumeName: %s", volume) : "",
        volume ? "\nstatus: {phase: Bound}" : "");
}

/* ", volumes: [...]" mounting the named claims. */
static const char *claims(const char *a, const char *b)
{
    if (!b)
        return frag(", volumes: [{name: v0, persistentVolumeClaim: {claimName: %s}}]", a);
    return frag(", volumes: [{name: v0, persistentVolumeClaim: {claimName: %s}}, "
                "{name: v1, persistentVolumeClaim: {claimName: %s}}]",
                a, b);
}

static void expect_reason(const char *p, const char *needle)
{
    const char *why = kp_scenario_error_of(&sc, p);
    cr_assert_not_null(why, "%s was scheduled", p);
    cr_expect(strstr(why, needle), "%s: reason \"%s\" lacks \"%s\"", p, why, needle);
}

TestSuite(volume_topology, .init = setup, .fini = teardown);

/* ---------- bound claims ---------- */

Test(volume_topology, bound_claim_pins_the_volumes_zone)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pv("vol", zone_term("test-zone-3"));
    pvc("data", "gp3", "vol");
    pod("p", "", "0", claims("data", NULL));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
}

Test(volume_topology, bound_claim_in_a_zone_the_pod_refuses_is_unschedulable)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pv("vol", zone_term("test-zone-3"));
    pvc("data", "gp3", "vol");
    pod("p", "", "0", frag(", nodeSelector: {" ZONE ": test-zone-1}%s", claims("data", NULL)));
    solve(FAKE_CATALOG);
    expect_pending("p");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* An existing node with room in the wrong zone is passed over; one in the right zone is used. */
Test(volume_topology, bound_claim_chooses_among_existing_nodes)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "4", 20);
    node("n3", "test-zone-3", "4", 20);
    pv("vol", zone_term("test-zone-3"));
    pvc("data", "", "vol");
    pod("p", "", "1", claims("data", NULL));
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), "node:n3");
}

/* A bound claim needs no StorageClass: an empty or missing class does not matter. */
Test(volume_topology, bound_claim_with_empty_or_missing_class_schedules)
{
    static const char *const classes[] = {"", "missing-storage-class"};
    for (size_t i = 0; i < 2; i++) {
        teardown();
        setup();
        nodepool("default", "");
        add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: vol}\n"
            "spec: {capacity: {storage: 10Gi}, storageClassName: '%s'}",
            classes[i]);
        pvc("data", classes[i], "vol");
        pod("p", "", "0", claims("data", NULL));
        solve(FAKE_CATALOG);
        expect_scheduled("p");
    }
}

/* A CSI volume bound to one host: only that host will do. A new node is
 * never that host; the existing node of that name is. */
Test(volume_topology, volume_bound_to_a_host_needs_that_host)
{
    static const bool host_exists[] = {false, true};
    for (size_t i = 0; i < 2; i++) {
        teardown();
        setup();
        nodepool("default", "");
        if (host_exists[i])
            node("n1", "test-zone-1", "4", 20);
        node("n2", "test-zone-1", "4", 20);
        pv("vol", "{matchExpressions: [{key: " HOST ", operator: In, values: [n1]}]}");
        pvc("data", "", "vol");
        pod("p", "", "1", claims("data", NULL));
        solve(FAKE_CATALOG);
        cr_expect_eq(sc.plan->n_claims, 0, "case %zu", i);
        if (host_exists[i])
            cr_expect_str_eq(place("p"), "node:n1");
        else
            expect_pending("p");
    }
}

/* Many pods on one claim: its zone is one constraint, not a reason to spread. */
Test(volume_topology, pods_sharing_one_claim_share_a_node)
{
    nodepool("default", "");
    pv("vol", zone_term("test-zone-1"));
    pvc("shared", "", "vol");
    deployment("web", 5, "app: web", "0", claims("shared", NULL));
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 5);
    cr_expect_eq(sc.plan->n_claims, 1);
    cr_expect_str_eq(zone_req(0), "In [test-zone-1]");
}

/* A volume whose terms are ORed lets two pods with zonal anti-affinity take
 * one alternative each. */
Test(volume_topology, volume_terms_are_alternatives)
{
    nodepool("default", "");
    const char *terms = frag("%s, %s", zone_term("test-zone-1"), zone_term("test-zone-2"));
    for (int i = 0; i < 2; i++) {
        pv(frag("multi-zone-pv-%d", i), terms);
        pvc(frag("multi-zone-pvc-%d", i), "", frag("multi-zone-pv-%d", i));
        pod(frag("pod-%d", i), "app: multi-zone", "0",
            frag("%s%s", claims(frag("multi-zone-pvc-%d", i), NULL),
                 required("podAntiAffinity", ZONE, "app: multi-zone")));
    }
    solve(FAKE_CATALOG);
    int c0 = kp_scenario_claim_of(&sc, "pod-0"), c1 = kp_scenario_claim_of(&sc, "pod-1");
    cr_assert(c0 >= 0 && c1 >= 0, "pod-0 %s, pod-1 %s", place("pod-0"), place("pod-1"));
    const char *z0 = zone_req(c0), *z1 = zone_req(c1);
    cr_assert(z0 && z1);
    cr_expect(strcmp(z0, "In [test-zone-1]") == 0 || strcmp(z0, "In [test-zone-2]") == 0, "%s", z0);
    cr_expect(strcmp(z1, "In [test-zone-1]") == 0 || strcmp(z1, "In [test-zone-2]") == 0, "%s", z1);
    cr_expect_str_neq(z0, z1);
}

/* Two volumes in different zones: no node can reach both. */
Test(volume_topology, volumes_in_different_zones_are_unschedulable)
{
    nodepool("default", "");
    pv("vol-a", zone_term("test-zone-1"));
    pv("vol-b", zone_term("test-zone-2"));
    pvc("a", "", "vol-a");
    pvc("b", "", "vol-b");
    pod("p", "", "0", claims("a", "b"));
    solve(FAKE_CATALOG);
    expect_pending("p");
    cr_expect_eq(sc.plan->n_claims, 0);
}

/* Two volumes in the same zone (one allows two zones) intersect to it. */
Test(volume_topology, volumes_intersect)
{
    nodepool("default", "");
    pv("vol-a", zone_term("test-zone-1, test-zone-2"));
    pv("vol-b", zone_term("test-zone-2, test-zone-3"));
    pvc("a", "", "vol-a");
    pvc("b", "", "vol-b");
    pod("p", "", "0", claims("a", "b"));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(launch_zone(0), "test-zone-2");
}

/* Relaxing the pod's required terms never drops the volume's zone: the
 * second term (on-demand) is used, still in the volume's zone. */
Test(volume_topology, relaxation_keeps_the_volume_zone)
{
    nodepool("default", "");
    pv("vol", zone_term("test-zone-3"));
    pvc("data", "", "vol");
    pod("p", "", "0",
        frag("%s, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
             "{matchExpressions: [{key: example.com/label, operator: In, values: [unsupported]}]}, "
             "{matchExpressions: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}]}}}",
             claims("data", NULL)));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-3]");
    cr_expect_str_eq(launch_zone(0), "test-zone-3");
}

/* The volume's zone steers the NodeClaim but does not narrow the pod's
 * domains for its spread: with one pod in each zone already and
 * minDomains 3, the pod may still go to its volume's zone. */
Test(volume_topology, volume_zone_does_not_shrink_spread_domains)
{
    nodepool("default", "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}");
    const char *tsc = ", topologySpreadConstraints: [{maxSkew: 1, minDomains: 3, topologyKey: " ZONE
                      ", whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: test}}}]";
    for (int z = 1; z <= 3; z++) {
        node(frag("n%d", z), frag("test-zone-%d", z), "1", 20);
        pod(frag("old-%d", z), "app: test", "1", frag("%s, nodeName: n%d", tsc, z));
    }
    pv("test-pv", zone_term("test-zone-1"));
    pvc("test-pvc", "", "test-pv");
    pod("p", "app: test", "1", frag("%s%s", tsc, claims("test-pvc", NULL)));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-1]");
}

/* ---------- unbound claims ---------- */

Test(volume_topology, wait_for_first_consumer_class_limits_zones)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pvc("data", "gp3", NULL);
    pod("p", "", "0",
        frag("%s, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
             "[{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1, test-zone-3]}]}]}}}",
             claims("data", NULL)));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(launch_zone(0), "test-zone-3");
}

Test(volume_topology, wait_for_first_consumer_class_in_other_zones_is_unschedulable)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "test-zone-2, test-zone-3");
    pvc("data", "gp3", NULL);
    pod("p", "", "0", frag(", nodeSelector: {" ZONE ": test-zone-1}%s", claims("data", NULL)));
    solve(FAKE_CATALOG);
    expect_pending("p");
}

/* A class without allowedTopologies lets the volume follow the pod anywhere. */
Test(volume_topology, class_without_topologies_constrains_nothing)
{
    nodepool("default", "");
    storage_class("gp3", "WaitForFirstConsumer", "");
    pvc("data", "gp3", NULL);
    pod("p", "", "0", frag(", nodeSelector: {" ZONE ": test-zone-1}%s", claims("data", NULL)));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(launch_zone(0), "test-zone-1");
}

/* allowedTopologies terms are ORed, like a volume's node-affinity terms. */
Test(volume_topology, class_topology_terms_are_alternatives)
{
    nodepool("default", "");
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: multi-zone-sc}\n"
        "provisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n"
        "- matchLabelExpressions: [{key: " ZONE ", values: [test-zone-1]}]\n"
        "- matchLabelExpressions: [{key: " ZONE ", values: [test-zone-2]}]");
    for (int i = 0; i < 2; i++) {
        pvc(frag("pvc-%d", i), "multi-zone-sc", NULL);
        pod(frag("sc-pod-%d", i), "app: sc", "0",
            frag("%s%s", claims(frag("pvc-%d", i), NULL), required("podAntiAffinity", ZONE, "app: sc")));
    }
    solve(FAKE_CATALOG);
    int c0 = kp_scenario_claim_of(&sc, "sc-pod-0"), c1 = kp_scenario_claim_of(&sc, "sc-pod-1");
    cr_assert(c0 >= 0 && c1 >= 0, "sc-pod-0 %s, sc-pod-1 %s", place("sc-pod-0"), place("sc-pod-1"));
    cr_expect_str_neq(zone_req(c0), zone_req(c1));
    cr_expect_null(strstr(zone_req(c0), "test-zone-3"));
    cr_expect_null(strstr(zone_req(c1), "test-zone-3"));
}

/* Two classes whose terms cross: only the pairs that intersect survive, and
 * of those only one has an instance type ("special" is "optional" on the
 * synthetic catalog's large types and never "required"). */
Test(volume_topology, only_intersecting_alternatives_of_two_volumes_survive)
{
    nodepool("default", "");
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc-a}\nprovisioner: ebs.csi.aws.com\n"
        "volumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n"
        "- matchLabelExpressions: [{key: special, values: [required]}]\n"
        "- matchLabelExpressions: [{key: special, values: [optional]}]");
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc-b}\nprovisioner: ebs.csi.aws.com\n"
        "volumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n"
        "- matchLabelExpressions: [{key: " ZONE ", values: [test-zone-1]}, {key: special, values: [optional]}]\n"
        "- matchLabelExpressions: [{key: " ZONE ", values: [test-zone-2]}, {key: special, values: [required]}]");
    pvc("a", "sc-a", NULL);
    pvc("b", "sc-b", NULL);
    pod("p", "", "0", claims("a", "b"));
    solve("synthetic:8");
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-1]");
    cr_expect_str_eq(kp_scenario_claim_req(&sc, 0, "special"), "In [optional]");
}

/* ---------- claims the scheduler refuses ---------- */

typedef struct refused_case {
    const char *objects; /* extra documents, "---"-separated, or "" */
    const char *claim;
    const char *reason; /* a fragment the reason must contain */
} refused_case;

Test(volume_topology, refused_claims_name_the_object)
{
    static const refused_case cases[] = {
        {"", "invalid", "persistentvolumeclaim \"invalid\" not found"},
        {"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: "
         "invalid-storage-class}",
         "data", "storageclass \"invalid-storage-class\" not found"},
        {"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: ''}", "data",
         "persistentvolumeclaim \"data\""},
        {"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, annotations: "
         "{pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {volumeName: invalid-volume-name}\nstatus: {phase: Bound}",
         "data", "persistentvolume \"invalid-volume-name\""},
        {"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: io2}\nprovisioner: ebs.csi.aws.com\n"
         "volumeBindingMode: Immediate\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
         "spec: {storageClassName: io2}",
         "data", "Immediate"},
        {"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, deletionTimestamp: "
         "'2024-01-01T00:00:00Z', finalizers: [kubernetes.io/pvc-protection]}\nspec: {storageClassName: gp3}",
         "data", "persistentvolumeclaim \"data\" is being deleted"},
        {"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: gp3, "
         "volumeName: gone}\nstatus: {phase: Lost}",
         "data", "persistentvolumeclaim \"data\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", "");
        storage_class("gp3", "WaitForFirstConsumer", "");
        if (*cases[i].objects)
            add("%s", cases[i].objects);
        pod("bad", "", "0", claims(cases[i].claim, NULL));
        pod("good", "", "0", "");
        solve(FAKE_CATALOG);
        expect_reason("bad", cases[i].reason);
        expect_scheduled("good");
    }
}

/* Immediate binding is fine once the claim is bound. */
Test(volume_topology, immediate_class_with_a_bound_claim_schedules)
{
    nodepool("default", "");
    storage_class("io2", "Immediate", "");
    pv("vol", zone_term("test-zone-2"));
    pvc("data", "io2", "vol");
    pod("p", "", "0", claims("data", NULL));
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "p"), 0, "%s", kp_scenario_error_of(&sc, "p"));
    cr_expect_str_eq(zone_req(0), "In [test-zone-2]");
}

/* Volumes without claims (emptyDir, configMap, hostPath) constrain nothing. */
Test(volume_topology, volumes_without_claims_are_ignored)
{
    nodepool("default", "");
    pod("p", "", "0",
        ", volumes: [{name: a, emptyDir: {}}, {name: b, configMap: {name: cm}}, {name: c, hostPath: {path: /x}}]");
    solve(FAKE_CATALOG);
    expect_scheduled("p");
    cr_expect_null(zone_req(0));
}
