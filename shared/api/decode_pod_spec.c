/*
 * PodSpec: containers, affinity, tolerations, topology spread constraints,
 * volumes and the scheduling fields the solver reads.
 */
#include "api/decode_internal.h"

#include <string.h>

/* ------------------------------------------------------------ containers */

static const kp_dec_choice protocol_enum[] = {
    {"SCTP", KP_PROTOCOL_SCTP}, {"TCP", KP_PROTOCOL_TCP}, {"UDP", KP_PROTOCOL_UDP}, {NULL, 0}};

static int decode_port(kp_decoder *d, const cJSON *json, void *out)
{
    kp_container_port *p = out;
    int protocol = KP_PROTOCOL_TCP;
    int err;
    if ((err = kp_dec_string(d, json, "name", &p->name)) < 0 ||
        (err = kp_dec_int32(d, json, "containerPort", &p->container_port, NULL)) < 0 ||
        (err = kp_dec_int32(d, json, "hostPort", &p->host_port, NULL)) < 0 ||
        (err = kp_dec_enum(d, json, "protocol", protocol_enum, false, &protocol)) < 0 ||
        (err = kp_dec_string(d, json, "hostIP", &p->host_ip)) < 0)
        return err;
    p->protocol = (enum kp_protocol)protocol;
    return 0;
}

/* Whether `name` is a non-empty array (absent or null: false). */
static int nonempty_array(kp_decoder *d, const cJSON *json, const char *name, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, name);
    if (v && !cJSON_IsNull(v) && !cJSON_IsArray(v))
        return kp_dec_fail_at(d, name, "expected array, got %s", kp_dec_type_name(v));
    *out = cJSON_GetArraySize(v) > 0;
    return 0;
}

static int decode_requirements(kp_decoder *d, const cJSON *json, void *out)
{
    kp_container *c = out;
    int err;
    if ((err = kp_dec_core_resources(d, json, "requests", &c->requests)) < 0 ||
        (err = kp_dec_core_resources(d, json, "limits", &c->limits)) < 0 ||
        (err = nonempty_array(d, json, "claims", &c->has_claims)) < 0)
        return err;
    return 0;
}

static int decode_container(kp_decoder *d, const cJSON *json, void *out)
{
    kp_container *c = out;
    const char *restart_policy;
    int err;
    if ((err = kp_dec_string(d, json, "name", &c->name)) < 0 ||
        (err = kp_dec_string(d, json, "image", &c->image)) < 0 ||
        (err = kp_dec_object(d, json, "resources", decode_requirements, c, NULL)) < 0 ||
        (err = kp_dec_string(d, json, "restartPolicy", &restart_policy)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "ports", decode_port, c->ports, c->n_ports)) < 0)
        return err;
    c->restart_always = strcmp(restart_policy, "Always") == 0;
    return 0;
}

/* spec.resources: pod-level requests and limits. */
static int decode_pod_resources(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod *p = out;
    int err;
    if ((err = kp_dec_core_resources(d, json, "requests", &p->pod_level_requests)) < 0 ||
        (err = kp_dec_core_resources(d, json, "limits", &p->pod_level_limits)) < 0)
        return err;
    return 0;
}

/* -------------------------------------------------------------- affinity */

static int decode_required_node_affinity(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_affinity *na = out;
    return kp_dec_node_selector_terms(d, json, "nodeSelectorTerms", &na->required, &na->n_required,
                                      NULL);
}

static int decode_preference(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_selector_term *t = out;
    int err;
    if ((err = kp_dec_node_requirements(d, json, "matchExpressions", false, &t->match_expressions,
                                        &t->n_match_expressions)) < 0 ||
        (err = kp_dec_node_requirements(d, json, "matchFields", false, &t->match_fields,
                                        &t->n_match_fields)) < 0)
        return err;
    return 0;
}

static int decode_preferred_node_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_preferred_node_term *p = out;
    int err;
    if ((err = kp_dec_int32(d, json, "weight", &p->weight, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "preference", decode_preference, &p->preference, NULL)) < 0)
        return err;
    return 0;
}

static int decode_node_affinity(kp_decoder *d, const cJSON *json, void *out)
{
    kp_node_affinity *na = out;
    int err;
    if ((err = kp_dec_object(d, json, "requiredDuringSchedulingIgnoredDuringExecution",
                             decode_required_node_affinity, na, &na->has_required)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "preferredDuringSchedulingIgnoredDuringExecution",
                            decode_preferred_node_term, na->preferred, na->n_preferred)) < 0)
        return err;
    return 0;
}

