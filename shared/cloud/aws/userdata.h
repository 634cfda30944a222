/*
 * EC2 user data for the nodes Karpenter launches: the text that joins an
 * instance to the cluster, per AMI family, merged with the node class's own
 * spec.userData the way Karpenter's AWS provider merges it.
 *
 *   AL2023        a MIME multi-part archive (boundary "//"): the user's parts
 *                 first (a MIME archive is split into its parts; plain YAML
 *                 becomes an application/node.eks.aws part, anything else a
 *                 shell script), then a generated nodeadm NodeConfig (cluster
 *                 name, endpoint, CA, service CIDR; kubelet config = the
 *                 class's kubelet block + maxPods, clusterDNS, reserved
 *                 resources, registerWithTaints; --node-labels; RAID0).
 *   AL2           a MIME archive: the user's parts, then a shell part calling
 *                 /etc/eks/bootstrap.sh with kubelet flags.
 *   Bottlerocket  TOML: the user's settings with settings.kubernetes taken
 *                 over (endpoint, name, CA, labels merged, taints replaced,
 *                 max-pods, DNS, reserved and eviction maps; keys Bottlerocket
 *                 does not know are dropped), RAID0 as a bootstrap command.
 *   Windows       a <powershell> block: the user's script, then
 *                 Start-EKSBootstrap.ps1.
 *   Custom        the user's text unchanged.
 *
 * Pure functions: no I/O, no state. Everything returned lives in the arena
 * the call got. The rendered text is plain; EC2 wants it base64-encoded
 * (kp_aws_userdata_base64) and refuses more than KP_AWS_USERDATA_MAX bytes.
 */
#ifndef KP_CLOUD_AWS_USERDATA_H
#define KP_CLOUD_AWS_USERDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/objects.h"
#include "base/arena.h"
#include "cloud/aws_catalog.h"

/* EC2's limit on user data, in bytes before base64. */
#define KP_AWS_USERDATA_MAX 16384

typedef struct kp_aws_userdata_opts {
    enum kp_aws_ami_family family;
    const char *cluster_name;
    const char *cluster_endpoint;
    const char *ca_bundle;            /* base64 of the cluster CA (PEM); NULL: none */
    const char *cluster_cidr;         /* the service CIDR; AL2023 cannot join without it */
    const char *kube_dns_ip;          /* clusterDNS when the kubelet block gives none; NULL: none */
    const kp_kubelet_config *kubelet; /* spec.kubelet; NULL: none */
    /* maxPods to write: spec.kubelet.maxPods when it is a number, else the pod
     * capacity of the template's instance types. <= 0: leave it to the kubelet. */
    int32_t max_pods;
    kp_labels labels;       /* the node's labels, sorted (kp_aws_userdata_labels) */
    const kp_taint *taints; /* registered with (kp_aws_userdata_taints) */
    size_t n_taints;
    const char *custom; /* spec.userData; NULL: none */
    bool raid0;         /* instanceStorePolicy: RAID0 */
} kp_aws_userdata_opts;

/*
 * Render the user data as plain text into `*out`. KP_EINVALID for user data
 * that does not parse (a MIME archive without multipart type, TOML errors),
 * a CA bundle that is not base64, and user data over KP_AWS_USERDATA_MAX;
 * KP_ENOTREADY for AL2023 without a cluster CIDR (the node class cannot be
 * launched until it is known).
 */
int kp_aws_userdata_render(kp_arena *arena, const kp_aws_userdata_opts *o, char **out);

/* Standard padded base64 of `text`. */
char *kp_aws_userdata_base64(kp_arena *arena, const char *text);

/*
 * The labels a node registers with: `claim_labels` plus the capacity type and,
 * except for Custom, karpenter.sh/do-not-sync-taints=true, without the labels
 * of the kubernetes.io and k8s.io domains (the kubelet may not set them).
 * Sorted by key.
 */
void kp_aws_userdata_labels(kp_arena *arena, const kp_labels *claim_labels,
                            const char *capacity_type, enum kp_aws_ami_family family,
                            kp_labels *out);

/* The taints a node registers with: the claim's taints and startup taints,
 * plus karpenter.sh/unregistered:NoExecute unless already there. */
void kp_aws_userdata_taints(kp_arena *arena, const kp_nodeclaim_spec *spec, kp_taint **out,
                            size_t *n);

#endif
