/*
 * The node class's status and what is read back from it: conditions, the
 * readiness gate launches pass through, the class hash, AMI compatibility
 * and drift.
 */
#include "cloud/aws/nodeclass_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/instancetypes.h"

/* ---------------------------------------------------------------- resolver */

int kp_aws_nc_resolver_new(kp_aws_nc_resolver **out, const kp_aws_nc_resolver_opts *o)
{
    if (!o->region || !*o->region || !o->cluster_name || !*o->cluster_name)
        return kp_error_set(KP_EINVALID, "node class resolver: a region and a cluster name are "
                                         "required");
    int64_t minute = INT64_C(60) * KP_NS_PER_SEC;
    if ((o->subnet_refresh_ns && o->subnet_refresh_ns < minute) ||
        (o->ami_refresh_ns && o->ami_refresh_ns < minute))
        return kp_error_set(KP_EINVALID, "node class resolver: the subnet and AMI refresh "
                                         "intervals must be at least 1m");
    kp_aws_nc_resolver *r = kp_xcalloc(1, sizeof(*r));
    r->subnet_ttl_ns = o->subnet_refresh_ns ? o->subnet_refresh_ns : KP_NC_SUBNET_TTL_NS;
    r->ami_ttl_ns = o->ami_refresh_ns ? o->ami_refresh_ns : KP_NC_AMI_TTL_NS;
    r->clock = o->clock ? o->clock : kp_clock_system();
    r->cache = kp_aws_cache_new(r->clock);
    r->region = kp_xstrdup(o->region);
    r->cluster_name = kp_xstrdup(o->cluster_name);
    r->kubernetes_version = o->kubernetes_version ? kp_xstrdup(o->kubernetes_version) : NULL;
    r->reservations = o->reservations;
    pthread_mutex_init(&r->version_lock, NULL);
    *out = r;
    return 0;
}

kp_aws_nc_resolver *kp_aws_nc_resolver_free(kp_aws_nc_resolver *r)
{
    if (!r) return NULL;
    kp_aws_cache_free(r->cache);
    free(r->region);
    free(r->cluster_name);
    free(r->kubernetes_version);
    pthread_mutex_destroy(&r->version_lock);
    free(r);
    return NULL;
}

const char *kp_ncr_kubernetes_version(kp_aws_nc_resolver *r, kp_arena *a)
{
    pthread_mutex_lock(&r->version_lock);
    const char *v = r->kubernetes_version ? kp_arena_strdup(a, r->kubernetes_version) : NULL;
    pthread_mutex_unlock(&r->version_lock);
    return v;
}

void kp_aws_nc_resolver_set_kubernetes_version(kp_aws_nc_resolver *r, const char *version)
{
    if (!version || !*version) return;
    pthread_mutex_lock(&r->version_lock);
    bool changed = !r->kubernetes_version || strcmp(r->kubernetes_version, version) != 0;
    if (changed) {
        free(r->kubernetes_version);
        r->kubernetes_version = kp_xstrdup(version);
    }
    pthread_mutex_unlock(&r->version_lock);
    if (changed) kp_aws_cache_flush(r->cache); /* alias answers name the old version */
}

void kp_aws_nc_resolver_flush(kp_aws_nc_resolver *r)
{
    kp_aws_cache_flush(r->cache);
}

/* -------------------------------------------------------------- conditions */

typedef struct cond {
    const char *type;
    bool ok;
    const char *reason; /* when !ok */
    const char *message;
} cond;

static void add_condition(cJSON *list, const kp_ec2nodeclass *nc, const cond *c, int64_t now)
{
    const kp_condition *prev = kp_conditions_get(&nc->conditions, c->type);
    enum kp_condition_status st = c->ok ? KP_CONDITION_TRUE : KP_CONDITION_FALSE;
    int64_t when = prev && prev->status == st && prev->last_transition_time.set
                       ? prev->last_transition_time.ns
                       : now;
    char ts[32];
    kp_time_format_rfc3339(when, ts, sizeof(ts));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", c->type);
    cJSON_AddStringToObject(o, "status", c->ok ? "True" : "False");
    cJSON_AddStringToObject(o, "reason", c->ok ? c->type : c->reason);
    cJSON_AddStringToObject(o, "message", c->ok ? "" : c->message);
    cJSON_AddStringToObject(o, "lastTransitionTime", ts);
    cJSON_AddNumberToObject(o, "observedGeneration", (double)nc->meta.generation);
    cJSON_AddItemToArray(list, o);
}

