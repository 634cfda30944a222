/*
 * Gathering decoded manifests and expanding workloads. The expansion does
 * what the workload controllers would: replicas (Deployment, ReplicaSet,
 * StatefulSet) or parallelism (Job, capped by completions) pods named
 * NAME-0 .. NAME-(n-1) in the workload's namespace, owned by it, carrying
 * the template's labels; StatefulSet pods also get the claims of their
 * volumeClaimTemplates ("<template>-<set>-<ordinal>"). CapacityBuffers
 * become their virtual pods (api/capacitybuffer.h), resolved against the
 * PodTemplates and workloads of the same manifests.
 */
#include "scheduling/manifests.h"
#include "api/capacitybuffer.h"
#include "api/decode.h"
#include "api/nodeoverlay.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTR_LIST(type, name)                                                                       \
    type **name;                                                                                   \
    size_t n_##name, cap_##name

struct kp_manifests {
    kp_arena *arena;
    PTR_LIST(kp_nodepool, nodepools);
    PTR_LIST(kp_ec2nodeclass, ec2nodeclasses);
    PTR_LIST(kp_node, nodes);
    PTR_LIST(kp_nodeclaim, nodeclaims);
    PTR_LIST(kp_pod, pods);
    PTR_LIST(kp_workload, daemonsets);
    PTR_LIST(kp_object, workloads); /* Deployments, StatefulSets, ReplicaSets, Jobs */
    PTR_LIST(kp_pdb, pdbs);
    PTR_LIST(kp_pvc, pvcs);
    PTR_LIST(kp_pv, pvs);
    PTR_LIST(kp_storage_class, storage_classes);
    PTR_LIST(kp_nodeoverlay, nodeoverlays);
    PTR_LIST(kp_csinode, csinodes);
    PTR_LIST(const char, notes);
    PTR_LIST(kp_capacity_buffer, buffers);
    size_t buffers_done; /* expanded into virtual pods (at the end of each kp_manifests_add_docs) */
    PTR_LIST(kp_object_meta, pod_template_metas); /* PodTemplates: their metadata ... */
    PTR_LIST(kp_pod, pod_templates);              /* ... and their template */
    kp_namespace_info *namespaces; /* by value: the snapshot builder reads an array */
    size_t n_namespaces, cap_namespaces;
    size_t replica_pods; /* Pods the workloads so far will expand into */
    bool expanded;
};

