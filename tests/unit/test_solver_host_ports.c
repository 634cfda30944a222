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

#include "solver_cases.h"

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

/* The daemon's pod carries the template's nodeSelector, as the DaemonSet
 * controller writes it: Karpenter sizes a DaemonSet by its newest pod. */
Test(host_ports, daemonset_pod_on_an_existing_node_holds_its_port)
{
    nodepool("default", "");
    port_daemonset("agent", "{containerPort: 9100, hostPort: 9100}", ", nodeSelector: {" ARCH ": arm64}");
    node("n1", "test-zone-1", "8", 20);
    add("apiVersion: v1\nkind: Pod\nmetadata: {name: agent-n1, labels: {app: agent}, ownerReferences: [{apiVersion: "
        "apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]}\nspec: {nodeName: n1, nodeSelector: {" ARCH
        ": arm64}, containers: "
        "[{name: c, resources: {requests: {cpu: 100m}}, ports: [{containerPort: 9100, hostPort: 9100}]}]}");
    port_pod("wants", "1", "{containerPort: 9100, hostPort: 9100}", "");
    port_pod("free", "1", "{containerPort: 80, hostPort: 8080}", "");
    solve(FAKE_CATALOG);
    cr_expect_eq(kp_scenario_claim_of(&sc, "wants"), 0, "wants went to %s", place("wants"));
    cr_expect_str_eq(place("free"), "node:n1");
}
