/*
 * webhook/cabundle_kube: the caBundle client over shared/kube against the
 * fake API server (paths, JSON Patch, status mapping, conflicts retried from
 * a fresh read), and the bundle replicas share (merge order, expiry, the
 * cap, duplicates, garbage, no flip-flop between two replicas).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "base/base64.h"
#include "base/buf.h"
#include "base/error.h"
#include "helpers/fake_apiserver.h"
#include "kube/config.h"
#include "webhook/cabundle_kube.h"
#include "webhook/certs.h"

#define COLL_V "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
#define COLL_M "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
#define VNAME  "validation.webhook.karpenter.sh"
#define MNAME  "defaulting.webhook.karpenter.sh"

static fake_api *fa;
static kp_kube_client *kube;
static kp_cabundle_client client;
static const int64_t NOW = 1800000000; /* 2027-01-15 */

/* ------------------------------------------------------------ certificates */

/* A self-signed CA valid from NOW+start_s for days_valid days, as PEM. */
static char *make_ca(const char *cn, int64_t start_s, int days_valid)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    BIGNUM *bn = BN_new();
    cr_assert(key && x && bn);
    cr_assert(BN_rand(bn, 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY));
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
    X509_set_version(x, 2);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    ASN1_TIME_set(X509_getm_notBefore(x), (time_t)(NOW + start_s));
    ASN1_TIME_set(X509_getm_notAfter(x), (time_t)(NOW + start_s + (int64_t)days_valid * 86400));
    X509_set_pubkey(x, key);
    cr_assert(X509_sign(x, key, EVP_sha256()));
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, x);
    char *data = NULL;
    long len = BIO_get_mem_data(bio, &data);
    char *pem = strndup(data, (size_t)len);
    BIO_free(bio);
    X509_free(x);
    BN_free(bn);
    EVP_PKEY_free(key);
    return pem;
}

static char *b64(const char *pem)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    cr_assert_eq(kp_certs_cabundle(&b, pem), 0);
    return kp_buf_detach(&b);
}

static size_t count_certs(const char *pem)
{
    size_t n = 0;
    for (const char *p = pem; (p = strstr(p, "BEGIN CERTIFICATE")) != NULL; p++)
        n++;
    return n;
}

/* Position of `ca` in `bundle`, or -1. */
static long position(const char *bundle, const char *ca)
{
    const char *p = strstr(bundle, ca);
    return p ? (long)(p - bundle) : -1;
}

/* A configuration whose webhooks carry these caBundles (NULL: none). */
static cJSON *config_with(const char *bundle_a, const char *bundle_b)
{
    cJSON *c = cJSON_Parse("{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"7\"},"
                           "\"webhooks\":[{\"name\":\"a.k.sh\",\"clientConfig\":{}},"
                           "{\"name\":\"b.k.sh\",\"clientConfig\":{}}]}");
    const char *bundles[2] = {bundle_a, bundle_b};
    for (int i = 0; i < 2; i++) {
        if (!bundles[i]) continue;
        cJSON *cc = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "webhooks"), i),
                                        "clientConfig");
        cJSON_AddStringToObject(cc, "caBundle", bundles[i]);
    }
    return c;
}

static char *merge(const cJSON *config, const char *ours, size_t max)
{
    char *out = NULL;
    cr_assert_eq(kp_cabundle_merge(&out, config, ours, max, NOW), 0, "%s", kp_error_last());
    cr_assert_not_null(out);
    return out;
}

/* ------------------------------------------------------------ merge */

Test(cabundle_merge, alone_the_bundle_is_our_ca_as_it_was_made)
{
    kp_cert_request req = {"karpenter", "karpenter", NULL, 0, NULL, 0, 30};
    kp_cert_bundle made = {NULL, NULL, NULL};
    cr_assert_eq(kp_certs_generate(&made, &req), 0, "%s", kp_error_last());
    cJSON *config = config_with(NULL, NULL);
    char *out = merge(config, made.ca_cert, 4);
    cr_assert_str_eq(out, made.ca_cert, "byte for byte, so --ca-bundle-file equals the caBundle");
    free(out);
    cJSON_Delete(config);
    kp_cert_bundle_clear(&made);
}

