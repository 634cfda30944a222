/*
 * The object model: the Kubernetes and Karpenter objects the controller, the
 * solver, the disruption planner and the webhook read, as plain C structs
 * decoded from JSON (decode.h).
 *
 * Ownership: every pointer inside an object points into the arena the object
 * was decoded with; nothing points into the JSON it came from. Free the arena
 * and the objects are gone.
 *
 * Shapes chosen for reading on hot paths:
 *   - arrays are `items`/`count` pairs (or `x` + `n_x`), NULL when empty;
 *   - label-like maps (labels, annotations, nodeSelector, matchLabels, tags)
 *     and resource lists are sorted by key, so lookups are binary searches;
 *   - strings are never NULL: an absent string is "". Where absent and ""
 *     mean different things there is a `has_` flag beside the field;
 *   - optional numbers, booleans and durations carry a `has_` flag too;
 *   - derived facts (effective pod requests, host ports, owner kinds) are
 *     computed once at decode time so readers never recompute them.
 * Defaults that the API server or a CRD schema would apply (expireAfter
 * 720h, budgets 10%, ...) are NOT applied here unless a field says so: the
 * `has_` flags let the defaulting layer or the reader decide.
 */
#ifndef KP_API_OBJECTS_H
#define KP_API_OBJECTS_H

#include "api/duration.h"
#include "api/quantity.h"
#include "api/requirements.h"
#include "api/taints.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- basics */

typedef struct kp_strings {
    const char **items;
    size_t count;
} kp_strings;

typedef struct kp_label {
    const char *key;
    const char *value;
} kp_label;

/* Sorted by key (strcmp), keys unique (the last duplicate in the JSON wins,
 * as in Go's decoding). Used for labels, annotations, nodeSelector,
 * matchLabels, tags and other string maps. */
typedef struct kp_labels {
    kp_label *items;
    size_t count;
} kp_labels;

/* The value for `key`, or NULL when absent. */
const char *kp_labels_get(const kp_labels *labels, const char *key);

typedef struct kp_resource {
    const char *name; /* "cpu", "memory", "nvidia.com/gpu", ... */
    kp_quantity quantity;
} kp_resource;

/* Sorted by name, names unique. */
typedef struct kp_resource_list {
    kp_resource *items;
    size_t count;
} kp_resource_list;

/* The quantity for `name`, or NULL when absent. */
const kp_quantity *kp_resource_list_get(const kp_resource_list *list, const char *name);
/* The quantity in milli-units, 0 when absent. */
int64_t kp_resource_list_milli(const kp_resource_list *list, const char *name);

/* A metav1.Time: ns since the Unix epoch when `set`. */
typedef struct kp_time {
    bool set;
    int64_t ns;
} kp_time;

enum kp_condition_status {
    KP_CONDITION_UNKNOWN = 0, /* "Unknown", absent or anything else */
    KP_CONDITION_TRUE,
    KP_CONDITION_FALSE,
};

typedef struct kp_condition {
    const char *type;
    enum kp_condition_status status;
    const char *reason;
    const char *message;
    kp_time last_transition_time;
    int64_t observed_generation;
} kp_condition;

typedef struct kp_conditions {
    kp_condition *items; /* in the order written */
    size_t count;
} kp_conditions;

/* The condition of `type`, or NULL. */
const kp_condition *kp_conditions_get(const kp_conditions *conditions, const char *type);
/* True when the condition of `type` exists with status True. */
bool kp_conditions_is_true(const kp_conditions *conditions, const char *type);

/* intstr.IntOrString (PDB minAvailable / maxUnavailable). */
enum kp_int_or_string_type {
    KP_INT_OR_STRING_UNSET = 0,
    KP_INT_OR_STRING_INT,
    KP_INT_OR_STRING_STRING, /* usually a percentage: "50%" */
};

typedef struct kp_int_or_string {
    enum kp_int_or_string_type type;
    int32_t int_value;
    const char *str_value; /* "" unless type is STRING */
} kp_int_or_string;

/* ------------------------------------------------------------ object meta */

typedef struct kp_owner_ref {
    const char *api_version;
    const char *kind;
    const char *name;
    const char *uid;
    bool controller;
    bool block_owner_deletion;
} kp_owner_ref;

