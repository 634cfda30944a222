/*
 * kwok: the embedded default cloud provider. It "launches" a machine by
 * creating a Node object through the API server, so the autoscaler runs
 * end to end on any cluster without a cloud account (Karpenter's kwok
 * provider, which relies on the kwok controller for the kubelet's part; here
 * kp_kwok_kubelet in kwok_kubelet.h plays that part).
 *
 * create(claim) needs the claim's KWOKNodeClass (spec.nodeClassRef): a
 * missing class is KP_EINSUFFICIENT_CAPACITY and one whose Ready condition
 * is False KP_ENOTREADY, as in Karpenter's kwok provider. It
 * picks the cheapest available offering the claim allows
 * across its instance types (ties: the first in the claim's order; prices as
 * the NodeOverlays make them when `overlaid` is set), and
 * creates a Node named after the claim with providerID "kwok://<name>":
 *
 *   labels       the claim's labels, every requirement key that comes down
 *                to one value once the claim, the type and the offering are
 *                intersected (instance type, zone, capacity type, nodepool,
 *                the type's single-valued labels...), kubernetes.io/arch
 *                and /os (amd64 and linux unless the type or claim says
 *                otherwise), kubernetes.io/hostname, kwok.x-k8s.io/node=fake
 *   annotations  the claim's, plus kwok.x-k8s.io/node=fake
 *   spec         providerID; taints [karpenter.sh/unregistered:NoExecute]
 *                (Karpenter's registration removes it and adds the claim's)
 *   status       capacity = the type's, allocatable = capacity - overhead,
 *                plus what the claim requests that the type lacks (extended
 *                resources, as Karpenter's kwok provider),
 *                Ready True (pressure conditions False), nodeInfo,
 *                addresses (a made-up InternalIP and the hostname)
 *
 * Creating a Node that exists already (a retried create) answers with that
 * Node when it is a kwok one. delete() deletes the Node: 0 when the deletion
 * was asked for, KP_ENOTFOUND once the Node is gone or terminating (a
 * terminating Node has no machine left to wait for; waiting would deadlock
 * on Karpenter's own finalizer). get() is KP_ENOTFOUND for a terminating
 * Node, as Karpenter's; list() reports every Node with a kwok provider ID,
 * terminating ones flagged. instance_types() is the catalog for every pool;
 * is_drifted() never finds drift.
 *
 * The provider borrows the client (and a catalog given in the options); it is
 * stateless otherwise, so safe to call from several threads.
 */
#ifndef KP_CLOUD_KWOK_H
#define KP_CLOUD_KWOK_H

#include "base/clock.h"
#include "cloud/instance_types.h"
#include "cloud/provider.h"
#include "kube/rest.h"

#define KP_KWOK_PROVIDER_PREFIX "kwok://"
/* The node class the kwok provider serves (spec.nodeClassRef), as
 * Karpenter's kwok provider: cluster-scoped, karpenter.kwok.sh/v1alpha1. */
#define KP_KWOK_NODE_CLASS_GROUP "karpenter.kwok.sh"
#define KP_KWOK_NODE_CLASS_KIND  "KWOKNodeClass"
/* The marker label and annotation the kwok tools use for their nodes. */
#define KP_KWOK_LABEL           "kwok.x-k8s.io/node"
#define KP_KWOK_LABEL_VALUE     "fake"
#define KP_KWOK_KUBELET_VERSION "v1.20.2-kwok"

typedef struct kp_kwok_opts {
    /* The instance types (borrowed: it must outlive the provider). NULL: the
     * built-in AWS catalog, which the provider then owns. */
    const kp_catalog *catalog;
    const kp_clock *clock;       /* NULL: the system clock */
    const char *kubelet_version; /* nodeInfo.kubeletVersion; NULL: KP_KWOK_KUBELET_VERSION */
    /* The instance types a claim is launched from as the scheduler priced
     * them (NodeOverlays, cloud/overlay.h): a catalog create() frees after
     * use, or NULL for `catalog` as it is. NULL: the catalog always. */
    kp_catalog *(*overlaid)(void *ctx, const kp_nodeclaim *claim, const kp_catalog *catalog);
    void *overlaid_ctx;
} kp_kwok_opts;

#define KP_KWOK_OPTS_INIT                                                                          \
    {                                                                                              \
        NULL, NULL, NULL, NULL, NULL                                                               \
    }

/* A provider creating Nodes through `client` (borrowed). `opts` may be NULL.
 * Fails only when the default catalog cannot be built. Free it with
 * kp_cloud_free(). */
int kp_kwok_provider_new(kp_kube_client *client, const kp_kwok_opts *opts, kp_cloud_provider **out);

#endif
