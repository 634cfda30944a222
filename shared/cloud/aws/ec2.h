/*
 * EC2 over the EC2 Query API (Action=..., Version=2016-11-15, form POST, XML
 * answers parsed with libxml2): the calls the AWS provider makes, with typed
 * results that carry only the fields the provider reads.
 *
 * Every result lives in the caller's arena (strings included); a call that
 * fails leaves its output untouched and returns a KP_E* code, the AWS error
 * being readable with kp_aws_client_error(). Describe calls follow NextToken
 * to the end and return every page's items.
 *
 * CreateFleet is special: EC2 answers HTTP 200 with per-override failures in
 * an errorSet, next to whatever instances it did launch. Both are returned;
 * deciding what a partial result means is the caller's business.
 */
#ifndef KP_CLOUD_AWS_EC2_H
#define KP_CLOUD_AWS_EC2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "cloud/aws/aws_http.h"

#define KP_EC2_API_VERSION "2016-11-15"

typedef struct kp_ec2_tag {
    const char *key;
    const char *value;
} kp_ec2_tag;

/* Filter.N.Name / Filter.N.Value.M */
typedef struct kp_ec2_filter {
    const char *name;
    const char *const *values;
    size_t n_values;
} kp_ec2_filter;

/* A raw form field, for request parameters the typed inputs do not cover. */
typedef struct kp_ec2_param {
    const char *key;
    const char *value;
} kp_ec2_param;

/* ---- instance types ---------------------------------------------------- */

typedef struct kp_ec2_gpu {
    const char *name;         /* "A10G" (as EC2 spells it) */
    const char *manufacturer; /* "NVIDIA" */
    int32_t count;
    int64_t memory_mib; /* per GPU */
} kp_ec2_gpu;

typedef struct kp_ec2_neuron_device {
    const char *name; /* "Inferentia2" */
    int32_t count;
    int32_t core_count; /* NeuronCores per device */
    int64_t memory_mib;
} kp_ec2_neuron_device;

typedef struct kp_ec2_accelerator { /* InferenceAcceleratorInfo */
    const char *name;
    const char *manufacturer;
    int32_t count;
} kp_ec2_accelerator;

typedef struct kp_ec2_network_card {
    int32_t index;
    int32_t max_interfaces;
} kp_ec2_network_card;

typedef struct kp_ec2_instance_type {
    const char *name; /* "m5.large" */
    int32_t vcpus;    /* VCpuInfo.DefaultVCpus */
    int64_t memory_mib;
    const char **architectures; /* "x86_64", "arm64", ... in EC2's order */
    size_t n_architectures;
    const char **usage_classes; /* "on-demand", "spot", "capacity-block" */
    size_t n_usage_classes;
    const char **virtualization_types; /* "hvm", "paravirtual" */
    size_t n_virtualization_types;
    const char *hypervisor; /* "nitro", "xen"; NULL for bare metal */
    bool bare_metal;
    bool burstable;
    bool current_generation;
    const char *cpu_manufacturer; /* "Intel", "AMD", "AWS"; NULL when absent */
    double clock_ghz;             /* sustained; 0 when absent */
    kp_ec2_gpu *gpus;
    size_t n_gpus;
    kp_ec2_neuron_device *neuron_devices;
    size_t n_neuron_devices;
    kp_ec2_accelerator *accelerators;
    size_t n_accelerators;
    int32_t max_network_interfaces; /* all cards */
    int32_t ipv4_per_interface;
    int32_t default_network_card_index;
    kp_ec2_network_card *network_cards;
    size_t n_network_cards;
    bool efa_supported;
    int32_t max_efa_interfaces;
    bool encryption_in_transit;
    bool ipv6_supported;
    const char *network_performance;   /* "Up to 10 Gigabit" */
    int64_t instance_storage_gb;       /* 0 without instance store */
    const char *instance_storage_nvme; /* "required", "supported", "unsupported"; NULL */
    const char *ebs_optimized_support; /* "default", "supported", "unsupported" */
    int64_t ebs_max_bandwidth_mbps;
    const char *nitro_enclaves_support; /* "supported", "unsupported"; NULL */
    const char **processor_features;    /* processorInfo/supportedFeatures: "nested-virtualization" */
    size_t n_processor_features;
    const char **placement_strategies; /* placementGroupInfo/supportedStrategies */
    size_t n_placement_strategies;
    const char *ena_support; /* "required", "supported", "unsupported"; NULL */
} kp_ec2_instance_type;

