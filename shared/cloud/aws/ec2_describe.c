/* DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeAvailabilityZones,
 * DescribeSubnets, DescribeSecurityGroups (see ec2.h). */
#include <string.h>

#include "base/error.h"
#include "cloud/aws/ec2_internal.h"

static void parse_gpus(kp_arena *a, const xmlNode *it, kp_ec2_instance_type *t)
{
    xmlNode *first = kp_aws_xml_items(it, "gpuInfo/gpus");
    t->n_gpus = kp_aws_xml_count(first);
    t->gpus = KP_ARENA_NEW(a, kp_ec2_gpu, t->n_gpus ? t->n_gpus : 1);
    size_t i = 0;
    for (xmlNode *g = first; g; g = kp_aws_xml_next(g), i++) {
        t->gpus[i].name = kp_aws_xml_text(a, g, "name");
        t->gpus[i].manufacturer = kp_aws_xml_text(a, g, "manufacturer");
        t->gpus[i].count = (int32_t)kp_aws_xml_int(g, "count", 0);
        t->gpus[i].memory_mib = kp_aws_xml_int(g, "memoryInfo/sizeInMiB", 0);
    }
}

static void parse_accelerators(kp_arena *a, const xmlNode *it, kp_ec2_instance_type *t)
{
    xmlNode *first = kp_aws_xml_items(it, "neuronInfo/neuronDevices");
    t->n_neuron_devices = kp_aws_xml_count(first);
    t->neuron_devices = KP_ARENA_NEW(a, kp_ec2_neuron_device, t->n_neuron_devices + 1);
    size_t i = 0;
    for (xmlNode *d = first; d; d = kp_aws_xml_next(d), i++) {
        t->neuron_devices[i].name = kp_aws_xml_text(a, d, "name");
        t->neuron_devices[i].count = (int32_t)kp_aws_xml_int(d, "count", 0);
        t->neuron_devices[i].core_count = (int32_t)kp_aws_xml_int(d, "coreInfo/count", 0);
        t->neuron_devices[i].memory_mib = kp_aws_xml_int(d, "memoryInfo/sizeInMiB", 0);
    }
    first = kp_aws_xml_items(it, "inferenceAcceleratorInfo/accelerators");
    t->n_accelerators = kp_aws_xml_count(first);
    t->accelerators = KP_ARENA_NEW(a, kp_ec2_accelerator, t->n_accelerators + 1);
    i = 0;
    for (xmlNode *d = first; d; d = kp_aws_xml_next(d), i++) {
        t->accelerators[i].name = kp_aws_xml_text(a, d, "name");
        t->accelerators[i].manufacturer = kp_aws_xml_text(a, d, "manufacturer");
        t->accelerators[i].count = (int32_t)kp_aws_xml_int(d, "count", 0);
    }
}

static void parse_network(kp_arena *a, const xmlNode *it, kp_ec2_instance_type *t)
{
    const xmlNode *n = kp_aws_xml_child(it, "networkInfo");
    t->max_network_interfaces = (int32_t)kp_aws_xml_int(n, "maximumNetworkInterfaces", 0);
    t->ipv4_per_interface = (int32_t)kp_aws_xml_int(n, "ipv4AddressesPerInterface", 0);
    t->default_network_card_index = (int32_t)kp_aws_xml_int(n, "defaultNetworkCardIndex", 0);
    t->efa_supported = kp_aws_xml_bool(n, "efaSupported", false);
    t->max_efa_interfaces = (int32_t)kp_aws_xml_int(n, "efaInfo/maximumEfaInterfaces", 0);
    t->encryption_in_transit = kp_aws_xml_bool(n, "encryptionInTransitSupported", false);
    t->ipv6_supported = kp_aws_xml_bool(n, "ipv6Supported", false);
    t->network_performance = kp_aws_xml_text(a, n, "networkPerformance");
    xmlNode *first = kp_aws_xml_items(n, "networkCards");
    t->n_network_cards = kp_aws_xml_count(first);
    t->network_cards = KP_ARENA_NEW(a, kp_ec2_network_card, t->n_network_cards + 1);
    size_t i = 0;
    for (xmlNode *c = first; c; c = kp_aws_xml_next(c), i++) {
        t->network_cards[i].index = (int32_t)kp_aws_xml_int(c, "networkCardIndex", 0);
        t->network_cards[i].max_interfaces =
            (int32_t)kp_aws_xml_int(c, "maximumNetworkInterfaces", 0);
    }
}

