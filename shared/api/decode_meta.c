/*
 * Pieces every kind shares: object metadata, status conditions, label and
 * node selectors (with Karpenter's minValues and Gte/Lte), taints and
 * tolerations.
 */
#include "api/decode_internal.h"

#include <string.h>

/* ------------------------------------------------------------- metadata */

static int decode_owner_ref(kp_decoder *d, const cJSON *json, void *out)
{
    kp_owner_ref *ref = out;
    int err;
    if ((err = kp_dec_string(d, json, "apiVersion", &ref->api_version)) < 0 ||
        (err = kp_dec_string(d, json, "kind", &ref->kind)) < 0 ||
        (err = kp_dec_string(d, json, "name", &ref->name)) < 0 ||
        (err = kp_dec_string(d, json, "uid", &ref->uid)) < 0 ||
        (err = kp_dec_bool(d, json, "controller", &ref->controller, NULL)) < 0 ||
        (err = kp_dec_bool(d, json, "blockOwnerDeletion", &ref->block_owner_deletion, NULL)) < 0)
        return err;
    return 0;
}

static int decode_meta_body(kp_decoder *d, const cJSON *json, void *out)
{
    kp_object_meta *m = out;
    int err;
    if ((err = kp_dec_string(d, json, "name", &m->name)) < 0 ||
        (err = kp_dec_string(d, json, "generateName", &m->generate_name)) < 0 ||
        (err = kp_dec_string(d, json, "namespace", &m->namespace)) < 0 ||
        (err = kp_dec_string(d, json, "uid", &m->uid)) < 0 ||
        (err = kp_dec_string(d, json, "resourceVersion", &m->resource_version)) < 0 ||
        (err = kp_dec_int64(d, json, "generation", &m->generation, NULL)) < 0 ||
        (err = kp_dec_time(d, json, "creationTimestamp", &m->creation_timestamp)) < 0 ||
        (err = kp_dec_time(d, json, "deletionTimestamp", &m->deletion_timestamp)) < 0 ||
        (err = kp_dec_labels(d, json, "labels", &m->labels)) < 0 ||
        (err = kp_dec_labels(d, json, "annotations", &m->annotations)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "ownerReferences", decode_owner_ref, m->owner_refs,
                            m->n_owner_refs)) < 0 ||
        (err = kp_dec_strings(d, json, "finalizers", &m->finalizers)) < 0)
        return err;
    return 0;
}

int kp_dec_meta(kp_decoder *d, const cJSON *obj, kp_object_meta *out)
{
    return kp_dec_object(d, obj, "metadata", decode_meta_body, out, NULL);
}

/* ------------------------------------------------------------ conditions */

static int decode_condition(kp_decoder *d, const cJSON *json, void *out)
{
    kp_condition *c = out;
    const char *status;
    int err;
    if ((err = kp_dec_string(d, json, "type", &c->type)) < 0 ||
        (err = kp_dec_string(d, json, "status", &status)) < 0 ||
        (err = kp_dec_string(d, json, "reason", &c->reason)) < 0 ||
        (err = kp_dec_string(d, json, "message", &c->message)) < 0 ||
        (err = kp_dec_time(d, json, "lastTransitionTime", &c->last_transition_time)) < 0 ||
        (err = kp_dec_int64(d, json, "observedGeneration", &c->observed_generation, NULL)) < 0)
        return err;
    c->status = strcmp(status, "True") == 0    ? KP_CONDITION_TRUE
                : strcmp(status, "False") == 0 ? KP_CONDITION_FALSE
                                               : KP_CONDITION_UNKNOWN;
    return 0;
}

int kp_dec_conditions(kp_decoder *d, const cJSON *obj, const char *name, kp_conditions *out)
{
    return KP_DEC_ARRAY(d, obj, name, decode_condition, out->items, out->count);
}

/* ------------------------------------------------------------- selectors */

/* The operators a kind of requirement admits are the first `limit` of the
 * enum (requirements.h): label selectors, node selectors, Karpenter's. */
static int decode_operator(kp_decoder *d, const cJSON *json, int limit, enum kp_selector_op *out)
{
    const char *text;
    bool present;
    int err = kp_dec_string_p(d, json, "operator", &text, &present);
    if (err < 0) return err;
    if (!present) return kp_dec_required(d, "operator");
    int op = kp_selector_op_parse(text);
    if (op >= 0 && op < limit) {
        *out = (enum kp_selector_op)op;
        return 0;
    }
    kp_path_push_field(&d->path, "operator");
    err = kp_dec_unsupported(d, text, kp_selector_op_names(), (size_t)limit);
    kp_path_pop(&d->path);
    return err;
}

static int decode_req(kp_decoder *d, const cJSON *json, kp_selector_req *req, int limit)
{
    kp_strings values;
    int err;
    if ((err = kp_dec_string(d, json, "key", &req->key)) < 0 ||
        (err = decode_operator(d, json, limit, &req->op)) < 0 ||
        (err = kp_dec_strings(d, json, "values", &values)) < 0)
        return err;
    req->values = values.items;
    req->n_values = values.count;
    return 0;
}

static int decode_label_req(kp_decoder *d, const cJSON *json, void *out)
{
    return decode_req(d, json, out, KP_OP_GT);
}

