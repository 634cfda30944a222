/*
 * webhook/certs, webhook/filewatch and webhook/cabundle: self-signed CA and
 * serving certificate (names, chain, key match), reading pairs from files
 * (mismatched, garbage, missing), the caBundle, noticing file changes, and
 * the caBundle patch through a fake Kubernetes client.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/error.h"
#include "webhook/cabundle.h"
#include "webhook/certs.h"
#include "webhook/filewatch.h"
#include "helpers/assert.h"

static X509 *parse_cert(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    cr_assert_not_null(x);
    return x;
}

static void generate(kp_cert_bundle *b)
{
    const char *extra[] = {"localhost"};
    const char *ips[] = {"127.0.0.1", "::1"};
    kp_cert_request req = {"karpenter", "kube-system", extra, 1, ips, 2, 30};
    memset(b, 0, sizeof(*b));
    KP_ASSERT_OK(kp_certs_generate(b, &req));
}

static char *make_tempdir(void)
{
    char *dir = strdup("/tmp/kp-certs-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void remove_dir(const char *dir)
{
    const char *names[] = {"ca.crt", "tls.crt", "tls.key", "a", "b"};
    char path[512];
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

Test(certs, service_names)
{
    char *names[4];
    cr_assert_eq(kp_certs_service_names(names, "karpenter", "kube-system"), 0);
    cr_expect_str_eq(names[0], "karpenter");
    cr_expect_str_eq(names[1], "karpenter.kube-system");
    cr_expect_str_eq(names[2], "karpenter.kube-system.svc");
    cr_expect_str_eq(names[3], "karpenter.kube-system.svc.cluster.local");
    for (int i = 0; i < 4; i++)
        free(names[i]);
    cr_expect_eq(kp_certs_service_names(names, "Bad_Name", "ns"), KP_EINVALID);
    cr_expect_eq(kp_certs_service_names(names, "svc", "a.b"), KP_EINVALID);
    cr_expect_eq(kp_certs_service_names(names, "", "ns"), KP_EINVALID);
    cr_expect_eq(kp_certs_service_names(names, NULL, "ns"), KP_EINVALID);
}

Test(certs, generated_chain_names_and_key)
{
    kp_cert_bundle b;
    generate(&b);
    X509 *ca = parse_cert(b.ca_cert), *leaf = parse_cert(b.cert);
    /* the CA signed the leaf, and is self-signed */
    cr_expect_eq(X509_verify(leaf, X509_get0_pubkey(ca)), 1);
    cr_expect_eq(X509_verify(ca, X509_get0_pubkey(ca)), 1);
    cr_expect_eq(X509_check_ca(ca), 1);
    cr_expect_eq(X509_check_ca(leaf), 0);
    const char *hosts[] = {"karpenter", "karpenter.kube-system", "karpenter.kube-system.svc",
                           "karpenter.kube-system.svc.cluster.local", "localhost"};
    for (size_t i = 0; i < 5; i++)
        cr_expect_eq(X509_check_host(leaf, hosts[i], 0, 0, NULL), 1, "%s", hosts[i]);
    cr_expect_neq(X509_check_host(leaf, "karpenter.other.svc", 0, 0, NULL), 1);
    cr_expect_eq(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
    cr_expect_eq(X509_check_ip_asc(leaf, "::1", 0), 1);
    cr_expect_eq(X509_check_purpose(leaf, X509_PURPOSE_SSL_SERVER, 0), 1);
    /* valid now, for about the days asked */
    cr_expect_lt(X509_cmp_current_time(X509_get0_notBefore(leaf)), 0);
    cr_expect_gt(X509_cmp_current_time(X509_get0_notAfter(leaf)), 0);
    kp_tls_pair pair;
    KP_ASSERT_OK(kp_certs_check_pair(&pair, b.cert, b.key));
    time_t now = time(NULL);
    cr_expect(pair.not_after > now + 29 * 86400 && pair.not_after < now + 31 * 86400);
    kp_tls_pair_clear(&pair);
    X509_free(ca);
    X509_free(leaf);
    kp_cert_bundle_clear(&b);
}

Test(certs, bad_requests)
{
    kp_cert_bundle b = {NULL, NULL, NULL};
    const char *bad_ip[] = {"300.1.1.1"};
    kp_cert_request req = {"karpenter", "ns", NULL, 0, bad_ip, 1, 0};
    cr_expect_eq(kp_certs_generate(&b, &req), KP_EINVALID);
    const char *bad_dns[] = {"under_score.example"};
    kp_cert_request req2 = {"karpenter", "ns", bad_dns, 1, NULL, 0, 0};
    cr_expect_eq(kp_certs_generate(&b, &req2), KP_EINVALID);
    kp_cert_request req3 = {"Karpenter", "ns", NULL, 0, NULL, 0, 0};
    cr_expect_eq(kp_certs_generate(&b, &req3), KP_EINVALID);
    cr_expect_null(b.cert);
}

