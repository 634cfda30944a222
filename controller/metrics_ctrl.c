/* The controller's metric families (see metrics_ctrl.h). */
#include "controller/metrics_ctrl.h"

#include <stddef.h>

const double kp_ctrl_duration_buckets[30] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1,  1.5,
                                             2,     2.5,  3,     4,    5,   6,    8,   10,   15, 20,
                                             25,    30,   40,    50,   60,  120,  150, 300,  450, 600};

#define L(...) ((const char *const[]){__VA_ARGS__}), sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)
#define NONE NULL, 0

typedef struct family {
    kp_metric **slot;
    enum kp_metric_type type;
    const char *name, *help;
    const char *const *labels;
    size_t n_labels;
} family;

/* karpenter_consolidation_score's buckets (Karpenter's). */
static const double score_buckets[] = {0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0};

static int add(kp_metrics *r, const family *f)
{
    switch (f->type) {
    case KP_METRIC_COUNTER: return kp_metrics_counter(f->slot, r, f->name, f->help, f->labels, f->n_labels);
    case KP_METRIC_GAUGE: return kp_metrics_gauge(f->slot, r, f->name, f->help, f->labels, f->n_labels);
    case KP_METRIC_HISTOGRAM:
        return kp_metrics_histogram(f->slot, r, f->name, f->help, f->labels, f->n_labels, kp_ctrl_duration_buckets,
                                    30);
    }
    return -1;
}

