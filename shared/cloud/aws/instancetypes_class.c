/*
 * What an EC2NodeClass changes in its catalog: the AMI family, the kubelet
 * settings and the volume pods write to (allocatable), and the zones of its
 * subnets (offerings). Quantities are parsed here, once per catalog.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/quantity.h"
#include "base/buf.h"
#include "base/error.h"
#include "cloud/aws/instancetypes_internal.h"

typedef struct family_name {
    const char *name; /* spec.amiFamily spelling; the alias uses it lower-cased */
    enum kp_aws_ami_family family;
    const char *windows_build;
} family_name;

static const family_name FAMILIES[] = {
    {"AL2", KP_AWS_AMI_AL2, NULL},
    {"AL2023", KP_AWS_AMI_AL2023, NULL},
    {"Bottlerocket", KP_AWS_AMI_BOTTLEROCKET, NULL},
    {"Windows2019", KP_AWS_AMI_WINDOWS, "10.0.17763"},
    {"Windows2022", KP_AWS_AMI_WINDOWS, "10.0.20348"},
    {"Windows2025", KP_AWS_AMI_WINDOWS, "10.0.26100"},
    {"Custom", KP_AWS_AMI_CUSTOM, NULL},
};
enum { N_FAMILIES = sizeof(FAMILIES) / sizeof(FAMILIES[0]) };

/* spec.amiFamily, else the family part of the alias term ("al2023@latest"). */
static const family_name *class_family(const kp_ec2nodeclass *nc)
{
    if (nc && nc->ami_family && *nc->ami_family) {
        for (size_t i = 0; i < N_FAMILIES; i++)
            if (strcmp(FAMILIES[i].name, nc->ami_family) == 0) return &FAMILIES[i];
        return &FAMILIES[0]; /* Karpenter treats names it does not know as AL2 */
    }
    for (size_t t = 0; nc && t < nc->n_ami_selector_terms; t++) {
        const char *alias = nc->ami_selector_terms[t].alias;
        const char *at = alias ? strchr(alias, '@') : NULL;
        if (!at) continue;
        for (size_t i = 0; i < N_FAMILIES; i++)
            if (strncasecmp(FAMILIES[i].name, alias, (size_t)(at - alias)) == 0 &&
                strlen(FAMILIES[i].name) == (size_t)(at - alias))
                return &FAMILIES[i];
    }
    return &FAMILIES[1];
}

enum kp_aws_ami_family kp_aws_nodeclass_ami_family(const kp_ec2nodeclass *nc)
{
    return class_family(nc)->family;
}

static int parse_bytes(const char *field, const char *key, const char *text, int64_t *out)
{
    kp_quantity q;
    if (kp_quantity_parse(text, &q) < 0)
        return kp_error_wrap(KP_EINVALID, "spec.kubelet.%s[%s]", field, key);
    *out = kp_quantity_value(q);
    return 0;
}

/* kubeReserved / systemReserved: only cpu, memory and ephemeral-storage matter. */
static int parse_reserved(const char *field, const kp_labels *map, kp_aws_reserved *r)
{
    for (size_t i = 0; i < map->count; i++) {
        const char *k = map->items[i].key, *v = map->items[i].value;
        int err = 0;
        if (strcmp(k, "cpu") == 0) {
            kp_quantity q;
            if ((err = kp_quantity_parse(v, &q)) < 0)
                return kp_error_wrap(KP_EINVALID, "spec.kubelet.%s[cpu]", field);
            r->has_cpu = true;
            r->cpu_milli = kp_quantity_milli_value(q);
        } else if (strcmp(k, "memory") == 0) {
            r->has_memory = true;
            err = parse_bytes(field, k, v, &r->memory_bytes);
        } else if (strcmp(k, "ephemeral-storage") == 0) {
            r->has_ephemeral = true;
            err = parse_bytes(field, k, v, &r->ephemeral_bytes);
        }
        if (err < 0) return err;
    }
    return 0;
}

/* An evictionHard value: "5%" or a quantity. */
static int parse_threshold(const kp_labels *hard, const char *signal, kp_aws_threshold *t)
{
    const char *v = kp_labels_get(hard, signal);
    if (!v) return 0;
    size_t len = strlen(v);
    if (len > 0 && v[len - 1] == '%') {
        char *end = NULL;
        double pct = strtod(v, &end);
        if (end != v + len - 1 || pct < 0 || pct > 100)
            return kp_error_set(KP_EINVALID, "spec.kubelet.evictionHard[%s]: bad percentage \"%s\"",
                                signal, v);
        t->kind = KP_AWS_THRESHOLD_PERCENT;
        t->percent = pct;
        return 0;
    }
    t->kind = KP_AWS_THRESHOLD_QUANTITY;
    return parse_bytes("evictionHard", signal, v, &t->bytes);
}

