/*
 * storage.k8s.io/v1 CSINode: for each CSI driver on a node, how many volumes
 * it may attach there (spec.drivers[].allocatable.count).
 */
#include "api/decode_internal.h"

#include "api/decode.h"

static int decode_allocatable(kp_decoder *d, const cJSON *json, void *out)
{
    kp_csinode_driver *drv = out;
    int err = kp_dec_int32(d, json, "count", &drv->count, &drv->has_count);
    if (err == 0 && drv->has_count && drv->count < 0)
        return kp_dec_fail_at(d, "count", "Invalid value: %d: must be greater than or equal to 0", (int)drv->count);
    return err;
}

static int decode_driver(kp_decoder *d, const cJSON *json, void *out)
{
    kp_csinode_driver *drv = out;
    int err;
    if ((err = kp_dec_string(d, json, "name", &drv->name)) < 0 ||
        (err = kp_dec_object(d, json, "allocatable", decode_allocatable, drv, NULL)) < 0)
        return err;
    return 0;
}

static int decode_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_csinode *n = out;
    return KP_DEC_ARRAY(d, json, "drivers", decode_driver, n->drivers, n->n_drivers);
}

int kp_decode_csinode(kp_arena *arena, const cJSON *json, kp_csinode *out)
{
    kp_decoder d;
    kp_csinode n = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &n.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_spec, &n, NULL);
    if (err == 0) *out = n;
    return err;
}
