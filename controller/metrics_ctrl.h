/*
 * The controller's metrics, under Karpenter v1.14's names, types and labels
 * so that its dashboards and alerts work unchanged. One registry for the
 * process, served on /metrics; every family is registered (HELP and TYPE)
 * at start-up, before anything is counted.
 *
 * docs/reference/karpenter-v1.14-metrics.tsv lists Karpenter's families and
 * what happens to each here; tests/unit/test_metrics_reference.c holds
 * the registry to it and renders docs/reference/metrics.md.
 *
 * Besides the families, the struct owns the state some of them need between
 * events: pod timings (pod_metrics.h), the last seen conditions of objects
 * (status_metrics.h), and the reconcilers' work in progress
 * (reconcile_metrics.h). kp_ctrl_metrics_fini frees it.
 */
#ifndef KP_CONTROLLER_METRICS_CTRL_H
#define KP_CONTROLLER_METRICS_CTRL_H

#include "metrics/metrics.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

struct kp_ctrl;
struct kp_pod_metrics;
struct kp_status_metrics;
struct kp_reconcile_metrics;

/* operator_<kind>_status_condition_* and operator_<kind>_termination_*, for
 * one kind (operatorpkg's status controller), or the deprecated unprefixed
 * ones with group and kind labels. */
typedef struct kp_status_families {
    kp_metric *termination_duration; /* histogram: extra labels */
    kp_metric *termination_current;  /* namespace, name, extra */
    kp_metric *transitions;          /* type, status, reason, extra */
    kp_metric *transition_seconds;   /* histogram: type, status, extra */
    kp_metric *current_status;       /* namespace, name, type, status, reason, extra */
    kp_metric *count;                /* namespace, name, type, status, reason, extra */
} kp_status_families;

enum kp_status_kind { KP_STATUS_NODECLAIM, KP_STATUS_NODE, KP_STATUS_NODEPOOL, KP_STATUS_NODECLASS, KP_STATUS_KINDS };

/* What an informer handler of state_metrics.c is given. */
typedef struct kp_status_watch {
    struct kp_ctrl *c;
    enum kp_status_kind kind;
} kp_status_watch;

