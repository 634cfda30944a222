/*
 * The NodeClaim objects the provisioner creates for a plan's new claims:
 * Karpenter's NodeClaimTemplate.ToNodeClaim, as JSON ready to POST.
 *
 *   metadata   generateName "<nodepool>-"; labels = template labels, the
 *              NodePool and node-class labels, and custom labels the claim's
 *              requirements pin to one value; annotations = template
 *              annotations, the NodePool hash, and karpenter.sh/
 *              price-overlay-applied / capacity-overlay-applied when a
 *              NodeOverlay changed one of its instance types; owned by the
 *              NodePool.
 *   spec       requirements (instance types cheapest first, capacity types,
 *              zones as the plan narrowed them), resources.requests (pods plus
 *              DaemonSet overhead), taints, startupTaints, nodeClassRef,
 *              expireAfter and terminationGracePeriod from the template.
 */
#ifndef KP_PROVISIONING_NODECLAIM_OBJECT_H
#define KP_PROVISIONING_NODECLAIM_OBJECT_H

#include "scheduling/solver.h"

#include <cjson/cJSON.h>

/* The node-class label of a nodeClassRef: "karpenter.k8s.aws/ec2nodeclass"
 * for group karpenter.k8s.aws, kind EC2NodeClass. Written into buf. */
const char *kp_node_class_label(const char *group, const char *kind, char *buf, size_t size);

/* The NodeClaim for plan claim `claim`. `pool_hash` is the NodePool's
 * current template hash (kp_nodepool_hash), NULL to leave the hash
 * annotations out. The claim's template must come from a decoded NodePool
 * (kp_template.src). A static NodePool's claim (kp_static_claim) is made as
 * Karpenter makes one from the template alone: its requirements with its
 * labels added, no instance-type list (the cloud provider launches the
 * cheapest offering they allow) and no resource requests. */
cJSON *kp_nodeclaim_object(const kp_plan *plan, const kp_snapshot *snap, uint32_t claim, const char *pool_hash);

#endif
