/*
 * The change-counted families (controller/status_metrics.c and
 * pod_metrics.c): a condition transition counts once however often the
 * same object is seen, with operatorpkg's labels and the deprecated
 * group/kind families beside the per-kind ones; only the leader counts; a
 * pod's bind and start are observed once, from its own timestamps.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "controller/metrics_ctrl.h"
#include "controller/pod_metrics.h"
#include "controller/status_metrics.h"

static kp_metrics *registry;
static kp_ctrl_metrics m;

static void setup(void)
{
    registry = kp_metrics_new();
    cr_assert_eq(kp_ctrl_metrics_init(&m, registry), 0, "%s", kp_error_last());
    cr_assert_eq(kp_ctrl_metrics_init_status(&m, registry, "karpenter.k8s.aws", "EC2NodeClass"), 0);
    kp_ctrl_metrics_lead(&m, "karpenter-leader-election", true);
}

static void teardown(void)
{
    kp_ctrl_metrics_fini(&m);
    registry = kp_metrics_free(registry);
}

TestSuite(metrics_status, .init = setup, .fini = teardown);

static cJSON *claim(const char *launched, const char *since)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"c1\",\"labels\":{\"karpenter.sh/nodepool\":\"default\","
             "\"karpenter.k8s.aws/ec2nodeclass\":\"nc\"}},\"status\":{\"conditions\":[{\"type\":\"Launched\","
             "\"status\":\"%s\",\"reason\":\"%s\",\"lastTransitionTime\":\"%s\"}]}}",
             launched, strcmp(launched, "True") ? "Pending" : "Launched", since);
    return cJSON_Parse(json);
}

static double value(kp_metric *f, const char *const *labels)
{
    return kp_metric_series_value(kp_metric_with(f, labels));
}

Test(metrics_status, a_transition_counts_once)
{
    cJSON *unknown = claim("Unknown", "2026-01-01T00:00:00Z"), *launched = claim("True", "2026-01-01T00:00:30Z");
    kp_status_metrics_update(&m, KP_STATUS_NODECLAIM, NULL, unknown);  /* seen: the condition is new */
    kp_status_metrics_update(&m, KP_STATUS_NODECLAIM, unknown, launched);
    kp_status_metrics_update(&m, KP_STATUS_NODECLAIM, launched, launched); /* a resync: no change */
    kp_status_metrics_update(&m, KP_STATUS_NODECLAIM, launched, launched);
    const char *t[] = {"Launched", "True", "Launched", "nc", "default"};
    cr_expect_eq(value(m.status[KP_STATUS_NODECLAIM].transitions, t), 1);
    const char *u[] = {"Launched", "Unknown", "Pending", "nc", "default"};
    cr_expect_eq(value(m.status[KP_STATUS_NODECLAIM].transitions, u), 1);
    const char *held[] = {"Launched", "Unknown", "nc", "default"};
    kp_metric_series *s = kp_metric_with(m.status[KP_STATUS_NODECLAIM].transition_seconds, held);
    cr_expect_eq(kp_metric_series_value(s), 1);
    cr_expect_float_eq(kp_metric_series_sum(s), 30.0, 1e-9, "Unknown lasted 30 s");
    const char *d[] = {"Launched", "True", "Launched", "karpenter.sh", "NodeClaim"};
    cr_expect_eq(value(m.status_deprecated.transitions, d), 1, "the deprecated family counts it too");
    cJSON_Delete(unknown), cJSON_Delete(launched);
}

Test(metrics_status, only_the_leader_counts)
{
    kp_ctrl_metrics_lead(&m, "karpenter-leader-election", false);
    cJSON *launched = claim("True", "2026-01-01T00:00:30Z");
    kp_status_metrics_update(&m, KP_STATUS_NODECLAIM, NULL, launched);
    cr_expect_eq(kp_metric_series_count(m.status[KP_STATUS_NODECLAIM].transitions), 0);
    const char *lease[] = {"karpenter-leader-election"};
    cr_expect_eq(value(m.leader_status, lease), 0);
    cJSON_Delete(launched);
}

