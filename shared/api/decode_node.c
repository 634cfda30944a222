/*
 * Nodes (core/v1).
 */
#include "api/decode_internal.h"

#include "api/decode.h"

static int decode_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node *n = out;
    int err;
    if ((err = kp_dec_string(d, json, "providerID", &n->provider_id)) < 0 ||
        (err = kp_dec_taints(d, json, "taints", &n->taints, &n->n_taints)) < 0 ||
        (err = kp_dec_bool(d, json, "unschedulable", &n->unschedulable, NULL)) < 0)
        return err;
    return 0;
}

static int decode_node_info(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_info *i = out;
    int err;
    if ((err = kp_dec_string(d, json, "kubeletVersion", &i->kubelet_version)) < 0 ||
        (err = kp_dec_string(d, json, "osImage", &i->os_image)) < 0 ||
        (err = kp_dec_string(d, json, "operatingSystem", &i->operating_system)) < 0 ||
        (err = kp_dec_string(d, json, "architecture", &i->architecture)) < 0 ||
        (err = kp_dec_string(d, json, "kernelVersion", &i->kernel_version)) < 0 ||
        (err = kp_dec_string(d, json, "containerRuntimeVersion", &i->container_runtime_version)) <
            0)
        return err;
    return 0;
}

static int decode_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node *n = out;
    int err;
    if ((err = kp_dec_core_resources(d, json, "capacity", &n->capacity)) < 0 ||
        (err = kp_dec_core_resources(d, json, "allocatable", &n->allocatable)) < 0 ||
        (err = kp_dec_conditions(d, json, "conditions", &n->conditions)) < 0 ||
        (err = kp_dec_object(d, json, "nodeInfo", decode_node_info, &n->node_info, NULL)) < 0)
        return err;
    /* The API server defaults allocatable to capacity. */
    if (!kp_dec_get(json, "allocatable")) n->allocatable = n->capacity;
    return 0;
}

static int decode_node(kp_decoder *d, const cJSON *json, kp_node *n)
{
    int err;
    if ((err = kp_dec_meta(d, json, &n->meta)) < 0 ||
        (err = kp_dec_object(d, json, "spec", decode_spec, n, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "status", decode_status, n, NULL)) < 0)
        return err;
    return 0;
}

int kp_decode_node(kp_arena *arena, const cJSON *json, kp_node *out)
{
    kp_decoder d;
    kp_node node = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = decode_node(&d, json, &node);
    if (err == 0) *out = node;
    return err;
}
