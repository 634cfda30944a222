/*
 * DescribeCapacityReservations, DescribePlacementGroups,
 * DescribeInstanceStatus and the dry-run launches (see ec2.h).
 */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "cloud/aws/ec2_internal.h"

/* An RFC 3339 time at `path`, 0 when absent or malformed. */
static int64_t time_ns(const xmlNode *node, const char *path)
{
    kp_arena *a = kp_arena_new();
    const char *t = kp_aws_xml_text(a, node, path);
    int64_t ns = 0;
    if (t && kp_time_parse_rfc3339(t, &ns) < 0) ns = 0;
    kp_arena_free(a);
    return ns;
}

/* ------------------------------------------------------ capacity reservations */

static void parse_reservation(kp_arena *a, const xmlNode *it, kp_ec2_capacity_reservation *r)
{
    r->id = kp_aws_xml_text(a, it, "capacityReservationId");
    r->owner_id = kp_aws_xml_text(a, it, "ownerId");
    r->availability_zone = kp_aws_xml_text(a, it, "availabilityZone");
    r->availability_zone_id = kp_aws_xml_text(a, it, "availabilityZoneId");
    r->instance_type = kp_aws_xml_text(a, it, "instanceType");
    r->instance_platform = kp_aws_xml_text(a, it, "instancePlatform");
    r->tenancy = kp_aws_xml_text(a, it, "tenancy");
    r->state = kp_aws_xml_text(a, it, "state");
    r->instance_match_criteria = kp_aws_xml_text(a, it, "instanceMatchCriteria");
    r->reservation_type = kp_aws_xml_text(a, it, "reservationType");
    r->interruptible = kp_aws_xml_bool(it, "interruptible", false);
    r->total_instance_count = (int32_t)kp_aws_xml_int(it, "totalInstanceCount", 0);
    r->available_instance_count = (int32_t)kp_aws_xml_int(it, "availableInstanceCount", 0);
    r->end_date_ns = time_ns(it, "endDate");
    r->tags = kp_ec2_parse_tags(a, it, &r->n_tags);
}

PAGE_FN(reservations_page, kp_ec2_capacity_reservation_list, kp_ec2_capacity_reservation,
        "capacityReservationSet", parse_reservation)

int kp_ec2_describe_capacity_reservations(kp_aws_client *c, kp_arena *a, const char *const *ids,
                                          size_t n_ids, const kp_ec2_filter *filters,
                                          size_t n_filters, kp_ec2_capacity_reservation_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "CapacityReservationId", ids, n_ids);
    if (err == 0) err = kp_ec2_form_filters(&form, filters, n_filters);
    /* EC2 refuses MaxResults next to ids. */
    if (err == 0 && n_ids == 0) err = kp_ec2_form_int(&form, "MaxResults", 1000);
    kp_ec2_capacity_reservation_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeCapacityReservations", &form, true, reservations_page,
                          &list);
    kp_buf_free(&form);
    if (err == 0) *out = list;
    return err;
}

/* ------------------------------------------------------------ placement groups */

static void parse_group(kp_arena *a, const xmlNode *it, kp_ec2_placement_group *g)
{
    g->id = kp_aws_xml_text(a, it, "groupId");
    g->name = kp_aws_xml_text(a, it, "groupName");
    g->strategy = kp_aws_xml_text(a, it, "strategy");
    g->state = kp_aws_xml_text(a, it, "state");
    g->spread_level = kp_aws_xml_text(a, it, "spreadLevel");
    g->partition_count = (int32_t)kp_aws_xml_int(it, "partitionCount", 0);
}

PAGE_FN(groups_page, kp_ec2_placement_group_list, kp_ec2_placement_group, "placementGroupSet",
        parse_group)

int kp_ec2_describe_placement_groups(kp_aws_client *c, kp_arena *a, const char *group_id,
                                     const char *group_name, const kp_ec2_filter *filters,
                                     size_t n_filters, kp_ec2_placement_group_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = group_id ? kp_aws_form_add(&form, "GroupId.1", group_id) : 0;
    if (err == 0 && group_name) err = kp_aws_form_add(&form, "GroupName.1", group_name);
    if (err == 0) err = kp_ec2_form_filters(&form, filters, n_filters);
    kp_ec2_placement_group_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribePlacementGroups", &form, false, groups_page, &list);
    kp_buf_free(&form);
    if (err == 0) *out = list;
    return err;
}

/* ------------------------------------------------------------- instance status */

/* The earliest impairedSince among the failed details of a status block;
 * *failed when any detail failed. */
static int64_t impaired_since(const xmlNode *it, const char *path, bool *failed)
{
    int64_t best = 0;
    kp_arena *a = kp_arena_new();
    *failed = false;
    for (xmlNode *d = kp_aws_xml_items(it, path); d; d = kp_aws_xml_next(d)) {
        const char *status = kp_aws_xml_text(a, d, "status");
        if (!status || strcmp(status, "failed") != 0) continue;
        *failed = true;
        int64_t t = time_ns(d, "impairedSince");
        if (t > 0 && (best == 0 || t < best)) best = t;
    }
    kp_arena_free(a);
    return best;
}

