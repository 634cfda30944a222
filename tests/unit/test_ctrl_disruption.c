/* The disruption controller (controller/disruption_ctrl.c, disruption_exec.c,
 * disruption_explain.c) against the fake API server: commands in parallel
 * within budgets, the serial mode, and the reasons nodes stay. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/disruption_ctrl.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define NODES "/api/v1/nodes"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define POOLS "/apis/karpenter.sh/v1/nodepools"
#define PODS "/api/v1/namespaces/default/pods"

static harness h;
static kp_disruption_ctrl *d;

static void setup(void)
{
    harness_start(&h, T0);
    h.c.opts.consolidation_validation_ms = 0;
    d = kp_disruption_ctrl_new();
}

static void teardown(void)
{
    d = kp_disruption_ctrl_free(d);
    harness_stop(&h);
}

TestSuite(disruption_ctrl, .init = setup, .fini = teardown, .timeout = 90);

static void put_pool(const char *budget)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"default\",\"uid\":"
             "\"p1\"},\"spec\":{\"disruption\":{\"consolidateAfter\":\"Never\",\"budgets\":[{\"nodes\":\"%s\"}]},"
             "\"template\":{\"spec\":{\"requirements\":[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\","
             "\"values\":[\"on-demand\"]}],\"nodeClassRef\":{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\","
             "\"name\":\"d\"},\"expireAfter\":\"Never\"}}},\"status\":{" HARNESS_POOL_READY "}}",
             budget);
    harness_put(&h, KP_CK_NODEPOOL, POOLS, "default", json);
}

/* A launched, registered, initialized, drifted node of pool default. */
static void put_drifted(const char *name)
{
    char node[1536], claim[2048];
    const char *labels = "\"karpenter.sh/nodepool\":\"default\",\"node.kubernetes.io/instance-type\":\"m5.large\","
                         "\"topology.kubernetes.io/zone\":\"us-east-1a\",\"karpenter.sh/capacity-type\":\"on-demand\","
                         "\"karpenter.sh/registered\":\"true\",\"karpenter.sh/initialized\":\"true\","
                         "\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/os\":\"linux\"";
    snprintf(node, sizeof(node),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":"
             "{%s,\"kubernetes.io/hostname\":\"%s\"},\"creationTimestamp\":\"2025-12-01T00:00:00Z\"},\"spec\":"
             "{\"providerID\":\"fake://%s\"},\"status\":{\"capacity\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":"
             "\"29\"},\"allocatable\":{\"cpu\":\"1930m\",\"memory\":\"7Gi\",\"pods\":\"29\"},\"conditions\":"
             "[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, name, labels, name, name);
    harness_put(&h, KP_CK_NODE, NODES, name, node);
    snprintf(claim, sizeof(claim),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"c-%s\",\"labels\":{%s},\"creationTimestamp\":\"2025-12-01T00:00:00Z\"},\"spec\":{\"nodeClassRef\":"
             "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},\"status\":{\"providerID\":"
             "\"fake://%s\",\"nodeName\":\"%s\",\"conditions\":["
             "{\"type\":\"Launched\",\"status\":\"True\",\"reason\":\"x\",\"message\":\"\",\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"},"
             "{\"type\":\"Registered\",\"status\":\"True\",\"reason\":\"x\",\"message\":\"\",\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"},"
             "{\"type\":\"Initialized\",\"status\":\"True\",\"reason\":\"x\",\"message\":\"\",\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"},"
             "{\"type\":\"Drifted\",\"status\":\"True\",\"reason\":\"AMIDrift\",\"message\":\"AMIDrift\",\"lastTransitionTime\":\"2025-12-02T00:00:00Z\"}]}}",
             name, name, labels, name, name);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, claim);
}

static int tainted(void)
{
    int n = 0;
    static const char *const names[] = {"n1", "n2", "n3", "n4"};
    for (int i = 0; i < 4; i++) {
        cJSON *o = harness_get(&h, KP_CK_NODE, names[i]);
        char *text = o ? cJSON_PrintUnformatted(o) : NULL;
        n += text && strstr(text, "karpenter.sh/disrupted") != NULL;
        cJSON_free(text);
        cJSON_Delete(o);
    }
    return n;
}

static void pass(void)
{
    h.clock.ns += 11 * KP_NS_PER_SEC; /* past the poll interval: a plan every pass */
    kp_disruption_pass(&h.c, d);
    usleep(200000);
}