Test(cabundle_merge, keeps_other_replicas_cas_newest_first)
{
    char *ours = make_ca("ours", -3600, 365), *older = make_ca("older", -7200, 365);
    char *newer = make_ca("newer", -60, 365);
    char *bundle_older = b64(older), *bundle_newer = b64(newer);
    cJSON *config = config_with(bundle_older, bundle_newer);
    char *out = merge(config, ours, 4);
    cr_assert_eq(count_certs(out), 3, "%s", out);
    long pn = position(out, newer), po = position(out, ours), pl = position(out, older);
    cr_assert(pn >= 0 && po >= 0 && pl >= 0, "all three are in the bundle");
    cr_assert(pn < po && po < pl, "newest first: newer %ld, ours %ld, older %ld", pn, po, pl);
    free(out);
    cJSON_Delete(config);
    free(bundle_older), free(bundle_newer), free(ours), free(older), free(newer);
}

Test(cabundle_merge, drops_expired_cas_but_never_ours)
{
    char *expired = make_ca("expired", -10 * 86400, 1),
         *ours_expired = make_ca("ours", -9 * 86400, 1);
    char *live = make_ca("live", -60, 30);
    char *joined = NULL;
    cr_assert_gt(asprintf(&joined, "%s%s", expired, live), 0);
    char *bundle = b64(joined);
    cJSON *config = config_with(bundle, NULL);
    char *out = merge(config, ours_expired, 4);
    cr_assert_eq(position(out, expired), -1, "another replica's expired CA goes");
    cr_assert_geq(position(out, live), 0);
    cr_assert_geq(position(out, ours_expired), 0, "ours stays even when expired");
    cr_assert_eq(count_certs(out), 2);
    free(out);
    cJSON_Delete(config);
    free(bundle), free(joined), free(expired), free(ours_expired), free(live);
}

Test(cabundle_merge, no_duplicates_when_our_ca_is_already_there)
{
    char *ours = make_ca("ours", -60, 30), *other = make_ca("other", -120, 30);
    char *joined = NULL;
    cr_assert_gt(asprintf(&joined, "%s%s%s", other, ours, other), 0);
    char *bundle = b64(joined), *just_ours = b64(ours);
    cJSON *config = config_with(bundle, just_ours);
    char *out = merge(config, ours, 4);
    cr_assert_eq(count_certs(out), 2, "%s", out);
    free(out);
    cJSON_Delete(config);
    free(bundle), free(just_ours), free(joined), free(ours), free(other);
}

Test(cabundle_merge, past_the_cap_the_oldest_others_go_and_ours_stays)
{
    char *ours = make_ca("ours", -86400, 365); /* the oldest of all */
    char *others[4];
    char *joined = strdup("");
    for (int i = 0; i < 4; i++) {
        char cn[8], *next = NULL;
        snprintf(cn, sizeof(cn), "o%d", i);
        others[i] = make_ca(cn, -(i + 1) * 600, 365); /* o0 newest ... o3 oldest */
        cr_assert_gt(asprintf(&next, "%s%s", joined, others[i]), 0);
        free(joined);
        joined = next;
    }
    char *bundle = b64(joined);
    cJSON *config = config_with(bundle, NULL);
    char *out = merge(config, ours, 3);
    cr_assert_eq(count_certs(out), 3, "%s", out);
    cr_assert_geq(position(out, ours), 0, "ours is kept although it is the oldest");
    cr_assert_geq(position(out, others[0]), 0);
    cr_assert_geq(position(out, others[1]), 0);
    cr_assert_eq(position(out, others[2]), -1);
    cr_assert_eq(position(out, others[3]), -1);
    free(out);
    out = merge(config, ours, 0);
    cr_assert_eq(count_certs(out), 1, "a cap under 1 still publishes ours");
    cr_assert_geq(position(out, ours), 0);
    free(out);
    cJSON_Delete(config);
    for (int i = 0; i < 4; i++)
        free(others[i]);
    free(bundle), free(joined), free(ours);
}

Test(cabundle_merge, garbage_in_a_cabundle_is_ignored)
{
    char *ours = make_ca("ours", -60, 30), *not_pem = b64("hello, not a certificate");
    cJSON *config = config_with("%%% not base64 %%%", not_pem);
    char *out = merge(config, ours, 4);
    cr_assert_str_eq(out, ours);
    free(out);
    cJSON_Delete(config);
    cJSON *odd = cJSON_Parse("{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{\"caBundle\":7}},"
                             "\"not an object\"]}");
    out = merge(odd, ours, 4);
    cr_assert_str_eq(out, ours);
    free(out);
    cJSON_Delete(odd);
    out = merge(NULL, ours, 4);
    cr_assert_str_eq(out, ours, "no configuration at all: just ours");
    free(out);
    free(not_pem), free(ours);
}

