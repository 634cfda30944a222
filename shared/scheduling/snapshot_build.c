/*
 * Snapshot building, part one: NodePools become templates, Nodes and
 * NodeClaims become nodes (a NodeClaim whose Node has not registered is a
 * node "in flight"), and the catalog's instance types are compiled once.
 */
#include "scheduling/snapshot_build.h"
#include "scheduling/snapshot_internal.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kp_symlabels labels_of(kp_snapshot *snap, const kp_labels *labels, const char *extra_key,
                              const char *extra_value)
{
    uint32_t n = (uint32_t)labels->count;
    const char **keys = KP_ARENA_NEW(snap->arena, const char *, n + 1);
    const char **values = KP_ARENA_NEW(snap->arena, const char *, n + 1);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (extra_key && strcmp(labels->items[i].key, extra_key) == 0)
            continue;
        keys[k] = labels->items[i].key;
        values[k++] = labels->items[i].value;
    }
    if (extra_key) {
        keys[k] = extra_key;
        values[k++] = extra_value;
    }
    return kp_snapshot_labels(snap, keys, values, k);
}

int kp_snapshot_resvec(kp_snapshot *snap, const kp_resource_list *list, kp_resvec *out)
{
    kp_resvec_zero(out);
    for (size_t i = 0; i < list->count; i++) {
        int idx = kp_restab_index(&snap->restab, list->items[i].name);
        if (idx < 0)
            return idx;
        out->v[idx] = list->items[i].quantity.milli;
    }
    return 0;
}

int kp_snapshot_add_selector_reqs(kp_snapshot *snap, kp_requirements *reqs, const kp_selector_req *items,
                                  size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kp_requirement r;
        int err = kp_requirement_new(&r, snap->symtab, snap->arena, items[i].key, items[i].op,
                                     (const char *const *)items[i].values, items[i].n_values,
                                     items[i].min_values);
        if (err < 0)
            return err;
        kp_requirements_add(reqs, snap->symtab, snap->arena, &r);
    }
    return 0;
}

void kp_snapshot_add_label_reqs(kp_snapshot *snap, kp_requirements *reqs, const kp_labels *labels)
{
    for (size_t i = 0; i < labels->count; i++)
        kp_requirements_add_label(reqs, snap->symtab, snap->arena, labels->items[i].key,
                                  labels->items[i].value);
}

/* "karpenter.k8s.aws/ec2nodeclass" for group karpenter.k8s.aws, kind EC2NodeClass. */
static const char *node_class_label(kp_snapshot *snap, const kp_node_class_ref *ref)
{
    char *key = kp_arena_printf(snap->arena, "%s/%s", ref->group, ref->kind);
    for (char *p = strchr(key, '/'); p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return key;
}

static int set_limits(kp_snapshot *snap, kp_template *t, const kp_resource_list *limits)
{
    for (size_t i = 0; i < limits->count; i++) {
        const kp_resource *r = &limits->items[i];
        t->has_limits = true;
        if (strcmp(r->name, "nodes") == 0) {
            t->limit_nodes = true;
            t->node_limit = kp_quantity_value(r->quantity);
            continue;
        }
        int idx = kp_restab_index(&snap->restab, r->name);
        if (idx < 0)
            return idx;
        t->limited[idx] = true;
        t->limits.v[idx] = kp_quantity_milli128(r->quantity);
    }
    return 0;
}

static int add_template(kp_snapshot *snap, const kp_nodepool *np)
{
    kp_template *t = kp_snapshot_add_template(snap);
    t->src = np;
    t->name = np->meta.name;
    t->name_sym = kp_sym_intern(snap->symtab, np->meta.name);
    t->weight = np->has_weight ? np->weight : 0;
    t->is_static = np->has_replicas;
    t->replicas = np->replicas;
    const char *class_key = np->template.has_node_class_ref ? node_class_label(snap, &np->template.node_class_ref)
                                                            : NULL;
    t->node_class = np->template.node_class_ref.name;
    t->labels = labels_of(snap, &np->template_labels, KP_LABEL_NODEPOOL, np->meta.name);
    kp_requirements_init(&t->spec_reqs);
    int err = kp_snapshot_add_selector_reqs(snap, &t->spec_reqs, np->template.requirements,
                                            np->template.n_requirements);
    if (err < 0)
        return kp_error_wrap(err, "nodepool %s", np->meta.name);
    kp_snapshot_add_label_reqs(snap, &t->spec_reqs, &np->template_labels);
    kp_requirements_copy(&t->reqs, snap->arena, &t->spec_reqs);
    kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, KP_LABEL_NODEPOOL, np->meta.name);
    if (class_key)
        kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, class_key,
                                  np->template.node_class_ref.name);
    /* For DaemonSets that select on these labels: every launched node gets them. */
    kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, KP_LABEL_REGISTERED, "true");
    kp_requirements_add_label(&t->reqs, snap->symtab, snap->arena, KP_LABEL_INITIALIZED, "true");
    t->taints = np->template.taints;
    t->n_taints = (uint32_t)np->template.n_taints;
    t->startup_taints = np->template.startup_taints;
    t->n_startup_taints = (uint32_t)np->template.n_startup_taints;
    return set_limits(snap, t, &np->limits);
}