typedef struct kp_ec2_instance_type_list {
    kp_ec2_instance_type *items;
    size_t n;
} kp_ec2_instance_type_list;

typedef struct kp_ec2_describe_instance_types_input {
    const char *const *instance_types; /* none: all */
    size_t n_instance_types;
    const kp_ec2_filter *filters;
    size_t n_filters;
    int32_t max_results; /* per page; 0: EC2's default */
} kp_ec2_describe_instance_types_input;

int kp_ec2_describe_instance_types(kp_aws_client *client, kp_arena *arena,
                                   const kp_ec2_describe_instance_types_input *in,
                                   kp_ec2_instance_type_list *out);

/* The start-up permission probe: DescribeInstanceTypes with DryRun=true.
 * 0 when EC2 answers DryRunOperation (allowed); the EC2 error otherwise. */
int kp_ec2_dry_run_describe_instance_types(kp_aws_client *client);

typedef struct kp_ec2_offering {
    const char *instance_type;
    const char *location; /* zone name, zone id or region per location type */
} kp_ec2_offering;

typedef struct kp_ec2_offering_list {
    kp_ec2_offering *items;
    size_t n;
} kp_ec2_offering_list;

/* location_type: "availability-zone" (NULL), "availability-zone-id" or "region". */
int kp_ec2_describe_instance_type_offerings(kp_aws_client *client, kp_arena *arena,
                                            const char *location_type,
                                            const kp_ec2_filter *filters, size_t n_filters,
                                            kp_ec2_offering_list *out);

/* ---- zones, subnets, security groups ----------------------------------- */

typedef struct kp_ec2_availability_zone {
    const char *name;    /* "us-east-1a" */
    const char *zone_id; /* "use1-az6" */
    const char *state;   /* "available" */
    const char *zone_type; /* "availability-zone", "local-zone", "wavelength-zone" */
    const char *region;
} kp_ec2_availability_zone;

typedef struct kp_ec2_availability_zone_list {
    kp_ec2_availability_zone *items;
    size_t n;
} kp_ec2_availability_zone_list;

int kp_ec2_describe_availability_zones(kp_aws_client *client, kp_arena *arena,
                                       const kp_ec2_filter *filters, size_t n_filters,
                                       kp_ec2_availability_zone_list *out);