Test(cabundle_merge, no_certificate_to_publish_is_invalid)
{
    char *out = NULL;
    cJSON *config = config_with(NULL, NULL);
    cr_assert_eq(kp_cabundle_merge(&out, config, "not a pem", 4, NOW), KP_EINVALID);
    cr_assert_eq(kp_cabundle_merge(&out, config, NULL, 4, NOW), KP_EINVALID);
    cr_assert_null(out);
    cr_assert(strstr(kp_error_last(), "no certificate"), "%s", kp_error_last());
    cJSON_Delete(config);
}

Test(cabundle_merge, two_replicas_agree_on_the_bytes)
{
    /* Same start second: the order falls to the fingerprints. */
    char *a = make_ca("a", -60, 30), *b = make_ca("b", -60, 30);
    char *ba = b64(a), *bb = b64(b);
    cJSON *holds_b = config_with(bb, NULL), *holds_a = config_with(ba, NULL);
    char *from_a = merge(holds_b, a, 4), *from_b = merge(holds_a, b, 4);
    cr_assert_str_eq(from_a, from_b, "otherwise each resync would undo the other's patch");
    free(from_a), free(from_b);
    cJSON_Delete(holds_a), cJSON_Delete(holds_b);
    free(ba), free(bb), free(a), free(b);
}

/* ------------------------------------------------------------ the client */

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&kube, &cfg, &o), 0, "%s", kp_error_last());
    kp_cabundle_kube_client(&client, kube);
}

static void teardown(void)
{
    kp_kube_client_free(kube);
    fake_api_stop(fa);
}

static void put_configs(void)
{
    const char *hooks = "\"webhooks\":[{\"name\":\"validation.karpenter.sh\",\"clientConfig\":"
                        "{\"service\":{\"name\":\"karpenter\",\"namespace\":\"karpenter\"}}},"
                        "{\"name\":\"pods.karpenter.sh\"}]";
    char json[1024];
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},%s}", VNAME, hooks);
    cr_assert_gt(fake_api_put(fa, COLL_V, json), 0);
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\"},%s}", MNAME, hooks);
    cr_assert_gt(fake_api_put(fa, COLL_M, json), 0);
}

/* The PEM held in webhook `i` of the stored configuration (malloc'd), or NULL. */
static char *stored_bundle(const char *collection, const char *name, int i)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", collection, name);
    cJSON *obj = fake_api_get(fa, path);
    const cJSON *hook = cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "webhooks"), i);
    const char *v = cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(hook, "clientConfig"), "caBundle"));
    char *pem = NULL;
    size_t len = 0;
    if (v) cr_assert_eq(kp_base64_decode(&pem, &len, v), 0);
    cJSON_Delete(obj);
    return pem;
}

TestSuite(cabundle_kube, .init = setup, .fini = teardown);

Test(cabundle_kube, get_reads_the_configuration)
{
    put_configs();
    cJSON *obj = NULL;
    cr_assert_eq(client.get(client.ctx, KP_CABUNDLE_MUTATING, MNAME, &obj), 0, "%s",
                 kp_error_last());
    cr_assert_str_eq(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "name")),
        MNAME);
    cJSON_Delete(obj);
    cr_assert_eq(fake_api_count(fa, "GET", COLL_M "/" MNAME), 1);
}

Test(cabundle_kube, get_of_a_missing_configuration_is_not_found)
{
    cJSON *obj = NULL;
    cr_assert_eq(client.get(client.ctx, KP_CABUNDLE_VALIDATING, "absent", &obj), KP_ENOTFOUND);
    cr_assert_null(obj);
    cr_assert(strstr(kp_error_last(), "absent"), "%s", kp_error_last());
}

Test(cabundle_kube, only_the_two_webhook_resources_with_a_name)
{
    cJSON *obj = NULL;
    cr_assert_eq(client.get(client.ctx, "secrets", "x", &obj), KP_EINVALID);
    cr_assert_eq(client.get(client.ctx, KP_CABUNDLE_VALIDATING, "", &obj), KP_EINVALID);
    cr_assert_eq(client.patch(client.ctx, "nodes", "x", "[]"), KP_EINVALID);
    cr_assert_eq(client.get(client.ctx, NULL, "x", &obj), KP_EINVALID);
    cr_assert_eq(fake_api_count(fa, NULL, NULL), 0, "nothing was sent");
}

