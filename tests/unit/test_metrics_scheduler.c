/*
 * Karpenter's effective zone of a pending pod (controller/scheduler_metrics.c,
 * karpenter_scheduler_pending_pods_by_effective_zone_count): one zone its node
 * selector and required affinity leave it, "flexible" for several or none
 * stated, "none" when they contradict each other.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "controller/metrics_ctrl.h"
#include "controller/scheduler_metrics.h"
#include "helpers/assert.h"
#include "base/buf.h"
#include "metrics/metrics.h"
#include "helpers/scenario.h"

#define POOL                                                                                                           \
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n"         \
    "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n---\n"

#define POD(name, spec)                                                                                                \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\nspec:\n" spec                         \
    "  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n"                                       \
    "status: {phase: Pending, conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable}]}\n---\n"

static const char *zone_of(const kp_scenario *s, const char *pod, char *buf, size_t size)
{
    for (uint32_t i = 0; i < s->snap->n_pods; i++)
        if (!strcmp(s->snap->pods[i].ns_name, pod) || !strcmp(strchr(s->snap->pods[i].ns_name, '/') + 1, pod))
            return kp_sched_effective_zone(s->snap, &s->snap->pods[i], buf, size);
    cr_assert_fail("no pod %s", pod);
    return NULL;
}

Test(metrics_scheduler, effective_zones)
{
    kp_scenario s;
    const char *yaml =
        POOL POD("anywhere", "") POD("one", "  nodeSelector: {topology.kubernetes.io/zone: us-west-2a}\n")
            POD("two", "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {"
                       "nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, "
                       "values: [us-west-2a, us-west-2b]}]}]}}}\n")
                POD("narrowed", "  nodeSelector: {topology.kubernetes.io/zone: us-west-2b}\n"
                                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {"
                                "nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: "
                                "In, values: [us-west-2a, us-west-2b]}]}]}}}\n")
                    POD("contradiction", "  nodeSelector: {topology.kubernetes.io/zone: us-west-2c}\n"
                                         "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {"
                                         "nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, "
                                         "operator: NotIn, values: [us-west-2c]}]}]}}}\n");
    int err = kp_scenario_run(&s, yaml, "builtin", NULL);
    cr_assert_eq(err, 0, "%s", kp_error_last());
    char buf[64];
    cr_expect_str_eq(zone_of(&s, "anywhere", buf, sizeof(buf)), "flexible");
    cr_expect_str_eq(zone_of(&s, "one", buf, sizeof(buf)), "us-west-2a");
    cr_expect_str_eq(zone_of(&s, "two", buf, sizeof(buf)), "flexible");
    cr_expect_str_eq(zone_of(&s, "narrowed", buf, sizeof(buf)), "us-west-2b");
    cr_expect_str_eq(zone_of(&s, "contradiction", buf, sizeof(buf)), "none");
    kp_scenario_free(&s);
}

/* The provisioner's scheduling-duration series is served from start-up with
 * nothing observed: Prometheus' rate() then counts the first simulations as
 * an increase (a series that first appears already holding them shows none,
 * and the dashboards' scheduling-latency panels stayed empty). */
Test(metrics_scheduler, provisioner_duration_served_from_start)
{
    kp_metrics *registry = kp_metrics_new();
    kp_ctrl_metrics m;
    KP_ASSERT_OK(kp_ctrl_metrics_init(&m, registry));
    kp_buf out = KP_BUF_INIT(1 << 24);
    KP_ASSERT_OK(kp_metrics_write(registry, &out));
    cr_expect(strstr(kp_buf_cstr(&out),
                     "karpenter_scheduler_scheduling_duration_seconds_count{controller=\"provisioner\"} 0\n"),
              "no zero series for the provisioner");
    kp_buf_free(&out);
    kp_ctrl_metrics_fini(&m);
    kp_metrics_free(registry);
}
