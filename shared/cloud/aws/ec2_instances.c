/* CreateFleet, DescribeInstances, TerminateInstances, CreateTags (see ec2.h). */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "cloud/aws/ec2_internal.h"

static int put_override(kp_buf *f, size_t cfg, size_t n, const kp_ec2_fleet_override *o)
{
    char k[128];
#define OV(field) (snprintf(k, sizeof(k), "LaunchTemplateConfigs.%zu.Overrides.%zu." field, cfg, n), k)
    int err = kp_ec2_form_opt(f, OV("InstanceType"), o->instance_type);
    if (err == 0)
        err = kp_ec2_form_opt(f, OV("SubnetId"), o->subnet_id);
    if (err == 0)
        err = kp_ec2_form_opt(f, OV("AvailabilityZone"), o->availability_zone);
    if (err == 0)
        err = kp_ec2_form_opt(f, OV("ImageId"), o->image_id);
    if (err == 0 && o->has_priority) {
        char prio[40];
        snprintf(prio, sizeof(prio), "%.9g", o->priority);
        err = kp_aws_form_add(f, OV("Priority"), prio);
    }
#undef OV
    return err;
}

static int put_config(kp_buf *f, size_t n, const kp_ec2_fleet_template_config *cfg)
{
    if ((cfg->launch_template_id == NULL) == (cfg->launch_template_name == NULL))
        return kp_error_set(KP_EINVALID, "CreateFleet: launch template config %zu needs exactly "
                                         "one of id and name", n);
    const char *spec = "LaunchTemplateSpecification";
    int err = cfg->launch_template_id
                  ? kp_aws_form_addf(f, cfg->launch_template_id,
                                     "LaunchTemplateConfigs.%zu.%s.LaunchTemplateId", n, spec)
                  : kp_aws_form_addf(f, cfg->launch_template_name,
                                     "LaunchTemplateConfigs.%zu.%s.LaunchTemplateName", n, spec);
    if (err == 0)
        err = kp_aws_form_addf(f, cfg->version ? cfg->version : "$Latest",
                               "LaunchTemplateConfigs.%zu.%s.Version", n, spec);
    for (size_t i = 0; i < cfg->n_overrides && err == 0; i++)
        err = put_override(f, n, i + 1, &cfg->overrides[i]);
    return err;
}

static int fleet_form(kp_buf *f, const kp_ec2_create_fleet_input *in)
{
    int err = kp_aws_form_add(f, "Type", "instant");
    for (size_t i = 0; i < in->n_configs && err == 0; i++)
        err = put_config(f, i + 1, &in->configs[i]);
    if (err == 0)
        err = kp_ec2_form_int(f, "TargetCapacitySpecification.TotalTargetCapacity",
                              in->total_target_capacity);
    if (err == 0)
        err = kp_ec2_form_opt(f, "TargetCapacitySpecification.DefaultTargetCapacityType",
                              in->default_target_capacity_type);
    if (err == 0)
        err = kp_ec2_form_opt(f, "SpotOptions.AllocationStrategy", in->spot_allocation_strategy);
    if (err == 0)
        err = kp_ec2_form_opt(f, "OnDemandOptions.AllocationStrategy",
                              in->on_demand_allocation_strategy);
    if (err == 0)
        err = kp_ec2_form_opt(f, "ReservedCapacityOptions.ReservationType.1",
                              in->reserved_capacity_type);
    if (err == 0)
        err = kp_ec2_form_tag_specs(f, "TagSpecification", in->tag_specs, in->n_tag_specs);
    if (err == 0)
        err = kp_ec2_form_opt(f, "Context", in->context);
    if (err == 0)
        err = kp_ec2_form_opt(f, "ClientToken", in->client_token);
    if (err == 0 && in->dry_run)
        err = kp_aws_form_add(f, "DryRun", "true");
    return err;
}

