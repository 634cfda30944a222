/* Launch templates and CreateFleet (see ec2.h). */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/ec2_internal.h"

#define LTD "LaunchTemplateData."

static int put_block_device(kp_buf *f, size_t n, const kp_ec2_block_device *b)
{
    char k[96];
    int err = kp_aws_form_addf(f, b->device_name, LTD "BlockDeviceMapping.%zu.DeviceName", n);
#define EBS(field) (snprintf(k, sizeof(k), LTD "BlockDeviceMapping.%zu.Ebs." field, n), k)
    if (err == 0 && b->volume_size_gib > 0)
        err = kp_ec2_form_int(f, EBS("VolumeSize"), b->volume_size_gib);
    if (err == 0)
        err = kp_ec2_form_opt(f, EBS("VolumeType"), b->volume_type);
    if (err == 0 && b->iops > 0)
        err = kp_ec2_form_int(f, EBS("Iops"), b->iops);
    if (err == 0 && b->throughput > 0)
        err = kp_ec2_form_int(f, EBS("Throughput"), b->throughput);
    if (err == 0)
        err = kp_aws_form_add(f, EBS("Encrypted"), b->encrypted ? "true" : "false");
    if (err == 0)
        err = kp_ec2_form_opt(f, EBS("KmsKeyId"), b->kms_key_id);
    if (err == 0)
        err = kp_ec2_form_opt(f, EBS("SnapshotId"), b->snapshot_id);
    if (err == 0)
        err = kp_aws_form_add(f, EBS("DeleteOnTermination"),
                              b->delete_on_termination ? "true" : "false");
    if (err == 0 && b->volume_initialization_rate > 0)
        err = kp_ec2_form_int(f, EBS("VolumeInitializationRate"), b->volume_initialization_rate);
#undef EBS
    return err;
}

/* The addressing and connection-tracking fields of an interface. */
static int put_interface_extras(kp_buf *f, size_t n, const kp_ec2_lt_network_interface *ni)
{
    char k[128];
#define NI(field) (snprintf(k, sizeof(k), LTD "NetworkInterface.%zu." field, n), k)
    int err = 0;
    if (ni->has_ipv4_prefix_count)
        err = kp_ec2_form_int(f, NI("Ipv4PrefixCount"), ni->ipv4_prefix_count);
    if (err == 0 && ni->has_ipv6_prefix_count)
        err = kp_ec2_form_int(f, NI("Ipv6PrefixCount"), ni->ipv6_prefix_count);
    if (err == 0 && ni->primary_ipv6) err = kp_aws_form_add(f, NI("PrimaryIpv6"), "true");
    if (err == 0 && ni->ipv6_address_count > 0)
        err = kp_ec2_form_int(f, NI("Ipv6AddressCount"), ni->ipv6_address_count);
    if (err == 0 && ni->tcp_established_timeout > 0)
        err = kp_ec2_form_int(f, NI("ConnectionTrackingSpecification.TcpEstablishedTimeout"),
                              ni->tcp_established_timeout);
    if (err == 0 && ni->udp_stream_timeout > 0)
        err = kp_ec2_form_int(f, NI("ConnectionTrackingSpecification.UdpStreamTimeout"),
                              ni->udp_stream_timeout);
    if (err == 0 && ni->udp_timeout > 0)
        err = kp_ec2_form_int(f, NI("ConnectionTrackingSpecification.UdpTimeout"), ni->udp_timeout);
#undef NI
    return err;
}

static int put_interface(kp_buf *f, size_t n, const kp_ec2_lt_network_interface *ni)
{
    char k[96];
    snprintf(k, sizeof(k), LTD "NetworkInterface.%zu.DeviceIndex", n);
    int err = kp_ec2_form_int(f, k, ni->device_index);
    snprintf(k, sizeof(k), LTD "NetworkInterface.%zu.NetworkCardIndex", n);
    if (err == 0)
        err = kp_ec2_form_int(f, k, ni->network_card_index);
    snprintf(k, sizeof(k), LTD "NetworkInterface.%zu.InterfaceType", n);
    if (err == 0)
        err = kp_ec2_form_opt(f, k, ni->interface_type);
    snprintf(k, sizeof(k), LTD "NetworkInterface.%zu.SecurityGroupId", n);
    if (err == 0)
        err = kp_ec2_form_list(f, k, ni->security_group_ids, ni->n_security_group_ids);
    snprintf(k, sizeof(k), LTD "NetworkInterface.%zu.AssociatePublicIpAddress", n);
    if (err == 0 && ni->associate_public_ip >= 0)
        err = kp_aws_form_add(f, k, ni->associate_public_ip ? "true" : "false");
    if (err == 0)
        err = put_interface_extras(f, n, ni);
    return err;
}

static int put_metadata(kp_buf *f, const kp_ec2_metadata_options *m)
{
    int err = kp_ec2_form_opt(f, LTD "MetadataOptions.HttpEndpoint", m->http_endpoint);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "MetadataOptions.HttpTokens", m->http_tokens);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "MetadataOptions.HttpProtocolIpv6", m->http_protocol_ipv6);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "MetadataOptions.InstanceMetadataTags",
                              m->instance_metadata_tags);
    if (err == 0 && m->http_put_response_hop_limit > 0)
        err = kp_ec2_form_int(f, LTD "MetadataOptions.HttpPutResponseHopLimit",
                              m->http_put_response_hop_limit);
    return err;
}

