/* The controller's metric families (see metrics_ctrl.h). The help texts are
 * ours; names, types, labels and buckets are Karpenter v1.14's. */
#include "controller/metrics_ctrl.h"
#include "api/wellknown.h"
#include "base/clock.h"
#include "base/error.h"
#include "controller/ctrl.h"
#include "kube/objutil.h"
#include "controller/pod_metrics.h"
#include "metrics/process.h"
#include "controller/reconcile_metrics.h"
#include "controller/status_metrics.h"
#include "kube/strmap.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Karpenter's DurationBuckets. */
const double kp_ctrl_duration_buckets[45] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45,
                                             0.5,   0.6,  0.7,   0.8,  0.9, 1.0,  1.25, 1.5, 1.75, 2.0, 2.5, 3.0,
                                             3.5,   4.0,  4.5,   5,    6,   7,    8,    9,   10,   15,  20,  25,
                                             30,    40,   50,    60,   120, 150,  300,  450, 600};

static const double score_buckets[] = {0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0};
static const double claim_termination_buckets[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
static const double instance_termination_buckets[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
/* 15, 30, 45 minutes; 1, 2, 4, 6, 8, 10, 12, 16, 20 hours; 1, 2, 3, 5, 10, 15, 20, 25, 30 days. */
static const double lifetime_buckets[] = {900,    1800,   2700,   3600,    7200,    14400,   21600,
                                          28800,  36000,  43200,  57600,   72000,   86400,   172800,
                                          259200, 432000, 864000, 1296000, 1728000, 2160000, 2592000};
/* controller-runtime's reconcile buckets: Karpenter's up to a minute. */
static const double reconcile_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35,
                                           0.4,   0.45, 0.5,   0.6,  0.7, 0.8,  0.9, 1.0,  1.25, 1.5,
                                           1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,    7,
                                           8,     9,    10,    15,   20,  25,   30,  40,   50,   60};
/* operatorpkg's client-go request buckets: 1 ms times 1.5 per bucket, 20 of
 * them, as Go's repeated multiplication makes them. */
static const double client_buckets[] = {
    0.001,          0.0015,          0.0022500000000000003, 0.0033750000000000004, 0.005062500000000001,
    0.0075937500000000015, 0.011390625000000001, 0.017085937500000002, 0.025628906250000003, 0.03844335937500001,
    0.057665039062500006, 0.08649755859375001, 0.129746337890625, 0.1946195068359375, 0.29192926025390625,
    0.43789389038085935, 0.656840835571289, 0.9852612533569336, 1.4778918800354004, 2.2168378200531005};
/* client-go's work-queue buckets: 10 ns to 1000 s, by tens. */
static const double queue_buckets[] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000};

const kp_node_metric_label kp_node_metric_labels[KP_NODE_METRIC_LABELS] = {
    {"arch", KP_LABEL_ARCH},
    {"capacity_type", KP_LABEL_CAPACITY_TYPE},
    {"instance_type", KP_LABEL_INSTANCE_TYPE},
    {"nodepool", KP_LABEL_NODEPOOL},
    {"os", KP_LABEL_OS},
    {"region", KP_LABEL_REGION},
    {"zone", KP_LABEL_ZONE},
    {"windows_build", KP_LABEL_WINDOWS_BUILD},
    {"capacity_reservation_id", "karpenter.k8s.aws/capacity-reservation-id"},
    {"capacity_reservation_type", "karpenter.k8s.aws/capacity-reservation-type"},
    {"capacity_reservation_interruptible", "karpenter.k8s.aws/capacity-reservation-interruptible"},
    {"instance_hypervisor", "karpenter.k8s.aws/instance-hypervisor"},
    {"instance_encryption_in_transit_supported", "karpenter.k8s.aws/instance-encryption-in-transit-supported"},
    {"instance_category", "karpenter.k8s.aws/instance-category"},
    {"instance_capability_flex", "karpenter.k8s.aws/instance-capability-flex"},
    {"instance_family", "karpenter.k8s.aws/instance-family"},
    {"instance_generation", "karpenter.k8s.aws/instance-generation"},
    {"instance_size", "karpenter.k8s.aws/instance-size"},
    {"instance_local_nvme", "karpenter.k8s.aws/instance-local-nvme"},
    {"instance_cpu", "karpenter.k8s.aws/instance-cpu"},
    {"instance_cpu_manufacturer", "karpenter.k8s.aws/instance-cpu-manufacturer"},
    {"instance_cpu_sustained_clock_speed_mhz", "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz"},
    {"instance_memory", "karpenter.k8s.aws/instance-memory"},
    {"instance_ebs_bandwidth", "karpenter.k8s.aws/instance-ebs-bandwidth"},
    {"instance_network_bandwidth", "karpenter.k8s.aws/instance-network-bandwidth"},
    {"instance_gpu_name", "karpenter.k8s.aws/instance-gpu-name"},
    {"instance_gpu_manufacturer", "karpenter.k8s.aws/instance-gpu-manufacturer"},
    {"instance_gpu_count", "karpenter.k8s.aws/instance-gpu-count"},
    {"instance_gpu_memory", "karpenter.k8s.aws/instance-gpu-memory"},
    {"instance_accelerator_name", "karpenter.k8s.aws/instance-accelerator-name"},
    {"instance_accelerator_manufacturer", "karpenter.k8s.aws/instance-accelerator-manufacturer"},
    {"instance_accelerator_count", "karpenter.k8s.aws/instance-accelerator-count"},
    {"zone_id", KP_LABEL_ZONE_ID},
    {"instance_tenancy", "karpenter.k8s.aws/instance-tenancy"},
    {"placement_group_id", "karpenter.k8s.aws/placement-group-id"},
    {"placement_group_partition", "karpenter.k8s.aws/placement-group-partition"},
};

