/* The provisioner (controller/provisioner.c) against the fake API server and
 * the fake cloud provider: which pods a batch looks at, the NodeClaims it
 * writes (NodePool label, node class, template hash), the pods' events, a
 * claim in flight taking the next batch's pods, NodePools that are another
 * provider's or not Ready, and a create the API server refuses. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/nodepool_hash.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "kube/objutil.h"
#include "controller/metrics_ctrl.h"
#include "controller/provisioner.h"
#include "helpers/ctrl_harness.h"
#include "helpers/assert.h"

#define CLAIMS HARNESS_CLAIMS

static harness h;
static kp_provisioner *prov;

static void setup(void)
{
    harness_start(&h, HARNESS_T0);
    prov = kp_provisioner_new(&h.c);
    h.c.provisioner = prov;
}

static void teardown(void)
{
    prov = kp_provisioner_free(prov);
    harness_stop(&h);
}

TestSuite(provisioner, .init = setup, .fini = teardown, .timeout = 90);

/* NodePool `name` of node class `class_ref`, on-demand amd64; `status`
 * (may be NULL) its status members. */
static void put_pool(const char *name, const char *class_ref, const char *status)
{
    harness_put_pool(
        &h, (harness_obj){.name = name,
                          .class_ref = class_ref,
                          .template =
                              ",\"requirements\":[{\"key\":\"karpenter.sh/capacity-type\","
                              "\"operator\":\"In\",\"values\":[\"on-demand\"]},{\"key\":"
                              "\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"amd64\"]}]",
                          .status = status});
}
/* Pod `name` in namespace default: `meta_extra` goes inside its metadata
 * (starting with a comma, or ""), then its spec and status as given. */
static void put_pod_raw(const char *name, const char *meta_extra, const char *spec,
                        const char *status)
{
    char json[2048], key[128];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"default\","
             "\"uid\":\"p-%s\"%s},\"spec\":%s,\"status\":%s}",
             name, name, meta_extra, spec, status);
    snprintf(key, sizeof(key), "default/%s", name);
    harness_put(&h, KP_CK_POD, HARNESS_PODS, key, json);
}

#define UNSCHEDULABLE                                                                              \
    "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","      \
    "\"reason\":"                                                                                  \
    "\"Unschedulable\"}]}"

static const char *spec_cpu(const char *cpu)
{
    static char buf[256];
    snprintf(buf, sizeof(buf),
             "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\","
             "\"memory\":\"1Gi\"}}}]}",
             cpu);
    return buf;
}

/* A pending pod kube-scheduler marked Unschedulable. */
static void put_pending(const char *name, const char *cpu)
{
    put_pod_raw(name, "", spec_cpu(cpu), UNSCHEDULABLE);
}

static kp_provision_result run(void)
{
    kp_provision_result r;
    KP_ASSERT_OK(kp_provisioner_run_once(prov, &r));
    return r;
}

/* run(), with what it logged at info and above in *log (free it). */
static kp_provision_result run_logged(char **log)
{
    size_t len = 0;
    FILE *out = open_memstream(log, &len);
    cr_assert_not_null(out);
    kp_log_set_output(out);
    kp_log_set_level(KP_LOG_INFO);
    kp_provision_result r = run();
    kp_log_set_output(stderr);
    fclose(out);
    return r;
}

/* The body of the nth NodeClaim the provisioner posted, parsed. */
static cJSON *posted_claim(long nth)
{
    fake_logged req;
    cr_assert(fake_api_find(h.fa, "POST", CLAIMS, nth, &req), "NodeClaim %ld was posted", nth);
    cJSON *obj = cJSON_Parse(req.body);
    cr_assert_not_null(obj, "%s", req.body);
    return obj;
}

Test(provisioner, a_pending_pod_gets_a_nodeclaim_of_its_nodepool)
{
    put_pool("default", NULL, NULL);
    put_pending("web", "1");
    kp_provision_result r = run();
    cr_expect_eq(r.pending, 1);
    cr_expect_eq(r.claims_created, 1);
    cr_expect_eq(r.claims_failed, 0);
    cr_expect_eq(r.unschedulable, 0);
    cr_assert_eq(fake_api_count(h.fa, "POST", CLAIMS), 1);
    cJSON *claim = posted_claim(0);
    cr_expect_str_eq(kp_obj_label(claim, KP_LABEL_NODEPOOL), "default");
    cr_expect_str_eq(kp_obj_str(claim, "spec.nodeClassRef.group"), "karpenter.test");
    cr_expect_str_eq(kp_obj_str(claim, "spec.nodeClassRef.kind"), "FakeNodeClass");
    /* The template hash is the NodePool's as the NodePool controller computes it. */
    cJSON *pool = harness_get(&h, KP_CK_NODEPOOL, "default");
    char want[KP_NODEPOOL_HASH_LEN];
    kp_nodepool_hash(pool, want, sizeof(want));
    cr_expect_str_eq(kp_obj_annotation(claim, KP_ANNOTATION_NODEPOOL_HASH), want);
    cJSON_Delete(pool);
    cJSON_Delete(claim);
    cr_expect_eq(harness_events(&h, "Nominated", "Pod should schedule on: nodeclaim/"), 1);
    cr_expect_eq(h.cloud.creates, 0, "the provisioner writes claims; the lifecycle launches them");
}