static void parse_instance_type(kp_arena *a, const xmlNode *it, kp_ec2_instance_type *t)
{
    t->name = kp_aws_xml_text(a, it, "instanceType");
    t->vcpus = (int32_t)kp_aws_xml_int(it, "vCpuInfo/defaultVCpus", 0);
    t->memory_mib = kp_aws_xml_int(it, "memoryInfo/sizeInMiB", 0);
    t->architectures =
        kp_ec2_parse_strings(a, it, "processorInfo/supportedArchitectures", &t->n_architectures);
    t->usage_classes = kp_ec2_parse_strings(a, it, "supportedUsageClasses", &t->n_usage_classes);
    t->virtualization_types = kp_ec2_parse_strings(a, it, "supportedVirtualizationTypes",
                                                   &t->n_virtualization_types);
    t->hypervisor = kp_aws_xml_text(a, it, "hypervisor");
    t->bare_metal = kp_aws_xml_bool(it, "bareMetal", false);
    t->burstable = kp_aws_xml_bool(it, "burstablePerformanceSupported", false);
    t->current_generation = kp_aws_xml_bool(it, "currentGeneration", false);
    t->cpu_manufacturer = kp_aws_xml_text(a, it, "processorInfo/manufacturer");
    t->clock_ghz = kp_aws_xml_double(it, "processorInfo/sustainedClockSpeedInGhz", 0);
    t->instance_storage_gb = kp_aws_xml_int(it, "instanceStorageInfo/totalSizeInGB", 0);
    t->instance_storage_nvme = kp_aws_xml_text(a, it, "instanceStorageInfo/nvmeSupport");
    t->ebs_optimized_support = kp_aws_xml_text(a, it, "ebsInfo/ebsOptimizedSupport");
    t->ebs_max_bandwidth_mbps =
        kp_aws_xml_int(it, "ebsInfo/ebsOptimizedInfo/maximumBandwidthInMbps", 0);
    t->nitro_enclaves_support = kp_aws_xml_text(a, it, "nitroEnclavesSupport");
    t->processor_features = kp_ec2_parse_strings(a, it, "processorInfo/supportedFeatures",
                                                 &t->n_processor_features);
    t->placement_strategies = kp_ec2_parse_strings(a, it, "placementGroupInfo/supportedStrategies",
                                                   &t->n_placement_strategies);
    t->ena_support = kp_aws_xml_text(a, it, "networkInfo/enaSupport");
    parse_gpus(a, it, t);
    parse_accelerators(a, it, t);
    parse_network(a, it, t);
}

PAGE_FN(instance_types_page, kp_ec2_instance_type_list, kp_ec2_instance_type, "instanceTypeSet",
        parse_instance_type)

int kp_ec2_describe_instance_types(kp_aws_client *c, kp_arena *a,
                                   const kp_ec2_describe_instance_types_input *in,
                                   kp_ec2_instance_type_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "InstanceType", in ? in->instance_types : NULL,
                               in ? in->n_instance_types : 0);
    if (err == 0 && in)
        err = kp_ec2_form_filters(&form, in->filters, in->n_filters);
    if (err == 0 && in && in->max_results > 0)
        err = kp_ec2_form_int(&form, "MaxResults", in->max_results);
    kp_ec2_instance_type_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeInstanceTypes", &form, true, instance_types_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

static int ignore_page(void *ctx, kp_arena *a, xmlNode *root)
{
    (void)ctx, (void)a, (void)root;
    return 0;
}

int kp_ec2_dry_run_describe_instance_types(kp_aws_client *c)
{
    kp_buf form = KP_BUF_INIT(256);
    kp_arena *a = kp_arena_new();
    int err = kp_aws_form_add(&form, "DryRun", "true");
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeInstanceTypes", &form, false, ignore_page, NULL);
    if (err < 0 && strcmp(kp_aws_client_error(c)->code, "DryRunOperation") == 0)
        err = 0;
    else if (err == 0)
        err = kp_error_set(KP_ERROR, "ec2 DescribeInstanceTypes: DryRun was not honoured");
    kp_arena_free(a);
    kp_buf_free(&form);
    return err;
}

static void parse_offering(kp_arena *a, const xmlNode *it, kp_ec2_offering *o)
{
    o->instance_type = kp_aws_xml_text(a, it, "instanceType");
    o->location = kp_aws_xml_text(a, it, "location");
}

PAGE_FN(offerings_page, kp_ec2_offering_list, kp_ec2_offering, "instanceTypeOfferingSet",
        parse_offering)