static void add_conditions(cJSON *status, const kp_ec2nodeclass *nc, cond *c, size_t n, int64_t now)
{
    cJSON *list = cJSON_AddArrayToObject(status, "conditions");
    kp_buf unhealthy = KP_BUF_INIT(4096);
    for (size_t i = 0; i < n; i++) {
        add_condition(list, nc, &c[i], now);
        if (!c[i].ok) kp_buf_printf(&unhealthy, "%s%s=False", unhealthy.len ? ", " : "", c[i].type);
    }
    cond ready = {"Ready", unhealthy.len == 0, "UnhealthyDependents", kp_buf_cstr(&unhealthy)};
    add_condition(list, nc, &ready, now);
    kp_buf_free(&unhealthy);
}

static cJSON *without(cJSON *list, const char *key)
{
    cJSON *e;
    cJSON_ArrayForEach(e, list) cJSON_DeleteItemFromObjectCaseSensitive(e, key);
    return list;
}

/* Everything the status lists, fetched (the caller frees `l`). */
typedef struct lists {
    cJSON *subnets, *groups, *amis, *reservations;
    const char *profile, *profile_why;
    kp_ncr_why ami_why, cr_why, pg_why;
} lists;

static void lists_free(lists *l)
{
    cJSON_Delete(l->subnets);
    cJSON_Delete(l->groups);
    cJSON_Delete(l->amis);
    cJSON_Delete(l->reservations);
}

static int fetch(kp_aws_nc_resolver *r, const kp_aws_nc_clients *clients,
                 const kp_ec2nodeclass *nc, kp_arena *a, lists *l)
{
    int err = kp_ncr_subnets(r, clients->ec2, nc, &l->subnets);
    if (err == 0) err = kp_ncr_security_groups(r, clients->ec2, nc, &l->groups);
    if (err == 0) err = kp_ncr_amis(r, clients, nc, a, &l->amis, &l->ami_why);
    if (err == 0)
        err = kp_ncr_instance_profile(r, clients->iam, nc, a, &l->profile, &l->profile_why);
    if (err == 0)
        err = kp_ncr_capacity_reservations(r, clients->ec2, nc, a, &l->reservations, &l->cr_why);
    if (err == 0) err = kp_ncr_placement_group_ready(r, clients->ec2, nc, a, &l->pg_why);
    return err;
}

static cJSON *status_object(lists *l)
{
    cJSON *st = cJSON_CreateObject();
    cJSON_AddItemToObject(st, "subnets", without(l->subnets, "availableIPs"));
    cJSON_AddItemToObject(st, "securityGroups", l->groups);
    cJSON_AddItemToObject(st, "amis", l->amis);
    if (l->reservations && cJSON_GetArraySize(l->reservations) > 0)
        cJSON_AddItemToObject(st, "capacityReservations", l->reservations);
    else
        cJSON_Delete(l->reservations);
    if (l->profile) cJSON_AddStringToObject(st, "instanceProfile", l->profile);
    *l = (lists){0};
    return st;
}

/* `nc` with the status just built (strings in `a`). */
static int with_status(const kp_ec2nodeclass *nc, const cJSON *st, kp_arena *a,
                       kp_ec2nodeclass *out)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemReferenceToObject(doc, "status", (cJSON *)st);
    kp_ec2nodeclass s;
    int err = kp_decode_ec2nodeclass(a, doc, &s);
    cJSON_Delete(doc);
    if (err < 0) return err;
    *out = *nc;
    out->status_subnets = s.status_subnets, out->n_status_subnets = s.n_status_subnets;
    out->status_security_groups = s.status_security_groups;
    out->n_status_security_groups = s.n_status_security_groups;
    out->status_amis = s.status_amis, out->n_status_amis = s.n_status_amis;
    out->status_instance_profile = s.status_instance_profile;
    out->status_capacity_reservations = s.status_capacity_reservations;
    out->n_status_capacity_reservations = s.n_status_capacity_reservations;
    return 0;
}

