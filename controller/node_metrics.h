/*
 * Karpenter's node gauges for one pass: every Node in the cache with its
 * well-known labels (metrics_ctrl.h's kp_node_metric_labels), what it offers
 * (allocatable, capacity minus allocatable), what its pods and DaemonSet
 * pods request and limit, and its age; then cluster utilization. The table
 * built here also answers the pod gauges' questions about a pod's node.
 */
#ifndef KP_CONTROLLER_NODE_METRICS_H
#define KP_CONTROLLER_NODE_METRICS_H

#include "controller/ctrl.h"
#include "controller/pod_metrics.h"

typedef struct kp_node_table kp_node_table;

/* Read the nodes and pods now cached. */
kp_node_table *kp_node_table_build(kp_ctrl *c);
kp_node_table *kp_node_table_free(kp_node_table *t);

/* Set the node gauges and karpenter_cluster_utilization_percent (each family
 * replaced as a whole). */
void kp_node_table_publish(kp_node_table *t, kp_ctrl_metrics *m, int64_t now_ns);

/* How many Nodes the table holds. */
size_t kp_node_table_len(const kp_node_table *t);

/* A kp_pod_node_lookup over the table (ctx: the table). */
const kp_pod_node_info *kp_node_table_lookup(void *ctx, const char *node);

#endif