typedef struct kp_object_meta {
    const char *name;
    const char *generate_name;
    const char *namespace; /* "" for cluster-scoped objects */
    const char *uid;
    const char *resource_version;
    int64_t generation;
    kp_time creation_timestamp;
    kp_time deletion_timestamp; /* set: the object is terminating */
    kp_labels labels;
    kp_labels annotations;
    kp_owner_ref *owner_refs;
    size_t n_owner_refs;
    kp_strings finalizers;
} kp_object_meta;

/* ------------------------------------------------------------- selectors */

/* One requirement of a NodeSelectorTerm (with Karpenter's minValues), of a
 * LabelSelector's matchExpressions, or of a StorageClass topology term
 * (always In there). */
typedef struct kp_selector_req {
    const char *key;
    enum kp_selector_op op;
    const char **values;
    size_t n_values;
    int32_t min_values; /* 0 = unset */
} kp_selector_req;

/* metav1.LabelSelector. A present selector with no terms matches
 * everything; an absent one (present == false) matches nothing where
 * Kubernetes says so (e.g. pod affinity terms). */
typedef struct kp_label_selector {
    bool present;
    kp_labels match_labels;
    kp_selector_req *match_expressions;
    size_t n_match_expressions;
} kp_label_selector;

/* A NodeSelectorTerm: AND of its expressions and fields. */
typedef struct kp_node_selector_term {
    kp_selector_req *match_expressions;
    size_t n_match_expressions;
    kp_selector_req *match_fields; /* metadata.name only, in practice */
    size_t n_match_fields;
} kp_node_selector_term;

typedef struct kp_preferred_node_term {
    int32_t weight;
    kp_node_selector_term preference;
} kp_preferred_node_term;

typedef struct kp_node_affinity {
    /* requiredDuringSchedulingIgnoredDuringExecution: OR of the terms. When
     * has_required and n_required == 0, nothing matches. */
    bool has_required;
    kp_node_selector_term *required;
    size_t n_required;
    kp_preferred_node_term *preferred;
    size_t n_preferred;
} kp_node_affinity;

typedef struct kp_pod_affinity_term {
    kp_label_selector label_selector;
    kp_strings namespaces;
    kp_label_selector namespace_selector;
    const char *topology_key;
    kp_strings match_label_keys;
    kp_strings mismatch_label_keys;
} kp_pod_affinity_term;

typedef struct kp_weighted_pod_affinity_term {
    int32_t weight;
    kp_pod_affinity_term term;
} kp_weighted_pod_affinity_term;

/* podAffinity or podAntiAffinity. */
typedef struct kp_pod_affinity {
    kp_pod_affinity_term *required;
    size_t n_required;
    kp_weighted_pod_affinity_term *preferred;
    size_t n_preferred;
} kp_pod_affinity;

typedef struct kp_affinity {
    kp_node_affinity node;
    kp_pod_affinity pod;
    kp_pod_affinity pod_anti;
} kp_affinity;

/* ------------------------------------------------------------------- pod */

enum kp_when_unsatisfiable {
    KP_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE = 0,
    KP_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY,
};

/* nodeAffinityPolicy / nodeTaintsPolicy. UNSET lets the solver apply
 * Kubernetes' defaults (Honor for affinity, Ignore for taints). */
enum kp_inclusion_policy {
    KP_POLICY_UNSET = 0,
    KP_POLICY_HONOR,
    KP_POLICY_IGNORE,
};

typedef struct kp_topology_spread {
    int32_t max_skew;
    const char *topology_key;
    enum kp_when_unsatisfiable when_unsatisfiable;
    kp_label_selector label_selector;
    int32_t min_domains; /* 0 = unset */
    enum kp_inclusion_policy node_affinity_policy;
    enum kp_inclusion_policy node_taints_policy;
    kp_strings match_label_keys;
} kp_topology_spread;

enum kp_protocol {
    KP_PROTOCOL_TCP = 0, /* the default */
    KP_PROTOCOL_UDP,
    KP_PROTOCOL_SCTP,
};