int kp_ctrl_metrics_init(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family families[] = {
        {&m->nodeclaims_created, KP_METRIC_COUNTER, "karpenter_nodeclaims_created_total",
         "NodeClaims created, by why, NodePool and whether minValues was relaxed.",
         L("reason", "nodepool", "min_values_relaxed")},
        {&m->nodeclaims_terminated, KP_METRIC_COUNTER, "karpenter_nodeclaims_terminated_total",
         "NodeClaims whose termination finished, by NodePool, capacity type and zone.",
         L("nodepool", "capacity_type", "zone")},
        {&m->nodeclaims_disrupted, KP_METRIC_COUNTER, "karpenter_nodeclaims_disrupted_total",
         "NodeClaims disrupted, by reason, NodePool and capacity type.", L("reason", "nodepool", "capacity_type")},
        {&m->nodeclaims_unhealthy_disrupted, KP_METRIC_COUNTER, "karpenter_nodeclaims_unhealthy_disrupted_total",
         "Number of unhealthy nodeclaims disrupted in total by Karpenter, by the condition on the node that made it "
         "unhealthy, NodePool, capacity type and image.",
         L("condition", "nodepool", "capacity_type", "image_id")},
        {&m->nodeclaims_launched, KP_METRIC_COUNTER, "karpenter_nodeclaims_launched_total",
         "NodeClaims the cloud provider launched, by NodePool.", L("nodepool")},
        {&m->nodeclaims_registered, KP_METRIC_COUNTER, "karpenter_nodeclaims_registered_total",
         "NodeClaims whose Node registered, by NodePool.", L("nodepool")},
        {&m->nodeclaims_initialized, KP_METRIC_COUNTER, "karpenter_nodeclaims_initialized_total",
         "NodeClaims whose Node became initialized, by NodePool.", L("nodepool")},
        {&m->nodes_created, KP_METRIC_COUNTER, "karpenter_nodes_created_total",
         "Nodes that registered for a NodeClaim, by NodePool and zone.", L("nodepool", "zone")},
        {&m->nodes_terminated, KP_METRIC_COUNTER, "karpenter_nodes_terminated_total",
         "Nodes whose termination finished, by NodePool and zone.", L("nodepool", "zone")},
        {&m->scheduling_duration, KP_METRIC_HISTOGRAM, "karpenter_scheduler_scheduling_duration_seconds",
         "Time spent in scheduling simulations, by the controller that ran them.", L("controller")},
        {&m->unschedulable_pods, KP_METRIC_GAUGE, "karpenter_scheduler_unschedulable_pods_count",
         "Pods the last provisioning batch could not place.", L("controller")},
        {&m->queue_depth, KP_METRIC_GAUGE, "karpenter_scheduler_queue_depth",
         "Pods waiting in the current provisioning batch.", L("controller")},
        {&m->pods_bound_duration, KP_METRIC_HISTOGRAM, "karpenter_pods_bound_duration_seconds",
         "Time from a pod's creation to its binding, for pods that waited for capacity.", NONE},
        {&m->disruption_decisions, KP_METRIC_COUNTER, "karpenter_voluntary_disruption_decisions_total",
         "Number of disruption decisions performed. Labeled by disruption decision, reason, and consolidation type.",
         L("decision", "reason", "consolidation_type")},
        {&m->disruption_eligible, KP_METRIC_GAUGE, "karpenter_voluntary_disruption_eligible_nodes",
         "Number of nodes eligible for disruption by Karpenter. Labeled by disruption reason.", L("reason")},
        {&m->disruption_queue_failures, KP_METRIC_COUNTER, "karpenter_voluntary_disruption_queue_failures_total",
         "The number of times that an enqueued disruption decision failed. Labeled by disruption method.",
         L("decision", "reason", "consolidation_type")},
        {&m->allowed_disruptions, KP_METRIC_GAUGE, "karpenter_nodepools_allowed_disruptions",
         "The number of nodes for a given NodePool that can be concurrently disrupting at a point in time. Labeled "
         "by NodePool and reason.",
         L("nodepool", "reason")},
        {&m->nodes_consuming_budgets, KP_METRIC_GAUGE, "karpenter_nodepools_nodes_consuming_budgets",
         "The number of nodes for a given NodePool that are currently disrupting and consuming its budget. Labeled "
         "by NodePool and reason.",
         L("nodepool", "reason")},
        {&m->consolidation_moves, KP_METRIC_COUNTER, "karpenter_consolidation_moves_total",
         "Number of balanced consolidation moves. Labeled by decision, NodePool, and policy.",
         L("decision", "nodepool", "policy")},

        {&m->nodepool_usage, KP_METRIC_GAUGE, "karpenter_nodepools_usage",
         "Resources a NodePool's nodes have, by resource.", L("nodepool", "resource_type")},
        {&m->nodepool_limit, KP_METRIC_GAUGE, "karpenter_nodepools_limit", "A NodePool's limits, by resource.",
         L("nodepool", "resource_type")},
        {&m->cluster_synced, KP_METRIC_GAUGE, "karpenter_cluster_state_synced",
         "1 when every watched kind has been listed into the cache.", NONE},
        {&m->cluster_node_count, KP_METRIC_GAUGE, "karpenter_cluster_state_node_count",
         "Nodes and in-flight NodeClaims the controller knows of.", NONE},
        {&m->build_info, KP_METRIC_GAUGE, "karpenter_build_info",
         "A metric with a constant '1' value labeled by the version and commit karpenter-c was built from "
         "(goversion: the C compiler).",
         L("version", "goversion", "goarch", "commit")},
        {&m->cloud_duration, KP_METRIC_HISTOGRAM, "karpenter_cloudprovider_duration_seconds",
         "Time spent in cloud provider calls.", L("controller", "method", "provider")},
        {&m->cloud_errors, KP_METRIC_COUNTER, "karpenter_cloudprovider_errors_total", "Cloud provider calls that failed.",
         L("controller", "method", "provider", "error")},
        {&m->eviction_requests, KP_METRIC_COUNTER, "karpenter_pods_eviction_requests_total",
         "The number of pod eviction requests, by the HTTP status the Eviction API answered.", L("code")},
        {&m->pods_drained, KP_METRIC_COUNTER, "karpenter_pods_drained_total",
         "The number of pods drained during node termination, by the disruption reason.", L("reason")},
        {&m->nodes_drained, KP_METRIC_COUNTER, "karpenter_nodes_drained_total",
         "The number of nodes drained by Karpenter, by NodePool.", L("nodepool")},
        {&m->interruption_messages, KP_METRIC_COUNTER, "karpenter_interruption_received_messages_total",
         "Interruption messages received, by type.", L("message_type")},
        {&m->nodes_allocatable, KP_METRIC_GAUGE, "karpenter_nodes_allocatable",
         "Allocatable resources of the nodes Karpenter manages.",
         L("node_name", "nodepool", "resource_type", "instance_type", "capacity_type", "zone")},
        {&m->pods_state, KP_METRIC_GAUGE, "karpenter_pods_state", "Pods and their phase (1 per pod).",
         L("name", "namespace", "node", "nodepool", "phase")},
        {&m->interruption_deleted, KP_METRIC_COUNTER, "karpenter_interruption_deleted_messages_total",
         "Interruption messages handled and removed from the source.", NONE},
        {&m->interruption_queue_duration, KP_METRIC_HISTOGRAM, "karpenter_interruption_message_queue_duration_seconds",
         "Time from the cloud sending an interruption message to its handling.", NONE},
    };
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        int err = add(r, &families[i]);
        if (err < 0)
            return err;
    }
    static const char *const score_labels[] = {"decision", "nodepool", "policy"};
    return kp_metrics_histogram(&m->consolidation_score, r, "karpenter_consolidation_score",
                                "Score of balanced consolidation moves. Labeled by decision, NodePool, and policy.",
                                score_labels, 3, score_buckets, sizeof(score_buckets) / sizeof(score_buckets[0]));
}

void kp_ctrl_count(kp_metric *metric, const char *const *labels)
{
    if (metric)
        kp_counter_inc(kp_metric_with(metric, labels));
}

void kp_ctrl_observe(kp_metric *metric, const char *const *labels, double value)
{
    if (metric)
        kp_histogram_observe(kp_metric_with(metric, labels), value);
}

void kp_ctrl_set(kp_metric *metric, const char *const *labels, double value)
{
    if (metric)
        kp_gauge_set(kp_metric_with(metric, labels), value);
}
