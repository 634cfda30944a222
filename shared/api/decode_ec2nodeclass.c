/*
 * The AWS provider's karpenter.k8s.aws/v1 EC2NodeClass: the spec fields the
 * controller launches with and the status it resolves.
 */
#include "api/decode_internal.h"

#include "api/crd_tables.h"
#include "api/decode.h"

#include <stdlib.h>

/* ----------------------------------------------------------- selectors */

static int decode_selector_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_ec2_selector_term *t = out;
    int err;
    if ((err = kp_dec_labels(d, json, "tags", &t->tags)) < 0 ||
        (err = kp_dec_string(d, json, "id", &t->id)) < 0 ||
        (err = kp_dec_string(d, json, "name", &t->name)) < 0 ||
        (err = kp_dec_string(d, json, "ownerID", &t->owner_id)) < 0 ||
        (err = kp_dec_string(d, json, "instanceMatchCriteria", &t->instance_match_criteria)) < 0)
        return err;
    return 0;
}

static int decode_ami_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_ami_selector_term *t = out;
    int err;
    if ((err = kp_dec_string(d, json, "alias", &t->alias)) < 0 ||
        (err = kp_dec_labels(d, json, "tags", &t->tags)) < 0 ||
        (err = kp_dec_string(d, json, "id", &t->id)) < 0 ||
        (err = kp_dec_string(d, json, "name", &t->name)) < 0 ||
        (err = kp_dec_string(d, json, "owner", &t->owner)) < 0 ||
        (err = kp_dec_string(d, json, "ssmParameter", &t->ssm_parameter)) < 0)
        return err;
    return 0;
}

/* --------------------------------------------------------------- kubelet */

static int decode_max_pods(kp_decoder *d, const cJSON *json, kp_kubelet_config *k)
{
    kp_int_or_string v;
    int err = kp_dec_int_or_string(d, json, "maxPods", &v);
    if (err < 0) return err;
    k->has_max_pods = v.type == KP_INT_OR_STRING_INT;
    k->max_pods = v.int_value;
    k->max_pods_expr = v.str_value;
    return 0;
}

static int decode_kubelet_maps(kp_decoder *d, const cJSON *json, kp_kubelet_config *k)
{
    int err;
    if ((err = kp_dec_labels(d, json, "systemReserved", &k->system_reserved)) < 0 ||
        (err = kp_dec_labels(d, json, "kubeReserved", &k->kube_reserved)) < 0 ||
        (err = kp_dec_labels(d, json, "evictionHard", &k->eviction_hard)) < 0 ||
        (err = kp_dec_labels(d, json, "evictionSoft", &k->eviction_soft)) < 0 ||
        (err = kp_dec_labels(d, json, "evictionSoftGracePeriod", &k->eviction_soft_grace_period)) <
            0)
        return err;
    return 0;
}

static int decode_kubelet(kp_decoder *d, const cJSON *json, void *out)
{
    kp_kubelet_config *k = out;
    int err;
    if ((err = kp_dec_strings(d, json, "clusterDNS", &k->cluster_dns)) < 0 ||
        (err = decode_max_pods(d, json, k)) < 0 ||
        (err = kp_dec_int32(d, json, "podsPerCore", &k->pods_per_core, &k->has_pods_per_core)) <
            0 ||
        (err = decode_kubelet_maps(d, json, k)) < 0 ||
        (err = kp_dec_int32(d, json, "evictionMaxPodGracePeriod", &k->eviction_max_pod_grace_period,
                            &k->has_eviction_max_pod_grace_period)) < 0 ||
        (err = kp_dec_int32(d, json, "imageGCHighThresholdPercent",
                            &k->image_gc_high_threshold_percent,
                            &k->has_image_gc_high_threshold_percent)) < 0 ||
        (err =
             kp_dec_int32(d, json, "imageGCLowThresholdPercent", &k->image_gc_low_threshold_percent,
                          &k->has_image_gc_low_threshold_percent)) < 0 ||
        (err = kp_dec_bool(d, json, "cpuCFSQuota", &k->cpu_cfs_quota, &k->has_cpu_cfs_quota)) < 0)
        return err;
    return 0;
}