typedef struct kp_container_port {
    const char *name;
    int32_t container_port;
    int32_t host_port; /* 0 = none */
    enum kp_protocol protocol;
    const char *host_ip; /* "" = every address */
} kp_container_port;

typedef struct kp_container {
    const char *name;
    const char *image;
    kp_resource_list requests; /* as written (see pod_requests.h for defaulting) */
    kp_resource_list limits;
    bool restart_always; /* restartPolicy: Always: a sidecar when an init container */
    bool has_claims;     /* resources.claims: it consumes ResourceClaims (DRA) */
    /* From the pod's status (in-place resize): what the kubelet reports the
     * container runs with and what it has allocated; has_status when the
     * status names this container with resources. */
    bool has_status;
    kp_resource_list status_requests;
    kp_resource_list allocated;
    kp_container_port *ports;
    size_t n_ports;
} kp_container;

enum kp_volume_kind {
    KP_VOLUME_OTHER = 0,
    KP_VOLUME_PVC,
    KP_VOLUME_EPHEMERAL,
    KP_VOLUME_EMPTY_DIR,
    KP_VOLUME_HOST_PATH,
    KP_VOLUME_CONFIG_MAP,
    KP_VOLUME_SECRET,
    KP_VOLUME_PROJECTED,
    KP_VOLUME_DOWNWARD_API,
    KP_VOLUME_CSI,
};

typedef struct kp_volume {
    const char *name;
    enum kp_volume_kind kind;
    /* PVC: persistentVolumeClaim.claimName. EPHEMERAL: the claim Kubernetes
     * creates, "<pod name>-<volume name>" ("" when the pod has no name). */
    const char *claim_name;
    /* EPHEMERAL: the volumeClaimTemplate's spec.storageClassName. */
    bool has_storage_class_name;
    const char *storage_class_name;
} kp_volume;

enum kp_pod_phase {
    KP_POD_PHASE_UNSET = 0,
    KP_POD_PHASE_PENDING,
    KP_POD_PHASE_RUNNING,
    KP_POD_PHASE_SUCCEEDED,
    KP_POD_PHASE_FAILED,
    KP_POD_PHASE_UNKNOWN,
};

/* A host port a pod claims; ip "0.0.0.0" when the container gave none. */
typedef struct kp_host_port {
    const char *ip;
    enum kp_protocol protocol;
    int32_t port;
} kp_host_port;

typedef struct kp_pod {
    kp_object_meta meta;

    /* spec */
    const char *node_name;
    const char *scheduler_name;
    const char *priority_class_name;
    bool has_priority;
    int32_t priority;
    kp_labels node_selector;
    kp_affinity affinity;
    kp_toleration *tolerations;
    size_t n_tolerations;
    kp_topology_spread *topology_spread;
    size_t n_topology_spread;
    kp_container *containers;
    size_t n_containers;
    kp_container *init_containers;
    size_t n_init_containers;
    kp_resource_list overhead;
    kp_resource_list pod_level_requests; /* spec.resources (pod-level resources) */
    kp_resource_list pod_level_limits;
    kp_volume *volumes;
    size_t n_volumes;
    bool host_network;
    bool has_termination_grace_period;
    int64_t termination_grace_period_seconds;

    /* status */
    enum kp_pod_phase phase;
    kp_conditions conditions;
    const char *nominated_node_name;
    kp_time start_time; /* status.startTime: the do-not-disrupt duration runs from here */

    /* derived at decode time */
    kp_resource_list requests; /* effective requests, overhead included (pod_requests.h) */
    kp_host_port *host_ports;  /* regular containers' host ports */
    size_t n_host_ports;
    const char *controller_kind; /* the controlling owner's kind, "" if none */
    const char *controller_name;
    bool owned_by_daemonset;   /* an owner is apps/v1 DaemonSet */
    bool owned_by_statefulset; /* an owner is apps/v1 StatefulSet */
    bool owned_by_node;        /* an owner is v1 Node: a static pod's mirror */
    bool is_mirror;            /* annotation kubernetes.io/config.mirror */
    bool failed_to_schedule;   /* condition PodScheduled with reason Unschedulable */
    /* spec.resourceClaims, or a container's resources.claims: Dynamic
     * Resource Allocation, which is not scheduled for (pod_rules.h). */
    bool has_dra;
    /* A resize the kubelet cannot satisfy (status.resize "Infeasible", or
     * the PodResizePending condition with that reason). */
    bool resize_infeasible;
    kp_container *container_statuses; /* as decoded: name, status_requests, allocated */
    size_t n_container_statuses;
    kp_container *init_container_statuses;
    size_t n_init_container_statuses;
} kp_pod;

