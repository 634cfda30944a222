/* kubeconfig and in-cluster configuration (shared/kube/config.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/error.h"
#include "kube/config.h"

#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
/* base64 of CA_PEM */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/kp-kube-config-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

static char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int parse(const char *text, const char *context, kp_kube_config **out)
{
    return kp_kube_config_parse(out, text, strlen(text), "k.yaml", tmpdir[0] ? tmpdir : NULL,
                                context);
}

TestSuite(kubeconfig, .init = make_tmpdir, .fini = remove_tmpdir);

static const char basic[] = "apiVersion: v1\n"
                            "kind: Config\n"
                            "current-context: dev\n"
                            "contexts:\n"
                            "- name: prod\n"
                            "  context: {cluster: big, user: admin}\n"
                            "- name: dev\n"
                            "  context: {cluster: small, user: me, namespace: team-a}\n"
                            "clusters:\n"
                            "- name: big\n"
                            "  cluster:\n"
                            "    server: https://big.example:6443/\n"
                            "    insecure-skip-tls-verify: true\n"
                            "- name: small\n"
                            "  cluster:\n"
                            "    server: https://127.0.0.1:6443\n"
                            "    certificate-authority-data: " CA_B64 "\n"
                            "users:\n"
                            "- name: admin\n"
                            "  user: {token: s3cret}\n"
                            "- name: me\n"
                            "  user: {token: mine}\n";

Test(kubeconfig, current_context_picks_cluster_user_and_namespace)
{
    kp_kube_config *c = NULL;
    cr_assert_eq(parse(basic, NULL, &c), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->server, "https://127.0.0.1:6443");
    cr_assert_eq(c->ca_len, strlen(CA_PEM));
    cr_assert_str_eq(c->ca_data, CA_PEM);
    cr_assert_not(c->insecure);
    cr_assert_str_eq(c->token, "mine");
    cr_assert_str_eq(c->namespace, "team-a");
    cr_assert_str_eq(c->source, "kubeconfig k.yaml");
    kp_kube_config_free(c);
}

Test(kubeconfig, explicit_context_overrides_current)
{
    kp_kube_config *c = NULL;
    cr_assert_eq(parse(basic, "prod", &c), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->server, "https://big.example:6443", "trailing slash dropped");
    cr_assert(c->insecure);
    cr_assert_str_eq(c->token, "s3cret");
    cr_assert_str_eq(c->namespace, "default");
    cr_assert_null(c->ca_file);
    cr_assert_null(c->ca_data);
    kp_kube_config_free(c);
}