/* The kubelet object as compact JSON, for fields not modelled above. */
static const char *kubelet_raw_json(kp_decoder *d, const cJSON *spec)
{
    const cJSON *kubelet = kp_dec_get(spec, "kubelet");
    char *text = kubelet ? cJSON_PrintUnformatted(kubelet) : NULL;
    if (!text) return kp_dec_empty;
    const char *copy = kp_arena_strdup(d->arena, text);
    cJSON_free(text);
    return copy;
}

/* -------------------------------------------------------- block devices */

static int decode_ebs(kp_decoder *d, const cJSON *json, void *out)
{
    kp_block_device *b = out;
    int err;
    if ((err = kp_dec_bool(d, json, "deleteOnTermination", &b->delete_on_termination,
                           &b->has_delete_on_termination)) < 0 ||
        (err = kp_dec_bool(d, json, "encrypted", &b->encrypted, &b->has_encrypted)) < 0 ||
        (err = kp_dec_int64(d, json, "iops", &b->iops, &b->has_iops)) < 0 ||
        (err = kp_dec_string(d, json, "kmsKeyID", &b->kms_key_id)) < 0 ||
        (err = kp_dec_string(d, json, "snapshotID", &b->snapshot_id)) < 0 ||
        (err = kp_dec_int64(d, json, "throughput", &b->throughput, &b->has_throughput)) < 0 ||
        (err = kp_dec_int32(d, json, "volumeInitializationRate", &b->volume_initialization_rate,
                            &b->has_volume_initialization_rate)) < 0 ||
        (err = kp_dec_quantity(d, json, "volumeSize", &b->volume_size, &b->has_volume_size)) < 0 ||
        (err = kp_dec_string(d, json, "volumeType", &b->volume_type)) < 0)
        return err;
    return 0;
}

static int decode_block_device_mapping(kp_decoder *d, const cJSON *json, void *out)
{
    kp_block_device_mapping *m = out;
    int err;
    if ((err = kp_dec_string(d, json, "deviceName", &m->device_name)) < 0 ||
        (err = kp_dec_bool(d, json, "rootVolume", &m->root_volume, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "ebs", decode_ebs, &m->ebs, &m->has_ebs)) < 0)
        return err;
    return 0;
}

static int decode_metadata_options(kp_decoder *d, const cJSON *json, void *out)
{
    kp_metadata_options *m = out;
    int err;
    if ((err = kp_dec_string(d, json, "httpEndpoint", &m->http_endpoint)) < 0 ||
        (err = kp_dec_string(d, json, "httpProtocolIPv6", &m->http_protocol_ipv6)) < 0 ||
        (err = kp_dec_int64(d, json, "httpPutResponseHopLimit", &m->http_put_response_hop_limit,
                            &m->has_http_put_response_hop_limit)) < 0 ||
        (err = kp_dec_string(d, json, "httpTokens", &m->http_tokens)) < 0)
        return err;
    return 0;
}

/* --------------------------------------------------------------- network */

static int decode_network_interface(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nc_network_interface *n = out;
    int err;
    if ((err = kp_dec_int32(d, json, "networkCardIndex", &n->network_card_index, NULL)) < 0 ||
        (err = kp_dec_int32(d, json, "deviceIndex", &n->device_index, NULL)) < 0 ||
        (err = kp_dec_string(d, json, "interfaceType", &n->interface_type)) < 0)
        return err;
    return 0;
}

static int decode_connection_tracking(kp_decoder *d, const cJSON *json, void *out)
{
    kp_connection_tracking *c = out;
    int err;
    if ((err = kp_dec_int32(d, json, "tcpEstablishedTimeout", &c->tcp_established_timeout,
                            &c->has_tcp_established_timeout)) < 0 ||
        (err = kp_dec_int32(d, json, "udpStreamTimeout", &c->udp_stream_timeout,
                            &c->has_udp_stream_timeout)) < 0 ||
        (err = kp_dec_int32(d, json, "udpTimeout", &c->udp_timeout, &c->has_udp_timeout)) < 0)
        return err;
    return 0;
}