typedef struct kp_ctrl_metrics {
    /* NodeClaims */
    kp_metric *nodeclaims_created;    /* reason, nodepool, min_values_relaxed */
    kp_metric *nodeclaims_terminated; /* nodepool, capacity_type, zone */
    kp_metric *nodeclaims_disrupted;  /* reason, nodepool, capacity_type */
    kp_metric *nodeclaims_unhealthy_disrupted; /* condition, nodepool, capacity_type, image_id */
    kp_metric *nodeclaims_termination_duration;          /* histogram: nodepool */
    kp_metric *nodeclaims_instance_termination_duration; /* histogram: nodepool */
    kp_metric *nodeclaims_launched;    /* nodepool (pre-v1 name) */
    kp_metric *nodeclaims_registered;  /* nodepool (pre-v1 name) */
    kp_metric *nodeclaims_initialized; /* nodepool (pre-v1 name) */
    /* Nodes */
    kp_metric *nodes_created;    /* nodepool, zone */
    kp_metric *nodes_terminated; /* nodepool, zone */
    kp_metric *nodes_drained;    /* nodepool */
    kp_metric *nodes_termination_duration; /* summary: nodepool */
    kp_metric *nodes_lifetime_duration;    /* histogram: nodepool */
    kp_metric *nodes_current_lifetime;     /* node labels */
    kp_metric *nodes_allocatable, *nodes_pod_requests, *nodes_pod_limits; /* node labels, resource_type */
    kp_metric *nodes_daemon_requests, *nodes_daemon_limits, *nodes_system_overhead;
    kp_metric *cluster_utilization; /* resource_type */
    /* Pods */
    kp_metric *pods_state;               /* name, namespace, owner, node, scheduled, nodepool, zone, arch, ... */
    kp_metric *pods_startup_duration;    /* summary */
    kp_metric *pods_bound_duration;      /* histogram */
    kp_metric *pods_unbound_time, *pods_unstarted_time; /* name, namespace */
    kp_metric *pods_prov_bound_duration, *pods_prov_startup_duration; /* histograms */
    kp_metric *pods_prov_unbound_time, *pods_prov_unstarted_time, *pods_prov_undecided_time; /* name, namespace */
    kp_metric *pods_scheduling_decision_duration; /* histogram */
    kp_metric *eviction_requests; /* code */
    kp_metric *pods_drained;      /* reason */
    /* Scheduler */
    kp_metric *scheduling_duration; /* controller */
    kp_metric *queue_depth;         /* controller, scheduling_id */
    kp_metric *unfinished_work;     /* controller, scheduling_id */
    kp_metric *unschedulable_pods;  /* controller */
    kp_metric *pending_by_zone;     /* controller, zone */
    kp_metric *ignored_pods;        /* (none) */
    /* Voluntary disruption */
    kp_metric *disruption_decisions;         /* decision, reason, consolidation_type */
    kp_metric *disruption_decisions_by_pool; /* nodepool, decision, reason, consolidation_type */
    kp_metric *disruption_eligible;          /* reason */
    kp_metric *disruption_evaluation;        /* histogram: reason, consolidation_type */
    kp_metric *consolidation_timeouts;       /* consolidation_type */
    kp_metric *failed_validations;           /* consolidation_type */
    kp_metric *disruption_queue_failures;    /* decision, reason, consolidation_type */
    kp_metric *consolidation_moves;          /* decision, nodepool, policy */
    kp_metric *consolidation_score;          /* histogram: decision, nodepool, policy */
    /* NodePools */
    kp_metric *nodepool_usage, *nodepool_limit;             /* resource_type, nodepool */
    kp_metric *allowed_disruptions, *nodes_consuming_budgets; /* nodepool, reason */
    kp_metric *nodepool_cost;       /* nodepool */
    kp_metric *cost_tracker_errors; /* nodepool */
    kp_metric *caps_headroom;       /* cap, nodepool: beyond Karpenter (caps_ctrl.c) */
    /* Cluster state */
    kp_metric *cluster_synced, *cluster_node_count, *cluster_unsynced;
    /* Cloud provider */
    kp_metric *cloud_duration; /* controller, method, provider */
    kp_metric *cloud_errors;   /* controller, method, provider, error */
    kp_metric *offering_available, *offering_price; /* instance_type, capacity_type, zone */
    kp_metric *instance_type_memory, *instance_type_cpu; /* instance_type */
    kp_metric *launch_failures;      /* zone, zone_id, capacity_type, reason */
    kp_metric *termination_failures; /* zone, zone_id */
    /* Interruption */
    kp_metric *interruption_messages;       /* message_type */
    kp_metric *interruption_deleted;        /* (none) */
    kp_metric *interruption_queue_duration; /* histogram */
    kp_metric *instance_status_unhealthy;   /* category */
    /* The process */
    kp_metric *build_info;    /* version, goversion, goarch, commit: always 1 */
    kp_metric *leader_status; /* name: 1 while this replica leads */
    kp_metric *process[9];    /* process_*: metrics/process.c */
    /* controller-runtime's reconcile and work-queue families (reconcile_metrics.c) */
    kp_metric *reconcile_total, *reconcile_errors, *reconcile_time, *max_concurrent, *active_workers;
    kp_metric *terminal_errors, *reconcile_panics, *reconcile_timeouts; /* stay 0: see their help */
    kp_metric *client_requests, *client_request_duration; /* client_go_*: client_metrics.c */
    kp_metric *wq_depth, *wq_adds, *wq_queue_duration, *wq_work_duration, *wq_unfinished, *wq_longest, *wq_retries;
    /* operator_*: per kind, and the deprecated group/kind ones (registered by
     * kp_ctrl_metrics_init_status once the provider's node class is known). */
    kp_status_families status[KP_STATUS_KINDS];
    kp_status_families status_deprecated;
    char node_class_label[128]; /* "karpenter_k8s_aws_ec2nodeclass" */
    int leading;                /* kp_ctrl_metrics_lead; read and written atomically */
    /* State between events. */
    kp_status_watch watch[KP_STATUS_KINDS];
    struct kp_strmap *cost_failing; /* NodeClaims counted in cost_tracker_errors, until they stop failing */
    struct kp_pod_metrics *pods;
    struct kp_status_metrics *conditions;
    struct kp_reconcile_metrics *reconciles;
} kp_ctrl_metrics;

