/*
 * Karpenter's karpenter.sh/v1 NodePool and NodeClaim.
 */
#include "api/decode_internal.h"

#include "api/crd_tables.h"
#include "api/decode.h"

#include <string.h>

/* --------------------------------------------------------- NodeClaim spec */

static int decode_node_class_ref(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_class_ref *ref = out;
    int err;
    if ((err = kp_dec_string(d, json, "group", &ref->group)) < 0 ||
        (err = kp_dec_string(d, json, "kind", &ref->kind)) < 0 ||
        (err = kp_dec_string(d, json, "name", &ref->name)) < 0)
        return err;
    return 0;
}

/* NodeClaimTemplateSpec: everything of NodeClaimSpec but resources. */
static int decode_template_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodeclaim_spec *s = out;
    int err;
    if ((err = kp_dec_node_requirements(d, json, "requirements", true, &s->requirements,
                                        &s->n_requirements)) < 0 ||
        (err = kp_dec_taints(d, json, "taints", &s->taints, &s->n_taints)) < 0 ||
        (err = kp_dec_taints(d, json, "startupTaints", &s->startup_taints, &s->n_startup_taints)) <
            0 ||
        (err = kp_dec_object(d, json, "nodeClassRef", decode_node_class_ref, &s->node_class_ref,
                             &s->has_node_class_ref)) < 0 ||
        (err = kp_dec_duration(d, json, "expireAfter", true, &s->expire_after,
                               &s->has_expire_after)) < 0 ||
        (err = kp_dec_duration(d, json, "terminationGracePeriod", false,
                               &s->termination_grace_period, &s->has_termination_grace_period)) < 0)
        return err;
    return 0;
}

static int decode_claim_resources(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodeclaim_spec *s = out;
    return kp_dec_resources(d, json, "requests", &s->resource_requests);
}

static int decode_nodeclaim_spec(kp_decoder *d, const cJSON *json, void *out)
{
    int err = decode_template_spec(d, json, out);
    if (err == 0) err = kp_dec_object(d, json, "resources", decode_claim_resources, out, NULL);
    return err;
}

/* ------------------------------------------------------------- disruption */

/* The CRD's names (api/crd_tables.h) for the object model's values. */
static const enum kp_consolidation_policy policies[KP_CRD_CONSOLIDATION_POLICY_COUNT] = {
    [KP_CRD_CONSOLIDATION_POLICY_WHEN_EMPTY] = KP_CONSOLIDATION_WHEN_EMPTY,
    [KP_CRD_CONSOLIDATION_POLICY_WHEN_EMPTY_OR_UNDERUTILIZED] =
        KP_CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED,
    [KP_CRD_CONSOLIDATION_POLICY_BALANCED] = KP_CONSOLIDATION_BALANCED,
};

static const unsigned reason_bits[KP_CRD_BUDGET_REASON_COUNT] = {
    [KP_CRD_BUDGET_REASON_UNDERUTILIZED] = KP_REASON_UNDERUTILIZED,
    [KP_CRD_BUDGET_REASON_EMPTY] = KP_REASON_EMPTY,
    [KP_CRD_BUDGET_REASON_DRIFTED] = KP_REASON_DRIFTED,
};

unsigned kp_budget_reason_bit(const char *name)
{
    for (size_t r = 0; name && r < KP_CRD_BUDGET_REASON_COUNT; r++)
        if (strcmp(kp_crd_budget_reason_names[r], name) == 0) return reason_bits[r];
    return 0;
}

const char *kp_consolidation_policy_name(enum kp_consolidation_policy policy)
{
    for (size_t i = 0; i < KP_CRD_CONSOLIDATION_POLICY_COUNT; i++)
        if (policies[i] == policy) return kp_crd_consolidation_policy_names[i];
    return KP_CRD_CONSOLIDATION_POLICY_DEFAULT;
}

static int decode_reasons(kp_decoder *d, const cJSON *json, kp_budget *b)
{
    kp_strings reasons;
    int err = kp_dec_strings(d, json, "reasons", &reasons);
    if (err < 0) return err;
    b->has_reasons = kp_dec_get(json, "reasons") != NULL;
    for (size_t i = 0; i < reasons.count; i++) {
        unsigned bit = kp_budget_reason_bit(reasons.items[i]);
        if (bit) {
            b->reasons |= bit;
            continue;
        }
        kp_path_push_field(&d->path, "reasons");
        kp_path_push_index(&d->path, i);
        err = kp_dec_unsupported(d, reasons.items[i], kp_crd_budget_reason_names,
                                 KP_CRD_BUDGET_REASON_COUNT);
        kp_path_pop(&d->path);
        kp_path_pop(&d->path);
        return err;
    }
    return 0;
}

