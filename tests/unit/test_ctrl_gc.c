/* Garbage collection both ways (controller/gc.c) against the fake API server
 * and the fake cloud provider: a launched NodeClaim whose instance is gone is
 * deleted once Get confirms it, an instance no NodeClaim owns is terminated
 * after its grace period; young ones, unknown answers and another provider's
 * objects are left alone. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "controller/gc.h"
#include "helpers/ctrl_harness.h"
#include "helpers/assert.h"

#define CLAIMS HARNESS_CLAIMS
#define NODES  HARNESS_NODES

HARNESS_SUITE(gc);

/* A claim of class `class_ref` with provider ID `pid`, Launched at `launched`
 * (RFC 3339); `meta` more metadata members (",..." or ""). */
static void put_claim(const char *name, const char *class_ref, const char *pid,
                      const char *launched, const char *meta)
{
    char more_meta[512], status[512];
    snprintf(more_meta, sizeof(more_meta), ",\"creationTimestamp\":\"%s\"%s", launched, meta);
    snprintf(status, sizeof(status),
             ",\"conditions\":[{\"type\":\"Launched\",\"status\":\"True\",\"reason\":\"Launched\","
             "\"message\":\"\",\"lastTransitionTime\":\"%s\"}]",
             launched);
    harness_put_claim(&h, (harness_obj){.name = name,
                                        .class_ref = class_ref,
                                        .provider_id = pid,
                                        .meta = more_meta,
                                        .status = status});
}

static void put_node(const char *name, const char *pid)
{
    harness_put_node(&h, (harness_obj){.name = name, .provider_id = pid, .labels = ""});
}

/* An instance the fake cloud lists, made `age_s` seconds before now. */
static void add_instance(const char *pid, int64_t age_s)
{
    int i = h.cloud.n_instances++;
    snprintf(h.cloud.instances[i], sizeof(h.cloud.instances[i]), "%s", pid);
    h.cloud.created_ns[i] = HARNESS_T0 - age_s * KP_NS_PER_SEC;
}

static bool on_server(const char *collection, const char *name)
{
    return harness_exists(&h, collection, name);
}

static void gc_pass(void)
{
    KP_ASSERT_OK(kp_gc_pass(&h.c, NULL));
}

#define AN_HOUR_AGO "2025-12-31T23:00:00Z"

Test(gc, a_claim_whose_instance_is_gone_is_deleted)
{
    put_claim("gone", NULL, "fake://gone", AN_HOUR_AGO, "");
    gc_pass();
    cr_expect_eq(h.cloud.lists, 1);
    cr_expect_eq(h.cloud.gets, 1, "the list is confirmed with a Get");
    cr_expect_not(on_server(CLAIMS, "gone"), "deleted");
    cr_expect_eq(h.cloud.deletes, 0, "no instance to terminate");
}

Test(gc, claims_that_stay)
{
    add_instance("fake://listed", 3600);
    put_claim("listed", NULL, "fake://listed", AN_HOUR_AGO, "");
    put_claim("young", NULL, "fake://young", "2025-12-31T23:59:55Z",
              ""); /* 5 s: a launch in flight */
    put_claim("deleting", NULL, "fake://deleting", AN_HOUR_AGO,
              ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"finalizers\":[\"karpenter.sh/"
              "termination\"]");
    put_claim("theirs", HARNESS_AWS_CLASS, HARNESS_AWS_ID, AN_HOUR_AGO, "");
    gc_pass();
    cr_expect_eq(h.cloud.gets, 0, "none of them is even asked about");
    cr_expect(on_server(CLAIMS, "listed"));
    cr_expect(on_server(CLAIMS, "young"));
    cr_expect(on_server(CLAIMS, "deleting"));
    cr_expect(on_server(CLAIMS, "theirs"), "another provider's claim is never collected");
    cr_expect_eq(fake_api_count(h.fa, "DELETE", NULL), 0);
}

Test(gc, an_unknown_answer_keeps_the_claim)
{
    put_claim("c1", NULL, "fake://c1", AN_HOUR_AGO, "");
    h.cloud.get_err = KP_ERETRY; /* throttled, not "not found" */
    gc_pass();
    cr_expect_eq(h.cloud.gets, 1);
    cr_expect(on_server(CLAIMS, "c1"), "only a confirmed not-found deletes");
}

Test(gc, an_instance_no_claim_owns_is_terminated_after_its_grace)
{
    add_instance("fake://orphan", 60);
    add_instance("fake://fresh", 10);
    add_instance("fake://owned", 3600);
    put_claim("owned", NULL, "fake://owned", AN_HOUR_AGO, "");
    gc_pass();
    cr_expect_eq(h.cloud.deletes, 1, "only the orphan past 30 s");
    cr_expect_str_eq(h.cloud.last_deleted, "fake://orphan");
    cr_expect_eq(h.cloud.n_instances, 2);
    cr_expect(on_server(CLAIMS, "owned"));
}

/* Karpenter's instance GC deletes the Node of a terminated orphan at once,
 * so pods are not scheduled to a node that is going away. */
Test(gc, an_orphans_node_goes_with_it)
{
    add_instance("fake://orphan", 60);
    put_node("orphan", "fake://orphan");
    put_node("theirs", HARNESS_AWS_ID);
    gc_pass();
    cr_expect_eq(h.cloud.deletes, 1);
    cr_expect_not(on_server(NODES, "orphan"), "the orphan's Node is deleted");
    cr_expect(on_server(NODES, "theirs"));
}

Test(gc, a_failed_list_collects_nothing)
{
    put_claim("c1", NULL, "fake://c1", AN_HOUR_AGO, "");
    h.cloud.list_err = KP_ERETRY;
    cr_expect_eq(kp_gc_pass(&h.c, NULL), KP_ERETRY);
    cr_expect_eq(h.cloud.gets + h.cloud.deletes, 0);
    cr_expect(on_server(CLAIMS, "c1"), "an empty answer is not \"every instance is gone\"");
}
