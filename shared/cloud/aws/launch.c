/*
 * CreateFleet for one NodeClaim (see launch.h): subnets per zone, launch
 * template groups and their overrides, the fleet request, and what its
 * answer means (ICE marks, the error to return, the retries).
 */
#include "cloud/aws/launch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/launchtemplate_internal.h"
#include "cloud/aws/nodeclass_internal.h"

#define FULL_SUBNET_TTL_NS KP_AWS_ICE_TTL_NS
#define LT_MISSING         1 /* internal: a template vanished; try again */

struct kp_aws_launcher {
    char *cluster_name;
    kp_aws_lts *lts;
    kp_aws_nc_resolver *resolver;
    kp_aws_ice_cache *ice;
    kp_aws_reservations *crs;
    kp_aws_cache *full_subnets; /* subnets EC2 found without free addresses */
};

int kp_aws_launcher_new(kp_aws_launcher **out, const kp_aws_launcher_opts *o)
{
    if (!o->cluster_name || !*o->cluster_name || !o->lts || !o->resolver || !o->ice)
        return kp_error_set(KP_EINVALID, "launcher: cluster name, launch templates, resolver "
                                         "and ICE cache are required");
    kp_aws_launcher *l = kp_xcalloc(1, sizeof(*l));
    l->cluster_name = kp_xstrdup(o->cluster_name);
    l->lts = o->lts;
    l->resolver = o->resolver;
    l->ice = o->ice;
    l->crs = o->crs;
    l->full_subnets = kp_aws_cache_new(o->clock);
    *out = l;
    return 0;
}

kp_aws_launcher *kp_aws_launcher_free(kp_aws_launcher *l)
{
    if (!l) return NULL;
    kp_aws_cache_free(l->full_subnets);
    free(l->cluster_name);
    free(l);
    return NULL;
}

/* ------------------------------------------------------------------- tags */

static int tag_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_ec2_tag *)a)->key, ((const kp_ec2_tag *)b)->key);
}

static void put_tag(kp_ec2_tag *t, size_t *n, const char *key, const char *value)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(t[i].key, key) == 0) {
            t[i].value = value;
            return;
        }
    t[(*n)++] = (kp_ec2_tag){key, value};
}

void kp_aws_launch_tags(const char *cluster_name, const kp_ec2nodeclass *nc,
                        const kp_nodeclaim *claim, bool for_template, kp_arena *a,
                        kp_ec2_tag **tags, size_t *n_tags)
{
    kp_ec2_tag *t = KP_ARENA_NEW(a, kp_ec2_tag, nc->tags.count + 8);
    size_t n = 0;
    for (size_t i = 0; i < nc->tags.count; i++)
        put_tag(t, &n, nc->tags.items[i].key, nc->tags.items[i].value);
    put_tag(t, &n, kp_arena_printf(a, "kubernetes.io/cluster/%s", cluster_name), "owned");
    put_tag(t, &n, KP_AWS_TAG_CLUSTER, cluster_name);
    put_tag(t, &n, KP_AWS_TAG_NODECLASS, nc->meta.name);
    const char *pool = kp_labels_get(&claim->meta.labels, KP_LABEL_NODEPOOL);
    if (pool) put_tag(t, &n, KP_AWS_TAG_NODEPOOL, pool);
    if (!for_template) {
        put_tag(t, &n, KP_AWS_TAG_NODECLAIM, claim->meta.name);
        put_tag(t, &n, KP_AWS_ANNOTATION_NODECLASS_HASH,
                kp_arena_printf(a, "%" PRIu64, kp_aws_nodeclass_hash(nc)));
        put_tag(t, &n, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION, KP_AWS_NODECLASS_HASH_VERSION);
    }
    qsort(t, n, sizeof(*t), tag_cmp);
    *tags = t;
    *n_tags = n;
}

/* ---------------------------------------------------------------- subnets */

typedef struct zone_subnet {
    const char *zone, *subnet, *zone_id;
} zone_subnet;

static bool in_status(const kp_ec2nodeclass *nc, const char *id)
{
    for (size_t i = 0; i < nc->n_status_subnets; i++)
        if (strcmp(nc->status_subnets[i].id, id) == 0) return true;
    return nc->n_status_subnets == 0;
}

