/* Pod events on NodeClaims (controller/podevents.c) against the fake API
 * server: which pod changes count, status.lastPodEventTime stamped on the
 * node's NodeClaim at most once per 10 seconds, and another provider's
 * NodeClaims never stamped. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "kube/objutil.h"
#include "controller/podevents.h"
#include "helpers/ctrl_harness.h"
#include "helpers/assert.h"

#define CLAIMS HARNESS_CLAIMS

HARNESS_SUITE(podevents);

/* A claim with provider ID `pid` and its registered node `name`. */
static void put_pair(const char *name, const char *class_ref, const char *pid)
{
    harness_put_claim(
        &h,
        (harness_obj){.name = name, .class_ref = class_ref, .provider_id = pid, .node_name = name});
    harness_put_node(&h, (harness_obj){.name = name, .provider_id = pid});
}

static void reconcile(const char *node)
{
    int64_t requeue = 0;
    KP_ASSERT_OK(kp_podevents_reconcile(&h.c, NULL, node, &requeue));
    cr_expect_eq(requeue, 0);
}

/* status.lastPodEventTime of the claim on the server ("" when none). */
static const char *stamp(const char *claim)
{
    static char buf[64];
    cJSON *o = harness_stored(&h, CLAIMS, claim);
    const char *s = o ? kp_obj_str(o, "status.lastPodEventTime") : NULL;
    snprintf(buf, sizeof(buf), "%s", s ? s : "");
    cJSON_Delete(o);
    return buf;
}

Test(podevents, which_pod_changes_are_events)
{
    static const struct {
        const char *old, *new;
        bool want;
    } cases[] = {
        {NULL, "{\"spec\":{\"nodeName\":\"n1\"}}", true},            /* seen bound */
        {"{\"spec\":{}}", "{\"spec\":{\"nodeName\":\"n1\"}}", true}, /* bound now */
        {NULL, "{\"spec\":{}}", false},                              /* not on a node */
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}",
         "{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}",
         false}, /* nothing new */
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}",
         "{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Succeeded\"}}",
         true}, /* finished */
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Failed\"}}",
         "{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Failed\"}}",
         false}, /* finished before */
        {"{\"spec\":{\"nodeName\":\"n1\"}}",
         "{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"nodeName\":"
         "\"n1\"}}",
         true}, /* began terminating */
        {NULL,
         "{\"metadata\":{\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"ds\"}]},\"spec\":{"
         "\"nodeName\":"
         "\"n1\"}}",
         false}, /* a DaemonSet's */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *old = cases[i].old ? cJSON_Parse(cases[i].old) : NULL,
              *now = cJSON_Parse(cases[i].new);
        cr_assert_not_null(now);
        cr_expect_eq(kp_podevent_is_event(old, now), cases[i].want, "case %zu", i);
        cJSON_Delete(old);
        cJSON_Delete(now);
    }
}

Test(podevents, the_claim_is_stamped_at_most_every_ten_seconds)
{
    put_pair("n1", NULL, "fake://n1");
    reconcile("n1");
    cr_expect_str_eq(stamp("n1"), "2026-01-01T00:00:00Z");
    harness_sync(&h, KP_CK_NODECLAIM, CLAIMS "/n1", "n1");
    h.clock.ns += 5 * KP_NS_PER_SEC;
    size_t patches = fake_api_count(h.fa, "PATCH", NULL);
    reconcile("n1");
    cr_expect_eq(fake_api_count(h.fa, "PATCH", NULL), patches, "5 s later: not again");
    cr_expect_str_eq(stamp("n1"), "2026-01-01T00:00:00Z");
    h.clock.ns += 6 * KP_NS_PER_SEC;
    reconcile("n1");
    cr_expect_str_eq(stamp("n1"), "2026-01-01T00:00:11Z", "11 s after the first: stamped again");
}

Test(podevents, another_providers_claim_and_a_node_without_one)
{
    put_pair("theirs", HARNESS_AWS_CLASS, HARNESS_AWS_ID);
    harness_put_node(&h,
                     (harness_obj){.name = "lonely", .provider_id = "fake://lonely", .labels = ""});
    size_t before = fake_api_count(h.fa, NULL, NULL);
    reconcile("theirs");
    reconcile("lonely");
    reconcile("absent");
    cr_expect_eq(fake_api_count(h.fa, NULL, NULL), before, "no request at all");
    cr_expect_str_eq(stamp("theirs"), "");
}
