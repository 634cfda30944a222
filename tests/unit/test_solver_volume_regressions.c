/*
 * Volume scenarios the solver once got wrong against Karpenter (StatefulSets
 * without volumes, local/hostPath volumes, deleting volumes, claims without
 * the bind-completed annotation), kept as regression tests; each comment
 * names Karpenter's rule.
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

TestSuite(volume_regressions, .init = setup, .fini = teardown);

/* A StatefulSet's pods usually have no volumes of their own (the claims
 * come from volumeClaimTemplates). The expansion copies the template's
 * volume array with memcpy even when it is NULL and empty
 * (shared/scheduling/manifests.c, stateful_volumes), which UBSan reports
 * as a null argument, aborting under our sanitizer build. */
Test(volume_regressions, statefulset_whose_pods_have_no_volumes_expands)
{
    nodepool("default", "");
    add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gp3}\nprovisioner: "
        "ebs.csi.aws.com\n"
        "volumeBindingMode: WaitForFirstConsumer\nallowedTopologies: [{matchLabelExpressions: "
        "[{key: " ZONE ", values: [test-zone-2]}]}]");
    add("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 2\n  "
        "serviceName: db\n"
        "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n"
        "    spec: {containers: [{name: c, volumeMounts: [{name: data, mountPath: /data}]}]}\n"
        "  volumeClaimTemplates: [{metadata: {name: data}, spec: {storageClassName: gp3, "
        "accessModes: "
        "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_manifests_counts(sc.manifests).pvcs, 2);
    cr_expect_eq(sc.plan->n_scheduled, 2);
    cr_expect_str_eq(zone_of("db-0"), "In [test-zone-2]");
}

/* Local and hostPath volumes are tied to the node they were made on; a pod
 * rescheduled onto a new node makes a new one, so Karpenter drops their
 * hostname requirements (volumetopology.go getPersistentVolumeRequirements;
 * suite_test.go "should ignore hostname affinity scheduling when using local
 * path volumes" and "should preserve unconstrained PV alternatives after
 * ignoring hostname affinity"). kp_pv has no field saying a PV is local or
 * hostPath (api/objects.h, decode_storage.c), so snapshot_pods.c
 * term_alternatives keeps the hostname and the pod stays pending. */
Test(volume_regressions, local_and_host_path_volumes_ignore_hostname_affinity)
{
    static const struct {
        const char *source;
        const char *terms;
    } cases[] = {
        {"local: {path: /mnt/disks/a}",
         "[{matchExpressions: [{key: " HOST ", operator: In, values: [some-old-node]}]}]"},
        {"hostPath: {path: /data}",
         "[{matchExpressions: [{key: " HOST ", operator: In, values: [some-old-node]}]}]"},
        /* a hostname-only term becomes "anywhere"; the other term could never be met */
        {"local: {path: /mnt/disks/a}",
         "[{matchExpressions: [{key: " HOST ", operator: In, values: [existing-host]}]}, "
         "{matchExpressions: [{key: " ZONE ", operator: In, values: [invalid-zone]}]}]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", "");
        add("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local-path}\n"
            "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer");
        add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: vol}\nspec: {capacity: "
            "{storage: 1Gi}, "
            "storageClassName: local-path, %s, nodeAffinity: {required: {nodeSelectorTerms: %s}}}",
            cases[i].source, cases[i].terms);
        add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, annotations: "
            "{pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {storageClassName: local-path, "
            "volumeName: vol}\n"
            "status: {phase: Bound}");
        pod("p", "", "0", ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]");
        solve(FAKE_CATALOG);
        expect_scheduled("p");
    }
}

/* A claim bound to a PersistentVolume that is being deleted cannot be
 * mounted; Karpenter refuses the pod (volumetopology.go validateVolume,
 * suite_test.go "should not launch nodes for pod with bound persistentVolume
 * that is marked for deletion"). snapshot_pods.c volume_alternatives finds
 * the PV but never looks at its deletionTimestamp. */
Test(volume_regressions, claim_bound_to_a_deleting_volume_is_unschedulable)
{
    nodepool("default", "");
    add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: vol, deletionTimestamp: "
        "'2024-01-01T00:00:00Z', "
        "finalizers: [kubernetes.io/pv-protection]}\nspec: {capacity: {storage: 1Gi}}");
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, annotations: "
        "{pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {volumeName: vol}\nstatus: {phase: "
        "Bound}");
    pod("p", "", "0", ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]");
    solve(FAKE_CATALOG);
    expect_pending("p");
    const char *why = kp_scenario_error_of(&sc, "p");
    cr_expect(why && strstr(why, "persistentvolume \"vol\""), "%s", why ? why : "(scheduled)");
}

/* kube-scheduler treats a claim with volumeName but without the binder's
 * pv.kubernetes.io/bind-completed annotation as not yet bound, and
 * Karpenter refuses such a pod (volumetopology.go
 * ValidatePersistentVolumeClaims). snapshot_pods.c volume_alternatives
 * trusts volumeName alone. (Debatable for hand-written manifests in
 * `simulate`, which rarely carry the annotation; the controller sees what
 * the API server holds.) */
Test(volume_regressions, claim_with_volume_name_but_no_bind_annotation_is_unbound)
{
    nodepool("default", "");
    add("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: vol}\nspec: {capacity: {storage: "
        "1Gi}}");
    add("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {volumeName: "
        "vol}");
    pod("p", "", "0", ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]");
    solve(FAKE_CATALOG);
    expect_pending("p");
}
