/*
 * Volumes: PersistentVolumeClaims, PersistentVolumes and StorageClasses,
 * what the solver needs for volume topology and attach limits.
 */
#include "api/decode_internal.h"

#include "api/decode.h"

/* ------------------------------------------------------------------- PVC */

static const kp_dec_choice pvc_phase_enum[] = {{"Bound", KP_PVC_PHASE_BOUND},
                                               {"Lost", KP_PVC_PHASE_LOST},
                                               {"Pending", KP_PVC_PHASE_PENDING},
                                               {NULL, 0}};

static int decode_pvc_resources(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pvc *pvc = out;
    return kp_dec_core_resources(d, json, "requests", &pvc->requests);
}

static int decode_pvc_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pvc *pvc = out;
    int err;
    if ((err = kp_dec_string_p(d, json, "storageClassName", &pvc->storage_class_name,
                               &pvc->has_storage_class_name)) < 0 ||
        (err = kp_dec_string(d, json, "volumeName", &pvc->volume_name)) < 0 ||
        (err = kp_dec_strings(d, json, "accessModes", &pvc->access_modes)) < 0 ||
        (err = kp_dec_object(d, json, "resources", decode_pvc_resources, pvc, NULL)) < 0)
        return err;
    return 0;
}

static int decode_pvc_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pvc *pvc = out;
    int phase = KP_PVC_PHASE_UNSET;
    int err = kp_dec_enum(d, json, "phase", pvc_phase_enum, false, &phase);
    pvc->phase = (enum kp_pvc_phase)phase;
    return err;
}

int kp_dec_pvc_body(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pvc *pvc = out;
    int err;
    if ((err = kp_dec_meta(d, json, &pvc->meta)) < 0 ||
        (err = kp_dec_object(d, json, "spec", decode_pvc_spec, pvc, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "status", decode_pvc_status, pvc, NULL)) < 0)
        return err;
    return 0;
}

int kp_decode_pvc(kp_arena *arena, const cJSON *json, kp_pvc *out)
{
    kp_decoder d;
    kp_pvc pvc = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_pvc_body(&d, json, &pvc);
    if (err == 0) *out = pvc;
    return err;
}

/* -------------------------------------------------------------------- PV */

static int decode_pv_required(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pv *pv = out;
    return kp_dec_node_selector_terms(d, json, "nodeSelectorTerms", &pv->node_affinity,
                                      &pv->n_node_affinity, NULL);
}

static int decode_pv_node_affinity(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pv *pv = out;
    return kp_dec_object(d, json, "required", decode_pv_required, pv, &pv->has_node_affinity);
}

static int decode_claim_ref(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pv *pv = out;
    int err;
    if ((err = kp_dec_string(d, json, "namespace", &pv->claim_namespace)) < 0 ||
        (err = kp_dec_string(d, json, "name", &pv->claim_name)) < 0)
        return err;
    return 0;
}

static int decode_csi(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pv *pv = out;
    return kp_dec_string(d, json, "driver", &pv->csi_driver);
}

/* Only presence matters for local and hostPath sources. */
static int decode_present(kp_decoder *d, const cJSON *json, void *out)
{
    (void)d, (void)json, (void)out;
    return 0;
}

static int decode_pv_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pv *pv = out;
    bool local = false, host_path = false, ebs = false;
    int err;
    if ((err = kp_dec_object(d, json, "nodeAffinity", decode_pv_node_affinity, pv, NULL)) < 0 ||
        (err = kp_dec_string(d, json, "storageClassName", &pv->storage_class_name)) < 0 ||
        (err = kp_dec_object(d, json, "claimRef", decode_claim_ref, pv, &pv->has_claim_ref)) < 0 ||
        (err = kp_dec_core_resources(d, json, "capacity", &pv->capacity)) < 0 ||
        (err = kp_dec_object(d, json, "csi", decode_csi, pv, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "local", decode_present, pv, &local)) < 0 ||
        (err = kp_dec_object(d, json, "hostPath", decode_present, pv, &host_path)) < 0 ||
        (err = kp_dec_object(d, json, "awsElasticBlockStore", decode_present, pv, &ebs)) < 0)
        return err;
    pv->local_or_host_path = local || host_path;
    if (ebs && !*pv->csi_driver)
        pv->csi_driver =
            "ebs.csi.aws.com"; /* in-tree EBS counts against the EBS CSI driver (CSI migration) */
    return 0;
}

int kp_decode_pv(kp_arena *arena, const cJSON *json, kp_pv *out)
{
    kp_decoder d;
    kp_pv pv = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &pv.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_pv_spec, &pv, NULL);
    if (err == 0) *out = pv;
    return err;
}

/* ---------------------------------------------------------- StorageClass */

static const kp_dec_choice binding_mode_enum[] = {
    {"Immediate", KP_BINDING_IMMEDIATE},
    {"WaitForFirstConsumer", KP_BINDING_WAIT_FOR_FIRST_CONSUMER},
    {NULL, 0}};

/* A TopologySelectorLabelRequirement: key In values. */
static int decode_topology_req(kp_decoder *d, const cJSON *json, void *out)
{
    kp_selector_req *req = out;
    kp_strings values;
    int err;
    if ((err = kp_dec_string(d, json, "key", &req->key)) < 0 ||
        (err = kp_dec_strings(d, json, "values", &values)) < 0)
        return err;
    req->op = KP_OP_IN;
    req->values = values.items;
    req->n_values = values.count;
    return 0;
}

static int decode_topology_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_selector_term *t = out;
    return KP_DEC_ARRAY(d, json, "matchLabelExpressions", decode_topology_req, t->match_expressions,
                        t->n_match_expressions);
}

static int decode_storage_class(kp_decoder *d, const cJSON *json, kp_storage_class *sc)
{
    int mode = KP_BINDING_IMMEDIATE;
    int err;
    if ((err = kp_dec_meta(d, json, &sc->meta)) < 0 ||
        (err = kp_dec_string(d, json, "provisioner", &sc->provisioner)) < 0 ||
        (err = kp_dec_enum(d, json, "volumeBindingMode", binding_mode_enum, false, &mode)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "allowedTopologies", decode_topology_term,
                            sc->allowed_topologies, sc->n_allowed_topologies)) < 0)
        return err;
    sc->volume_binding_mode = (enum kp_volume_binding_mode)mode;
    return 0;
}

int kp_decode_storage_class(kp_arena *arena, const cJSON *json, kp_storage_class *out)
{
    kp_decoder d;
    kp_storage_class sc = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = decode_storage_class(&d, json, &sc);
    if (err == 0) *out = sc;
    return err;
}