static int decode_node_req(kp_decoder *d, const cJSON *json, void *out)
{
    return decode_req(d, json, out, KP_OP_GTE);
}

static int decode_karpenter_req(kp_decoder *d, const cJSON *json, void *out)
{
    kp_selector_req *req = out;
    int err = decode_req(d, json, req, KP_SELECTOR_OP_COUNT);
    if (err == 0) err = kp_dec_int32(d, json, "minValues", &req->min_values, NULL);
    return err;
}

static int decode_label_selector_body(kp_decoder *d, const cJSON *json, void *out)
{
    kp_label_selector *sel = out;
    int err;
    if ((err = kp_dec_labels(d, json, "matchLabels", &sel->match_labels)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "matchExpressions", decode_label_req, sel->match_expressions,
                            sel->n_match_expressions)) < 0)
        return err;
    return 0;
}

int kp_dec_label_selector(kp_decoder *d, const cJSON *obj, const char *name, kp_label_selector *out)
{
    return kp_dec_object(d, obj, name, decode_label_selector_body, out, &out->present);
}

int kp_dec_node_requirements(kp_decoder *d, const cJSON *obj, const char *name, bool karpenter,
                             kp_selector_req **reqs, size_t *count)
{
    kp_dec_fn fn = karpenter ? decode_karpenter_req : decode_node_req;
    return kp_dec_array_into(d, obj, name, sizeof(**reqs), fn, reqs, count, NULL);
}

static int decode_node_selector_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_selector_term *t = out;
    int err;
    if ((err = KP_DEC_ARRAY(d, json, "matchExpressions", decode_node_req, t->match_expressions,
                            t->n_match_expressions)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "matchFields", decode_node_req, t->match_fields,
                            t->n_match_fields)) < 0)
        return err;
    return 0;
}

int kp_dec_node_selector_terms(kp_decoder *d, const cJSON *obj, const char *name,
                               kp_node_selector_term **terms, size_t *count, bool *present)
{
    return kp_dec_array_into(d, obj, name, sizeof(**terms), decode_node_selector_term, terms, count,
                             present);
}

/* ------------------------------------------------- taints and tolerations */

static size_t name_count(const char *const *names)
{
    size_t n = 0;
    while (names[n])
        n++;
    return n;
}

/* An effect name; "" is allowed only where `allow_any` (tolerations). */
static int decode_effect(kp_decoder *d, const cJSON *json, bool allow_any,
                         enum kp_taint_effect *out)
{
    const char *text;
    int err = kp_dec_string(d, json, "effect", &text);
    if (err < 0) return err;
    if (!*text && !allow_any) return kp_dec_required(d, "effect");
    int effect = kp_taint_effect_parse(text);
    if (effect < 0) {
        kp_path_push_field(&d->path, "effect");
        err = kp_dec_unsupported(d, text, kp_taint_effect_names(),
                                 name_count(kp_taint_effect_names()));
        kp_path_pop(&d->path);
        return err;
    }
    *out = (enum kp_taint_effect)effect;
    return 0;
}

static int decode_taint(kp_decoder *d, const cJSON *json, void *out)
{
    kp_taint *t = out;
    int err;
    if ((err = kp_dec_string(d, json, "key", &t->key)) < 0 ||
        (err = kp_dec_string(d, json, "value", &t->value)) < 0 ||
        (err = decode_effect(d, json, false, &t->effect)) < 0)
        return err;
    return 0;
}

int kp_dec_taints(kp_decoder *d, const cJSON *obj, const char *name, kp_taint **taints,
                  size_t *count)
{
    return kp_dec_array_into(d, obj, name, sizeof(**taints), decode_taint, taints, count, NULL);
}

static int decode_toleration_op(kp_decoder *d, const cJSON *json, enum kp_toleration_op *out)
{
    const char *text;
    int err = kp_dec_string(d, json, "operator", &text);
    if (err < 0) return err;
    int op = kp_toleration_op_parse(text);
    if (op < 0) {
        kp_path_push_field(&d->path, "operator");
        err = kp_dec_unsupported(d, text, kp_toleration_op_names(),
                                 name_count(kp_toleration_op_names()));
        kp_path_pop(&d->path);
        return err;
    }
    *out = (enum kp_toleration_op)op;
    return 0;
}

static int decode_toleration(kp_decoder *d, const cJSON *json, void *out)
{
    kp_toleration *t = out;
    int err;
    if ((err = kp_dec_string(d, json, "key", &t->key)) < 0 ||
        (err = decode_toleration_op(d, json, &t->op)) < 0 ||
        (err = kp_dec_string(d, json, "value", &t->value)) < 0 ||
        (err = decode_effect(d, json, true, &t->effect)) < 0 ||
        (err = kp_dec_int64(d, json, "tolerationSeconds", &t->seconds, &t->has_seconds)) < 0)
        return err;
    return 0;
}

int kp_dec_tolerations(kp_decoder *d, const cJSON *obj, const char *name,
                       kp_toleration **tolerations, size_t *count)
{
    return kp_dec_array_into(d, obj, name, sizeof(**tolerations), decode_toleration, tolerations,
                             count, NULL);
}