#define L(...) ((const char *const[]){__VA_ARGS__}), sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)
#define NONE NULL, 0
#define B(a) a, sizeof(a) / sizeof(a[0])
#define DURATION B(kp_ctrl_duration_buckets)

typedef struct family {
    kp_metric **slot;
    enum kp_metric_type type;
    const char *name, *help;
    const char *const *labels;
    size_t n_labels;
    const double *buckets;
    size_t n_buckets;
} family;

int kp_ctrl_metric_add(kp_metrics *r, kp_metric **slot, enum kp_metric_type type, const char *name,
                       const char *help, const char *const *labels, size_t n_labels, const double *buckets,
                       size_t n_buckets)
{
    switch (type) {
    case KP_METRIC_COUNTER:
        return kp_metrics_counter(slot, r, name, help, labels, n_labels);
    case KP_METRIC_GAUGE:
        return kp_metrics_gauge(slot, r, name, help, labels, n_labels);
    case KP_METRIC_HISTOGRAM:
        return kp_metrics_histogram(slot, r, name, help, labels, n_labels, buckets, n_buckets);
    case KP_METRIC_SUMMARY:
        return kp_metrics_summary(slot, r, name, help, labels, n_labels);
    }
    return kp_error_set(KP_EINVALID, "metric %s: unknown type", name);
}

static int add_all(kp_metrics *r, const family *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int err = kp_ctrl_metric_add(r, f[i].slot, f[i].type, f[i].name, f[i].help, f[i].labels, f[i].n_labels,
                                     f[i].buckets, f[i].n_buckets);
        if (err < 0)
            return err;
    }
    return 0;
}

#define C KP_METRIC_COUNTER
#define G KP_METRIC_GAUGE
#define H KP_METRIC_HISTOGRAM
#define S KP_METRIC_SUMMARY

