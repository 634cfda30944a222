/*
 * The cluster-state pass (controller/state_metrics.c, node_metrics.c,
 * pod_metrics.c) over real informer caches: Karpenter's node gauges with
 * the node labels, pods counted as the resource "pods", DaemonSet requests
 * apart, system overhead, cluster utilization, pod state, and series that go
 * when their objects go.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/state_metrics.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(metrics_state, .init = setup, .fini = teardown, .timeout = 60);

static void put_node(void)
{
    harness_put(&h, KP_CK_NODE, "/api/v1/nodes", "n1",
                "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":"
                "\"2025-12-31T23:00:00Z\",\"labels\":{\"karpenter.sh/nodepool\":\"default\",\"kubernetes.io/arch\":"
                "\"amd64\",\"karpenter.sh/capacity-type\":\"spot\",\"node.kubernetes.io/instance-type\":\"m5.large\","
                "\"topology.kubernetes.io/zone\":\"zone-a\",\"karpenter.k8s.aws/instance-family\":\"m5\"}},"
                "\"spec\":{\"providerID\":\"fake://n1\"},\"status\":{\"phase\":\"Running\",\"capacity\":{\"cpu\":"
                "\"2\",\"memory\":\"8Gi\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"1900m\",\"memory\":\"7Gi\","
                "\"pods\":\"110\"}}}");
}

static void put_pod(const char *name, const char *node, const char *cpu, bool daemon)
{
    char json[2048], key[128];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
             "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
             "\"kind\":\"%s\",\"name\":\"owner\",\"uid\":\"u\",\"controller\":true}]},\"spec\":{%s%s%s\"containers\":"
             "[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]},\"status\":{"
             "\"phase\":\"%s\"}}",
             name, daemon ? "DaemonSet" : "ReplicaSet", node ? "\"nodeName\":\"" : "", node ? node : "",
             node ? "\"," : "", cpu, node ? "Running" : "Pending");
    snprintf(key, sizeof(key), "ns/%s", name);
    harness_put(&h, KP_CK_POD, "/api/v1/namespaces/ns/pods", key, json);
}

static char *scrape(void)
{
    kp_buf out = KP_BUF_INIT(1 << 22);
    cr_assert_eq(kp_metrics_write(h.c.metrics, &out), 0);
    return kp_buf_detach(&out);
}

/* The value of the one sample of `family` whose labels include every
 * `key="value"` given (NULL-terminated); NAN when none, -1 when several. */
static double sample(const char *text, const char *family, ...)
{
    double found = NAN;
    int n = 0;
    char prefix[160];
    snprintf(prefix, sizeof(prefix), "\n%s{", family);
    for (const char *p = strstr(text, prefix); p; p = strstr(p + 1, prefix)) {
        const char *eol = strchr(p + 1, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p + 1, len - 1);
        bool all = true;
        va_list ap;
        va_start(ap, family);
        for (const char *want; all && (want = va_arg(ap, const char *)) != NULL;)
            all = strstr(line, want) != NULL;
        va_end(ap);
        if (all)
            n++, found = strtod(strrchr(line, ' ') + 1, NULL);
        free(line);
    }
    return n > 1 ? -1 : found;
}

