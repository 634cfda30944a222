/* Node auto-repair (controller/node_health.c) against the fake API server and
 * a fake cloud provider whose policy is Ready False/Unknown for 10 minutes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/wellknown.h"
#include "controller/node_health.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define NODES "/api/v1/nodes"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
    h.c.opts.node_repair = true;
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(node_health, .init = setup, .fini = teardown, .timeout = 60);

/* Node `name` of pool default, Ready `ready` since `since`, with its claim. */
static void put_node(const char *name, const char *ready, const char *since)
{
    char json[1024], claim[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":"
             "{\"karpenter.sh/nodepool\":\"default\",\"karpenter.sh/capacity-type\":\"spot\"}},\"spec\":"
             "{\"providerID\":\"fake://%s\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"lastTransitionTime\":\"%s\"}]}}",
             name, name, name, ready, since);
    harness_put(&h, KP_CK_NODE, NODES, name, json);
    snprintf(claim, sizeof(claim),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"c-%s\",\"labels\":{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"nodeClassRef\":{\"group\":"
             "\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},\"status\":{\"providerID\":\"fake://%s\","
             "\"imageID\":\"ami-1\"}}",
             name, name, name);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, claim);
}

static int64_t pass(const char *node)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_node_health_reconcile(&h.c, NULL, node, &requeue), 0);
    usleep(150000);
    return requeue;
}

static bool claim_gone(const char *name)
{
    return harness_wait(&h, KP_CK_NODECLAIM, name, false);
}

Test(node_health, thresholds_round_up_like_karpenters)
{
    cr_expect_eq(kp_node_health_allowed("20%", 3), 1, "one of three may be unhealthy");
    cr_expect_eq(kp_node_health_allowed("20%", 10), 2);
    cr_expect_eq(kp_node_health_allowed("20%", 11), 3);
    cr_expect_eq(kp_node_health_allowed("0%", 5), 0);
    cr_expect_eq(kp_node_health_allowed("2", 50), 2);
    cr_expect_eq(kp_node_health_allowed("120%", 5), -1);
    cr_expect_eq(kp_node_health_allowed("x", 5), -1);
}

Test(node_health, not_ready_past_its_toleration_is_replaced)
{
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "ok%d", i);
        put_node(name, "True", "2025-12-31T00:00:00Z");
    }
    put_node("sick", "False", "2025-12-31T23:55:00Z"); /* 5 of its 10 minutes */
    int64_t requeue = pass("sick");
    cr_expect(requeue > 4 * 60 * 1000 && requeue <= 5 * 60 * 1000 + 1, "back when the toleration ends (%lld)",
              (long long)requeue);
    cr_expect(harness_wait(&h, KP_CK_NODECLAIM, "sick", true), "kept inside the toleration");
    h.clock.ns += 6 * 60 * KP_NS_PER_SEC;
    pass("sick");
    cr_expect(claim_gone("sick"), "its NodeClaim is deleted");
    kp_buf out = KP_BUF_INIT(1 << 20);
    kp_metrics_write(h.c.metrics, &out);
    cr_expect(strstr(kp_buf_cstr(&out), "karpenter_nodeclaims_unhealthy_disrupted_total{condition=\"ready\","
                                        "nodepool=\"default\",capacity_type=\"spot\",image_id=\"ami-1\"} 1"),
              "%s", kp_buf_cstr(&out));
    kp_buf_free(&out);
}

Test(node_health, repair_stops_above_the_threshold)
{
    put_node("ok", "True", "2025-12-31T00:00:00Z");
    put_node("sick1", "Unknown", "2025-12-31T00:00:00Z");
    put_node("sick2", "False", "2025-12-31T00:00:00Z");
    cr_expect_eq(pass("sick1"), 5 * 60 * 1000, "2 of 3 unhealthy: more than 20%% (one) — blocked, looked at in 5 min");
    cr_expect(harness_wait(&h, KP_CK_NODECLAIM, "sick1", true));
    cr_expect_eq(harness_events(&h, "NodeRepairBlocked", "more than 20% nodes are unhealthy in the nodepool"), 2,
                 "on the node and the claim (the pool is not in the cache)");
    h.c.opts.node_repair_threshold = "2";
    pass("sick1");
    cr_expect(claim_gone("sick1"), "a threshold of 2 lets it go");
}

/* Karpenter's NodeRepairBlocked repeats once per 15 minutes per object,
 * even when its message changes (the threshold was edited). */
Test(node_health, repair_blocked_is_written_once_per_object_within_its_window)
{
    put_node("ok", "True", "2025-12-31T00:00:00Z");
    put_node("sick1", "Unknown", "2025-12-31T00:00:00Z");
    put_node("sick2", "False", "2025-12-31T00:00:00Z");
    pass("sick1");
    h.c.opts.node_repair_threshold = "10%";
    pass("sick1");
    cr_expect_eq(harness_events(&h, "NodeRepairBlocked", "more than 20% nodes"), 2, "node and claim");
    cr_expect_eq(harness_events(&h, "NodeRepairBlocked", "more than 10% nodes"), 0, "not again within 15 minutes");
}

Test(node_health, off_without_the_gate_and_for_other_providers)
{
    put_node("sick", "False", "2025-12-31T00:00:00Z");
    h.c.opts.node_repair = false;
    pass("sick");
    cr_expect(harness_wait(&h, KP_CK_NODECLAIM, "sick", true), "NodeRepair off: nothing happens");
    h.c.opts.node_repair = true;
    harness_put(&h, KP_CK_NODE, NODES, "aws",
                "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"aws\",\"labels\":"
                "{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"providerID\":\"aws:///z/i-1\"},\"status\":"
                "{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"lastTransitionTime\":"
                "\"2025-12-31T00:00:00Z\"}]}}");
    size_t before = fake_api_count(h.fa, NULL, NULL);
    pass("aws");
    cr_expect_eq(fake_api_count(h.fa, NULL, NULL), before, "another provider's node: no request");
}

/* Repair is forceful: the claim's termination time is now, so the drain does
 * not wait out a grace period, and it is written before the delete. */
Test(node_health, repair_sets_the_termination_time_before_deleting)
{
    put_node("ok", "True", "2025-12-31T00:00:00Z");
    put_node("ok2", "True", "2025-12-31T00:00:00Z");
    put_node("ok3", "True", "2025-12-31T00:00:00Z");
    put_node("ok4", "True", "2025-12-31T00:00:00Z");
    put_node("sick", "Unknown", "2025-12-31T00:00:00Z");
    size_t before = fake_api_count(h.fa, NULL, NULL);
    pass("ok");
    cr_expect_eq(fake_api_count(h.fa, NULL, NULL), before, "a healthy node: no request");
    pass("sick");
    fake_logged patch, del;
    cr_assert(fake_api_find(h.fa, "PATCH", CLAIMS "/sick", 0, &patch), "the claim was patched");
    cr_expect(strstr(patch.body, "\"" KP_ANNOTATION_TERMINATION_TIMESTAMP "\":\"2026-01-01T00:00:00Z\""), "%s",
              patch.body);
    cr_assert(fake_api_find(h.fa, "DELETE", CLAIMS "/sick", 0, &del), "then deleted");
    cr_expect_eq(fake_api_count(h.fa, "PATCH", CLAIMS "/sick") + fake_api_count(h.fa, "DELETE", CLAIMS "/sick"), 2);
    cr_expect(claim_gone("sick"));
}
