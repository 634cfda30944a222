/*
 * Rendering a launch template: its data from the node class and claim, and
 * its name from a hash of that data (see launchtemplate.h).
 */
#include "cloud/aws/launchtemplate_internal.h"

#include <inttypes.h>
#include <string.h>

#include "api/quantity.h"
#include "base/buf.h"
#include "base/error.h"
#include "cloud/aws/instancetypes.h"
#include "cloud/aws/provider_internal.h"
#include "cloud/aws/userdata.h"

#define GIB (INT64_C(1) << 30)

/* Decoded objects say "" for absent strings; EC2 must not get those. */
static const char *or_null(const char *s)
{
    return s && *s ? s : NULL;
}

static const char *or_default(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

/* ------------------------------------------------------------- user data */

/* What nodes join, read once under the lock (EKS discovery may replace it). */
typedef struct cluster_view {
    const char *endpoint, *ca_bundle, *cidr;
} cluster_view;

static cluster_view cluster_of(kp_aws_lts *lts, kp_arena *a)
{
    pthread_mutex_lock(&lts->lock);
    cluster_view v = {lts->cluster_endpoint ? kp_arena_strdup(a, lts->cluster_endpoint) : NULL,
                      lts->ca_bundle ? kp_arena_strdup(a, lts->ca_bundle) : NULL,
                      lts->cluster_cidr ? kp_arena_strdup(a, lts->cluster_cidr) : NULL};
    pthread_mutex_unlock(&lts->lock);
    return v;
}

static int user_data(kp_aws_lts *lts, kp_arena *a, const kp_aws_lt_params *p,
                     enum kp_aws_ami_family family, const char **out)
{
    const kp_ec2nodeclass *nc = p->nc;
    cluster_view cv = cluster_of(lts, a);
    kp_aws_userdata_opts o = {0};
    o.family = family;
    o.cluster_name = lts->cluster_name;
    o.cluster_endpoint = cv.endpoint;
    o.ca_bundle = cv.ca_bundle;
    o.cluster_cidr = cv.cidr;
    o.kube_dns_ip = lts->kube_dns_ip;
    o.kubelet = nc->kubelet.present ? &nc->kubelet : NULL;
    o.max_pods = nc->kubelet.has_max_pods ? nc->kubelet.max_pods : p->max_pods;
    kp_aws_userdata_labels(a, &p->claim->meta.labels, p->capacity_type, family, &o.labels);
    kp_taint *taints = NULL;
    kp_aws_userdata_taints(a, &p->claim->spec, &taints, &o.n_taints);
    o.taints = taints;
    o.custom = nc->has_user_data ? nc->user_data : NULL;
    o.raid0 = nc->instance_store_policy == KP_INSTANCE_STORE_RAID0;
    char *text = NULL;
    int err = kp_aws_userdata_render(a, &o, &text);
    if (err < 0) return kp_error_wrap(err, "user data for ec2nodeclass %s", nc->meta.name);
    *out = kp_aws_userdata_base64(a, text);
    return 0;
}

/* --------------------------------------------------------- block devices */

static kp_ec2_block_device default_ebs(const char *device, int64_t gib)
{
    return (kp_ec2_block_device){.device_name = device,
                                 .volume_size_gib = gib,
                                 .volume_type = "gp3",
                                 .encrypted = true,
                                 .delete_on_termination = true};
}

/* The AMI family's volumes when the class names none (Custom: the AMI's own). */
static size_t family_devices(enum kp_aws_ami_family family, kp_ec2_block_device *out)
{
    switch (family) {
    case KP_AWS_AMI_BOTTLEROCKET:
        out[0] = default_ebs("/dev/xvda", 4);
        out[1] = default_ebs("/dev/xvdb", 20);
        return 2;
    case KP_AWS_AMI_WINDOWS:
        out[0] = default_ebs("/dev/sda1", 50);
        return 1;
    case KP_AWS_AMI_CUSTOM:
        return 0;
    default:
        out[0] = default_ebs("/dev/xvda", 20);
        return 1;
    }
}

/* The class's mapping as EC2 wants it: sizes rounded up to whole GiB. An
 * unset deleteOnTermination stays EC2's default for launched volumes (true);
 * an unset encrypted stays false (EC2 then follows the snapshot and the
 * account's encryption-by-default setting). */
static int class_device(const kp_block_device_mapping *m, kp_ec2_block_device *out)
{
    const kp_block_device *e = &m->ebs;
    kp_ec2_block_device d = {.device_name = or_null(m->device_name),
                             .volume_type = or_null(e->volume_type),
                             .kms_key_id = or_null(e->kms_key_id),
                             .snapshot_id = or_null(e->snapshot_id)};
    d.delete_on_termination = e->has_delete_on_termination ? e->delete_on_termination : true;
    d.encrypted = e->has_encrypted && e->encrypted;
    if (e->has_iops) d.iops = e->iops;
    if (e->has_throughput) d.throughput = e->throughput;
    if (e->has_volume_initialization_rate) d.volume_initialization_rate = e->volume_initialization_rate;
    if (e->has_volume_size) {
        int64_t bytes = kp_quantity_value(e->volume_size);
        if (bytes <= 0 || bytes > INT64_MAX - GIB)
            return kp_error_set(KP_EINVALID, "block device %s: volume size out of range",
                                m->device_name ? m->device_name : "?");
        d.volume_size_gib = (bytes + GIB - 1) / GIB;
    }
    *out = d;
    return 0;
}

static int block_devices(kp_arena *a, const kp_ec2nodeclass *nc, enum kp_aws_ami_family family,
                         kp_ec2_launch_template_data *d)
{
    size_t n = nc->n_block_device_mappings;
    kp_ec2_block_device *b = KP_ARENA_NEW(a, kp_ec2_block_device, n ? n : 2);
    for (size_t i = 0; i < n; i++) {
        int err = class_device(&nc->block_device_mappings[i], &b[i]);
        if (err < 0) return kp_error_wrap(err, "ec2nodeclass %s", nc->meta.name);
    }
    if (!n) n = family_devices(family, b);
    d->block_devices = b;
    d->n_block_devices = n;
    return 0;
}

/* ---------------------------------------------------- metadata, network */

static bool isolated_region(const char *region)
{
    return region && (strncmp(region, "us-iso-", 7) == 0 || strncmp(region, "us-isob-", 8) == 0 ||
                      strncmp(region, "us-isof-", 8) == 0);
}

/* The class's options; unset fields take the CRD's defaults (the API server
 * fills them in, so they only matter for objects that skipped it). */
static void metadata(kp_aws_lts *lts, const kp_ec2nodeclass *nc, kp_ec2_metadata_options *m)
{
    const kp_metadata_options *s = &nc->metadata_options;
    bool v6_dns = lts->kube_dns_ip && strchr(lts->kube_dns_ip, ':');
    m->http_endpoint = or_default(s->http_endpoint, "enabled");
    m->http_tokens = or_default(s->http_tokens, "required");
    m->http_protocol_ipv6 = or_default(s->http_protocol_ipv6, v6_dns ? "enabled" : "disabled");
    if (isolated_region(lts->region)) m->http_protocol_ipv6 = NULL;
    m->http_put_response_hop_limit =
        s->has_http_put_response_hop_limit ? (int32_t)s->http_put_response_hop_limit : 1;
    /* Karpenter's tags (kubernetes.io/cluster/...) are not valid instance
     * metadata tag names, so tags in IMDS are always off. */
    m->instance_metadata_tags = "disabled";
}

static void tag_specs(kp_arena *a, const kp_aws_lt_params *p, kp_ec2_launch_template_data *d)
{
    bool spot = p->capacity_type && strcmp(p->capacity_type, "spot") == 0;
    kp_ec2_tag_spec *s = KP_ARENA_NEW(a, kp_ec2_tag_spec, 2);
    s[0] = (kp_ec2_tag_spec){"network-interface", p->tags, p->n_tags};
    if (spot) s[1] = (kp_ec2_tag_spec){"spot-instances-request", p->tags, p->n_tags};
    d->tag_specs = p->n_tags ? s : NULL;
    d->n_tag_specs = p->n_tags ? (spot ? 2 : 1) : 0;
}

/* Reserved launches target their reservation; the rest stay out of open
 * ones (Karpenter's targeted launch mode, on with its ReservedCapacity gate). */
static void placement(kp_aws_lts *lts, const kp_aws_lt_params *p, kp_ec2_launch_template_data *d)
{
    d->placement_group_id = p->placement_group_id;
    d->placement_partition_number = p->placement_group_id ? p->placement_partition : 0;
    if (lts->reserved_capacity_disabled) return;
    bool reserved = p->capacity_type && strcmp(p->capacity_type, "reserved") == 0 &&
                    p->capacity_reservation_id;
    d->capacity_reservation_preference = reserved ? "capacity-reservations-only" : "none";
    if (!reserved) return;
    d->capacity_reservation_id = p->capacity_reservation_id;
    if (p->capacity_reservation_type && strcmp(p->capacity_reservation_type, "capacity-block") == 0)
        d->market_type = "capacity-block";
    else if (p->capacity_reservation_interruptible)
        d->market_type = "interruptible-capacity-reservation";
}

/* ------------------------------------------------------------------ name */

static void put_str(kp_buf *b, const char *s)
{
    kp_buf_printf(b, "%zu:%s|", s ? strlen(s) : (size_t)0, s ? s : "");
}

static void put_devices(kp_buf *b, const kp_ec2_launch_template_data *d)
{
    for (size_t i = 0; i < d->n_block_devices; i++) {
        const kp_ec2_block_device *v = &d->block_devices[i];
        put_str(b, v->device_name);
        put_str(b, v->volume_type);
        put_str(b, v->kms_key_id);
        put_str(b, v->snapshot_id);
        kp_buf_printf(b, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%d,%d|", v->volume_size_gib,
                      v->iops, v->throughput, v->encrypted, v->delete_on_termination,
                      (int)v->volume_initialization_rate);
    }
}

/* Every field the data sends, in a fixed order, hashed. The tags come sorted
 * from the caller, so equal inputs give equal names. */
static const char *template_name(kp_arena *a, const kp_ec2_launch_template_data *d,
                                 const kp_aws_lt_params *p)
{
    kp_buf b = KP_BUF_INIT(1 << 24);
    const kp_ec2_metadata_options *m = &d->metadata;
    const char *fields[] = {d->image_id,
                            d->user_data,
                            d->iam_instance_profile_name,
                            m->http_endpoint,
                            m->http_tokens,
                            m->http_protocol_ipv6,
                            d->placement_tenancy,
                            d->placement_group_id,
                            d->capacity_reservation_preference,
                            d->capacity_reservation_id,
                            d->market_type,
                            d->nested_virtualization};
    for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
        put_str(&b, fields[i]);
    kp_buf_printf(&b, "%d,%d,%zu,%d,%d|", m->http_put_response_hop_limit, d->monitoring,
                  d->n_tag_specs, (int)d->placement_partition_number, d->enclave);
    put_devices(&b, d);
    kp_aws_lt_hash_interfaces(&b, d);
    for (size_t i = 0; i < p->n_tags; i++) {
        put_str(&b, p->tags[i].key);
        put_str(&b, p->tags[i].value);
    }
    uint64_t h = kp_aws_fnv1a(KP_AWS_FNV_OFFSET, b.data ? b.data : "", b.len);
    kp_buf_free(&b);
    return kp_arena_printf(a, KP_AWS_LT_NAME_PREFIX "%" PRIu64, h);
}

/* ---------------------------------------------------------------- render */

int kp_aws_lt_render(kp_aws_lts *lts, kp_arena *a, const kp_aws_lt_params *p, const char **name,
                     kp_ec2_launch_template_data *data)
{
    const kp_ec2nodeclass *nc = p->nc;
    if (!p->image_id || !*p->image_id)
        return kp_error_set(KP_EINVALID, "launch template: no image");
    if (!nc->status_instance_profile || !*nc->status_instance_profile)
        return kp_error_set(KP_ENOTREADY, "ec2nodeclass %s: no instance profile in its status",
                            nc->meta.name);
    enum kp_aws_ami_family family = kp_aws_nodeclass_ami_family(nc);
    kp_ec2_launch_template_data d = {0};
    d.image_id = p->image_id;
    d.iam_instance_profile_name = nc->status_instance_profile;
    d.monitoring = nc->has_detailed_monitoring && nc->detailed_monitoring;
    d.placement_tenancy = "default";
    placement(lts, p, &d);
    d.nested_virtualization = nc->nested_virtualization && *nc->nested_virtualization
                                  ? nc->nested_virtualization
                                  : NULL;
    d.enclave = kp_resource_list_get(&p->claim->spec.resource_requests, KP_RESOURCE_NITRO_SANDBOX)
                    ? 1
                    : 0;
    metadata(lts, nc, &d.metadata);
    tag_specs(a, p, &d);
    bool v6 = lts->kube_dns_ip && strchr(lts->kube_dns_ip, ':');
    int err = kp_aws_lt_interfaces(a, p, v6, &d);
    if (err == 0) err = block_devices(a, nc, family, &d);
    if (err == 0) err = user_data(lts, a, p, family, &d.user_data);
    if (err < 0) return err;
    *name = template_name(a, &d, p);
    *data = d;
    return 0;
}