/* ------------------------------------------------------------------ node */

typedef struct kp_node_info {
    const char *kubelet_version;
    const char *os_image;
    const char *operating_system;
    const char *architecture;
    const char *kernel_version;
    const char *container_runtime_version;
} kp_node_info;

typedef struct kp_node {
    kp_object_meta meta;
    const char *provider_id;
    kp_taint *taints;
    size_t n_taints;
    bool unschedulable;
    kp_resource_list capacity;
    kp_resource_list allocatable; /* = capacity when absent, as the API server defaults */
    kp_conditions conditions;
    kp_node_info node_info;
} kp_node;

/* ------------------------------------------------------------- Karpenter */

typedef struct kp_node_class_ref {
    const char *group;
    const char *kind;
    const char *name;
} kp_node_class_ref;

/* NodeClaimTemplateSpec and NodeClaimSpec (resources only on NodeClaims). */
typedef struct kp_nodeclaim_spec {
    kp_selector_req *requirements; /* with minValues */
    size_t n_requirements;
    kp_taint *taints;
    size_t n_taints;
    kp_taint *startup_taints;
    size_t n_startup_taints;
    kp_resource_list resource_requests;
    bool has_node_class_ref;
    kp_node_class_ref node_class_ref;
    bool has_expire_after; /* "Never": expire_after.never */
    kp_duration expire_after;
    bool has_termination_grace_period;
    kp_duration termination_grace_period;
} kp_nodeclaim_spec;

enum kp_consolidation_policy {
    KP_CONSOLIDATION_UNSET = 0,
    KP_CONSOLIDATION_WHEN_EMPTY,
    KP_CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED,
    KP_CONSOLIDATION_BALANCED,
};

/* Disruption reasons as bits, so "does this budget apply" is one AND. */
enum kp_disruption_reason {
    KP_REASON_EMPTY = 1 << 0,
    KP_REASON_UNDERUTILIZED = 1 << 1,
    KP_REASON_DRIFTED = 1 << 2,
};

typedef struct kp_budget {
    const char *nodes; /* "10%" or "5" */
    bool has_schedule;
    const char *schedule; /* cron, UTC */
    bool has_duration;
    kp_duration duration;
    /* has_reasons false: applies to every reason. true: only those in the
     * mask (an empty list applies to none). */
    bool has_reasons;
    unsigned reasons;
} kp_budget;

typedef struct kp_disruption {
    enum kp_consolidation_policy consolidation_policy;
    bool has_consolidate_after; /* "Never": consolidate_after.never */
    kp_duration consolidate_after;
    bool has_budgets; /* false: absent (the CRD default applies) */
    kp_budget *budgets;
    size_t n_budgets;
} kp_disruption;

typedef struct kp_nodepool {
    kp_object_meta meta;
    /* spec.template */
    kp_labels template_labels;
    kp_labels template_annotations;
    kp_nodeclaim_spec template;
    kp_disruption disruption;
    kp_resource_list limits;
    bool has_weight;
    int32_t weight;
    bool has_replicas; /* static NodePools */
    int64_t replicas;
    /* status */
    kp_resource_list status_resources;
    bool has_status_nodes;
    int64_t status_nodes;
    int64_t node_class_observed_generation;
    kp_conditions conditions;
} kp_nodepool;

typedef struct kp_nodeclaim {
    kp_object_meta meta;
    kp_nodeclaim_spec spec;
    /* status */
    const char *provider_id;
    const char *node_name;
    const char *image_id;
    kp_resource_list capacity;
    kp_resource_list allocatable;
    kp_conditions conditions;
    kp_time last_pod_event_time;
} kp_nodeclaim;

