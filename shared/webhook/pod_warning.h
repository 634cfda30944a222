/*
 * "No NodePool can ever run this pod", told at admission: the Pod webhook's
 * warning on CREATE (an AdmissionReview `warnings` entry, which kubectl
 * prints as "Warning: ..."). Advice, never a refusal.
 *
 * The question is the provisioner's, asked with its own solver
 * (scheduling/solver.h) on a cluster of the NodePools alone: no nodes, no
 * other pods, no DaemonSets, so that "never" does not depend on what runs
 * now. The pod is the one being created, without what depends on other pods
 * or objects (pod affinity and anti-affinity, topology spread, volumes, host
 * ports): what is left is its requirements (nodeSelector, required node
 * affinity), tolerations and requests against each NodePool's requirements,
 * taints, limits (counted from zero usage) and instance types. When the
 * solver finds no NodePool that can launch a node for it, the warning gives
 * its reason, per NodePool.
 *
 * To err only on the side of silence, nothing is said when:
 *   - the NodePools are not known yet (the source is not ready) or there are
 *     none (the cluster may not use Karpenter for these pods);
 *   - the pod is bound already (spec.nodeName), a DaemonSet's or a mirror pod;
 *   - a NodePool's requirements match no instance type of the catalog (the
 *     catalog may not be the one its provider uses: the pod may fit there);
 * NodePools' readiness is ignored (a pool not Ready now may be later) and so
 * are minValues that cannot be met (MIN_VALUES_POLICY may be BestEffort).
 *
 * kp_pod_warner runs the check on worker threads and waits for it at most
 * a budget: an answer that is late is dropped (admission goes on without
 * it), a full queue skips the check. Admission is never slowed past the
 * budget, whatever the pod or the NodePools.
 */
#ifndef KP_WEBHOOK_POD_WARNING_H
#define KP_WEBHOOK_POD_WARNING_H

#include "base/arena.h"
#include "cloud/instance_types.h"
#include "metrics/metrics.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* Warnings longer than this may be cut by the API server; ours are cut here. */
#define KP_POD_WARNING_MAX 256

typedef void (*kp_pod_warning_visit)(void *vctx, const cJSON *nodepool);

/* Where the NodePools come from (the webhook: an informer's cache). */
typedef struct kp_pod_warning_source {
    bool (*ready)(void *ctx);                                               /* known yet? */
    void (*foreach)(void *ctx, kp_pod_warning_visit visit, void *vctx); /* borrowed objects */
    void *ctx;
    const kp_catalog *catalog; /* every NodePool's instance types */
} kp_pod_warning_source;

enum kp_pod_verdict {
    KP_POD_SKIPPED = 0, /* not checked (see above) */
    KP_POD_FITS,        /* some NodePool can launch a node for it */
    KP_POD_NEVER,       /* none can: *warning says why */
};

/* The check itself, on the calling thread. `pod` is the Pod as it will be
 * created; `ns` its namespace when the object has none. The warning lives in
 * `arena`. Fails only on what cannot be read (a malformed pod: KP_EINVALID),
 * which the caller treats as nothing to say. */
int kp_pod_warning_check(const kp_pod_warning_source *src, const cJSON *pod, const char *ns, kp_arena *arena,
                         enum kp_pod_verdict *verdict, const char **warning);

/* The same check, for one thread, keeping what is costly between pods: the
 * NodePools and the catalog compiled into a snapshot, rebuilt when a
 * NodePool changes (its resourceVersion) and every few hundred checks. The
 * source is copied; what it points to must outlive the checker. */
typedef struct kp_pod_checker kp_pod_checker;
kp_pod_checker *kp_pod_checker_new(const kp_pod_warning_source *src);
kp_pod_checker *kp_pod_checker_free(kp_pod_checker *checker);
int kp_pod_checker_check(kp_pod_checker *checker, const cJSON *pod, const char *ns, kp_arena *arena,
                         enum kp_pod_verdict *verdict, const char **warning);

typedef struct kp_pod_warner kp_pod_warner;

/* The "result" label's values, for the caller's help text. */
#define KP_POD_WARNING_RESULTS "warned, fits, skipped, late, busy, error"

typedef struct kp_pod_warner_opts {
    kp_pod_warning_source source; /* borrowed: it must outlive the warner */
    int64_t budget_ms;            /* how long admission waits for an answer */
    unsigned workers;             /* threads checking */
    unsigned queue;               /* checks waiting at most; past that, skipped */
    kp_metric *results;           /* a counter family labelled "result" (the caller's); NULL: none */
} kp_pod_warner_opts;

#define KP_POD_WARNER_OPTS_INIT {{NULL, NULL, NULL, NULL}, 100, 2, 64, NULL}

/* Starts the workers. Each check counts in `results` under one of
 * KP_POD_WARNING_RESULTS. */
int kp_pod_warner_new(const kp_pod_warner_opts *opts, kp_pod_warner **out);
/* Stops the workers (a check in progress finishes first). NULL-safe. */
kp_pod_warner *kp_pod_warner_free(kp_pod_warner *warner);

/* The warning for `pod` (in `arena`), or NULL: it fits, nothing is said, or
 * no answer came within the budget. Thread-safe. */
const char *kp_pod_warner_warn(kp_pod_warner *warner, const cJSON *pod, const char *ns, kp_arena *arena);

#endif
