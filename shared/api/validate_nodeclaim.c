/*
 * NodeClaim (karpenter.sh/v1) validation: the CRD schema and its CEL rules.
 * NodeClaims are mostly written by Karpenter itself from a NodePool, so the
 * rules are the schema's only (no runtime checks on requirement values), and
 * the whole spec is immutable once created.
 */
#include "api/validate_internal.h"
#include "api/wellknown.h"

void kp_validate_nodeclaim(kp_vctx *v, const cJSON *obj, const cJSON *old)
{
    const cJSON *spec = kp_v_required_object(v, obj, "spec");
    if (!spec) return;
    kp_v_push(v, "spec");
    kp_v_node_class_ref(v, spec, NULL);
    kp_v_requirements(v, spec, KP_V_NODECLAIM);
    kp_v_taints(v, spec, KP_V_NODECLAIM);
    kp_v_duration(v, spec, "expireAfter", KP_VDUR_NILLABLE, NULL, NULL);
    kp_v_duration(v, spec, "terminationGracePeriod", KP_VDUR_PLAIN, NULL, NULL);
    const cJSON *resources = kp_v_object(v, spec, "resources");
    if (resources) {
        kp_v_push(v, "resources");
        kp_v_quantity_map(v, resources, "requests", false);
        kp_v_pop(v);
    }
    const cJSON *old_spec = kp_v_get(old, "spec");
    if (old_spec && !cJSON_Compare(spec, old_spec, true))
        kp_v_invalid(v, spec, "spec is immutable");
    kp_v_pop(v);
}
