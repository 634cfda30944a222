/*
 * DescribeInstanceTypes and DescribeInstanceTypeOfferings, joined into rows
 * (see instancetypes_fetch.h for the conversion rules).
 */
#include "cloud/aws/instancetypes_fetch.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/ec2.h"

char *kp_aws_lower_kebab(kp_arena *a, const char *s)
{
    if (!s) return NULL;
    char *out = kp_arena_strdup(a, s);
    for (char *p = out; *p; p++)
        *p = *p == ' ' ? '-' : (char)tolower((unsigned char)*p);
    return out;
}

/* Karpenter's category/generation pattern: letters, an optional "-<n>tb",
 * digits, then anything up to a '.'. "m5d.large" -> m, 5; "u-6tb1.metal" ->
 * u, 1; "mac-m4.metal" has none. */
static void category_generation(kp_arena *a, const char *name, kp_aws_type_info *t)
{
    const char *p = name, *dot = strchr(name, '.');
    t->category = "";
    t->generation = 0;
    while (*p >= 'a' && *p <= 'z')
        p++;
    size_t letters = (size_t)(p - name);
    if (letters == 0 || !dot) return;
    if (*p == '-') { /* optional "-<digits>tb" */
        const char *q = p + 1;
        while (isdigit((unsigned char)*q))
            q++;
        if (q > p + 1 && q[0] == 't' && q[1] == 'b') p = q + 2;
    }
    const char *digits = p;
    while (isdigit((unsigned char)*p))
        p++;
    if (p == digits || digits > dot) return;
    t->category = kp_arena_strndup(a, name, letters);
    t->generation = (int32_t)strtol(digits, NULL, 10);
}

static void name_parts(kp_arena *a, const char *name, kp_aws_type_info *t)
{
    const char *dot = strchr(name, '.');
    t->name = kp_arena_strdup(a, name);
    t->family = dot ? kp_arena_strndup(a, name, (size_t)(dot - name)) : t->name;
    t->size = dot ? kp_arena_strdup(a, dot + 1) : "";
    category_generation(a, name, t);
}

static bool has(const char *const *list, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] && strcmp(list[i], want) == 0) return true;
    return false;
}

/* The first architecture we know; false when there is none. */
static bool architecture(const kp_ec2_instance_type *in, kp_aws_type_info *t)
{
    for (size_t i = 0; i < in->n_architectures; i++) {
        if (strcmp(in->architectures[i], "x86_64") == 0) {
            t->arch = KP_AWS_ARCH_AMD64;
            return true;
        }
        if (strcmp(in->architectures[i], "arm64") == 0) {
            t->arch = KP_AWS_ARCH_ARM64;
            return true;
        }
    }
    return false;
}

static void processor(kp_arena *a, const kp_ec2_instance_type *in, kp_aws_type_info *t)
{
    t->cpu_manufacturer = kp_aws_lower_kebab(a, in->cpu_manufacturer);
    t->cpu_clock_mhz = (int32_t)lround(in->clock_ghz * 1000.0);
    if (!in->hypervisor || !*in->hypervisor)
        t->hypervisor = KP_AWS_HV_NONE;
    else if (strcmp(in->hypervisor, "xen") == 0)
        t->hypervisor = KP_AWS_HV_XEN;
    else
        t->hypervisor = KP_AWS_HV_NITRO;
}

static void accelerators(kp_arena *a, const kp_ec2_instance_type *in, kp_aws_type_info *t)
{
    if (in->n_gpus == 1) {
        t->gpu_name = kp_aws_lower_kebab(a, in->gpus[0].name);
        t->gpu_manufacturer = kp_aws_lower_kebab(a, in->gpus[0].manufacturer);
        t->gpu_count = in->gpus[0].count;
        t->gpu_memory_mib = in->gpus[0].memory_mib;
    }
    if (in->n_neuron_devices == 1) {
        t->accel_name = kp_aws_lower_kebab(a, in->neuron_devices[0].name);
        t->accel_manufacturer = "aws";
        t->accel_count = in->neuron_devices[0].count;
        t->neuron_cores_per_device = in->neuron_devices[0].core_count;
    } else if (in->n_accelerators == 1 && in->n_neuron_devices == 0) {
        t->accel_name = kp_aws_lower_kebab(a, in->accelerators[0].name);
        t->accel_manufacturer = kp_aws_lower_kebab(a, in->accelerators[0].manufacturer);
        t->accel_count = in->accelerators[0].count;
    }
}

