/*
 * The kinds the controller reads and writes, and how each maps to a REST
 * path: group, version, plural, whether it lives in a namespace. One static
 * table; PodDisruptionBudgets and Evictions come in two versions (policy/v1,
 * and policy/v1beta1 on servers before 1.21), which the client picks by
 * discovery (rest.h: kp_kube_client_resource).
 */
#ifndef KP_KUBE_RESOURCES_H
#define KP_KUBE_RESOURCES_H

#include "base/buf.h"

#include <stdbool.h>

enum kp_kube_res {
    KP_RES_POD,
    KP_RES_NODE,
    KP_RES_NAMESPACE,
    KP_RES_EVENT,
    KP_RES_PVC,
    KP_RES_PV,
    KP_RES_CONFIGMAP,
    KP_RES_SERVICE,
    KP_RES_REPLICATIONCONTROLLER,
    KP_RES_STORAGECLASS,
    KP_RES_CSINODE,
    KP_RES_VOLUMEATTACHMENT,
    KP_RES_DAEMONSET,
    KP_RES_DEPLOYMENT,
    KP_RES_REPLICASET,
    KP_RES_STATEFULSET,
    KP_RES_JOB,
    KP_RES_PDB, /* policy/v1, or v1beta1 where the server lacks v1 */
    KP_RES_LEASE,
    KP_RES_PRIORITYCLASS,
    KP_RES_CRD,
    KP_RES_NODEPOOL,
    KP_RES_NODECLAIM,
    KP_RES_EC2NODECLASS,
    KP_RES_KWOKNODECLASS,
    KP_RES_PODTEMPLATE,
    KP_RES_CAPACITYBUFFER, /* autoscaling.x-k8s.io/v1beta1 (CapacityBuffer gate) */
    KP_RES_NODEOVERLAY,    /* karpenter.sh/v1alpha1 */
    KP_RES_COUNT
};

typedef struct kp_kube_resource {
    const char *group; /* "" for the core group */
    const char *version;
    const char *api_version; /* "v1", "apps/v1", "karpenter.sh/v1" */
    const char *plural;
    const char *kind;
    bool namespaced;
} kp_kube_resource;

/* The table entry (static, never freed); NULL for an out-of-range value. */
const kp_kube_resource *kp_kube_resource_get(enum kp_kube_res res);
/* The policy/v1beta1 PodDisruptionBudget, for servers without policy/v1. */
const kp_kube_resource *kp_kube_resource_pdb_v1beta1(void);
/* Look a kind up by its plural ("pods") or kind ("Pod"); KP_RES_COUNT if unknown. */
enum kp_kube_res kp_kube_resource_find(const char *name);

/* Append the path of a collection (name NULL) or an object, with an optional
 * subresource: /api/v1/namespaces/NS/pods/NAME/status. `ns` NULL or "" for
 * cluster-scoped kinds and for lists across all namespaces. Segments are
 * percent-encoded where needed. */
int kp_kube_resource_path(kp_buf *out, const kp_kube_resource *r, const char *ns, const char *name,
                          const char *subresource);

/* Append `s` percent-encoded for a path segment or query value (RFC 3986
 * unreserved characters pass as they are). */
int kp_kube_escape(kp_buf *out, const char *s);

#endif
