/* Karpenter's consolidation command events, from the disruption controller
 * (controller/disruption_ctrl.c, disruption_explain.c) against the fake API
 * server: ConsolidationCandidate when a replacing consolidation is computed,
 * ConsolidationRejected when it is not found again after the validation
 * period, with the reason its validation failed for. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/disruption_ctrl.h"
#include "helpers/ctrl_harness.h"
#include "kube/objutil.h"

static harness h;
static kp_disruption_ctrl *d;

static void setup(void)
{
    harness_start(&h, HARNESS_T0);
    h.c.opts.consolidation_validation_ms = 15000;
    d = kp_disruption_ctrl_new();
}

static void teardown(void)
{
    d = kp_disruption_ctrl_free(d);
    harness_stop(&h);
}

TestSuite(consolidation_events, .init = setup, .fini = teardown, .timeout = 90);

static void put_pool(const char *budget)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"default\",\"uid\":"
             "\"p1\"},\"spec\":{\"disruption\":{\"consolidationPolicy\":\"WhenEmptyOrUnderutilized\","
             "\"consolidateAfter\":\"0s\",\"budgets\":[{\"nodes\":\"%s\"}]},\"template\":{\"spec\":{\"requirements\":"
             "[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"on-demand\"]}],"
             "\"nodeClassRef\":" HARNESS_OUR_CLASS ",\"expireAfter\":\"Never\"}}},\"status\":{" HARNESS_POOL_READY "}}",
             budget);
    harness_put(&h, KP_CK_NODEPOOL, HARNESS_POOLS, "default", json);
}

#define COND(t) "{\"type\":\"" t "\",\"status\":\"True\",\"reason\":\"x\",\"message\":\"\",\"lastTransitionTime\":\"2025-12-01T00:00:00Z\"}"

/* An initialized m5.2xlarge of pool default; `annotations` members of its metadata.annotations. */
static void put_node(const char *name, const char *annotations)
{
    char node[2048], claim[2048], labels[600];
    snprintf(labels, sizeof(labels),
             "\"karpenter.sh/nodepool\":\"default\",\"node.kubernetes.io/instance-type\":\"m5.2xlarge\","
             "\"topology.kubernetes.io/zone\":\"us-east-1a\",\"karpenter.sh/capacity-type\":\"on-demand\","
             "\"karpenter.sh/registered\":\"true\",\"karpenter.sh/initialized\":\"true\","
             "\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/os\":\"linux\"");
    snprintf(node, sizeof(node),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":"
             "{%s,\"kubernetes.io/hostname\":\"%s\"},\"annotations\":{%s},\"creationTimestamp\":"
             "\"2025-12-01T00:00:00Z\"},\"spec\":{\"providerID\":\"fake://%s\"},\"status\":{\"capacity\":{\"cpu\":"
             "\"8\",\"memory\":\"32Gi\",\"pods\":\"58\"},\"allocatable\":{\"cpu\":\"7910m\",\"memory\":\"30Gi\","
             "\"pods\":\"58\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, name, labels, name, annotations ? annotations : "", name);
    harness_put(&h, KP_CK_NODE, HARNESS_NODES, name, node);
    snprintf(claim, sizeof(claim),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\",\"uid\":"
             "\"c-%s\",\"labels\":{%s},\"creationTimestamp\":\"2025-12-01T00:00:00Z\"},\"spec\":{\"nodeClassRef\":"
             HARNESS_OUR_CLASS "},\"status\":{\"providerID\":\"fake://%s\",\"nodeName\":\"%s\",\"conditions\":["
             COND("Launched") "," COND("Registered") "," COND("Initialized") "," COND("Consolidatable") "]}}",
             name, name, labels, name, name);
    harness_put(&h, KP_CK_NODECLAIM, HARNESS_CLAIMS, name, claim);
}

/* A running pod on `node` asking for `cpu`. */
static void put_pod(const char *name, const char *node, const char *cpu)
{
    char json[1024], key[128];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
             "\"uid\":\"p-%s\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":"
             "\"rs\",\"uid\":\"rs1\",\"controller\":true}]},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":"
             "\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"256Mi\"}}}]},\"status\":{\"phase\":"
             "\"Running\"}}",
             name, name, node, cpu);
    snprintf(key, sizeof(key), "default/%s", name);
    harness_put(&h, KP_CK_POD, HARNESS_PODS, key, json);
}

