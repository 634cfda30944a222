/*
 * Pods and pod templates: metadata, spec (decode_pod_spec.c), status, and
 * the facts derived from them once so that readers never recompute them:
 * effective requests, host ports, owner kinds, mirror pods, the scheduler's
 * verdict and the names of ephemeral volume claims.
 */
#include "api/decode_internal.h"

#include "api/decode.h"
#include "api/pod_requests.h"
#include "base/error.h"

#include <string.h>

#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"

static const kp_dec_choice phase_enum[] = {
    {"Failed", KP_POD_PHASE_FAILED},   {"Pending", KP_POD_PHASE_PENDING},
    {"Running", KP_POD_PHASE_RUNNING}, {"Succeeded", KP_POD_PHASE_SUCCEEDED},
    {"Unknown", KP_POD_PHASE_UNKNOWN}, {NULL, 0}};

/* One entry of status.containerStatuses / initContainerStatuses, read into
 * a kp_container for its name and resources only. */
static int decode_container_resources(kp_decoder *d, const cJSON *json, void *out)
{
    kp_container *c = out;
    return kp_dec_core_resources(d, json, "requests", &c->status_requests);
}

static int decode_container_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_container *c = out;
    int err;
    if ((err = kp_dec_string(d, json, "name", &c->name)) < 0 ||
        (err = kp_dec_object(d, json, "resources", decode_container_resources, c, &c->has_status)) <
            0 ||
        (err = kp_dec_core_resources(d, json, "allocatedResources", &c->allocated)) < 0)
        return err;
    c->has_status |= c->allocated.count > 0;
    return 0;
}

static int decode_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod *p = out;
    int phase = KP_POD_PHASE_UNSET;
    const char *resize = "";
    int err;
    if ((err = kp_dec_enum(d, json, "phase", phase_enum, false, &phase)) < 0 ||
        (err = kp_dec_conditions(d, json, "conditions", &p->conditions)) < 0 ||
        (err = kp_dec_string(d, json, "nominatedNodeName", &p->nominated_node_name)) < 0 ||
        (err = kp_dec_time(d, json, "startTime", &p->start_time)) < 0 ||
        (err = kp_dec_string(d, json, "resize", &resize)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "containerStatuses", decode_container_status,
                            p->container_statuses, p->n_container_statuses)) < 0 ||
        (err = KP_DEC_ARRAY(d, json, "initContainerStatuses", decode_container_status,
                            p->init_container_statuses, p->n_init_container_statuses)) < 0)
        return err;
    p->phase = (enum kp_pod_phase)phase;
    const kp_condition *pending = kp_conditions_get(&p->conditions, "PodResizePending");
    p->resize_infeasible =
        strcmp(resize, "Infeasible") == 0 ||
        (pending && pending->status == KP_CONDITION_TRUE && !strcmp(pending->reason, "Infeasible"));
    return 0;
}

/* ---------------------------------------------------------- derived facts */

/* With hostNetwork the API server defaults each hostPort to its
 * containerPort; do the same so files and cluster objects agree. */
static void default_host_network_ports(kp_container *containers, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < containers[i].n_ports; j++) {
            kp_container_port *port = &containers[i].ports[j];
            if (port->host_port == 0) port->host_port = port->container_port;
        }
    }
}

/* Host ports of the regular containers, as Karpenter counts them. */
static void derive_host_ports(kp_decoder *d, kp_pod *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_containers; i++) {
        for (size_t j = 0; j < p->containers[i].n_ports; j++)
            n += p->containers[i].ports[j].host_port != 0;
    }
    if (n == 0) return;
    p->host_ports = KP_ARENA_NEW(d->arena, kp_host_port, n);
    for (size_t i = 0; i < p->n_containers; i++) {
        for (size_t j = 0; j < p->containers[i].n_ports; j++) {
            const kp_container_port *port = &p->containers[i].ports[j];
            if (port->host_port == 0) continue;
            kp_host_port *hp = &p->host_ports[p->n_host_ports++];
            hp->ip = *port->host_ip ? port->host_ip : "0.0.0.0";
            hp->protocol = port->protocol;
            hp->port = port->host_port;
        }
    }
}

