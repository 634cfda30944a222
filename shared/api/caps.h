/*
 * Caps on what provisioning may add (beyond Karpenter, which only has
 * per-NodePool limits): the settings as users write them.
 *
 *   --max-nodes-total N       [MAX_NODES_TOTAL]   Nodes and NodeClaims without a Node
 *   --cores-total N           [CORES_TOTAL]       their CPU capacity, in cores
 *   --memory-total QUANTITY   [MEMORY_TOTAL]      their memory capacity ("512Gi")
 *   --max-hourly-cost DOLLARS [MAX_HOURLY_COST]   what the managed ones cost an hour
 *
 * The first three are Cluster Autoscaler's names and, like there, count
 * every Node of the cluster, whoever made it; Cluster Autoscaler's MIN:MAX
 * form is refused with a message (there is no minimum to honour). The dollar
 * cap counts the NodeClaims of the NodePools this controller provisions for.
 * A NodePool may carry its own dollar cap, as the annotation
 * KP_ANNOTATION_MAX_HOURLY_COST (the project's own domain: Karpenter's CRD
 * has no such field). scheduling/caps.h says how they are counted and
 * enforced.
 *
 * Pure parsing; errors are KP_EINVALID with a message naming the setting.
 */
#ifndef KP_API_CAPS_H
#define KP_API_CAPS_H

#include "api/objects.h"
#include "api/quantity.h"

#include <stdbool.h>
#include <stdint.h>

#define KP_ANNOTATION_MAX_HOURLY_COST "karpenter-c.dev/max-hourly-cost"

/* The largest dollar amount accepted (an hourly bill of a billion dollars). */
#define KP_CAPS_MAX_DOLLARS 1e9

typedef struct kp_caps {
    int64_t max_nodes;      /* < 0: no cap */
    bool has_cores, has_memory;
    kp_milli128 cores;      /* milli-cores */
    kp_milli128 memory;     /* milli-bytes, as quantities count */
    double max_hourly_cost; /* dollars; < 0: no cap */
} kp_caps;

#define KP_CAPS_INIT {-1, false, false, 0, 0, -1.0}

/* Whether any cluster-wide cap is set. */
bool kp_caps_any(const kp_caps *caps);

/* One setting's text into `caps`. `source` names it in errors ("--cores-total",
 * "CORES_TOTAL"). */
int kp_caps_parse_max_nodes(kp_caps *caps, const char *text, const char *source);
int kp_caps_parse_cores(kp_caps *caps, const char *text, const char *source);
int kp_caps_parse_memory(kp_caps *caps, const char *text, const char *source);
int kp_caps_parse_hourly_cost(kp_caps *caps, const char *text, const char *source);

/* The setting named `flag` ("max-nodes-total", "cores-total",
 * "memory-total" or "max-hourly-cost"): one home for run's and simulate's
 * flags. KP_EINVALID for another name. */
int kp_caps_parse_setting(kp_caps *caps, const char *flag, const char *text, const char *source);

/* A dollar amount: digits with at most one '.', from 0 to KP_CAPS_MAX_DOLLARS
 * ("12", "0.50"); no sign, exponent, "$" or spaces. */
int kp_caps_parse_dollars(const char *text, const char *source, double *out);

/* The NodePool's own dollar cap: *out < 0 when it has none. KP_EINVALID, with
 * the message naming the annotation and the NodePool, when it is malformed. */
int kp_caps_nodepool_cost(const kp_nodepool *np, double *out);

/* "--max-nodes-total=10, --cores-total=64, ..." for logs and notes; "" when none. */
char *kp_caps_describe(const kp_caps *caps, char *buf, size_t size);

#endif