static int claim_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->nodeclaims_created, C, "karpenter_nodeclaims_created_total",
         "NodeClaims written, by why (provisioned, or the disruption a replacement is for), NodePool and whether "
         "minValues was relaxed.",
         L("reason", "nodepool", "min_values_relaxed"), NONE},
        {&m->nodeclaims_terminated, C, "karpenter_nodeclaims_terminated_total",
         "NodeClaims whose finalizer was removed, by NodePool, capacity type and zone.",
         L("nodepool", "capacity_type", "zone"), NONE},
        {&m->nodeclaims_disrupted, C, "karpenter_nodeclaims_disrupted_total",
         "NodeClaims deleted to disrupt them, by reason, NodePool and capacity type.",
         L("reason", "nodepool", "capacity_type"), NONE},
        {&m->nodeclaims_unhealthy_disrupted, C, "karpenter_nodeclaims_unhealthy_disrupted_total",
         "NodeClaims replaced by node repair, by the node condition that made them unhealthy, NodePool, capacity "
         "type and image.",
         L("condition", "nodepool", "capacity_type", "image_id"), NONE},
        {&m->nodeclaims_termination_duration, H, "karpenter_nodeclaims_termination_duration_seconds",
         "Seconds from a NodeClaim's deletion to the removal of its finalizer.", L("nodepool"),
         B(claim_termination_buckets)},
        {&m->nodeclaims_instance_termination_duration, H, "karpenter_nodeclaims_instance_termination_duration_seconds",
         "Seconds from asking the cloud provider to terminate a NodeClaim's instance to the instance being gone.",
         L("nodepool"), B(instance_termination_buckets)},
        {&m->nodeclaims_launched, C, "karpenter_nodeclaims_launched_total",
         "NodeClaims whose Launched condition turned True, by NodePool.", L("nodepool"), NONE},
        {&m->nodeclaims_registered, C, "karpenter_nodeclaims_registered_total",
         "NodeClaims whose Registered condition turned True, by NodePool.", L("nodepool"), NONE},
        {&m->nodeclaims_initialized, C, "karpenter_nodeclaims_initialized_total",
         "NodeClaims whose Initialized condition turned True, by NodePool.", L("nodepool"), NONE},
    };
    return add_all(r, f, sizeof(f) / sizeof(f[0]));
}

/* The node gauges' label names: the well-known ones, node_name, phase,
 * managed, and resource_type when `resource` is set. */
static size_t node_labels(const char **out, bool resource)
{
    size_t n = 0;
    for (size_t i = 0; i < KP_NODE_METRIC_LABELS; i++)
        out[n++] = kp_node_metric_labels[i].metric;
    out[n++] = "node_name", out[n++] = "phase", out[n++] = "managed";
    if (resource)
        out[n++] = "resource_type";
    return n;
}

static int node_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const char *nl[KP_NODE_METRIC_LABELS + 4], *rl[KP_NODE_METRIC_LABELS + 4];
    size_t n_nl = node_labels(nl, false), n_rl = node_labels(rl, true);
    const family f[] = {
        {&m->nodes_created, C, "karpenter_nodes_created_total",
         "Nodes that registered for a NodeClaim, by NodePool and zone.", L("nodepool", "zone"), NONE},
        {&m->nodes_terminated, C, "karpenter_nodes_terminated_total",
         "Nodes whose termination finalizer was removed, by NodePool and zone.", L("nodepool", "zone"), NONE},
        {&m->nodes_drained, C, "karpenter_nodes_drained_total", "Nodes whose drain finished, by NodePool.",
         L("nodepool"), NONE},
        {&m->nodes_termination_duration, S, "karpenter_nodes_termination_duration_seconds",
         "Seconds from a Node's deletion to the removal of its termination finalizer.", L("nodepool"), NONE},
        {&m->nodes_lifetime_duration, H, "karpenter_nodes_lifetime_duration_seconds",
         "Seconds from a Node's creation to the end of its termination.", L("nodepool"), B(lifetime_buckets)},
        {&m->nodes_current_lifetime, G, "karpenter_nodes_current_lifetime_seconds", "Seconds since each Node was created.",
         nl, n_nl, NONE},
        {&m->nodes_allocatable, G, "karpenter_nodes_allocatable", "What each Node offers pods, by resource.", rl, n_rl,
         NONE},
        {&m->nodes_pod_requests, G, "karpenter_nodes_total_pod_requests",
         "Requests of the pods bound to each Node, DaemonSet pods included, by resource.", rl, n_rl, NONE},
        {&m->nodes_pod_limits, G, "karpenter_nodes_total_pod_limits",
         "Limits of the pods bound to each Node, DaemonSet pods included, by resource.", rl, n_rl, NONE},
        {&m->nodes_daemon_requests, G, "karpenter_nodes_total_daemon_requests",
         "Requests of the DaemonSet pods bound to each Node, by resource.", rl, n_rl, NONE},
        {&m->nodes_daemon_limits, G, "karpenter_nodes_total_daemon_limits",
         "Limits of the DaemonSet pods bound to each Node, by resource.", rl, n_rl, NONE},
        {&m->nodes_system_overhead, G, "karpenter_nodes_system_overhead",
         "Capacity minus allocatable of each Node: what the system and kubelet reserve, by resource.", rl, n_rl,
         NONE},
        {&m->cluster_utilization, G, "karpenter_cluster_utilization_percent",
         "Pod requests over allocatable across all Nodes, in percent, by resource.", L("resource_type"), NONE},
    };
    return add_all(r, f, sizeof(f) / sizeof(f[0]));
}

