/*
 * One node class's catalog: every discovered type with Karpenter's
 * requirements (labels as single values, DoesNotExist for the AWS labels it
 * lacks, zones and capacity types as sets), capacity and overhead from the
 * allocatable rules, and offerings for every zone EC2 has x the capacity
 * types the type supports, priced and marked available as Karpenter does.
 */
#include <string.h>

#include "api/wellknown.h"
#include "base/error.h"
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/instancetypes_internal.h"
#include "cloud/aws_ebs_limits.h"

#define AWS_LABEL "karpenter.k8s.aws/"

/* Labels always defined for AWS types: absent ones become DoesNotExist. */
static const char *const OPTIONAL_LABELS[] = {
    AWS_LABEL "instance-cpu-manufacturer",
    AWS_LABEL "instance-cpu-sustained-clock-speed-mhz",
    AWS_LABEL "instance-ebs-bandwidth",
    AWS_LABEL "instance-network-bandwidth",
    AWS_LABEL "instance-category",
    AWS_LABEL "instance-capability-flex",
    AWS_LABEL "instance-family",
    AWS_LABEL "instance-generation",
    AWS_LABEL "instance-local-nvme",
    AWS_LABEL "instance-size",
    AWS_LABEL "instance-gpu-name",
    AWS_LABEL "instance-gpu-manufacturer",
    AWS_LABEL "instance-gpu-count",
    AWS_LABEL "instance-gpu-memory",
    AWS_LABEL "instance-accelerator-name",
    AWS_LABEL "instance-accelerator-manufacturer",
    AWS_LABEL "instance-accelerator-count",
};

/* The reservations of the class for type `name`. */
static size_t type_reservations(const it_class_inputs *in, const char *name,
                                const kp_nc_capacity_reservation **out)
{
    size_t n = 0;
    for (size_t i = 0; i < in->n_crs; i++)
        if (in->crs[i].instance_type && strcmp(in->crs[i].instance_type, name) == 0 &&
            in->crs[i].id && *in->crs[i].id)
            out[n++] = &in->crs[i];
    return n;
}

/* The reservation labels: In the reservations' values, DoesNotExist without any. */
static void add_reservation_labels(kp_catalog *cat, kp_instance_type *it,
                                   const kp_nc_capacity_reservation **crs, size_t n)
{
    static const char *const keys[] = {KP_AWS_LABEL_CR_ID, KP_AWS_LABEL_CR_TYPE,
                                       KP_AWS_LABEL_CR_INTERRUPTIBLE};
    const char **v = KP_ARENA_NEW(cat->arena, const char *, n + 1);
    for (size_t k = 0; k < 3; k++) {
        uint32_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const char *val = k == 0   ? crs[i]->id
                              : k == 1 ? kp_aws_cr_type(crs[i])
                                       : (crs[i]->interruptible ? "true" : "false");
            bool dup = false;
            for (uint32_t j = 0; j < m && !dup; j++)
                dup = strcmp(v[j], val) == 0;
            if (!dup) v[m++] = val;
        }
        kp_it_add_req(cat, it, keys[k], m ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, v, m);
    }
}

/* placement-group-id (and -partition 1..N for a partition group), or DoesNotExist. */
static void add_placement_labels(kp_catalog *cat, kp_instance_type *it, const kp_aws_pg_info *pg)
{
    if (!pg->id) {
        kp_it_add_req(cat, it, AWS_LABEL "placement-group-id", KP_OP_DOES_NOT_EXIST, NULL, 0);
        kp_it_add_req(cat, it, AWS_LABEL "placement-group-partition", KP_OP_DOES_NOT_EXIST, NULL,
                      0);
        return;
    }
    kp_it_add_label(cat, it, AWS_LABEL "placement-group-id", pg->id);
    bool partition = pg->strategy && strcmp(pg->strategy, "partition") == 0;
    uint32_t n = partition && pg->partition_count > 0 ? (uint32_t)pg->partition_count : 0;
    const char **v = KP_ARENA_NEW(cat->arena, const char *, n + 1);
    for (uint32_t i = 0; i < n; i++)
        v[i] = kp_arena_printf(cat->arena, "%u", i + 1);
    kp_it_add_req(cat, it, AWS_LABEL "placement-group-partition",
                  n ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, v, n);
}

static const char *const TENANCIES[] = {"default", "dedicated"};