/* karpenter.sh/v1alpha1 NodeOverlay (api/nodeoverlay.h): what the scheduling
 * simulation assumes about the instance types its requirements select. */
typedef struct kp_nodeoverlay {
    kp_object_meta meta;
    kp_selector_req *requirements; /* no minValues */
    size_t n_requirements;
    bool has_price;
    const char *price; /* "1.25": the hourly price of every offering selected */
    bool has_price_adjustment;
    const char *price_adjustment; /* "+10%", "-15%", "+0.5", "-0.25" */
    kp_resource_list capacity;    /* extended resources selected types get */
    bool has_weight;
    int32_t weight; /* absent: 0 */
    kp_conditions conditions;
    /* Not decoded: why the overlay fails validation, or NULL
     * (kp_nodeoverlay_from_json fills it). */
    const char *invalid;
} kp_nodeoverlay;

/* -------------------------------------------------------- EC2NodeClass */

/* subnetSelectorTerms, securityGroupSelectorTerms and
 * capacityReservationSelectorTerms share this shape; each kind uses its
 * fields (subnets: tags, id; security groups: tags, id, name; ...). */
typedef struct kp_ec2_selector_term {
    kp_labels tags;
    const char *id;
    const char *name;
    const char *owner_id;
    const char *instance_match_criteria;
} kp_ec2_selector_term;

typedef struct kp_ami_selector_term {
    const char *alias; /* "al2023@latest" */
    kp_labels tags;
    const char *id;
    const char *name;
    const char *owner;
    const char *ssm_parameter;
} kp_ami_selector_term;

/* The kubelet configuration fields Karpenter reads. String maps keep their
 * values as text: reserved amounts may be CEL expressions. */
typedef struct kp_kubelet_config {
    bool present;
    kp_strings cluster_dns;
    bool has_max_pods;
    int32_t max_pods;
    const char *max_pods_expr; /* maxPods given as a string (a CEL expression) */
    bool has_pods_per_core;
    int32_t pods_per_core;
    kp_labels system_reserved;
    kp_labels kube_reserved;
    kp_labels eviction_hard;
    kp_labels eviction_soft;
    kp_labels eviction_soft_grace_period;
    bool has_eviction_max_pod_grace_period;
    int32_t eviction_max_pod_grace_period;
    bool has_image_gc_high_threshold_percent;
    int32_t image_gc_high_threshold_percent;
    bool has_image_gc_low_threshold_percent;
    int32_t image_gc_low_threshold_percent;
    bool has_cpu_cfs_quota;
    bool cpu_cfs_quota;
    const char *raw_json; /* the whole object, unformatted, for fields not listed here */
} kp_kubelet_config;

typedef struct kp_block_device {
    bool has_delete_on_termination;
    bool delete_on_termination;
    bool has_encrypted;
    bool encrypted;
    bool has_iops;
    int64_t iops;
    const char *kms_key_id;
    const char *snapshot_id;
    bool has_throughput;
    int64_t throughput;
    bool has_volume_initialization_rate;
    int32_t volume_initialization_rate;
    bool has_volume_size;
    kp_quantity volume_size;
    const char *volume_type;
} kp_block_device;

typedef struct kp_block_device_mapping {
    const char *device_name;
    bool root_volume;
    bool has_ebs;
    kp_block_device ebs;
} kp_block_device_mapping;

typedef struct kp_metadata_options {
    bool present;
    const char *http_endpoint;
    const char *http_protocol_ipv6;
    bool has_http_put_response_hop_limit;
    int64_t http_put_response_hop_limit;
    const char *http_tokens;
} kp_metadata_options;

enum kp_instance_store_policy {
    KP_INSTANCE_STORE_UNSET = 0,
    KP_INSTANCE_STORE_RAID0,
};

typedef struct kp_nc_subnet {
    const char *id;
    const char *zone;
    const char *zone_id;
} kp_nc_subnet;

typedef struct kp_nc_security_group {
    const char *id;
    const char *name;
} kp_nc_security_group;

typedef struct kp_nc_ami {
    const char *id;
    const char *name;
    bool deprecated;
    kp_selector_req *requirements;
    size_t n_requirements;
} kp_nc_ami;

