/*
 * In-cluster configuration, the automatic choice between sources, and the
 * small file and base64 helpers the kubeconfig reader shares.
 */
#include "kube/config.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "kube/config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kp_kube_read_file(char **out, size_t *out_len, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kp_error_set(errno == ENOENT ? KP_ENOTFOUND : KP_EIO, "cannot read %s: %s", path,
                            strerror(errno));
    kp_buf buf = KP_BUF_INIT(KP_KUBE_MAX_FILE);
    char chunk[4096];
    size_t n;
    int err = 0;
    while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        err = kp_buf_append(&buf, chunk, n);
    if (!err && ferror(f)) err = kp_error_set(KP_EIO, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (err < 0) {
        kp_buf_free(&buf);
        return err == KP_ETOOLARGE ? kp_error_wrap(err, "reading %s", path) : err;
    }
    *out_len = buf.len;
    *out = buf.data ? kp_buf_detach(&buf) : kp_xstrdup("");
    return 0;
}

char *kp_kube_join_path(const char *dir, const char *path)
{
    if (!dir || !*dir || path[0] == '/') return kp_xstrdup(path);
    size_t n = strlen(dir) + strlen(path) + 2;
    char *joined = kp_xmalloc(n);
    snprintf(joined, n, "%s/%s", dir, path);
    return joined;
}

kp_kube_config *kp_kube_config_free(kp_kube_config *c)
{
    if (!c) return NULL;
    free(c->server);
    free(c->ca_file);
    free(c->ca_data);
    free(c->token);
    free(c->token_file);
    free(c->cert_file);
    free(c->cert_data);
    free(c->key_file);
    free(c->key_data);
    free(c->namespace);
    free(c->source);
    free(c);
    return NULL;
}

static char *trimmed(const char *s, size_t len)
{
    while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
        len--;
    return kp_xstrndup(s, len);
}

/* The server URL, with an IPv6 literal in brackets. */
static char *in_cluster_server(const char *host, const char *port)
{
    size_t n = strlen(host) + strlen(port) + 16;
    char *url = kp_xmalloc(n);
    if (strchr(host, ':'))
        snprintf(url, n, "https://[%s]:%s", host, port);
    else
        snprintf(url, n, "https://%s:%s", host, port);
    return url;
}

static int read_token_check(const char *path)
{
    char *token;
    size_t len;
    int err = kp_kube_read_file(&token, &len, path);
    if (err < 0) return kp_error_wrap(KP_EINVALID, "in-cluster: service account token");
    char *t = trimmed(token, len);
    err = *t ? 0 : kp_error_set(KP_EINVALID, "in-cluster: service account token %s is empty", path);
    free(t);
    free(token);
    return err;
}

static char *read_namespace(const char *dir)
{
    char *path = kp_kube_join_path(dir, "namespace");
    char *text, *ns = NULL;
    size_t len;
    if (kp_kube_read_file(&text, &len, path) == 0) {
        ns = trimmed(text, len);
        free(text);
    }
    free(path);
    if (ns && !*ns) ns = (free(ns), NULL);
    return ns ? ns : kp_xstrdup("default");
}

int kp_kube_config_in_cluster(kp_kube_config **out, const kp_kube_incluster_opts *opts)
{
    const char *dir = opts && opts->sa_dir ? opts->sa_dir : KP_KUBE_SA_DIR;
    const char *host = opts && opts->host ? opts->host : getenv("KUBERNETES_SERVICE_HOST");
    const char *port = opts && opts->port ? opts->port : getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return kp_error_set(KP_ENOTFOUND, "in-cluster: KUBERNETES_SERVICE_HOST and "
                                          "KUBERNETES_SERVICE_PORT must be set");
    char *token_file = kp_kube_join_path(dir, "token");
    int err = read_token_check(token_file);
    if (err < 0) {
        free(token_file);
        return err;
    }
    kp_kube_config *c = kp_xcalloc(1, sizeof(*c));
    c->server = in_cluster_server(host, port);
    c->token_file = token_file;
    c->ca_file = kp_kube_join_path(dir, "ca.crt");
    if (access(c->ca_file, R_OK) != 0) {
        int e = errno;
        kp_kube_config_free(c);
        return kp_error_set(KP_EINVALID, "in-cluster: cannot read %s/ca.crt: %s", dir, strerror(e));
    }
    c->namespace = read_namespace(dir);
    c->source = kp_xstrdup("in-cluster");
    *out = c;
    return 0;
}

static char *home_kubeconfig(void)
{
    const char *home = getenv("HOME");
    return home && *home ? kp_kube_join_path(home, ".kube/config") : NULL;
}

int kp_kube_config_auto(kp_kube_config **out, const char *kubeconfig, const char *context)
{
    if (kubeconfig && *kubeconfig) return kp_kube_config_load(out, kubeconfig, context);
    const char *env = getenv("KUBECONFIG");
    if (env && *env) return kp_kube_config_load(out, env, context);
    int err = kp_kube_config_in_cluster(out, NULL);
    if (err != KP_ENOTFOUND) return err;
    char *home = home_kubeconfig();
    if (!home)
        return kp_error_set(KP_ENOTFOUND,
                            "no kubeconfig: not in a cluster, $KUBECONFIG and $HOME unset");
    err = kp_kube_config_load(out, home, context);
    free(home);
    return err;
}