static int parse_kubelet(const kp_kubelet_config *k, kp_aws_kubelet_opts *o)
{
    if (!k->present) return 0;
    o->has_max_pods = k->has_max_pods;
    o->max_pods = k->max_pods;
    if (!k->has_max_pods && k->max_pods_expr && *k->max_pods_expr) {
        /* a number written as a string is still a number; anything else is an
         * expression we cannot evaluate */
        char *end = NULL;
        long v = strtol(k->max_pods_expr, &end, 10);
        if (*end || v < 0 || v > INT32_MAX)
            return kp_error_set(KP_EINVALID,
                                "spec.kubelet.maxPods: \"%s\" is not a number "
                                "(expressions are not supported)",
                                k->max_pods_expr);
        o->has_max_pods = true;
        o->max_pods = (int32_t)v;
    }
    o->pods_per_core = k->has_pods_per_core ? k->pods_per_core : 0;
    int err = parse_reserved("kubeReserved", &k->kube_reserved, &o->kube_reserved);
    if (err == 0) err = parse_reserved("systemReserved", &k->system_reserved, &o->system_reserved);
    if (err == 0) err = parse_threshold(&k->eviction_hard, "memory.available", &o->eviction_memory);
    if (err == 0) err = parse_threshold(&k->eviction_hard, "nodefs.available", &o->eviction_nodefs);
    return err;
}

static int64_t bdm_size(const kp_block_device_mapping *m)
{
    return m->has_ebs && m->ebs.has_volume_size ? kp_quantity_value(m->ebs.volume_size) : 0;
}

/* The volume pods write to, Karpenter's order: the root volume, then (Custom)
 * the last mapping, else the family's ephemeral device; 0: the family default. */
static int64_t ephemeral_volume(const kp_ec2nodeclass *nc, enum kp_aws_ami_family family)
{
    if (!nc || nc->n_block_device_mappings == 0) return 0;
    for (size_t i = 0; i < nc->n_block_device_mappings; i++)
        if (nc->block_device_mappings[i].root_volume && bdm_size(&nc->block_device_mappings[i]))
            return bdm_size(&nc->block_device_mappings[i]);
    if (family == KP_AWS_AMI_CUSTOM)
        return bdm_size(&nc->block_device_mappings[nc->n_block_device_mappings - 1]);
    const char *device = family == KP_AWS_AMI_BOTTLEROCKET ? "/dev/xvdb"
                         : family == KP_AWS_AMI_WINDOWS    ? "/dev/sda1"
                                                           : "/dev/xvda";
    for (size_t i = 0; i < nc->n_block_device_mappings; i++) {
        const kp_block_device_mapping *m = &nc->block_device_mappings[i];
        if (m->device_name && strcmp(m->device_name, device) == 0) return bdm_size(m);
    }
    return 0;
}

static int zone_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_nc_subnet *)a)->zone, ((const kp_nc_subnet *)b)->zone);
}

/* The zones of the class's subnets, sorted and unique, with their zone IDs. */
static void class_zones(const kp_ec2nodeclass *nc, kp_arena *a, it_class_inputs *in)
{
    kp_nc_subnet *s = KP_ARENA_NEW(a, kp_nc_subnet, nc->n_status_subnets + 1);
    size_t n = 0;
    for (size_t i = 0; i < nc->n_status_subnets; i++)
        if (nc->status_subnets[i].zone && *nc->status_subnets[i].zone)
            s[n++] = nc->status_subnets[i];
    qsort(s, n, sizeof(*s), zone_cmp);
    in->zones = KP_ARENA_NEW(a, const char *, n + 1);
    in->zone_ids = KP_ARENA_NEW(a, const char *, n + 1);
    in->n_zones = 0;
    for (size_t i = 0; i < n; i++) {
        if (in->n_zones && strcmp(in->zones[in->n_zones - 1], s[i].zone) == 0) {
            if (!in->zone_ids[in->n_zones - 1]) in->zone_ids[in->n_zones - 1] = s[i].zone_id;
            continue;
        }
        in->zone_ids[in->n_zones] = s[i].zone_id && *s[i].zone_id ? s[i].zone_id : NULL;
        in->zones[in->n_zones++] = s[i].zone;
    }
}

static bool efa_only(const kp_nc_network_interface *ni)
{
    return ni->interface_type && strcmp(ni->interface_type, "efa-only") == 0;
}

/* networkInterfaces: EFA-only interfaces replace the type's EFA count, and
 * the ones on card 0 take ENIs away from pods. */
static void network_inputs(const kp_ec2nodeclass *nc, it_class_inputs *in)
{
    in->nis = nc->network_interfaces;
    in->n_nis = nc->n_network_interfaces;
    in->opts.has_network_interfaces = nc->n_network_interfaces > 0;
    for (size_t i = 0; i < nc->n_network_interfaces; i++) {
        if (!efa_only(&nc->network_interfaces[i])) continue;
        in->opts.efa_only_interfaces++;
        if (nc->network_interfaces[i].network_card_index == 0) in->opts.efa_only_interfaces_card0++;
    }
    in->nested_virtualization =
        nc->nested_virtualization && strcmp(nc->nested_virtualization, "enabled") == 0;
    in->connection_tracking = nc->connection_tracking.present;
    in->crs = nc->status_capacity_reservations;
    in->n_crs = nc->n_status_capacity_reservations;
}