/* spec.networkInterfaces[] */
typedef struct kp_nc_network_interface {
    int32_t network_card_index;
    int32_t device_index;
    const char *interface_type; /* "interface", "efa-only" */
} kp_nc_network_interface;

/* spec.connectionTracking: idle timeouts in seconds. */
typedef struct kp_connection_tracking {
    bool present;
    bool has_tcp_established_timeout;
    int32_t tcp_established_timeout;
    bool has_udp_stream_timeout;
    int32_t udp_stream_timeout;
    bool has_udp_timeout;
    int32_t udp_timeout;
} kp_connection_tracking;

/* status.capacityReservations[] */
typedef struct kp_nc_capacity_reservation {
    const char *id;
    const char *availability_zone;
    const char *instance_type;
    const char *owner_id;
    const char *instance_match_criteria; /* "open", "targeted" */
    const char *reservation_type;        /* "default" (also when ""), "capacity-block" */
    const char *state;                   /* "active" (also when ""), "expiring" */
    bool interruptible;
    kp_time end_time;
} kp_nc_capacity_reservation;

typedef struct kp_ec2nodeclass {
    kp_object_meta meta;
    /* spec */
    const char *ami_family; /* "" when absent (derive from the alias) */
    kp_ami_selector_term *ami_selector_terms;
    size_t n_ami_selector_terms;
    kp_ec2_selector_term *subnet_selector_terms;
    size_t n_subnet_selector_terms;
    kp_ec2_selector_term *security_group_selector_terms;
    size_t n_security_group_selector_terms;
    kp_ec2_selector_term *capacity_reservation_selector_terms;
    size_t n_capacity_reservation_selector_terms;
    const char *role;
    const char *instance_profile;
    kp_labels tags;
    kp_kubelet_config kubelet;
    kp_block_device_mapping *block_device_mappings;
    size_t n_block_device_mappings;
    kp_metadata_options metadata_options;
    bool has_user_data;
    const char *user_data;
    enum kp_instance_store_policy instance_store_policy;
    bool has_associate_public_ip_address;
    bool associate_public_ip_address;
    bool has_detailed_monitoring;
    bool detailed_monitoring;
    const char *context;
    bool has_placement_group_selector; /* spec.placementGroupSelector: name or id */
    const char *placement_group_name;
    const char *placement_group_id;
    kp_nc_network_interface *network_interfaces;
    size_t n_network_interfaces;
    bool has_ip_prefix_count;
    int32_t ip_prefix_count;
    const char *nested_virtualization; /* spec.cpuOptions.nestedVirtualization; "" when absent */
    kp_connection_tracking connection_tracking;
    /* status */
    kp_nc_subnet *status_subnets;
    size_t n_status_subnets;
    kp_nc_security_group *status_security_groups;
    size_t n_status_security_groups;
    kp_nc_ami *status_amis;
    size_t n_status_amis;
    const char *status_instance_profile;
    kp_conditions conditions;
    kp_nc_capacity_reservation *status_capacity_reservations;
    size_t n_status_capacity_reservations;
} kp_ec2nodeclass;

/* ------------------------------------------------------------- workloads */

typedef struct kp_pvc kp_pvc;

/* DaemonSet, Deployment, StatefulSet, ReplicaSet and Job share one shape.
 * The template is decoded as a Pod (metadata and spec, derived fields
 * included); its namespace is the workload's when the template has none. */
typedef struct kp_workload {
    kp_object_meta meta;
    int32_t replicas;     /* Deployment/StatefulSet/ReplicaSet: spec.replicas, 1 when absent */
    int32_t parallelism;  /* Job: 1 when absent */
    bool has_completions; /* Job */
    int32_t completions;
    kp_label_selector selector;
    kp_pod template;
    kp_pvc *volume_claim_templates; /* StatefulSet */
    size_t n_volume_claim_templates;
} kp_workload;

typedef struct kp_pdb {
    kp_object_meta meta;
    kp_label_selector selector;
    /* No pod matches: the selector is absent, or empty under policy/v1beta1
     * (an empty selector matches every pod under policy/v1). */
    bool selects_none;
    kp_int_or_string min_available;
    kp_int_or_string max_unavailable;
    bool always_allow_unhealthy; /* spec.unhealthyPodEvictionPolicy: AlwaysAllow */
    int32_t disruptions_allowed;
    int32_t current_healthy;
    int32_t desired_healthy;
    int32_t expected_pods;
} kp_pdb;