Test(provisioner, the_nodepools_hash_annotation_is_used_when_current)
{
    harness_put_pool(&h, (harness_obj){.name = "default",
                                       .annotations =
                                           "\"" KP_ANNOTATION_NODEPOOL_HASH
                                           "\":\"1234\",\"" KP_ANNOTATION_NODEPOOL_HASH_VERSION
                                           "\":\"" KP_NODEPOOL_HASH_VERSION "\""});
    put_pending("web", "1");
    run();
    cJSON *claim = posted_claim(0);
    cr_expect_str_eq(kp_obj_annotation(claim, KP_ANNOTATION_NODEPOOL_HASH), "1234");
    cr_expect_str_eq(kp_obj_annotation(claim, KP_ANNOTATION_NODEPOOL_HASH_VERSION),
                     KP_NODEPOOL_HASH_VERSION);
    cJSON_Delete(claim);
}

Test(provisioner, a_claim_in_flight_takes_the_next_batchs_pods)
{
    put_pool("default", NULL, NULL);
    put_pending("web", "1");
    cr_assert_eq(run().claims_created, 1);
    kp_provision_result r = run();
    cr_expect_eq(r.pending, 1, "still pending: kube-scheduler has no node yet");
    cr_expect_eq(r.claims_created, 0, "not placed a second time");
    cr_expect_eq(r.on_existing, 1, "placed on the claim in flight");
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 1);
}

/* A registered, initialized node "n1" of pool default, made for NodeClaim
 * "c1", with room for a 1-CPU pod. */
static void put_registered_node(void)
{
    const char *labels =
        "\"karpenter.sh/nodepool\":\"default\",\"node.kubernetes.io/instance-type\":\"m5.large\","
        "\"topology.kubernetes.io/zone\":\"us-east-1a\",\"karpenter.sh/"
        "capacity-type\":\"on-demand\","
        "\"karpenter.sh/registered\":\"true\",\"karpenter.sh/initialized\":\"true\","
        "\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/os\":\"linux\"";
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"n-"
             "n1\",\"labels\":"
             "{%s,\"kubernetes.io/hostname\":\"n1\"}},\"spec\":{\"providerID\":\"fake://"
             "c1\"},\"status\":{"
             "\"capacity\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"29\"},\"allocatable\":{"
             "\"cpu\":\"1930m\","
             "\"memory\":\"7Gi\",\"pods\":\"29\"},\"conditions\":[{\"type\":\"Ready\",\"status\":"
             "\"True\"}]}}",
             labels);
    harness_put(&h, KP_CK_NODE, HARNESS_NODES, "n1", json);
    snprintf(
        json, sizeof(json),
        "{\"apiVersion\":\"karpenter.sh/"
        "v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"c1\",\"uid\":"
        "\"c-c1\",\"labels\":{%s}},\"spec\":{\"nodeClassRef\":" HARNESS_OUR_CLASS "},\"status\":{"
        "\"providerID\":\"fake://c1\",\"nodeName\":\"n1\",\"conditions\":["
        "{\"type\":\"Launched\",\"status\":\"True\",\"reason\":\"Launched\",\"message\":\"\"},"
        "{\"type\":\"Registered\",\"status\":\"True\",\"reason\":\"Registered\",\"message\":\"\"},"
        "{\"type\":\"Initialized\",\"status\":\"True\",\"reason\":\"Initialized\",\"message\":\"\"}"
        "]}}",
        labels);
    harness_put(&h, KP_CK_NODECLAIM, CLAIMS, "c1", json);
}

/* Karpenter names both the NodeClaim and its Node (NominatePodEvent). */
Test(provisioner, a_pod_nominated_onto_a_node_names_its_nodeclaim_too)
{
    put_pool("default", NULL, NULL);
    put_registered_node();
    put_pending("web", "1");
    kp_provision_result r = run();
    cr_expect_eq(r.on_existing, 1, "placed on n1");
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(harness_events(&h, "Nominated", "Pod should schedule on: nodeclaim/c1, node/n1"),
                 1);
}