static void network(const kp_ec2_instance_type *in, kp_aws_type_info *t)
{
    t->default_card_max_enis = in->max_network_interfaces;
    for (size_t i = 0; i < in->n_network_cards; i++)
        if (in->network_cards[i].index == in->default_network_card_index)
            t->default_card_max_enis = in->network_cards[i].max_interfaces;
    t->ipv4_per_eni = in->ipv4_per_interface;
    t->max_efa = in->max_efa_interfaces;
    if (in->encryption_in_transit) t->flags |= KP_AWS_TYPE_ENCRYPTION_IN_TRANSIT;
    /* Static facts EC2 does not answer with: bandwidth in Mbit/s, branch ENIs. */
    const kp_aws_type_info *known = kp_aws_catalog_find(in->name);
    if (known) {
        t->network_mbps = known->network_mbps;
        t->pod_enis = known->pod_enis;
    }
}

static void storage(const kp_ec2_instance_type *in, kp_aws_type_info *t)
{
    if (in->ebs_optimized_support && strcmp(in->ebs_optimized_support, "default") == 0)
        t->ebs_mbps = in->ebs_max_bandwidth_mbps;
    if (in->instance_storage_gb > 0 &&
        !(in->instance_storage_nvme && strcmp(in->instance_storage_nvme, "unsupported") == 0))
        t->local_nvme_gb = in->instance_storage_gb;
}

uint8_t kp_aws_pg_strategy_bit(const char *s)
{
    if (!s) return 0;
    if (strcmp(s, "cluster") == 0) return KP_AWS_PG_CLUSTER;
    if (strcmp(s, "partition") == 0) return KP_AWS_PG_PARTITION;
    if (strcmp(s, "spread") == 0) return KP_AWS_PG_SPREAD;
    return 0;
}

/* The facts node-class compatibility reads (Karpenter's compatibility checks). */
static void compatibility(kp_arena *a, const kp_ec2_instance_type *in, kp_aws_type_row *row)
{
    row->known = true;
    row->nested_virtualization = has((const char *const *)in->processor_features,
                                     in->n_processor_features, "nested-virtualization");
    row->ena_unsupported = in->ena_support && strcmp(in->ena_support, "unsupported") == 0;
    for (size_t i = 0; i < in->n_placement_strategies; i++)
        row->placement_strategies |= kp_aws_pg_strategy_bit(in->placement_strategies[i]);
    uint32_t n = 0;
    for (size_t i = 0; i < in->n_network_cards; i++)
        if (in->network_cards[i].index >= 0 && (uint32_t)in->network_cards[i].index + 1 > n)
            n = (uint32_t)in->network_cards[i].index + 1;
    int32_t *cards = KP_ARENA_NEW(a, int32_t, n + 1);
    for (size_t i = 0; i < in->n_network_cards; i++)
        if (in->network_cards[i].index >= 0)
            cards[in->network_cards[i].index] = in->network_cards[i].max_interfaces;
    row->card_max_enis = cards;
    row->n_cards = n;
}

/* One EC2 answer item as a row; false when it cannot be used. */
static bool convert(kp_arena *a, const kp_ec2_instance_type *in, kp_aws_type_row *row)
{
    memset(row, 0, sizeof(*row));
    kp_aws_type_info *t = &row->info;
    if (!in->name || in->vcpus <= 0 || in->memory_mib <= 0 || !architecture(in, t)) return false;
    name_parts(a, in->name, t);
    t->vcpu = in->vcpus;
    t->memory_mib = in->memory_mib;
    processor(a, in, t);
    accelerators(a, in, t);
    network(in, t);
    storage(in, t);
    if (in->burstable) t->flags |= KP_AWS_TYPE_BURSTABLE;
    if (in->bare_metal) t->flags |= KP_AWS_TYPE_BAREMETAL;
    const char *const *uc = (const char *const *)in->usage_classes;
    row->on_demand = has(uc, in->n_usage_classes, "on-demand");
    row->spot = has(uc, in->n_usage_classes, "spot");
    row->nitro_enclaves =
        in->nitro_enclaves_support && strcmp(in->nitro_enclaves_support, "supported") == 0;
    compatibility(a, in, row);
    return true;
}