typedef struct kp_ec2_subnet {
    const char *id;
    const char *vpc_id;
    const char *availability_zone;
    const char *availability_zone_id;
    const char *cidr_block;
    const char *state;
    int64_t available_ip_count;
    bool default_for_az;
    bool map_public_ip_on_launch;
    kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_subnet;

typedef struct kp_ec2_subnet_list {
    kp_ec2_subnet *items;
    size_t n;
} kp_ec2_subnet_list;

int kp_ec2_describe_subnets(kp_aws_client *client, kp_arena *arena, const char *const *ids,
                            size_t n_ids, const kp_ec2_filter *filters, size_t n_filters,
                            kp_ec2_subnet_list *out);

typedef struct kp_ec2_security_group {
    const char *id;
    const char *name;
    const char *vpc_id;
    const char *description;
    kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_security_group;

typedef struct kp_ec2_security_group_list {
    kp_ec2_security_group *items;
    size_t n;
} kp_ec2_security_group_list;

int kp_ec2_describe_security_groups(kp_aws_client *client, kp_arena *arena,
                                    const char *const *ids, size_t n_ids,
                                    const kp_ec2_filter *filters, size_t n_filters,
                                    kp_ec2_security_group_list *out);

/* ---- images and spot prices -------------------------------------------- */

typedef struct kp_ec2_image {
    const char *id;
    const char *name;
    const char *architecture; /* "x86_64", "arm64" */
    const char *state;        /* "available" */
    const char *owner_id;
    const char *creation_date;    /* RFC 3339 as EC2 writes it */
    const char *deprecation_time; /* NULL when not deprecated */
    const char *root_device_name;
    const char *virtualization_type;
    const char *platform; /* "windows" or NULL */
    kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_image;

typedef struct kp_ec2_image_list {
    kp_ec2_image *items;
    size_t n;
} kp_ec2_image_list;

typedef struct kp_ec2_describe_images_input {
    const char *const *ids;
    size_t n_ids;
    const char *const *owners; /* "self", "amazon", account ids */
    size_t n_owners;
    const kp_ec2_filter *filters;
    size_t n_filters;
    bool include_deprecated;
    int32_t max_results; /* 0: EC2's default */
} kp_ec2_describe_images_input;

int kp_ec2_describe_images(kp_aws_client *client, kp_arena *arena,
                           const kp_ec2_describe_images_input *in, kp_ec2_image_list *out);

typedef struct kp_ec2_spot_price {
    const char *instance_type;
    const char *availability_zone;
    const char *product_description; /* "Linux/UNIX" */
    double price_usd;                /* per hour */
    int64_t timestamp_ns;
} kp_ec2_spot_price;

typedef struct kp_ec2_spot_price_list {
    kp_ec2_spot_price *items;
    size_t n;
} kp_ec2_spot_price_list;

typedef struct kp_ec2_spot_price_input {
    const char *const *instance_types;
    size_t n_instance_types;
    const char *const *product_descriptions;
    size_t n_product_descriptions;
    int64_t start_time_ns; /* 0: omitted */
    const kp_ec2_filter *filters;
    size_t n_filters;
    int32_t max_results;
} kp_ec2_spot_price_input;

int kp_ec2_describe_spot_price_history(kp_aws_client *client, kp_arena *arena,
                                       const kp_ec2_spot_price_input *in,
                                       kp_ec2_spot_price_list *out);

/* ---- launch templates -------------------------------------------------- */

typedef struct kp_ec2_block_device {
    const char *device_name; /* "/dev/xvda" */
    int64_t volume_size_gib; /* 0: omitted */
    const char *volume_type; /* "gp3" */
    int64_t iops;            /* 0: omitted */
    int64_t throughput;      /* MiB/s; 0: omitted */
    bool encrypted;
    const char *kms_key_id;
    const char *snapshot_id;
    bool delete_on_termination;
    int32_t volume_initialization_rate; /* MiB/s; 0: omitted */
} kp_ec2_block_device;

typedef struct kp_ec2_lt_network_interface {
    int32_t device_index;
    int32_t network_card_index;
    const char *interface_type; /* NULL, "interface", "efa", "efa-only" */
    const char *const *security_group_ids;
    size_t n_security_group_ids;
    int associate_public_ip; /* -1 unset, 0 false, 1 true */
    bool has_ipv4_prefix_count;
    int32_t ipv4_prefix_count;
    bool has_ipv6_prefix_count;
    int32_t ipv6_prefix_count;
    int32_t ipv6_address_count; /* 0: omitted */
    bool primary_ipv6;
    /* ConnectionTrackingSpecification, seconds; 0: omitted */
    int32_t tcp_established_timeout;
    int32_t udp_stream_timeout;
    int32_t udp_timeout;
} kp_ec2_lt_network_interface;

typedef struct kp_ec2_tag_spec {
    const char *resource_type; /* "instance", "volume", "network-interface", "launch-template" */
    const kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_tag_spec;

typedef struct kp_ec2_metadata_options {
    const char *http_endpoint;      /* "enabled" */
    const char *http_tokens;        /* "required" */
    const char *http_protocol_ipv6; /* "disabled" */
    const char *instance_metadata_tags;
    int32_t http_put_response_hop_limit; /* 0: omitted */
} kp_ec2_metadata_options;

typedef struct kp_ec2_launch_template_data {
    const char *image_id;
    const char *instance_type;
    const char *user_data; /* base64 */
    const char *iam_instance_profile_name;
    const char *iam_instance_profile_arn;
    const char *const *security_group_ids; /* top level; empty when NICs carry them */
    size_t n_security_group_ids;
    const kp_ec2_block_device *block_devices;
    size_t n_block_devices;
    const kp_ec2_lt_network_interface *network_interfaces;
    size_t n_network_interfaces;
    bool monitoring;
    kp_ec2_metadata_options metadata;
    const kp_ec2_tag_spec *tag_specs;
    size_t n_tag_specs;
    const char *placement_tenancy;
    const char *placement_group_id;
    int32_t placement_partition_number; /* 0: omitted */
    const char *capacity_reservation_preference; /* "none", "capacity-reservations-only" */
    const char *capacity_reservation_id;         /* the target; NULL: none */
    const char *market_type; /* InstanceMarketOptions: "capacity-block", "interruptible-capacity-reservation" */
    const char *nested_virtualization; /* CpuOptions: "enabled", "disabled"; NULL: omitted */
    int enclave; /* EnclaveOptions.Enabled: -1 omitted, 0 false, 1 true */
    const kp_ec2_param *extra; /* keys relative to LaunchTemplateData. */
    size_t n_extra;
} kp_ec2_launch_template_data;

typedef struct kp_ec2_launch_template {
    const char *id;
    const char *name;
    int64_t default_version;
    int64_t latest_version;
    const char *create_time;
    kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_launch_template;

typedef struct kp_ec2_launch_template_list {
    kp_ec2_launch_template *items;
    size_t n;
} kp_ec2_launch_template_list;

/* `tags` tag the template itself. */
int kp_ec2_create_launch_template(kp_aws_client *client, kp_arena *arena, const char *name,
                                  const kp_ec2_launch_template_data *data,
                                  const kp_ec2_tag *tags, size_t n_tags,
                                  kp_ec2_launch_template *out);
/* By names (KP_ENOTFOUND when one is missing, as EC2 says) and/or filters. */
int kp_ec2_describe_launch_templates(kp_aws_client *client, kp_arena *arena,
                                     const char *const *names, size_t n_names,
                                     const kp_ec2_filter *filters, size_t n_filters,
                                     kp_ec2_launch_template_list *out);
/* Exactly one of id and name. */
int kp_ec2_delete_launch_template(kp_aws_client *client, const char *id, const char *name);

/* ---- fleets and instances ---------------------------------------------- */

typedef struct kp_ec2_fleet_override {
    const char *instance_type;
    const char *subnet_id;
    const char *availability_zone;
    const char *image_id; /* NULL: the template's */
    double priority;
    bool has_priority;
} kp_ec2_fleet_override;

typedef struct kp_ec2_fleet_template_config {
    const char *launch_template_id; /* one of id and name */
    const char *launch_template_name;
    const char *version; /* NULL: "$Latest" */
    const kp_ec2_fleet_override *overrides;
    size_t n_overrides;
} kp_ec2_fleet_template_config;

typedef struct kp_ec2_create_fleet_input {
    const kp_ec2_fleet_template_config *configs;
    size_t n_configs;
    int32_t total_target_capacity;
    const char *default_target_capacity_type; /* "spot", "on-demand", "capacity-block" */
    const char *spot_allocation_strategy;      /* "price-capacity-optimized" ... */
    const char *on_demand_allocation_strategy; /* "lowest-price", "prioritized" */
    const kp_ec2_tag_spec *tag_specs;
    size_t n_tag_specs;
    const char *context;
    const char *client_token;
    bool dry_run;
    /* ReservedCapacityOptions.ReservationTypes ("interruptible-capacity-reservation"); NULL: none */
    const char *reserved_capacity_type;
} kp_ec2_create_fleet_input;

typedef struct kp_ec2_fleet_instance {
    const char *instance_type;
    const char *availability_zone;
    const char *subnet_id;
    const char *lifecycle; /* "spot", "on-demand" */
    const char **instance_ids;
    size_t n_instance_ids;
} kp_ec2_fleet_instance;

typedef struct kp_ec2_fleet_error {
    const char *code; /* "InsufficientInstanceCapacity" */
    const char *message;
    const char *instance_type;
    const char *availability_zone;
    const char *subnet_id;
    const char *lifecycle;
} kp_ec2_fleet_error;

typedef struct kp_ec2_fleet_result {
    const char *fleet_id;
    kp_ec2_fleet_instance *instances;
    size_t n_instances;
    kp_ec2_fleet_error *errors; /* the errorSet; may be non-empty on success */
    size_t n_errors;
} kp_ec2_fleet_result;

/* Type is always "instant". 0 whenever EC2 answered 200, even with errors. */
int kp_ec2_create_fleet(kp_aws_client *client, kp_arena *arena,
                        const kp_ec2_create_fleet_input *in, kp_ec2_fleet_result *out);

typedef struct kp_ec2_instance {
    const char *id;
    const char *instance_type;
    const char *state; /* "pending", "running", "shutting-down", "terminated" ... */
    const char *availability_zone;
    const char *subnet_id;
    const char *vpc_id;
    const char *image_id;
    const char *private_dns_name;
    const char *private_ip;
    const char *architecture;
    const char *lifecycle; /* "spot", "capacity-block", "interruptible-capacity-reservation"; NULL for on-demand */
    const char *capacity_reservation_id;
    const char *capacity_reservation_preference; /* "capacity-reservations-only", "open", "none" */
    const char *placement_group_id;              /* placement/groupId; NULL */
    const char *iam_instance_profile_arn;        /* iamInstanceProfile/arn; NULL */
    int32_t partition_number;                    /* placement/partitionNumber; 0 */
    const char *launch_time;
    int64_t launch_time_ns;
    kp_ec2_tag *tags;
    size_t n_tags;
    const char **security_group_ids; /* groupSet; none listed: unknown */
    size_t n_security_group_ids;
} kp_ec2_instance;

typedef struct kp_ec2_instance_list {
    kp_ec2_instance *items;
    size_t n;
} kp_ec2_instance_list;

int kp_ec2_describe_instances(kp_aws_client *client, kp_arena *arena, const char *const *ids,
                              size_t n_ids, const kp_ec2_filter *filters, size_t n_filters,
                              kp_ec2_instance_list *out);

typedef struct kp_ec2_state_change {
    const char *instance_id;
    const char *current_state;
    const char *previous_state;
} kp_ec2_state_change;

typedef struct kp_ec2_state_change_list {
    kp_ec2_state_change *items;
    size_t n;
} kp_ec2_state_change_list;

int kp_ec2_terminate_instances(kp_aws_client *client, kp_arena *arena, const char *const *ids,
                               size_t n_ids, kp_ec2_state_change_list *out);

int kp_ec2_create_tags(kp_aws_client *client, const char *const *resource_ids, size_t n_ids,
                       const kp_ec2_tag *tags, size_t n_tags);

/* ---- capacity reservations, placement groups, instance status ---------- */

typedef struct kp_ec2_capacity_reservation {
    const char *id;
    const char *owner_id;
    const char *availability_zone;
    const char *availability_zone_id;
    const char *instance_type;
    const char *instance_platform; /* "Linux/UNIX" */
    const char *tenancy;
    const char *state;                   /* "active", "expired", "pending" ... */
    const char *instance_match_criteria; /* "open", "targeted" */
    const char *reservation_type;        /* "default", "capacity-block"; NULL when EC2 omits it */
    bool interruptible;
    int32_t total_instance_count;
    int32_t available_instance_count;
    int64_t end_date_ns; /* 0: no end (unlimited) */
    kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_capacity_reservation;

typedef struct kp_ec2_capacity_reservation_list {
    kp_ec2_capacity_reservation *items;
    size_t n;
} kp_ec2_capacity_reservation_list;

/* By ids (EC2 then takes no MaxResults; an unknown id is KP_ENOTFOUND,
 * InvalidCapacityReservationId.NotFound) and/or filters (MaxResults 1000). */
int kp_ec2_describe_capacity_reservations(kp_aws_client *client, kp_arena *arena,
                                          const char *const *ids, size_t n_ids,
                                          const kp_ec2_filter *filters, size_t n_filters,
                                          kp_ec2_capacity_reservation_list *out);

typedef struct kp_ec2_placement_group {
    const char *id;
    const char *name;
    const char *strategy;     /* "cluster", "partition", "spread" */
    const char *state;        /* "available" ... */
    const char *spread_level; /* "rack", "host"; NULL */
    int32_t partition_count;
} kp_ec2_placement_group;

typedef struct kp_ec2_placement_group_list {
    kp_ec2_placement_group *items;
    size_t n;
} kp_ec2_placement_group_list;

/* GroupId.N and/or GroupName.N, and filters. */
int kp_ec2_describe_placement_groups(kp_aws_client *client, kp_arena *arena, const char *group_id,
                                     const char *group_name, const kp_ec2_filter *filters,
                                     size_t n_filters, kp_ec2_placement_group_list *out);

typedef struct kp_ec2_status_event {
    const char *code; /* "instance-retirement", "system-reboot" ... */
    const char *description;
    int64_t not_before_ns;
} kp_ec2_status_event;

typedef struct kp_ec2_instance_status {
    const char *instance_id;
    const char *availability_zone;
    const char *state;           /* instanceState/name */
    const char *system_status;   /* "ok", "impaired", "insufficient-data" ... */
    const char *instance_status; /* likewise */
    /* The earliest impairedSince of a failed check (system or instance); 0: none. */
    int64_t impaired_since_ns;
    /* Per check: whether a detail failed, and since when (0: unknown). */
    bool instance_failed, system_failed;
    int64_t instance_failed_since_ns, system_failed_since_ns;
    kp_ec2_status_event *events;
    size_t n_events;
} kp_ec2_instance_status;

typedef struct kp_ec2_instance_status_list {
    kp_ec2_instance_status *items;
    size_t n;
} kp_ec2_instance_status_list;

/* DescribeInstanceStatus with `filters` (IncludeAllInstances=true, MaxResults 1000). */
int kp_ec2_describe_instance_status(kp_aws_client *client, kp_arena *arena,
                                    const kp_ec2_filter *filters, size_t n_filters,
                                    kp_ec2_instance_status_list *out);

/* RunInstances with DryRun=true: one instance from `launch_template` ($Latest)
 * of `instance_type` in `subnet_id` (on the primary interface when
 * `interfaces` is set: the class's network interfaces, subnet on each), the
 * tags on the instance, its volumes and interfaces. 0 when EC2 answers
 * DryRunOperation; the EC2 error otherwise (kp_aws_client_error has it). */
typedef struct kp_ec2_run_instances_dry_run {
    const char *launch_template_name;
    const char *instance_type;
    const char *subnet_id;
    const kp_ec2_lt_network_interface *interfaces; /* only indices and type are sent */
    size_t n_interfaces;
    const kp_ec2_tag *tags;
    size_t n_tags;
} kp_ec2_run_instances_dry_run;

int kp_ec2_dry_run_run_instances(kp_aws_client *client, const kp_ec2_run_instances_dry_run *in);

/* CreateFleet with DryRun=true: 0 on DryRunOperation, else the EC2 error. */
int kp_ec2_dry_run_create_fleet(kp_aws_client *client, const kp_ec2_create_fleet_input *in);

/* The value of tag `key`, or NULL. */
const char *kp_ec2_tag_get(const kp_ec2_tag *tags, size_t n_tags, const char *key);

#endif