static int pod_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->pods_state, G, "karpenter_pods_state", "1 for every pod, labeled with where it runs and how it is.",
         L("name", "namespace", "owner", "node", "scheduled", "nodepool", "zone", "arch", "capacity_type",
           "instance_type", "phase", "ready", "managed"),
         NONE},
        {&m->pods_startup_duration, S, "karpenter_pods_startup_duration_seconds",
         "Seconds from a pod's creation until it was ready, for pods seen pending.", NONE, NONE},
        {&m->pods_bound_duration, H, "karpenter_pods_bound_duration_seconds",
         "Seconds from a pod's creation until it was bound, for pods seen unbound.", NONE, DURATION},
        {&m->pods_unbound_time, G, "karpenter_pods_unbound_time_seconds",
         "Seconds each pending, unbound pod has existed.", L("name", "namespace"), NONE},
        {&m->pods_unstarted_time, G, "karpenter_pods_unstarted_time_seconds",
         "Seconds each pending pod has existed without running.", L("name", "namespace"), NONE},
        {&m->pods_prov_bound_duration, H, "karpenter_pods_provisioning_bound_duration_seconds",
         "Seconds from the provisioner first finding a place for a pod until it was bound (from memory, not the "
         "pod's creation).",
         NONE, DURATION},
        {&m->pods_prov_startup_duration, H, "karpenter_pods_provisioning_startup_duration_seconds",
         "Seconds from the provisioner first finding a place for a pod until it was ready (from memory).", NONE,
         DURATION},
        {&m->pods_prov_unbound_time, G, "karpenter_pods_provisioning_unbound_time_seconds",
         "Seconds since the provisioner found a place for each pod that is still unbound.", L("name", "namespace"),
         NONE},
        {&m->pods_prov_unstarted_time, G, "karpenter_pods_provisioning_unstarted_time_seconds",
         "Seconds since the provisioner found a place for each pod that is still not running.",
         L("name", "namespace"), NONE},
        {&m->pods_prov_undecided_time, G, "karpenter_pods_provisioning_scheduling_undecided_time_seconds",
         "Seconds each pod the provisioner has seen has waited for a first scheduling decision.",
         L("name", "namespace"), NONE},
        {&m->pods_scheduling_decision_duration, H, "karpenter_pods_scheduling_decision_duration_seconds",
         "Seconds from the provisioner seeing a pod to its first scheduling decision about it.", NONE, DURATION},
        {&m->eviction_requests, C, "karpenter_pods_eviction_requests_total",
         "Eviction API requests while draining, by the HTTP status they got.", L("code"), NONE},
        {&m->pods_drained, C, "karpenter_pods_drained_total",
         "Pods evicted while draining Nodes, by the NodeClaim's disruption reason.", L("reason"), NONE},
    };
    return add_all(r, f, sizeof(f) / sizeof(f[0]));
}

static int scheduler_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->scheduling_duration, H, "karpenter_scheduler_scheduling_duration_seconds",
         "Seconds one scheduling simulation took, by the controller that ran it.", L("controller"), DURATION},
        {&m->queue_depth, G, "karpenter_scheduler_queue_depth",
         "Pods left to place in the simulation under way, by controller and simulation.",
         L("controller", "scheduling_id"), NONE},
        {&m->unfinished_work, G, "karpenter_scheduler_unfinished_work_seconds",
         "Seconds the simulation under way has run so far, by controller and simulation.",
         L("controller", "scheduling_id"), NONE},
        {&m->unschedulable_pods, G, "karpenter_scheduler_unschedulable_pods_count",
         "Pods the last simulation could not place, by controller.", L("controller"), NONE},
        {&m->pending_by_zone, G, "karpenter_scheduler_pending_pods_by_effective_zone_count",
         "Pending pods of the last simulation by the zone their constraints leave them (a zone, flexible, or "
         "none).",
         L("controller", "zone"), NONE},
        {&m->ignored_pods, G, "karpenter_scheduler_ignored_pods_count",
         "Pending pods the provisioner leaves alone: a PVC or Dynamic Resource Allocation problem known before the "
         "simulation.", NONE, NONE},
    };
    int err = add_all(r, f, sizeof(f) / sizeof(f[0]));
    /* The provisioner's series exists from the start with nothing observed, so
     * that rate() sees the first simulations as an increase from zero (a series
     * first scraped already holding them would show none until the next). */
    if (!err)
        (void)kp_metric_with(m->scheduling_duration, (const char *const[]){"provisioner"});
    return err;
}

