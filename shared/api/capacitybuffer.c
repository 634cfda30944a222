/* CapacityBuffers: decoding, chunks, virtual pods, conditions (see the header). */
#include "api/capacitybuffer.h"
#include "api/decode_internal.h"
#include "api/quantity.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- decoding */

static bool is(const cJSON *json, const char *api_version, const char *kind)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(json, "apiVersion");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(json, "kind");
    return cJSON_IsString(a) && cJSON_IsString(k) && !strcmp(a->valuestring, api_version) &&
           !strcmp(k->valuestring, kind);
}

bool kp_is_capacity_buffer(const cJSON *json)
{
    return is(json, KP_BUFFER_API_VERSION, KP_BUFFER_KIND);
}

bool kp_is_pod_template(const cJSON *json)
{
    return is(json, "v1", "PodTemplate");
}

static int dec_template_ref(kp_decoder *d, const cJSON *json, void *out)
{
    kp_capacity_buffer *cb = out;
    int err = kp_dec_string(d, json, "name", &cb->pod_template_ref);
    if (!err && !*cb->pod_template_ref)
        err = kp_dec_required(d, "name");
    return err;
}

static int dec_scalable_ref(kp_decoder *d, const cJSON *json, void *out)
{
    kp_capacity_buffer *cb = out;
    int err;
    if ((err = kp_dec_string(d, json, "apiGroup", &cb->scalable_api_group)) < 0 ||
        (err = kp_dec_string(d, json, "kind", &cb->scalable_kind)) < 0 ||
        (err = kp_dec_string(d, json, "name", &cb->scalable_name)) < 0)
        return err;
    if (!*cb->scalable_kind)
        return kp_dec_required(d, "kind");
    return *cb->scalable_name ? 0 : kp_dec_required(d, "name");
}

static int non_negative(kp_decoder *d, const char *field, bool has, int32_t v)
{
    return has && v < 0 ? kp_dec_fail_at(d, field, "Invalid value: %d: must be greater than or equal to 0", (int)v)
                        : 0;
}

static int dec_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_capacity_buffer *cb = out;
    bool has_template = kp_dec_get(json, "podTemplateRef") != NULL, has_strategy = false;
    int err = 0;
    cb->has_scalable_ref = kp_dec_get(json, "scalableRef") != NULL;
    if ((err = kp_dec_string_p(d, json, "provisioningStrategy", &cb->provisioning_strategy, &has_strategy)) < 0 ||
        (has_template && (err = kp_dec_object(d, json, "podTemplateRef", dec_template_ref, cb, NULL)) < 0) ||
        (cb->has_scalable_ref && (err = kp_dec_object(d, json, "scalableRef", dec_scalable_ref, cb, NULL)) < 0) ||
        (err = kp_dec_int32(d, json, "replicas", &cb->replicas, &cb->has_replicas)) < 0 ||
        (err = kp_dec_int32(d, json, "percentage", &cb->percentage, &cb->has_percentage)) < 0 ||
        (err = kp_dec_resources(d, json, "limits", &cb->limits)) < 0 ||
        (err = non_negative(d, "replicas", cb->has_replicas, cb->replicas)) < 0 ||
        (err = non_negative(d, "percentage", cb->has_percentage, cb->percentage)) < 0)
        return err;
    cb->has_limits = kp_dec_get(json, "limits") != NULL;
    if (!has_template)
        cb->pod_template_ref = NULL;
    if (!has_strategy)
        cb->provisioning_strategy = NULL;
    /* The CRD's CEL rules, for API servers without CEL (1.20-1.24). */
    if (has_template && cb->has_scalable_ref)
        return kp_dec_fail(d, "You must define either PodTemplateRef or ScalableRef, but not both");
    if (has_template && !cb->has_replicas && !cb->has_limits)
        return kp_dec_fail(d, "If podTemplateRef is set, replicas or limits must also be set");
    return 0;
}

