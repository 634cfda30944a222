/*
 * Certificates with OpenSSL 3: P-256 keys (cheap handshakes, accepted by
 * every Kubernetes client), SHA-256 signatures, random 128-bit serials, and a
 * validity that starts an hour back so a node with a slow clock still
 * accepts a certificate made a moment ago.
 */
#include "webhook/certs.h"
#include "webhook/filewatch.h"

#include "base/base64.h"
#include "api/names.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "webhook/review.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ssl_fail(int code, const char *what)
{
    unsigned long e = ERR_get_error();
    char detail[256] = "no detail";
    if (e) ERR_error_string_n(e, detail, sizeof(detail));
    ERR_clear_error();
    return kp_error_set(code, "%s: %s", what, detail);
}

int kp_certs_service_names(char *names[4], const char *service, const char *ns)
{
    if (!service || !ns || !*service || !*ns || kp_is_dns1123_label(service, NULL) ||
        kp_is_dns1123_label(ns, NULL))
        return kp_error_set(KP_EINVALID, "service name %s and namespace %s must be DNS-1123 labels",
                            service ? service : "(none)", ns ? ns : "(none)");
    const char *suffixes[4] = {NULL, "", ".svc", ".svc.cluster.local"};
    for (size_t i = 0; i < 4; i++) {
        char buf[300];
        if (suffixes[i])
            snprintf(buf, sizeof(buf), "%s.%s%s", service, ns, suffixes[i]);
        else
            snprintf(buf, sizeof(buf), "%s", service);
        names[i] = kp_xstrdup(buf);
    }
    return 0;
}

static EVP_PKEY *new_key(void)
{
    return EVP_EC_gen("P-256");
}

static int set_serial(X509 *x)
{
    BIGNUM *bn = BN_new();
    int ok = bn && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
             BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    BN_free(bn);
    return ok ? 0 : ssl_fail(KP_ERROR, "making a serial number");
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    int ok = ext && X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : ssl_fail(KP_EINVALID, "adding a certificate extension");
}

/* A certificate for `key` named `cn`, valid `days`, not yet signed. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, int days)
{
    X509 *x = X509_new();
    X509_NAME *name = X509_get_subject_name(x);
    if (!X509_set_version(x, 2) || set_serial(x) < 0 ||
        !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) || !X509_set_pubkey(x, key) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                    0)) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static char *pem_of(int (*write)(BIO *, const void *), const void *obj)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *out = NULL;
    if (bio && write(bio, obj)) {
        char *data;
        long n = BIO_get_mem_data(bio, &data);
        out = kp_xstrndup(data, (size_t)n);
    }
    BIO_free(bio);
    return out;
}

static int write_x509(BIO *bio, const void *x)
{
    return PEM_write_bio_X509(bio, (X509 *)x);
}

static int write_key(BIO *bio, const void *k)
{
    return PEM_write_bio_PrivateKey(bio, (EVP_PKEY *)k, NULL, NULL, 0, NULL, NULL);
}

static int make_ca(X509 **ca_out, EVP_PKEY **key_out, int days)
{
    EVP_PKEY *key = new_key();
    X509 *ca = key ? new_cert(key, "karpenter-webhook-ca", days) : NULL;
    int err = ca ? 0 : ssl_fail(KP_ERROR, "making the CA");
    if (err == 0) X509_set_issuer_name(ca, X509_get_subject_name(ca));
    if (err == 0) err = add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE");
    if (err == 0) err = add_ext(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign");
    if (err == 0) err = add_ext(ca, ca, NID_subject_key_identifier, "hash");
    if (err == 0 && !X509_sign(ca, key, EVP_sha256())) err = ssl_fail(KP_ERROR, "signing the CA");
    if (err < 0) {
        X509_free(ca);
        EVP_PKEY_free(key);
        return err;
    }
    *ca_out = ca;
    *key_out = key;
    return 0;
}

/* "DNS:a,DNS:b,IP:1.2.3.4" */
static int san_list(kp_buf *out, const kp_cert_request *req, char *const names[4])
{
    int err = 0;
    for (size_t i = 0; err == 0 && i < 4; i++)
        err = kp_buf_printf(out, "%sDNS:%s", i ? "," : "", names[i]);
    for (size_t i = 0; err == 0 && i < req->n_extra_dns; i++) {
        if (kp_is_dns1123_subdomain(req->extra_dns[i], NULL) &&
            strcmp(req->extra_dns[i], "localhost"))
            return kp_error_set(KP_EINVALID, "extra DNS name %s is not a DNS-1123 subdomain",
                                req->extra_dns[i]);
        err = kp_buf_printf(out, ",DNS:%s", req->extra_dns[i]);
    }
    for (size_t i = 0; err == 0 && i < req->n_ips; i++) {
        unsigned char addr[16];
        if (inet_pton(AF_INET, req->ips[i], addr) != 1 &&
            inet_pton(AF_INET6, req->ips[i], addr) != 1)
            return kp_error_set(KP_EINVALID, "%s is not an IP address", req->ips[i]);
        err = kp_buf_printf(out, ",IP:%s", req->ips[i]);
    }
    return err;
}