int kp_ec2_describe_instance_type_offerings(kp_aws_client *c, kp_arena *a,
                                            const char *location_type,
                                            const kp_ec2_filter *filters, size_t n_filters,
                                            kp_ec2_offering_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_aws_form_add(&form, "LocationType",
                              location_type ? location_type : "availability-zone");
    if (err == 0)
        err = kp_ec2_form_filters(&form, filters, n_filters);
    kp_ec2_offering_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeInstanceTypeOfferings", &form, true, offerings_page,
                          &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

static void parse_zone(kp_arena *a, const xmlNode *it, kp_ec2_availability_zone *z)
{
    z->name = kp_aws_xml_text(a, it, "zoneName");
    z->zone_id = kp_aws_xml_text(a, it, "zoneId");
    z->state = kp_aws_xml_text(a, it, "zoneState");
    z->zone_type = kp_aws_xml_text(a, it, "zoneType");
    z->region = kp_aws_xml_text(a, it, "regionName");
}

PAGE_FN(zones_page, kp_ec2_availability_zone_list, kp_ec2_availability_zone,
        "availabilityZoneInfo", parse_zone)

int kp_ec2_describe_availability_zones(kp_aws_client *c, kp_arena *a,
                                       const kp_ec2_filter *filters, size_t n_filters,
                                       kp_ec2_availability_zone_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_filters(&form, filters, n_filters);
    kp_ec2_availability_zone_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeAvailabilityZones", &form, false, zones_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

static void parse_subnet(kp_arena *a, const xmlNode *it, kp_ec2_subnet *s)
{
    s->id = kp_aws_xml_text(a, it, "subnetId");
    s->vpc_id = kp_aws_xml_text(a, it, "vpcId");
    s->availability_zone = kp_aws_xml_text(a, it, "availabilityZone");
    s->availability_zone_id = kp_aws_xml_text(a, it, "availabilityZoneId");
    s->cidr_block = kp_aws_xml_text(a, it, "cidrBlock");
    s->state = kp_aws_xml_text(a, it, "state");
    s->available_ip_count = kp_aws_xml_int(it, "availableIpAddressCount", 0);
    s->default_for_az = kp_aws_xml_bool(it, "defaultForAz", false);
    s->map_public_ip_on_launch = kp_aws_xml_bool(it, "mapPublicIpOnLaunch", false);
    s->tags = kp_ec2_parse_tags(a, it, &s->n_tags);
}

PAGE_FN(subnets_page, kp_ec2_subnet_list, kp_ec2_subnet, "subnetSet", parse_subnet)

/* Ids, filters and MaxResults (when paging is allowed with ids absent). */
static int ids_and_filters(kp_buf *form, const char *id_key, const char *const *ids, size_t n_ids,
                           const kp_ec2_filter *filters, size_t n_filters, int32_t max_results)
{
    int err = kp_ec2_form_list(form, id_key, ids, n_ids);
    if (err == 0)
        err = kp_ec2_form_filters(form, filters, n_filters);
    if (err == 0 && n_ids == 0 && max_results > 0)
        err = kp_ec2_form_int(form, "MaxResults", max_results);
    return err;
}

int kp_ec2_describe_subnets(kp_aws_client *c, kp_arena *a, const char *const *ids, size_t n_ids,
                            const kp_ec2_filter *filters, size_t n_filters,
                            kp_ec2_subnet_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = ids_and_filters(&form, "SubnetId", ids, n_ids, filters, n_filters, 500);
    kp_ec2_subnet_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeSubnets", &form, true, subnets_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

static void parse_group(kp_arena *a, const xmlNode *it, kp_ec2_security_group *g)
{
    g->id = kp_aws_xml_text(a, it, "groupId");
    g->name = kp_aws_xml_text(a, it, "groupName");
    g->vpc_id = kp_aws_xml_text(a, it, "vpcId");
    g->description = kp_aws_xml_text(a, it, "groupDescription");
    g->tags = kp_ec2_parse_tags(a, it, &g->n_tags);
}

PAGE_FN(groups_page, kp_ec2_security_group_list, kp_ec2_security_group, "securityGroupInfo",
        parse_group)

int kp_ec2_describe_security_groups(kp_aws_client *c, kp_arena *a, const char *const *ids,
                                    size_t n_ids, const kp_ec2_filter *filters, size_t n_filters,
                                    kp_ec2_security_group_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = ids_and_filters(&form, "GroupId", ids, n_ids, filters, n_filters, 500);
    kp_ec2_security_group_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeSecurityGroups", &form, true, groups_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}
