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

/* ---------- building scenarios (each solver test file has its own copy) ---------- */

#define HELPER static __attribute__((unused))

static kp_buf yaml;
static kp_arena *arena;
static kp_scenario sc;

static void setup(void)
{
    kp_buf_init(&yaml, 1 << 20);
    arena = kp_arena_new();
    memset(&sc, 0, sizeof(sc));
}

static void teardown(void)
{
    kp_scenario_free(&sc);
    kp_arena_free(arena);
    kp_buf_free(&yaml);
}

/* Append one YAML document. */
HELPER void __attribute__((format(printf, 1, 2))) add(const char *fmt, ...)
{
    va_list ap;
    if (yaml.len)
        kp_buf_puts(&yaml, "---\n");
    va_start(ap, fmt);
    kp_buf_vprintf(&yaml, fmt, ap);
    va_end(ap);
    kp_buf_putc(&yaml, '\n');
}

/* A YAML fragment that lives until the test ends. */
HELPER const char *__attribute__((format(printf, 1, 2))) frag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *s = kp_arena_vprintf(arena, fmt, ap);
    va_end(ap);
    return s;
}

/* A NodePool; `spec` holds more template spec fields, each starting with ", ". */
HELPER void nodepool_with(const char *name, const char *requirements, const char *spec)
{
    add("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n  template:\n"
        "    spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "requirements: [%s]%s}",
        name, requirements, spec);
}

HELPER void weighted_nodepool(const char *name, int weight, const char *requirements, const char *spec)
{
    add("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n  weight: %d\n  template:\n"
        "    spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "requirements: [%s]%s}",
        name, weight, requirements, spec);
}

HELPER void nodepool(const char *name, const char *requirements)
{
    nodepool_with(name, requirements, "");
}

/* A pod: "name" or "namespace/name"; `labels` and `extra` (more spec fields,
 * each starting with ", ") in flow style. */
HELPER void pod(const char *id, const char *labels, const char *cpu, const char *extra)
{
    const char *slash = strchr(id, '/');
    const char *ns = slash ? frag("%.*s", (int)(slash - id), id) : "default";
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {%s}}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '%s'}}}]%s}",
        slash ? slash + 1 : id, ns, labels, cpu, extra);
}

/* `replicas` pods NAME-0 .. NAME-(n-1). */
HELPER void deployment(const char *name, int replicas, const char *labels, const char *cpu, const char *extra)
{
    add("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  replicas: %d\n"
        "  selector: {matchLabels: {%s}}\n  template:\n    metadata: {labels: {%s}}\n"
        "    spec: {containers: [{name: c, resources: {requests: {cpu: '%s'}}}]%s}",
        name, replicas, labels, labels, cpu, extra);
}

/* A node not managed by Karpenter, in `zone`, with `cpu` cores and `pods` slots. */
HELPER void node(const char *name, const char *zone, const char *cpu, int pods)
{
    add("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s, "
        "topology.kubernetes.io/zone: %s, kubernetes.io/arch: amd64, kubernetes.io/os: linux}}\n"
        "status: {capacity: {cpu: '%s', memory: 16Gi, pods: '%d'}}",
        name, name, zone, cpu, pods);
}

/* One required (anti-)affinity term: kind is podAffinity or podAntiAffinity. */
HELPER const char *required(const char *kind, const char *key, const char *selector)
{
    return frag(", affinity: {%s: {requiredDuringSchedulingIgnoredDuringExecution: "
                "[{labelSelector: {matchLabels: {%s}}, topologyKey: %s}]}}",
                kind, selector, key);
}

/* One preferred (anti-)affinity term. */
HELPER const char *preferred(const char *kind, int weight, const char *key, const char *selector)
{
    return frag(", affinity: {%s: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: %d, "
                "podAffinityTerm: {labelSelector: {matchLabels: {%s}}, topologyKey: %s}}]}}",
                kind, weight, selector, key);
}

/* A DoNotSchedule spread constraint, maxSkew 1. */
HELPER const char *spread(const char *key, const char *selector)
{
    return frag(", topologySpreadConstraints: [{maxSkew: 1, topologyKey: %s, whenUnsatisfiable: DoNotSchedule, "
                "labelSelector: {matchLabels: {%s}}}]",
                key, selector);
}