Test(cabundle_kube, patch_sends_a_json_patch)
{
    put_configs();
    const char *patch = "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"a\":\"b\"}}]";
    cr_assert_eq(client.patch(client.ctx, KP_CABUNDLE_VALIDATING, VNAME, patch), 0, "%s",
                 kp_error_last());
    fake_logged r;
    cr_assert(fake_api_find(fa, "PATCH", COLL_V "/" VNAME, 0, &r));
    cr_assert_str_eq(r.content_type, "application/json-patch+json");
    cr_assert_str_eq(r.body, patch);
}

Test(cabundle_kube, a_failed_test_operation_is_a_conflict)
{
    put_configs();
    const char *patch = "[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"other\"}]";
    cr_assert_eq(client.patch(client.ctx, KP_CABUNDLE_VALIDATING, VNAME, patch), KP_ECONFLICT);
    cr_assert(strstr(kp_error_last(), "422"), "%s", kp_error_last());
}

typedef struct answer_with {
    int status;
    int times; /* answer this many PATCHes, then let the store answer */
    int seen;
} answer_with;

static void answer_patches(void *ctx, const fake_req *req, fake_resp *resp)
{
    answer_with *a = ctx;
    if (strcmp(req->method, "PATCH") != 0 || a->seen++ >= a->times) return;
    resp->status = a->status;
    resp->body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                        "\"message\":\"from the test\"}");
}

Test(cabundle_kube, statuses_map_to_errors)
{
    put_configs();
    struct {
        int status, want;
    } cases[] = {{409, KP_ECONFLICT}, {422, KP_ECONFLICT}, {403, KP_EFORBIDDEN},
                 {404, KP_ENOTFOUND}, {400, KP_EINVALID},  {503, KP_ERETRY}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        answer_with a = {cases[i].status, 1, 0};
        fake_api_set_hook(fa, answer_patches, &a);
        int err = client.patch(client.ctx, KP_CABUNDLE_MUTATING, MNAME, "[]");
        fake_api_set_hook(fa, NULL, NULL);
        cr_assert_eq(err, cases[i].want, "HTTP %d: %d (%s)", cases[i].status, err, kp_error_last());
        cr_assert(strstr(kp_error_last(), "from the test"), "%s", kp_error_last());
    }
}

Test(cabundle_kube, publish_sets_every_webhook_in_both_configurations)
{
    put_configs();
    char *ca = make_ca("ca", -60, 30);
    int changed = -1;
    cr_assert_eq(kp_cabundle_publish(&client, KP_CABUNDLE_VALIDATING, VNAME, ca, &changed), 0, "%s",
                 kp_error_last());
    cr_assert_eq(changed, 1);
    cr_assert_eq(kp_cabundle_publish(&client, KP_CABUNDLE_MUTATING, MNAME, ca, &changed), 0, "%s",
                 kp_error_last());
    const char *colls[2] = {COLL_V, COLL_M}, *names[2] = {VNAME, MNAME};
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 2; i++) {
            char *pem = stored_bundle(colls[c], names[c], i);
            cr_assert_not_null(pem, "%s webhook %d has a caBundle", names[c], i);
            cr_assert_str_eq(pem, ca);
            free(pem);
        }
    cr_assert_eq(kp_cabundle_publish(&client, KP_CABUNDLE_MUTATING, MNAME, ca, &changed), 0);
    cr_assert_eq(changed, 0, "already there: nothing to patch");
    cr_assert_eq(fake_api_count(fa, "PATCH", NULL), 2);
    free(ca);
}

