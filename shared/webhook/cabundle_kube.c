#include "webhook/cabundle_kube.h"

#include "base/base64.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "kube/config.h"
#include "kube/resources.h"
#include "webhook/certs.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ the client */

static const kp_kube_resource validating = {
    "admissionregistration.k8s.io",    "v1",
    "admissionregistration.k8s.io/v1", KP_CABUNDLE_VALIDATING,
    "ValidatingWebhookConfiguration",  false};
static const kp_kube_resource mutating = {"admissionregistration.k8s.io",    "v1",
                                          "admissionregistration.k8s.io/v1", KP_CABUNDLE_MUTATING,
                                          "MutatingWebhookConfiguration",    false};

static int config_path(kp_buf *out, const char *resource, const char *name)
{
    const kp_kube_resource *r = NULL;
    if (resource && strcmp(resource, KP_CABUNDLE_VALIDATING) == 0) r = &validating;
    if (resource && strcmp(resource, KP_CABUNDLE_MUTATING) == 0) r = &mutating;
    if (!r)
        return kp_error_set(KP_EINVALID, "%s is not a webhook configuration resource",
                            resource ? resource : "(null)");
    if (!name || !*name) return kp_error_set(KP_EINVALID, "a %s needs a name", r->kind);
    return kp_kube_resource_path(out, r, NULL, name, NULL);
}

static int kube_get(void *ctx, const char *resource, const char *name, cJSON **out)
{
    kp_buf path = KP_BUF_INIT(2048);
    cJSON *obj = NULL;
    int err = config_path(&path, resource, name);
    if (err == 0) {
        kp_kube_request req = {"GET", kp_buf_cstr(&path), NULL, NULL, NULL};
        err = kp_kube_do((kp_kube_client *)ctx, &req, &obj);
    }
    if (err == 0 && !cJSON_IsObject(obj)) {
        err = kp_error_set(KP_EINVALID, "GET %s: the answer is not an object", kp_buf_cstr(&path));
        cJSON_Delete(obj);
    }
    if (err == 0) *out = obj;
    kp_buf_free(&path);
    return err;
}

static int kube_patch(void *ctx, const char *resource, const char *name, const char *json_patch)
{
    kp_buf path = KP_BUF_INIT(2048), body = KP_BUF_INIT(0);
    long status = 0;
    int err = config_path(&path, resource, name);
    kp_kube_request req = {"PATCH", kp_buf_cstr(&path), json_patch, "application/json-patch+json",
                           NULL};
    if (err == 0) err = kp_kube_do_raw((kp_kube_client *)ctx, &req, &status, &body);
    if (err == 0 && (status < 200 || status > 299)) {
        char what[2100];
        snprintf(what, sizeof(what), "PATCH %s", kp_buf_cstr(&path));
        err = kp_kube_status_error(status, kp_buf_cstr(&body), what);
        /* 422: a "test" operation failed, i.e. the object changed since it was read. */
        if (status == 409 || status == 422) err = KP_ECONFLICT;
    }
    kp_buf_free(&path);
    kp_buf_free(&body);
    return err;
}

void kp_cabundle_kube_client(kp_cabundle_client *out, kp_kube_client *kube)
{
    out->get = kube_get;
    out->patch = kube_patch;
    out->ctx = kube;
}

/* ------------------------------------------------------------ the shared bundle */

typedef struct ca_entry {
    X509 *x;
    unsigned char fp[32];
    int64_t not_before;
    bool ours;
} ca_entry;

typedef struct ca_set {
    ca_entry *v;
    size_t n, cap;
} ca_set;