Test(certs, pairs_that_do_not_belong_together_are_refused)
{
    kp_cert_bundle one, two;
    generate(&one);
    generate(&two);
    kp_tls_pair pair;
    memset(&pair, 0, sizeof(pair));
    cr_expect_eq(kp_certs_check_pair(&pair, one.cert, two.key), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "does not belong") != NULL, "%s", kp_error_last());
    cr_expect_eq(kp_certs_check_pair(&pair, "garbage", one.key), KP_EINVALID);
    cr_expect_eq(kp_certs_check_pair(&pair, one.cert, "garbage"), KP_EINVALID);
    cr_expect_eq(kp_certs_check_pair(&pair, "", ""), KP_EINVALID);
    /* a truncated certificate (a rotation caught half-written) */
    char *half = strndup(one.cert, strlen(one.cert) / 2);
    cr_expect_eq(kp_certs_check_pair(&pair, half, one.key), KP_EINVALID);
    cr_expect_null(pair.cert);
    free(half);
    kp_cert_bundle_clear(&one);
    kp_cert_bundle_clear(&two);
}

Test(certs, write_dir_then_read_pair_back)
{
    kp_cert_bundle b;
    generate(&b);
    char *dir = make_tempdir();
    KP_ASSERT_OK(kp_certs_write_dir(&b, dir));
    char cert[512], key[512], ca[512];
    snprintf(cert, sizeof(cert), "%s/tls.crt", dir);
    snprintf(key, sizeof(key), "%s/tls.key", dir);
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    struct stat st;
    cr_assert_eq(stat(key, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(stat(ca, &st), 0);
    kp_tls_pair pair;
    KP_ASSERT_OK(kp_certs_read_pair(&pair, cert, key));
    cr_expect_str_eq(pair.cert, b.cert);
    cr_expect_str_eq(pair.key, b.key);
    char hex[17];
    kp_certs_fingerprint_hex(&pair, hex);
    cr_expect_eq(strlen(hex), 16);
    kp_tls_pair_clear(&pair);
    cr_expect_eq(kp_certs_read_pair(&pair, cert, "/nonexistent/tls.key"), KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "/nonexistent/tls.key") != NULL);
    /* swapped files */
    cr_expect_eq(kp_certs_read_pair(&pair, key, cert), KP_EINVALID);
    cr_expect_eq(kp_certs_write_dir(&b, "/nonexistent-dir"), KP_EIO);
    remove_dir(dir);
    free(dir);
    kp_cert_bundle_clear(&b);
}

Test(certs, cabundle_is_base64_of_the_pem)
{
    kp_cert_bundle b;
    generate(&b);
    kp_buf out = KP_BUF_INIT(1 << 16);
    cr_assert_eq(kp_certs_cabundle(&out, b.ca_cert), 0);
    unsigned char *decoded = malloc(out.len);
    int n = EVP_DecodeBlock(decoded, (const unsigned char *)out.data, (int)out.len);
    cr_assert_gt(n, 0);
    cr_expect_eq(memcmp(decoded, b.ca_cert, strlen(b.ca_cert)), 0);
    free(decoded);
    kp_buf_free(&out);
    kp_cert_bundle_clear(&b);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(filewatch, change_commit_and_failure_reporting)
{
    char *dir = make_tempdir();
    char a[512], b[512];
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    write_text(a, "one");
    const char *paths[] = {a, NULL, b};
    kp_filewatch w;
    kp_filewatch_init(&w, paths, 3);
    cr_expect_eq(w.count, 2);
    cr_expect_not(kp_filewatch_poll(&w));
    write_text(b, "appears"); /* a file that did not exist appears */
    cr_expect(kp_filewatch_poll(&w));
    cr_expect(kp_filewatch_poll(&w)); /* still changed until committed */
    cr_expect(kp_filewatch_failed(&w));
    cr_expect_not(kp_filewatch_failed(&w)); /* same state: reported once */
    kp_filewatch_commit(&w);
    cr_expect_not(kp_filewatch_poll(&w));
    /* replaced by rename: a new inode, even with the same size */
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.new", a);
    write_text(tmp, "two");
    cr_assert_eq(rename(tmp, a), 0);
    cr_expect(kp_filewatch_poll(&w));
    cr_expect(kp_filewatch_failed(&w)); /* a new state fails anew */
    kp_filewatch_commit(&w);
    unlink(b);
    cr_expect(kp_filewatch_poll(&w));
    remove_dir(dir);
    free(dir);
}

/* ---- caBundle through a fake client ---------------------------------------------------- */

typedef struct fake_client {
    const char *config; /* JSON served by get */
    int gets, patches;
    int conflicts; /* fail this many patches with KP_ECONFLICT */
    int get_error;
    char *last_patch;
    char last_resource[128];
} fake_client;

static int fake_get(void *ctx, const char *resource, const char *name, cJSON **out)
{
    fake_client *f = ctx;
    (void)name;
    f->gets++;
    snprintf(f->last_resource, sizeof(f->last_resource), "%s", resource);
    if (f->get_error) return kp_error_set(f->get_error, "fake get failure");
    *out = cJSON_Parse(f->config);
    return 0;
}

static int fake_patch(void *ctx, const char *resource, const char *name, const char *json_patch)
{
    fake_client *f = ctx;
    (void)resource;
    (void)name;
    f->patches++;
    free(f->last_patch);
    f->last_patch = strdup(json_patch);
    if (f->conflicts > 0) {
        f->conflicts--;
        return kp_error_set(KP_ECONFLICT, "test failed");
    }
    return 0;
}

static const char two_hooks[] =
    "{\"metadata\":{\"name\":\"validation.webhook.karpenter.sh\",\"resourceVersion\":\"42\"},"
    "\"webhooks\":[{\"name\":\"a.karpenter.sh\",\"clientConfig\":{\"service\":{\"name\":"
    "\"karpenter\"}}},{\"name\":\"b.karpenter.sh\"}]}";

Test(cabundle, patch_sets_every_webhook_guarded_by_tests)
{
    cJSON *config = cJSON_Parse(two_hooks), *patch = NULL;
    cr_assert_eq(kp_cabundle_patch_build(&patch, config, "Q0E="), 0);
    char *text = cJSON_PrintUnformatted(patch);
    cr_expect_str_eq(text,
                     "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"42\"},"
                     "{\"op\":\"test\",\"path\":\"/webhooks/0/name\",\"value\":\"a.karpenter.sh\"},"
                     "{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":"
                     "\"Q0E=\"},{\"op\":\"test\",\"path\":\"/webhooks/1/name\",\"value\":"
                     "\"b.karpenter.sh\"},{\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig\","
                     "\"value\":{\"caBundle\":\"Q0E=\"}}]");
    cJSON_free(text);
    cJSON_Delete(patch);
    cJSON_Delete(config);
}

Test(cabundle, nothing_to_do_and_bad_configs)
{
    cJSON *config = cJSON_Parse("{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{\"caBundle\":"
                                "\"Q0E=\"}}]}");
    cJSON *patch = (cJSON *)1;
    cr_assert_eq(kp_cabundle_patch_build(&patch, config, "Q0E="), 0);
    cr_expect_null(patch);
    cJSON_Delete(config);
    config = cJSON_Parse("{\"metadata\":{}}");
    cr_expect_eq(kp_cabundle_patch_build(&patch, config, "Q0E="), KP_EINVALID);
    cJSON_Delete(config);
}

Test(cabundle, publish_retries_conflicts_then_gives_up)
{
    fake_client f = {two_hooks, 0, 0, 2, 0, NULL, ""};
    kp_cabundle_client client = {fake_get, fake_patch, &f};
    int changed = 0;
    KP_ASSERT_OK(kp_cabundle_publish(&client, KP_CABUNDLE_MUTATING, "m", "PEM\n", &changed));
    cr_expect_eq(changed, 1);
    cr_expect_eq(f.gets, 3);
    cr_expect_eq(f.patches, 3);
    cr_expect_str_eq(f.last_resource, "mutatingwebhookconfigurations");
    cr_expect(strstr(f.last_patch, "\"UEVNCg==\"") != NULL, "%s", f.last_patch);

    f.conflicts = 100;
    f.gets = f.patches = 0;
    cr_expect_eq(kp_cabundle_publish(&client, KP_CABUNDLE_VALIDATING, "v", "PEM\n", NULL),
                 KP_ECONFLICT);
    cr_expect_eq(f.patches, 5);

    f.get_error = KP_ENOTFOUND;
    f.gets = f.patches = 0;
    cr_expect_eq(kp_cabundle_publish(&client, KP_CABUNDLE_VALIDATING, "v", "PEM\n", NULL),
                 KP_ENOTFOUND);
    cr_expect_eq(f.patches, 0);
    cr_expect(strstr(kp_error_last(), "validatingwebhookconfigurations v") != NULL, "%s",
              kp_error_last());
    free(f.last_patch);
}

Test(cabundle, publish_sends_nothing_when_current)
{
    fake_client f = {
        "{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{\"caBundle\":\"UEVNCg==\"}}]}",
        0,
        0,
        0,
        0,
        NULL,
        ""};
    kp_cabundle_client client = {fake_get, fake_patch, &f};
    int changed = 1;
    cr_assert_eq(kp_cabundle_publish(&client, KP_CABUNDLE_VALIDATING, "v", "PEM\n", &changed), 0);
    cr_expect_eq(changed, 0);
    cr_expect_eq(f.patches, 0);
}