/* Set KP_DUMP=1 to print each plan while debugging a scenario. */
HELPER void solve_with(const char *catalog, const kp_solve_opts *opts)
{
    int err = kp_scenario_run(&sc, kp_buf_cstr(&yaml), catalog, opts);
    cr_assert_eq(err, 0, "scenario failed: %s", kp_error_last());
    if (getenv("KP_DUMP")) {
        char *text = cJSON_Print(sc.json);
        fprintf(stderr, "%s\n", text);
        free(text);
    }
}

HELPER void solve(const char *catalog)
{
    solve_with(catalog, NULL);
}

HELPER void expect_scheduled(const char *p)
{
    cr_expect(kp_scenario_claim_of(&sc, p) >= 0 || kp_scenario_node_of(&sc, p) != NULL,
              "%s not scheduled: %s", p, kp_scenario_error_of(&sc, p) ? kp_scenario_error_of(&sc, p) : "?");
}

HELPER void expect_pending(const char *p)
{
    cr_expect(kp_scenario_claim_of(&sc, p) < 0 && kp_scenario_node_of(&sc, p) == NULL, "%s was scheduled", p);
    cr_expect_not_null(kp_scenario_error_of(&sc, p), "%s has no reason", p);
}

/* Where a pod went, as one string: "claim:N", "node:NAME" or "pending". */
HELPER const char *place(const char *p)
{
    int c = kp_scenario_claim_of(&sc, p);
    if (c >= 0)
        return frag("claim:%d", c);
    const char *n = kp_scenario_node_of(&sc, p);
    return n ? frag("node:%s", n) : "pending";
}

HELPER const char *zone_req(int claim)
{
    return kp_scenario_claim_req(&sc, claim, "topology.kubernetes.io/zone");
}

/* The zone the NodeClaim launches in (its cheapest offering's), the label its node gets. */
HELPER const char *launch_zone(int claim)
{
    if (claim < 0 || (uint32_t)claim >= sc.plan->n_claims || sc.plan->claims[claim].zone == KP_SYM_NONE)
        return NULL;
    return kp_sym_str(sc.snap->symtab, sc.plan->claims[claim].zone);
}

/* The zone requirement of the pod's NodeClaim ("In [z]"), or the zone label
 * of its node ("node z"), or NULL. */
HELPER const char *zone_of(const char *p)
{
    int c = kp_scenario_claim_of(&sc, p);
    if (c >= 0)
        return zone_req(c);
    const char *n = kp_scenario_node_of(&sc, p);
    if (!n)
        return NULL;
    for (uint32_t i = 0; i < sc.snap->n_nodes; i++) {
        if (strcmp(sc.snap->nodes[i].name, n) != 0)
            continue;
        kp_sym key = kp_sym_lookup(sc.snap->symtab, "topology.kubernetes.io/zone");
        kp_sym z = key ? kp_symlabels_get(&sc.snap->nodes[i].labels, key) : KP_SYM_NONE;
        return z != KP_SYM_NONE ? frag("node %s", kp_sym_str(sc.snap->symtab, z)) : NULL;
    }
    return NULL;
}

/* Karpenter's fake cloud provider: every type has 5 pod slots and offerings
 * spot in zones 1-2, on-demand in zones 1-3. */
#define OFFERS(price)                                                                                          \
    "[{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":" price "},"                               \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"spot\",\"price\":" price "},"                                \
    "{\"zone\":\"test-zone-1\",\"capacityType\":\"on-demand\",\"price\":" price "},"                           \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"on-demand\",\"price\":" price "},"                           \
    "{\"zone\":\"test-zone-3\",\"capacityType\":\"on-demand\",\"price\":" price "}]"
#define FAKE_CATALOG                                                                                           \
    "json:[{\"name\":\"small-instance-type\",\"capacity\":{\"cpu\":\"2\",\"memory\":\"2Gi\",\"pods\":\"5\"},"  \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"offerings\":" OFFERS("0.41") "},"                          \
    "{\"name\":\"default-instance-type\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"5\"},"       \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"offerings\":" OFFERS("0.83") "},"                          \
    "{\"name\":\"arm-instance-type\",\"capacity\":{\"cpu\":\"16\",\"memory\":\"128Gi\",\"pods\":\"5\"},"        \
    "\"labels\":{\"kubernetes.io/arch\":\"arm64\"},\"offerings\":" OFFERS("15.3") "}]"

#define HOST "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"
#define ARCH "kubernetes.io/arch"

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