static int decode_pod_affinity_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod_affinity_term *t = out;
    int err;
    if ((err = kp_dec_label_selector(d, json, "labelSelector", &t->label_selector)) < 0 ||
        (err = kp_dec_strings(d, json, "namespaces", &t->namespaces)) < 0 ||
        (err = kp_dec_label_selector(d, json, "namespaceSelector", &t->namespace_selector)) < 0 ||
        (err = kp_dec_string(d, json, "topologyKey", &t->topology_key)) < 0 ||
        (err = kp_dec_strings(d, json, "matchLabelKeys", &t->match_label_keys)) < 0 ||
        (err = kp_dec_strings(d, json, "mismatchLabelKeys", &t->mismatch_label_keys)) < 0)
        return err;
    return 0;
}

static int decode_weighted_pod_affinity_term(kp_decoder *d, const cJSON *json, void *out)
{
    kp_weighted_pod_affinity_term *w = out;
    int err;
    if ((err = kp_dec_int32(d, json, "weight", &w->weight, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "podAffinityTerm", decode_pod_affinity_term, &w->term,
                             NULL)) < 0)
        return err;
    return 0;
}

static int decode_pod_affinity(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod_affinity *pa = out;
    int err;
    if ((err = KP_DEC_ARRAY(d, json, "requiredDuringSchedulingIgnoredDuringExecution",
                            decode_pod_affinity_term, pa->required, pa->n_required)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "preferredDuringSchedulingIgnoredDuringExecution",
                            decode_weighted_pod_affinity_term, pa->preferred, pa->n_preferred)) < 0)
        return err;
    return 0;
}

static int decode_affinity(kp_decoder *d, const cJSON *json, void *out)
{
    kp_affinity *a = out;
    int err;
    if ((err = kp_dec_object(d, json, "nodeAffinity", decode_node_affinity, &a->node, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "podAffinity", decode_pod_affinity, &a->pod, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "podAntiAffinity", decode_pod_affinity, &a->pod_anti, NULL)) <
            0)
        return err;
    return 0;
}

/* ------------------------------------------------------ topology spread */

static const kp_dec_choice unsatisfiable_enum[] = {
    {"DoNotSchedule", KP_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE},
    {"ScheduleAnyway", KP_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY},
    {NULL, 0}};

static const kp_dec_choice policy_enum[] = {
    {"Honor", KP_POLICY_HONOR}, {"Ignore", KP_POLICY_IGNORE}, {NULL, 0}};

static int decode_topology_spread(kp_decoder *d, const cJSON *json, void *out)
{
    kp_topology_spread *t = out;
    int when = 0, affinity = KP_POLICY_UNSET, taints = KP_POLICY_UNSET;
    int err;
    if ((err = kp_dec_int32(d, json, "maxSkew", &t->max_skew, NULL)) < 0 ||
        (err = kp_dec_string(d, json, "topologyKey", &t->topology_key)) < 0 ||
        (err = kp_dec_enum(d, json, "whenUnsatisfiable", unsatisfiable_enum, true, &when)) < 0 ||
        (err = kp_dec_label_selector(d, json, "labelSelector", &t->label_selector)) < 0 ||
        (err = kp_dec_int32(d, json, "minDomains", &t->min_domains, NULL)) < 0 ||
        (err = kp_dec_enum(d, json, "nodeAffinityPolicy", policy_enum, false, &affinity)) < 0 ||
        (err = kp_dec_enum(d, json, "nodeTaintsPolicy", policy_enum, false, &taints)) < 0 ||
        (err = kp_dec_strings(d, json, "matchLabelKeys", &t->match_label_keys)) < 0)
        return err;
    t->when_unsatisfiable = (enum kp_when_unsatisfiable)when;
    t->node_affinity_policy = (enum kp_inclusion_policy)affinity;
    t->node_taints_policy = (enum kp_inclusion_policy)taints;
    return 0;
}

/* --------------------------------------------------------------- volumes */

static int decode_pvc_source(kp_decoder *d, const cJSON *json, void *out)
{
    kp_volume *v = out;
    return kp_dec_string(d, json, "claimName", &v->claim_name);
}

static int decode_claim_template_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_volume *v = out;
    return kp_dec_string_p(d, json, "storageClassName", &v->storage_class_name,
                           &v->has_storage_class_name);
}

