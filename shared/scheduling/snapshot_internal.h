/* Shared by snapshot_build.c and snapshot_pods.c; not part of the interface. */
#ifndef KP_SCHEDULING_SNAPSHOT_INTERNAL_H
#define KP_SCHEDULING_SNAPSHOT_INTERNAL_H

#include "scheduling/snapshot_build.h"

int kp_snapshot_add_selector_reqs(kp_snapshot *snap, kp_requirements *reqs, const kp_selector_req *items,
                                  size_t n);
void kp_snapshot_add_label_reqs(kp_snapshot *snap, kp_requirements *reqs, const kp_labels *labels);
/* Resource amounts as a vector, adding unknown names to the snapshot's table. */
int kp_snapshot_resvec(kp_snapshot *snap, const kp_resource_list *list, kp_resvec *out);
int kp_snapshot_add_pods(kp_snapshot *snap, const kp_cluster *cluster);
int kp_snapshot_add_daemons(kp_snapshot *snap, const kp_cluster *cluster);

#endif