/* ValidationSucceeded: Karpenter waits for the four resolutions, then asks. */
static int validation(kp_aws_nc_resolver *r, const kp_aws_nc_clients *clients,
                      const kp_ec2nodeclass *nc, const cJSON *st, const cond *deps, kp_arena *a,
                      cond *out)
{
    *out = (cond){"ValidationSucceeded", true, NULL, NULL};
    for (size_t i = 0; i < 4; i++)
        if (!deps[i].ok) {
            *out = (cond){"ValidationSucceeded", false, "DependenciesNotReady",
                          "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"};
            return 0;
        }
    if (!r->validate) return 0;
    kp_ec2nodeclass resolved;
    const char *reason = NULL, *message = NULL;
    int err = with_status(nc, st, a, &resolved);
    if (err == 0) err = r->validate(r->validate_ctx, clients, &resolved, a, &reason, &message);
    if (err == 0 && reason) *out = (cond){"ValidationSucceeded", false, reason, message};
    return err;
}

int kp_aws_nc_resolve(kp_aws_nc_resolver *r, const kp_aws_nc_clients *clients,
                      const kp_ec2nodeclass *nc, cJSON **status)
{
    kp_arena *a = kp_arena_new();
    lists l = {0};
    int err = fetch(r, clients, nc, a, &l);
    if (err < 0) {
        lists_free(&l);
        kp_arena_free(a);
        return kp_error_wrap(err, "resolving ec2nodeclass %s", nc->meta.name);
    }
    cond c[] = {
        {"AMIsReady", cJSON_GetArraySize(l.amis) > 0, l.ami_why.reason,
         l.ami_why.message ? l.ami_why.message : "AMISelector did not match any AMIs"},
        {"SubnetsReady", cJSON_GetArraySize(l.subnets) > 0, "SubnetsNotFound",
         "SubnetSelector did not match any Subnets"},
        {"SecurityGroupsReady", cJSON_GetArraySize(l.groups) > 0, "SecurityGroupsNotFound",
         "SecurityGroupSelector did not match any SecurityGroups"},
        {"InstanceProfileReady", l.profile != NULL, "InstanceProfileNotFound",
         l.profile_why ? l.profile_why : "no instance profile"},
        {"CapacityReservationsReady", l.cr_why.reason == NULL, l.cr_why.reason, l.cr_why.message},
        {"PlacementGroupReady", l.pg_why.reason == NULL, l.pg_why.reason, l.pg_why.message},
        {"ValidationSucceeded", true, NULL, NULL},
    };
    cJSON *st = status_object(&l);
    err = validation(r, clients, nc, st, c, a, &c[6]);
    if (err < 0) {
        cJSON_Delete(st);
        kp_arena_free(a);
        return kp_error_wrap(err, "validating ec2nodeclass %s", nc->meta.name);
    }
    add_conditions(st, nc, c, sizeof(c) / sizeof(c[0]), r->clock->now(r->clock));
    kp_arena_free(a);
    *status = st;
    return 0;
}

/* ------------------------------------------------------------- reading back */

int kp_aws_nodeclass_check_ready(const kp_ec2nodeclass *nc)
{
    const kp_condition *ready = kp_conditions_get(&nc->conditions, "Ready");
    if (!ready || ready->status != KP_CONDITION_TRUE)
        return kp_error_set(KP_ENOTREADY, "ec2nodeclass %s is not ready%s%s", nc->meta.name,
                            ready && ready->message && *ready->message ? ": " : "",
                            ready && ready->message ? ready->message : "");
    if (ready->observed_generation != nc->meta.generation)
        return kp_error_set(KP_ENOTREADY,
                            "ec2nodeclass %s: status is for generation %" PRId64 ", not %" PRId64,
                            nc->meta.name, ready->observed_generation, nc->meta.generation);
    return 0;
}

static void put_labels(cJSON *o, const char *key, const kp_labels *l)
{
    if (!l->count) return;
    cJSON *m = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; i < l->count; i++)
        cJSON_AddStringToObject(m, l->items[i].key, l->items[i].value);
}

