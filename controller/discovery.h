/*
 * What the controller learns about the cluster at start-up, as Karpenter
 * does: the Kubernetes version from the API server's /version (AMI aliases
 * follow it; --kubernetes-version overrides), the endpoint and CA bundle the
 * controller itself trusts (nodes join the same; CLUSTER_ENDPOINT and
 * CLUSTER_CA_BUNDLE override), and kube-dns's ClusterIP (IPv4 or IPv6) for
 * the kubelet's clusterDNS in user data.
 */
#ifndef KP_CONTROLLER_DISCOVERY_H
#define KP_CONTROLLER_DISCOVERY_H

#include "kube/config.h"
#include "kube/rest.h"

#include <stdbool.h>

typedef struct kp_cluster_facts {
    char git_version[64]; /* "v1.33.2-eks-1234"; "" when /version did not answer */
    char version[16];     /* "1.33": major.minor of git_version */
    char *endpoint;       /* the server the controller talks to */
    char *ca_bundle;      /* base64 of the CA PEM it trusts; NULL: none configured */
    bool in_cluster;      /* the endpoint is the in-cluster Service address */
    char dns_ip[64];      /* kube-system/kube-dns spec.clusterIP; "" when there is none */
} kp_cluster_facts;

/* Fill `out` (free it with kp_cluster_facts_clear). Only a failed /version
 * is an error; a missing kube-dns Service leaves dns_ip empty. */
int kp_cluster_discover(kp_kube_client *kube, const kp_kube_config *cfg, kp_cluster_facts *out);
void kp_cluster_facts_clear(kp_cluster_facts *f);

/* Compare Kubernetes versions ("v1.20.2", "1.19.0-0", "1.33"): <0, 0, >0.
 * Missing parts count as 0; a pre-release suffix is ignored, so "1.19.0-0"
 * (Helm's way of saying "any 1.19") is 1.19.0. KP_EINVALID (through *err)
 * when either does not start with digits. */
int kp_kube_version_compare(const char *a, const char *b, int *err);

#endif
