/* The AWS provider's cloud-provider table (see provider.h). */
#include "cloud/aws/provider_state.h"

#include <stdlib.h>
#include <string.h>

#include "api/wellknown.h"
#include "base/error.h"

static const char *const live_states[] = {"pending", "running", "stopping", "stopped",
                                          "shutting-down"};

static const char *aws_name(const kp_cloud_provider *cp)
{
    (void)cp;
    return "aws";
}

static const char *class_of(const kp_nodeclaim *claim)
{
    return claim->spec.has_node_class_ref ? claim->spec.node_class_ref.name : NULL;
}

/* ----------------------------------------------------------------- create */

/* Tag keys Karpenter reserves for itself (the CRD refuses them too). */
static int check_tags(const kp_ec2nodeclass *nc)
{
    static const char *const exact[] = {KP_AWS_TAG_CLUSTER, KP_AWS_TAG_NODEPOOL,
                                        KP_AWS_TAG_NODECLAIM, KP_AWS_TAG_NODECLASS};
    for (size_t i = 0; i < nc->tags.count; i++) {
        const char *k = nc->tags.items[i].key;
        bool bad = strncmp(k, "kubernetes.io/cluster", 21) == 0;
        for (size_t j = 0; j < sizeof(exact) / sizeof(*exact) && !bad; j++)
            bad = strcmp(k, exact[j]) == 0;
        if (bad)
            return kp_error_set(KP_ENOTREADY, "ec2nodeclass %s: tag \"%s\" is reserved",
                                nc->meta.name, k);
    }
    return 0;
}

/* The class's catalog narrowed for the claim, copied under the catalog lock. */
static int candidates(kp_awsp *p, const kp_ec2nodeclass *nc, const kp_nodeclaim *claim,
                      kp_catalog **out)
{
    pthread_mutex_lock(&p->catalog_lock);
    const kp_catalog *cat = NULL;
    kp_aws_launch_reservations crs = {nc, p->crs};
    int err = kp_awsp_catalog(p, nc, &cat);
    if (err == 0) err = kp_aws_launch_candidates(cat, claim, p->ice, &crs, out);
    pthread_mutex_unlock(&p->catalog_lock);
    return err;
}

static int class_for_launch(kp_awsp *p, const kp_nodeclaim *claim, kp_arena *a,
                            const kp_ec2nodeclass **nc)
{
    int err = kp_awsp_lookup(p, class_of(claim), a, nc);
    /* No class, no capacity: the claim goes and provisioning starts over. */
    if (err == KP_ENOTFOUND) return kp_error_wrap(KP_EINSUFFICIENT_CAPACITY, "resolving nodeclass");
    if (err == 0) err = kp_aws_nodeclass_check_ready(*nc);
    if (err == 0) err = check_tags(*nc);
    return err;
}

static const char *launched_lifecycle(const kp_aws_launched *l)
{
    if (strcmp(l->capacity_type, "spot") == 0) return "spot";
    if (!l->reservation_id) return NULL;
    if (l->reservation_type && strcmp(l->reservation_type, "capacity-block") == 0)
        return "capacity-block";
    return l->reservation_interruptible ? "interruptible-capacity-reservation" : NULL;
}

/* EFA is only advertised when the launch attached EFA interfaces (Karpenter). */
static void drop_efa(kp_awsp_type_facts *f)
{
    kp_resource_list *lists[] = {&f->capacity, &f->allocatable};
    for (size_t k = 0; k < 2; k++) {
        size_t w = 0;
        for (size_t i = 0; i < lists[k]->count; i++)
            if (strcmp(lists[k]->items[i].name, KP_RESOURCE_EFA) != 0)
                lists[k]->items[w++] = lists[k]->items[i];
        lists[k]->count = w;
    }
}

