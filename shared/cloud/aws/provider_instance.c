/*
 * What the controllers see of an instance: labels, capacity and allocatable
 * from the class's catalog, the rest from EC2's description (see provider.h).
 */
#include "cloud/aws/provider_state.h"

#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/wellknown.h"

#define LABEL_TENANCY "karpenter.k8s.aws/instance-tenancy"

/* Labels that depend on the instance (its reservation, its placement), never the type's own. */
static bool instance_label(const char *key)
{
    return strcmp(key, KP_AWS_LABEL_CR_ID) == 0 || strcmp(key, KP_AWS_LABEL_CR_TYPE) == 0 ||
           strcmp(key, KP_AWS_LABEL_CR_INTERRUPTIBLE) == 0 || strcmp(key, KP_AWS_LABEL_PG_ID) == 0 ||
           strcmp(key, KP_AWS_LABEL_PG_PARTITION) == 0;
}

static bool counts_bytes(const char *resource)
{
    return strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
           strncmp(resource, "hugepages-", 10) == 0;
}

static void add_resource(kp_resource_list *l, kp_arena *a, const char *name, int64_t milli)
{
    if (milli <= 0) return;
    enum kp_quantity_format f = counts_bytes(name) ? KP_QUANTITY_BINARY_SI : KP_QUANTITY_DECIMAL_SI;
    l->items[l->count++] =
        (kp_resource){kp_arena_strdup(a, name), kp_quantity_from_milli(milli, f)};
}

static int resource_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_resource *)a)->name, ((const kp_resource *)b)->name);
}

void kp_awsp_type_facts_from(const kp_instance_type *it, const kp_ec2nodeclass *nc, kp_arena *a,
                             kp_awsp_type_facts *out)
{
    kp_awsp_type_facts f = {0};
    f.labels = KP_ARENA_NEW(a, kp_label, it->n_reqs + 1);
    for (uint32_t i = 0; i < it->n_reqs; i++) {
        const kp_it_requirement *r = &it->reqs[i];
        if (r->op != KP_OP_IN || r->n_values != 1 || instance_label(r->key)) continue;
        f.labels[f.n_labels++] =
            (kp_label){kp_arena_strdup(a, r->key), kp_arena_strdup(a, r->values[0])};
    }
    f.capacity.items = KP_ARENA_NEW(a, kp_resource, it->n_capacity + 1);
    f.allocatable.items = KP_ARENA_NEW(a, kp_resource, it->n_capacity + 1);
    for (uint32_t i = 0; i < it->n_capacity; i++) {
        const kp_it_resource *r = &it->capacity[i];
        add_resource(&f.capacity, a, r->name, r->milli);
        add_resource(&f.allocatable, a, r->name, r->milli - kp_it_overhead(it, r->name));
    }
    qsort(f.capacity.items, f.capacity.count, sizeof(kp_resource), resource_cmp);
    qsort(f.allocatable.items, f.allocatable.count, sizeof(kp_resource), resource_cmp);
    const kp_nc_ami *ami = nc ? kp_aws_nodeclass_ami_for(nc, it) : NULL;
    f.ami = ami ? kp_arena_strdup(a, ami->id) : NULL;
    *out = f;
}

int kp_awsp_catalog(kp_awsp *p, const kp_ec2nodeclass *nc, const kp_catalog **out)
{
    if (!nc || !nc->has_placement_group_selector)
        return kp_aws_instancetypes_catalog(p->it, nc, out);
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    kp_arena *a = kp_arena_new();
    kp_aws_pg_info pg;
    kp_awsp_placement_group(p, c->c.ec2, nc, a, &pg);
    kp_awsp_clients_give(p, c);
    err = kp_aws_instancetypes_catalog_pg(p->it, nc, pg.id ? &pg : NULL, out);
    kp_arena_free(a);
    return err;
}

bool kp_awsp_type_facts_of(kp_awsp *p, const kp_ec2nodeclass *nc, const char *type, kp_arena *arena,
                           kp_awsp_type_facts *out)
{
    pthread_mutex_lock(&p->catalog_lock);
    const kp_catalog *cat = NULL;
    const kp_instance_type *it = NULL;
    if (type && kp_awsp_catalog(p, nc, &cat) == 0) it = kp_catalog_find(cat, type);
    if (it) kp_awsp_type_facts_from(it, nc, arena, out);
    pthread_mutex_unlock(&p->catalog_lock);
    return it != NULL;
}

/* ------------------------------------------------------------- instances */

static int label_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_label *)a)->key, ((const kp_label *)b)->key);
}