static const kp_nodeclaim *claim_for_node(const kp_cluster *c, const kp_node *n)
{
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const kp_nodeclaim *nc = c->nodeclaims[i];
        if ((*n->provider_id && strcmp(nc->provider_id, n->provider_id) == 0) ||
            strcmp(nc->node_name, n->meta.name) == 0)
            return nc;
    }
    return NULL;
}

/* Karpenter ignores ephemeral and startup taints on managed nodes until they initialise. */
static void node_taints(kp_snapshot *snap, kp_snode *sn, const kp_taint *taints, size_t n,
                        const kp_nodeclaim *nc)
{
    kp_taint *out = KP_ARENA_NEW(snap->arena, kp_taint, n ? n : 1);
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool skip = false;
        if (sn->managed && !sn->initialized) {
            skip = kp_taint_is_known_ephemeral(&taints[i]);
            for (size_t j = 0; nc && j < nc->spec.n_startup_taints && !skip; j++)
                skip = kp_taint_matches(&nc->spec.startup_taints[j], &taints[i]);
        }
        if (!skip)
            out[k++] = taints[i];
    }
    sn->taints = out;
    sn->n_taints = k;
}

static int add_node(kp_snapshot *snap, const kp_cluster *c, const kp_node *n)
{
    const kp_nodeclaim *nc = claim_for_node(c, n);
    kp_snode *sn = kp_snapshot_add_node(snap);
    const char *host = kp_labels_get(&n->meta.labels, KP_LABEL_HOSTNAME);
    sn->name = n->meta.name;
    sn->hostname = kp_sym_intern(snap->symtab, host ? host : n->meta.name);
    sn->labels = labels_of(snap, &n->meta.labels, NULL, NULL);
    sn->managed = (nc != NULL || kp_labels_get(&n->meta.labels, KP_LABEL_NODEPOOL) != NULL) &&
                  (!c->node_owned || c->node_owned(c->node_owned_ctx, n));
    const char *init = kp_labels_get(&n->meta.labels, KP_LABEL_INITIALIZED);
    sn->initialized = !sn->managed || (init && strcmp(init, "true") == 0);
    /* A claim whose instance is terminating is as good as gone (Karpenter's MarkedForDeletion). */
    sn->deleting = n->meta.deletion_timestamp.set ||
                   (nc && (nc->meta.deletion_timestamp.set || kp_conditions_is_true(&nc->conditions, "InstanceTerminating")));
    sn->nodeclaim = nc ? nc->meta.name : NULL;
    sn->src_node = n;
    sn->src_claim = nc;
    sn->instance_type = kp_labels_get(&n->meta.labels, KP_LABEL_INSTANCE_TYPE);
    sn->created_ns = n->meta.creation_timestamp.ns;
    node_taints(snap, sn, n->taints, n->n_taints, nc);
    int err = kp_snapshot_resvec(snap, &n->capacity, &sn->capacity);
    if (!err)
        err = kp_snapshot_resvec(snap, &n->allocatable, &sn->allocatable);
    /* Before initialisation the NodeClaim knows what the kubelet has not reported yet. */
    if (!err && nc && !sn->initialized) {
        kp_resvec claim_alloc, claim_cap;
        err = kp_snapshot_resvec(snap, &nc->allocatable, &claim_alloc);
        if (!err)
            err = kp_snapshot_resvec(snap, &nc->capacity, &claim_cap);
        for (uint32_t r = 0; r < KP_RES_MAX && !err; r++) {
            if (sn->allocatable.v[r] == 0)
                sn->allocatable.v[r] = claim_alloc.v[r];
            if (sn->capacity.v[r] == 0)
                sn->capacity.v[r] = claim_cap.v[r];
        }
    }
    return err;
}

static bool claim_has_node(const kp_cluster *c, const kp_nodeclaim *nc)
{
    for (size_t i = 0; i < c->n_nodes; i++) {
        const kp_node *n = c->nodes[i];
        if ((*nc->provider_id && strcmp(nc->provider_id, n->provider_id) == 0) ||
            (*nc->node_name && strcmp(nc->node_name, n->meta.name) == 0))
            return true;
    }
    return false;
}

