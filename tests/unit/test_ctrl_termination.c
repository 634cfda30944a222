/* Node termination (controller/termination.c) against the fake API server and
 * a fake cloud provider: ownership, drain with do-not-disrupt durations,
 * Drained / VolumesDetached / InstanceTerminating, events, the TGP deadline. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/termination.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define NODES "/api/v1/nodes"
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define PODS "/api/v1/namespaces/default/pods"
#define VAS "/apis/storage.k8s.io/v1/volumeattachments"

static harness h;

static void setup(void)
{
    harness_start(&h, T0);
}

static void teardown(void)
{
    harness_stop(&h);
}

TestSuite(termination, .init = setup, .fini = teardown, .timeout = 60);

static void put_node(const char *name, const char *pid)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\","
             "\"finalizers\":[\"karpenter.sh/termination\"],\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"labels\":{\"karpenter.sh/nodepool\":\"default\"}},\"spec\":{\"providerID\":\"%s\"},"
             "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, name, pid);
    harness_put(&h, KP_CK_NODE, NODES, name, json);
}

static void put_claim(const char *name, const char *pid, const char *extra_annotations)
{
    char json[1536];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"c-%s\",\"finalizers\":[\"karpenter.sh/termination\"],\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"labels\":{\"karpenter.sh/nodepool\":\"default\"},\"annotations\":{%s}},\"spec\":{\"nodeClassRef\":"
             "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}},\"status\":{\"providerID\":"
             "\"%s\",\"conditions\":[{\"type\":\"DisruptionReason\",\"status\":\"True\",\"reason\":\"Drifted\"}]}}",
             name, name, extra_annotations, pid);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, name, json);
}

static void put_pod(const char *name, const char *node, const char *annotations)
{
    char json[1024], key[128];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
             "\"uid\":\"p-%s\",\"annotations\":{%s}},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\"}]},"
             "\"status\":{\"phase\":\"Running\",\"startTime\":\"2025-12-31T23:50:00Z\"}}",
             name, name, annotations, node);
    snprintf(key, sizeof(key), "default/%s", name);
    harness_put(&h, KP_CK_POD, PODS, key, json);
}

/* One reconcile, then let the caches catch up with what it wrote. */
static int64_t pass(const char *node)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_termination_reconcile(&h.c, NULL, node, &requeue), 0, "reconcile failed");
    usleep(150000);
    return requeue;
}

static const char *claim_condition(const char *type)
{
    static char buf[32];
    return harness_condition(&h, KP_CK_NODECLAIM, "c1", type, buf, sizeof(buf));
}

Test(termination, another_providers_node_is_never_touched)
{
    put_node("aws-node", "aws:///us-east-1a/i-0123456789abcdef0");
    put_pod("web", "aws-node", "");
    /* Only requests about the node or its pod count: informers may relist meanwhile. */
    size_t before = fake_api_count(h.fa, NULL, NODES "/aws-node") + fake_api_count(h.fa, NULL, PODS "/web");
    pass("aws-node");
    cr_expect_eq(fake_api_count(h.fa, NULL, NODES "/aws-node") + fake_api_count(h.fa, NULL, PODS "/web"), before,
                 "no request at all about it");
    cr_expect_eq(h.cloud.deletes + h.cloud.gets, 0);
    cr_expect(harness_wait(&h, KP_CK_POD, "default/web", true));
}

Test(termination, drain_waits_for_a_do_not_disrupt_duration_then_evicts)
{
    snprintf(h.cloud.instances[0], sizeof(h.cloud.instances[0]), "fake://n1");
    h.cloud.n_instances = 1;
    put_node("n1", "fake://n1");
    put_claim("c1", "fake://n1", "");
    put_pod("plain", "n1", "");
    put_pod("guarded", "n1", "\"karpenter.sh/do-not-disrupt\":\"1h\"");
    cr_expect_eq(pass("n1"), 1000, "still draining");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/plain", false), "the plain pod is evicted");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/guarded", true), "the guarded pod stays for its hour");
    cr_expect_str_eq(claim_condition("Drained"), "Unknown");
    cr_expect_eq(harness_events(&h, "Evicted", "Evicted pod: Drifted"), 1, "the claim's disruption reason");
    pass("n1");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/guarded", true), "an hour from its start is not over");
    cr_expect_eq(h.cloud.deletes, 0, "no instance deletion before the drain is over");
    h.clock.ns += 2 * 3600 * KP_NS_PER_SEC; /* past the pod's hour */
    pass("n1");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/guarded", false), "evicted once its duration ran out");
    pass("n1");
    cr_expect_str_eq(claim_condition("Drained"), "True");
    cr_expect_str_eq(claim_condition("VolumesDetached"), "True");
    cr_expect_str_eq(claim_condition("InstanceTerminating"), "True");
    cr_expect_eq(h.cloud.deletes, 1);
}