static int dec_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_capacity_buffer *cb = out;
    int err = kp_dec_int32(d, json, "replicas", &cb->status_replicas, &cb->has_status_replicas);
    return err ? err : kp_dec_conditions(d, json, "conditions", &cb->conditions);
}

int kp_decode_capacity_buffer(kp_arena *arena, const cJSON *json, kp_capacity_buffer *out)
{
    kp_decoder d;
    kp_capacity_buffer cb;
    memset(&cb, 0, sizeof(cb));
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    bool has_spec = false;
    if (!err)
        err = kp_dec_meta(&d, json, &cb.meta);
    if (!err)
        err = kp_dec_object(&d, json, "spec", dec_spec, &cb, &has_spec);
    if (!err && !has_spec)
        err = kp_dec_required(&d, "spec");
    if (!err)
        err = kp_dec_object(&d, json, "status", dec_status, &cb, NULL);
    if (!err)
        *out = cb;
    return err;
}

int kp_decode_pod_template_object(kp_arena *arena, const cJSON *json, kp_pod *out)
{
    kp_decoder d;
    kp_pod pod;
    kp_object_meta meta;
    memset(&pod, 0, sizeof(pod));
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (!err)
        err = kp_dec_meta(&d, json, &meta);
    if (!err)
        err = kp_dec_pod_template(&d, json, "template", &pod);
    if (!err) {
        pod.meta.namespace = meta.namespace;
        *out = pod;
    }
    return err;
}

/* --------------------------------------------------------------- chunks */

const char *kp_capacity_buffer_scalable_unsupported(const kp_capacity_buffer *cb, kp_arena *arena)
{
    const char *group = cb->scalable_api_group && *cb->scalable_api_group ? cb->scalable_api_group : "apps";
    if (strcmp(group, "apps") != 0)
        return kp_arena_printf(arena, "unsupported scalableRef API group \"%s\"", cb->scalable_api_group);
    if (strcmp(cb->scalable_kind, "Deployment") && strcmp(cb->scalable_kind, "StatefulSet") &&
        strcmp(cb->scalable_kind, "ReplicaSet"))
        return kp_arena_printf(arena, "unsupported kind \"%s\"", cb->scalable_kind);
    return NULL;
}

/* How many pods of `pod` the limits hold: the least, over the resources both
 * name, of floor(limit / request); false when they share none. */
static bool limit_replicas(const kp_resource_list *limits, const kp_pod *pod, int32_t *out)
{
    bool matched = false;
    int64_t least = INT32_MAX;
    for (size_t i = 0; i < limits->count; i++) {
        const kp_quantity *req = kp_resource_list_get(&pod->requests, limits->items[i].name);
        if (!req || kp_quantity_is_zero(*req))
            continue;
        matched = true;
        double n = floor((double)kp_quantity_milli_value(limits->items[i].quantity) /
                         (double)kp_quantity_milli_value(*req));
        int64_t k = n > INT32_MAX ? INT32_MAX : n < 0 ? 0 : (int64_t)n;
        if (k < least)
            least = k;
    }
    *out = (int32_t)least;
    return matched;
}

/* ceil(replicas x percentage / 100), at least 1 when both are positive. */
static int32_t percentage_replicas(int32_t scalable, int32_t percentage)
{
    double n = ceil((double)scalable * (double)percentage / 100.0);
    int32_t r = n > INT32_MAX ? INT32_MAX : (int32_t)n;
    return r < 1 && percentage > 0 && scalable > 0 ? 1 : r;
}

int32_t kp_capacity_buffer_replicas(const kp_capacity_buffer *cb, const kp_pod *pod, int32_t scalable_replicas)
{
    bool sized = false;
    int32_t want = 0, by_limits;
    if (cb->has_percentage && scalable_replicas > 0)
        want = percentage_replicas(scalable_replicas, cb->percentage), sized = true;
    if (cb->has_replicas)
        want = !sized || cb->replicas > want ? cb->replicas : want, sized = true;
    if (cb->has_limits && pod && limit_replicas(&cb->limits, pod, &by_limits))
        return sized && want < by_limits ? want : by_limits;
    return want;
}