static void as_instance(kp_awsp *p, const kp_aws_launched *l, const kp_ec2nodeclass *nc,
                        const kp_nodeclaim *claim, kp_arena *a, kp_cloud_instance *out)
{
    kp_ec2_tag *tags = KP_ARENA_NEW(a, kp_ec2_tag, 2);
    size_t n = 0;
    const char *pool = kp_labels_get(&claim->meta.labels, KP_LABEL_NODEPOOL);
    if (pool) tags[n++] = (kp_ec2_tag){KP_AWS_TAG_NODEPOOL, pool};
    tags[n++] = (kp_ec2_tag){KP_AWS_TAG_NODECLAIM, claim->meta.name};
    kp_ec2_instance in = {0};
    in.id = l->instance_id;
    in.instance_type = kp_arena_strdup(a, l->type->name);
    in.state = "pending";
    in.availability_zone = l->zone;
    in.subnet_id = l->subnet_id;
    in.image_id = l->image_id;
    in.lifecycle = launched_lifecycle(l);
    if (l->reservation_id) {
        in.capacity_reservation_id = l->reservation_id;
        in.capacity_reservation_preference = "capacity-reservations-only";
    }
    in.placement_group_id = l->placement_group_id;
    in.partition_number = l->placement_partition;
    in.launch_time_ns = p->clock->now(p->clock);
    in.tags = tags;
    in.n_tags = n;
    kp_awsp_type_facts facts;
    kp_awsp_type_facts_from(l->type, nc, a, &facts);
    if (!l->efa_count && !nc->n_network_interfaces) drop_efa(&facts);
    kp_awsp_instance(a, &in, nc, &facts, out);
}

static int aws_create(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *a,
                      kp_cloud_instance *out)
{
    kp_awsp *p = (kp_awsp *)cp;
    const kp_ec2nodeclass *nc = NULL;
    kp_catalog *cands = NULL;
    kp_awsp_clients *c = NULL;
    int err = class_for_launch(p, claim, a, &nc);
    if (err == 0) err = candidates(p, nc, claim, &cands);
    if (err == 0) err = kp_awsp_clients_take(p, &c);
    kp_aws_launched l;
    if (err == 0) {
        err = kp_aws_launch(p->launcher, &c->c, nc, claim, cands, a, &l);
        kp_awsp_clients_give(p, c);
    }
    if (err == 0) as_instance(p, &l, nc, claim, a, out);
    kp_catalog_free(cands);
    return err < 0
               ? kp_error_wrap(err, "aws: creating an instance for nodeclaim %s", claim->meta.name)
               : 0;
}

/* ------------------------------------------------------------ describing */

/* Live instances by id or by filters; NotFound is an empty answer. */
static int describe(kp_awsp *p, kp_arena *a, const char *id, const kp_ec2_filter *extra,
                    size_t n_extra, kp_ec2_instance_list *out)
{
    kp_ec2_filter *f = KP_ARENA_NEW(a, kp_ec2_filter, n_extra + 1);
    f[0] = (kp_ec2_filter){"instance-state-name", live_states,
                           sizeof(live_states) / sizeof(*live_states)};
    for (size_t i = 0; i < n_extra; i++)
        f[i + 1] = extra[i];
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    kp_ec2_instance_list l = {0};
    err = kp_ec2_describe_instances(c->c.ec2, a, id ? &id : NULL, id ? 1 : 0, f, n_extra + 1, &l);
    kp_awsp_clients_give(p, c);
    if (err == KP_ENOTFOUND) err = 0, l = (kp_ec2_instance_list){0};
    if (err < 0) return kp_error_wrap(err, "aws: describing instances");
    *out = l;
    return 0;
}

/* The live instance behind a provider ID. */
static int instance_of(kp_awsp *p, kp_arena *a, const char *pid, const kp_ec2_instance **out)
{
    const char *zone = NULL, *id = NULL;
    int err = kp_aws_parse_provider_id(a, pid, &zone, &id);
    if (err < 0) return kp_error_set(KP_ENOTFOUND, "aws: %s", kp_error_last());
    kp_ec2_instance_list l = {0};
    if ((err = describe(p, a, id, NULL, 0, &l)) < 0) return err;
    for (size_t i = 0; i < l.n; i++)
        if (l.items[i].id && strcmp(l.items[i].id, id) == 0) {
            *out = &l.items[i];
            return 0;
        }
    return kp_error_set(KP_ENOTFOUND, "aws: instance %s not found", pid);
}