Test(termination, the_instance_waits_for_volume_attachments)
{
    snprintf(h.cloud.instances[0], sizeof(h.cloud.instances[0]), "fake://n1");
    h.cloud.n_instances = 1;
    put_node("n1", "fake://n1");
    put_claim("c1", "fake://n1", "");
    harness_put(&h, KP_CK_VOLUMEATTACHMENT, VAS, "va-1",
                "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"va-1\"},"
                "\"spec\":{\"attacher\":\"ebs.csi.aws.com\",\"nodeName\":\"n1\",\"source\":"
                "{\"persistentVolumeName\":\"pv-1\"}}}");
    pass("n1");
    h.clock.ns += 10 * KP_NS_PER_SEC; /* past the minimum drain time */
    pass("n1");
    cr_expect_str_eq(claim_condition("Drained"), "True");
    cr_expect_str_eq(claim_condition("VolumesDetached"), "Unknown");
    cr_expect_eq(h.cloud.deletes, 0, "not terminated while a volume is attached");
    cr_expect_eq(harness_events(&h, "AwaitingVolumeDetachment", "va-1"), 1);
    fake_api_remove(h.fa, VAS "/va-1");
    cr_assert(harness_wait(&h, KP_CK_VOLUMEATTACHMENT, "va-1", false));
    pass("n1");
    cr_expect_str_eq(claim_condition("VolumesDetached"), "True");
    cr_expect_eq(h.cloud.deletes, 1);
    pass("n1"); /* the instance is gone: the finalizer goes */
    cJSON *node = harness_get(&h, KP_CK_NODE, "n1");
    char *text = node ? cJSON_PrintUnformatted(node) : NULL;
    cr_expect(!text || !strstr(text, "karpenter.sh/termination"), "finalizer removed");
    free(text);
    cJSON_Delete(node);
}

Test(termination, past_the_deadline_volumes_are_not_waited_for_and_pods_are_deleted)
{
    snprintf(h.cloud.instances[0], sizeof(h.cloud.instances[0]), "fake://n1");
    h.cloud.n_instances = 1;
    put_node("n1", "fake://n1");
    put_claim("c1", "fake://n1", "\"karpenter.sh/nodeclaim-termination-timestamp\":\"2026-01-01T00:05:00Z\"");
    put_pod("guarded", "n1", "\"karpenter.sh/do-not-disrupt\":\"true\"");
    harness_put(&h, KP_CK_VOLUMEATTACHMENT, VAS, "va-1",
                "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\"va-1\"},"
                "\"spec\":{\"attacher\":\"ebs.csi.aws.com\",\"nodeName\":\"n1\",\"source\":"
                "{\"persistentVolumeName\":\"pv-1\"}}}");
    pass("n1");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/guarded", true), "five minutes before the deadline it is waited for");
    h.clock.ns += (4 * 60 + 40) * KP_NS_PER_SEC; /* 20 s left: its 30 s of grace no longer fit */
    pass("n1");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/guarded", false),
              "30 s of grace do not fit before the deadline: deleted, do-not-disrupt notwithstanding");
    cr_expect_eq(harness_events(&h, "Disrupted", "This bypasses the PDB"), 1);
    cr_expect_eq(harness_events(&h, "TerminationGracePeriodExpiring", "All pods will be deleted by 2026-01-01T00:05:00Z"),
                 2, "on the node and on the claim");
    h.clock.ns += 60 * KP_NS_PER_SEC; /* past the deadline */
    pass("n1");
    cr_expect_str_eq(claim_condition("VolumesDetached"), "False");
    cr_expect_eq(h.cloud.deletes, 1, "terminated although va-1 is still attached");
}

static void refuse_evictions(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strcmp(req->method, "POST") && strstr(req->path, "/eviction")) {
        resp->status = 429;
        resp->body = strdup("{\"kind\":\"Status\",\"code\":429,\"reason\":\"TooManyRequests\","
                            "\"message\":\"Cannot evict pod as it would violate the pod's disruption budget.\"}");
    }
}

Test(termination, a_pdb_refusal_is_a_failed_draining_event_and_counted)
{
    put_node("n1", "fake://n1");
    put_claim("c1", "fake://n1", "");
    put_pod("web", "n1", "");
    fake_api_set_hook(h.fa, refuse_evictions, NULL);
    pass("n1");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/web", true));
    cr_expect_eq(harness_events(&h, "FailedDraining", "evicting pod violates a PDB (Pod=default/web)"), 1);
    kp_buf out = KP_BUF_INIT(1 << 20);
    kp_metrics_write(h.c.metrics, &out);
    cr_expect(strstr(kp_buf_cstr(&out), "karpenter_pods_eviction_requests_total{code=\"429\"} 1"), "%s",
              kp_buf_cstr(&out));
    kp_buf_free(&out);
}

/* Every drain pass that leaves pods behind says how many (Karpenter's
 * NodeDrainError), whatever keeps them. */
Test(termination, a_drain_pass_with_pods_left_says_how_many)
{
    put_node("n1", "fake://n1");
    put_claim("c1", "fake://n1", "");
    put_pod("web", "n1", "");
    put_pod("guarded", "n1", "\"karpenter.sh/do-not-disrupt\":\"true\"");
    fake_api_set_hook(h.fa, refuse_evictions, NULL);
    pass("n1");
    cr_expect_eq(harness_events(&h, "FailedDraining", "Failed to drain node, 2 pods are waiting to be evicted"), 1);
}

static void refuse_multiple_pdbs(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strcmp(req->method, "POST") && strstr(req->path, "/eviction")) {
        resp->status = 500;
        resp->body = strdup("{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\",\"message\":\"This pod "
                            "has more than one PodDisruptionBudget, which the eviction subresource does not "
                            "support.\"}");
    }
}

Test(termination, a_pod_under_several_pdbs_is_a_failed_draining_event)
{
    put_node("n1", "fake://n1");
    put_claim("c1", "fake://n1", "");
    put_pod("web", "n1", "");
    fake_api_set_hook(h.fa, refuse_multiple_pdbs, NULL);
    pass("n1");
    cr_expect(harness_wait(&h, KP_CK_POD, "default/web", true));
    cr_expect_eq(harness_events(&h, "FailedDraining",
                                "Failed to drain node, eviction does not support multiple PDBs (Pod=default/web)"),
                 1);
}
