/*
 * NodeOverlay (karpenter.sh/v1alpha1) validation: the CRD schema with its
 * CEL rules and Karpenter's RuntimeValidate (requirement keys and values as
 * for NodePools, no well-known resource in capacity). The controller runs the
 * same rules on overlays that reached the cluster another way and reports a
 * failure as ValidationSucceeded=False, reason RuntimeValidation.
 */
#include "api/crd_tables.h"
#include "api/nodeoverlay.h"
#include "api/validate_internal.h"

#include <string.h>

static void price(kp_vctx *v, const cJSON *spec, const char *name, bool adjustment)
{
    const char *s = kp_v_string(v, spec, name);
    kp_price_change c;
    if (!s || kp_price_change_parse(s, adjustment, &c) == 0) return;
    kp_v_push(v, name);
    kp_v_pattern(
        v, s, adjustment ? KP_CRD_OVERLAY_PRICE_ADJUSTMENT_PATTERN : KP_CRD_OVERLAY_PRICE_PATTERN);
    kp_v_pop(v);
}

/* Capacity adds extended resources; the node's own resources are the cloud's. */
static void capacity(kp_vctx *v, const cJSON *spec)
{
    kp_v_quantity_map(v, spec, "capacity", false);
    const cJSON *map = kp_v_get(spec, "capacity"), *e;
    if (!cJSON_IsObject(map)) return;
    kp_v_push(v, "capacity");
    cJSON_ArrayForEach(e, map)
    {
        if (!e->string || !kp_nodeoverlay_resource_restricted(e->string)) continue;
        kp_v_push_key(v, e->string);
        kp_v_invalid(v, e,
                     "invalid resource restricted: %s cannot be set, capacity only adds extended "
                     "resources (not cpu, memory, ephemeral-storage or pods)",
                     e->string);
        kp_v_pop(v);
    }
    kp_v_pop(v);
}

void kp_validate_nodeoverlay(kp_vctx *v, const cJSON *obj, const cJSON *old)
{
    (void)old; /* no transition rules */
    const cJSON *spec = kp_v_required_object(v, obj, "spec");
    if (!spec) return;
    kp_v_push(v, "spec");
    kp_v_requirements(v, spec, KP_V_NODEOVERLAY);
    price(v, spec, "price", false);
    price(v, spec, "priceAdjustment", true);
    if (kp_v_has(spec, "price") && kp_v_has(spec, "priceAdjustment"))
        kp_v_invalid(v, spec, "cannot set both 'price' and 'priceAdjustment'");
    capacity(v, spec);
    kp_v_int(v, spec, "weight", KP_CRD_OVERLAY_WEIGHT_MIN, KP_CRD_OVERLAY_WEIGHT_MAX, NULL);
    kp_v_pop(v);
    kp_v_warn(v, "NodeOverlay is an alpha feature of Karpenter: it takes effect only where the "
                 "controller runs with the NodeOverlay feature gate on");
}