/* A NodeClaim the cloud has not launched yet has no capacity in its status,
 * but the pods it was made for are already counted on it. Its room is the
 * smallest of its instance types' (whichever launches, that much is there),
 * so a provisioning batch that runs before the launch does not make a second
 * claim for the same pods. */
static void unlaunched_room(kp_snapshot *snap, const kp_nodeclaim *nc, kp_snode *sn)
{
    const kp_selector_req *r = NULL;
    for (size_t i = 0; i < nc->spec.n_requirements && !r; i++)
        if (nc->spec.requirements[i].op == KP_OP_IN &&
            strcmp(nc->spec.requirements[i].key, KP_LABEL_INSTANCE_TYPE) == 0)
            r = &nc->spec.requirements[i];
    if (!r)
        return;
    kp_sym *names = KP_ARENA_NEW(snap->arena, kp_sym, r->n_values + 1);
    for (size_t k = 0; k < r->n_values; k++)
        names[k] = kp_sym_lookup(snap->symtab, r->values[k]);
    bool any = false;
    for (uint32_t t = 0; t < snap->n_its; t++) {
        const kp_sit *it = &snap->its[t];
        size_t k = 0;
        while (k < r->n_values && names[k] != it->name)
            k++;
        if (k == r->n_values)
            continue;
        for (uint32_t res = 0; res < KP_RES_MAX; res++) {
            if (!any || it->allocatable.v[res] < sn->allocatable.v[res])
                sn->allocatable.v[res] = it->allocatable.v[res];
            if (!any || it->capacity.v[res] < sn->capacity.v[res])
                sn->capacity.v[res] = it->capacity.v[res];
        }
        any = true;
    }
}

/* A NodeClaim whose Node has not registered: its labels are its own plus its
 * single-valued requirements; its room is what its status reports. */
static int add_in_flight(kp_snapshot *snap, const kp_nodeclaim *nc)
{
    kp_snode *sn = kp_snapshot_add_node(snap);
    kp_labels labels = nc->meta.labels;
    uint32_t extra = 0;
    for (size_t i = 0; i < nc->spec.n_requirements; i++)
        extra += nc->spec.requirements[i].op == KP_OP_IN && nc->spec.requirements[i].n_values == 1;
    kp_label *items = KP_ARENA_NEW(snap->arena, kp_label, labels.count + extra + 1);
    memcpy(items, labels.items, labels.count * sizeof(kp_label));
    size_t k = labels.count;
    for (size_t i = 0; i < nc->spec.n_requirements; i++) {
        const kp_selector_req *r = &nc->spec.requirements[i];
        if (r->op == KP_OP_IN && r->n_values == 1 && !kp_labels_get(&labels, r->key))
            items[k++] = (kp_label){r->key, r->values[0]};
    }
    kp_labels all = {items, k};
    sn->name = nc->meta.name;
    sn->nodeclaim = nc->meta.name;
    sn->src_claim = nc;
    sn->hostname = kp_sym_intern(snap->symtab, *nc->node_name ? nc->node_name : nc->meta.name);
    sn->labels = labels_of(snap, &all, NULL, NULL);
    sn->managed = true;
    sn->in_flight = true;
    sn->deleting = nc->meta.deletion_timestamp.set || kp_conditions_is_true(&nc->conditions, "InstanceTerminating");
    sn->created_ns = nc->meta.creation_timestamp.ns;
    sn->instance_type = kp_labels_get(&all, KP_LABEL_INSTANCE_TYPE);
    node_taints(snap, sn, nc->spec.taints, nc->spec.n_taints, nc);
    int err = kp_snapshot_resvec(snap, &nc->capacity, &sn->capacity);
    if (!err)
        err = kp_snapshot_resvec(snap, &nc->allocatable, &sn->allocatable);
    if (!err && nc->allocatable.count == 0)
        unlaunched_room(snap, nc, sn);
    return err;
}

static int cmp_csinode(const void *a, const void *b)
{
    return strcmp((*(const kp_csinode *const *)a)->meta.name, (*(const kp_csinode *const *)b)->meta.name);
}

static int find_csinode(const void *key, const void *elem)
{
    return strcmp(key, (*(const kp_csinode *const *)elem)->meta.name);
}

/* The node's attach limits from its CSINode (`sorted` by name). */
static void csi_limits(kp_snapshot *snap, const kp_csinode **sorted, size_t n, kp_snode *sn)
{
    const kp_csinode *const *found = n ? bsearch(sn->name, sorted, n, sizeof(*sorted), find_csinode) : NULL;
    if (!found)
        return;
    const kp_csinode *cn = *found;
    kp_csi_limit *limits = KP_ARENA_NEW(snap->arena, kp_csi_limit, cn->n_drivers ? cn->n_drivers : 1);
    uint32_t k = 0;
    for (size_t i = 0; i < cn->n_drivers; i++)
        if (cn->drivers[i].has_count && *cn->drivers[i].name)
            limits[k++] = (kp_csi_limit){kp_sym_intern(snap->symtab, cn->drivers[i].name), cn->drivers[i].count};
    sn->csi_limits = limits;
    sn->n_csi_limits = k;
}

