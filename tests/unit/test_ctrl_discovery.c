/* Start-up discovery (controller/discovery.h) against the fake API server. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "controller/discovery.h"
#include "helpers/fake_apiserver.h"

Test(discovery, versions_compare_as_kubernetes_versions)
{
    int err;
    cr_expect_lt(kp_kube_version_compare("v1.20.2", "1.21", &err), 0);
    cr_expect_eq(err, 0);
    cr_expect_gt(kp_kube_version_compare("v1.33.2-eks-1234", "1.19.0-0", &err), 0, "Helm's 1.19.0-0 is 1.19.0");
    cr_expect_eq(kp_kube_version_compare("1.33", "v1.33.0", &err), 0);
    cr_expect_gt(kp_kube_version_compare("1.100.0", "1.99.9", &err), 0, "numbers, not strings");
    kp_kube_version_compare("latest", "1.0", &err);
    cr_expect_eq(err, KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "latest"), "%s", kp_error_last());
}

static const char *dns_ip;
static int version_status = 200;

static void answer(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strcmp(req->path, "/version")) {
        resp->status = version_status;
        resp->body = strdup(version_status == 200 ? "{\"major\":\"1\",\"minor\":\"33+\",\"gitVersion\":\"v1.33.4-eks-9\"}"
                                                  : "{\"kind\":\"Status\",\"code\":500}");
    } else if (!strcmp(req->path, "/api/v1/namespaces/kube-system/services/kube-dns") && dns_ip) {
        char body[256];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"kube-dns\"},\"spec\":{\"clusterIP\":\"%s\"}}", dns_ip);
        resp->status = 200;
        resp->body = strdup(body);
    }
}

static int discover(kp_cluster_facts *f, const char *ca)
{
    fake_api *fa = fake_api_start();
    cr_assert_not_null(fa);
    fake_api_set_hook(fa, answer, NULL);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    cfg.ca_data = (char *)ca, cfg.ca_len = ca ? strlen(ca) : 0;
    cfg.source = "in-cluster";
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    kp_kube_client *client = NULL;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
    int err = kp_cluster_discover(client, &cfg, f);
    kp_kube_client_free(client);
    fake_api_stop(fa);
    return err;
}

Test(discovery, version_endpoint_ca_and_dns)
{
    static const char *const ips[] = {"10.100.0.10", "fd00:10:96::a"};
    for (size_t i = 0; i < 2; i++) {
        kp_cluster_facts f;
        dns_ip = ips[i], version_status = 200;
        cr_assert_eq(discover(&f, "-----BEGIN CERTIFICATE-----\nAA\n-----END CERTIFICATE-----\n"), 0, "%s",
                     kp_error_last());
        cr_expect_str_eq(f.git_version, "v1.33.4-eks-9");
        cr_expect_str_eq(f.version, "1.33", "major.minor of gitVersion, not the '33+' minor field");
        cr_expect_str_eq(f.dns_ip, ips[i], "IPv4 and IPv6 clusters alike");
        cr_expect(f.in_cluster);
        cr_expect(f.endpoint && !strncmp(f.endpoint, "http://127.0.0.1:", 17), "%s", f.endpoint);
        char *pem = NULL;
        size_t len = 0;
        cr_assert_not_null(f.ca_bundle);
        cr_assert_eq(kp_base64_decode(&pem, &len, f.ca_bundle), 0);
        cr_expect(strstr(pem, "BEGIN CERTIFICATE"), "the bundle is the CA the controller trusts");
        free(pem);
        kp_cluster_facts_clear(&f);
    }
}

Test(discovery, no_dns_service_and_no_ca_are_not_errors)
{
    kp_cluster_facts f;
    dns_ip = NULL, version_status = 200;
    cr_assert_eq(discover(&f, NULL), 0, "%s", kp_error_last());
    cr_expect_str_eq(f.dns_ip, "");
    cr_expect_null(f.ca_bundle);
    kp_cluster_facts_clear(&f);
}

Test(discovery, a_failed_version_read_is_an_error)
{
    kp_cluster_facts f;
    dns_ip = NULL, version_status = 500;
    cr_expect_lt(discover(&f, NULL), 0);
    cr_expect(strstr(kp_error_last(), "/version"), "%s", kp_error_last());
    kp_cluster_facts_clear(&f);
}
