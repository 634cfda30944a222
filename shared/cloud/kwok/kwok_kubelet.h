/*
 * The kubelet and node-lifecycle stand-in for kwok nodes (Nodes whose
 * providerID starts with "kwok://"): what a real kubelet and the cloud's
 * node controller would do for a machine that does not exist.
 *
 * Nodes:
 *   - the Ready condition stays True with a fresh heartbeat: node status is
 *     patched every status_interval_ms (strategic merge, status subresource);
 *   - a coordination.k8s.io/v1 Lease in kube-node-lease, owned by the Node,
 *     is renewed every lease_interval_ms (created when missing);
 *   - once the Node is Ready, the node.kubernetes.io/not-ready taint that
 *     admission puts on every new Node goes, and so does
 *     node.kubernetes.io/unreachable (a merge patch carrying the
 *     resourceVersion read, so taints added meanwhile are never lost);
 *   - when the Node is gone, its Lease is deleted.
 * Pods bound to a kwok node:
 *   - are reported Running: phase, conditions (Initialized, Ready,
 *     ContainersReady, PodScheduled True), startTime, hostIP, podIP (made
 *     up, stable per pod), a running status per container and a completed
 *     one per init container (sidecars run);
 *   - once being deleted (deletionTimestamp), are finished with a delete of
 *     grace period 0 when the grace period has passed (deletionTimestamp is
 *     reached), or at once with finish_immediately;
 *   - Succeeded and Failed pods are left alone.
 *
 * Work goes through two work queues (nodes, pods), each with its own worker
 * threads, fed by handlers on the caller's informers; timers (heartbeats,
 * grace periods) are delayed re-adds of the key. Times come from the clock,
 * so a test can move a fake clock and call kp_kwok_kubelet_resync().
 *
 * Life cycle: kp_kwok_kubelet_new() registers the handlers, so it must come
 * before the informers start; the informers' handlers use the kubelet until
 * the informers stop, so stop them before kp_kwok_kubelet_free(). The
 * kubelet borrows the client and the informers.
 */
#ifndef KP_CLOUD_KWOK_KUBELET_H
#define KP_CLOUD_KWOK_KUBELET_H

#include "base/clock.h"
#include "kube/informer.h"
#include "kube/rest.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_kwok_kubelet_opts {
    const kp_clock *clock;      /* NULL: the system clock */
    int64_t status_interval_ms; /* node status heartbeat (<= 0: only when not Ready) */
    int64_t lease_interval_ms;  /* Lease renewal; <= 0: no Leases */
    int32_t lease_duration_s;   /* the Lease's leaseDurationSeconds */
    int node_workers;           /* threads per queue (<= 0: 1) */
    int pod_workers;
    bool finish_immediately; /* finish terminating pods without waiting out their grace */
} kp_kwok_kubelet_opts;

/* A kubelet renews its Lease every 10 s (valid 40 s) and reports status at
 * least every 5 minutes; a minute keeps the Ready heartbeat fresh for readers
 * that look at the condition alone. */
#define KP_KWOK_KUBELET_OPTS_INIT                                                                  \
    {                                                                                              \
        NULL, 60000, 10000, 40, 2, 4, false                                                        \
    }

typedef struct kp_kwok_kubelet kp_kwok_kubelet;

/* Register handlers on `nodes` (a Node informer) and `pods` (a Pod
 * informer), neither started yet. `opts` may be NULL (the defaults).
 * KP_EINVALID when an informer has already started (a caller's mistake: if
 * only the pod informer had, the node informer keeps an inert kubelet). */
int kp_kwok_kubelet_new(kp_kube_client *client, kp_informer *nodes, kp_informer *pods,
                        const kp_kwok_kubelet_opts *opts, kp_kwok_kubelet **out);
/* Start the worker threads (once). KP_ERROR when a thread cannot start. */
int kp_kwok_kubelet_start(kp_kwok_kubelet *k);
/* Let the workers finish the keys they hold and join them. Queued work is
 * dropped; the kubelet cannot be started again. */
void kp_kwok_kubelet_stop(kp_kwok_kubelet *k);
/* Stops first if needed. The informers must have stopped. Accepts NULL, returns NULL. */
kp_kwok_kubelet *kp_kwok_kubelet_free(kp_kwok_kubelet *k);

/* Look at every kwok node and every pod bound to one again (after moving a
 * fake clock, or to recover from lost work). */
void kp_kwok_kubelet_resync(kp_kwok_kubelet *k);

typedef struct kp_kwok_kubelet_stats {
    unsigned long node_status;    /* node status patches (heartbeats included) */
    unsigned long leases;         /* Lease creations and renewals */
    unsigned long taints_removed; /* not-ready / unreachable taints removed */
    unsigned long pods_running;   /* pods reported Running */
    unsigned long pods_finished;  /* terminating pods deleted with grace period 0 */
    unsigned long failures;       /* API calls that failed (the key is retried) */
} kp_kwok_kubelet_stats;

void kp_kwok_kubelet_get_stats(kp_kwok_kubelet *k, kp_kwok_kubelet_stats *out);

#endif