static int decode_budget(kp_decoder *d, const cJSON *json, void *out)
{
    kp_budget *b = out;
    int err;
    if ((err = kp_dec_string(d, json, "nodes", &b->nodes)) < 0 ||
        (err = kp_dec_string_p(d, json, "schedule", &b->schedule, &b->has_schedule)) < 0 ||
        (err = kp_dec_duration(d, json, "duration", false, &b->duration, &b->has_duration)) < 0 ||
        (err = decode_reasons(d, json, b)) < 0)
        return err;
    return 0;
}

static int decode_disruption(kp_decoder *d, const cJSON *json, void *out)
{
    kp_disruption *dis = out;
    int policy = -1;
    int err;
    if ((err = kp_dec_enum_index(d, json, "consolidationPolicy", kp_crd_consolidation_policy_names,
                                 &policy)) < 0 ||
        (err = kp_dec_duration(d, json, "consolidateAfter", true, &dis->consolidate_after,
                               &dis->has_consolidate_after)) < 0 ||
        (err = kp_dec_array_into(d, json, "budgets", sizeof(kp_budget), decode_budget,
                                 &dis->budgets, &dis->n_budgets, &dis->has_budgets)) < 0)
        return err;
    dis->consolidation_policy = policy < 0 ? KP_CONSOLIDATION_UNSET : policies[policy];
    return 0;
}

/* --------------------------------------------------------------- NodePool */

static int decode_template_meta(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodepool *np = out;
    int err;
    if ((err = kp_dec_labels(d, json, "labels", &np->template_labels)) < 0 ||
        (err = kp_dec_labels(d, json, "annotations", &np->template_annotations)) < 0)
        return err;
    return 0;
}

static int decode_nodepool_template(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodepool *np = out;
    int err;
    if ((err = kp_dec_object(d, json, "metadata", decode_template_meta, np, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "spec", decode_template_spec, &np->template, NULL)) < 0)
        return err;
    return 0;
}

static int decode_nodepool_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodepool *np = out;
    int err;
    if ((err = kp_dec_object(d, json, "template", decode_nodepool_template, np, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "disruption", decode_disruption, &np->disruption, NULL)) <
            0 ||
        (err = kp_dec_resources(d, json, "limits", &np->limits)) < 0 ||
        (err = kp_dec_int32(d, json, "weight", &np->weight, &np->has_weight)) < 0 ||
        (err = kp_dec_int64(d, json, "replicas", &np->replicas, &np->has_replicas)) < 0)
        return err;
    return 0;
}

static int decode_nodepool_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodepool *np = out;
    int err;
    if ((err = kp_dec_resources(d, json, "resources", &np->status_resources)) < 0 ||
        (err = kp_dec_int64(d, json, "nodes", &np->status_nodes, &np->has_status_nodes)) < 0 ||
        (err = kp_dec_int64(d, json, "nodeClassObservedGeneration",
                            &np->node_class_observed_generation, NULL)) < 0 ||
        (err = kp_dec_conditions(d, json, "conditions", &np->conditions)) < 0)
        return err;
    return 0;
}

int kp_decode_nodepool(kp_arena *arena, const cJSON *json, kp_nodepool *out)
{
    kp_decoder d;
    kp_nodepool np = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &np.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_nodepool_spec, &np, NULL);
    if (err == 0) err = kp_dec_object(&d, json, "status", decode_nodepool_status, &np, NULL);
    if (err == 0) *out = np;
    return err;
}

/* -------------------------------------------------------------- NodeClaim */

static int decode_nodeclaim_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodeclaim *nc = out;
    int err;
    if ((err = kp_dec_string(d, json, "providerID", &nc->provider_id)) < 0 ||
        (err = kp_dec_string(d, json, "nodeName", &nc->node_name)) < 0 ||
        (err = kp_dec_string(d, json, "imageID", &nc->image_id)) < 0 ||
        (err = kp_dec_resources(d, json, "capacity", &nc->capacity)) < 0 ||
        (err = kp_dec_resources(d, json, "allocatable", &nc->allocatable)) < 0 ||
        (err = kp_dec_conditions(d, json, "conditions", &nc->conditions)) < 0 ||
        (err = kp_dec_time(d, json, "lastPodEventTime", &nc->last_pod_event_time)) < 0)
        return err;
    return 0;
}

int kp_decode_nodeclaim(kp_arena *arena, const cJSON *json, kp_nodeclaim *out)
{
    kp_decoder d;
    kp_nodeclaim nc = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &nc.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_nodeclaim_spec, &nc.spec, NULL);
    if (err == 0) err = kp_dec_object(&d, json, "status", decode_nodeclaim_status, &nc, NULL);
    if (err == 0) *out = nc;
    return err;
}
