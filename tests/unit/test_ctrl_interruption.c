/* The interruption controller (controller/interruption_ctrl.c) against the
 * fake API server, the fake cloud provider and a fake notice source that
 * counts its calls: which NodeClaims a notice names, Karpenter's events, the
 * delete that starts the drain, acknowledgement only once handled, and
 * another provider's claims left alone. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/interruption.h"
#include "controller/interruption_ctrl.h"
#include "helpers/ctrl_harness.h"
#include "helpers/assert.h"

#define CLAIMS HARNESS_CLAIMS

/* ------------------------------------------------------- the fake source */

typedef struct fake_source {
    kp_interruption_source base;
    enum kp_interruption_kind kind; /* the one queued notice, when `queued` */
    const char *ids[4];
    uint32_t n_ids;
    const char *parse_error;
    bool queued;
    int receives, acks, observed;
    char observed_type[64];
} fake_source;

static int fs_receive(kp_interruption_source *src, kp_arena *arena, kp_interruption **out,
                      uint32_t *n, int wait)
{
    fake_source *f = (fake_source *)src;
    (void)wait;
    f->receives++;
    *n = 0;
    if (!f->queued) return 0;
    kp_interruption *m = KP_ARENA_NEW(arena, kp_interruption, 1);
    m->kind = f->kind;
    m->kind_name = kp_interruption_kind_name(f->kind);
    m->instance_ids = f->ids;
    m->n_ids = f->n_ids;
    m->id = "notice-1";
    m->parse_error = f->parse_error;
    *out = m, *n = 1;
    return 0;
}

static int fs_ack(kp_interruption_source *src, const kp_interruption *m)
{
    fake_source *f = (fake_source *)src;
    (void)m;
    f->acks++;
    f->queued = false;
    return 0;
}

static void fs_observe(kp_interruption_source *src, const kp_interruption *m, const char *type,
                       const char *zone, const char *capacity_type, const char *reservation)
{
    fake_source *f = (fake_source *)src;
    (void)m, (void)zone, (void)capacity_type, (void)reservation;
    f->observed++;
    snprintf(f->observed_type, sizeof(f->observed_type), "%s", type ? type : "");
}

static const char *fs_name(const kp_interruption_source *src)
{
    (void)src;
    return "fake";
}

static void fs_free(kp_interruption_source *src)
{
    (void)src;
}

static const kp_interruption_source_ops fs_ops = {fs_receive, fs_ack, fs_observe, fs_name, fs_free};

/* ------------------------------------------------------------- the tests */

static harness h;
static fake_source src;