static int disruption_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->disruption_decisions, C, "karpenter_voluntary_disruption_decisions_total",
         "Disruption commands started, by decision, reason and consolidation type.",
         L("decision", "reason", "consolidation_type"), NONE},
        {&m->disruption_decisions_by_pool, C, "karpenter_voluntary_disruption_decisions_by_nodepool_total",
         "Disruption commands started, per NodePool of their candidates, by decision, reason and consolidation type.",
         L("nodepool", "decision", "reason", "consolidation_type"), NONE},
        {&m->disruption_eligible, G, "karpenter_voluntary_disruption_eligible_nodes",
         "Nodes that are candidates for disruption, by reason.", L("reason"), NONE},
        {&m->disruption_evaluation, H, "karpenter_voluntary_disruption_decision_evaluation_duration_seconds",
         "Seconds spent evaluating one disruption method, by reason and consolidation type.",
         L("reason", "consolidation_type"), DURATION},
        {&m->consolidation_timeouts, C, "karpenter_voluntary_disruption_consolidation_timeouts_total",
         "Consolidation searches cut short by their time limit, by consolidation type.", L("consolidation_type"),
         NONE},
        {&m->failed_validations, C, "karpenter_voluntary_disruption_failed_validations_total",
         "Candidates of consolidations that were not found again after the validation wait, by consolidation type.",
         L("consolidation_type"), NONE},
        {&m->disruption_queue_failures, C, "karpenter_voluntary_disruption_queue_failures_total",
         "Disruption commands abandoned because their replacements did not come up, by decision, reason and "
         "consolidation type.",
         L("decision", "reason", "consolidation_type"), NONE},
        {&m->consolidation_moves, C, "karpenter_consolidation_moves_total",
         "Consolidation moves scored by the Balanced policy, by decision, NodePool and policy.",
         L("decision", "nodepool", "policy"), NONE},
        {&m->consolidation_score, H, "karpenter_consolidation_score",
         "The Balanced policy's score of each consolidation move, by decision, NodePool and policy.",
         L("decision", "nodepool", "policy"), B(score_buckets)},
    };
    int err = add_all(r, f, sizeof(f) / sizeof(f[0]));
    /* Present from the start, as Karpenter's: no timeout yet. */
    kp_counter_add(kp_metric_with(m->consolidation_timeouts, (const char *const[]){"multi"}), 0);
    kp_counter_add(kp_metric_with(m->consolidation_timeouts, (const char *const[]){"single"}), 0);
    return err;
}

static int pool_and_state_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->nodepool_usage, G, "karpenter_nodepools_usage", "Resources of a NodePool's nodes, by resource.",
         L("resource_type", "nodepool"), NONE},
        {&m->nodepool_limit, G, "karpenter_nodepools_limit", "A NodePool's spec.limits, by resource.",
         L("resource_type", "nodepool"), NONE},
        {&m->allowed_disruptions, G, "karpenter_nodepools_allowed_disruptions",
         "Nodes a NodePool's budgets let be disrupting at once now, by reason.", L("nodepool", "reason"), NONE},
        {&m->nodes_consuming_budgets, G, "karpenter_nodepools_nodes_consuming_budgets",
         "A NodePool's nodes disrupting now and so counted against its budgets, by reason.",
         L("nodepool", "reason"), NONE},
        {&m->nodepool_cost, G, "karpenter_nodepools_cost_total",
         "Hourly price of a NodePool's NodeClaims at the offering prices the controller plans with (not a bill).",
         L("nodepool"), NONE},
        {&m->cost_tracker_errors, C, "karpenter_nodepools_cost_tracker_errors_total",
         "NodeClaims whose offering had no known price when a NodePool's cost was summed.", L("nodepool"), NONE},
        {&m->caps_headroom, G, "karpenter_caps_headroom",
         "What provisioning may still add before a cap holds pods back: nodes, cores, bytes of memory or dollars an "
         "hour, by cap and NodePool (empty: cluster-wide). Beyond Karpenter.",
         L("cap", "nodepool"), NONE},
        {&m->cluster_synced, G, "karpenter_cluster_state_synced",
         "1 when every NodeClaim and Node of the API server is in the controller's caches, else 0.", NONE, NONE},
        {&m->cluster_node_count, G, "karpenter_cluster_state_node_count", "Nodes in the controller's cache.", NONE,
         NONE},
        {&m->cluster_unsynced, G, "karpenter_cluster_state_unsynced_time_seconds",
         "Seconds the caches have been out of step with the API server (0 when in step).", NONE, NONE},
    };
    return add_all(r, f, sizeof(f) / sizeof(f[0]));
}