#define PUSH(m, name, value)                                                                       \
    do {                                                                                           \
        (m)->name = kp_xgrow((m)->name, &(m)->cap_##name, (m)->n_##name + 1, sizeof(*(m)->name));   \
        (m)->name[(m)->n_##name++] = (value);                                                      \
    } while (0)

kp_manifests *kp_manifests_new(void)
{
    kp_manifests *m = kp_xcalloc(1, sizeof(*m));
    m->arena = kp_arena_new();
    return m;
}

kp_manifests *kp_manifests_free(kp_manifests *m)
{
    if (!m)
        return NULL;
    free(m->nodepools), free(m->ec2nodeclasses), free(m->nodes), free(m->nodeclaims), free(m->pods);
    free(m->daemonsets), free(m->workloads), free(m->pdbs), free(m->pvcs), free(m->pvs);
    free(m->storage_classes), free(m->notes), free(m->namespaces), free(m->nodeoverlays), free(m->csinodes);
    free(m->buffers), free(m->pod_template_metas), free(m->pod_templates);
    kp_arena_free(m->arena);
    free(m);
    return NULL;
}

static void default_namespace(kp_object_meta *meta)
{
    if (!*meta->namespace)
        meta->namespace = "default";
}

static void keep(kp_manifests *m, kp_object *o)
{
    kp_object *copy = kp_arena_memdup(m->arena, o, sizeof(*o));
    switch (o->kind) {
    case KP_KIND_NODEPOOL: PUSH(m, nodepools, &copy->u.nodepool); break;
    case KP_KIND_EC2NODECLASS: PUSH(m, ec2nodeclasses, &copy->u.ec2nodeclass); break;
    case KP_KIND_NODE: PUSH(m, nodes, &copy->u.node); break;
    case KP_KIND_NODECLAIM: PUSH(m, nodeclaims, &copy->u.nodeclaim); break;
    case KP_KIND_POD:
        default_namespace(&copy->u.pod.meta);
        PUSH(m, pods, &copy->u.pod);
        break;
    case KP_KIND_DAEMONSET:
        default_namespace(&copy->u.workload.meta);
        PUSH(m, daemonsets, &copy->u.workload);
        break;
    case KP_KIND_DEPLOYMENT:
    case KP_KIND_STATEFULSET:
    case KP_KIND_REPLICASET:
    case KP_KIND_JOB:
        default_namespace(&copy->u.workload.meta);
        copy->u.workload.template.meta.namespace = copy->u.workload.meta.namespace;
        PUSH(m, workloads, copy);
        break;
    case KP_KIND_PDB:
        default_namespace(&copy->u.pdb.meta);
        PUSH(m, pdbs, &copy->u.pdb);
        break;
    case KP_KIND_PVC:
        default_namespace(&copy->u.pvc.meta);
        PUSH(m, pvcs, &copy->u.pvc);
        break;
    case KP_KIND_PV: PUSH(m, pvs, &copy->u.pv); break;
    case KP_KIND_STORAGE_CLASS: PUSH(m, storage_classes, &copy->u.storage_class); break;
    case KP_KIND_NODEOVERLAY: PUSH(m, nodeoverlays, &copy->u.nodeoverlay); break;
    case KP_KIND_CSINODE: PUSH(m, csinodes, &copy->u.csinode); break;
    case KP_KIND_UNKNOWN: break;
    }
}

/* Namespaces matter only for their labels (namespaceSelector). */
static bool is_namespace(const cJSON *obj)
{
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    return cJSON_IsString(api) && cJSON_IsString(kind) && strcmp(api->valuestring, "v1") == 0 &&
           strcmp(kind->valuestring, "Namespace") == 0;
}

static int add_namespace(kp_manifests *m, const cJSON *obj)
{
    kp_object_meta meta;
    int err = kp_decode_meta(m->arena, obj, &meta);
    if (err < 0)
        return err;
    PUSH(m, namespaces, ((kp_namespace_info){meta.name, meta.labels}));
    return 0;
}

static int32_t replica_count(const kp_workload *w, enum kp_kind kind);
static void expand_buffers(kp_manifests *m);

/* CapacityBuffers and PodTemplates are not planner objects of their own:
 * they are kept until expansion turns buffers into virtual pods. */
static int add_buffer_doc(kp_manifests *m, const cJSON *obj)
{
    if (kp_is_capacity_buffer(obj)) {
        kp_capacity_buffer *cb = KP_ARENA_NEW(m->arena, kp_capacity_buffer, 1);
        int err = kp_decode_capacity_buffer(m->arena, obj, cb);
        if (err < 0)
            return err;
        default_namespace(&cb->meta);
        PUSH(m, buffers, cb);
        return 0;
    }
    kp_object_meta *meta = KP_ARENA_NEW(m->arena, kp_object_meta, 1);
    kp_pod *pod = KP_ARENA_NEW(m->arena, kp_pod, 1);
    int err = kp_decode_meta(m->arena, obj, meta);
    if (!err)
        err = kp_decode_pod_template_object(m->arena, obj, pod);
    if (err < 0)
        return err;
    default_namespace(meta);
    PUSH(m, pod_template_metas, meta);
    PUSH(m, pod_templates, pod);
    return 0;
}

/* simulate makes a Pod for each replica, and a manifest is easily wrong by
 * orders of magnitude (replicas: 2147483647 is 600 bytes and hundreds of
 * gigabytes of Pods): past this many, in all, planning is refused. */
#define MAX_REPLICA_PODS 100000

/* The field the Pod count comes from, for messages. */
static const char *count_field(const kp_workload *w, enum kp_kind kind)
{
    if (kind != KP_KIND_JOB) return "spec.replicas";
    return w->has_completions && w->completions < w->parallelism ? "spec.completions"
                                                                 : "spec.parallelism";
}

/* Negative counts are refused as the API server refuses them; the total is
 * capped. */
static int check_replicas(kp_manifests *m, const kp_object *o, const char *origin)
{
    const kp_workload *w = &o->u.workload;
    const char *field = count_field(w, o->kind);
    int32_t n = replica_count(w, o->kind);
    if (o->kind == KP_KIND_JOB && w->parallelism < 0) field = "spec.parallelism", n = w->parallelism;
    if (o->kind == KP_KIND_JOB && w->has_completions && w->completions < 0)
        field = "spec.completions", n = w->completions;
    if (n < 0)
        return kp_error_set(KP_EINVALID,
                            "%s: %s: Invalid value: %d: must be greater than or equal to 0",
                            origin, field, (int)n);
    if ((size_t)n > MAX_REPLICA_PODS - m->replica_pods)
        return kp_error_set(KP_ETOOLARGE,
                            "%s: %s: %d Pods is more than simulate will create from replicas "
                            "(%d in all, %zu so far); lower it",
                            origin, field, (int)n, MAX_REPLICA_PODS, m->replica_pods);
    m->replica_pods += (size_t)n;
    return 0;
}

static bool is_expanded(enum kp_kind kind)
{
    return kind == KP_KIND_DEPLOYMENT || kind == KP_KIND_STATEFULSET ||
           kind == KP_KIND_REPLICASET || kind == KP_KIND_JOB;
}

int kp_manifests_add_docs(kp_manifests *m, const kp_doc_list *docs)
{
    for (size_t i = 0; i < kp_doc_list_skipped_count(docs); i++)
        PUSH(m, notes, kp_arena_printf(m->arena, "skipped %s", kp_doc_list_skipped(docs, i)));
    for (size_t i = 0; i < kp_doc_list_count(docs); i++) {
        const kp_doc *d = kp_doc_list_at(docs, i);
        char origin[512];
        kp_doc_origin(d, origin, sizeof(origin));
        if (is_namespace(d->obj) || kp_is_capacity_buffer(d->obj) || kp_is_pod_template(d->obj)) {
            int err = is_namespace(d->obj) ? add_namespace(m, d->obj) : add_buffer_doc(m, d->obj);
            if (err < 0)
                return kp_error_wrap(err, "%s", origin);
            continue;
        }
        kp_object o;
        int err = kp_decode_object(m->arena, d->obj, &o);
        if (err == KP_ENOTFOUND) {
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(d->obj, "kind");
            PUSH(m, notes, kp_arena_printf(m->arena, "%s: skipping %s (not used for planning)", origin,
                                           cJSON_IsString(kind) ? kind->valuestring : "object"));
            continue;
        }
        if (err < 0)
            return kp_error_wrap(err, "%s", origin);
        if (is_expanded(o.kind) && (err = check_replicas(m, &o, origin)) < 0)
            return err;
        /* An overlay validation refuses is kept, marked, as a cluster would
         * show it: not applied, with the reason in its status. */
        if (o.kind == KP_KIND_NODEOVERLAY && (err = kp_nodeoverlay_from_json(m->arena, d->obj, &o.u.nodeoverlay)) < 0)
            return kp_error_wrap(err, "%s", origin);
        keep(m, &o);
    }
    expand_buffers(m); /* now, so their notes are there to print with the others */
    return 0;
}

size_t kp_manifests_nodeoverlays(const kp_manifests *m, const kp_nodeoverlay *const **out)
{
    *out = (const kp_nodeoverlay *const *)m->nodeoverlays;
    return m->n_nodeoverlays;
}

size_t kp_manifests_note_count(const kp_manifests *m)
{
    return m->n_notes;
}

const char *kp_manifests_note(const kp_manifests *m, size_t i)
{
    return i < m->n_notes ? m->notes[i] : NULL;
}

static int32_t replica_count(const kp_workload *w, enum kp_kind kind)
{
    if (kind == KP_KIND_JOB)
        return w->has_completions && w->completions < w->parallelism ? w->completions : w->parallelism;
    return w->replicas;
}

static kp_owner_ref *owner_of(kp_manifests *m, const kp_workload *w, const char *kind)
{
    kp_owner_ref *ref = KP_ARENA_NEW(m->arena, kp_owner_ref, 1);
    ref->api_version = strcmp(kind, "Job") == 0 ? "batch/v1" : "apps/v1";
    ref->kind = kind;
    ref->name = w->meta.name;
    ref->uid = w->meta.uid;
    ref->controller = true;
    return ref;
}

/* StatefulSet pods use claims named <template>-<set>-<ordinal>; create them
 * as the StatefulSet controller would, unless the manifests already have them. */
static void stateful_volumes(kp_manifests *m, const kp_workload *w, kp_pod *pod, int32_t ordinal)
{
    size_t n = pod->n_volumes + w->n_volume_claim_templates;
    kp_volume *v = KP_ARENA_NEW(m->arena, kp_volume, n ? n : 1);
    if (pod->n_volumes)
        memcpy(v, pod->volumes, pod->n_volumes * sizeof(kp_volume));
    for (size_t i = 0; i < w->n_volume_claim_templates; i++) {
        const kp_pvc *t = &w->volume_claim_templates[i];
        const char *claim = kp_arena_printf(m->arena, "%s-%s-%d", t->meta.name, w->meta.name, (int)ordinal);
        kp_volume *vol = &v[pod->n_volumes + i];
        memset(vol, 0, sizeof(*vol));
        vol->name = t->meta.name;
        vol->kind = KP_VOLUME_PVC;
        vol->claim_name = claim;
        bool exists = false;
        for (size_t j = 0; j < m->n_pvcs && !exists; j++)
            exists = strcmp(m->pvcs[j]->meta.name, claim) == 0 &&
                     strcmp(m->pvcs[j]->meta.namespace, w->meta.namespace) == 0;
        if (!exists) {
            kp_pvc *pvc = kp_arena_memdup(m->arena, t, sizeof(*t));
            pvc->meta.name = claim;
            pvc->meta.namespace = w->meta.namespace;
            PUSH(m, pvcs, pvc);
        }
    }
    pod->volumes = v;
    pod->n_volumes = n;
}

static void expand(kp_manifests *m, const kp_workload *w, enum kp_kind kind, const char *kind_name)
{
    int32_t n = replica_count(w, kind);
    for (int32_t i = 0; i < n; i++) {
        kp_pod *pod = kp_arena_memdup(m->arena, &w->template, sizeof(kp_pod));
        pod->meta.name = kp_arena_printf(m->arena, "%s-%d", w->meta.name, (int)i);
        pod->meta.namespace = w->meta.namespace;
        pod->meta.uid = kp_arena_printf(m->arena, "%s/%s", w->meta.namespace, pod->meta.name);
        pod->meta.creation_timestamp = w->meta.creation_timestamp;
        pod->meta.owner_refs = owner_of(m, w, kind_name);
        pod->meta.n_owner_refs = 1;
        pod->controller_kind = kind_name;
        pod->controller_name = w->meta.name;
        pod->owned_by_statefulset = kind == KP_KIND_STATEFULSET;
        pod->node_name = "";
        if (kind == KP_KIND_STATEFULSET)
            stateful_volumes(m, w, pod, i);
        PUSH(m, pods, pod);
    }
}

/* ------------------------------------------------------------ buffers */

static int find_pod_template(void *ctx, const char *ns, const char *name, kp_arena *arena, kp_pod *out,
                             int64_t *generation)
{
    kp_manifests *m = ctx;
    (void)arena;
    for (size_t i = 0; i < m->n_pod_templates; i++) {
        const kp_object_meta *meta = m->pod_template_metas[i];
        if (!strcmp(meta->name, name) && !strcmp(meta->namespace, ns)) {
            *out = *m->pod_templates[i];
            *generation = meta->generation;
            return 0;
        }
    }
    return kp_error_set(KP_ENOTFOUND, "podtemplates \"%s\" not found", name);
}

static int find_workload(void *ctx, const char *ns, const char *kind, const char *name, kp_arena *arena,
                         kp_workload *out)
{
    kp_manifests *m = ctx;
    (void)arena;
    for (size_t i = 0; i < m->n_workloads; i++) {
        const kp_workload *w = &m->workloads[i]->u.workload;
        if (!strcmp(kp_kind_name(m->workloads[i]->kind), kind) && !strcmp(w->meta.name, name) &&
            !strcmp(w->meta.namespace, ns)) {
            *out = *w;
            return 0;
        }
    }
    return kp_error_set(KP_ENOTFOUND, "%s \"%s\" not found", kind, name);
}

/* Each buffer's virtual pods, or a note saying why it has none. */
static void expand_buffers(kp_manifests *m)
{
    kp_buffer_lookup lookup = {find_pod_template, find_workload, m};
    for (; m->buffers_done < m->n_buffers; m->buffers_done++) {
        const kp_capacity_buffer *cb = m->buffers[m->buffers_done];
        kp_buffer_resolved r;
        if (kp_capacity_buffer_resolve(cb, &lookup, m->arena, &r) < 0 || !r.ready) {
            PUSH(m, notes, kp_arena_printf(m->arena, "capacitybuffer %s/%s is not ReadyForProvisioning (%s): %s",
                                           cb->meta.namespace, cb->meta.name, r.reason, r.message));
            continue;
        }
        int32_t n = (size_t)r.replicas > MAX_REPLICA_PODS - m->replica_pods ? 0 : r.replicas;
        if (n < r.replicas)
            PUSH(m, notes, kp_arena_printf(m->arena, "capacitybuffer %s/%s: %d virtual pods is more than simulate "
                                           "will create; none planned", cb->meta.namespace, cb->meta.name,
                                           (int)r.replicas));
        m->replica_pods += (size_t)n;
        for (int32_t k = 1; k <= n; k++)
            PUSH(m, pods, kp_capacity_buffer_virtual_pod(m->arena, cb, r.pod, k));
    }
}

static void expand_all(kp_manifests *m)
{
    if (m->expanded)
        return;
    for (size_t i = 0; i < m->n_workloads; i++)
        expand(m, &m->workloads[i]->u.workload, m->workloads[i]->kind, kp_kind_name(m->workloads[i]->kind));
    m->expanded = true;
}

void kp_manifests_cluster(kp_manifests *m, const kp_catalog *catalog, kp_cluster *out)
{
    expand_all(m);
    memset(out, 0, sizeof(*out));
    out->nodepools = (const kp_nodepool *const *)m->nodepools;
    out->n_nodepools = m->n_nodepools;
    out->nodes = (const kp_node *const *)m->nodes;
    out->n_nodes = m->n_nodes;
    out->nodeclaims = (const kp_nodeclaim *const *)m->nodeclaims;
    out->n_nodeclaims = m->n_nodeclaims;
    out->pods = (const kp_pod *const *)m->pods;
    out->n_pods = m->n_pods;
    out->daemonsets = (const kp_workload *const *)m->daemonsets;
    out->n_daemonsets = m->n_daemonsets;
    out->pvcs = (const kp_pvc *const *)m->pvcs;
    out->n_pvcs = m->n_pvcs;
    out->pvs = (const kp_pv *const *)m->pvs;
    out->n_pvs = m->n_pvs;
    out->storage_classes = (const kp_storage_class *const *)m->storage_classes;
    out->n_storage_classes = m->n_storage_classes;
    out->pdbs = (const kp_pdb *const *)m->pdbs;
    out->n_pdbs = m->n_pdbs;
    out->namespaces = m->namespaces;
    out->n_namespaces = m->n_namespaces;
    out->csinodes = (const kp_csinode *const *)m->csinodes;
    out->n_csinodes = m->n_csinodes;
    out->catalog = catalog;
}

kp_manifest_counts kp_manifests_counts(const kp_manifests *m)
{
    kp_manifest_counts c;
    memset(&c, 0, sizeof(c));
    c.nodepools = m->n_nodepools;
    c.ec2nodeclasses = m->n_ec2nodeclasses;
    c.nodes = m->n_nodes;
    c.nodeclaims = m->n_nodeclaims;
    c.pods = m->n_pods;
    for (size_t i = 0; i < m->n_pods; i++)
        c.pending_pods += !*m->pods[i]->node_name;
    c.daemonsets = m->n_daemonsets;
    c.pdbs = m->n_pdbs;
    c.pvcs = m->n_pvcs;
    c.pvs = m->n_pvs;
    c.storage_classes = m->n_storage_classes;
    c.workloads = m->n_workloads;
    return c;
}