static int put_placement(kp_buf *f, const kp_ec2_launch_template_data *d)
{
    int err = kp_ec2_form_opt(f, LTD "Placement.Tenancy", d->placement_tenancy);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "Placement.GroupId", d->placement_group_id);
    if (err == 0 && d->placement_partition_number > 0)
        err = kp_ec2_form_int(f, LTD "Placement.PartitionNumber", d->placement_partition_number);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "CapacityReservationSpecification."
                                     "CapacityReservationPreference",
                              d->capacity_reservation_preference);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "CapacityReservationSpecification."
                                     "CapacityReservationTarget.CapacityReservationId",
                              d->capacity_reservation_id);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "InstanceMarketOptions.MarketType", d->market_type);
    return err;
}

static int put_cpu_enclave(kp_buf *f, const kp_ec2_launch_template_data *d)
{
    int err = kp_ec2_form_opt(f, LTD "CpuOptions.NestedVirtualization", d->nested_virtualization);
    if (err == 0 && d->enclave >= 0)
        err = kp_aws_form_add(f, LTD "EnclaveOptions.Enabled", d->enclave ? "true" : "false");
    return err;
}

static int put_template_data(kp_buf *f, const kp_ec2_launch_template_data *d)
{
    int err = kp_ec2_form_opt(f, LTD "ImageId", d->image_id);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "InstanceType", d->instance_type);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "UserData", d->user_data);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "IamInstanceProfile.Name", d->iam_instance_profile_name);
    if (err == 0)
        err = kp_ec2_form_opt(f, LTD "IamInstanceProfile.Arn", d->iam_instance_profile_arn);
    if (err == 0)
        err = kp_ec2_form_list(f, LTD "SecurityGroupId", d->security_group_ids,
                               d->n_security_group_ids);
    for (size_t i = 0; i < d->n_block_devices && err == 0; i++)
        err = put_block_device(f, i + 1, &d->block_devices[i]);
    for (size_t i = 0; i < d->n_network_interfaces && err == 0; i++)
        err = put_interface(f, i + 1, &d->network_interfaces[i]);
    if (err == 0 && d->monitoring)
        err = kp_aws_form_add(f, LTD "Monitoring.Enabled", "true");
    if (err == 0)
        err = put_metadata(f, &d->metadata);
    if (err == 0)
        err = kp_ec2_form_tag_specs(f, LTD "TagSpecification", d->tag_specs, d->n_tag_specs);
    if (err == 0)
        err = put_placement(f, d);
    if (err == 0)
        err = put_cpu_enclave(f, d);
    for (size_t i = 0; i < d->n_extra && err == 0; i++)
        err = kp_aws_form_addf(f, d->extra[i].value, LTD "%s", d->extra[i].key);
    return err;
}

static void parse_template(kp_arena *a, const xmlNode *it, kp_ec2_launch_template *t)
{
    t->id = kp_aws_xml_text(a, it, "launchTemplateId");
    t->name = kp_aws_xml_text(a, it, "launchTemplateName");
    t->default_version = kp_aws_xml_int(it, "defaultVersionNumber", 0);
    t->latest_version = kp_aws_xml_int(it, "latestVersionNumber", 0);
    t->create_time = kp_aws_xml_text(a, it, "createTime");
    t->tags = kp_ec2_parse_tags(a, it, &t->n_tags);
}

static int one_template_page(void *ctx, kp_arena *a, xmlNode *root)
{
    xmlNode *lt = kp_aws_xml_child(root, "launchTemplate");
    if (!lt)
        return kp_error_set(KP_EINVALID, "answer has no launchTemplate element");
    if (ctx)
        parse_template(a, lt, ctx);
    return 0;
}

int kp_ec2_create_launch_template(kp_aws_client *c, kp_arena *a, const char *name,
                                  const kp_ec2_launch_template_data *data,
                                  const kp_ec2_tag *tags, size_t n_tags,
                                  kp_ec2_launch_template *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    kp_ec2_tag_spec spec = {"launch-template", tags, n_tags};
    int err = kp_aws_form_add(&form, "LaunchTemplateName", name);
    if (err == 0)
        err = put_template_data(&form, data);
    if (err == 0 && n_tags > 0)
        err = kp_ec2_form_tag_specs(&form, "TagSpecification", &spec, 1);
    kp_ec2_launch_template lt = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "CreateLaunchTemplate", &form, false, one_template_page, &lt);
    kp_buf_free(&form);
    if (err == 0)
        *out = lt;
    return err;
}

PAGE_FN(templates_page, kp_ec2_launch_template_list, kp_ec2_launch_template, "launchTemplates",
        parse_template)

int kp_ec2_describe_launch_templates(kp_aws_client *c, kp_arena *a, const char *const *names,
                                     size_t n_names, const kp_ec2_filter *filters,
                                     size_t n_filters, kp_ec2_launch_template_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "LaunchTemplateName", names, n_names);
    if (err == 0)
        err = kp_ec2_form_filters(&form, filters, n_filters);
    if (err == 0 && n_names == 0)
        err = kp_ec2_form_int(&form, "MaxResults", 200);
    kp_ec2_launch_template_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeLaunchTemplates", &form, true, templates_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

int kp_ec2_delete_launch_template(kp_aws_client *c, const char *id, const char *name)
{
    if ((id == NULL) == (name == NULL))
        return kp_error_set(KP_EINVALID, "DeleteLaunchTemplate needs exactly one of id and name");
    kp_buf form = KP_BUF_INIT(1024);
    kp_arena *a = kp_arena_new();
    int err = id ? kp_aws_form_add(&form, "LaunchTemplateId", id)
                 : kp_aws_form_add(&form, "LaunchTemplateName", name);
    if (err == 0)
        err = kp_ec2_call(c, a, "DeleteLaunchTemplate", &form, false, one_template_page, NULL);
    kp_arena_free(a);
    kp_buf_free(&form);
    return err;
}