static int cloud_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->cloud_duration, H, "karpenter_cloudprovider_duration_seconds",
         "Seconds cloud provider calls took, by controller, method and provider.",
         L("controller", "method", "provider"), DURATION},
        {&m->cloud_errors, C, "karpenter_cloudprovider_errors_total",
         "Cloud provider calls that failed, by controller, method, provider and kind of error.",
         L("controller", "method", "provider", "error"), NONE},
        {&m->offering_available, G, "karpenter_cloudprovider_instance_type_offering_available",
         "1 when an offering (instance type, capacity type, zone) can be launched now, else 0.",
         L("instance_type", "capacity_type", "zone"), NONE},
        {&m->offering_price, G, "karpenter_cloudprovider_instance_type_offering_price_estimate",
         "Hourly price the controller plans with for an offering.", L("instance_type", "capacity_type", "zone"),
         NONE},
        {&m->instance_type_memory, G, "karpenter_cloudprovider_instance_type_memory_bytes",
         "Memory of an instance type, in bytes.", L("instance_type"), NONE},
        {&m->instance_type_cpu, G, "karpenter_cloudprovider_instance_type_cpu_cores", "vCPUs of an instance type.",
         L("instance_type"), NONE},
        {&m->launch_failures, C, "karpenter_cloudprovider_instance_launch_failures_total",
         "Offerings a launch request failed on, by zone, zone ID, capacity type and the cloud's reason.",
         L("zone", "zone_id", "capacity_type", "reason"), NONE},
        {&m->termination_failures, C, "karpenter_cloudprovider_instance_termination_failures_total",
         "Instance terminations the cloud refused, by zone and zone ID.", L("zone", "zone_id"), NONE},
        {&m->interruption_messages, C, "karpenter_interruption_received_messages_total",
         "Interruption messages received, by kind.", L("message_type"), NONE},
        {&m->interruption_deleted, C, "karpenter_interruption_deleted_messages_total",
         "Interruption messages handled and removed from their queue.", NONE, NONE},
        {&m->interruption_queue_duration, H, "karpenter_interruption_message_queue_duration_seconds",
         "Seconds from the cloud sending an interruption message to its handling.", NONE, DURATION},
        {&m->instance_status_unhealthy, C, "karpenter_interruption_instance_status_unhealthy_total",
         "Unhealthy instance statuses found, by kind of check.", L("category"), NONE},
        {&m->build_info, G, "karpenter_build_info",
         "Always 1, labeled with the version and commit the controller was built from (goversion: the C compiler).",
         L("version", "goversion", "goarch", "commit"), NONE},
        {&m->leader_status, G, "leader_election_master_status",
         "1 while this replica holds the leader lease, 0 while it waits, by lease.", L("name"), NONE},
    };
    return add_all(r, f, sizeof(f) / sizeof(f[0]));
}

