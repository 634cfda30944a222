/*
 * Solver scenarios: host ports. On a node each (hostIP, hostPort, protocol)
 * is taken at most once, an unset or 0.0.0.0 address overlapping every
 * address; pods that want a taken port go to another node, and a
 * DaemonSet's ports are taken on every node it will run on (Karpenter's
 * scheduling suite_test.go and pkg/scheduling/hostportusage.go).
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

/* A pod with one container exposing `port` (a flow-style containerPort entry). */
static void port_pod(const char *name, const char *cpu, const char *port, const char *extra)
{
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '%s'}}, ports: [%s]}]%s}",
        name, cpu, port, extra);
}

static void port_daemonset(const char *name, const char *port, const char *extra)
{
    add("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: %s}\nspec:\n  selector: {matchLabels: {app: %s}}\n"
        "  template:\n    metadata: {labels: {app: %s}}\n"
        "    spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}, ports: [%s]}]%s}",
        name, name, name, port, extra);
}

TestSuite(host_ports, .init = setup, .fini = teardown);

typedef struct port_case {
    const char *a, *b;
    bool conflict;
} port_case;

Test(host_ports, which_ports_conflict)
{
    static const port_case cases[] = {
        {"{containerPort: 80, hostPort: 8080}", "{containerPort: 80, hostPort: 8080}", true},
        {"{containerPort: 80, hostPort: 8080}", "{containerPort: 80, hostPort: 8081}", false},
        {"{containerPort: 80, hostPort: 8080, protocol: TCP}", "{containerPort: 80, hostPort: 8080, protocol: UDP}",
         false},
        {"{containerPort: 80, hostPort: 8080, protocol: UDP}", "{containerPort: 81, hostPort: 8080, protocol: UDP}",
         true},
        {"{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}", "{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.2}",
         false},
        {"{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}", "{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}",
         true},
        {"{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}", "{containerPort: 80, hostPort: 8080}", true},
        {"{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.1}", "{containerPort: 80, hostPort: 8080, hostIP: 0.0.0.0}",
         true},
        /* a container port without a host port takes nothing on the node */
        {"{containerPort: 8080}", "{containerPort: 8080}", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown();
        setup();
        nodepool("default", "");
        port_pod("a", "0", cases[i].a, "");
        port_pod("b", "0", cases[i].b, "");
        solve(FAKE_CATALOG);
        expect_scheduled("a");
        expect_scheduled("b");
        cr_expect_eq(sc.plan->n_claims, cases[i].conflict ? 2 : 1, "case %zu", i);
        cr_expect_eq(strcmp(place("a"), place("b")) != 0, cases[i].conflict, "case %zu", i);
    }
}

Test(host_ports, replicas_with_one_host_port_get_a_node_each)
{
    nodepool("default", "");
    deployment("web", 4, "app: web", "0", "");
    add("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: lb}\nspec:\n  replicas: 3\n"
        "  selector: {matchLabels: {app: lb}}\n  template:\n    metadata: {labels: {app: lb}}\n"
        "    spec: {containers: [{name: c, ports: [{containerPort: 443, hostPort: 443}]}]}");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_scheduled, 7);
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            cr_expect_str_neq(place(frag("lb-%d", i)), place(frag("lb-%d", j)));
}

/* Init containers do not hold host ports while the pod runs. */
Test(host_ports, init_container_ports_are_not_held)
{
    nodepool("default", "");
    port_pod("a", "0", "{containerPort: 80, hostPort: 8080}", "");
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {initContainers: [{name: i, ports: [{containerPort: 80, "
        "hostPort: 8080}]}], containers: [{name: c}]}");
    solve(FAKE_CATALOG);
    cr_expect_eq(sc.plan->n_claims, 1);
    cr_expect_str_eq(place("a"), place("b"));
}

/* ---------- existing nodes ---------- */

Test(host_ports, port_taken_on_an_existing_node)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    port_pod("running", "1", "{containerPort: 80, hostPort: 8080}", ", nodeName: n1");
    port_pod("same", "1", "{containerPort: 80, hostPort: 8080}", "");
    port_pod("other", "1", "{containerPort: 80, hostPort: 9090}", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_scenario_claim_of(&sc, "same"), 0, "same went to %s", place("same"));
    cr_expect_str_eq(place("other"), "node:n1");
}

/* A pod that finished no longer holds its port. */
Test(host_ports, finished_pods_release_their_ports)
{
    nodepool("default", "");
    node("n1", "test-zone-1", "8", 20);
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: done}\nspec: {nodeName: n1, containers: [{name: c, ports: "
        "[{containerPort: 80, hostPort: 8080}]}]}\nstatus: {phase: Succeeded}");
    port_pod("p", "1", "{containerPort: 80, hostPort: 8080}", "");
    solve(FAKE_CATALOG);
    cr_expect_str_eq(place("p"), "node:n1");
}

/* ---------- DaemonSets ---------- */

/* The daemon runs on every node this NodePool launches, so its port is
 * never free there. */
Test(host_ports, daemonset_port_blocks_pods_wanting_it)
{
    nodepool("default", "");
    port_daemonset("agent", "{containerPort: 9100, hostPort: 9100}", "");
    port_pod("wants", "0", "{containerPort: 9100, hostPort: 9100}", "");
    port_pod("other", "0", "{containerPort: 80, hostPort: 8080}", "");
    solve(FAKE_CATALOG);
    expect_pending("wants");
    expect_scheduled("other");
}

/* A daemon that only runs on arm64 nodes leaves amd64 ones free: the
 * claim keeps only the instance types the daemon skips. */
Test(host_ports, daemonset_port_only_where_the_daemon_runs)
{
    nodepool("default", "");
    port_daemonset("agent", "{containerPort: 9100, hostPort: 9100}", ", nodeSelector: {" ARCH ": arm64}");
    port_pod("wants", "0", "{containerPort: 9100, hostPort: 9100}", "");
    solve(FAKE_CATALOG);
    cr_assert_eq(kp_scenario_claim_of(&sc, "wants"), 0, "%s", kp_scenario_error_of(&sc, "wants"));
    cr_assert_gt(sc.plan->claims[0].n_its, 0);
    for (uint32_t t = 0; t < sc.plan->claims[0].n_its; t++)
        cr_expect_str_neq(kp_sym_str(sc.snap->symtab, sc.snap->its[sc.plan->claims[0].its[t]].name),
                          "arm-instance-type");
}

Test(host_ports, daemonset_pod_on_an_existing_node_holds_its_port)
{
    nodepool("default", "");
    port_daemonset("agent", "{containerPort: 9100, hostPort: 9100}", ", nodeSelector: {" ARCH ": arm64}");
    node("n1", "test-zone-1", "8", 20);
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: agent-n1, labels: {app: agent}, ownerReferences: [{apiVersion: "
        "apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]}\nspec: {nodeName: n1, containers: "
        "[{name: c, resources: {requests: {cpu: 100m}}, ports: [{containerPort: 9100, hostPort: 9100}]}]}");
    port_pod("wants", "1", "{containerPort: 9100, hostPort: 9100}", "");
    port_pod("free", "1", "{containerPort: 80, hostPort: 8080}", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_scenario_claim_of(&sc, "wants"), 0, "wants went to %s", place("wants"));
    cr_expect_str_eq(place("free"), "node:n1");
}