static bool full(kp_aws_launcher *l, const char *id)
{
    cJSON *hit = kp_aws_cache_get(l->full_subnets, id);
    cJSON_Delete(hit);
    return hit != NULL;
}

/* Per zone, the class's subnet with the most free IPs (the list comes sorted
 * that way), one that just ran out of addresses only when it is the last. */
static int zonal_subnets(kp_aws_launcher *l, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                         kp_arena *a, zone_subnet **out, size_t *n_out)
{
    cJSON *list = NULL;
    int err = kp_ncr_subnets(l->resolver, ec2, nc, &list);
    if (err < 0) return kp_error_wrap(err, "getting subnets of ec2nodeclass %s", nc->meta.name);
    zone_subnet *z = KP_ARENA_NEW(a, zone_subnet, (size_t)cJSON_GetArraySize(list) + 1);
    size_t n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, list)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(s, "id"));
        const char *zone = cJSON_GetStringValue(cJSON_GetObjectItem(s, "zone"));
        if (!id || !zone || !*zone || !in_status(nc, id)) continue;
        size_t k = 0;
        while (k < n && strcmp(z[k].zone, zone) != 0)
            k++;
        if (k < n && !(full(l, z[k].subnet) && !full(l, id))) continue;
        const char *zid = cJSON_GetStringValue(cJSON_GetObjectItem(s, "zoneID"));
        z[k] = (zone_subnet){kp_arena_strdup(a, zone), kp_arena_strdup(a, id),
                             zid ? kp_arena_strdup(a, zid) : NULL};
        if (k == n) n++;
    }
    cJSON_Delete(list);
    *out = z;
    *n_out = n;
    return 0;
}

static const zone_subnet *subnet_in(const zone_subnet *z, size_t n, const char *zone)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(z[i].zone, zone) == 0) return &z[i];
    return NULL;
}

/* ------------------------------------------------------------------ groups */

/* Types sharing one launch template: same AMI, pod capacity, EFA interfaces
 * and (reserved launches) reservation. */
typedef struct group {
    const char *ami;
    int64_t pods;
    int32_t efa;
    const char *reservation; /* NULL unless reserved */
    kp_aws_lt lt;
    kp_ec2_fleet_override *ov;
    size_t n_ov;
} group;

typedef struct attempt {
    kp_aws_launcher *l;
    kp_aws_client *ec2;
    const kp_ec2nodeclass *nc;
    const kp_nodeclaim *claim;
    kp_arena *a;
    kp_aws_launch_choice choice;
    zone_subnet *zones;
    size_t n_zones;
    group *groups;
    size_t n_groups, cap_groups;
    kp_aws_pg_info pg; /* id NULL: none */
    int32_t partition;
} attempt;

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static group *group_for(attempt *t, const group *key)
{
    for (size_t i = 0; i < t->n_groups; i++) {
        group *g = &t->groups[i];
        if (same(g->ami, key->ami) && g->pods == key->pods && g->efa == key->efa &&
            same(g->reservation, key->reservation))
            return g;
    }
    if (t->n_groups == t->cap_groups) {
        size_t cap = t->cap_groups ? t->cap_groups * 2 : 8;
        t->groups = kp_arena_grow(t->a, t->groups, t->n_groups, cap, sizeof(*t->groups));
        t->cap_groups = cap;
    }
    group *g = &t->groups[t->n_groups++];
    *g = *key;
    g->ov = NULL, g->n_ov = 0;
    return g;
}

/* EFA interfaces a template attaches: the type's count when the claim asks
 * for EFA and the class lists no interfaces of its own. */
static int32_t efa_for(const attempt *t, const kp_instance_type *it)
{
    if (t->nc->n_network_interfaces ||
        !kp_resource_list_get(&t->claim->spec.resource_requests, KP_RESOURCE_EFA))
        return 0;
    return (int32_t)(kp_it_capacity(it, KP_RESOURCE_EFA) / 1000);
}

