/* NodeClaim initialization (controller/lifecycle_flow.c) against the fake API
 * server: a registered claim is Initialized only once its node is Ready and
 * carries none of the claim's startup taints nor a known ephemeral taint
 * (Karpenter's StartupTaintsRemoved and KnownEphemeralTaintsRemoved). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/lifecycle.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define NODES "/api/v1/nodes"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(lifecycle_init, .init = setup, .fini = teardown, .timeout = 60);

/* A claim launched and registered as n1, with a startup taint. */
static void put_claim(void)
{
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, "n1",
                "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"n1\",\"uid\":"
                "\"c-n1\",\"finalizers\":[\"karpenter.sh/termination\"],\"labels\":{\"karpenter.sh/nodepool\":"
                "\"default\"}},\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\","
                "\"name\":\"d\"},\"startupTaints\":[{\"key\":\"agent.example/not-ready\",\"effect\":\"NoSchedule\"}]},"
                "\"status\":{\"providerID\":\"fake://n1\",\"nodeName\":\"n1\",\"conditions\":["
                "{\"type\":\"Launched\",\"status\":\"True\",\"reason\":\"Launched\",\"lastTransitionTime\":"
                "\"2026-01-01T00:00:00Z\"},{\"type\":\"Registered\",\"status\":\"True\",\"reason\":\"Registered\","
                "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}");
}

/* Node n1, Ready, with `taints` (a JSON array). */
static void put_node(const char *taints)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"n-n1\",\"labels\":"
             "{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"providerID\":\"fake://n1\",\"taints\":%s},"
             "\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"},\"conditions\":"
             "[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}",
             taints);
    harness_put(&h, KP_CK_NODE, NODES, "n1", json);
}

/* The claim's Initialized condition on the server: "status reason: message". */
static void initialized(char *buf, size_t size)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_lifecycle_reconcile(&h.c, NULL, "n1", &requeue), 0);
    cJSON *claim = fake_api_get(h.fa, CLAIMS "/n1");
    const cJSON *c;
    snprintf(buf, size, "(none)");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(claim, "status"), "conditions"))
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), "Initialized") != 0)
            continue;
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(c, "message"));
        snprintf(buf, size, "%s %s: %s", cJSON_GetStringValue(cJSON_GetObjectItem(c, "status")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(c, "reason")), msg ? msg : "");
    }
    cJSON_Delete(claim);
}

/* The cache can still hold the node as it was before registration wrote the
 * startup taints (and took karpenter.sh/unregistered off): not initialized. */
Test(lifecycle_init, a_node_still_unregistered_is_not_initialized)
{
    put_claim();
    put_node("[{\"key\":\"karpenter.sh/unregistered\",\"effect\":\"NoExecute\"}]");
    char got[400];
    initialized(got, sizeof(got));
    cr_expect_str_eq(got, "Unknown KnownEphemeralTaintsExist: KnownEphemeralTaint \"karpenter.sh/unregistered:NoExecute\" "
                          "still exists");
    cJSON *node = fake_api_get(h.fa, NODES "/n1");
    cr_expect_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "metadata"), "labels"),
                                       "karpenter.sh/initialized"),
                   "the node is not labelled initialized");
    cJSON_Delete(node);
}

Test(lifecycle_init, a_startup_taint_holds_initialization)
{
    put_claim();
    put_node("[{\"key\":\"agent.example/not-ready\",\"effect\":\"NoSchedule\"},"
             "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]");
    char got[400];
    initialized(got, sizeof(got));
    cr_expect_str_eq(got, "Unknown StartupTaintsExist: StartupTaint \"agent.example/not-ready:NoSchedule\" still exists");
}

Test(lifecycle_init, a_clean_ready_node_is_initialized)
{
    put_claim();
    put_node("[{\"key\":\"team.example/dedicated\",\"value\":\"a\",\"effect\":\"NoSchedule\"}]");
    char got[400];
    initialized(got, sizeof(got));
    cr_expect_str_eq(got, "True Initialized: ");
    cr_expect(harness_wait(&h, KP_CK_NODE, "n1", true));
    cJSON *node = fake_api_get(h.fa, NODES "/n1");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(node, "metadata"), "labels"), "karpenter.sh/initialized")),
                     "true");
    cJSON_Delete(node);
}