static int add_nodes(kp_snapshot *snap, const kp_cluster *c)
{
    const kp_csinode **sorted = kp_xmalloc((c->n_csinodes ? c->n_csinodes : 1) * sizeof(*sorted));
    if (c->n_csinodes) {
        memcpy(sorted, c->csinodes, c->n_csinodes * sizeof(*sorted));
        qsort(sorted, c->n_csinodes, sizeof(*sorted), cmp_csinode);
    }
    for (size_t i = 0; i < c->n_nodes; i++) {
        int err = add_node(snap, c, c->nodes[i]);
        if (err < 0) {
            free(sorted);
            return kp_error_wrap(err, "node %s", c->nodes[i]->meta.name);
        }
        csi_limits(snap, sorted, c->n_csinodes, &snap->nodes[snap->n_nodes - 1]);
    }
    free(sorted);
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        if (claim_has_node(c, c->nodeclaims[i]))
            continue;
        int err = add_in_flight(snap, c->nodeclaims[i]);
        if (err < 0)
            return kp_error_wrap(err, "nodeclaim %s", c->nodeclaims[i]->meta.name);
    }
    return 0;
}

/* A NodePool is a template when it is not being deleted and is Ready.
 * Manifests written by hand carry no status, so there only an explicit Ready
 * other than True rules a NodePool out; on a live cluster a NodePool whose
 * status is not written yet waits for it. Static NodePools (spec.replicas)
 * are templates too, flagged: their nodes need a NodePool for budgets and
 * drift, but the solver launches nothing from them. */
bool kp_snapshot_nodepool_provisions(const kp_cluster *c, const kp_nodepool *np)
{
    const kp_condition *ready = kp_conditions_get(&np->conditions, "Ready");
    if (!ready)
        return !np->meta.deletion_timestamp.set && !c->ready_pools_only;
    return !np->meta.deletion_timestamp.set && ready->status == KP_CONDITION_TRUE;
}

/* Each template's instance types: the cluster's catalog, or the pool's own
 * when the cluster says how to find it (compiled once per catalog). */
static int assign_catalogs(kp_snapshot *snap, const kp_cluster *c, int first)
{
    const kp_catalog *seen[64];
    int seen_first[64];
    uint32_t n_seen = 0;
    for (uint32_t t = 0; t < snap->n_templates; t++) {
        const kp_catalog *cat = c->catalog;
        if (c->catalog_for) cat = c->catalog_for(c->catalog_ctx, snap->templates[t].src);
        if (!cat) continue;
        int at = cat == c->catalog ? first : -1;
        for (uint32_t i = 0; i < n_seen && at < 0; i++)
            if (seen[i] == cat) at = seen_first[i];
        if (at < 0) {
            if ((at = kp_snapshot_add_catalog(snap, cat)) < 0) return at;
            if (n_seen < 64) seen[n_seen] = cat, seen_first[n_seen++] = at;
        }
        kp_snapshot_template_use_its(snap, t, (uint32_t)at, (uint32_t)cat->count);
    }
    return 0;
}

int kp_snapshot_build_pods(kp_snapshot *snap, const kp_cluster *c)
{
    return kp_snapshot_add_pods(snap, c);
}

int kp_snapshot_build(const kp_cluster *c, kp_snapshot **out)
{
    kp_snapshot *snap = kp_snapshot_new();
    int err = 0;
    int first = 0;
    if (c->catalog && (first = kp_snapshot_add_catalog(snap, c->catalog)) < 0)
        err = first;
    for (size_t i = 0; i < c->n_nodepools && !err; i++)
        if (kp_snapshot_nodepool_provisions(c, c->nodepools[i]))
            err = add_template(snap, c->nodepools[i]);
    if (!err)
        err = add_nodes(snap, c);
    if (!err)
        err = kp_snapshot_add_pods(snap, c);
    if (!err)
        err = kp_snapshot_add_daemons(snap, c);
    if (err < 0) {
        kp_snapshot_free(snap);
        return err;
    }
    snap->pdbs = c->pdbs;
    snap->n_pdbs = (uint32_t)c->n_pdbs;
    kp_snapshot_sort_templates(snap);
    if ((err = assign_catalogs(snap, c, first)) < 0) {
        kp_snapshot_free(snap);
        return err;
    }
    *out = snap;
    return 0;
}
