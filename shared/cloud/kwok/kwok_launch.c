/*
 * What create() launches: the cheapest available offering a NodeClaim
 * allows, the labels its requirements, the instance type and the offering
 * fix between them, and the Node object that stands for the machine.
 *
 * Compatibility is the requirements algebra's Intersects: every key both the
 * claim and the type (or offering) define must have a value in common; keys
 * only the claim has (its NodePool's own labels) do not matter here, the
 * solver has checked them.
 */
#include "cloud/kwok/kwok_internal.h"

#include "api/quantity.h"
#include "api/requirements.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

typedef struct chooser {
    kp_symtab *symtab;
    kp_arena *arena;
    kp_requirements claim;
    /* the best so far */
    const kp_instance_type *type;
    const kp_offering *offering;
    kp_requirements type_reqs;
    size_t considered;
} chooser;

static int claim_requirements(chooser *ch, const kp_nodeclaim *claim)
{
    kp_requirements_init(&ch->claim);
    for (size_t i = 0; i < claim->spec.n_requirements; i++) {
        const kp_selector_req *r = &claim->spec.requirements[i];
        kp_requirement req;
        int err = kp_requirement_new(&req, ch->symtab, ch->arena, r->key, r->op,
                                     (const char *const *)r->values, r->n_values, 0);
        if (err < 0)
            return kp_error_wrap(err, "kwok: nodeclaim %s: spec.requirements[%zu]",
                                 claim->meta.name, i);
        kp_requirements_add(&ch->claim, ch->symtab, ch->arena, &req);
    }
    return 0;
}

/* The type's requirements without zone and capacity type: each offering
 * fixes those. */
static int type_requirements(chooser *ch, const kp_instance_type *it, kp_requirements *out)
{
    kp_requirements_init(out);
    kp_requirements_add_label(out, ch->symtab, ch->arena, KP_LABEL_INSTANCE_TYPE, it->name);
    for (uint32_t i = 0; i < it->n_reqs; i++) {
        const kp_it_requirement *r = &it->reqs[i];
        kp_requirement req;
        int err = kp_requirement_new(&req, ch->symtab, ch->arena, r->key, r->op, r->values,
                                     r->n_values, 0);
        if (err < 0) return kp_error_wrap(err, "kwok: instance type %s", it->name);
        if (req.key != KP_SYM_ZONE && req.key != KP_SYM_CAPACITY_TYPE)
            kp_requirements_add(out, ch->symtab, ch->arena, &req);
    }
    return 0;
}

static bool claim_allows(chooser *ch, kp_sym key, const char *value)
{
    const kp_requirement *r = kp_requirements_get(&ch->claim, key);
    return !r || kp_requirement_has(ch->symtab, r, kp_sym_intern(ch->symtab, value));
}

/* Strictly cheaper wins, so among equal prices the first seen stays. */
static void consider(chooser *ch, const kp_instance_type *it)
{
    kp_requirements reqs;
    ch->considered++;
    if (type_requirements(ch, it, &reqs) < 0 ||
        !kp_requirements_intersects(ch->symtab, &reqs, &ch->claim, NULL))
        return;
    for (uint32_t i = 0; i < it->n_offerings; i++) {
        const kp_offering *o = &it->offerings[i];
        if (!o->available || (ch->offering && !(o->price < ch->offering->price))) continue;
        if (!claim_allows(ch, KP_SYM_ZONE, o->zone) ||
            !claim_allows(ch, KP_SYM_CAPACITY_TYPE, o->capacity_type))
            continue;
        ch->type = it;
        ch->offering = o;
        ch->type_reqs = reqs;
    }
}

/* The claim's instance types in its own order (its In lists); every type in
 * the catalog when it names none. */
static void consider_all(chooser *ch, const kp_catalog *catalog, const kp_nodeclaim *claim)
{
    bool named = false;
    for (size_t i = 0; i < claim->spec.n_requirements; i++) {
        const kp_selector_req *r = &claim->spec.requirements[i];
        if (r->op != KP_OP_IN || strcmp(kp_label_normalize(r->key), KP_LABEL_INSTANCE_TYPE) != 0)
            continue;
        named = true;
        for (size_t j = 0; j < r->n_values; j++) {
            const kp_instance_type *it = kp_catalog_find(catalog, r->values[j]);
            if (it) consider(ch, it);
        }
    }
    for (size_t i = 0; !named && i < catalog->count; i++)
        consider(ch, &catalog->types[i]);
}

/* kubernetes.io/arch and /os always get a value: the first of `choices` the
 * requirements allow, else the first value they leave. */
