/*
 * The controller's metrics, under Karpenter's names and labels so that its
 * dashboards and alerts work unchanged (karpenter_nodeclaims_created_total,
 * karpenter_scheduler_scheduling_duration_seconds, ...). One registry for
 * the process, served on /metrics.
 */
#ifndef KP_CONTROLLER_METRICS_CTRL_H
#define KP_CONTROLLER_METRICS_CTRL_H

#include "metrics/metrics.h"

typedef struct kp_ctrl_metrics {
    kp_metric *nodeclaims_created;    /* reason, nodepool, min_values_relaxed */
    kp_metric *nodeclaims_terminated; /* nodepool, capacity_type, zone */
    kp_metric *nodeclaims_disrupted;  /* reason, nodepool, capacity_type */
    kp_metric *nodeclaims_unhealthy_disrupted; /* condition, nodepool, capacity_type, image_id */
    kp_metric *nodeclaims_launched;   /* nodepool */
    kp_metric *nodeclaims_registered; /* nodepool */
    kp_metric *nodeclaims_initialized; /* nodepool */
    kp_metric *nodes_created;         /* nodepool, zone */
    kp_metric *nodes_terminated;      /* nodepool, zone */
    kp_metric *scheduling_duration;   /* controller */
    kp_metric *unschedulable_pods;    /* controller */
    kp_metric *queue_depth;           /* controller */
    kp_metric *pods_bound_duration;   /* (none): pod creation to bound, seconds */
    kp_metric *disruption_decisions;  /* decision, reason, consolidation_type */
    kp_metric *disruption_eligible;   /* reason */
    kp_metric *allowed_disruptions;   /* nodepool, reason */
    kp_metric *nodes_consuming_budgets; /* nodepool, reason */
    kp_metric *disruption_queue_failures; /* decision, reason, consolidation_type */
    kp_metric *consolidation_moves;   /* decision, nodepool, policy */
    kp_metric *consolidation_score;   /* decision, nodepool, policy (histogram) */
    kp_metric *nodepool_usage;        /* nodepool, resource_type */
    kp_metric *nodepool_limit;        /* nodepool, resource_type */
    kp_metric *cluster_synced;        /* (none) */
    kp_metric *cluster_node_count;    /* (none) */
    kp_metric *cloud_duration;        /* controller, method, provider */
    kp_metric *cloud_errors;          /* controller, method, provider, error */
    kp_metric *eviction_requests;     /* code: the Eviction API's HTTP status */
    kp_metric *pods_drained;          /* reason: the claim's DisruptionReason, or Forceful Termination */
    kp_metric *nodes_drained;         /* nodepool */
    kp_metric *interruption_messages; /* message_type */
    kp_metric *nodes_allocatable;     /* node_name, nodepool, resource_type, instance_type, capacity_type, zone */
    kp_metric *pods_state;            /* name, namespace, node, nodepool, phase */
    kp_metric *interruption_deleted;  /* (none): messages acknowledged */
    kp_metric *interruption_queue_duration; /* (none): seconds from the cloud's send to handled */
    kp_metric *build_info;            /* version, goversion, goarch, commit: always 1 */
} kp_ctrl_metrics;

/* Register every family in `registry`. */
int kp_ctrl_metrics_init(kp_ctrl_metrics *m, kp_metrics *registry);

/* Karpenter's duration buckets (controller-runtime's, up to 10 minutes), cut
 * to what a histogram here holds. */
extern const double kp_ctrl_duration_buckets[30];

/* Shorthands: a series by label values, NULL-safe on `metric`. */
void kp_ctrl_count(kp_metric *metric, const char *const *labels);
void kp_ctrl_observe(kp_metric *metric, const char *const *labels, double value);
void kp_ctrl_set(kp_metric *metric, const char *const *labels, double value);

#endif
