/* The nodeclaim.disruption controller (Drifted, Consolidatable) against the
 * fake API server and a fake cloud provider. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/nodeclaim_disruption.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define POOLS "/apis/karpenter.sh/v1/nodepools"

static harness h;
static const char *created;    /* the claim's creationTimestamp */
static const char *type_label; /* extra labels ("key":"value",) */
static kp_claim_disruption *state;

static void setup(void)
{
    created = "2025-12-31T23:30:00Z"; /* under an hour: no instance-type check */
    type_label = "";
    harness_start(&h, T0);
    state = kp_claim_disruption_new();
}

static void teardown(void)
{
    state = kp_claim_disruption_free(state);
    harness_stop(&h);
}

TestSuite(claim_disruption, .init = setup, .fini = teardown, .timeout = 60);

/* A pool requiring on-demand, its hash `hash`, consolidateAfter `after`. */
static void put_pool(const char *hash, const char *after, const char *group)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"default\","
             "\"annotations\":{\"karpenter.sh/nodepool-hash\":\"%s\",\"karpenter.sh/nodepool-hash-version\":\"c1\"}},"
             "\"spec\":{\"disruption\":{\"consolidateAfter\":\"%s\"},\"template\":{\"spec\":{\"requirements\":["
             "{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"on-demand\"]}],"
             "\"nodeClassRef\":{\"group\":\"%s\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}}}}}",
             hash, after, group);
    harness_put(&h, KP_CK_NODEPOOL, POOLS, "default", json);
}

static void put_claim(const char *hash, const char *capacity, bool launched, const char *last_pod_event)
{
    char json[2048], extra[128] = "";
    if (last_pod_event)
        snprintf(extra, sizeof(extra), ",\"lastPodEventTime\":\"%s\"", last_pod_event);
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"c1\",\"uid\":\"u1\","
             "\"creationTimestamp\":\"%s\",\"labels\":{\"karpenter.sh/nodepool\":\"default\",%s"
             "\"karpenter.sh/capacity-type\":\"%s\"},\"annotations\":{\"karpenter.sh/nodepool-hash\":\"%s\","
             "\"karpenter.sh/nodepool-hash-version\":\"c1\"}},\"spec\":{\"nodeClassRef\":{\"group\":"
             "\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},\"status\":{\"providerID\":\"fake://c1\","
             "\"conditions\":[{\"type\":\"Launched\",\"status\":\"%s\",\"reason\":\"x\",\"message\":\"\","
             "\"lastTransitionTime\":\"2025-12-31T23:00:00Z\"},{\"type\":\"Initialized\",\"status\":\"True\","
             "\"reason\":\"x\",\"message\":\"\",\"lastTransitionTime\":\"2025-12-31T23:50:00Z\"}]%s}}",
             created, type_label, capacity, hash, launched ? "True" : "Unknown", extra);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, "c1", json);
}

static int64_t pass(void)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_claim_disruption_reconcile(&h.c, state, "c1", &requeue), 0);
    usleep(150000);
    return requeue;
}

static const char *cond(const char *type, bool reason)
{
    static char buf[64];
    cJSON *o = harness_get(&h, KP_CK_NODECLAIM, "c1");
    const char *out = NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "conditions"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), type)) {
            snprintf(buf, sizeof(buf), "%s", cJSON_GetStringValue(cJSON_GetObjectItem(c, reason ? "reason" : "status")));
            out = buf;
        }
    }
    cJSON_Delete(o);
    return out;
}

Test(claim_disruption, nodepool_hash_drift)
{
    put_pool("aaa", "Never", "karpenter.test");
    put_claim("aaa", "on-demand", true, NULL);
    pass();
    cr_expect_null(cond("Drifted", false), "same hash: not drifted");
    put_pool("bbb", "Never", "karpenter.test");
    pass();
    cr_expect_str_eq(cond("Drifted", false), "True");
    cr_expect_str_eq(cond("Drifted", true), "NodePoolDrifted");
}

Test(claim_disruption, requirements_drift)
{
    put_pool("aaa", "Never", "karpenter.test");
    put_claim("aaa", "spot", true, NULL);
    pass();
    cr_expect_str_eq(cond("Drifted", true), "RequirementsDrifted", "a spot claim of an on-demand-only pool");
}