static void put(kp_label *l, size_t *n, const char *key, const char *value)
{
    if (!value) return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(l[i].key, key) == 0) {
            l[i].value = value;
            return;
        }
    l[(*n)++] = (kp_label){key, value};
}

static bool lifecycle_is(const kp_ec2_instance *in, const char *what)
{
    return in->lifecycle && strcmp(in->lifecycle, what) == 0;
}

/* Reserved only when launched into its reservation on purpose (targeted):
 * an instance that merely landed in an open ODCR is on-demand, as Karpenter
 * counts it, and one whose reservation ended is on-demand again. */
static const char *capacity_type(const kp_ec2_instance *in)
{
    if (lifecycle_is(in, "spot")) return "spot";
    if (in->capacity_reservation_id && *in->capacity_reservation_id &&
        in->capacity_reservation_preference &&
        strcmp(in->capacity_reservation_preference, "capacity-reservations-only") == 0)
        return "reserved";
    return "on-demand";
}

static void placement_labels(kp_arena *a, const kp_ec2_instance *in, kp_label *l, size_t *n)
{
    if (!in->placement_group_id || !*in->placement_group_id) return;
    put(l, n, KP_AWS_LABEL_PG_ID, in->placement_group_id);
    if (in->partition_number > 0)
        put(l, n, KP_AWS_LABEL_PG_PARTITION, kp_arena_printf(a, "%d", (int)in->partition_number));
}

static const char *zone_id(const kp_ec2nodeclass *nc, const char *zone)
{
    for (size_t i = 0; nc && zone && i < nc->n_status_subnets; i++)
        if (strcmp(nc->status_subnets[i].zone, zone) == 0 && nc->status_subnets[i].zone_id &&
            *nc->status_subnets[i].zone_id)
            return nc->status_subnets[i].zone_id;
    return NULL;
}

static kp_labels labels(kp_arena *a, const kp_ec2_instance *in, const kp_ec2nodeclass *nc,
                        const kp_awsp_type_facts *facts, const char *ct)
{
    size_t have = facts ? facts->n_labels : 0;
    kp_label *l = KP_ARENA_NEW(a, kp_label, have + 12);
    size_t n = 0;
    for (size_t i = 0; i < have; i++)
        put(l, &n, facts->labels[i].key, facts->labels[i].value);
    put(l, &n, KP_LABEL_INSTANCE_TYPE, in->instance_type);
    put(l, &n, KP_LABEL_ZONE, in->availability_zone);
    put(l, &n, KP_LABEL_ZONE_ID, zone_id(nc, in->availability_zone));
    put(l, &n, KP_LABEL_CAPACITY_TYPE, ct);
    put(l, &n, LABEL_TENANCY, "default");
    put(l, &n, KP_LABEL_NODEPOOL, kp_ec2_tag_get(in->tags, in->n_tags, "karpenter.sh/nodepool"));
    if (strcmp(ct, "reserved") == 0) {
        put(l, &n, KP_AWS_LABEL_CR_ID, in->capacity_reservation_id);
        put(l, &n, KP_AWS_LABEL_CR_TYPE,
            lifecycle_is(in, "capacity-block") ? "capacity-block" : "default");
        put(l, &n, KP_AWS_LABEL_CR_INTERRUPTIBLE,
            lifecycle_is(in, "interruptible-capacity-reservation") ? "true" : "false");
    }
    placement_labels(a, in, l, &n);
    qsort(l, n, sizeof(*l), label_cmp);
    return (kp_labels){l, n};
}

void kp_awsp_instance(kp_arena *a, const kp_ec2_instance *in, const kp_ec2nodeclass *nc,
                      const kp_awsp_type_facts *facts, kp_cloud_instance *out)
{
    kp_cloud_instance ci;
    memset(&ci, 0, sizeof(ci));
    ci.provider_id = kp_aws_provider_id(a, in->availability_zone, in->id);
    ci.nodeclaim = kp_ec2_tag_get(in->tags, in->n_tags, "karpenter.sh/nodeclaim");
    ci.nodepool = kp_ec2_tag_get(in->tags, in->n_tags, "karpenter.sh/nodepool");
    ci.instance_type = in->instance_type;
    ci.zone = in->availability_zone;
    ci.capacity_type = capacity_type(in);
    ci.image_id = in->image_id;
    ci.labels = labels(a, in, nc, facts, ci.capacity_type);
    if (facts) {
        ci.capacity = facts->capacity;
        ci.allocatable = facts->allocatable;
    }
    ci.created_ns = in->launch_time_ns;
    ci.terminating = in->state && (strcmp(in->state, "shutting-down") == 0 ||
                                   strcmp(in->state, "terminated") == 0);
    *out = ci;
}
