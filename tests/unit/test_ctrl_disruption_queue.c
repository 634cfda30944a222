/* The disruption commands in flight (controller/disruption_exec.c) against the
 * fake API server: a command's candidates stay marked after it has deleted
 * their NodeClaims until the cache shows the deletion, so the plan made right
 * after it finishes does not take them for live nodes again. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/disruption_exec.h"
#include "helpers/ctrl_harness.h"
#include "scheduling/snapshot.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define NODES "/api/v1/nodes"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"

static harness h;
static kp_disrupt_queue *q;
static kp_snapshot *snap;

static void setup(void)
{
    harness_start(&h, T0);
    q = kp_disrupt_queue_new();
    snap = kp_snapshot_new();
}

static void teardown(void)
{
    kp_snapshot_free(snap);
    kp_disrupt_queue_free(q);
    harness_stop(&h);
}

TestSuite(disruption_queue, .init = setup, .fini = teardown, .timeout = 60);

/* Node and NodeClaim n1, and a drift command for it with no replacement. */
static kp_disrupt_command drift_n1(void)
{
    harness_put(&h, KP_CK_NODE, NODES, "n1",
                "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"n-n1\",\"labels\":"
                "{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"providerID\":\"fake://n1\"}}");
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, "n1",
                "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"n1\",\"uid\":"
                "\"c-n1\",\"labels\":{\"karpenter.sh/nodepool\":"
                "\"default\"}},\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\","
                "\"name\":\"d\"}},\"status\":{\"providerID\":\"fake://n1\",\"nodeName\":\"n1\"}}");
    kp_snode *n = kp_snapshot_add_node(snap);
    n->name = "n1";
    n->nodeclaim = "n1";
    n->template_index = -1;
    static const uint32_t candidates[] = {0};
    kp_disrupt_command cmd;
    memset(&cmd, 0, sizeof(cmd));
    cmd.method = KP_DISRUPT_DRIFT;
    cmd.reason = "Drifted";
    cmd.decision = KP_DISRUPT_DELETE;
    cmd.candidates = candidates;
    cmd.n_candidates = 1;
    return cmd;
}

/* Whether the cache shows the claim deleting or gone (within 5 s). */
static bool deletion_cached(void)
{
    for (int i = 0; i < 500; i++) {
        cJSON *c = harness_get(&h, KP_CK_NODECLAIM, "n1");
        bool deleting = !c || cJSON_GetObjectItem(cJSON_GetObjectItem(c, "metadata"), "deletionTimestamp");
        cJSON_Delete(c);
        if (deleting)
            return true;
        usleep(10000);
    }
    return false;
}

Test(disruption_queue, finished_candidates_stay_marked_until_the_cache_sees_them_deleting)
{
    kp_disrupt_command cmd = drift_n1();
    cr_assert_eq(kp_disrupt_queue_start(q, &h.c, snap, &cmd), 0);
    cr_expect(kp_disrupt_queue_has(q, "n1", "n1"), "in flight");
    cr_expect_eq(kp_disrupt_queue_len(q), 1);
    cr_assert_eq(kp_disrupt_queue_progress(q, &h.c), 1, "no replacement to wait for: done");
    cr_expect_eq(kp_disrupt_queue_len(q), 0, "no longer in flight");
    cr_expect(kp_disrupt_queue_has(q, "n1", NULL), "but the node stays marked for the plan that follows");
    cr_expect(kp_disrupt_queue_has(q, NULL, "n1"), "and so does its claim");
    cr_assert(deletion_cached(), "the claim was deleted");
    kp_disrupt_queue_progress(q, &h.c);
    cr_expect_not(kp_disrupt_queue_has(q, "n1", "n1"), "once the cache shows it deleting, the mark goes");
}

/* Karpenter's expiration controller deletes the claim and counts
 * karpenter_nodeclaims_disrupted_total only: no DisruptionTerminating event,
 * no voluntary disruption decision. */
