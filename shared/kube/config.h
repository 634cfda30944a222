/*
 * Where the API server is and how to authenticate to it: from a kubeconfig
 * file (kubectl's format) or from inside a Pod (the service account).
 *
 * Kubeconfig: the context named by `context` or current-context picks a
 * cluster (server, certificate-authority or -data, insecure-skip-tls-verify)
 * and a user (token or tokenFile, client-certificate(-data),
 * client-key(-data)). Several files (KUBECONFIG's colon-separated list) are
 * searched in order and the first file to set a thing wins, as kubectl merges
 * them. Relative file paths are relative to the file that names them.
 * Credential plugins (exec, auth-provider), basic auth and tls-server-name
 * are refused with a message naming the field. Errors name the file and the field:
 *   kubeconfig k.yaml: users[0].user.client-key-data: not valid base64
 *
 * In-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the
 * service account's token (a file the kubelet rotates: the client re-reads
 * it, see rest.h), ca.crt and namespace.
 *
 * A config is immutable once loaded; the caller owns it and may free it once
 * a client has been made from it (the client copies what it needs).
 */
#ifndef KP_KUBE_CONFIG_H
#define KP_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kp_kube_config {
    char *server;  /* "https://host:port" (no trailing slash) */
    char *ca_file; /* PEM bundle to verify the server, or NULL */
    char *ca_data; /* PEM, decoded from certificate-authority-data, or NULL */
    size_t ca_len;
    bool insecure;    /* insecure-skip-tls-verify */
    char *token;      /* static bearer token, or NULL */
    char *token_file; /* bearer token read from this file (and re-read), or NULL */
    char *cert_file;  /* client certificate (PEM) file, or NULL */
    char *cert_data;  /* ... or its contents */
    size_t cert_len;
    char *key_file; /* client key (PEM) file, or NULL */
    char *key_data; /* ... or its contents */
    size_t key_len;
    char *namespace; /* the context's namespace or the Pod's; "default" otherwise */
    char *source;    /* for messages: "kubeconfig <path>" or "in-cluster" */
} kp_kube_config;

/* Load from kubeconfig file(s). `paths` is one path or a ':'-separated list;
 * NULL means $KUBECONFIG, then ~/.kube/config. `context` NULL means the
 * current-context. KP_ENOTFOUND when no file exists, KP_EINVALID when the
 * file is malformed or the chosen entries are incomplete. */
int kp_kube_config_load(kp_kube_config **out, const char *paths, const char *context);

/* Parse one kubeconfig held in memory; `name` starts messages and `dir`
 * (may be NULL: the working directory) anchors relative paths. */
int kp_kube_config_parse(kp_kube_config **out, const char *text, size_t len, const char *name,
                         const char *dir, const char *context);

/* Overrides for tests; NULL fields take the real values. */
typedef struct kp_kube_incluster_opts {
    const char *sa_dir; /* default /var/run/secrets/kubernetes.io/serviceaccount */
    const char *host;   /* default $KUBERNETES_SERVICE_HOST */
    const char *port;   /* default $KUBERNETES_SERVICE_PORT */
} kp_kube_incluster_opts;

#define KP_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* The service account's view of the cluster. KP_ENOTFOUND when not running
 * in a Pod (no KUBERNETES_SERVICE_HOST/PORT), KP_EINVALID when the token
 * file is missing or empty. `opts` may be NULL. */
int kp_kube_config_in_cluster(kp_kube_config **out, const kp_kube_incluster_opts *opts);

/* What the controller uses, in controller-runtime's order: `kubeconfig` if
 * given, else $KUBECONFIG, else in-cluster, else ~/.kube/config. */
int kp_kube_config_auto(kp_kube_config **out, const char *kubeconfig, const char *context);

kp_kube_config *kp_kube_config_free(kp_kube_config *config);


#endif