/* Labels and resources through the instance's class, when it is known. */
static void convert(kp_awsp *p, kp_arena *a, const kp_ec2_instance *in, kp_cloud_instance *out)
{
    const char *cls = kp_ec2_tag_get(in->tags, in->n_tags, KP_AWS_TAG_NODECLASS);
    const kp_ec2nodeclass *nc = NULL;
    kp_awsp_type_facts facts;
    bool known = cls && p->lookup(p->lookup_ctx, cls, a, &nc) == 0 &&
                 kp_awsp_type_facts_of(p, nc, in->instance_type, a, &facts);
    kp_error_clear();
    kp_awsp_instance(a, in, nc, known ? &facts : NULL, out);
}

static int aws_get(kp_cloud_provider *cp, const char *pid, kp_arena *a, kp_cloud_instance *out)
{
    kp_awsp *p = (kp_awsp *)cp;
    const kp_ec2_instance *in = NULL;
    int err = instance_of(p, a, pid, &in);
    if (err == 0) convert(p, a, in, out);
    return err;
}

static int aws_list(kp_cloud_provider *cp, kp_arena *a, kp_cloud_instance **out, uint32_t *n)
{
    kp_awsp *p = (kp_awsp *)cp;
    const char *cluster[] = {p->cluster_name}, *pool[] = {KP_AWS_TAG_NODEPOOL},
               *cls[] = {KP_AWS_TAG_NODECLASS};
    kp_ec2_filter f[] = {
        {"tag-key", pool, 1}, {"tag-key", cls, 1}, {"tag:" KP_AWS_TAG_CLUSTER, cluster, 1}};
    kp_ec2_instance_list l = {0};
    int err = describe(p, a, NULL, f, 3, &l);
    if (err < 0) return err;
    kp_cloud_instance *all = KP_ARENA_NEW(a, kp_cloud_instance, l.n + 1);
    for (size_t i = 0; i < l.n; i++)
        convert(p, a, &l.items[i], &all[i]);
    *out = all;
    *n = (uint32_t)l.n;
    return 0;
}

/* ----------------------------------------------------------------- delete */

/* A claim whose launch answer was lost: its instance by tag. */
static int instance_of_claim(kp_awsp *p, kp_arena *a, const kp_nodeclaim *claim,
                             const kp_ec2_instance **out)
{
    if (claim->provider_id && *claim->provider_id)
        return instance_of(p, a, claim->provider_id, out);
    const char *name[] = {claim->meta.name}, *cluster[] = {p->cluster_name};
    kp_ec2_filter f[] = {{"tag:" KP_AWS_TAG_NODECLAIM, name, 1},
                         {"tag:" KP_AWS_TAG_CLUSTER, cluster, 1}};
    kp_ec2_instance_list l = {0};
    int err = describe(p, a, NULL, f, 2, &l);
    if (err < 0) return err;
    if (l.n == 0)
        return kp_error_set(KP_ENOTFOUND, "aws: no instance for nodeclaim %s", claim->meta.name);
    *out = &l.items[0];
    return 0;
}