static void add_labels(kp_catalog *cat, kp_instance_type *it, const kp_aws_type_row *row,
                       const it_class_inputs *in, const char *region)
{
    kp_aws_label labels[KP_AWS_MAX_LABELS];
    size_t n = 0;
    (void)kp_aws_catalog_labels(labels, KP_AWS_MAX_LABELS, &n, &row->info, in->opts.ami_family);
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i].key, KP_LABEL_REGION) != 0) /* the table's is us-east-1 */
            kp_it_add_label(cat, it, labels[i].key, labels[i].value);
    kp_it_add_label(cat, it, KP_LABEL_REGION, region);
    for (size_t i = 0; i < sizeof(OPTIONAL_LABELS) / sizeof(OPTIONAL_LABELS[0]); i++)
        if (!kp_aws_label_get(labels, n, OPTIONAL_LABELS[i]))
            kp_it_add_req(cat, it, OPTIONAL_LABELS[i], KP_OP_DOES_NOT_EXIST, NULL, 0);
    if (in->windows_build)
        kp_it_add_label(cat, it, KP_LABEL_WINDOWS_BUILD, in->windows_build);
    else
        kp_it_add_req(cat, it, KP_LABEL_WINDOWS_BUILD, KP_OP_DOES_NOT_EXIST, NULL, 0);
    kp_it_add_req(cat, it, AWS_LABEL "instance-tenancy", KP_OP_IN, TENANCIES, 2);
    kp_it_add_label(cat, it, AWS_LABEL "nitro-sandbox", row->nitro_enclaves ? "true" : "false");
}

/* Index of `zone` in the class's zones, -1 when absent. */
static int class_zone(const it_class_inputs *in, const char *zone)
{
    for (uint32_t i = 0; i < in->n_zones; i++)
        if (strcmp(in->zones[i], zone) == 0) return (int)i;
    return -1;
}

/* The zones a type may launch in: where EC2 offers it and the class has subnets. */
static uint32_t usable_zones(const kp_aws_type_row *row, const it_class_inputs *in,
                             const char **zones, const char **ids)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < row->n_zones; i++) {
        int c = in->any_zone ? 0 : class_zone(in, row->zones[i]);
        if (c < 0) continue;
        ids[n] = in->any_zone ? NULL : in->zone_ids[c];
        zones[n++] = row->zones[i];
    }
    return n;
}

static void add_zone_reqs(kp_catalog *cat, kp_instance_type *it, const char **zones,
                          const char **ids, uint32_t n)
{
    kp_it_add_req(cat, it, KP_LABEL_ZONE, n ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, zones, n);
    const char **known = ids; /* compacted in place: zone IDs we know */
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ids[i]) known[k++] = ids[i];
    if (k) kp_it_add_req(cat, it, KP_LABEL_ZONE_ID, KP_OP_IN, known, k);
}

static bool price_of(const it_build_env *env, const char *type, const char *ct, const char *zone,
                     double *price)
{
    if (!env->prices) return false;
    if (strcmp(ct, "spot") == 0) return kp_aws_prices_spot(env->prices, type, zone, price);
    return kp_aws_prices_on_demand(env->prices, type, price);
}

static bool in_list(const char **list, uint32_t n, const char *s)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0) return true;
    return false;
}

/* One offering per reservation of the type, in its zone; "free" (on-demand
 * price / 1e7, so consolidation still orders them as on-demand). */
static void add_reserved(kp_catalog *cat, kp_instance_type *it, const it_build_env *env,
                         const kp_nc_capacity_reservation **crs, size_t n, const char **usable,
                         uint32_t n_usable, bool compatible)
{
    double od = 0;
    bool priced = env->prices && kp_aws_prices_on_demand(env->prices, it->name, &od);
    for (size_t i = 0; i < n; i++) {
        const kp_nc_capacity_reservation *cr = crs[i];
        const char *zone = cr->availability_zone ? cr->availability_zone : "";
        int32_t left = env->crs ? kp_aws_crs_available(env->crs, cr->id) : 0;
        bool ok = compatible && left > 0 && in_list(usable, n_usable, zone) &&
                  !kp_aws_cr_expiring(cr);
        kp_it_add_offering(cat, it, zone, "reserved", priced ? od / 10000000.0 : 0, ok);
        it->offerings[it->n_offerings - 1].reservation_id = kp_arena_strdup(cat->arena, cr->id);
        it->offerings[it->n_offerings - 1].reservation_capacity = left > 0 ? left : 0;
    }
}