static int runtime_families(kp_ctrl_metrics *m, kp_metrics *r)
{
    const family f[] = {
        {&m->reconcile_total, C, "controller_runtime_reconcile_total",
         "Reconciles, by controller and result (success, error, requeue, requeue_after).",
         L("controller", "result"), NONE},
        {&m->reconcile_errors, C, "controller_runtime_reconcile_errors_total", "Reconciles that failed, by controller.",
         L("controller"), NONE},
        {&m->terminal_errors, C, "controller_runtime_terminal_reconcile_errors_total",
         "Reconciles that failed for good, by controller. Always 0: every failed reconcile is retried with "
         "back-off.",
         L("controller"), NONE},
        {&m->reconcile_panics, C, "controller_runtime_reconcile_panics_total",
         "Reconciles that panicked, by controller. Always 0: C has no recoverable panic; a crash restarts the "
         "container.",
         L("controller"), NONE},
        {&m->reconcile_timeouts, C, "controller_runtime_reconcile_timeouts_total",
         "Reconciles cut short by a reconcile timeout, by controller. Always 0: no reconcile has an overall "
         "timeout; each API-server and cloud call has its own deadline.",
         L("controller"), NONE},
        {&m->reconcile_time, H, "controller_runtime_reconcile_time_seconds", "Seconds one reconcile took, by controller.",
         L("controller"), B(reconcile_buckets)},
        {&m->max_concurrent, G, "controller_runtime_max_concurrent_reconciles", "Workers each controller runs.",
         L("controller"), NONE},
        {&m->active_workers, G, "controller_runtime_active_workers", "Workers reconciling now, by controller.",
         L("controller"), NONE},
        {&m->client_requests, C, "client_go_request_total",
         "API-server requests, by HTTP status (\"<error>\" when none came back) and method (watches excepted).",
         L("code", "method"), NONE},
        {&m->client_request_duration, H, "client_go_request_duration_seconds",
         "Seconds API-server requests took, by verb, API group, version, resource and subresource.",
         L("verb", "group", "version", "kind", "subresource"), B(client_buckets)},
        {&m->wq_depth, G, "workqueue_depth", "Keys waiting in a work queue, by queue and priority.",
         L("name", "controller", "priority"), NONE},
        {&m->wq_adds, C, "workqueue_adds_total", "Keys added to a work queue (not counting duplicates).",
         L("name", "controller"), NONE},
        {&m->wq_queue_duration, H, "workqueue_queue_duration_seconds",
         "Seconds a key waited in a work queue before a worker took it.", L("name", "controller"), B(queue_buckets)},
        {&m->wq_work_duration, H, "workqueue_work_duration_seconds", "Seconds a worker spent on one key.",
         L("name", "controller"), B(queue_buckets)},
        {&m->wq_unfinished, G, "workqueue_unfinished_work_seconds",
         "Seconds of work in progress not yet counted in workqueue_work_duration_seconds; a steady rise means a "
         "stuck worker.",
         L("name", "controller"), NONE},
        {&m->wq_longest, G, "workqueue_longest_running_processor_seconds",
         "Seconds the longest-running worker of a queue has spent on its key.", L("name", "controller"), NONE},
        {&m->wq_retries, C, "workqueue_retries_total", "Keys put back with back-off after a failure.",
         L("name", "controller"), NONE},
    };
    return add_all(r, f, sizeof(f) / sizeof(f[0]));
}

int kp_ctrl_metrics_init(kp_ctrl_metrics *m, kp_metrics *r)
{
    memset(m, 0, sizeof(*m));
    int (*const groups[])(kp_ctrl_metrics *, kp_metrics *) = {
        claim_families,      node_families,           pod_families,   scheduler_families,
        disruption_families, pool_and_state_families, cloud_families, runtime_families,
    };
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        int err = groups[i](m, r);
        if (err < 0)
            return err;
    }
    int err = kp_metrics_process_init(m->process, r);
    if (err < 0)
        return err;
    m->pods = kp_pod_metrics_new(m);
    m->reconciles = kp_reconcile_metrics_new(m, r);
    return m->reconciles ? 0 : kp_error_set(KP_ETOOLARGE, "metrics: no room for the reconcile hook");
}

void kp_ctrl_metrics_fini(kp_ctrl_metrics *m)
{
    m->pods = kp_pod_metrics_free(m->pods);
    m->conditions = kp_status_metrics_free(m->conditions);
    m->reconciles = kp_reconcile_metrics_free(m->reconciles);
    if (m->cost_failing)
        kp_strmap_clear(m->cost_failing, free);
    free(m->cost_failing);
    m->cost_failing = NULL;
}

/* ---------------------------------------------------------------- helpers */

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

void kp_ctrl_resource_label(char *buf, size_t size, const char *resource)
{
    snprintf(buf, size, "%s", resource ? resource : "");
    for (char *p = buf; *p; p++)
        *p = *p == '-' ? '_' : (char)tolower((unsigned char)*p);
}