Test(disruption_ctrl, drifted_nodes_go_in_parallel_within_the_budget)
{
    put_pool("50%");
    put_drifted("n1"), put_drifted("n2"), put_drifted("n3"), put_drifted("n4");
    pass();
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 2, "50%% of 4 nodes: two commands at once");
    cr_expect_eq(tainted(), 2);
    char buf[32];
    int with_reason = 0;
    static const char *const claims[] = {"n1", "n2", "n3", "n4"};
    for (int i = 0; i < 4; i++) {
        const char *s = harness_condition(&h, KP_CK_NODECLAIM, claims[i], "DisruptionReason", buf, sizeof(buf));
        with_reason += s && !strcmp(s, "True");
    }
    cr_expect_eq(with_reason, 2, "the candidates' claims carry DisruptionReason");
    pass(); /* no replacements to wait for: the candidates' claims are deleted */
    /* Their nodes count against the budget until termination removes them. */
    int gone = 0;
    for (int i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof(path), CLAIMS "/%s", claims[i]);
        cJSON *claim = fake_api_get(h.fa, path);
        if (!claim) {
            snprintf(path, sizeof(path), NODES "/%s", claims[i]);
            cr_assert(fake_api_remove(h.fa, path));
            cr_assert(harness_wait(&h, KP_CK_NODE, claims[i], false));
            gone++;
        }
        cJSON_Delete(claim);
    }
    cr_expect_eq(gone, 2);
    pass(); /* 50% of the two nodes left: one more starts */
    cr_expect_eq(harness_events(&h, "DisruptionTerminating", "Disrupting NodeClaim: Drifted"), 2);
    cr_expect_eq(harness_events(&h, "DisruptionTerminating", "Disrupting Node: Drifted"), 2);
    kp_buf out = KP_BUF_INIT(1 << 20);
    kp_metrics_write(h.c.metrics, &out);
    cr_expect(strstr(kp_buf_cstr(&out), "karpenter_voluntary_disruption_decisions_total{decision=\"delete\","
                                        "reason=\"drifted\",consolidation_type=\"\"} 3"),
              "%s", kp_buf_cstr(&out));
    kp_buf_free(&out);
}

Test(disruption_ctrl, serial_mode_runs_one_command_at_a_time)
{
    h.c.opts.disruption_parallelism = 1;
    put_pool("100%");
    put_drifted("n1"), put_drifted("n2"), put_drifted("n3"), put_drifted("n4");
    pass();
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 1, "DISRUPTION_PARALLELISM=1: one command");
    cr_expect_eq(tainted(), 1);
}

Test(disruption_ctrl, a_zero_budget_is_said_on_the_nodepool_and_keeps_the_nodes)
{
    put_pool("0");
    put_drifted("n1"), put_drifted("n2");
    pass();
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 0);
    cr_expect_eq(tainted(), 0);
    cr_expect_eq(harness_events(&h, "DisruptionBlocked", "No allowed disruptions for disruption reason Drifted due to blocking budget"),
                 5, "on the NodePool, and on each kept Node and its NodeClaim");
    cr_expect_eq(harness_events(&h, "DisruptionBlocked", "due to blocking budget (NodePool=default)"), 4,
                 "the nodes' events name the NodePool");
    kp_buf out = KP_BUF_INIT(1 << 20);
    kp_metrics_write(h.c.metrics, &out);
    cr_expect(strstr(kp_buf_cstr(&out), "karpenter_nodepools_allowed_disruptions{nodepool=\"default\",reason=\"Drifted\"} 0"),
              "%s", kp_buf_cstr(&out));
    cr_expect(strstr(kp_buf_cstr(&out), "karpenter_voluntary_disruption_eligible_nodes{reason=\"drifted\"} 2"));
    kp_buf_free(&out);
}

Test(disruption_ctrl, a_do_not_disrupt_pod_is_named_on_its_node)
{
    put_pool("100%");
    put_drifted("n1");
    harness_put(&h, KP_CK_POD, PODS, "default/guarded",
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"guarded\",\"namespace\":\"default\","
                "\"uid\":\"p1\",\"annotations\":{\"karpenter.sh/do-not-disrupt\":\"true\"}},\"spec\":{\"nodeName\":"
                "\"n1\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}}");
    pass();
    cr_expect_eq(tainted(), 0);
    cr_expect_eq(harness_events(&h, "DisruptionBlocked", "karpenter.sh/do-not-disrupt"), 2,
                 "on the Node and on its NodeClaim");
    cr_expect_eq(harness_events(&h, "DisruptionBlocked", "default/guarded"), 2, "naming the pod");
}


/* Pod `name` (uid `uid`) of 1200m on node `node`. */
static void put_busy_pod(const char *name, const char *uid, const char *node)
{
    char json[768], key[96];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
             "\"uid\":\"%s\",\"creationTimestamp\":\"2025-12-01T00:00:00Z\"},\"spec\":{\"nodeName\":\"%s\","
             "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1200m\",\"memory\":\"1Gi\"}}}]},"
             "\"status\":{\"phase\":\"Running\"}}",
             name, uid, node);
    snprintf(key, sizeof(key), "default/%s", name);
    harness_put(&h, KP_CK_POD, PODS, key, json);
}

/* A command's replacement, still coming up, holds the pods its plan put
 * there: the next pass sends another drifted node's pod to a replacement of
 * its own, rather than onto that one (UninitializedTarget) to wait for it. */
Test(disruption_ctrl, a_replacement_coming_up_keeps_its_room_for_its_own_pods)
{
    put_pool("100%");
    put_drifted("n1");
    put_busy_pod("first", "p-b", "n1");
    pass();
    cr_assert_eq(kp_disruption_ctrl_in_flight(d), 1, "n1 is replaced");
    cr_assert_eq(fake_api_count(h.fa, "POST", CLAIMS), 1, "by one NodeClaim, not up yet");
    put_drifted("n2");
    put_busy_pod("second", "p-a", "n2"); /* first in Karpenter's queue order (uid) */
    pass();
    cr_expect_eq(harness_events(&h, "DisruptionBlocked", "would schedule against uninitialized"), 0);
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 2, "n2 goes at once, with a replacement of its own");
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 2);
}
