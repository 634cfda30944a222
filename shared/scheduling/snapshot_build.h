/*
 * Building a snapshot from decoded objects (api/objects.h): what simulate
 * does with manifests and the controller does with its informer cache. The
 * objects are borrowed: they must outlive the snapshot.
 */
#ifndef KP_SCHEDULING_SNAPSHOT_BUILD_H
#define KP_SCHEDULING_SNAPSHOT_BUILD_H

#include "api/objects.h"
#include "cloud/instance_types.h"
#include "scheduling/snapshot.h"

typedef struct kp_namespace_info {
    const char *name;
    kp_labels labels;
} kp_namespace_info;

typedef struct kp_cluster {
    const kp_nodepool *const *nodepools;
    size_t n_nodepools;
    const kp_node *const *nodes;
    size_t n_nodes;
    const kp_nodeclaim *const *nodeclaims;
    size_t n_nodeclaims;
    const kp_pod *const *pods; /* pending and bound */
    size_t n_pods;
    const kp_workload *const *daemonsets;
    size_t n_daemonsets;
    const kp_pvc *const *pvcs;
    size_t n_pvcs;
    const kp_pv *const *pvs;
    size_t n_pvs;
    const kp_storage_class *const *storage_classes;
    size_t n_storage_classes;
    const kp_pdb *const *pdbs;
    size_t n_pdbs;
    const kp_namespace_info *namespaces; /* for namespaceSelector; may be empty */
    size_t n_namespaces;
    const kp_csinode *const *csinodes; /* the nodes' CSI attach limits; may be empty */
    size_t n_csinodes;
    const kp_catalog *catalog; /* the instance types every NodePool can use */
    /* Optional: a NodePool's own instance types (a cloud where they depend on
     * the pool's node class); NULL from it means none. `catalog` then still
     * serves existing nodes' types. Catalogs are compiled once per pointer. */
    const kp_catalog *(*catalog_for)(void *ctx, const kp_nodepool *np);
    void *catalog_ctx;
    /* Optional: whether a Node is this autoscaler's provider's (the controller
     * asks cloud/ownership.h; NULL: every Node is). A Node it refuses is
     * capacity pods may use, never a pool's node nor a disruption candidate. */
    bool (*node_owned)(void *ctx, const kp_node *n);
    void *node_owned_ctx;
    /* A live cluster, whose controller writes every NodePool's status: a
     * NodePool provisions only once its Ready condition is True (Karpenter's
     * provisioner ignores the others). false: manifests, where a NodePool
     * without status provisions. */
    bool ready_pools_only;
} kp_cluster;

int kp_snapshot_build(const kp_cluster *cluster, kp_snapshot **out);

/* Whether NodePool `np` of `cluster` becomes a template of the snapshot: not
 * being deleted, and Ready (see ready_pools_only for a NodePool without status). */
bool kp_snapshot_nodepool_provisions(const kp_cluster *cluster, const kp_nodepool *np);

/* Add cluster->pods to a snapshot built earlier (volumes and namespaces they
 * name come from the rest of `cluster`): one solve for a few pods against
 * NodePools and instance types compiled once. Setting snapshot->n_pods back
 * to what it was takes them away again; the arena and the symbols they used
 * stay until the snapshot is freed. */
int kp_snapshot_build_pods(kp_snapshot *snapshot, const kp_cluster *cluster);

/* Index of the snapshot pod built from cluster->pods[i] is i; of the
 * snapshot node built from cluster->nodes[i] is i; in-flight NodeClaims
 * follow the nodes. */

#endif
