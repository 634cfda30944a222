/*
 * The cluster as the solver sees it: every label key and value interned
 * (api/symtab.h), every resource amount a dense vector (resources.h), every
 * selector compiled. A snapshot (snapshot.h) owns one of these, built once per
 * solve from decoded objects; the solver and the disruption planner only read
 * it, except for the symbol table, which grows with new hostnames.
 */
#ifndef KP_SCHEDULING_MODEL_H
#define KP_SCHEDULING_MODEL_H

#include "api/objects.h"
#include "api/requirements.h"
#include "api/symtab.h"
#include "api/taints.h"
#include "cloud/instance_types.h"
#include "scheduling/resources.h"

#include <stdbool.h>
#include <stdint.h>

/* A label set, sorted by key. */
typedef struct kp_symlabel {
    kp_sym key;
    kp_sym value;
} kp_symlabel;

typedef struct kp_symlabels {
    const kp_symlabel *items;
    uint32_t count;
} kp_symlabels;

/* KP_SYM_NONE when absent. */
kp_sym kp_symlabels_get(const kp_symlabels *labels, kp_sym key);

/* A compiled metav1.LabelSelector. */
typedef struct kp_selector_expr {
    kp_sym key;
    enum kp_selector_op op; /* In, NotIn, Exists, DoesNotExist */
    const kp_sym *values;   /* sorted */
    uint32_t n_values;
} kp_selector_expr;

typedef struct kp_selector {
    bool nothing; /* a nil or invalid selector selects no pod (Karpenter's labels.Nothing()) */
    const kp_symlabel *match;
    uint32_t n_match;
    const kp_selector_expr *exprs;
    uint32_t n_exprs;
} kp_selector;

bool kp_selector_matches(const kp_selector *selector, const kp_symlabels *labels);

/* A spread constraint, with Kubernetes' defaults applied (nodeAffinityPolicy
 * Honor, nodeTaintsPolicy Ignore) and matchLabelKeys folded into the selector. */
typedef struct kp_spread {
    kp_sym key;
    int32_t max_skew;
    int32_t min_domains; /* 0 = unset */
    bool do_not_schedule;
    bool honor_affinity;
    bool honor_taints;
    kp_selector selector;
} kp_spread;

/* A pod (anti-)affinity term; namespaces already resolved (own namespace when
 * neither namespaces nor namespaceSelector is given). */
typedef struct kp_pod_term {
    kp_sym key;
    int32_t weight; /* 0 for required terms */
    kp_selector selector;
    const kp_sym *namespaces; /* sorted */
    uint32_t n_namespaces;
} kp_pod_term;

/* A persistent volume claim a pod mounts, by the CSI driver that attaches it
 * and the claim ("namespace/name"): attach limits count claims per node. */
typedef struct kp_csi_volume {
    kp_sym driver;
    kp_sym claim;
} kp_csi_volume;

/* How many volumes a CSI driver may attach to a node (its CSINode). */
typedef struct kp_csi_limit {
    kp_sym driver;
    int32_t count;
} kp_csi_limit;

/* A pod to place or already placed. */
typedef struct kp_spod {
    const char *ns_name; /* "namespace/name" */
    kp_sym ns;
    kp_symlabels labels;
    kp_resvec requests;
    int64_t created_ns;
    const char *uid;
    /* node constraints */
    kp_requirements node_selector;      /* nodeSelector as requirements */
    const kp_requirements *required;    /* required node affinity terms (OR) */
    uint32_t n_required;
    const kp_requirements *preferred;   /* preferred node affinity terms, heaviest first */
    const int32_t *preferred_weights;
    uint32_t n_preferred;
    const kp_toleration *tolerations;
    uint32_t n_tolerations;
    const kp_spread *spreads;
    uint32_t n_spreads;
    const kp_pod_term *affinity, *affinity_pref, *anti, *anti_pref; /* prefs heaviest first */
    uint32_t n_affinity, n_affinity_pref, n_anti, n_anti_pref;
    const kp_host_port *ports; /* objects.h: ip "0.0.0.0" when any */
    uint32_t n_ports;
    /* volume topology: alternatives, any one of which must hold; none = unconstrained */
    const kp_requirements *volume_alts;
    uint32_t n_volume_alts;
    const kp_csi_volume *csi_volumes; /* scheduling/volume_limits.h */
    uint32_t n_csi_volumes;
    const char *unschedulable; /* known before solving: a PVC problem, DRA requirements */
    /* where it runs, for pods already bound (index into the snapshot's nodes) */
    int32_t node;
    bool scheduled;   /* spec.nodeName is set (node is -1 when that node is unknown) */
    bool terminal;    /* Succeeded / Failed */
    bool terminating; /* deletionTimestamp set */
    bool daemon;      /* owned by a DaemonSet */
    const kp_pod *src; /* the decoded object, when built from one */
} kp_spod;

typedef struct kp_soffering {
    kp_sym zone;
    kp_sym capacity_type;
    double price;
    bool available;
    /* Reserved offerings: the reservation and the instances it can still
     * take (one solve plans no more claims into it than that). */
    kp_sym reservation; /* KP_SYM_NONE when not reserved */
    int32_t reservation_capacity;
} kp_soffering;

/* An instance type, compiled. */
typedef struct kp_sit {
    const kp_instance_type *src;
    kp_sym name;
    kp_requirements reqs;
    kp_resvec capacity;
    kp_resvec allocatable;
    const kp_soffering *offerings;
    uint32_t n_offerings;
} kp_sit;

/* A NodePool, as a template for new NodeClaims. */
typedef struct kp_template {
    const char *name;
    kp_sym name_sym;
    int32_t weight;
    kp_requirements reqs;      /* spec requirements + template labels + nodepool label */
    kp_requirements spec_reqs; /* spec requirements + template labels: the topology universe */
    kp_symlabels labels;  /* template labels + karpenter.sh/nodepool */
    const kp_taint *taints;
    uint32_t n_taints;
    const kp_taint *startup_taints;
    uint32_t n_startup_taints;
    bool has_limits;
    kp_limvec limits;     /* valid where limited[i] */
    bool limited[KP_RES_MAX];
    bool limit_nodes;
    int64_t node_limit;
    const char *node_class; /* nodeClassRef name */
    const uint32_t *its;    /* indices into the snapshot's instance types */
    uint32_t n_its;
    const kp_nodepool *src; /* the decoded object, when built from one */
    /* A static NodePool (spec.replicas): its nodes are kept at `replicas` by
     * the static controller, never launched for pods; the solver opens no
     * NodeClaim from it (Karpenter leaves static pools out of scheduling). */
    bool is_static;
    int64_t replicas;
} kp_template;

/* A node that exists (or a NodeClaim in flight whose node has not registered). */
typedef struct kp_snode {
    const char *name;
    kp_sym hostname;
    kp_symlabels labels;
    const kp_taint *taints;
    uint32_t n_taints;
    kp_resvec capacity;
    kp_resvec allocatable;
    int32_t template_index; /* -1 when not managed by a known NodePool */
    bool managed;           /* carries karpenter.sh/nodepool */
    bool initialized;
    bool deleting;       /* marked for deletion: its pods need a new home */
    bool in_flight;      /* a NodeClaim without a Node yet */
    const char *nodeclaim;
    const char *instance_type;
    const kp_csi_limit *csi_limits; /* from its CSINode; none: no limit */
    uint32_t n_csi_limits;
    int64_t created_ns;
    const kp_node *src_node;       /* the decoded objects, when built from them */
    const kp_nodeclaim *src_claim; /* NULL when unmanaged */
} kp_snode;

#endif