static void setup(void)
{
    harness_start(&h, HARNESS_T0);
    memset(&src, 0, sizeof(src));
    src.base.ops = &fs_ops;
    h.c.interruption = &src.base;
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(interruption_ctrl, .init = setup, .fini = teardown, .timeout = 60);

/* A claim with provider ID `pid` and its registered node `name`. */
static void put_pair(const char *name, const char *class_ref, const char *pid)
{
    harness_put_claim(
        &h, (harness_obj){
                .name = name,
                .class_ref = class_ref,
                .provider_id = pid,
                .node_name = name,
                .labels = "\"karpenter.sh/nodepool\":\"default\",\"karpenter.sh/capacity-type\":"
                          "\"spot\",\"node.kubernetes.io/instance-type\":\"m5.large\""});
    harness_put_node(&h, (harness_obj){.name = name, .provider_id = pid});
}

static void notice(enum kp_interruption_kind kind, const char *id)
{
    src.kind = kind;
    src.ids[0] = id;
    src.n_ids = id ? 1 : 0;
    src.queued = true;
}

static bool claim_on_server(const char *name)
{
    return harness_exists(&h, CLAIMS, name);
}

static void pass(void)
{
    KP_ASSERT_OK(kp_interruption_pass(&h.c, NULL));
}

Test(interruption_ctrl, a_spot_interruption_deletes_the_claim_with_karpenters_events)
{
    put_pair("c1", NULL, "fake://c1");
    notice(KP_INTERRUPT_SPOT, "c1");
    pass();
    cr_expect_not(claim_on_server("c1"), "deleted: termination drains it");
    cr_expect_eq(harness_events(&h, "SpotInterrupted", "Spot interruption warning was triggered"),
                 2, "on the claim and its node");
    cr_expect_eq(harness_events(&h, "TerminatingOnInterruption", NULL), 2);
    cr_expect_eq(src.acks, 1);
    cr_expect_eq(src.observed, 1, "the provider hears what was taken");
    cr_expect_str_eq(src.observed_type, "m5.large");
}

Test(interruption_ctrl, a_rebalance_recommendation_is_an_event_only)
{
    put_pair("c1", NULL, "fake://c1");
    notice(KP_INTERRUPT_REBALANCE, "c1");
    pass();
    cr_expect(claim_on_server("c1"));
    cr_expect_eq(harness_events(&h, "SpotRebalanceRecommendation", NULL), 2);
    cr_expect_eq(harness_events(&h, "TerminatingOnInterruption", NULL), 0);
    cr_expect_eq(fake_api_count(h.fa, "DELETE", NULL), 0);
    cr_expect_eq(src.acks, 1);
}

Test(interruption_ctrl, another_providers_claim_is_left_alone)
{
    put_pair("theirs", HARNESS_AWS_CLASS, HARNESS_AWS_ID);
    notice(KP_INTERRUPT_SPOT, "i-0123456789abcdef0");
    pass();
    cr_expect(claim_on_server("theirs"));
    cr_expect_eq(harness_events(&h, "SpotInterrupted", NULL), 0);
    cr_expect_eq(fake_api_count(h.fa, "DELETE", NULL), 0);
    cr_expect_eq(src.acks, 1, "nothing of ours to do: acknowledged");
}

Test(interruption_ctrl, instance_ids_match_whole_suffixes)
{
    put_pair("c1", NULL, "fake://c1");
    put_pair("xc1", NULL, "fake://xc1");
    char **keys = kp_interruption_claims(&h.c, "c1");
    cr_assert_not_null(keys[0]);
    cr_expect_str_eq(keys[0], "c1");
    cr_expect_null(keys[1], "xc1 does not end in /c1");
    for (size_t i = 0; keys[i]; i++)
        free(keys[i]);
    free(keys);
}

static void refuse_deletes(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->method, "DELETE") != 0) return;
    resp->status = 403;
    resp->body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                        "\"reason\":\"Forbidden\","
                        "\"message\":\"refused by the test\",\"code\":403}");
}

Test(interruption_ctrl, a_notice_not_handled_is_not_acknowledged)
{
    put_pair("c1", NULL, "fake://c1");
    notice(KP_INTERRUPT_TERMINATING, "c1");
    fake_api_set_hook(h.fa, refuse_deletes, NULL);
    pass();
    fake_api_set_hook(h.fa, NULL, NULL);
    cr_expect(claim_on_server("c1"));
    cr_expect_eq(src.acks, 0, "it stays in the source and comes back");
    pass();
    cr_expect_not(claim_on_server("c1"), "handled the second time");
    cr_expect_eq(src.acks, 1);
}

Test(interruption_ctrl, a_notice_that_did_not_parse_is_dropped)
{
    put_pair("c1", NULL, "fake://c1");
    notice(KP_INTERRUPT_NOOP, NULL);
    src.parse_error = "not JSON";
    pass();
    cr_expect(claim_on_server("c1"));
    cr_expect_eq(src.acks, 1, "acknowledged, or it would come back forever");
    cr_expect_eq(fake_api_count(h.fa, "DELETE", NULL), 0);
}

Test(interruption_ctrl, no_source_no_work)
{
    h.c.interruption = NULL;
    cr_expect_eq(kp_interruption_pass(&h.c, NULL), 0);
    cr_expect_eq(src.receives, 0);
}