Test(cabundle_kube, replicas_share_the_bundle_without_undoing_each_other)
{
    put_configs();
    char *a = make_ca("a", -120, 30), *b = make_ca("b", -60, 30);
    int changed = -1;
    cr_assert_eq(kp_cabundle_share(&client, KP_CABUNDLE_VALIDATING, VNAME, a, 4, NOW, &changed), 0,
                 "%s", kp_error_last());
    cr_assert_eq(changed, 1);
    cr_assert_eq(kp_cabundle_share(&client, KP_CABUNDLE_VALIDATING, VNAME, b, 4, NOW, &changed), 0,
                 "%s", kp_error_last());
    cr_assert_eq(changed, 1);
    for (int i = 0; i < 2; i++) {
        char *pem = stored_bundle(COLL_V, VNAME, i);
        cr_assert_eq(count_certs(pem), 2);
        cr_assert(position(pem, a) >= 0 && position(pem, b) >= 0, "both replicas are trusted");
        free(pem);
    }
    size_t patches = fake_api_count(fa, "PATCH", NULL);
    cr_assert_eq(kp_cabundle_share(&client, KP_CABUNDLE_VALIDATING, VNAME, a, 4, NOW, &changed), 0);
    cr_assert_eq(changed, 0, "a resync finds its CA there and writes nothing");
    cr_assert_eq(fake_api_count(fa, "PATCH", NULL), patches);
    free(a), free(b);
}

/* Another replica publishes its CA between our read and our patch. */
typedef struct racer {
    const char *ca_b64;
    int fired;
} racer;

static void race_first_patch(void *ctx, const fake_req *req, fake_resp *resp)
{
    racer *r = ctx;
    (void)resp;
    if (strcmp(req->method, "PATCH") != 0 || r->fired++) return;
    char json[8192];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\"},\"webhooks\":[{\"name\":\"validation.karpenter.sh\","
             "\"clientConfig\":{\"caBundle\":\"%s\"}},{\"name\":\"pods.karpenter.sh\","
             "\"clientConfig\":{\"caBundle\":\"%s\"}}]}",
             VNAME, r->ca_b64, r->ca_b64);
    fake_api_put(fa, COLL_V, json);
}

Test(cabundle_kube, a_concurrent_write_is_read_again_and_kept)
{
    put_configs();
    char *ours = make_ca("ours", -120, 30), *theirs = make_ca("theirs", -60, 30);
    char *theirs_b64 = b64(theirs);
    racer r = {theirs_b64, 0};
    fake_api_set_hook(fa, race_first_patch, &r);
    int changed = -1;
    int err = kp_cabundle_share(&client, KP_CABUNDLE_VALIDATING, VNAME, ours, 4, NOW, &changed);
    fake_api_set_hook(fa, NULL, NULL);
    cr_assert_eq(err, 0, "%s", kp_error_last());
    cr_assert_eq(changed, 1);
    cr_assert_eq(fake_api_count(fa, "PATCH", NULL), 2, "the stale patch failed, then a new one");
    cr_assert_eq(fake_api_count(fa, "GET", NULL), 2, "read again after the conflict");
    char *pem = stored_bundle(COLL_V, VNAME, 0);
    cr_assert(position(pem, ours) >= 0 && position(pem, theirs) >= 0, "%s", pem);
    free(pem), free(theirs_b64), free(ours), free(theirs);
}

Test(cabundle_kube, conflicts_give_up_after_five_attempts)
{
    put_configs();
    char *ca = make_ca("ca", -60, 30);
    answer_with a = {409, 100, 0};
    fake_api_set_hook(fa, answer_patches, &a);
    int changed = 7;
    int err = kp_cabundle_share(&client, KP_CABUNDLE_MUTATING, MNAME, ca, 4, NOW, &changed);
    fake_api_set_hook(fa, NULL, NULL);
    cr_assert_eq(err, KP_ECONFLICT);
    cr_assert_eq(changed, 7, "untouched on failure");
    cr_assert_eq(fake_api_count(fa, "PATCH", NULL), 5);
    free(ca);
}

Test(cabundle_kube, other_failures_are_not_retried)
{
    put_configs();
    char *ca = make_ca("ca", -60, 30);
    answer_with a = {403, 100, 0};
    fake_api_set_hook(fa, answer_patches, &a);
    int err = kp_cabundle_share(&client, KP_CABUNDLE_MUTATING, MNAME, ca, 4, NOW, NULL);
    fake_api_set_hook(fa, NULL, NULL);
    cr_assert_eq(err, KP_EFORBIDDEN);
    cr_assert_eq(fake_api_count(fa, "PATCH", NULL), 1);
    err = kp_cabundle_share(&client, KP_CABUNDLE_MUTATING, "gone", ca, 4, NOW, NULL);
    cr_assert_eq(err, KP_ENOTFOUND);
    cr_assert(strstr(kp_error_last(), "mutatingwebhookconfigurations gone"), "%s", kp_error_last());
    free(ca);
}
