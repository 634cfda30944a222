/*
 * Command-line flags of karpenter-webhook, parsed once into an immutable
 * struct.
 */
#ifndef KP_WEBHOOK_OPTIONS_H
#define KP_WEBHOOK_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_webhook_options {
    const char *address;
    uint16_t port;
    const char *tls_cert_file, *tls_key_file;
    bool self_signed;
    const char *service_name, *ns;
    const char *cert_dir;       /* --self-signed: also write the files here */
    const char *ca_bundle_file; /* --self-signed: write the CA (PEM) here */
    const char *validating_config, *mutating_config;
    const char *kubeconfig;      /* the caBundle's publishing and the NodePools' watch use these credentials */
    unsigned ca_bundle_resync_s; /* how often the published caBundle is checked again */
    const char *policy_file;
    bool allow_empty_policy; /* a policy file that sets no rule is accepted */
    unsigned reload_interval_ms;
    unsigned threads;
    unsigned connection_timeout, request_timeout, max_connections;
    const char *log_level;
    /* "No NodePool can run this pod" warnings (pod_warnings.h): on when the
     * webhook has a Kubernetes client (in a Pod, or --kubeconfig). */
    bool no_pod_warnings;
    const char *instance_types; /* the catalog the warnings check against */
    unsigned pod_warning_budget_ms;
    bool pod_warning_flags_set; /* --instance-types or --pod-warning-budget given */
} kp_webhook_options;

/* 0, 1 when --help was printed, or a negative KP_E* with the message set. */
int kp_webhook_options_parse(kp_webhook_options *out, int argc, char **argv);

#endif