static int aws_delete(kp_cloud_provider *cp, const kp_nodeclaim *claim)
{
    kp_awsp *p = (kp_awsp *)cp;
    kp_arena *a = kp_arena_new();
    const kp_ec2_instance *in = NULL;
    int err = instance_of_claim(p, a, claim, &in);
    /* Shutting down already: no second terminate (Karpenter saves the call). */
    if (err == 0 && !(in->state && strcmp(in->state, "shutting-down") == 0)) {
        kp_awsp_clients *c = NULL;
        if ((err = kp_awsp_clients_take(p, &c)) == 0) {
            kp_ec2_state_change_list changes;
            err = kp_ec2_terminate_instances(c->c.ec2, a, &in->id, 1, &changes);
            kp_awsp_clients_give(p, c);
        }
        /* its reservation has room again */
        if (err == 0 && p->crs && in->capacity_reservation_id && *in->capacity_reservation_id)
            kp_aws_crs_mark_terminated(p->crs, in->capacity_reservation_id);
        if (err < 0 && err != KP_ENOTFOUND) err = kp_error_wrap(err, "aws: terminating %s", in->id);
    }
    kp_arena_free(a);
    return err;
}

/* ------------------------------------------------------- types and drift */

static int aws_instance_types(kp_cloud_provider *cp, const kp_nodepool *pool,
                              const kp_catalog **out)
{
    kp_awsp *p = (kp_awsp *)cp;
    kp_arena *a = kp_arena_new();
    const kp_ec2nodeclass *nc = NULL;
    int err = 0;
    if (pool) {
        const char *name =
            pool->template.has_node_class_ref ? pool->template.node_class_ref.name : NULL;
        err = kp_awsp_lookup(p, name, a, &nc);
        if (err < 0) err = kp_error_wrap(err, "nodepool %s: resolving node class", pool->meta.name);
    }
    if (err == 0) {
        pthread_mutex_lock(&p->catalog_lock);
        err = kp_awsp_catalog(p, nc, out);
        pthread_mutex_unlock(&p->catalog_lock);
    }
    kp_arena_free(a);
    return err;
}

/* The claim with the class-hash annotations from the instance's tags when it
 * carries none of its own. */
static kp_nodeclaim with_hash(const kp_nodeclaim *claim, const kp_ec2_instance *in, kp_arena *a)
{
    kp_nodeclaim c = *claim;
    if (kp_labels_get(&claim->meta.annotations, KP_AWS_ANNOTATION_NODECLASS_HASH)) return c;
    const char *h = kp_ec2_tag_get(in->tags, in->n_tags, KP_AWS_ANNOTATION_NODECLASS_HASH);
    const char *v = kp_ec2_tag_get(in->tags, in->n_tags, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION);
    kp_label *l = KP_ARENA_NEW(a, kp_label, 2);
    size_t n = 0;
    if (h) l[n++] = (kp_label){KP_AWS_ANNOTATION_NODECLASS_HASH, h};
    if (v) l[n++] = (kp_label){KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION, v};
    c.meta.annotations = (kp_labels){l, n};
    return c;
}

static const char *drift(kp_awsp *p, const kp_ec2nodeclass *nc, const kp_nodeclaim *claim,
                         const kp_ec2_instance *in, kp_arena *a)
{
    kp_nodeclaim c = with_hash(claim, in, a);
    const char *why = kp_aws_nodeclass_drift(nc, &c, NULL, NULL);
    if (why) return why;
    const char *image = claim->image_id && *claim->image_id ? claim->image_id : in->image_id;
    kp_awsp_type_facts facts;
    if (image && nc->n_status_amis && kp_awsp_type_facts_of(p, nc, in->instance_type, a, &facts))
        return !facts.ami || strcmp(facts.ami, image) != 0 ? "AMIDrift" : NULL;
    return kp_aws_nodeclass_drift(nc, &c, image, NULL);
}

/* Karpenter's SecurityGroupDrift: the instance's groups are not exactly the
 * class's resolved ones. Unknown (no groups listed) is not drift. */
static const char *security_group_drift(const kp_ec2nodeclass *nc, const kp_ec2_instance *in)
{
    if (!in->n_security_group_ids || !nc->n_status_security_groups) return NULL;
    if (in->n_security_group_ids != nc->n_status_security_groups) return "SecurityGroupDrift";
    for (size_t i = 0; i < in->n_security_group_ids; i++) {
        bool found = false;
        for (size_t j = 0; j < nc->n_status_security_groups && !found; j++)
            found = nc->status_security_groups[j].id &&
                    !strcmp(nc->status_security_groups[j].id, in->security_group_ids[i]);
        if (!found) return "SecurityGroupDrift";
    }
    return NULL;
}