static int decode_claim_template(kp_decoder *d, const cJSON *json, void *out)
{
    return kp_dec_object(d, json, "spec", decode_claim_template_spec, out, NULL);
}

static int decode_ephemeral_source(kp_decoder *d, const cJSON *json, void *out)
{
    return kp_dec_object(d, json, "volumeClaimTemplate", decode_claim_template, out, NULL);
}

/* Sources told apart by presence alone (their contents do not matter here). */
static const kp_dec_choice volume_kinds[] = {{"emptyDir", KP_VOLUME_EMPTY_DIR},
                                             {"hostPath", KP_VOLUME_HOST_PATH},
                                             {"configMap", KP_VOLUME_CONFIG_MAP},
                                             {"secret", KP_VOLUME_SECRET},
                                             {"projected", KP_VOLUME_PROJECTED},
                                             {"downwardAPI", KP_VOLUME_DOWNWARD_API},
                                             {"csi", KP_VOLUME_CSI},
                                             {NULL, 0}};

static enum kp_volume_kind volume_kind(const cJSON *json)
{
    for (const kp_dec_choice *k = volume_kinds; k->name; k++) {
        if (kp_dec_get(json, k->name)) return (enum kp_volume_kind)k->value;
    }
    /* A volume with no source at all is defaulted to emptyDir by the API. */
    for (const cJSON *el = json->child; el; el = el->next) {
        if (strcmp(el->string, "name") != 0 && !cJSON_IsNull(el)) return KP_VOLUME_OTHER;
    }
    return KP_VOLUME_EMPTY_DIR;
}

static int decode_volume(kp_decoder *d, const cJSON *json, void *out)
{
    kp_volume *v = out;
    bool pvc = false, ephemeral = false;
    int err;
    if ((err = kp_dec_string(d, json, "name", &v->name)) < 0 ||
        (err = kp_dec_object(d, json, "persistentVolumeClaim", decode_pvc_source, v, &pvc)) < 0 ||
        (err = kp_dec_object(d, json, "ephemeral", decode_ephemeral_source, v, &ephemeral)) < 0)
        return err;
    v->kind = pvc ? KP_VOLUME_PVC : ephemeral ? KP_VOLUME_EPHEMERAL : volume_kind(json);
    return 0;
}

/* ------------------------------------------------------------- pod spec */

static int decode_scheduling_fields(kp_decoder *d, const cJSON *json, kp_pod *p)
{
    int err;
    if ((err = kp_dec_string(d, json, "nodeName", &p->node_name)) < 0 ||
        (err = kp_dec_string(d, json, "schedulerName", &p->scheduler_name)) < 0 ||
        (err = kp_dec_string(d, json, "priorityClassName", &p->priority_class_name)) < 0 ||
        (err = kp_dec_int32(d, json, "priority", &p->priority, &p->has_priority)) < 0 ||
        (err = kp_dec_labels(d, json, "nodeSelector", &p->node_selector)) < 0 ||
        (err = kp_dec_object(d, json, "affinity", decode_affinity, &p->affinity, NULL)) < 0 ||
        (err = kp_dec_tolerations(d, json, "tolerations", &p->tolerations, &p->n_tolerations)) <
            0 ||
        (err = KP_DEC_ARRAY(d, json, "topologySpreadConstraints", decode_topology_spread,
                            p->topology_spread, p->n_topology_spread)) < 0 ||
        (err = kp_dec_bool(d, json, "hostNetwork", &p->host_network, NULL)) < 0 ||
        (err = kp_dec_int64(d, json, "terminationGracePeriodSeconds",
                            &p->termination_grace_period_seconds,
                            &p->has_termination_grace_period)) < 0)
        return err;
    return 0;
}

int kp_dec_pod_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod *p = out;
    int err;
    if ((err = decode_scheduling_fields(d, json, p)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "initContainers", decode_container, p->init_containers,
                            p->n_init_containers)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "containers", decode_container, p->containers,
                            p->n_containers)) < 0 ||
        (err = kp_dec_core_resources(d, json, "overhead", &p->overhead)) < 0 ||
        (err = kp_dec_object(d, json, "resources", decode_pod_resources, p, NULL)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "volumes", decode_volume, p->volumes, p->n_volumes)) < 0 ||
        (err = nonempty_array(d, json, "resourceClaims", &p->has_dra)) < 0)
        return err;
    return 0;
}