static void default_label(chooser *ch, const kp_requirements *all, cJSON *labels, kp_sym key,
                          const char *const choices[2])
{
    const char *name = kp_sym_str(ch->symtab, key);
    if (cJSON_GetObjectItemCaseSensitive(labels, name)) return;
    const kp_requirement *r = kp_requirements_get(all, key);
    const char *value = choices[0];
    for (int i = 1; r && i >= 0; i--)
        if (kp_requirement_has(ch->symtab, r, kp_sym_intern(ch->symtab, choices[i])))
            value = choices[i];
    if (r && !r->complement && r->n_values > 0 &&
        !kp_requirement_has(ch->symtab, r, kp_sym_intern(ch->symtab, value)))
        value = kp_sym_str(ch->symtab, r->values[0]);
    cJSON_AddStringToObject(labels, name, value);
}

/* Every key the claim, the type and the offering together narrow to one value. */
static cJSON *fixed_labels(chooser *ch)
{
    kp_requirements all;
    kp_requirements_copy(&all, ch->arena, &ch->claim);
    kp_requirements_add_all(&all, ch->symtab, ch->arena, &ch->type_reqs);
    kp_requirements_add_label(&all, ch->symtab, ch->arena, KP_LABEL_ZONE, ch->offering->zone);
    kp_requirements_add_label(&all, ch->symtab, ch->arena, KP_LABEL_CAPACITY_TYPE,
                              ch->offering->capacity_type);
    cJSON *labels = cJSON_CreateObject();
    for (uint32_t i = 0; i < all.count; i++) {
        kp_sym v = kp_requirement_single_value(&all.items[i]);
        if (v != KP_SYM_NONE)
            cJSON_AddStringToObject(labels, kp_sym_str(ch->symtab, all.items[i].key),
                                    kp_sym_str(ch->symtab, v));
    }
    static const char *const arches[2] = {"amd64", "arm64"}, *const oses[2] = {"linux", "windows"};
    default_label(ch, &all, labels, KP_SYM_ARCH, arches);
    default_label(ch, &all, labels, KP_SYM_OS, oses);
    return labels;
}

int kwok_choose(const kp_catalog *catalog, const kp_nodeclaim *claim, kwok_choice *out)
{
    chooser ch;
    memset(&ch, 0, sizeof(ch));
    ch.symtab = kp_symtab_new();
    ch.arena = kp_arena_new();
    int err = claim_requirements(&ch, claim);
    if (err == 0) {
        consider_all(&ch, catalog, claim);
        if (!ch.offering)
            err = kp_error_set(KP_EINSUFFICIENT_CAPACITY,
                               "kwok: nodeclaim %s: no available offering of the %zu instance "
                               "types considered fits its requirements",
                               claim->meta.name, ch.considered);
    }
    if (err == 0) *out = (kwok_choice){ch.type, ch.offering, fixed_labels(&ch)};
    kp_arena_free(ch.arena);
    kp_symtab_free(ch.symtab);
    return err;
}

/* ------------------------------------------------------------ the Node */

static void set_string(cJSON *obj, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddStringToObject(obj, key, value);
}

static cJSON *string_map(const kp_labels *labels)
{
    cJSON *m = cJSON_CreateObject();
    for (size_t i = 0; i < labels->count; i++)
        cJSON_AddStringToObject(m, labels->items[i].key, labels->items[i].value);
    return m;
}

static cJSON *node_metadata(const kp_nodeclaim *claim, const kwok_choice *choice)
{
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "name", claim->meta.name);
    cJSON *labels = string_map(&claim->meta.labels);
    const cJSON *l;
    cJSON_ArrayForEach(l, choice->labels)
    {
        set_string(labels, l->string, l->valuestring);
    }
    set_string(labels, KP_LABEL_HOSTNAME, claim->meta.name);
    set_string(labels, KP_KWOK_LABEL, KP_KWOK_LABEL_VALUE);
    cJSON_AddItemToObject(meta, "labels", labels);
    cJSON *annotations = string_map(&claim->meta.annotations);
    set_string(annotations, KP_KWOK_LABEL, KP_KWOK_LABEL_VALUE);
    cJSON_AddItemToObject(meta, "annotations", annotations);
    return meta;
}

static cJSON *node_spec(const char *name)
{
    char id[512];
    snprintf(id, sizeof(id), "%s%s", KP_KWOK_PROVIDER_PREFIX, name);
    cJSON *spec = cJSON_CreateObject();
    cJSON_AddStringToObject(spec, "providerID", id);
    cJSON *taint = cJSON_CreateObject();
    cJSON_AddStringToObject(taint, "key", KP_TAINT_UNREGISTERED);
    cJSON_AddStringToObject(taint, "effect", "NoExecute");
    cJSON *taints = cJSON_AddArrayToObject(spec, "taints");
    cJSON_AddItemToArray(taints, taint);
    return spec;
}

