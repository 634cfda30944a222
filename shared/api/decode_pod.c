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

static int decode_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pod *p = out;
    int phase = KP_POD_PHASE_UNSET;
    int err;
    if ((err = kp_dec_enum(d, json, "phase", phase_enum, false, &phase)) < 0 ||
        (err = kp_dec_conditions(d, json, "conditions", &p->conditions)) < 0 ||
        (err = kp_dec_string(d, json, "nominatedNodeName", &p->nominated_node_name)) < 0 ||
        (err = kp_dec_time(d, json, "startTime", &p->start_time)) < 0)
        return err;
    p->phase = (enum kp_pod_phase)phase;
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

int kp_dec_pod_derive(kp_decoder *d, kp_pod *p)
{
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