Test(metrics_state, node_gauges_with_karpenters_labels)
{
    put_node();
    harness_put(&h, KP_CK_NODECLAIM, "/apis/karpenter.sh/v1/nodeclaims", "c1",
                "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"c1\","
                "\"labels\":{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"nodeClassRef\":{\"group\":"
                "\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},\"status\":{\"providerID\":"
                "\"fake://n1\",\"nodeName\":\"n1\"}}");
    put_pod("web", "n1", "500m", false);
    put_pod("agent", "n1", "100m", true);
    put_pod("waiting", NULL, "1", false);
    cr_assert_eq(kp_state_metrics_pass(&h.c, NULL), 0);
    char *t = scrape();
    const char *n1 = "node_name=\"n1\"";
    cr_expect_float_eq(sample(t, "karpenter_nodes_allocatable", n1, "resource_type=\"cpu\"", "arch=\"amd64\"",
                              "capacity_type=\"spot\"", "instance_family=\"m5\"", "managed=\"true\"", NULL),
                       1.9, 1e-9, "%.300s", strstr(t, "\nkarpenter_nodes_allocatable{") ? strstr(t, "\nkarpenter_nodes_allocatable{") : "none");
    cr_expect_eq(sample(t, "karpenter_nodes_allocatable", n1, "resource_type=\"memory\"", NULL), 7516192768.0);
    cr_expect_float_eq(sample(t, "karpenter_nodes_total_pod_requests", n1, "resource_type=\"cpu\"", NULL), 0.6, 1e-9);
    cr_expect_eq(sample(t, "karpenter_nodes_total_pod_requests", n1, "resource_type=\"pods\"", NULL), 2,
                 "pods count as the resource \"pods\"");
    cr_expect_float_eq(sample(t, "karpenter_nodes_total_daemon_requests", n1, "resource_type=\"cpu\"", NULL), 0.1,
                       1e-9);
    cr_expect_eq(sample(t, "karpenter_nodes_total_daemon_requests", n1, "resource_type=\"pods\"", NULL), 1);
    cr_expect_float_eq(sample(t, "karpenter_nodes_system_overhead", n1, "resource_type=\"cpu\"", NULL), 0.1, 1e-9);
    cr_expect_eq(sample(t, "karpenter_nodes_system_overhead", n1, "resource_type=\"memory\"", NULL), 1073741824.0);
    cr_expect_float_eq(sample(t, "karpenter_nodes_current_lifetime_seconds", n1, NULL), 3600, 1e-6);
    cr_expect_float_eq(sample(t, "karpenter_cluster_utilization_percent", "resource_type=\"cpu\"", NULL),
                       100 * 0.6 / 1.9, 1e-9);
    cr_expect(strstr(t, "\nkarpenter_cluster_state_node_count 1\n"), "one node (its claim has one)");
    cr_expect_eq(sample(t, "karpenter_pods_state", "name=\"web\"", "node=\"n1\"", "scheduled=\"true\"",
                        "nodepool=\"default\"", "capacity_type=\"spot\"", "zone=\"zone-a\"", "phase=\"Running\"",
                        "managed=\"true\"", "owner=\"/apis/apps/v1/namespaces/ns/replicasets/owner\"", NULL),
                 1);
    cr_expect_eq(sample(t, "karpenter_pods_state", "name=\"waiting\"", "scheduled=\"false\"", "phase=\"Pending\"",
                        NULL),
                 1);
    cr_expect_float_eq(sample(t, "karpenter_pods_unbound_time_seconds", "name=\"waiting\"", NULL), 0, 1e9,
                       "a pending pod's wait is shown");
    cr_expect(isnan(sample(t, "karpenter_pods_unbound_time_seconds", "name=\"web\"", NULL)), "a bound pod has none");
    free(t);

    /* The node goes: its series go with it on the next pass. */
    cr_assert(fake_api_remove(h.fa, "/api/v1/nodes/n1"));
    cr_assert(harness_wait(&h, KP_CK_NODE, "n1", false));
    cr_assert_eq(kp_state_metrics_pass(&h.c, NULL), 0);
    t = scrape();
    cr_expect(isnan(sample(t, "karpenter_nodes_allocatable", n1, "resource_type=\"cpu\"", NULL)), "the node's series went");
    cr_expect(strstr(t, "\nkarpenter_cluster_state_node_count 0\n"));
    free(t);
}

/* A pod's series (karpenter_pods_state, its waiting times) go when the pod
 * goes: a cluster that ran 20,000 pods through must not keep a series each. */
Test(metrics_state, a_deleted_pods_series_go_on_the_next_pass)
{
    put_node();
    put_pod("web", "n1", "500m", false);
    put_pod("waiting", NULL, "1", false);
    cr_assert_eq(kp_state_metrics_pass(&h.c, NULL), 0);
    char *t = scrape();
    cr_expect_eq(sample(t, "karpenter_pods_state", "name=\"web\"", NULL), 1);
    cr_expect_eq(sample(t, "karpenter_pods_state", "name=\"waiting\"", NULL), 1);
    cr_expect(!isnan(sample(t, "karpenter_pods_unbound_time_seconds", "name=\"waiting\"", NULL)));
    free(t);
    size_t before = kp_metric_series_count(h.c.m->pods_state);

    cr_assert(fake_api_remove(h.fa, "/api/v1/namespaces/ns/pods/web"));
    cr_assert(fake_api_remove(h.fa, "/api/v1/namespaces/ns/pods/waiting"));
    cr_assert(harness_wait(&h, KP_CK_POD, "ns/web", false));
    cr_assert(harness_wait(&h, KP_CK_POD, "ns/waiting", false));
    cr_assert_eq(kp_state_metrics_pass(&h.c, NULL), 0);
    t = scrape();
    cr_expect(isnan(sample(t, "karpenter_pods_state", "name=\"web\"", NULL)), "the bound pod's series went");
    cr_expect(isnan(sample(t, "karpenter_pods_state", "name=\"waiting\"", NULL)), "the pending pod's series went");
    cr_expect(isnan(sample(t, "karpenter_pods_unbound_time_seconds", "name=\"waiting\"", NULL)),
              "its waiting time went too");
    cr_expect_eq(kp_metric_series_count(h.c.m->pods_state), before - 2);
    free(t);
}