/* ------------------------------------------------------------ resolving */

static int not_ready(kp_buffer_resolved *out, int err, const char *not_found_reason, const char *message)
{
    out->ready = false;
    out->reason = err == KP_ENOTFOUND ? not_found_reason : "ResolutionFailed";
    out->message = message;
    return err == KP_ENOTFOUND || err == KP_EINVALID ? 0 : err;
}

static int resolve_template(const kp_capacity_buffer *cb, const kp_buffer_lookup *lk, kp_arena *arena,
                            kp_buffer_resolved *out, kp_pod *pod)
{
    int err = lk->pod_template(lk->ctx, cb->meta.namespace, cb->pod_template_ref, arena, pod,
                               &out->pod_template_generation);
    if (err < 0)
        return not_ready(out, err, "PodTemplateNotFound", kp_arena_strdup(arena, kp_error_last()));
    out->pod_template = cb->pod_template_ref;
    out->replicas = kp_capacity_buffer_replicas(cb, pod, -1);
    return 0;
}

static int resolve_scalable(const kp_capacity_buffer *cb, const kp_buffer_lookup *lk, kp_arena *arena,
                            kp_buffer_resolved *out, kp_pod *pod)
{
    const char *why = kp_capacity_buffer_scalable_unsupported(cb, arena);
    if (why)
        return not_ready(out, KP_EINVALID, NULL, why);
    kp_workload w;
    int err = lk->workload(lk->ctx, cb->meta.namespace, cb->scalable_kind, cb->scalable_name, arena, &w);
    if (err < 0)
        return not_ready(out, err, "ScalableRefNotFound", kp_arena_strdup(arena, kp_error_last()));
    *pod = w.template;
    out->replicas = kp_capacity_buffer_replicas(cb, pod, w.replicas);
    return 0;
}

int kp_capacity_buffer_resolve(const kp_capacity_buffer *cb, const kp_buffer_lookup *lookup, kp_arena *arena,
                               kp_buffer_resolved *out)
{
    memset(out, 0, sizeof(*out));
    kp_pod *pod = KP_ARENA_NEW(arena, kp_pod, 1);
    int err;
    if (cb->provisioning_strategy && strcmp(cb->provisioning_strategy, KP_BUFFER_ACTIVE_STRATEGY) != 0)
        return not_ready(out, KP_EINVALID, NULL,
                         kp_arena_printf(arena, "provisioningStrategy \"%s\" is not supported (only %s)",
                                         cb->provisioning_strategy, KP_BUFFER_ACTIVE_STRATEGY));
    if (cb->pod_template_ref)
        err = resolve_template(cb, lookup, arena, out, pod);
    else if (cb->has_scalable_ref)
        err = resolve_scalable(cb, lookup, arena, out, pod);
    else
        return not_ready(out, KP_EINVALID, NULL, "Neither podTemplateRef nor scalableRef is set");
    if (err < 0 || out->reason)
        return err;
    out->ready = true;
    out->reason = "Resolved";
    out->message = "Pod template resolved successfully";
    out->pod = pod;
    return 0;
}

/* ---------------------------------------------------------- virtual pods */

/* PVC-backed and ephemeral volumes need a claim that will never exist. */
static void drop_claim_volumes(kp_arena *arena, kp_pod *pod)
{
    kp_volume *kept = KP_ARENA_NEW(arena, kp_volume, pod->n_volumes ? pod->n_volumes : 1);
    size_t n = 0;
    for (size_t i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].kind != KP_VOLUME_PVC && pod->volumes[i].kind != KP_VOLUME_EPHEMERAL)
            kept[n++] = pod->volumes[i];
    pod->volumes = kept;
    pod->n_volumes = n;
}