/* Every zone EC2 has x the type's capacity types (Karpenter offers them all,
 * and marks those it cannot launch unavailable). */
static void add_offerings(kp_catalog *cat, kp_instance_type *it, const it_build_env *env,
                          const kp_aws_type_row *row, const char **usable, uint32_t n_usable,
                          bool compatible, bool reserved)
{
    const char *cts[3] = {NULL, NULL, NULL};
    uint32_t n_cts = 0;
    if (row->on_demand) cts[n_cts++] = "on-demand";
    if (row->spot) cts[n_cts++] = "spot";
    const char *all[3] = {cts[0], cts[1], "reserved"};
    if (reserved) all[n_cts] = "reserved";
    uint32_t n_all = n_cts + (reserved ? 1 : 0);
    kp_it_add_req(cat, it, KP_LABEL_CAPACITY_TYPE, n_all ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, all,
                  n_all);
    for (uint32_t z = 0; z < env->snap->n_zones; z++) {
        const char *zone = env->snap->zones[z];
        bool usable_zone = false;
        for (uint32_t u = 0; u < n_usable && !usable_zone; u++)
            usable_zone = strcmp(usable[u], zone) == 0;
        for (uint32_t c = 0; c < n_cts; c++) {
            double price = 0;
            bool priced = price_of(env, row->info.name, cts[c], zone, &price);
            bool ice = kp_aws_ice_unavailable(env->ice, cts[c], row->info.name, zone);
            kp_it_add_offering(cat, it, zone, cts[c], priced ? price : 0,
                               compatible && usable_zone && priced && !ice);
        }
    }
}

/* A registered node's real memory replaces the estimate (only ever lower). */
static void discovered_memory(kp_aws_allocatable *a, const it_class_inputs *in, const char *type)
{
    for (size_t i = 0; i < in->n_mem; i++) {
        if (strcmp(in->mem_types[i], type) != 0) continue;
        int64_t less = a->capacity.memory_bytes - in->mem_bytes[i];
        if (less <= 0) return;
        a->capacity.memory_bytes -= less;
        a->allocatable.memory_bytes -= less;
        return;
    }
}

static int add_type(kp_catalog *cat, const it_build_env *env, const kp_aws_type_row *row,
                    const it_class_inputs *in)
{
    enum kp_aws_ami_family family = in->opts.ami_family;
    if (family == KP_AWS_AMI_WINDOWS && row->info.arch != KP_AWS_ARCH_AMD64)
        return 0; /* no Windows AMIs for it: it can never launch */
    kp_aws_allocatable a;
    int err = kp_aws_allocatable_compute(&a, &row->info, &in->opts);
    if (err < 0) return kp_error_wrap(err, "instance type %s", row->info.name);
    discovered_memory(&a, in, row->info.name);
    /* Karpenter keeps types the class cannot launch, with nothing available. */
    bool compatible = kp_aws_it_compatible(row, in);
    kp_instance_type *it = kp_catalog_add_type(cat, row->info.name);
    add_labels(cat, it, row, in, env->region);
    const kp_nc_capacity_reservation **crs =
        KP_ARENA_NEW(cat->arena, const kp_nc_capacity_reservation *, in->n_crs + 1);
    size_t n_crs = type_reservations(in, row->info.name, crs);
    add_reservation_labels(cat, it, crs, n_crs);
    add_placement_labels(cat, it, &in->pg);
    const char **zones = KP_ARENA_NEW(cat->arena, const char *, row->n_zones + 1);
    const char **ids = KP_ARENA_NEW(cat->arena, const char *, row->n_zones + 1);
    uint32_t n = usable_zones(row, in, zones, ids);
    add_zone_reqs(cat, it, zones, ids, n);
    add_offerings(cat, it, env, row, zones, n, compatible, n_crs > 0);
    add_reserved(cat, it, env, crs, n_crs, zones, n, compatible);
    kp_aws_allocatable_to_catalog(cat, it, &a);
    it->ebs_volume_limit = kp_aws_ebs_volume_limit(&row->info);
    return 0;
}

int kp_aws_it_build_catalog(const it_build_env *env, const it_class_inputs *in,
                            const char *description, kp_catalog **out)
{
    kp_catalog *cat = kp_catalog_new(description);
    for (uint32_t i = 0; i < env->snap->n; i++) {
        int err = add_type(cat, env, &env->snap->rows[i], in);
        if (err < 0) {
            kp_catalog_free(cat);
            return err;
        }
    }
    *out = cat;
    return 0;
}
