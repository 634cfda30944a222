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