Test(disruption_queue, expiration_deletes_without_events_or_a_decision)
{
    kp_disrupt_command cmd = drift_n1();
    cmd.method = KP_DISRUPT_EXPIRATION;
    cmd.reason = "Expired";
    cmd.forceful = true;
    cr_assert_eq(kp_disrupt_queue_start(q, &h.c, snap, &cmd), 0);
    cr_expect_eq(kp_disrupt_queue_len(q), 0, "nothing to wait for");
    cr_assert(deletion_cached(), "the claim was deleted");
    cr_expect_eq(harness_events(&h, "DisruptionTerminating", NULL), 0);
    kp_buf out = KP_BUF_INIT(1 << 20);
    kp_metrics_write(h.c.metrics, &out);
    const char *text = kp_buf_cstr(&out);
    cr_expect(strstr(text, "karpenter_nodeclaims_disrupted_total{reason=\"expired\""), "%s", text);
    cr_expect_null(strstr(text, "karpenter_voluntary_disruption_decisions_total{"), "%s", text);
    cr_expect_null(strstr(text, "karpenter_voluntary_disruption_decisions_by_nodepool_total{"), "%s", text);
    kp_buf_free(&out);
}

/* A finished command's candidates count against their NodePool's budget
 * until their instances terminate: the queue says when that happened, so
 * the next plan need not wait for the poll interval. */
Test(disruption_queue, a_budget_freed_by_a_finished_command_is_reported_once)
{
    kp_disrupt_command cmd = drift_n1();
    cr_assert_eq(kp_disrupt_queue_start(q, &h.c, snap, &cmd), 0);
    cr_expect_eq(kp_disrupt_queue_released(q, &h.c), 0, "in flight: nothing freed");
    cr_assert_eq(kp_disrupt_queue_progress(q, &h.c), 1);
    cr_assert(deletion_cached(), "the claim was deleted");
    kp_disrupt_queue_progress(q, &h.c);
    cr_expect_eq(kp_disrupt_queue_released(q, &h.c), 1, "its claim is gone: its place in the budget is free");
    cr_expect_eq(kp_disrupt_queue_released(q, &h.c), 0, "said once");
}

/* The first status write of a NodeClaim answered 409, as when another
 * controller wrote the claim (its Drifted condition) at the same moment. */
static int conflicts;
static void conflict_once(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->method, "PATCH") == 0 && strstr(req->path, "/status") && conflicts++ == 0) {
        resp->status = 409;
        resp->body = strdup("{\"kind\":\"Status\",\"code\":409,\"reason\":\"Conflict\",\"message\":\"the "
                            "object has been modified\"}");
    }
}

Test(disruption_queue, a_conflicting_write_of_the_disruption_reason_is_tried_again)
{
    kp_disrupt_command cmd = drift_n1();
    conflicts = 0;
    fake_api_set_hook(h.fa, conflict_once, NULL);
    cr_expect_eq(kp_disrupt_queue_start(q, &h.c, snap, &cmd), 0, "not abandoned");
    fake_api_set_hook(h.fa, NULL, NULL);
    cr_expect_eq(conflicts, 2, "written again after the conflict");
    cr_expect_eq(kp_disrupt_queue_len(q), 1);
    cJSON *claim = fake_api_get(h.fa, CLAIMS "/n1");
    char *text = claim ? cJSON_PrintUnformatted(claim) : NULL;
    cr_expect(text && strstr(text, "\"DisruptionReason\""), "%s", text ? text : "(none)");
    cJSON_free(text);
    cJSON_Delete(claim);
}

/* Deletes of NodeClaims answered 500, so the cache never shows one deleting. */
static void refuse_claim_deletes(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->method, "DELETE") == 0 && strncmp(req->path, CLAIMS, strlen(CLAIMS)) == 0) {
        resp->status = 500;
        resp->body = strdup("{\"kind\":\"Status\",\"code\":500,\"message\":\"refused\"}");
    }
}

Test(disruption_queue, the_mark_does_not_outlive_a_minute)
{
    kp_disrupt_command cmd = drift_n1();
    cr_assert_eq(kp_disrupt_queue_start(q, &h.c, snap, &cmd), 0);
    fake_api_set_hook(h.fa, refuse_claim_deletes, NULL);
    cr_assert_eq(kp_disrupt_queue_progress(q, &h.c), 1);
    kp_disrupt_queue_progress(q, &h.c);
    cr_expect(kp_disrupt_queue_has(q, "n1", "n1"), "the cache has not shown the claim deleting");
    h.clock.ns += 61 * KP_NS_PER_SEC;
    kp_disrupt_queue_progress(q, &h.c);
    cr_expect_not(kp_disrupt_queue_has(q, "n1", "n1"), "after a minute the mark goes whatever the cache says");
}
