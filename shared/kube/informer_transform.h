/*
 * What an informer keeps of an object: the cache holds every Pod and Node of
 * the cluster for as long as the process runs, so before an object is cached
 * (and handed to handlers) the parts nothing in this program reads are cut
 * away, as client-go's SetTransform lets Karpenter's users do: every kind's
 * metadata.managedFields and last-applied-configuration annotation; a Pod's
 * (and a DaemonSet template's) container fields other than name, image,
 * resources, restartPolicy and ports, the contents of volume sources other
 * than PVCs and ephemeral volumes (their presence is what counts), and the
 * container statuses and addresses in its status; a Node's image list,
 * daemon endpoints and config status.
 *
 * Whoever reads a new field of a cached object must make sure it is kept here.
 */
#ifndef KP_KUBE_INFORMER_TRANSFORM_H
#define KP_KUBE_INFORMER_TRANSFORM_H

#include "kube/resources.h"

#include <cjson/cJSON.h>

/* Trim `obj` (an object of kind `res`) in place. */
void kp_informer_trim(enum kp_kube_res res, cJSON *obj);

#endif
