/*
 * What-if on a live cluster, the object side: the objects read from the API
 * server, with those of the -f files laid over them and those --without names
 * taken away, before planning.
 *
 *   - Identity is kubectl apply's: kind, namespace, name. A -f object with the
 *     identity of a live one replaces it ("what if I apply this NodePool");
 *     like apply, it keeps the live object's status when it has none of its
 *     own (a NodePool stays Ready, a Node keeps its capacity). Any other -f
 *     object is added ("what if these 500 pods arrive"). A namespaced -f
 *     object without a namespace goes into the default namespace given (the
 *     kubeconfig context's, as kubectl).
 *   - --without KIND/NAME (cluster-scoped kinds) or KIND/NAMESPACE/NAME
 *     removes an object ("what if I delete this one") and what Kubernetes
 *     and Karpenter would remove with it: a NodePool takes its NodeClaims
 *     (owner references) and their Nodes; a NodeClaim its Node; a Node its
 *     NodeClaim; a Namespace everything in it. The pods of a removed Node
 *     are evicted: those a controller owns are pending again (their
 *     controller makes them anew), DaemonSet and mirror pods go with the
 *     node, and pods with no controller are gone (counted in the notes).
 *     KIND is a kind or its plural, any case (nodepool, NodePools).
 *     Naming nothing that exists is an error, never a silent no-op.
 *
 * Ownership: kp_sim_merge takes every tree out of `live` and `files` and
 * puts the survivors into `out`; notes are the report's (free it).
 */
#ifndef KP_CONTROLLER_SIMULATE_MERGE_H
#define KP_CONTROLLER_SIMULATE_MERGE_H

#include "controller/sim_notes.h"
#include "format/load.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct kp_sim_without {
    const char *arg;  /* as given, for messages */
    const char *kind; /* canonical: "NodePool" (static storage) */
    char ns[254];     /* "" for cluster-scoped kinds */
    char name[254];
} kp_sim_without;

/* Parse one --without argument. KP_EINVALID naming the argument: an unknown
 * kind, a namespace missing for a namespaced kind or given for a
 * cluster-scoped one, an empty part. */
int kp_sim_without_parse(const char *arg, kp_sim_without *out);

typedef struct kp_sim_merge_opts {
    const char *default_namespace; /* NULL: "default" */
    const kp_sim_without *without;
    size_t n_without;
} kp_sim_merge_opts;

typedef struct kp_sim_merge_report {
    size_t live;        /* objects read from the cluster */
    size_t replaced;    /* -f objects that replaced a live one */
    size_t added;       /* -f objects that are new */
    size_t removed;     /* objects --without removed, cascades included */
    size_t rescheduled; /* pods of removed nodes that are pending again */
    size_t lost;        /* pods of removed nodes no controller makes again */
    kp_sim_notes notes; /* one line per replacement and per --without */
} kp_sim_merge_report;

/* Merge as above into `out` (appended). KP_ENOTFOUND when a --without names
 * no object, KP_EINVALID for a -f object whose kind, name or namespace is
 * not a string. On failure `out` may hold part of the result. */
int kp_sim_merge(kp_doc_list *live, kp_doc_list *files, const kp_sim_merge_opts *opts, kp_doc_list *out,
                 kp_sim_merge_report *report);

void kp_sim_merge_report_clear(kp_sim_merge_report *report);

#endif