static void parse_status(kp_arena *a, const xmlNode *it, kp_ec2_instance_status *s)
{
    s->instance_id = kp_aws_xml_text(a, it, "instanceId");
    s->availability_zone = kp_aws_xml_text(a, it, "availabilityZone");
    s->state = kp_aws_xml_text(a, it, "instanceState/name");
    s->system_status = kp_aws_xml_text(a, it, "systemStatus/status");
    s->instance_status = kp_aws_xml_text(a, it, "instanceStatus/status");
    int64_t sys = impaired_since(it, "systemStatus/details", &s->system_failed);
    int64_t ins = impaired_since(it, "instanceStatus/details", &s->instance_failed);
    s->system_failed_since_ns = sys;
    s->instance_failed_since_ns = ins;
    s->impaired_since_ns = sys && (!ins || sys < ins) ? sys : ins;
    xmlNode *first = kp_aws_xml_items(it, "eventsSet");
    s->n_events = kp_aws_xml_count(first);
    s->events = KP_ARENA_NEW(a, kp_ec2_status_event, s->n_events + 1);
    size_t i = 0;
    for (xmlNode *e = first; e; e = kp_aws_xml_next(e), i++) {
        s->events[i].code = kp_aws_xml_text(a, e, "code");
        s->events[i].description = kp_aws_xml_text(a, e, "description");
        s->events[i].not_before_ns = time_ns(e, "notBefore");
    }
}

PAGE_FN(status_page, kp_ec2_instance_status_list, kp_ec2_instance_status, "instanceStatusSet",
        parse_status)

int kp_ec2_describe_instance_status(kp_aws_client *c, kp_arena *a, const kp_ec2_filter *filters,
                                    size_t n_filters, kp_ec2_instance_status_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_filters(&form, filters, n_filters);
    if (err == 0) err = kp_aws_form_add(&form, "IncludeAllInstances", "true");
    if (err == 0) err = kp_ec2_form_int(&form, "MaxResults", 1000);
    kp_ec2_instance_status_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeInstanceStatus", &form, true, status_page, &list);
    kp_buf_free(&form);
    if (err == 0) *out = list;
    return err;
}

/* ------------------------------------------------------------------ dry runs */

static int ignore(void *ctx, kp_arena *a, xmlNode *root)
{
    (void)ctx, (void)a, (void)root;
    return 0;
}

/* A dry run succeeded when EC2 says it would have. */
static int dry_run_result(kp_aws_client *c, const char *action, int err)
{
    if (err < 0 && strcmp(kp_aws_client_error(c)->code, "DryRunOperation") == 0) return 0;
    if (err == 0) return kp_error_set(KP_ERROR, "ec2 %s: DryRun was not honoured", action);
    return err;
}

static int put_run_interfaces(kp_buf *f, const kp_ec2_run_instances_dry_run *in)
{
    if (in->n_interfaces == 0) return kp_aws_form_add(f, "SubnetId", in->subnet_id);
    int err = 0;
    for (size_t i = 0; i < in->n_interfaces && err == 0; i++) {
        const kp_ec2_lt_network_interface *ni = &in->interfaces[i];
        size_t n = i + 1;
        err = kp_aws_form_addf(f, in->subnet_id, "NetworkInterface.%zu.SubnetId", n);
        char v[24];
        snprintf(v, sizeof(v), "%d", (int)ni->device_index);
        if (err == 0) err = kp_aws_form_addf(f, v, "NetworkInterface.%zu.DeviceIndex", n);
        snprintf(v, sizeof(v), "%d", (int)ni->network_card_index);
        if (err == 0) err = kp_aws_form_addf(f, v, "NetworkInterface.%zu.NetworkCardIndex", n);
        if (err == 0 && ni->interface_type)
            err = kp_aws_form_addf(f, ni->interface_type, "NetworkInterface.%zu.InterfaceType", n);
    }
    return err;
}

int kp_ec2_dry_run_run_instances(kp_aws_client *c, const kp_ec2_run_instances_dry_run *in)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    kp_arena *a = kp_arena_new();
    kp_ec2_tag_spec specs[] = {{"instance", in->tags, in->n_tags},
                               {"volume", in->tags, in->n_tags},
                               {"network-interface", in->tags, in->n_tags}};
    int err = kp_aws_form_add(&form, "DryRun", "true");
    if (err == 0) err = kp_aws_form_add(&form, "MinCount", "1");
    if (err == 0) err = kp_aws_form_add(&form, "MaxCount", "1");
    if (err == 0)
        err = kp_aws_form_add(&form, "LaunchTemplate.LaunchTemplateName",
                              in->launch_template_name);
    if (err == 0) err = kp_aws_form_add(&form, "LaunchTemplate.Version", "$Latest");
    if (err == 0) err = kp_ec2_form_opt(&form, "InstanceType", in->instance_type);
    if (err == 0) err = put_run_interfaces(&form, in);
    if (err == 0) err = kp_ec2_form_tag_specs(&form, "TagSpecification", specs, 3);
    if (err == 0) err = kp_ec2_call(c, a, "RunInstances", &form, false, ignore, NULL);
    err = dry_run_result(c, "RunInstances", err);
    kp_arena_free(a);
    kp_buf_free(&form);
    return err;
}

int kp_ec2_dry_run_create_fleet(kp_aws_client *c, const kp_ec2_create_fleet_input *in)
{
    kp_ec2_create_fleet_input dry = *in;
    dry.dry_run = true;
    kp_arena *a = kp_arena_new();
    kp_ec2_fleet_result res;
    int err = kp_ec2_create_fleet(c, a, &dry, &res);
    kp_arena_free(a);
    return dry_run_result(c, "CreateFleet", err);
}