static void parse_fleet_instance(kp_arena *a, const xmlNode *it, kp_ec2_fleet_instance *fi)
{
    const xmlNode *ov = kp_aws_xml_path(it, "launchTemplateAndOverrides/overrides");
    fi->instance_type = kp_aws_xml_text(a, it, "instanceType");
    if (!fi->instance_type)
        fi->instance_type = kp_aws_xml_text(a, ov, "instanceType");
    fi->availability_zone = kp_aws_xml_text(a, ov, "availabilityZone");
    fi->subnet_id = kp_aws_xml_text(a, ov, "subnetId");
    fi->lifecycle = kp_aws_xml_text(a, it, "lifecycle");
    fi->instance_ids = kp_ec2_parse_strings(a, it, "instanceIds", &fi->n_instance_ids);
}

static void parse_fleet_error(kp_arena *a, const xmlNode *it, kp_ec2_fleet_error *fe)
{
    const xmlNode *ov = kp_aws_xml_path(it, "launchTemplateAndOverrides/overrides");
    fe->code = kp_aws_xml_text(a, it, "errorCode");
    fe->message = kp_aws_xml_text(a, it, "errorMessage");
    fe->instance_type = kp_aws_xml_text(a, ov, "instanceType");
    fe->availability_zone = kp_aws_xml_text(a, ov, "availabilityZone");
    fe->subnet_id = kp_aws_xml_text(a, ov, "subnetId");
    fe->lifecycle = kp_aws_xml_text(a, it, "lifecycle");
    if (!fe->code)
        fe->code = "";
}


static int fleet_page(void *ctx, kp_arena *a, xmlNode *root)
{
    kp_ec2_fleet_result *r = ctx;
    r->fleet_id = kp_aws_xml_text(a, root, "fleetId");
    xmlNode *first = kp_aws_xml_items(root, "fleetInstanceSet");
    r->n_instances = kp_aws_xml_count(first);
    r->instances = KP_ARENA_NEW(a, kp_ec2_fleet_instance, r->n_instances + 1);
    size_t i = 0;
    for (xmlNode *it = first; it; it = kp_aws_xml_next(it))
        parse_fleet_instance(a, it, &r->instances[i++]);
    first = kp_aws_xml_items(root, "errorSet");
    r->n_errors = kp_aws_xml_count(first);
    r->errors = KP_ARENA_NEW(a, kp_ec2_fleet_error, r->n_errors + 1);
    i = 0;
    for (xmlNode *it = first; it; it = kp_aws_xml_next(it))
        parse_fleet_error(a, it, &r->errors[i++]);
    return 0;
}

int kp_ec2_create_fleet(kp_aws_client *c, kp_arena *a, const kp_ec2_create_fleet_input *in,
                        kp_ec2_fleet_result *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = fleet_form(&form, in);
    kp_ec2_fleet_result r = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "CreateFleet", &form, false, fleet_page, &r);
    kp_buf_free(&form);
    if (err == 0)
        *out = r;
    return err;
}

static void parse_groups(kp_arena *a, const xmlNode *it, kp_ec2_instance *in)
{
    xmlNode *first = kp_aws_xml_items(it, "groupSet");
    size_t n = kp_aws_xml_count(first);
    in->security_group_ids = n ? KP_ARENA_NEW(a, const char *, n) : NULL;
    for (xmlNode *g = first; g; g = kp_aws_xml_next(g)) {
        const char *id = kp_aws_xml_text(a, g, "groupId");
        if (id) in->security_group_ids[in->n_security_group_ids++] = id;
    }
}