double kp_ctrl_resource_value(const char *resource, int64_t milli)
{
    return resource && !strcmp(resource, "cpu") ? (double)milli / 1000.0 : ceil((double)milli / 1000.0);
}

static const char *const capacity_types[] = {"spot", "on-demand", "reserved"};

static const char *known_capacity_type(const char *v)
{
    for (size_t i = 0; v && i < sizeof(capacity_types) / sizeof(capacity_types[0]); i++)
        if (!strcmp(v, capacity_types[i]))
            return capacity_types[i];
    return NULL;
}

/* The one value of an In requirement on karpenter.sh/capacity-type. */
static const char *required_capacity_type(const cJSON *claim)
{
    const cJSON *req;
    cJSON_ArrayForEach(req, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "spec"),
                                                             "requirements"))
    {
        const char *key = kp_obj_str(req, "key"), *op = kp_obj_str(req, "operator");
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(req, "values");
        if (key && op && !strcmp(key, KP_LABEL_CAPACITY_TYPE) && !strcmp(op, "In") &&
            cJSON_GetArraySize(values) == 1)
            return known_capacity_type(cJSON_GetStringValue(cJSON_GetArrayItem(values, 0)));
    }
    return NULL;
}

const char *kp_ctrl_capacity_type(const kp_ctrl *c, const cJSON *claim)
{
    const char *ct = known_capacity_type(kp_obj_label(claim, KP_LABEL_CAPACITY_TYPE));
    const char *node_name = kp_obj_str(claim, "status.nodeName");
    if (!ct && c && node_name) {
        cJSON *node = kp_ctrl_get(c, KP_CK_NODE, node_name);
        ct = known_capacity_type(kp_obj_label(node, KP_LABEL_CAPACITY_TYPE));
        cJSON_Delete(node);
    }
    if (!ct)
        ct = required_capacity_type(claim);
    return ct ? ct : "";
}

const char *kp_ctrl_cloud_error_label(int err)
{
    switch (err) {
    case KP_EINSUFFICIENT_CAPACITY:
        return "InsufficientCapacityError";
    case KP_ENOTFOUND:
        return "NodeClaimNotFoundError";
    case KP_ENOTREADY:
        return "NodeClassNotReadyError";
    default:
        return "";
    }
}

void kp_ctrl_metrics_lead(kp_ctrl_metrics *m, const char *lease, bool leading)
{
    __atomic_store_n(&m->leading, leading ? 1 : 0, __ATOMIC_SEQ_CST);
    kp_ctrl_set(m->leader_status, (const char *const[]){lease ? lease : ""}, leading ? 1 : 0);
}

bool kp_ctrl_metrics_leading(const kp_ctrl_metrics *m)
{
    return __atomic_load_n(&m->leading, __ATOMIC_SEQ_CST) != 0;
}

void kp_ctrl_observe_cloud(kp_ctrl *c, const char *controller, const char *method, int64_t start_mono, int err)
{
    if (!c->m)
        return;
    const char *provider = kp_cloud_name(c->cloud);
    double took = (double)(c->clock->monotonic(c->clock) - start_mono) / 1e9;
    kp_ctrl_observe(c->m->cloud_duration, (const char *const[]){controller, method, provider}, took);
    if (err < 0)
        kp_ctrl_count(c->m->cloud_errors, (const char *const[]){controller, method, provider, kp_ctrl_cloud_error_label(err)});
}

static int64_t meta_time(const cJSON *obj, const char *path)
{
    int64_t ns = 0;
    const char *t = kp_obj_str(obj, path);
    return t && kp_time_parse_rfc3339(t, &ns) == 0 ? ns : 0;
}

void kp_ctrl_node_terminated(kp_ctrl *c, const cJSON *node)
{
    if (!c->m)
        return;
    int64_t now = c->clock->now(c->clock);
    int64_t deleted = meta_time(node, "metadata.deletionTimestamp"), created = meta_time(node, "metadata.creationTimestamp");
    const char *pool[] = {kp_obj_label(node, KP_LABEL_NODEPOOL)};
    if (deleted)
        kp_ctrl_observe(c->m->nodes_termination_duration, pool, (double)(now - deleted) / 1e9);
    if (created)
        kp_ctrl_observe(c->m->nodes_lifetime_duration, pool, (double)(now - created) / 1e9);
}