static void add_overrides(attempt *t, const kp_nc_ami *ami, uint32_t i)
{
    const kp_instance_type *it = t->choice.types[i];
    group key = {ami->id, kp_it_capacity(it, "pods") / 1000, efa_for(t, it), NULL, {0}, NULL, 0};
    for (uint32_t j = 0; j < it->n_offerings; j++) {
        const kp_offering *o = &it->offerings[j];
        const zone_subnet *z =
            t->choice.usable[i][j] ? subnet_in(t->zones, t->n_zones, o->zone) : NULL;
        if (!z) continue;
        key.reservation = strcmp(o->capacity_type, "reserved") == 0 ? o->reservation_id : NULL;
        group *g = group_for(t, &key);
        g->ov = kp_arena_grow(t->a, g->ov, g->n_ov, g->n_ov + 1, sizeof(*g->ov));
        g->ov[g->n_ov++] =
            (kp_ec2_fleet_override){it->name, z->subnet, z->zone, g->ami, o->price, true};
    }
}

static int build_groups(attempt *t)
{
    t->groups = NULL, t->n_groups = t->cap_groups = 0;
    bool any_ami = false;
    for (uint32_t i = 0; i < t->choice.n_types; i++) {
        const kp_nc_ami *ami = kp_aws_nodeclass_ami_for(t->nc, t->choice.types[i]);
        if (!ami) continue;
        any_ami = true;
        add_overrides(t, ami, i);
    }
    if (!any_ami)
        return kp_error_set(KP_ERROR,
                            "no instance types satisfy requirements of the amis of "
                            "ec2nodeclass %s",
                            t->nc->meta.name);
    if (!t->n_groups)
        return kp_error_set(KP_ERROR, "no capacity offerings are currently available given the "
                                      "constraints (no subnet in the offered zones)");
    return 0;
}

static int ensure_templates(attempt *t)
{
    kp_ec2_tag *tags = NULL;
    size_t n_tags = 0;
    kp_aws_launch_tags(t->l->cluster_name, t->nc, t->claim, true, t->a, &tags, &n_tags);
    for (size_t i = 0; i < t->n_groups; i++) {
        group *g = &t->groups[i];
        kp_aws_lt_params p = {t->nc, t->claim, g->ami, t->choice.capacity_type, (int32_t)g->pods,
                              tags, n_tags, g->reservation, t->choice.reservation_type,
                              t->choice.reservation_interruptible, g->efa, t->pg.id,
                              t->partition};
        int err = kp_aws_lt_ensure(t->l->lts, t->ec2, t->a, &p, &g->lt);
        if (err < 0) return kp_error_wrap(err, "getting launch templates");
    }
    return 0;
}

/* The class's placement group, and for a partition group the lowest
 * partition the claim allows (0: any, EC2 picks). */