/* Karpenter's network-interface check: ENA, cards, device indices, EFA-only count. */
static bool interfaces_fit(const kp_aws_type_row *row, const it_class_inputs *in)
{
    if (!in->n_nis) return true;
    if (row->ena_unsupported || row->n_cards == 0) return false;
    for (size_t i = 0; i < in->n_nis; i++) {
        const kp_nc_network_interface *ni = &in->nis[i];
        if (ni->network_card_index < 0 || (uint32_t)ni->network_card_index >= row->n_cards ||
            row->card_max_enis[ni->network_card_index] <= ni->device_index)
            return false;
    }
    return in->opts.efa_only_interfaces <= row->info.max_efa;
}

bool kp_aws_it_compatible(const kp_aws_type_row *row, const it_class_inputs *in)
{
    if (in->opts.ami_family == KP_AWS_AMI_AL2023 && strncmp(row->info.name, "a1.", 3) == 0)
        return false; /* a1 cannot boot AL2023 */
    if (!row->known) return true; /* the built-in table: nothing to check against */
    if (!interfaces_fit(row, in)) return false;
    if (in->nested_virtualization && !row->nested_virtualization) return false;
    if (in->connection_tracking && row->info.hypervisor != KP_AWS_HV_NITRO) return false;
    if (in->pg.id && !(row->placement_strategies & kp_aws_pg_strategy_bit(in->pg.strategy)))
        return false;
    return true;
}

int kp_aws_it_class_inputs(const kp_aws_instancetypes_opts *flags, const kp_ec2nodeclass *nc,
                           const kp_aws_pg_info *pg, kp_arena *a, it_class_inputs *out)
{
    it_class_inputs in;
    memset(&in, 0, sizeof(in)); /* padding too: inputs are compared with memcmp */
    const family_name *f = class_family(nc);
    in.opts.vm_memory_overhead_percent = flags->vm_memory_overhead_percent;
    in.opts.reserved_enis = flags->reserved_enis;
    in.opts.ami_family = f->family;
    in.windows_build = f->windows_build;
    in.opts.ephemeral_volume_bytes = ephemeral_volume(nc, f->family);
    in.opts.instance_store_raid0 = nc && nc->instance_store_policy == KP_INSTANCE_STORE_RAID0;
    int err = nc ? parse_kubelet(&nc->kubelet, &in.opts.kubelet) : 0;
    if (err < 0) return err;
    if (nc) {
        class_zones(nc, a, &in);
        network_inputs(nc, &in);
    } else {
        in.any_zone = true;
    }
    if (pg && pg->id) in.pg = *pg;
    memcpy(out, &in, sizeof(in));
    return 0;
}

const char *kp_aws_it_class_key(const it_class_inputs *in, kp_arena *a)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    const unsigned char *raw = (const unsigned char *)&in->opts;
    for (size_t i = 0; i < sizeof(in->opts); i++)
        kp_buf_printf(&b, "%02x", raw[i]);
    kp_buf_printf(&b, "|%s|%d", in->windows_build ? in->windows_build : "", in->any_zone);
    for (uint32_t i = 0; i < in->n_zones; i++)
        kp_buf_printf(&b, "|%s=%s", in->zones[i], in->zone_ids[i] ? in->zone_ids[i] : "");
    for (size_t i = 0; i < in->n_nis; i++)
        kp_buf_printf(&b, "|ni%d.%d.%s", (int)in->nis[i].network_card_index,
                      (int)in->nis[i].device_index, in->nis[i].interface_type);
    kp_buf_printf(&b, "|nv%d|ct%d|pg=%s/%s/%d", in->nested_virtualization,
                  in->connection_tracking, in->pg.id ? in->pg.id : "",
                  in->pg.strategy ? in->pg.strategy : "", (int)in->pg.partition_count);
    for (size_t i = 0; i < in->n_mem; i++)
        kp_buf_printf(&b, "|mem=%s/%lld", in->mem_types[i], (long long)in->mem_bytes[i]);
    for (size_t i = 0; i < in->n_crs; i++) {
        const kp_nc_capacity_reservation *c = &in->crs[i];
        kp_buf_printf(&b, "|cr=%s/%s/%s/%s/%s/%d", c->id, c->availability_zone, c->instance_type,
                      c->reservation_type, c->state, c->interruptible);
    }
    const char *key = kp_arena_strdup(a, kp_buf_cstr(&b));
    kp_buf_free(&b);
    return key;
}