static int decode_placement_group(kp_decoder *d, const cJSON *json, void *out)
{
    kp_ec2nodeclass *c = out;
    int err;
    if ((err = kp_dec_string(d, json, "name", &c->placement_group_name)) < 0 ||
        (err = kp_dec_string(d, json, "id", &c->placement_group_id)) < 0)
        return err;
    return 0;
}

static int decode_cpu_options(kp_decoder *d, const cJSON *json, void *out)
{
    kp_ec2nodeclass *c = out;
    return kp_dec_string(d, json, "nestedVirtualization", &c->nested_virtualization);
}

static int decode_network(kp_decoder *d, const cJSON *json, kp_ec2nodeclass *c)
{
    int err;
    if ((err = KP_DEC_ARRAY(d, json, "networkInterfaces", decode_network_interface,
                            c->network_interfaces, c->n_network_interfaces)) < 0 ||
        (err = kp_dec_int32(d, json, "ipPrefixCount", &c->ip_prefix_count,
                            &c->has_ip_prefix_count)) < 0 ||
        (err = kp_dec_object(d, json, "connectionTracking", decode_connection_tracking,
                             &c->connection_tracking, &c->connection_tracking.present)) < 0 ||
        (err = kp_dec_object(d, json, "placementGroupSelector", decode_placement_group, c,
                             &c->has_placement_group_selector)) < 0 ||
        (err = kp_dec_object(d, json, "cpuOptions", decode_cpu_options, c, NULL)) < 0)
        return err;
    return 0;
}

/* ------------------------------------------------------------------ spec */

/* The CRD's instance store policies (api/crd_tables.h) as the object model's. */
static const enum kp_instance_store_policy store_policies[KP_CRD_INSTANCE_STORE_POLICY_COUNT] = {
    [KP_CRD_INSTANCE_STORE_POLICY_RAID0] = KP_INSTANCE_STORE_RAID0,
};

static int decode_terms(kp_decoder *d, const cJSON *json, kp_ec2nodeclass *c)
{
    int err;
    if ((err = KP_DEC_ARRAY(d, json, "amiSelectorTerms", decode_ami_term, c->ami_selector_terms,
                            c->n_ami_selector_terms)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "subnetSelectorTerms", decode_selector_term,
                            c->subnet_selector_terms, c->n_subnet_selector_terms)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "securityGroupSelectorTerms", decode_selector_term,
                            c->security_group_selector_terms, c->n_security_group_selector_terms)) <
            0 ||
        (err = KP_DEC_ARRAY(d, json, "capacityReservationSelectorTerms", decode_selector_term,
                            c->capacity_reservation_selector_terms,
                            c->n_capacity_reservation_selector_terms)) < 0)
        return err;
    return 0;
}

static int decode_launch_fields(kp_decoder *d, const cJSON *json, kp_ec2nodeclass *c)
{
    int policy = -1;
    int err;
    if ((err = kp_dec_string(d, json, "amiFamily", &c->ami_family)) < 0 ||
        (err = kp_dec_string(d, json, "role", &c->role)) < 0 ||
        (err = kp_dec_string(d, json, "instanceProfile", &c->instance_profile)) < 0 ||
        (err = kp_dec_labels(d, json, "tags", &c->tags)) < 0 ||
        (err = kp_dec_string_p(d, json, "userData", &c->user_data, &c->has_user_data)) < 0 ||
        (err = kp_dec_enum_index(d, json, "instanceStorePolicy", kp_crd_instance_store_policy_names,
                                 &policy)) < 0 ||
        (err = kp_dec_bool(d, json, "associatePublicIPAddress", &c->associate_public_ip_address,
                           &c->has_associate_public_ip_address)) < 0 ||
        (err = kp_dec_bool(d, json, "detailedMonitoring", &c->detailed_monitoring,
                           &c->has_detailed_monitoring)) < 0 ||
        (err = kp_dec_string(d, json, "context", &c->context)) < 0)
        return err;
    c->instance_store_policy = policy < 0 ? KP_INSTANCE_STORE_UNSET : store_policies[policy];
    return 0;
}