static void derive_owners(kp_pod *p)
{
    p->controller_kind = kp_dec_empty;
    p->controller_name = kp_dec_empty;
    for (size_t i = 0; i < p->meta.n_owner_refs; i++) {
        const kp_owner_ref *ref = &p->meta.owner_refs[i];
        bool apps = strcmp(ref->api_version, "apps/v1") == 0;
        if (apps && strcmp(ref->kind, "DaemonSet") == 0) p->owned_by_daemonset = true;
        if (apps && strcmp(ref->kind, "StatefulSet") == 0) p->owned_by_statefulset = true;
        if (strcmp(ref->api_version, "v1") == 0 && strcmp(ref->kind, "Node") == 0)
            p->owned_by_node = true;
        if (ref->controller) {
            p->controller_kind = ref->kind;
            p->controller_name = ref->name;
        }
    }
    p->is_mirror = kp_labels_get(&p->meta.annotations, MIRROR_ANNOTATION) != NULL;
}

static bool failed_to_schedule(const kp_conditions *conditions)
{
    for (size_t i = 0; i < conditions->count; i++) {
        const kp_condition *c = &conditions->items[i];
        if (strcmp(c->type, "PodScheduled") == 0 && strcmp(c->reason, "Unschedulable") == 0)
            return true;
    }
    return false;
}

/* The claim Kubernetes creates for a generic ephemeral volume. */
static void derive_ephemeral_claims(kp_decoder *d, kp_pod *p)
{
    for (size_t i = 0; i < p->n_volumes; i++) {
        kp_volume *v = &p->volumes[i];
        if (v->kind == KP_VOLUME_EPHEMERAL && *p->meta.name)
            v->claim_name = kp_arena_printf(d->arena, "%s-%s", p->meta.name, v->name);
    }
}

/* The status of each container, found by name, on the container itself;
 * of the init containers only sidecars', as the scheduler reads them. */
static void attach_statuses(kp_container *cs, size_t n, const kp_container *st, size_t n_st,
                            bool sidecars_only)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n_st && (!sidecars_only || cs[i].restart_always); j++)
            if (st[j].has_status && cs[i].name && st[j].name && !strcmp(cs[i].name, st[j].name)) {
                cs[i].has_status = true;
                cs[i].status_requests = st[j].status_requests;
                cs[i].allocated = st[j].allocated;
                break;
            }
}

int kp_dec_pod_derive(kp_decoder *d, kp_pod *p)
{
    attach_statuses(p->containers, p->n_containers, p->container_statuses, p->n_container_statuses,
                    false);
    attach_statuses(p->init_containers, p->n_init_containers, p->init_container_statuses,
                    p->n_init_container_statuses, true);
    if (p->host_network) default_host_network_ports(p->containers, p->n_containers);
    derive_host_ports(d, p);
    derive_owners(p);
    derive_ephemeral_claims(d, p);
    for (size_t i = 0; i < p->n_containers; i++)
        p->has_dra |= p->containers[i].has_claims;
    for (size_t i = 0; i < p->n_init_containers; i++)
        p->has_dra |= p->init_containers[i].has_claims;
    p->failed_to_schedule = failed_to_schedule(&p->conditions);
    if (kp_pod_requests(d->arena, p, &p->requests) < 0)
        return kp_dec_fail_at(d, "spec", "%s", kp_error_last());
    return 0;
}

/* ------------------------------------------------------------ pod bodies */

int kp_dec_pod_body(kp_decoder *d, const cJSON *json, kp_pod *out)
{
    int err;
    if ((err = kp_dec_meta(d, json, &out->meta)) < 0 ||
        (err = kp_dec_object(d, json, "spec", kp_dec_pod_spec, out, NULL)) < 0 ||
        (err = kp_dec_object(d, json, "status", decode_status, out, NULL)) < 0)
        return err;
    return kp_dec_pod_derive(d, out);
}

/* A PodTemplateSpec: metadata and spec; the status stays empty. */
static int decode_template(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod *p = out;
    int err;
    if ((err = kp_dec_meta(d, json, &p->meta)) < 0 ||
        (err = kp_dec_object(d, json, "spec", kp_dec_pod_spec, p, NULL)) < 0)
        return err;
    p->nominated_node_name = kp_dec_empty;
    return kp_dec_pod_derive(d, p);
}

int kp_dec_pod_template(kp_decoder *d, const cJSON *obj, const char *name, kp_pod *out)
{
    return kp_dec_object(d, obj, name, decode_template, out, NULL);
}

int kp_decode_pod(kp_arena *arena, const cJSON *json, kp_pod *out)
{
    kp_decoder d;
    kp_pod pod = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_pod_body(&d, json, &pod);
    if (err == 0) *out = pod;
    return err;
}