Test(provisioner, pods_it_does_not_provision_for)
{
    put_pool("default", NULL, NULL);
    put_pod_raw("waiting", "", spec_cpu("1"), "{\"phase\":\"Pending\"}"); /* not marked yet */
    put_pod_raw("bound", "", "{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}",
                UNSCHEDULABLE);
    put_pod_raw(
        "done", "", spec_cpu("1"),
        "{\"phase\":\"Succeeded\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
        "\"reason\":\"Unschedulable\"}]}");
    put_pod_raw(
        "daemon",
        ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"ds\","
        "\"uid\":\"ds1\",\"controller\":true}]",
        spec_cpu("1"), UNSCHEDULABLE);
    put_pod_raw("going", ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"finalizers\":[\"x\"]",
                spec_cpu("1"), UNSCHEDULABLE);
    kp_provision_result r = run();
    cr_expect_eq(r.pending, 0);
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 0);
}

Test(provisioner, the_pod_informer_trigger_uses_the_same_rule)
{
    static const struct {
        const char *json;
        bool want;
    } cases[] = {
        {"{\"status\":" UNSCHEDULABLE "}", true},
        {"{\"status\":{\"phase\":\"Pending\"}}", false},
        {"{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
         "\"SchedulingGated\"}]}}",
         false},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":" UNSCHEDULABLE "}", false},
        {"{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"status\":" UNSCHEDULABLE
         "}",
         false},
        {"{\"status\":{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
         "\"False\","
         "\"reason\":\"Unschedulable\"}]}}",
         false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *pod = cJSON_Parse(cases[i].json);
        cr_assert_not_null(pod, "case %zu", i);
        cr_expect_eq(kp_pod_json_provisionable(pod), cases[i].want, "case %zu: %s", i,
                     cases[i].json);
        cJSON_Delete(pod);
    }
}

Test(provisioner, a_pod_that_fits_nowhere_is_told_why)
{
    put_pool("default", NULL, NULL);
    put_pending("huge", "10000");
    kp_provision_result r = run();
    cr_expect_eq(r.pending, 1);
    cr_expect_eq(r.unschedulable, 1);
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 0);
    cr_expect_eq(harness_events(&h, "FailedScheduling", "Failed to schedule pod, "), 1);
}

Test(provisioner, another_providers_nodepool_is_not_provisioned_for)
{
    put_pool("theirs", HARNESS_AWS_CLASS, NULL);
    put_pending("web", "1");
    size_t patches = fake_api_count(h.fa, "PATCH", NULL);
    kp_provision_result r = run();
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(r.unschedulable, 0,
                 "no NodePool of ours: nothing is placed, the pod stays pending");
    cr_expect_eq(harness_events(&h, "FailedScheduling", NULL), 0, "and it is not ours to report");
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 0);
    cr_expect_eq(fake_api_count(h.fa, "PATCH", NULL), patches, "their NodePool is not written");
}

Test(provisioner, a_nodepool_that_is_not_ready_provisions_nothing)
{
    put_pool("default", NULL,
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":"
             "\"UnhealthyDependents\",\"message\":\"NodeClassReady\",\"lastTransitionTime\":"
             "\"2026-01-01T00:00:00Z\"}]");
    put_pending("web", "1");
    kp_provision_result r = run();
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(r.unschedulable, 0, "no dynamic NodePool: nothing is placed");
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 0);
}

/* A NodePool just created has no status until the NodePool controller writes
 * it: Karpenter's provisioner waits for Ready, and so do we (a claim launched
 * before then was reset to AwaitingReconciliation by the first status pass,
 * leaving NodeRegistrationHealthy Unknown for good). */
Test(provisioner, a_nodepool_without_status_yet_provisions_nothing)
{
    put_pool("default", NULL, "\"nodes\":0");
    put_pending("web", "1");
    char *log = NULL;
    kp_provision_result r = run_logged(&log);
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(fake_api_count(h.fa, "POST", CLAIMS), 0);
    /* As Karpenter: with no dynamic NodePool left it places nothing, so it
     * neither reports the pod unschedulable nor writes it an event. */
    cr_expect_eq(r.unschedulable, 0);
    cr_expect_eq(harness_events(&h, "FailedScheduling", NULL), 0);
    cr_expect(strstr(log, "\"level\":\"ERROR\"") &&
                  strstr(log, "\"message\":\"ignoring nodepool, not ready\"") &&
                  strstr(log, "\"NodePool\":\"default\""),
              "the NodePool is named at error level: %s", log);
    cr_expect(strstr(log, "\"message\":\"no dynamic nodepools found\"") != NULL, "%s", log);
    free(log);
    /* ... and counts the pod decided (Karpenter's MarkPodSchedulingDecisions). */
    cr_expect_eq(
        kp_metric_series_value(kp_metric_with(h.m.pods_scheduling_decision_duration, NULL)), 1);
}