static int make_serving(X509 **out, EVP_PKEY *key, X509 *ca, EVP_PKEY *ca_key,
                        const kp_cert_request *req, char *const names[4], int days)
{
    kp_buf sans = KP_BUF_INIT(64 * 1024);
    int err = san_list(&sans, req, names);
    X509 *x = err == 0 ? new_cert(key, names[2], days) : NULL;
    if (err == 0 && !x) err = ssl_fail(KP_ERROR, "making the serving certificate");
    if (err == 0) X509_set_issuer_name(x, X509_get_subject_name(ca));
    if (err == 0) err = add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE");
    if (err == 0) err = add_ext(x, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    if (err == 0) err = add_ext(x, ca, NID_ext_key_usage, "serverAuth");
    if (err == 0) err = add_ext(x, ca, NID_authority_key_identifier, "keyid:always");
    if (err == 0) err = add_ext(x, ca, NID_subject_alt_name, kp_buf_cstr(&sans));
    if (err == 0 && !X509_sign(x, ca_key, EVP_sha256()))
        err = ssl_fail(KP_ERROR, "signing the serving certificate");
    kp_buf_free(&sans);
    if (err < 0) {
        X509_free(x);
        return err;
    }
    *out = x;
    return 0;
}

int kp_certs_generate(kp_cert_bundle *out, const kp_cert_request *req)
{
    char *names[4] = {NULL, NULL, NULL, NULL};
    int days = req->days > 0 ? req->days : 365;
    int err = kp_certs_service_names(names, req->service, req->ns);
    X509 *ca = NULL, *cert = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    if (err == 0) err = make_ca(&ca, &ca_key, days);
    if (err == 0 && !(key = new_key())) err = ssl_fail(KP_ERROR, "making the serving key");
    if (err == 0) err = make_serving(&cert, key, ca, ca_key, req, names, days);
    if (err == 0) {
        out->ca_cert = pem_of(write_x509, ca);
        out->cert = pem_of(write_x509, cert);
        out->key = pem_of(write_key, key);
    }
    for (size_t i = 0; i < 4; i++)
        free(names[i]);
    X509_free(ca);
    X509_free(cert);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    return err;
}

void kp_cert_bundle_clear(kp_cert_bundle *bundle)
{
    if (!bundle) return;
    free(bundle->ca_cert);
    free(bundle->cert);
    free(bundle->key);
    memset(bundle, 0, sizeof(*bundle));
}

static int write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) return kp_error_set(KP_EIO, "%s: %s", tmp, strerror(errno));
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    int ok = done == len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        return kp_error_set(KP_EIO, "writing %s: %s", path, strerror(saved));
    }
    return 0;
}

int kp_certs_write_dir(const kp_cert_bundle *bundle, const char *dir)
{
    int err = write_file(dir, "ca.crt", bundle->ca_cert, 0644);
    if (err == 0) err = write_file(dir, "tls.crt", bundle->cert, 0644);
    if (err == 0) err = write_file(dir, "tls.key", bundle->key, 0600);
    return err;
}

static int64_t asn1_time_epoch(const ASN1_TIME *t)
{
    struct tm tm;
    if (!ASN1_TIME_to_tm(t, &tm)) return 0;
    return (int64_t)timegm(&tm);
}

static int check_parsed(kp_tls_pair *out, X509 *x, EVP_PKEY *key)
{
    if (!x) return ssl_fail(KP_EINVALID, "the certificate is not PEM X.509");
    if (!key) return ssl_fail(KP_EINVALID, "the private key is not PEM");
    if (X509_check_private_key(x, key) != 1)
        return ssl_fail(KP_EINVALID, "the private key does not belong to the certificate");
    unsigned int n = 0;
    if (!X509_digest(x, EVP_sha256(), out->fingerprint, &n) || n != sizeof(out->fingerprint))
        return ssl_fail(KP_ERROR, "fingerprinting the certificate");
    out->not_after = asn1_time_epoch(X509_get0_notAfter(x));
    return 0;
}

int kp_certs_check_pair(kp_tls_pair *out, const char *cert_pem, const char *key_pem)
{
    BIO *cb = BIO_new_mem_buf(cert_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    /* An empty passphrase callback: an encrypted key is an error, not a prompt. */
    EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)"") : NULL;
    kp_tls_pair pair;
    memset(&pair, 0, sizeof(pair));
    int err = check_parsed(&pair, x, key);
    X509_free(x);
    EVP_PKEY_free(key);
    BIO_free(cb);
    BIO_free(kb);
    if (err < 0) return err;
    pair.cert = kp_xstrdup(cert_pem);
    pair.key = kp_xstrdup(key_pem);
    *out = pair;
    return 0;
}

static int read_text(kp_buf *out, const char *path)
{
    int err = kp_file_read_regular(out, path);
    if (err == 0 && memchr(kp_buf_cstr(out), '\0', out->len))
        err = kp_error_set(KP_EINVALID, "%s: not PEM text", path);
    return err;
}

int kp_certs_read_pair(kp_tls_pair *out, const char *cert_path, const char *key_path)
{
    kp_buf cert = KP_BUF_INIT(KP_CERTS_MAX_PEM), key = KP_BUF_INIT(KP_CERTS_MAX_PEM);
    int err = read_text(&cert, cert_path);
    if (err == 0) err = read_text(&key, key_path);
    if (err == 0) err = kp_certs_check_pair(out, kp_buf_cstr(&cert), kp_buf_cstr(&key));
    kp_buf_free(&cert);
    if (key.data) OPENSSL_cleanse(key.data, key.len);
    kp_buf_free(&key);
    return err;
}

void kp_tls_pair_clear(kp_tls_pair *pair)
{
    if (!pair) return;
    free(pair->cert);
    if (pair->key) OPENSSL_cleanse(pair->key, strlen(pair->key));
    free(pair->key);
    memset(pair, 0, sizeof(*pair));
}

void kp_certs_fingerprint_hex(const kp_tls_pair *pair, char out[17])
{
    for (size_t i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", pair->fingerprint[i]);
}

int kp_certs_cabundle(kp_buf *out, const char *ca_pem)
{
    return kp_base64_append(out, ca_pem, strlen(ca_pem));
}