static int row_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_aws_type_row *)a)->info.name, ((const kp_aws_type_row *)b)->info.name);
}

static int offering_cmp(const void *a, const void *b)
{
    const kp_ec2_offering *x = a, *y = b;
    int c = strcmp(x->instance_type, y->instance_type);
    return c ? c : strcmp(x->location, y->location);
}

/* Give each row the zones its offerings name (offerings sorted by type, zone). */
static void attach_zones(kp_arena *a, kp_aws_type_row *rows, uint32_t n,
                         const kp_ec2_offering_list *o)
{
    size_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        while (j < o->n && strcmp(o->items[j].instance_type, rows[i].info.name) < 0)
            j++;
        size_t start = j;
        while (j < o->n && strcmp(o->items[j].instance_type, rows[i].info.name) == 0)
            j++;
        const char **zones = KP_ARENA_NEW(a, const char *, j - start + 1);
        uint32_t nz = 0;
        for (size_t k = start; k < j; k++)
            if (nz == 0 || strcmp(zones[nz - 1], o->items[k].location) != 0)
                zones[nz++] = o->items[k].location;
        rows[i].zones = zones;
        rows[i].n_zones = nz;
    }
}

static int describe(kp_aws_client *ec2, kp_arena *a, kp_ec2_instance_type_list *types,
                    kp_ec2_offering_list *offerings)
{
    static const char *const hvm[] = {"hvm"}, *const archs[] = {"x86_64", "arm64"};
    const kp_ec2_filter filters[] = {{"supported-virtualization-type", hvm, 1},
                                     {"processor-info.supported-architecture", archs, 2}};
    kp_ec2_describe_instance_types_input in = {
        .filters = filters, .n_filters = 2, .max_results = 100};
    int err = kp_ec2_describe_instance_types(ec2, a, &in, types);
    if (err < 0) return kp_error_wrap(err, "describing instance types");
    err = kp_ec2_describe_instance_type_offerings(ec2, a, "availability-zone", NULL, 0, offerings);
    if (err < 0) return kp_error_wrap(err, "describing instance type zone offerings");
    return 0;
}

int kp_aws_instancetypes_fetch(kp_aws_client *ec2, kp_arena *a, kp_aws_type_row **out, uint32_t *n)
{
    kp_ec2_instance_type_list types = {0};
    kp_ec2_offering_list offerings = {0};
    int err = describe(ec2, a, &types, &offerings);
    if (err < 0) return err;
    kp_aws_type_row *rows = KP_ARENA_NEW(a, kp_aws_type_row, types.n + 1);
    uint32_t count = 0;
    for (size_t i = 0; i < types.n; i++)
        if (convert(a, &types.items[i], &rows[count])) count++;
    qsort(rows, count, sizeof(*rows), row_cmp);
    size_t kept = 0; /* pages may repeat a type: keep one */
    for (uint32_t i = 0; i < count; i++)
        if (kept == 0 || strcmp(rows[kept - 1].info.name, rows[i].info.name) != 0)
            rows[kept++] = rows[i];
    size_t valid = 0;
    for (size_t i = 0; i < offerings.n; i++)
        if (offerings.items[i].instance_type && offerings.items[i].location)
            offerings.items[valid++] = offerings.items[i];
    offerings.n = valid;
    qsort(offerings.items, offerings.n, sizeof(*offerings.items), offering_cmp);
    attach_zones(a, rows, (uint32_t)kept, &offerings);
    *out = rows;
    *n = (uint32_t)kept;
    return 0;
}