Test(kubeconfig, files_are_relative_to_the_kubeconfig)
{
    write_file("ca.crt", CA_PEM);
    write_file("client.crt", "cert");
    write_file("client.key", "key");
    write_file("token", "from-file\n");
    char *path = write_file("config", "current-context: x\n"
                                      "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                                      "clusters: [{name: c, cluster: {server: 'https://h:1', "
                                      "certificate-authority: ca.crt}}]\n"
                                      "users: [{name: u, user: {client-certificate: client.crt, "
                                      "client-key: client.key, tokenFile: token}}]\n");
    kp_kube_config *c = NULL;
    cr_assert_eq(kp_kube_config_load(&c, path, NULL), 0, "%s", kp_error_last());
    char want[300];
    snprintf(want, sizeof(want), "%s/ca.crt", tmpdir);
    cr_assert_str_eq(c->ca_file, want);
    snprintf(want, sizeof(want), "%s/client.key", tmpdir);
    cr_assert_str_eq(c->key_file, want);
    snprintf(want, sizeof(want), "%s/token", tmpdir);
    cr_assert_str_eq(c->token_file, want);
    cr_assert_not_null(c->cert_file);
    kp_kube_config_free(c);
}

Test(kubeconfig, inline_client_certificate_and_key)
{
    static const char text[] =
        "current-context: x\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
        "users: [{name: u, user: {client-certificate-data: Y2VydA==, client-key-data: a2V5}}]\n";
    kp_kube_config *c = NULL;
    cr_assert_eq(parse(text, NULL, &c), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->cert_data, "cert");
    cr_assert_eq(c->cert_len, 4);
    cr_assert_str_eq(c->key_data, "key");
    cr_assert_null(c->token);
    kp_kube_config_free(c);
}

Test(kubeconfig, several_files_first_one_wins)
{
    char first[256], second[256];
    snprintf(first, sizeof(first), "%s",
             write_file("a", "current-context: x\n"
                             "users: [{name: u, user: {token: A}}]\n"));
    snprintf(second, sizeof(second), "%s",
             write_file("b", "current-context: ignored\n"
                             "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                             "clusters: [{name: c, cluster: {server: 'http://h:2'}}]\n"
                             "users: [{name: u, user: {token: B}}]\n"));
    char list[600];
    snprintf(list, sizeof(list), "%s:%s/missing:%s", first, tmpdir, second);
    kp_kube_config *c = NULL;
    cr_assert_eq(kp_kube_config_load(&c, list, NULL), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->token, "A");
    cr_assert_str_eq(c->server, "http://h:2");
    kp_kube_config_free(c);
}

Test(kubeconfig, no_file_is_not_found)
{
    kp_kube_config *c = NULL;
    char path[200];
    snprintf(path, sizeof(path), "%s/nothing", tmpdir);
    cr_assert_eq(kp_kube_config_load(&c, path, NULL), KP_ENOTFOUND);
    cr_assert_null(c);
}

/* Malformed configs: the message names the file and the field. */
typedef struct bad_case {
    const char *text;
    const char *context;
    const char *message; /* expected substring */
} bad_case;

#define CTX     "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
#define CLUSTER "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
#define USERS   "users: [{name: u, user: {token: t}}]\n"

static const bad_case malformed_cases[] = {
    {"- a\n- b\n", NULL, "k.yaml: expected a mapping at the top level, got array"},
    {"", NULL, "expected a mapping at the top level, got null"},
    {"a: [\n", NULL, "kubeconfig: k.yaml"},
    {"contexts: []\n", NULL, "k.yaml: current-context: not set"},
    {"current-context: 5\n", NULL, "current-context: expected string, got number"},
    {CTX CLUSTER USERS, "nope", "k.yaml: contexts: no context named \"nope\""},
    {"current-context: x\ncontexts: {x: 1}\n", NULL, "contexts: expected array, got object"},
    {"current-context: x\ncontexts: [{context: {}}]\n", NULL, "contexts[0].name: required"},
    {"current-context: x\ncontexts: [{name: x, context: 3}]\n", NULL,
     "contexts[0].context: expected object, got number"},
    {"current-context: x\ncontexts: [{name: x, context: {user: u}}]\n", NULL,
     "contexts[0].context.cluster: required"},
    {CTX USERS, NULL, "contexts[0].context.cluster: no cluster named \"c\""},
    {CTX CLUSTER, NULL, "contexts[0].context.user: no user named \"u\""},
    {CTX USERS "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\n", NULL,
     "clusters[0].cluster.server: required"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 42}}]\n", NULL,
     "clusters[0].cluster.server: expected string, got number"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 'ftp://h'}}]\n", NULL,
     "clusters[0].cluster.server: \"ftp://h\" is not an http or https URL"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 'https://h', "
               "certificate-authority-data: 'not base64!'}}]\n",
     NULL, "clusters[0].cluster.certificate-authority-data: not valid base64"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 'https://h', "
               "certificate-authority: /nonexistent/ca.crt}}]\n",
     NULL, "clusters[0].cluster.certificate-authority: cannot read /nonexistent/ca.crt"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 'https://h', "
               "insecure-skip-tls-verify: 'yes please'}}]\n",
     NULL, "clusters[0].cluster.insecure-skip-tls-verify: expected boolean, got string"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: "
               "true, certificate-authority-data: " CA_B64 "}}]\n",
     NULL, "insecure-skip-tls-verify is set together with a certificate authority"},
    {CTX USERS "clusters: [{name: c, cluster: {server: 'https://h', tls-server-name: x}}]\n", NULL,
     "clusters[0].cluster.tls-server-name: server name overrides are not supported"},
    {CTX CLUSTER "users: [{name: u, user: {exec: {command: aws}}}]\n", NULL,
     "users[0].user.exec: exec credential plugins are not supported"},
    {CTX CLUSTER "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n", NULL,
     "users[0].user.auth-provider: auth-provider plugins are not supported"},
    {CTX CLUSTER "users: [{name: u, user: {username: a, password: b}}]\n", NULL,
     "users[0].user.username: basic authentication"},
    {CTX CLUSTER "users: [{name: u, user: {token: [1]}}]\n", NULL,
     "users[0].user.token: expected string, got array"},
    {CTX CLUSTER "users: [{name: u, user: {client-certificate-data: Y2VydA==}}]\n", NULL,
     "users[0].user: a client certificate needs a client key"},
    {CTX CLUSTER "users: [{name: u, user: {client-key-data: 'a2V5'}}]\n", NULL,
     "users[0].user: a client certificate needs a client key"},
    {CTX CLUSTER "users: [{name: u, user: {client-key-data: 'a2V5=='}}]\n", NULL,
     "users[0].user.client-key-data: not valid base64"},
    {CTX CLUSTER "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n", NULL,
     "users[0].user.tokenFile: cannot read /nonexistent/token"},
};

Test(kubeconfig, malformed)
{
    for (size_t i = 0; i < sizeof(malformed_cases) / sizeof(malformed_cases[0]); i++) {
        const bad_case *bc = &malformed_cases[i];
        kp_kube_config *c = NULL;
        int err = parse(bc->text, bc->context, &c);
        cr_expect_eq(err, KP_EINVALID, "case %zu: %s -> %d (%s)", i, bc->text, err,
                     kp_error_last());
        cr_expect_null(c);
        cr_expect(strstr(kp_error_last(), bc->message), "case %zu: message \"%s\" lacks \"%s\"", i,
                  kp_error_last(), bc->message);
        kp_kube_config_free(c);
    }
}