/* Karpenter's CapacityReservationDrift: launched into a reservation the
 * class no longer selects. */
static const char *reservation_drift(const kp_ec2nodeclass *nc, const kp_ec2_instance *in)
{
    kp_cloud_instance ci;
    kp_arena *a = kp_arena_new();
    kp_awsp_instance(a, in, NULL, NULL, &ci);
    bool reserved = strcmp(ci.capacity_type, "reserved") == 0;
    kp_arena_free(a);
    if (!reserved || kp_aws_nc_reservation(nc, in->capacity_reservation_id)) return NULL;
    return "CapacityReservationDrift";
}

/* Karpenter's PlacementGroupDrift: the claim's group label is not the group
 * the class resolves to now (added, removed or changed). */
static const char *placement_drift(kp_awsp *p, const kp_ec2nodeclass *nc,
                                   const kp_nodeclaim *claim, const kp_ec2_instance *in,
                                   kp_arena *a)
{
    const char *have = kp_labels_get(&claim->meta.labels, KP_AWS_LABEL_PG_ID);
    if (!have) have = in->placement_group_id;
    kp_awsp_clients *c = NULL;
    if (kp_awsp_clients_take(p, &c) < 0) return NULL; /* unknown: not drift */
    kp_aws_pg_info pg;
    kp_awsp_placement_group(p, c->c.ec2, nc, a, &pg);
    kp_awsp_clients_give(p, c);
    if (nc->has_placement_group_selector && !pg.id) return NULL; /* unknown now: not drift */
    bool same = (!have || !*have) ? pg.id == NULL : pg.id && strcmp(have, pg.id) == 0;
    return same ? NULL : "PlacementGroupDrift";
}

static int aws_is_drifted(kp_cloud_provider *cp, const kp_nodeclaim *claim, kp_arena *a,
                          const char **reason)
{
    kp_awsp *p = (kp_awsp *)cp;
    const kp_ec2nodeclass *nc = NULL;
    int err = kp_awsp_lookup(p, class_of(claim), a, &nc);
    if (err == KP_ENOTFOUND) { /* no class: drift cannot be told */
        *reason = NULL;
        return 0;
    }
    const kp_ec2_instance *in = NULL;
    if (err == 0) err = instance_of(p, a, claim->provider_id, &in);
    if (err < 0) return err;
    const char *why = drift(p, nc, claim, in, a);
    if (!why) why = kp_aws_nodeclass_drift(nc, claim, NULL, in->subnet_id);
    if (!why) why = security_group_drift(nc, in);
    if (!why) why = reservation_drift(nc, in);
    if (!why) why = placement_drift(p, nc, claim, in, a);
    *reason = why;
    return 0;
}

#define MIN_NS(m) ((int64_t)(m) * 60 * 1000000000)

/* Karpenter's AWS repair policies: the kubelet's Ready, and the conditions
 * of the EKS node monitoring agent. */
static const kp_repair_policy repair_policies[] = {
    {"Ready", "False", MIN_NS(30)},
    {"Ready", "Unknown", MIN_NS(30)},
    {"AcceleratedHardwareReady", "False", MIN_NS(10)},
    {"StorageReady", "False", MIN_NS(30)},
    {"NetworkingReady", "False", MIN_NS(30)},
    {"KernelReady", "False", MIN_NS(30)},
    {"ContainerRuntimeReady", "False", MIN_NS(30)},
};

const kp_cloud_provider_ops kp_awsp_ops = {
    aws_name, aws_create,         aws_delete,     aws_get,
    aws_list, aws_instance_types, aws_is_drifted, kp_awsp_free,
    "karpenter.k8s.aws", "EC2NodeClass", "aws",
    repair_policies, sizeof(repair_policies) / sizeof(repair_policies[0]),
};