/* --------------------------------------------------------------- storage */

enum kp_pvc_phase {
    KP_PVC_PHASE_UNSET = 0,
    KP_PVC_PHASE_PENDING,
    KP_PVC_PHASE_BOUND,
    KP_PVC_PHASE_LOST,
};

struct kp_pvc {
    kp_object_meta meta;
    bool has_storage_class_name; /* absent: the default class; "": no class */
    const char *storage_class_name;
    const char *volume_name;
    kp_strings access_modes;
    kp_resource_list requests;
    enum kp_pvc_phase phase;
};

typedef struct kp_pv {
    kp_object_meta meta;
    bool has_node_affinity; /* spec.nodeAffinity.required: OR of the terms */
    kp_node_selector_term *node_affinity;
    size_t n_node_affinity;
    const char *storage_class_name;
    bool has_claim_ref;
    const char *claim_namespace;
    const char *claim_name;
    kp_resource_list capacity;
    const char *csi_driver; /* spec.csi.driver ("ebs.csi.aws.com" for awsElasticBlockStore), "" when neither */
    bool local_or_host_path; /* spec.local or spec.hostPath: tied to a node's disk */
} kp_pv;

/* storage.k8s.io/v1 CSINode: per CSI driver, how many volumes the node can
 * attach (allocatable.count; has_count false: no limit). */
typedef struct kp_csinode_driver {
    const char *name;
    bool has_count;
    int32_t count;
} kp_csinode_driver;

typedef struct kp_csinode {
    kp_object_meta meta; /* named after its Node */
    kp_csinode_driver *drivers;
    size_t n_drivers;
} kp_csinode;

enum kp_volume_binding_mode {
    KP_BINDING_IMMEDIATE = 0, /* the default */
    KP_BINDING_WAIT_FOR_FIRST_CONSUMER,
};

typedef struct kp_storage_class {
    kp_object_meta meta;
    const char *provisioner;
    enum kp_volume_binding_mode volume_binding_mode;
    /* allowedTopologies: OR of terms, each an AND of In requirements. */
    kp_node_selector_term *allowed_topologies;
    size_t n_allowed_topologies;
} kp_storage_class;

/* ---------------------------------------------------------- any object */

enum kp_kind {
    KP_KIND_UNKNOWN = 0,
    KP_KIND_POD,
    KP_KIND_NODE,
    KP_KIND_NODEPOOL,
    KP_KIND_NODECLAIM,
    KP_KIND_EC2NODECLASS,
    KP_KIND_DAEMONSET,
    KP_KIND_DEPLOYMENT,
    KP_KIND_STATEFULSET,
    KP_KIND_REPLICASET,
    KP_KIND_JOB,
    KP_KIND_PDB,
    KP_KIND_PVC,
    KP_KIND_PV,
    KP_KIND_STORAGE_CLASS,
    KP_KIND_NODEOVERLAY,
    KP_KIND_CSINODE,
};

typedef struct kp_object {
    enum kp_kind kind;
    const char *api_version;
    const char *kind_name; /* as written: "Pod", "NodePool", ... */
    union {
        kp_pod pod;
        kp_node node;
        kp_nodepool nodepool;
        kp_nodeclaim nodeclaim;
        kp_ec2nodeclass ec2nodeclass;
        kp_workload workload; /* DaemonSet, Deployment, StatefulSet, ReplicaSet, Job */
        kp_pdb pdb;
        kp_pvc pvc;
        kp_pv pv;
        kp_storage_class storage_class;
        kp_nodeoverlay nodeoverlay;
        kp_csinode csinode;
    } u;
} kp_object;

/* "Pod", "NodePool", ...; "Unknown" for KP_KIND_UNKNOWN. */
const char *kp_kind_name(enum kp_kind kind);
/* The metadata of any decoded object (NULL for KP_KIND_UNKNOWN). */
const kp_object_meta *kp_object_get_meta(const kp_object *obj);

#endif