static void pass(int64_t seconds)
{
    h.clock.ns += seconds * KP_NS_PER_SEC;
    kp_disruption_pass(&h.c, d);
    usleep(200000);
}

/* Events of `reason` on `kind` `name` whose message has `part`. */
static int events_on(const char *reason, const char *kind, const char *name, const char *part)
{
    harness_events(&h, reason, NULL); /* flush */
    cJSON *list = NULL;
    kp_kube_request req = {"GET", "/api/v1/events", NULL, NULL, NULL};
    cr_assert_eq(kp_kube_do(h.c.kube, &req, &list), 0);
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "items"))
    {
        const char *r = kp_obj_str(e, "reason"), *m = kp_obj_str(e, "message");
        n += r && !strcmp(r, reason) && !strcmp(kp_obj_str(e, "involvedObject.kind"), kind) &&
             !strcmp(kp_obj_str(e, "involvedObject.name"), name) && m && strstr(m, part);
    }
    cJSON_Delete(list);
    return n;
}

Test(consolidation_events, a_replacing_consolidation_names_its_candidate)
{
    put_pool("100%");
    put_node("big", NULL);
    put_pod("web", "big", "500m");
    pass(11);
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 0, "waiting out the validation period");
    cr_expect_eq(events_on("ConsolidationCandidate", "Node", "big",
                           "Consolidation candidate: replace: [big] -> [1 replacement] (savings: $"),
                 1);
    cr_expect_eq(events_on("ConsolidationCandidate", "NodeClaim", "big", "replace: [big] -> [1 replacement]"), 1);
    pass(16); /* found again after the period: it starts */
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 1);
    cr_expect_eq(events_on("ConsolidationRejected", "Node", "big", ""), 0);
}

Test(consolidation_events, a_candidate_that_stops_being_one_is_churn)
{
    put_pool("100%");
    put_node("big", NULL);
    put_pod("web", "big", "500m");
    pass(11);
    put_node("big", "\"karpenter.sh/do-not-disrupt\":\"true\"");
    pass(11);
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 0);
    cr_expect_eq(events_on("ConsolidationRejected", "Node", "big",
                           "Consolidation rejected: replace: [big] -> [1 replacement], reason: churn (savings: $"),
                 1);
    cr_expect_eq(events_on("ConsolidationRejected", "NodeClaim", "big", "reason: churn"), 1);
}

Test(consolidation_events, a_budget_closing_is_budget)
{
    put_pool("100%");
    put_node("big", NULL);
    put_pod("web", "big", "500m");
    pass(11);
    put_pool("0");
    pass(11);
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 0);
    cr_expect_eq(events_on("ConsolidationRejected", "Node", "big", "reason: budget"), 1);
}

Test(consolidation_events, pods_that_now_need_another_replacement_are_scheduling)
{
    put_pool("100%");
    put_node("big", NULL);
    put_pod("web", "big", "500m");
    pass(11);
    put_pod("web", "big", "3"); /* a bigger replacement now */
    pass(11);
    cr_expect_eq(kp_disruption_ctrl_in_flight(d), 0, "a new command waits out its own period");
    cr_expect_eq(events_on("ConsolidationRejected", "Node", "big", "reason: scheduling"), 1);
}

Test(consolidation_events, several_candidates_each_get_their_share)
{
    put_pool("100%");
    put_node("a", NULL), put_node("b", NULL);
    put_pod("wa", "a", "500m"), put_pod("wb", "b", "500m");
    pass(11);
    pass(11); /* computed again, still validating: written once (2 minutes' dedupe) */
    cr_expect_eq(events_on("ConsolidationCandidate", "Node", "a",
                           "Consolidation candidate: replace: [a] (part of 2-node consolidation) (savings: $"),
                 1);
    cr_expect_eq(events_on("ConsolidationCandidate", "NodeClaim", "b", "replace: [b] (part of 2-node consolidation)"),
                 1);
}
