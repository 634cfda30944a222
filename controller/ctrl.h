/*
 * The running controller: what every controller of `karpenter-controller run`
 * shares, and the two ways they run.
 *
 *   kp_ctrl        the process-wide context: options, the Kubernetes client,
 *                  the informers (one cache per kind), the cloud provider,
 *                  events, metrics, the clock and the stop signal. Built by
 *                  run.c before any controller starts; read-only afterwards
 *                  (each field is thread-safe on its own).
 *   reconcilers    N worker threads taking keys from a work queue that the
 *                  informers feed, calling a function per key; failures are
 *                  retried with back-off, successes may ask to be called
 *                  again after a delay (Karpenter's RequeueAfter).
 *   loops          one thread calling a function every period (disruption,
 *                  garbage collection), woken early when asked.
 *
 * Controllers start when this replica becomes the leader and the process
 * exits when it stops being one, as controller-runtime does: a replica that
 * lost its lease cannot know what it missed.
 */
#ifndef KP_CONTROLLER_CTRL_H
#define KP_CONTROLLER_CTRL_H

#include "api/caps.h"
#include "base/clock.h"
#include "cloud/provider.h"
#include "kube/informer.h"
#include "kube/strmap.h"
#include "kube/rest.h"
#include "kube/workqueue.h"
#include "metrics/metrics.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* The kinds the controller caches. */
enum kp_ctrl_kind {
    KP_CK_POD,
    KP_CK_NODE,
    KP_CK_NODECLAIM,
    KP_CK_NODEPOOL,
    KP_CK_DAEMONSET,
    KP_CK_PDB,
    KP_CK_PVC,
    KP_CK_PV,
    KP_CK_STORAGECLASS,
    KP_CK_NAMESPACE,
    KP_CK_VOLUMEATTACHMENT, /* termination waits for a node's to be gone */
    KP_CK_CSINODE, /* the nodes' CSI attach limits */
    KP_CK_NODECLASS, /* the provider's node class (EC2NodeClass, KWOKNodeClass) */
    KP_CK_CAPACITYBUFFER, /* only with FEATURE_GATES CapacityBuffer=true */
    KP_CK_NODEOVERLAY, /* watched only with the NodeOverlay gate */
    KP_CK_COUNT
};

/* Informer index names. */
#define KP_INDEX_POD_NODE "node"          /* pods by spec.nodeName */
#define KP_INDEX_PROVIDER_ID "providerID" /* nodes by spec.providerID, claims by status.providerID */
#define KP_INDEX_NODEPOOL "nodepool"      /* nodes and claims by karpenter.sh/nodepool */

/* Start-up warnings options.c collects (a setting that is set and has no
 * effect here); run.c logs each one. */
#define KP_CTRL_MAX_WARNINGS 48

typedef struct kp_ctrl_opts {
    const char *kubeconfig;     /* NULL: in-cluster, then ~/.kube/config */
    const char *cloud_provider; /* "kwok" or "aws": required, no default */
    const char *instance_types; /* kwok's catalog: "builtin", "synthetic:N" or a file */
    const char *cluster_name;
    int64_t batch_idle_ms; /* provisioning batch: 1 s without new pods ... */
    int64_t batch_max_ms;  /* ... or 10 s after the first */
    int64_t disruption_poll_ms;
    int consolidation_split_max; /* most claims one node may be split into; 1: never (Karpenter) */
    kp_caps caps; /* cluster-wide caps on provisioning (api/caps.h) */
    int disruption_parallelism; /* commands a plan may start at once; 0: as many as budgets allow, 1: serial */
    int64_t registration_ttl_ms; /* a launched claim whose node never registers is deleted */
    int64_t consolidation_validation_ms; /* the wait before a consolidation is re-checked */
    int64_t gc_interval_ms; /* garbage collection between claims and instances (Karpenter: 2 min) */
    int64_t default_tgp_ms; /* a claim without terminationGracePeriod gets this one; 0: none (wait forever) */
    int metrics_port;       /* 0: none */
    int health_port;        /* 0: none */
    const char *bind_address;
    bool leader_elect;
    const char *system_namespace;    /* SYSTEM_NAMESPACE: the Pod's own namespace */
    const char *lease_namespace_set; /* LEADER_ELECTION_NAMESPACE, when given */
    const char *lease_namespace;     /* resolved: the above, else the system namespace, else kube-system */
    const char *lease_name;
    const char *identity; /* this replica's name in the Lease; default hostname_pid */
    double kube_qps;
    int kube_burst;
    int64_t cpu_requests; /* millicores (CPU_REQUESTS): scales worker counts, as Karpenter */
    /* Feature gates (Karpenter's names and defaults). */
    bool spot_to_spot;      /* SpotToSpotConsolidation */
    bool node_repair;       /* NodeRepair */
    const char *node_repair_threshold; /* unhealthy nodes a NodePool may have before repair stops ("20%") */
    bool reserved_capacity; /* ReservedCapacity (on by default since v1.6) */
    bool node_overlay;      /* NodeOverlay */
    bool static_capacity;   /* StaticCapacity */
    bool capacity_buffer;   /* CapacityBuffer */
    /* Scheduling policies. */
    const char *preference_policy; /* "Respect" or "Ignore" */
    const char *min_values_policy; /* "Strict" or "BestEffort" */
    bool ignore_preferences;       /* resolved from preference_policy */
    bool min_values_best_effort;   /* resolved from min_values_policy */
    bool ignore_dra_requests;      /* pods with resourceClaims are not provisioned for */
    bool disable_cluster_state_observability; /* no cluster-state metrics */
    bool kwok_finish_immediately; /* kwok: finish terminating pods at once, not after their grace */
    const char *interruption_queue; /* aws: the SQS queue name; NULL: none */
    const char *cluster_endpoint, *cluster_ca_bundle, *cluster_cidr; /* aws: what nodes join */
    const char *kubernetes_version; /* aws: AMI aliases; NULL: the API server's /version */
    const char *kubernetes_min_version; /* refuse to start on an older API server */
    const char *cluster_dns_ip;         /* discovered: kube-dns's ClusterIP (user data) */
    const char *aws_region, *aws_endpoint_url;
    double vm_memory_overhead_percent;
    int reserved_enis;
    bool isolated_vpc;
    bool eks_control_plane;  /* discover endpoint, CA and service CIDR with EKS DescribeCluster */
    bool disable_dry_run;    /* no dry-run authorization checks for EC2NodeClasses */
    int64_t ami_refresh_ms, subnet_refresh_ms; /* how often EC2NodeClasses are resolved again */
    const char *interruption_dir;   /* a directory of notice files (kwok, tests); NULL: none */
    const char *log_level;
    const char *log_output_paths;       /* comma-separated: stdout, stderr or files */
    const char *log_error_output_paths; /* where failures to write a log line go */
    bool show_version;                  /* --version */
    char warnings[KP_CTRL_MAX_WARNINGS][320];
    int n_warnings;
} kp_ctrl_opts;