static bool counts_bytes(const char *resource)
{
    return strcmp(resource, KP_RESOURCE_MEMORY) == 0 ||
           strcmp(resource, KP_RESOURCE_EPHEMERAL_STORAGE) == 0 ||
           strncmp(resource, "hugepages-", 10) == 0;
}

static void add_quantity(cJSON *list, const char *resource, int64_t milli)
{
    char buf[KP_QUANTITY_STRLEN];
    enum kp_quantity_format f =
        counts_bytes(resource) ? KP_QUANTITY_BINARY_SI : KP_QUANTITY_DECIMAL_SI;
    kp_quantity_format(kp_quantity_from_milli(milli, f), buf, sizeof(buf));
    cJSON_AddStringToObject(list, resource, buf);
}

/* The type's resources; and, as Karpenter's kwok provider does, what the
 * claim requests that the type lacks: the extended resources a NodeOverlay
 * promised, which a device plugin would report on a real node. */
static void add_resources(cJSON *status, const kp_instance_type *it, const kp_nodeclaim *claim)
{
    cJSON *capacity = cJSON_AddObjectToObject(status, "capacity");
    cJSON *allocatable = cJSON_AddObjectToObject(status, "allocatable");
    for (uint32_t i = 0; i < it->n_capacity; i++) {
        const kp_it_resource *r = &it->capacity[i];
        int64_t left = r->milli - kp_it_overhead(it, r->name);
        add_quantity(capacity, r->name, r->milli);
        add_quantity(allocatable, r->name, left > 0 ? left : 0);
    }
    const kp_resource_list *requests = &claim->spec.resource_requests;
    for (size_t i = 0; i < requests->count; i++) {
        const kp_resource *r = &requests->items[i];
        if (cJSON_HasObjectItem(capacity, r->name) || r->quantity.milli <= 0) continue;
        add_quantity(capacity, r->name, r->quantity.milli);
        add_quantity(allocatable, r->name, r->quantity.milli);
    }
}

static cJSON *node_info(const kwok_provider *p, const cJSON *labels)
{
    cJSON *info = cJSON_CreateObject();
    cJSON_AddStringToObject(info, "architecture",
                            cJSON_GetStringValue(cJSON_GetObjectItem(labels, KP_LABEL_ARCH)));
    cJSON_AddStringToObject(info, "operatingSystem",
                            cJSON_GetStringValue(cJSON_GetObjectItem(labels, KP_LABEL_OS)));
    cJSON_AddStringToObject(info, "kubeletVersion", p->kubelet_version);
    cJSON_AddStringToObject(info, "kubeProxyVersion", p->kubelet_version);
    cJSON_AddStringToObject(info, "containerRuntimeVersion", "kwok://fake");
    cJSON_AddStringToObject(info, "osImage", "kwok");
    cJSON_AddStringToObject(info, "kernelVersion", "kwok");
    static const char *const empty[] = {"machineID", "systemUUID", "bootID"};
    for (size_t i = 0; i < sizeof(empty) / sizeof(*empty); i++)
        cJSON_AddStringToObject(info, empty[i], "");
    return info;
}

cJSON *kwok_node_object(const kwok_provider *p, const kp_nodeclaim *claim,
                        const kwok_choice *choice)
{
    char now[32];
    kwok_time(p->clock->now(p->clock), now, sizeof(now));
    cJSON *node = cJSON_CreateObject();
    cJSON_AddStringToObject(node, "apiVersion", "v1");
    cJSON_AddStringToObject(node, "kind", "Node");
    cJSON_AddItemToObject(node, "metadata", node_metadata(claim, choice));
    cJSON_AddItemToObject(node, "spec", node_spec(claim->meta.name));
    cJSON *status = cJSON_AddObjectToObject(node, "status");
    add_resources(status, choice->type, claim);
    cJSON_AddItemToObject(status, "conditions", kwok_node_conditions(NULL, now));
    cJSON_AddItemToObject(status, "addresses", kwok_node_addresses(claim->meta.name));
    cJSON *endpoint = cJSON_AddObjectToObject(cJSON_AddObjectToObject(status, "daemonEndpoints"),
                                              "kubeletEndpoint");
    cJSON_AddNumberToObject(endpoint, "Port", 10250);
    cJSON_AddItemToObject(status, "nodeInfo", node_info(p, choice->labels));
    return node;
}
