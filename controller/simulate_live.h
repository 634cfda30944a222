/*
 * What-if on a live cluster, the reading side: what `simulate --kubeconfig`
 * plans from, read through the API server and never written.
 *
 * The load is one LIST per kind, paged by `page_size` objects (so
 * ceil(objects / page_size) GETs for the kind), through one client with its
 * own QPS budget, each request under the client's timeout, each kind's
 * pages under the client's body cap, and the whole read under `deadline_ms`:
 *
 *   karpenter.sh      nodepools, nodeclaims
 *   karpenter.k8s.aws ec2nodeclasses (only with node_classes: the aws
 *                     provider's catalogs depend on them)
 *   core              nodes, pods, namespaces (their labels, for
 *                     namespaceSelector), persistentvolumeclaims,
 *                     persistentvolumes
 *   apps              daemonsets
 *   policy            poddisruptionbudgets (v1, or v1beta1 before 1.21: one
 *                     discovery GET of /apis/policy/v1 decides)
 *   storage.k8s.io    storageclasses
 *
 * The objects become documents of `out`, with apiVersion and kind set as a
 * file would have them. An object that does not decode is left out and
 * counted, as the controller's informers leave it out: one bad object does
 * not stop the plan. A Karpenter kind the server does not serve (its CRD is
 * not installed) is read as none, with a note.
 */
#ifndef KP_CONTROLLER_SIMULATE_LIVE_H
#define KP_CONTROLLER_SIMULATE_LIVE_H

#include "format/load.h"
#include "kube/rest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_sim_live_opts {
    bool node_classes;   /* list EC2NodeClasses too */
    int page_size;       /* objects per page */
    int64_t deadline_ms; /* the whole read; <= 0: no deadline beyond each request's */
} kp_sim_live_opts;

#define KP_SIM_LIVE_OPTS_INIT {false, 500, 120000}

enum { KP_SIM_LIVE_MAX_KINDS = 12, KP_SIM_LIVE_MAX_NOTES = 16 };

typedef struct kp_sim_live_kind {
    const char *plural; /* "pods" */
    size_t objects;     /* read and kept */
    size_t skipped;     /* read and left out: they do not decode */
    bool served;        /* false: the server has no such resource */
} kp_sim_live_kind;

typedef struct kp_sim_live_stats {
    kp_sim_live_kind kinds[KP_SIM_LIVE_MAX_KINDS];
    size_t n_kinds;
    size_t objects, skipped;
    /* Why objects were left out or kinds were not served; at most
     * KP_SIM_LIVE_MAX_NOTES (skips past that are only counted). */
    char notes[KP_SIM_LIVE_MAX_NOTES][400];
    size_t n_notes;
} kp_sim_live_stats;

/* Read as above, appending to `out`. Errors name the kind and the server:
 * KP_EFORBIDDEN (with the ClusterRole to bind), KP_ETIMEOUT past the
 * deadline, the client's errors otherwise. `opts` NULL: the defaults. */
int kp_sim_live_read(kp_kube_client *client, const kp_sim_live_opts *opts, kp_doc_list *out,
                     kp_sim_live_stats *stats);

#endif