static void ca_set_clear(ca_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        X509_free(s->v[i].x);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

static int64_t asn1_seconds(const ASN1_TIME *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
    return (int64_t)timegm(&tm);
}

static bool already_there(const ca_set *s, const unsigned char fp[32])
{
    for (size_t i = 0; i < s->n; i++)
        if (memcmp(s->v[i].fp, fp, 32) == 0) return true;
    return false;
}

/* Takes `x`: kept in the set, or freed. */
static void ca_set_add(ca_set *s, X509 *x, bool ours, int64_t now_s)
{
    ca_entry e = {x, {0}, asn1_seconds(X509_get0_notBefore(x)), ours};
    unsigned int len = 0;
    time_t now = (time_t)now_s;
    bool expired = X509_cmp_time(X509_get0_notAfter(x), &now) < 0;
    if (!X509_digest(x, EVP_sha256(), e.fp, &len) || len != 32 || (expired && !ours) ||
        already_there(s, e.fp)) {
        X509_free(x);
        return;
    }
    s->v = kp_xgrow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
    s->v[s->n++] = e;
}

/* Every certificate in `pem`; what follows the last one (or garbage) is ignored. */
static size_t ca_set_add_pem(ca_set *s, const char *pem, size_t len, bool ours, int64_t now_s)
{
    size_t found = 0;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *x;
    while (bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        ca_set_add(s, x, ours, now_s);
        found++;
    }
    BIO_free(bio);
    ERR_clear_error();
    return found;
}

static void ca_set_add_config(ca_set *s, const cJSON *config, int64_t now_s)
{
    const cJSON *hook;
    cJSON_ArrayForEach(hook, cJSON_GetObjectItemCaseSensitive(config, "webhooks"))
    {
        const cJSON *cc = cJSON_GetObjectItemCaseSensitive(hook, "clientConfig");
        const char *b64 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cc, "caBundle"));
        char *pem = NULL;
        size_t len = 0;
        if (!b64 || !*b64 || kp_base64_decode(&pem, &len, b64) < 0) continue;
        ca_set_add_pem(s, pem, len, false, now_s);
        free(pem);
    }
}

/* Newest first; equal start times by fingerprint, so every replica agrees. */
static int newest_first(const void *a, const void *b)
{
    const ca_entry *x = a, *y = b;
    if (x->not_before != y->not_before) return x->not_before > y->not_before ? -1 : 1;
    return memcmp(x->fp, y->fp, sizeof(x->fp));
}

static int write_pem(char **out, const ca_set *s, size_t max_cas)
{
    size_t ours = 0, others = 0;
    for (size_t i = 0; i < s->n; i++)
        ours += s->v[i].ours;
    BIO *bio = BIO_new(BIO_s_mem());
    int ok = bio != NULL;
    for (size_t i = 0; ok && i < s->n; i++) {
        if (!s->v[i].ours && ours + others >= max_cas) continue;
        if (!s->v[i].ours) others++;
        ok = PEM_write_bio_X509(bio, s->v[i].x) == 1;
    }
    char *data = NULL;
    long len = ok ? BIO_get_mem_data(bio, &data) : 0;
    if (ok && len > 0) *out = kp_xstrndup(data, (size_t)len);
    BIO_free(bio);
    ERR_clear_error();
    return ok && len > 0 ? 0 : kp_error_set(KP_ERROR, "writing the CA bundle failed");
}

int kp_cabundle_merge(char **out, const cJSON *config, const char *ca_pem, size_t max_cas,
                      int64_t now_s)
{
    ca_set s = {NULL, 0, 0};
    int err = 0;
    if (!ca_pem || ca_set_add_pem(&s, ca_pem, strlen(ca_pem), true, now_s) == 0)
        err = kp_error_set(KP_EINVALID, "the CA to publish holds no certificate");
    if (err == 0) {
        ca_set_add_config(&s, config, now_s);
        qsort(s.v, s.n, sizeof(*s.v), newest_first);
        err = write_pem(out, &s, max_cas < 1 ? 1 : max_cas);
    }
    ca_set_clear(&s);
    return err;
}

static int share_once(const kp_cabundle_client *client, const char *resource, const char *name,
                      const char *ca_pem, size_t max_cas, int64_t now_s, int *did)
{
    cJSON *config = NULL, *patch = NULL;
    char *pem = NULL;
    kp_buf b64 = KP_BUF_INIT(8 * KP_CERTS_MAX_PEM);
    int err = client->get(client->ctx, resource, name, &config);
    if (err < 0) return kp_error_wrap(err, "reading %s %s", resource, name);
    if ((err = kp_cabundle_merge(&pem, config, ca_pem, max_cas, now_s)) == 0 &&
        (err = kp_certs_cabundle(&b64, pem)) == 0)
        err = kp_cabundle_patch_build(&patch, config, kp_buf_cstr(&b64));
    if (err == 0 && patch) {
        char *text = cJSON_PrintUnformatted(patch);
        err = client->patch(client->ctx, resource, name, text);
        cJSON_free(text);
        if (err == 0) *did = 1;
    }
    cJSON_Delete(patch);
    cJSON_Delete(config);
    free(pem);
    kp_buf_free(&b64);
    return err;
}

int kp_cabundle_share(const kp_cabundle_client *client, const char *resource, const char *name,
                      const char *ca_pem, size_t max_cas, int64_t now_s, int *changed)
{
    int err = 0, did = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        err = share_once(client, resource, name, ca_pem, max_cas, now_s, &did);
        if (err != KP_ECONFLICT) break;
    }
    if (changed && err == 0) *changed = did;
    return err;
}