static cJSON *block_devices_json(const kp_ec2nodeclass *nc)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < nc->n_block_device_mappings; i++) {
        const kp_block_device_mapping *m = &nc->block_device_mappings[i];
        const kp_block_device *e = &m->ebs;
        char q[64] = "";
        if (e->has_volume_size) kp_quantity_format(e->volume_size, q, sizeof(q));
        char *s = kp_xmalloc(1024);
        snprintf(s, 1024, "%s|%d|%d%d|%d%d|%d%" PRId64 "|%s|%s|%d%" PRId64 "|%s|%s", m->device_name,
                 m->root_volume, e->has_delete_on_termination, e->delete_on_termination,
                 e->has_encrypted, e->encrypted, e->has_iops, e->iops, e->kms_key_id,
                 e->snapshot_id, e->has_throughput, e->throughput, q, e->volume_type);
        if (e->has_volume_initialization_rate) /* only when set: older hashes stay */
            snprintf(s + strlen(s), 1024 - strlen(s), "|vir%d", (int)e->volume_initialization_rate);
        cJSON_AddItemToArray(a, cJSON_CreateString(s));
        free(s);
    }
    return a;
}

/* The launch settings Karpenter hashes (ipPrefixCount it does not), each
 * only when set, so classes without them hash as they always did. */
static void hash_network(cJSON *o, const kp_ec2nodeclass *nc)
{
    if (nc->n_network_interfaces) {
        cJSON *a = cJSON_AddArrayToObject(o, "networkInterfaces");
        for (size_t i = 0; i < nc->n_network_interfaces; i++) {
            char t[160];
            const kp_nc_network_interface *ni = &nc->network_interfaces[i];
            snprintf(t, sizeof(t), "%d|%d|%s", (int)ni->network_card_index, (int)ni->device_index,
                     ni->interface_type ? ni->interface_type : "");
            cJSON_AddItemToArray(a, cJSON_CreateString(t));
        }
    }
    if (nc->has_placement_group_selector)
        cJSON_AddStringToObject(o, "placementGroupSelector",
                                nc->placement_group_id && *nc->placement_group_id
                                    ? nc->placement_group_id
                                    : (nc->placement_group_name ? nc->placement_group_name : ""));
    if (nc->nested_virtualization && *nc->nested_virtualization)
        cJSON_AddStringToObject(o, "nestedVirtualization", nc->nested_virtualization);
    const kp_connection_tracking *ct = &nc->connection_tracking;
    if (ct->present) {
        char t[96];
        snprintf(t, sizeof(t), "%d|%d|%d", ct->has_tcp_established_timeout ? (int)ct->tcp_established_timeout : -1,
                 ct->has_udp_stream_timeout ? (int)ct->udp_stream_timeout : -1,
                 ct->has_udp_timeout ? (int)ct->udp_timeout : -1);
        cJSON_AddStringToObject(o, "connectionTracking", t);
    }
}

uint64_t kp_aws_nodeclass_hash(const kp_ec2nodeclass *nc)
{
    static const char *const families[] = {"AL2023", "AL2", "Bottlerocket", "Windows", "Custom"};
    const kp_metadata_options *md = &nc->metadata_options;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "amiFamily", families[kp_aws_nodeclass_ami_family(nc)]);
    cJSON_AddStringToObject(o, "role", nc->role);
    cJSON_AddStringToObject(o, "instanceProfile", nc->instance_profile);
    put_labels(o, "tags", &nc->tags);
    cJSON_AddStringToObject(o, "kubelet", nc->kubelet.raw_json ? nc->kubelet.raw_json : "");
    cJSON_AddItemToObject(o, "blockDeviceMappings", block_devices_json(nc));
    if (md->present) {
        char text[512];
        snprintf(text, sizeof(text), "%s|%s|%d%" PRId64 "|%s", md->http_endpoint,
                 md->http_protocol_ipv6, md->has_http_put_response_hop_limit,
                 md->http_put_response_hop_limit, md->http_tokens);
        cJSON_AddStringToObject(o, "metadataOptions", text);
    }
    if (nc->has_user_data) cJSON_AddStringToObject(o, "userData", nc->user_data);
    cJSON_AddNumberToObject(o, "instanceStorePolicy", nc->instance_store_policy);
    if (nc->has_associate_public_ip_address)
        cJSON_AddBoolToObject(o, "associatePublicIPAddress", nc->associate_public_ip_address);
    if (nc->has_detailed_monitoring)
        cJSON_AddBoolToObject(o, "detailedMonitoring", nc->detailed_monitoring);
    cJSON_AddStringToObject(o, "context", nc->context);
    hash_network(o, nc);
    char *text = cJSON_PrintUnformatted(o);
    uint64_t h = kp_aws_fnv1a(KP_AWS_FNV_OFFSET, text, strlen(text));
    free(text);
    cJSON_Delete(o);
    return h;
}