/* ------------------------------------------------------------- base64 */

Test(base64, decodes_standard_encoding_with_padding_and_line_breaks)
{
    char *out;
    size_t len;
    cr_assert_eq(kp_base64_decode(&out, &len, "aGVsbG8gd29ybGQ="), 0);
    cr_assert_str_eq(out, "hello world");
    cr_assert_eq(len, 11);
    free(out);
    cr_assert_eq(kp_base64_decode(&out, &len, "aGVs\nbG8=\r\n"), 0);
    cr_assert_str_eq(out, "hello");
    free(out);
    cr_assert_eq(kp_base64_decode(&out, &len, ""), 0);
    cr_assert_eq(len, 0);
    free(out);
    const char *bad[] = {"aGVsbG8", "a===", "aGVs*G8=", "aGU=aGU=", "a", "aGVsbG8=x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(kp_base64_decode(&out, &len, bad[i]), KP_EINVALID, "%s", bad[i]);
}

/* ---------------------------------------------------------- in-cluster */

TestSuite(in_cluster, .init = make_tmpdir, .fini = remove_tmpdir);

Test(in_cluster, reads_the_service_account)
{
    write_file("token", "eyJhbGciOi.payload.sig\n");
    write_file("ca.crt", CA_PEM);
    write_file("namespace", "karpenter\n");
    kp_kube_incluster_opts o = {tmpdir, "10.96.0.1", "443"};
    kp_kube_config *c = NULL;
    cr_assert_eq(kp_kube_config_in_cluster(&c, &o), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->server, "https://10.96.0.1:443");
    char want[200];
    snprintf(want, sizeof(want), "%s/token", tmpdir);
    cr_assert_str_eq(c->token_file, want);
    cr_assert_null(c->token, "the token is read by the client, and re-read");
    snprintf(want, sizeof(want), "%s/ca.crt", tmpdir);
    cr_assert_str_eq(c->ca_file, want);
    cr_assert_str_eq(c->namespace, "karpenter");
    cr_assert_str_eq(c->source, "in-cluster");
    kp_kube_config_free(c);
}

Test(in_cluster, ipv6_host_is_bracketed_and_namespace_defaults)
{
    write_file("token", "t");
    write_file("ca.crt", CA_PEM);
    kp_kube_incluster_opts o = {tmpdir, "fd00::1", "6443"};
    kp_kube_config *c = NULL;
    cr_assert_eq(kp_kube_config_in_cluster(&c, &o), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->server, "https://[fd00::1]:6443");
    cr_assert_str_eq(c->namespace, "default");
    kp_kube_config_free(c);
}

Test(in_cluster, failures)
{
    kp_kube_config *c = NULL;
    unsetenv("KUBERNETES_SERVICE_HOST");
    kp_kube_incluster_opts none = {tmpdir, NULL, "443"};
    cr_assert_eq(kp_kube_config_in_cluster(&c, &none), KP_ENOTFOUND);
    cr_assert(strstr(kp_error_last(), "KUBERNETES_SERVICE_HOST"));

    kp_kube_incluster_opts o = {tmpdir, "10.0.0.1", "443"};
    cr_assert_eq(kp_kube_config_in_cluster(&c, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "service account token"), "%s", kp_error_last());

    write_file("token", "\n");
    cr_assert_eq(kp_kube_config_in_cluster(&c, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "is empty"), "%s", kp_error_last());

    write_file("token", "t");
    cr_assert_eq(kp_kube_config_in_cluster(&c, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "ca.crt"), "%s", kp_error_last());
    cr_assert_null(c);
}

Test(in_cluster, auto_prefers_explicit_then_env_then_in_cluster)
{
    char *path = write_file("kc", CTX CLUSTER USERS);
    char explicit_path[256];
    snprintf(explicit_path, sizeof(explicit_path), "%s", path);
    kp_kube_config *c = NULL;
    setenv("KUBECONFIG", "/nonexistent/kubeconfig", 1);
    cr_assert_eq(kp_kube_config_auto(&c, explicit_path, NULL), 0, "%s", kp_error_last());
    cr_assert_str_eq(c->token, "t");
    kp_kube_config_free(c);
    c = NULL;
    cr_assert_eq(kp_kube_config_auto(&c, NULL, NULL), KP_ENOTFOUND, "KUBECONFIG points nowhere");
    setenv("KUBECONFIG", explicit_path, 1);
    cr_assert_eq(kp_kube_config_auto(&c, NULL, NULL), 0, "%s", kp_error_last());
    kp_kube_config_free(c);
    unsetenv("KUBECONFIG");
}