static int decode_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_ec2nodeclass *c = out;
    int err;
    if ((err = decode_terms(d, json, c)) < 0 || (err = decode_launch_fields(d, json, c)) < 0 ||
        (err = kp_dec_object(d, json, "kubelet", decode_kubelet, &c->kubelet,
                             &c->kubelet.present)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "blockDeviceMappings", decode_block_device_mapping,
                            c->block_device_mappings, c->n_block_device_mappings)) < 0 ||
        (err = kp_dec_object(d, json, "metadataOptions", decode_metadata_options,
                             &c->metadata_options, &c->metadata_options.present)) < 0 ||
        (err = decode_network(d, json, c)) < 0)
        return err;
    c->kubelet.raw_json = kubelet_raw_json(d, json);
    return 0;
}

/* ---------------------------------------------------------------- status */

static int decode_subnet(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nc_subnet *s = out;
    int err;
    if ((err = kp_dec_string(d, json, "id", &s->id)) < 0 ||
        (err = kp_dec_string(d, json, "zone", &s->zone)) < 0 ||
        (err = kp_dec_string(d, json, "zoneID", &s->zone_id)) < 0)
        return err;
    return 0;
}

static int decode_security_group(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nc_security_group *g = out;
    int err;
    if ((err = kp_dec_string(d, json, "id", &g->id)) < 0 ||
        (err = kp_dec_string(d, json, "name", &g->name)) < 0)
        return err;
    return 0;
}

static int decode_ami(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nc_ami *a = out;
    int err;
    if ((err = kp_dec_string(d, json, "id", &a->id)) < 0 ||
        (err = kp_dec_string(d, json, "name", &a->name)) < 0 ||
        (err = kp_dec_bool(d, json, "deprecated", &a->deprecated, NULL)) < 0 ||
        (err = kp_dec_node_requirements(d, json, "requirements", false, &a->requirements,
                                        &a->n_requirements)) < 0)
        return err;
    return 0;
}

static int decode_reservation(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nc_capacity_reservation *r = out;
    int err;
    if ((err = kp_dec_string(d, json, "id", &r->id)) < 0 ||
        (err = kp_dec_string(d, json, "availabilityZone", &r->availability_zone)) < 0 ||
        (err = kp_dec_string(d, json, "instanceType", &r->instance_type)) < 0 ||
        (err = kp_dec_string(d, json, "ownerID", &r->owner_id)) < 0 ||
        (err = kp_dec_string(d, json, "instanceMatchCriteria", &r->instance_match_criteria)) <
            0 ||
        (err = kp_dec_string(d, json, "reservationType", &r->reservation_type)) < 0 ||
        (err = kp_dec_string(d, json, "state", &r->state)) < 0 ||
        (err = kp_dec_bool(d, json, "interruptible", &r->interruptible, NULL)) < 0 ||
        (err = kp_dec_time(d, json, "endTime", &r->end_time)) < 0)
        return err;
    return 0;
}

static int decode_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_ec2nodeclass *c = out;
    int err;
    if ((err = KP_DEC_ARRAY(d, json, "subnets", decode_subnet, c->status_subnets,
                            c->n_status_subnets)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "securityGroups", decode_security_group,
                            c->status_security_groups, c->n_status_security_groups)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "amis", decode_ami, c->status_amis, c->n_status_amis)) < 0 ||
        (err = kp_dec_string(d, json, "instanceProfile", &c->status_instance_profile)) < 0 ||
        (err = kp_dec_conditions(d, json, "conditions", &c->conditions)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "capacityReservations", decode_reservation,
                            c->status_capacity_reservations, c->n_status_capacity_reservations)) <
            0)
        return err;
    return 0;
}

int kp_decode_ec2nodeclass(kp_arena *arena, const cJSON *json, kp_ec2nodeclass *out)
{
    kp_decoder d;
    kp_ec2nodeclass c = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &c.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_spec, &c, NULL);
    if (err == 0) err = kp_dec_object(&d, json, "status", decode_status, &c, NULL);
    if (err == 0) *out = c;
    return err;
}
