/* NodeClaim objects from planned claims (see the header). */
#include "provisioning/nodeclaim_object.h"
#include "api/nodeoverlay.h"
#include "api/nodepool_hash.h"
#include "api/wellknown.h"
#include "scheduling/plan_output.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *kp_node_class_label(const char *group, const char *kind, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/", group ? group : "");
    for (size_t i = 0; kind && kind[i] && (size_t)n + 1 < size; i++)
        buf[n++] = (char)tolower((unsigned char)kind[i]);
    if ((size_t)n < size)
        buf[n] = '\0';
    return buf;
}

static void put_labels(cJSON *obj, const kp_labels *labels)
{
    for (size_t i = 0; i < labels->count; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, labels->items[i].key);
        cJSON_AddStringToObject(obj, labels->items[i].key, labels->items[i].value);
    }
}

static void put_string(cJSON *obj, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddStringToObject(obj, key, value);
}

static cJSON *metadata(const kp_nodepool *np, cJSON *labels, const char *pool_hash)
{
    char prefix[300], key[300];
    cJSON *meta = cJSON_CreateObject();
    snprintf(prefix, sizeof(prefix), "%s-", np->meta.name);
    cJSON_AddStringToObject(meta, "generateName", prefix);
    put_labels(labels, &np->template_labels);
    put_string(labels, KP_LABEL_NODEPOOL, np->meta.name);
    const kp_node_class_ref *ref = &np->template.node_class_ref;
    if (np->template.has_node_class_ref && ref->name)
        put_string(labels, kp_node_class_label(ref->group, ref->kind, key, sizeof(key)), ref->name);
    cJSON_AddItemToObject(meta, "labels", labels);
    cJSON *annotations = cJSON_AddObjectToObject(meta, "annotations");
    put_labels(annotations, &np->template_annotations);
    if (pool_hash) {
        put_string(annotations, KP_ANNOTATION_NODEPOOL_HASH, pool_hash);
        put_string(annotations, KP_ANNOTATION_NODEPOOL_HASH_VERSION, KP_NODEPOOL_HASH_VERSION);
    }
    cJSON *owner = cJSON_CreateObject();
    cJSON_AddStringToObject(owner, "apiVersion", "karpenter.sh/v1");
    cJSON_AddStringToObject(owner, "kind", "NodePool");
    cJSON_AddStringToObject(owner, "name", np->meta.name);
    cJSON_AddStringToObject(owner, "uid", np->meta.uid ? np->meta.uid : "");
    cJSON_AddBoolToObject(owner, "blockOwnerDeletion", 1);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), owner);
    return meta;
}

static cJSON *taints(const kp_taint *t, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", t[i].key);
        if (t[i].value && *t[i].value)
            cJSON_AddStringToObject(o, "value", t[i].value);
        cJSON_AddStringToObject(o, "effect", kp_taint_effect_name(t[i].effect));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void put_duration(cJSON *spec, const char *key, bool has, kp_duration d)
{
    char text[KP_DURATION_STRLEN];
    if (has)
        cJSON_AddStringToObject(spec, key, kp_duration_format(d, text, sizeof(text)));
}

static cJSON *spec(const kp_nodepool *np, cJSON *claim)
{
    const kp_nodeclaim_spec *t = &np->template;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(s, "requirements", cJSON_DetachItemFromObjectCaseSensitive(claim, "requirements"));
    cJSON *resources = cJSON_AddObjectToObject(s, "resources");
    cJSON_AddItemToObject(resources, "requests", cJSON_DetachItemFromObjectCaseSensitive(claim, "requests"));
    if (t->n_taints)
        cJSON_AddItemToObject(s, "taints", taints(t->taints, t->n_taints));
    if (t->n_startup_taints)
        cJSON_AddItemToObject(s, "startupTaints", taints(t->startup_taints, t->n_startup_taints));
    if (t->has_node_class_ref) {
        cJSON *ref = cJSON_AddObjectToObject(s, "nodeClassRef");
        cJSON_AddStringToObject(ref, "group", t->node_class_ref.group ? t->node_class_ref.group : "");
        cJSON_AddStringToObject(ref, "kind", t->node_class_ref.kind ? t->node_class_ref.kind : "");
        cJSON_AddStringToObject(ref, "name", t->node_class_ref.name ? t->node_class_ref.name : "");
    }
    put_duration(s, "expireAfter", t->has_expire_after, t->expire_after);
    put_duration(s, "terminationGracePeriod", t->has_termination_grace_period, t->termination_grace_period);
    return s;
}

/* Karpenter marks claims one of whose instance types a NodeOverlay changed. */
static void overlay_annotations(cJSON *meta, const kp_plan_claim *c, const kp_snapshot *snap)
{
    bool price = false, capacity = false;
    for (uint32_t k = 0; k < c->n_its; k++) {
        const kp_instance_type *src = snap->its[c->its[k]].src;
        price |= src && src->price_overlaid;
        capacity |= src && src->capacity_overlaid;
    }
    cJSON *annotations = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    if (price) put_string(annotations, KP_ANNOTATION_PRICE_OVERLAY_APPLIED, "true");
    if (capacity) put_string(annotations, KP_ANNOTATION_CAPACITY_OVERLAY_APPLIED, "true");
}

/* ------------------------------------------------------------ static */

static cJSON *requirement_json(const char *key, const char *op, const char *const *values, size_t n, int32_t min)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", key);
    cJSON_AddStringToObject(o, "operator", op);
    if (n)
        cJSON_AddItemToObject(o, "values", cJSON_CreateStringArray(values, (int)n));
    if (min > 0)
        cJSON_AddNumberToObject(o, "minValues", min);
    return o;
}