/* Register every family in `registry` except the operator_* ones. */
int kp_ctrl_metrics_init(kp_ctrl_metrics *m, kp_metrics *registry);
/* Register the operator_* families, whose labels name the provider's node
 * class (group "karpenter.k8s.aws", kind "EC2NodeClass"). */
int kp_ctrl_metrics_init_status(kp_ctrl_metrics *m, kp_metrics *registry, const char *node_class_group,
                                const char *node_class_kind);
/* Register one family of `type` (buckets for histograms only). */
int kp_ctrl_metric_add(kp_metrics *r, kp_metric **slot, enum kp_metric_type type, const char *name,
                       const char *help, const char *const *labels, size_t n_labels, const double *buckets,
                       size_t n_buckets);
/* This replica started (true) or stopped leading `lease`: the leader gauge,
 * and whether the watch handlers count transitions (only the leader counts,
 * as only Karpenter's leader runs its metrics controllers). */
void kp_ctrl_metrics_lead(kp_ctrl_metrics *m, const char *lease, bool leading);
bool kp_ctrl_metrics_leading(const kp_ctrl_metrics *m);
/* Free the state (not the families: the registry owns them). */
void kp_ctrl_metrics_fini(kp_ctrl_metrics *m);

/* Karpenter's duration buckets (5 ms to 10 minutes). */
extern const double kp_ctrl_duration_buckets[45];

/* Shorthands: a series by label values, NULL-safe on `metric`. */
void kp_ctrl_count(kp_metric *metric, const char *const *labels);
void kp_ctrl_observe(kp_metric *metric, const char *const *labels, double value);
void kp_ctrl_set(kp_metric *metric, const char *const *labels, double value);

/* A cloud provider call `method` by `controller` took since `start_mono`
 * (the clock's monotonic ns) and ended with `err`:
 * karpenter_cloudprovider_duration_seconds and, on failure, _errors_total. */
void kp_ctrl_observe_cloud(struct kp_ctrl *c, const char *controller, const char *method, int64_t start_mono,
                           int err);

/* A Node's termination finalizer is gone: how long the termination took and
 * how long the node lived. */
void kp_ctrl_node_terminated(struct kp_ctrl *c, const cJSON *node);

/* Karpenter's resource_type label value for a resource name: lower case,
 * '-' as '_' ("nvidia.com/gpu" stays, "ephemeral-storage" becomes
 * "ephemeral_storage"); cut to fit `size`. */
void kp_ctrl_resource_label(char *buf, size_t size, const char *resource);
/* Karpenter's gauge value of a quantity (`milli` thousandths): cores with
 * milli precision for cpu, Quantity.Value() (rounded up) for the others. */
double kp_ctrl_resource_value(const char *resource, int64_t milli);

/* karpenter.sh/capacity-type of a NodeClaim as a metric label: the claim's
 * label, else its Node's, else the one value its requirements allow; "" when
 * none says. A static string. */
const char *kp_ctrl_capacity_type(const struct kp_ctrl *c, const cJSON *claim);

/* Karpenter's error label of karpenter_cloudprovider_errors_total for a
 * negative KP_E*: "InsufficientCapacityError", "NodeClaimNotFoundError",
 * "NodeClassNotReadyError", or "". */
const char *kp_ctrl_cloud_error_label(int err);

/* The node label names of Karpenter's node gauges (v1's well-known labels and
 * the AWS provider's, as Prometheus labels) with the Kubernetes label each
 * is read from; node_name, phase and managed follow them. */
typedef struct kp_node_metric_label {
    const char *metric, *key;
} kp_node_metric_label;
#define KP_NODE_METRIC_LABELS 36
extern const kp_node_metric_label kp_node_metric_labels[KP_NODE_METRIC_LABELS];

#endif