void kp_ctrl_opts_init(kp_ctrl_opts *o);

#define KP_CTRL_LAUNCHED_MAX 10000
typedef struct kp_ctrl kp_ctrl;
struct kp_ctrl {
    kp_ctrl_opts opts;
    const kp_clock *clock;
    kp_kube_client *kube;
    struct kp_eventq *events;            /* eventq.h: written in the background */
    kp_metrics *metrics;
    kp_cloud_provider *cloud;
    kp_informer *informers[KP_CK_COUNT]; /* NULL for kinds not watched */
    kp_kube_cancel *stop;                /* fired when the process shuts down */
    struct kp_ctrl_metrics *m;           /* the controller's metric families (metrics_ctrl.h) */
    struct kp_provisioner *provisioner;  /* for triggers from other controllers */
    struct kp_buffers *buffers;          /* CapacityBuffers ready for provisioning (capacitybuffer_ctrl.h); NULL: gate off */
    /* NodeOverlay gate: the overlays applied to instance types
     * (nodeoverlay_ctrl.h); NULL when the gate is off. */
    struct kp_overlay_state *overlays;
    struct kp_interruption_source *interruption; /* NULL: no interruption handling */
    /* Objects of other providers already reported (ownership.c), capped. */
    pthread_mutex_t foreign_mu;
    kp_strmap foreign_seen;
    /* Launches not yet seen in the cache: claim UID -> what the launch
     * wrote (cJSON), capped (lifecycle.c). */
    pthread_mutex_t launch_mu;
    kp_strmap launched;
    /* NodePool UID -> its recent registration outcomes (registration_health.c). */
    pthread_mutex_t reghealth_mu;
    kp_strmap reghealth;
};

/* How many foreign objects are remembered as reported; later ones are not logged. */
#define KP_CTRL_FOREIGN_MAX 100000

/* The informer of a kind (NULL when the kind is not watched). */
static inline kp_informer *kp_ctrl_informer(const kp_ctrl *c, enum kp_ctrl_kind kind)
{
    return c->informers[kind];
}

/* Whether the process is shutting down. */
bool kp_ctrl_stopping(const kp_ctrl *c);

/* ---- reconcilers ---- */

/* Reconcile `key` ("namespace/name" or "name"). Return 0 when done (set
 * *requeue_ms > 0 to be called again after that long), a negative KP_E* to
 * be retried with back-off (the message is logged). */
typedef int (*kp_reconcile_fn)(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

typedef struct kp_reconciler kp_reconciler;

/* Start `workers` threads on `queue` (borrowed; it must outlive the
 * reconciler). `name` is the logger and metric label. */
kp_reconciler *kp_reconciler_start(kp_ctrl *c, const char *name, kp_workqueue *queue, int workers,
                                   kp_reconcile_fn fn, void *state);
/* Shut the queue down, let the workers finish their keys, join them. NULL-safe. */
kp_reconciler *kp_reconciler_stop(kp_reconciler *r);

/* ---- loops ---- */

/* One pass; a negative KP_E* is logged and the loop goes on. */
typedef int (*kp_loop_fn)(kp_ctrl *c, void *state);

typedef struct kp_loop kp_loop;

kp_loop *kp_loop_start(kp_ctrl *c, const char *name, int64_t period_ms, kp_loop_fn fn, void *state);
/* Run the next pass now instead of at the end of the period. */
void kp_loop_wake(kp_loop *loop);
kp_loop *kp_loop_stop(kp_loop *loop);

/* ---- small helpers every controller uses ---- */

/* The API resource a kind is watched as (the runtime's informers and the
 * test harness's). KP_RES_COUNT for KP_CK_NODECLASS, whose resource the
 * cloud provider names, and for a value outside the enum. */
enum kp_kube_res kp_ctrl_kind_res(enum kp_ctrl_kind kind);
/* A copy of a cached object (cJSON_Delete it), or NULL. */
cJSON *kp_ctrl_get(const kp_ctrl *c, enum kp_ctrl_kind kind, const char *key);
/* cJSON_Delete for a void * (a map's values). */
void kp_ctrl_free_json(void *obj);

/* Log a failure of `what` with the last error message, under `logger`. */
void kp_ctrl_log_error(const char *logger, const char *what, const char *key, int err);

#endif
