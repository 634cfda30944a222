/*
 * The webhook's TLS material, with OpenSSL: making a CA and a serving
 * certificate for a Service's DNS names (--self-signed), reading and checking
 * a certificate/key pair from files (cert-manager's Secret, rotated under us),
 * and the caBundle the API server needs to trust us.
 *
 * The TLS server itself (libmicrohttpd over GnuTLS) takes PEM text, so PEM
 * text is what everything here hands out. Nothing here keeps state.
 */
#ifndef KP_WEBHOOK_CERTS_H
#define KP_WEBHOOK_CERTS_H

#include "base/buf.h"

#include <stddef.h>
#include <stdint.h>

/* PEM files over this are refused: a certificate chain is a few KiB. */
#define KP_CERTS_MAX_PEM ((size_t)1 << 20)

typedef struct kp_cert_request {
    const char *service;          /* Service name: "karpenter" */
    const char *ns;               /* its namespace: "kube-system" */
    const char *const *extra_dns; /* more DNS names (may be NULL) */
    size_t n_extra_dns;
    const char *const *ips; /* IP SANs, v4 or v6 text (may be NULL) */
    size_t n_ips;
    int days; /* validity of both certificates; 0 means 365 */
} kp_cert_request;

/* Everything is PEM text, malloc'd, NUL-terminated. */
typedef struct kp_cert_bundle {
    char *ca_cert;
    char *cert; /* the serving certificate, signed by the CA */
    char *key;  /* its private key (PKCS#8) */
} kp_cert_bundle;

/* The DNS names a Service answers to, in the order they go into the
 * certificate: NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local. Fills
 * `names` (4 entries, each malloc'd). KP_EINVALID if either part is not a
 * DNS-1123 label. */
int kp_certs_service_names(char *names[4], const char *service, const char *ns);

/* A new CA (P-256, self-signed) and a serving certificate for the Service's
 * names plus the extras, signed by it. KP_EINVALID for bad names or IPs. */
int kp_certs_generate(kp_cert_bundle *out, const kp_cert_request *req);
void kp_cert_bundle_clear(kp_cert_bundle *bundle);

/* Write ca.crt, tls.crt and tls.key (mode 0600) into `dir`, each by a
 * rename so that a reader never sees half a file. */
int kp_certs_write_dir(const kp_cert_bundle *bundle, const char *dir);

/* A certificate and key as read from files, checked to belong together. */
typedef struct kp_tls_pair {
    char *cert; /* PEM: the leaf first, then any chain */
    char *key;
    uint8_t fingerprint[32]; /* SHA-256 of the leaf certificate (DER) */
    int64_t not_after;       /* seconds since the epoch */
} kp_tls_pair;

/* Parse and check PEM text: a certificate, a private key, and the key is the
 * certificate's. KP_EINVALID otherwise (a half-written rotation is this). */
int kp_certs_check_pair(kp_tls_pair *out, const char *cert_pem, const char *key_pem);
/* Read both files (each at most KP_CERTS_MAX_PEM) and check them. */
int kp_certs_read_pair(kp_tls_pair *out, const char *cert_path, const char *key_path);
void kp_tls_pair_clear(kp_tls_pair *pair);

/* The first 8 bytes of the fingerprint as hex, for logs: "9f86d081884c7d65". */
void kp_certs_fingerprint_hex(const kp_tls_pair *pair, char out[17]);

/* Append the caBundle for `ca_pem`: base64 of the PEM text, as the
 * webhook configurations' clientConfig.caBundle holds it. */
int kp_certs_cabundle(kp_buf *out, const char *ca_pem);

#endif