/* The NodePools that are Ready still provision; the others are named. */
Test(provisioner, a_nodepool_not_ready_is_named_while_the_others_provision)
{
    put_pool("default", NULL, NULL);
    put_pool("young", NULL, "\"nodes\":0");
    put_pending("web", "1");
    char *log = NULL;
    kp_provision_result r = run_logged(&log);
    cr_expect_eq(r.claims_created, 1);
    const char *line = strstr(log, "ignoring nodepool, not ready");
    cr_assert_not_null(line, "%s", log);
    cr_expect(strncmp(strstr(line, "\"NodePool\":"), "\"NodePool\":\"young\"", 18) == 0, "%s", log);
    cr_expect_null(strstr(line + 1, "ignoring nodepool"), "only the NodePool not Ready: %s", log);
    cr_expect(strstr(log, "no dynamic nodepools found") == NULL, "%s", log);
    free(log);
}

static void refuse_claims(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->method, "POST") != 0 || strcmp(req->path, CLAIMS) != 0) return;
    resp->status = 403;
    resp->body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                        "\"reason\":\"Forbidden\","
                        "\"message\":\"refused by the test\",\"code\":403}");
}

Test(provisioner, a_refused_create_is_counted_and_names_no_claim)
{
    put_pool("default", NULL, NULL);
    put_pending("web", "1");
    fake_api_set_hook(h.fa, refuse_claims, NULL);
    kp_provision_result r = run();
    fake_api_set_hook(h.fa, NULL, NULL);
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(r.claims_failed, 1);
    cr_expect_eq(harness_events(&h, "Nominated", NULL), 0,
                 "no event names a claim that does not exist");
    r = run();
    cr_expect_eq(r.claims_created, 1, "the next batch tries again");
}

/* A NodePool with these requirements (JSON members of its template spec). */
static void put_pool_requiring(const char *name, const char *requirements)
{
    harness_put_pool(&h, (harness_obj){.name = name, .template = requirements});
}

#define NO_TYPES "NodePool requirements filtered out all compatible available instance types"

/* Karpenter's scheduler: NoCompatibleInstanceTypes on the NodePool, once a
 * minute (its dedupe), and the pods go to the NodePools that can launch. */
Test(provisioner, a_nodepool_whose_requirements_leave_no_instance_type_says_so)
{
    put_pool("default", NULL, NULL);
    put_pool_requiring("nothing",
                       ",\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\","
                       "\"operator\":\"In\",\"values\":[\"no-such.type\"]}]");
    put_pending("web", "1");
    kp_provision_result r = run();
    cr_expect_eq(r.claims_created, 1, "the other NodePool launches");
    put_pending("web2", "1");
    run();
    cr_expect_eq(harness_events(&h, "NoCompatibleInstanceTypes", NO_TYPES), 1,
                 "once a minute at most");
    cr_expect_eq(harness_events(&h, "NoCompatibleInstanceTypes", "minValues"), 0);
    cJSON *list = NULL;
    kp_kube_request req = {"GET", "/api/v1/events", NULL, NULL, NULL};
    KP_ASSERT_OK(kp_kube_do(h.c.kube, &req, &list));
    const cJSON *e;
    int on_pool = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "items"))
    {
        if (strcmp(kp_obj_str(e, "reason"), "NoCompatibleInstanceTypes") != 0) continue;
        cr_expect_str_eq(kp_obj_str(e, "type"), "Warning");
        cr_expect_str_eq(kp_obj_str(e, "involvedObject.kind"), "NodePool");
        cr_expect_str_eq(kp_obj_str(e, "involvedObject.name"), "nothing");
        on_pool++;
    }
    cr_expect_eq(on_pool, 1);
    cJSON_Delete(list);
}

Test(provisioner, a_nodepool_whose_types_cannot_meet_min_values_says_so)
{
    put_pool_requiring(
        "few", ",\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\","
               "\"operator\":\"In\",\"values\":[\"m5.large\",\"m5.xlarge\"],\"minValues\":3}]");
    put_pending("web", "1");
    kp_provision_result r = run();
    cr_expect_eq(r.claims_created, 0);
    cr_expect_eq(harness_events(&h, "NoCompatibleInstanceTypes",
                                NO_TYPES " due to minValues incompatibility"),
                 1);
}

Test(provisioner, min_values_best_effort_keeps_the_nodepool)
{
    h.c.opts.min_values_best_effort = true;
    put_pool_requiring(
        "few", ",\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\","
               "\"operator\":\"In\",\"values\":[\"m5.large\",\"m5.xlarge\"],\"minValues\":3}]");
    put_pending("web", "1");
    kp_provision_result r = run();
    cr_expect_eq(r.claims_created, 1);
    cr_expect_eq(harness_events(&h, "NoCompatibleInstanceTypes", NULL), 0);
}