static kp_labels two_labels(kp_arena *arena, const char *k1, const char *v1, const char *k2, const char *v2)
{
    kp_labels l = {KP_ARENA_NEW(arena, kp_label, 2), 2};
    l.items[0] = (kp_label){k1, v1}; /* sorted by key */
    l.items[1] = (kp_label){k2, v2};
    return l;
}

kp_pod *kp_capacity_buffer_virtual_pod(kp_arena *arena, const kp_capacity_buffer *cb, const kp_pod *template,
                                       int32_t i)
{
    kp_pod *pod = kp_arena_memdup(arena, template, sizeof(*pod));
    memset(&pod->meta, 0, sizeof(pod->meta)); /* a new object: only the template's spec is kept */
    pod->meta.name = kp_arena_printf(arena, "capacity-buffer-%s-%d", cb->meta.name, (int)i);
    pod->meta.namespace = cb->meta.namespace;
    pod->meta.uid = kp_arena_printf(arena, "%s-%d", cb->meta.uid ? cb->meta.uid : cb->meta.name, (int)i);
    pod->meta.resource_version = pod->meta.generate_name = "";
    pod->meta.annotations = (kp_labels){KP_ARENA_NEW(arena, kp_label, 1), 1};
    pod->meta.annotations.items[0] = (kp_label){KP_BUFFER_FAKE_POD_ANNOTATION, "true"};
    pod->meta.labels = two_labels(arena, KP_BUFFER_NAME_LABEL, cb->meta.name, KP_BUFFER_NAMESPACE_LABEL,
                                  cb->meta.namespace);
    pod->node_name = "";
    pod->nominated_node_name = "";
    pod->has_priority = true;
    pod->priority = INT32_MIN;
    pod->controller_kind = pod->controller_name = "";
    pod->owned_by_daemonset = pod->owned_by_statefulset = pod->owned_by_node = pod->is_mirror = false;
    pod->phase = KP_POD_PHASE_PENDING;
    pod->failed_to_schedule = true;
    memset(&pod->conditions, 0, sizeof(pod->conditions));
    drop_claim_volumes(arena, pod);
    return pod;
}

bool kp_pod_is_buffer_virtual(const kp_pod *p, const char **ns, const char **name)
{
    const char *v = p ? kp_labels_get(&p->meta.annotations, KP_BUFFER_FAKE_POD_ANNOTATION) : NULL;
    if (!v || strcmp(v, "true") != 0)
        return false;
    if (ns)
        *ns = kp_labels_get(&p->meta.labels, KP_BUFFER_NAMESPACE_LABEL);
    if (name)
        *name = kp_labels_get(&p->meta.labels, KP_BUFFER_NAME_LABEL);
    return true;
}

/* ------------------------------------------------------------ condition */

bool kp_capacity_buffer_provisioning(const kp_capacity_buffer *cb, const kp_buffer_outcome *o, const char **status,
                                     const char **reason, char *message, size_t size)
{
    int32_t want = cb->has_status_replicas ? cb->status_replicas : 0;
    if (!kp_conditions_is_true(&cb->conditions, KP_BUFFER_READY_FOR_PROVISIONING)) {
        *status = "False", *reason = "NotReadyForProvisioning";
        snprintf(message, size, "Buffer is not ReadyForProvisioning");
    } else if (want == 0) {
        *status = "False", *reason = "BufferEmpty";
        snprintf(message, size, "Buffer has zero desired replicas");
    } else if (!o) {
        return false;
    } else if (o->new_claim > 0 || o->failed > 0) {
        *status = "False", *reason = "RequiresNewCapacity";
        snprintf(message, size, "%u/%d virtual pods required new capacity, %u failed", o->new_claim, (int)want,
                 o->failed);
    } else if (o->existing == (uint32_t)want) {
        *status = "True", *reason = "FitsExistingCapacity";
        snprintf(message, size, "All %d virtual pods fit on existing capacity", (int)want);
    } else {
        return false;
    }
    return true;
}