Test(claim_disruption, cloud_drift_comes_and_goes)
{
    put_pool("aaa", "Never", "karpenter.test");
    put_claim("aaa", "on-demand", true, NULL);
    h.cloud.drift_reason = "AMIDrift";
    cr_expect_eq(pass(), 5 * 60 * 1000, "checked again in 5 minutes");
    cr_expect_str_eq(cond("Drifted", true), "AMIDrift");
    h.cloud.drift_reason = NULL;
    pass();
    cr_expect_str_eq(cond("Drifted", true), "AMIDrift", "the provider is asked at most every 2 minutes");
    cr_expect_eq(h.cloud.drift_checks, 1);
    h.clock.ns += 3 * 60 * KP_NS_PER_SEC;
    pass();
    cr_expect_null(cond("Drifted", false), "removed once the provider no longer finds drift");
    cr_expect_eq(h.cloud.drift_checks, 2);
}

Test(claim_disruption, a_forgotten_answer_is_asked_again_at_once)
{
    put_pool("aaa", "Never", "karpenter.test");
    put_claim("aaa", "on-demand", true, NULL);
    pass();
    cr_expect_null(cond("Drifted", false));
    h.cloud.drift_reason = "AMIDrift"; /* the class moved to a new AMI */
    pass();
    cr_expect_null(cond("Drifted", false), "within 2 minutes the last answer stands");
    kp_claim_disruption_forget(state, "u1"); /* what a change of its node class does */
    pass();
    cr_expect_str_eq(cond("Drifted", true), "AMIDrift", "asked again once its node class changed");
    cr_expect_eq(h.cloud.drift_checks, 2);
}

Test(claim_disruption, not_launched_is_never_drifted)
{
    put_pool("bbb", "Never", "karpenter.test");
    put_claim("aaa", "on-demand", false, NULL);
    h.cloud.drift_reason = "AMIDrift";
    pass();
    cr_expect_null(cond("Drifted", false));
    cr_expect_eq(h.cloud.drift_checks, 0, "no provider call for a claim not launched");
}

Test(claim_disruption, consolidatable_after_the_window)
{
    put_pool("aaa", "5m", "karpenter.test");
    put_claim("aaa", "on-demand", true, NULL); /* initialized 10 minutes ago, no pod event */
    pass();
    cr_expect_str_eq(cond("Consolidatable", false), "True");
    put_claim("aaa", "on-demand", true, "2025-12-31T23:59:00Z"); /* a pod event a minute ago */
    int64_t requeue = pass();
    cr_expect_null(cond("Consolidatable", false), "removed inside the window");
    cr_expect(requeue > 3 * 60 * 1000 && requeue <= 4 * 60 * 1000 + 1, "back when the window ends (%lld ms)",
              (long long)requeue);
    put_pool("aaa", "Never", "karpenter.test");
    pass();
    cr_expect_null(cond("Consolidatable", false), "consolidateAfter: Never");
}

Test(claim_disruption, another_providers_claim_or_pool_is_left_alone)
{
    put_pool("bbb", "5m", "karpenter.k8s.aws");
    put_claim("aaa", "on-demand", true, NULL);
    size_t before = fake_api_count(h.fa, "PATCH", NULL);
    pass();
    cr_expect_eq(fake_api_count(h.fa, "PATCH", NULL), before, "nothing written");
    cr_expect_null(cond("Drifted", false));
}

Test(claim_disruption, instance_type_not_found_an_hour_after_creation)
{
    put_pool("aaa", "Never", "karpenter.test");
    created = "2025-12-31T22:00:00Z";
    type_label = "\"node.kubernetes.io/instance-type\":\"m5.large\",\"topology.kubernetes.io/zone\":\"us-east-1a\",";
    put_claim("aaa", "on-demand", true, NULL);
    pass();
    cr_expect_null(cond("Drifted", false), "m5.large on-demand in us-east-1a is in the built-in catalog");
    type_label = "\"node.kubernetes.io/instance-type\":\"no-such.type\",";
    put_claim("aaa", "on-demand", true, NULL);
    h.clock.ns += 31 * 60 * KP_NS_PER_SEC; /* the check runs at most every 30 minutes */
    pass();
    cr_expect_str_eq(cond("Drifted", true), "InstanceTypeNotFound");
}