static void parse_instance(kp_arena *a, const xmlNode *it, kp_ec2_instance *in)
{
    in->id = kp_aws_xml_text(a, it, "instanceId");
    in->instance_type = kp_aws_xml_text(a, it, "instanceType");
    in->state = kp_aws_xml_text(a, it, "instanceState/name");
    in->availability_zone = kp_aws_xml_text(a, it, "placement/availabilityZone");
    in->subnet_id = kp_aws_xml_text(a, it, "subnetId");
    in->vpc_id = kp_aws_xml_text(a, it, "vpcId");
    in->image_id = kp_aws_xml_text(a, it, "imageId");
    in->private_dns_name = kp_aws_xml_text(a, it, "privateDnsName");
    in->private_ip = kp_aws_xml_text(a, it, "privateIpAddress");
    in->architecture = kp_aws_xml_text(a, it, "architecture");
    in->lifecycle = kp_aws_xml_text(a, it, "instanceLifecycle");
    in->capacity_reservation_id = kp_aws_xml_text(a, it, "capacityReservationId");
    in->capacity_reservation_preference = kp_aws_xml_text(
        a, it, "capacityReservationSpecification/capacityReservationPreference");
    in->placement_group_id = kp_aws_xml_text(a, it, "placement/groupId");
    in->iam_instance_profile_arn = kp_aws_xml_text(a, it, "iamInstanceProfile/arn");
    in->partition_number = (int32_t)kp_aws_xml_int(it, "placement/partitionNumber", 0);
    in->launch_time = kp_aws_xml_text(a, it, "launchTime");
    if (!in->launch_time || kp_time_parse_rfc3339(in->launch_time, &in->launch_time_ns) < 0)
        in->launch_time_ns = 0;
    in->tags = kp_ec2_parse_tags(a, it, &in->n_tags);
    parse_groups(a, it, in);
}

/* Instances sit two levels down: reservationSet/item/instancesSet/item. */
static int instances_page(void *ctx, kp_arena *a, xmlNode *root)
{
    kp_ec2_instance_list *out = ctx;
    for (xmlNode *res = kp_aws_xml_items(root, "reservationSet"); res;
         res = kp_aws_xml_next(res)) {
        xmlNode *first = kp_aws_xml_items(res, "instancesSet");
        size_t add = kp_aws_xml_count(first);
        out->items = kp_ec2_grow(a, out->items, out->n, add, sizeof(kp_ec2_instance));
        for (xmlNode *it = first; it; it = kp_aws_xml_next(it))
            parse_instance(a, it, &out->items[out->n++]);
    }
    return 0;
}

int kp_ec2_describe_instances(kp_aws_client *c, kp_arena *a, const char *const *ids,
                              size_t n_ids, const kp_ec2_filter *filters, size_t n_filters,
                              kp_ec2_instance_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "InstanceId", ids, n_ids);
    if (err == 0)
        err = kp_ec2_form_filters(&form, filters, n_filters);
    if (err == 0 && n_ids == 0)
        err = kp_ec2_form_int(&form, "MaxResults", 1000);
    kp_ec2_instance_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeInstances", &form, true, instances_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

static void parse_state_change(kp_arena *a, const xmlNode *it, kp_ec2_state_change *s)
{
    s->instance_id = kp_aws_xml_text(a, it, "instanceId");
    s->current_state = kp_aws_xml_text(a, it, "currentState/name");
    s->previous_state = kp_aws_xml_text(a, it, "previousState/name");
}

PAGE_FN(terminate_page, kp_ec2_state_change_list, kp_ec2_state_change, "instancesSet",
        parse_state_change)

int kp_ec2_terminate_instances(kp_aws_client *c, kp_arena *a, const char *const *ids,
                               size_t n_ids, kp_ec2_state_change_list *out)
{
    if (n_ids == 0)
        return kp_error_set(KP_EINVALID, "TerminateInstances needs at least one instance id");
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "InstanceId", ids, n_ids);
    kp_ec2_state_change_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "TerminateInstances", &form, false, terminate_page, &list);
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

int kp_ec2_create_tags(kp_aws_client *c, const char *const *resource_ids, size_t n_ids,
                       const kp_ec2_tag *tags, size_t n_tags)
{
    if (n_ids == 0 || n_tags == 0)
        return kp_error_set(KP_EINVALID, "CreateTags needs resources and tags");
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    kp_arena *a = kp_arena_new();
    int err = kp_ec2_form_list(&form, "ResourceId", resource_ids, n_ids);
    if (err == 0)
        err = kp_ec2_form_tags(&form, "Tag", tags, n_tags);
    if (err == 0)
        err = kp_ec2_call(c, a, "CreateTags", &form, false, ignore_page, NULL);
    kp_arena_free(a);
    kp_buf_free(&form);
    return err;
}
