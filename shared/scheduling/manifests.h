/*
 * Manifests for offline planning: decoded objects gathered from YAML/JSON
 * documents, workloads expanded into the pods their controllers would create
 * (NAME-0, NAME-1, ...; StatefulSets with their volume claims), and a
 * kp_cluster view for the snapshot builder. Kinds the planner does not use
 * are skipped with a note.
 */
#ifndef KP_SCHEDULING_MANIFESTS_H
#define KP_SCHEDULING_MANIFESTS_H

#include "format/load.h"
#include "scheduling/snapshot_build.h"

typedef struct kp_manifests kp_manifests;

kp_manifests *kp_manifests_new(void);
kp_manifests *kp_manifests_free(kp_manifests *m);

/* Decode every document of `docs`. On a decoding error returns KP_EINVALID
 * with a message naming the file, the document and the field; so is a
 * negative replicas, parallelism or completions (as the API server refuses
 * them). Workloads may ask for 100000 Pods in all: past that, KP_ETOOLARGE
 * naming the file, document and field that crossed the line. */
int kp_manifests_add_docs(kp_manifests *m, const kp_doc_list *docs);

/* Notes about skipped documents ("x.yaml: document 3: skipping ConfigMap")
 * and skipped directory entries ("skipped dir/README.md (not .yaml, ...)"). */
size_t kp_manifests_note_count(const kp_manifests *m);
const char *kp_manifests_note(const kp_manifests *m, size_t i);

/* The NodeOverlays (api/nodeoverlay.h), those validation refuses marked
 * `invalid`; pointers into `m`. */
size_t kp_manifests_nodeoverlays(const kp_manifests *m, const kp_nodeoverlay *const **out);

/* The cluster view (pointers into `m`, valid until it is freed or changed). */
void kp_manifests_cluster(kp_manifests *m, const kp_catalog *catalog, kp_cluster *out);

/* Counts by kind, for the "what was parsed" summary. */
typedef struct kp_manifest_counts {
    size_t nodepools, ec2nodeclasses, nodes, nodeclaims, pods, pending_pods, daemonsets, pdbs, pvcs, pvs,
        storage_classes, workloads;
} kp_manifest_counts;

kp_manifest_counts kp_manifests_counts(const kp_manifests *m);

#endif