/* `key In [value]` in place of any requirement on `key` (a label pins it). */
static void pin(cJSON *reqs, const char *key, const char *value)
{
    for (int i = cJSON_GetArraySize(reqs) - 1; i >= 0; i--) {
        const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(reqs, i), "key"));
        if (k && strcmp(k, key) == 0)
            cJSON_DeleteItemFromArray(reqs, i);
    }
    cJSON_AddItemToArray(reqs, requirement_json(key, "In", &value, 1, 0));
}

/* A static NodePool's NodeClaim, as Karpenter makes one from the template
 * alone: the template's requirements with its labels (and the NodePool's
 * and node class's) added as requirements; no instance-type list (the cloud
 * provider launches the cheapest offering they allow) and no requests. Its
 * labels are the planned claim's: the template's and a value for every
 * custom key the requirements constrain. */
static cJSON *static_object(const kp_nodepool *np, cJSON *planned, const char *pool_hash)
{
    const kp_nodeclaim_spec *t = &np->template;
    cJSON *pins = metadata(np, cJSON_CreateObject(), pool_hash);
    cJSON *meta = metadata(np, cJSON_DetachItemFromObjectCaseSensitive(planned, "labels"), pool_hash);
    cJSON *reqs = cJSON_CreateArray();
    for (size_t i = 0; i < t->n_requirements; i++)
        cJSON_AddItemToArray(reqs, requirement_json(t->requirements[i].key, kp_selector_op_name(t->requirements[i].op),
                                                    (const char *const *)t->requirements[i].values,
                                                    t->requirements[i].n_values, t->requirements[i].min_values));
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(pins, "labels"))
    {
        if (cJSON_IsString(l))
            pin(reqs, l->string, l->valuestring);
    }
    cJSON_Delete(pins);
    cJSON_DeleteItemFromObjectCaseSensitive(planned, "requirements");
    cJSON_DeleteItemFromObjectCaseSensitive(planned, "requests");
    cJSON_AddItemToObject(planned, "requirements", reqs);
    cJSON_AddObjectToObject(planned, "requests");
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "apiVersion", "karpenter.sh/v1");
    cJSON_AddStringToObject(obj, "kind", "NodeClaim");
    cJSON_AddItemToObject(obj, "metadata", meta);
    cJSON_AddItemToObject(obj, "spec", spec(np, planned));
    return obj;
}

/* ----------------------------------------------------------- the object */

cJSON *kp_nodeclaim_object(const kp_plan *plan, const kp_snapshot *snap, uint32_t claim, const char *pool_hash)
{
    const kp_nodepool *np = snap->templates[plan->claims[claim].template_index].src;
    if (!np)
        return NULL;
    cJSON *planned = kp_plan_claim_json(plan, snap, claim);
    cJSON *obj;
    if (snap->templates[plan->claims[claim].template_index].is_static) {
        obj = static_object(np, planned, pool_hash);
    } else {
        obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "apiVersion", "karpenter.sh/v1");
        cJSON_AddStringToObject(obj, "kind", "NodeClaim");
        cJSON *meta = metadata(np, cJSON_DetachItemFromObjectCaseSensitive(planned, "labels"), pool_hash);
        overlay_annotations(meta, &plan->claims[claim], snap);
        cJSON_AddItemToObject(obj, "metadata", meta);
        cJSON_AddItemToObject(obj, "spec", spec(np, planned));
    }
    cJSON_Delete(planned);
    return obj;
}
