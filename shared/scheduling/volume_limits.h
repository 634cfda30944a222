/*
 * CSI attach limits, as Karpenter's VolumeUsage: a node's CSINode says how
 * many volumes each CSI driver may attach there (allocatable.count); every
 * persistent volume claim a pod mounts counts against the driver that
 * attaches it, once per node however many of its pods share the claim. A
 * pod whose claims would take a driver past its count does not go to that
 * node. Nodes without a CSINode, and drivers without a count, are unlimited.
 */
#ifndef KP_SCHEDULING_VOLUME_LIMITS_H
#define KP_SCHEDULING_VOLUME_LIMITS_H

/* The CSI driver behind a provisioner or in-tree plugin name, as Kubernetes'
 * csi-translation-lib names it ("kubernetes.io/aws-ebs" is
 * "ebs.csi.aws.com"); any other name is its own. */
const char *kp_csi_driver_name(const char *provisioner);

#endif