static int placement(attempt *t)
{
    bool found = false;
    t->pg = (kp_aws_pg_info){0};
    t->partition = 0;
    if (!t->nc->has_placement_group_selector) return 0;
    int err = kp_aws_nc_placement_group(t->l->resolver, t->ec2, t->nc, t->a, &t->pg, &found);
    if (!found)
        return err < 0 ? err
                       : kp_error_set(KP_ENOTREADY, "ec2nodeclass %s: placement group not found",
                                      t->nc->meta.name);
    kp_error_clear(); /* the last group found stands in while EC2 is unwell */
    const kp_nodeclaim_spec *spec = &t->claim->spec;
    for (size_t i = 0; t->pg.strategy && !strcmp(t->pg.strategy, "partition") &&
                       i < spec->n_requirements;
         i++) {
        const kp_selector_req *r = &spec->requirements[i];
        if (strcmp(r->key, KP_AWS_LABEL_PG_PARTITION) || r->op != KP_OP_IN) continue;
        for (size_t v = 0; v < r->n_values; v++) {
            long n = strtol(r->values[v], NULL, 10);
            if (n > 0 && n <= INT32_MAX && (t->partition == 0 || n < t->partition))
                t->partition = (int32_t)n;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ fleet */

static bool spot(const char *ct)
{
    return strcmp(ct, "spot") == 0;
}

static bool reserved(const char *ct)
{
    return ct && strcmp(ct, "reserved") == 0;
}

/* Karpenter's target capacity types and allocation strategies: reserved
 * capacity goes as on-demand (into the targeted reservation), capacity
 * blocks as capacity-block without on-demand options, interruptible ODCRs as
 * reserved-capacity of that reservation type. */
static void set_capacity_type(const attempt *t, kp_ec2_create_fleet_input *in)
{
    const char *ct = t->choice.capacity_type;
    in->default_target_capacity_type = ct;
    if (spot(ct)) {
        in->spot_allocation_strategy = "price-capacity-optimized";
        return;
    }
    bool block = reserved(ct) && t->choice.reservation_type &&
                 strcmp(t->choice.reservation_type, "capacity-block") == 0;
    bool interruptible = reserved(ct) && t->choice.reservation_interruptible;
    if (reserved(ct))
        in->default_target_capacity_type = block           ? "capacity-block"
                                           : interruptible ? "reserved-capacity"
                                                           : "on-demand";
    if (interruptible) in->reserved_capacity_type = "interruptible-capacity-reservation";
    else if (!block) in->on_demand_allocation_strategy = "lowest-price";
}

static int create_fleet(attempt *t, kp_ec2_fleet_result *res)
{
    kp_ec2_fleet_template_config *cfg =
        KP_ARENA_NEW(t->a, kp_ec2_fleet_template_config, t->n_groups + 1);
    for (size_t i = 0; i < t->n_groups; i++)
        cfg[i] = (kp_ec2_fleet_template_config){NULL, t->groups[i].lt.name, "$Latest",
                                                t->groups[i].ov, t->groups[i].n_ov};
    kp_ec2_tag *tags = NULL;
    size_t n_tags = 0;
    kp_aws_launch_tags(t->l->cluster_name, t->nc, t->claim, false, t->a, &tags, &n_tags);
    kp_ec2_tag_spec *specs = KP_ARENA_NEW(t->a, kp_ec2_tag_spec, 3);
    specs[0] = (kp_ec2_tag_spec){"instance", tags, n_tags};
    specs[1] = (kp_ec2_tag_spec){"volume", tags, n_tags};
    specs[2] = (kp_ec2_tag_spec){"fleet", tags, n_tags};
    const char *relaxed =
        kp_labels_get(&t->claim->meta.annotations, "karpenter.sh/nodeclaim-min-values-relaxed");
    kp_ec2_create_fleet_input in = {0};
    in.configs = cfg;
    in.n_configs = t->n_groups;
    in.total_target_capacity = 1;
    set_capacity_type(t, &in);
    in.tag_specs = specs;
    in.n_tag_specs = 3;
    if (t->nc->context && *t->nc->context && !(relaxed && strcmp(relaxed, "true") == 0))
        in.context = t->nc->context;
    return kp_ec2_create_fleet(t->ec2, t->a, &in, res);
}

static bool template_missing(const kp_aws_client *ec2)
{
    const char *code = kp_aws_client_error(ec2)->code;
    return strcmp(code, "InvalidLaunchTemplateName.NotFoundException") == 0 ||
           strcmp(code, "InvalidLaunchTemplateId.NotFound") == 0;
}

/* The reservation a reserved override of (type, zone) targeted. */
static const char *reservation_of(const attempt *t, const char *type, const char *zone)
{
    for (size_t i = 0; type && zone && i < t->n_groups; i++)
        for (size_t j = 0; j < t->groups[i].n_ov; j++) {
            const kp_ec2_fleet_override *o = &t->groups[i].ov[j];
            if (!strcmp(o->instance_type, type) && !strcmp(o->availability_zone, zone))
                return t->groups[i].reservation;
        }
    return NULL;
}

/* Remember what each fleet error says about capacity: an exhausted
 * reservation has no room left (until EC2 next says otherwise); other
 * offerings go to the ICE cache. */
static void mark(attempt *t, const kp_ec2_fleet_result *res)
{
    const char *ct = t->choice.capacity_type;
    for (size_t i = 0; i < res->n_errors; i++) {
        const kp_ec2_fleet_error *e = &res->errors[i];
        if (strcmp(e->code, "InsufficientFreeAddressesInSubnet") == 0 && e->subnet_id) {
            cJSON *mark_value = cJSON_CreateTrue();
            kp_aws_cache_put(t->l->full_subnets, e->subnet_id, mark_value, FULL_SUBNET_TTL_NS);
            cJSON_Delete(mark_value);
        }
        if (kp_aws_code_is_insufficient_capacity(e->code) && reserved(ct)) {
            const char *id = reservation_of(t, e->instance_type, e->availability_zone);
            if (id && t->l->crs) kp_aws_crs_mark_unavailable(t->l->crs, id);
        } else if (kp_aws_code_is_insufficient_capacity(e->code)) {
            kp_aws_ice_mark(t->l->ice, ct, e->instance_type, e->availability_zone, e->code);
        } else if (strcmp(e->code, "AuthFailure.ServiceLinkedRoleCreationNotPermitted") == 0) {
            kp_aws_ice_mark_capacity_type(t->l->ice, "spot", e->code);
        }
    }
}

/* Nothing launched: the error, from the fleet's errors. */
static int fleet_failure(const kp_ec2_fleet_result *res, kp_arena *a)
{
    bool all_ice = true;
    const char *text = "";
    for (size_t i = 0; i < res->n_errors; i++) {
        const kp_ec2_fleet_error *e = &res->errors[i];
        const char *one = kp_arena_printf(a, "%s: %s", e->code, e->message ? e->message : "");
        if (!strstr(text, one)) text = kp_arena_printf(a, "%s%s%s", text, *text ? "; " : "", one);
        all_ice =
            all_ice && (kp_aws_code_is_insufficient_capacity(e->code) ||
                        strcmp(e->code, "AuthFailure.ServiceLinkedRoleCreationNotPermitted") == 0);
    }
    return kp_error_set(all_ice ? KP_EINSUFFICIENT_CAPACITY : KP_ERROR,
                        "creating fleet: nothing launched%s%s", *text ? ": " : "", text);
}

static const group *group_of(const attempt *t, const char *type)
{
    for (size_t i = 0; i < t->n_groups; i++)
        for (size_t j = 0; j < t->groups[i].n_ov; j++)
            if (strcmp(t->groups[i].ov[j].instance_type, type) == 0) return &t->groups[i];
    return NULL;
}

static int launched(const attempt *t, const kp_ec2_fleet_result *res, kp_aws_launched *out)
{
    const kp_ec2_fleet_instance *fi = &res->instances[0];
    const group *g = fi->instance_type ? group_of(t, fi->instance_type) : NULL;
    const kp_instance_type *type = NULL;
    for (uint32_t i = 0; g && i < t->choice.n_types && !type; i++)
        if (strcmp(t->choice.types[i]->name, fi->instance_type) == 0) type = t->choice.types[i];
    if (!type)
        return kp_error_set(KP_ERROR, "creating fleet: launched %s of a type not asked for (%s)",
                            fi->instance_ids[0], fi->instance_type ? fi->instance_type : "none");
    *out = (kp_aws_launched){.instance_id = fi->instance_ids[0],
                             .type = type,
                             .zone = fi->availability_zone,
                             .subnet_id = fi->subnet_id,
                             .capacity_type = t->choice.capacity_type,
                             .image_id = g->ami,
                             .fleet_id = res->fleet_id};
    out->efa_count = g->efa;
    out->placement_group_id = t->pg.id;
    out->placement_partition = t->partition;
    if (reserved(t->choice.capacity_type)) {
        const char *zone = fi->availability_zone;
        for (size_t j = 0; !zone && j < g->n_ov; j++) /* an answer without placement */
            if (!strcmp(g->ov[j].instance_type, fi->instance_type)) zone = g->ov[j].availability_zone;
        const char *id = reservation_of(t, fi->instance_type, zone);
        /* the catalog launched from is the caller's copy, freed after the launch */
        out->reservation_id = id ? kp_arena_strdup(t->a, id) : NULL;
        out->reservation_type = t->choice.reservation_type;
        out->reservation_interruptible = t->choice.reservation_interruptible;
        if (out->reservation_id && t->l->crs) kp_aws_crs_mark_launched(t->l->crs, out->reservation_id);
    }
    return 0;
}

/* Tags of `want` the instance lacks. */
static size_t missing_tags(const kp_ec2_instance *in, const kp_ec2_tag *want, size_t n,
                           kp_ec2_tag *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *have = kp_ec2_tag_get(in->tags, in->n_tags, want[i].key);
        if (!have || strcmp(have, want[i].value) != 0) out[k++] = want[i];
    }
    return k;
}

/*
 * EC2 names the override an instance came from and tags it as the fleet
 * asked. An answer without placement (an emulator's) is completed from the
 * instance's description, and tags it did not get are written, so the
 * instance can be found and judged like any other.
 */
static int complete(attempt *t, kp_aws_launched *out)
{
    kp_ec2_instance_list l = {0};
    int err = kp_ec2_describe_instances(t->ec2, t->a, &out->instance_id, 1, NULL, 0, &l);
    if (err == 0 && l.n == 0)
        err = kp_error_set(KP_ERETRY, "launched %s, which EC2 does not describe yet",
                           out->instance_id);
    if (err < 0) return kp_error_wrap(err, "describing launched instance %s", out->instance_id);
    const kp_ec2_instance *in = &l.items[0];
    out->zone = in->availability_zone;
    out->subnet_id = in->subnet_id;
    kp_ec2_tag *want = NULL, *lack = NULL;
    size_t n = 0;
    kp_aws_launch_tags(t->l->cluster_name, t->nc, t->claim, false, t->a, &want, &n);
    lack = KP_ARENA_NEW(t->a, kp_ec2_tag, n + 1);
    size_t k = missing_tags(in, want, n, lack);
    err = k ? kp_ec2_create_tags(t->ec2, &out->instance_id, 1, lack, k) : 0;
    return err < 0 ? kp_error_wrap(err, "tagging launched instance %s", out->instance_id) : 0;
}

static int attempt_once(attempt *t, const kp_catalog *cat, const char *ct, kp_aws_launched *out)
{
    kp_aws_launch_reservations crs = {t->nc, t->l->crs};
    int err = kp_aws_launch_select(cat, t->claim, t->l->ice, &crs, ct, t->a, &t->choice);
    if (err == 0) err = placement(t);
    if (err == 0) err = zonal_subnets(t->l, t->ec2, t->nc, t->a, &t->zones, &t->n_zones);
    if (err == 0) err = build_groups(t);
    if (err == 0) err = ensure_templates(t);
    if (err < 0) return err;
    kp_ec2_fleet_result res = {0};
    err = create_fleet(t, &res);
    if (err < 0 && template_missing(t->ec2)) {
        for (size_t i = 0; i < t->n_groups; i++)
            kp_aws_lt_invalidate(t->l->lts, t->groups[i].lt.name);
        kp_error_wrap(err, "launch templates not found when creating fleet request");
        return LT_MISSING;
    }
    if (err < 0) return kp_error_wrap(err, "creating fleet request");
    mark(t, &res);
    if (res.n_instances == 0 || res.instances[0].n_instance_ids == 0)
        return fleet_failure(&res, t->a);
    err = launched(t, &res, out);
    if (err == 0 && (!out->zone || !*out->zone)) err = complete(t, out);
    return err;
}

/* One launch, once more when a launch template had vanished. */
static int attempt_twice(attempt *base, const kp_catalog *cat, const char *ct, attempt *used,
                         kp_aws_launched *out)
{
    int err = 0;
    for (int i = 0; i < 2; i++) {
        *used = *base;
        err = attempt_once(used, cat, ct, out);
        if (err != LT_MISSING) return err;
    }
    return KP_ERROR; /* the message says which templates */
}

int kp_aws_launch(kp_aws_launcher *l, const kp_aws_nc_clients *clients, const kp_ec2nodeclass *nc,
                  const kp_nodeclaim *claim, const kp_catalog *catalog, kp_arena *arena,
                  kp_aws_launched *out)
{
    attempt base = {.l = l, .ec2 = clients->ec2, .nc = nc, .claim = claim, .a = arena}, used;
    int err = attempt_twice(&base, catalog, NULL, &used, out);
    if (err == KP_EINSUFFICIENT_CAPACITY && reserved(used.choice.capacity_type)) {
        /* The reservation had no room after all; it now counts none, so the
         * next choice is another reservation, spot or on-demand — if the
         * claim allows any. */
        char *first = kp_arena_strdup(arena, kp_error_last());
        err = attempt_twice(&base, catalog, NULL, &used, out);
        if (err == KP_EINSUFFICIENT_CAPACITY && !used.choice.capacity_type)
            return kp_error_set(err, "%s", first);
    }
    bool spot_failed = err == KP_EINSUFFICIENT_CAPACITY && used.choice.capacity_type &&
                       spot(used.choice.capacity_type);
    if (!spot_failed) return err;
    /* Spot came back empty; on-demand may still have room. */
    char *first = kp_arena_strdup(arena, kp_error_last());
    err = attempt_twice(&base, catalog, "on-demand", &used, out);
    if (err == KP_EINSUFFICIENT_CAPACITY && !used.choice.capacity_type)
        return kp_error_set(err, "%s", first); /* on-demand was never possible */
    return err;
}
