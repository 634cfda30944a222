/*
 * What the kwok provider's files share: the provider and kubelet structs,
 * the offering choice and Node construction (kwok_launch.c), the kubelet's
 * reconcilers (kwok_node.c, kwok_pod.c) and small JSON, time and address
 * helpers (kwok_util.c). Not part of the library's interface.
 */
#ifndef KP_CLOUD_KWOK_INTERNAL_H
#define KP_CLOUD_KWOK_INTERNAL_H

#include "cloud/kwok/kwok.h"
#include "cloud/kwok/kwok_kubelet.h"
#include "kube/objutil.h"
#include "kube/strmap.h"
#include "kube/workqueue.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KWOK_LEASE_NAMESPACE   "kube-node-lease"
#define KWOK_TAINT_NOT_READY   "node.kubernetes.io/not-ready"
#define KWOK_TAINT_UNREACHABLE "node.kubernetes.io/unreachable"

/* ------------------------------------------------------------ provider */

typedef struct kwok_provider {
    kp_cloud_provider base;
    kp_kube_client *client;
    const kp_catalog *catalog;
    kp_catalog *owned_catalog; /* the default catalog, when the options gave none */
    const kp_clock *clock;
    char *kubelet_version;
    kp_catalog *(*overlaid)(void *ctx, const kp_nodeclaim *claim, const kp_catalog *catalog);
    void *overlaid_ctx;
} kwok_provider;

/* The offering create() launches and the labels it fixes. */
typedef struct kwok_choice {
    const kp_instance_type *type;
    const kp_offering *offering;
    cJSON *labels; /* requirement-derived labels (object), the caller's to free */
} kwok_choice;

/* The cheapest available offering `claim` allows. KP_EINSUFFICIENT_CAPACITY
 * when none; KP_EINVALID when a requirement is malformed. */
int kwok_choose(const kp_catalog *catalog, const kp_nodeclaim *claim, kwok_choice *out);

/* The Node create() posts for `claim` on `choice`. */
cJSON *kwok_node_object(const kwok_provider *p, const kp_nodeclaim *claim,
                        const kwok_choice *choice);

/* ------------------------------------------------------------ kubelet */

typedef struct kwok_node_state {
    int64_t status_ns; /* clock time of our last status patch */
    int64_t lease_ns;  /* ... and of our last Lease renewal */
    char ip[48];       /* the node's InternalIP, the hostIP of its pods */
} kwok_node_state;

typedef int (*kwok_reconcile_fn)(kp_kwok_kubelet *k, const char *key, int64_t *requeue_ms);

/* What one worker thread serves. */
typedef struct kwok_worker {
    kp_kwok_kubelet *k;
    kp_workqueue *queue;
    kwok_reconcile_fn fn;
} kwok_worker;

struct kp_kwok_kubelet {
    kp_kube_client *client;
    kp_informer *nodes;
    kp_informer *pods;
    kp_kwok_kubelet_opts opts;
    const kp_clock *clock;
    kp_workqueue *node_queue; /* node names */
    kp_workqueue *pod_queue;  /* "namespace/name" */
    pthread_mutex_t lock;     /* guards node_state */
    kp_strmap node_state;     /* kwok node name -> kwok_node_state */
    kwok_worker node_worker;
    kwok_worker pod_worker;
    pthread_t *threads;
    int n_threads;
    bool started;
    bool stopped;
    atomic_bool stopping; /* workers drop their keys instead of working on them */
    atomic_ulong node_status;
    atomic_ulong leases;
    atomic_ulong taints_removed;
    atomic_ulong pods_running;
    atomic_ulong pods_finished;
    atomic_ulong failures;
};

/* Reconcile one key; *requeue_ms > 0 asks to be called again after that
 * long. A negative KP_E* is retried with back-off. */
int kwok_reconcile_node(kp_kwok_kubelet *k, const char *name, int64_t *requeue_ms);
int kwok_reconcile_pod(kp_kwok_kubelet *k, const char *key, int64_t *requeue_ms);

/* Whether `name` is a kwok node the kubelet knows. */
bool kwok_kubelet_has_node(kp_kwok_kubelet *k, const char *name);
/* A copy of the node's state; false when it is not a known kwok node. */
bool kwok_kubelet_node_state(kp_kwok_kubelet *k, const char *name, kwok_node_state *out);
/* Start knowing `name` (no-op when known) with its InternalIP (NULL: none
 * or unchanged), in one step so no pod of it is seen without the address;
 * true when it was new. */
bool kwok_kubelet_know(kp_kwok_kubelet *k, const char *name, const char *ip);
/* Forget `name`; true when it was known. */
bool kwok_kubelet_forget(kp_kwok_kubelet *k, const char *name);
/* Record what was just done: times (0 leaves a field as it was), the
 * address (NULL: unchanged). */
void kwok_kubelet_note(kp_kwok_kubelet *k, const char *name, int64_t status_ns, int64_t lease_ns,
                       const char *ip);

/* ------------------------------------------------------------ helpers */

/* Whether the Node's spec.providerID is a kwok one. */
bool kwok_is_kwok_node(const cJSON *node);
/* A condition object; `heartbeat` NULL leaves lastHeartbeatTime out (pods have none). */
cJSON *kwok_condition(const char *type, const char *status, const char *reason, const char *message,
                      const char *heartbeat, const char *transition);

/* The conditions a healthy kubelet reports (Ready True, the pressure
 * conditions False), heartbeat `now`; a condition whose status `old_node`
 * already has keeps its lastTransitionTime. `old_node` may be NULL. */
cJSON *kwok_node_conditions(const cJSON *old_node, const char *now);

/* The InternalIP in a Node's status.addresses, or NULL. */
const char *kwok_node_internal_ip(const cJSON *node);
/* status.addresses of a kwok node: a made-up InternalIP and the hostname. */
cJSON *kwok_node_addresses(const char *name);

/* metav1.Time (seconds) and metav1.MicroTime (Leases) text; size >= 32. */
void kwok_time(int64_t ns, char *buf, size_t size);
void kwok_micro_time(int64_t ns, char *buf, size_t size);
/* A made-up IPv4 address, stable for `seed`: 10.0-127.x.y for nodes,
 * 10.128-255.x.y for pods; size >= 16. */
void kwok_made_up_ip(const char *seed, bool pod, char *buf, size_t size);

/* How long until `due_ns`, in ms, at least 1. */
int64_t kwok_ms_until(int64_t now_ns, int64_t due_ns);

#endif