static const kp_it_requirement *type_req(const kp_instance_type *it, const char *key)
{
    for (uint32_t i = 0; i < it->n_reqs; i++)
        if (strcmp(it->reqs[i].key, key) == 0) return &it->reqs[i];
    return NULL;
}

static bool any_value_in(const kp_it_requirement *t, const kp_selector_req *r)
{
    for (uint32_t i = 0; i < t->n_values; i++)
        for (size_t j = 0; j < r->n_values; j++)
            if (strcmp(t->values[i], r->values[j]) == 0) return true;
    return false;
}

static bool all_values_in(const kp_it_requirement *t, const kp_selector_req *r)
{
    for (uint32_t i = 0; i < t->n_values; i++) {
        bool found = false;
        for (size_t j = 0; j < r->n_values && !found; j++)
            found = strcmp(t->values[i], r->values[j]) == 0;
        if (!found) return false;
    }
    return true;
}

bool kp_aws_ami_fits(const kp_nc_ami *ami, const kp_instance_type *it)
{
    for (size_t i = 0; i < ami->n_requirements; i++) {
        const kp_selector_req *r = &ami->requirements[i];
        const kp_it_requirement *t = type_req(it, r->key);
        /* a label the type does not carry reads as DoesNotExist */
        bool present = t && t->op == KP_OP_IN && t->n_values > 0;
        bool ok = true;
        switch (r->op) {
        case KP_OP_IN:
            ok = present && any_value_in(t, r);
            break;
        case KP_OP_NOT_IN:
            ok = !present || !all_values_in(t, r);
            break;
        case KP_OP_EXISTS:
            ok = present;
            break;
        case KP_OP_DOES_NOT_EXIST:
            ok = !present;
            break;
        default:
            break; /* numeric bounds: AMIs never carry them */
        }
        if (!ok) return false;
    }
    return true;
}

const kp_nc_ami *kp_aws_nodeclass_ami_for(const kp_ec2nodeclass *nc, const kp_instance_type *it)
{
    for (size_t i = 0; i < nc->n_status_amis; i++)
        if (kp_aws_ami_fits(&nc->status_amis[i], it)) return &nc->status_amis[i];
    return NULL;
}

const char *kp_aws_nodeclass_drift(const kp_ec2nodeclass *nc, const kp_nodeclaim *claim,
                                   const char *image_id, const char *subnet_id)
{
    const kp_labels *ca = &claim->meta.annotations, *na = &nc->meta.annotations;
    const char *cv = kp_labels_get(ca, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION);
    const char *ch = kp_labels_get(ca, KP_AWS_ANNOTATION_NODECLASS_HASH);
    const char *nh = kp_labels_get(na, KP_AWS_ANNOTATION_NODECLASS_HASH);
    const char *nv = kp_labels_get(na, KP_AWS_ANNOTATION_NODECLASS_HASH_VERSION);
    bool same_version =
        cv && nv && strcmp(cv, nv) == 0 && strcmp(cv, KP_AWS_NODECLASS_HASH_VERSION) == 0;
    if (same_version && ch && nh && strcmp(ch, nh) != 0) return "NodeClassDrift";
    if (image_id && *image_id && nc->n_status_amis) {
        bool found = false;
        for (size_t i = 0; i < nc->n_status_amis && !found; i++)
            found = strcmp(nc->status_amis[i].id, image_id) == 0;
        if (!found) return "AMIDrift";
    }
    if (subnet_id && *subnet_id && nc->n_status_subnets) {
        bool found = false;
        for (size_t i = 0; i < nc->n_status_subnets && !found; i++)
            found = strcmp(nc->status_subnets[i].id, subnet_id) == 0;
        if (!found) return "SubnetDrift";
    }
    return NULL;
}