Test(metrics_status, the_family_names_follow_the_node_class)
{
    cr_expect_not_null(kp_metrics_find(registry, "operator_ec2nodeclass_status_condition_count"));
    cr_expect_not_null(kp_metrics_find(registry, "operator_nodeclaim_termination_duration_seconds"));
    cr_expect_not_null(kp_metrics_find(registry, "operator_status_condition_transitions_total"));
    kp_metric_desc d[256];
    size_t n = kp_metrics_describe(registry, d, 256);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].name, "operator_node_status_condition_count")) {
            found = true;
            cr_expect_eq(d[i].n_labels, 8);
            cr_expect_str_eq(d[i].labels[5], "karpenter_k8s_aws_ec2nodeclass");
            cr_expect_str_eq(d[i].labels[7], "karpenter_sh_initialized");
        }
    cr_expect(found);
}

Test(metrics_status, termination_is_observed_when_the_object_goes)
{
    cJSON *c = cJSON_Parse("{\"metadata\":{\"name\":\"c1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
                           "\"labels\":{\"karpenter.sh/nodepool\":\"default\"}}}");
    int64_t at = INT64_C(1767225600000000000) + INT64_C(42000000000); /* 42 s later */
    kp_status_metrics_delete(&m, KP_STATUS_NODECLAIM, c, at);
    const char *labels[] = {"", "default"};
    kp_metric_series *s = kp_metric_with(m.status[KP_STATUS_NODECLAIM].termination_duration, labels);
    cr_expect_eq(kp_metric_series_value(s), 1);
    cr_expect_float_eq(kp_metric_series_sum(s), 42.0, 1e-9);
    cJSON_Delete(c);
}

/* ------------------------------------------------------------ pods */

static cJSON *pod(const char *phase, const char *scheduled, const char *ready)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
             "\"status\":{\"phase\":\"%s\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"%s\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:10Z\"},{\"type\":\"Ready\",\"status\":\"%s\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:25Z\"}]}}",
             phase, scheduled, ready);
    return cJSON_Parse(json);
}

Test(metrics_status, a_pod_bind_and_start_are_observed_once)
{
    cJSON *pending = pod("Pending", "False", "False"), *running = pod("Running", "True", "True");
    kp_pod_metrics_update(m.pods, pending);
    kp_pod_metrics_update(m.pods, running);
    kp_pod_metrics_update(m.pods, running); /* seen again */
    kp_metric_series *bound = kp_metric_with(m.pods_bound_duration, NULL);
    kp_metric_series *started = kp_metric_with(m.pods_startup_duration, NULL);
    cr_expect_eq(kp_metric_series_value(bound), 1);
    cr_expect_float_eq(kp_metric_series_sum(bound), 10.0, 1e-9, "created to PodScheduled");
    cr_expect_eq(kp_metric_series_value(started), 1);
    cr_expect_float_eq(kp_metric_series_sum(started), 25.0, 1e-9, "created to Ready");
    cJSON_Delete(pending), cJSON_Delete(running);
}

Test(metrics_status, a_pod_never_seen_pending_is_not_timed)
{
    cJSON *running = pod("Running", "True", "True");
    kp_pod_metrics_update(m.pods, running);
    cr_expect_eq(kp_metric_series_value(kp_metric_with(m.pods_bound_duration, NULL)), 0);
    cJSON_Delete(running);
}

Test(metrics_status, the_scheduling_decision_is_timed_from_the_first_sighting)
{
    int64_t t0 = INT64_C(1767225600000000000);
    kp_pod_metrics_seen(m.pods, "ns/q", t0);
    kp_pod_metrics_seen(m.pods, "ns/q", t0 + INT64_C(1000000000)); /* a later batch: not a new sighting */
    kp_pod_metrics_decided(m.pods, "ns/q", true, t0 + INT64_C(3000000000));
    kp_pod_metrics_decided(m.pods, "ns/q", true, t0 + INT64_C(9000000000)); /* decided again: not observed */
    kp_metric_series *s = kp_metric_with(m.pods_scheduling_decision_duration, NULL);
    cr_expect_eq(kp_metric_series_value(s), 1);
    cr_expect_float_eq(kp_metric_series_sum(s), 3.0, 1e-9);
}
