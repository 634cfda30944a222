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
 * daemon endpoints and config status. Then the member names and string
 * values that Kubernetes objects repeat everywhere are made to share one
 * constant copy (informer_strings.c).
 *
 * Whoever reads a new field of a cached object must make sure it is kept here.
 * Cached objects are read-only: a shared string must never be written to
 * (cJSON_SetValuestring); change a duplicate instead.
 */
#ifndef KP_KUBE_INFORMER_TRANSFORM_H
#define KP_KUBE_INFORMER_TRANSFORM_H

#include "kube/resources.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Trim `obj` (an object of kind `res`) in place, then share its strings. */
void kp_informer_trim(enum kp_kube_res res, cJSON *obj);

/* Point the well-known names and values in `obj` at shared constants. */
void kp_informer_share_strings(cJSON *obj);
/* Whether the tables of shared strings are in the order bisection needs. */
bool kp_informer_shared_tables_sorted(void);

#endif
