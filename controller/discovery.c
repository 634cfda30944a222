/* Start-up discovery (see discovery.h). */
#include "controller/discovery.h"
#include "base/base64.h"
#include "base/error.h"
#include "base/file.h"
#include "base/xalloc.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Up to three numbers of "v1.2.3-pre" into v[]; -1 when it has none. */
static int version_parts(const char *s, long v[3])
{
    v[0] = v[1] = v[2] = 0;
    if (s && (*s == 'v' || *s == 'V'))
        s++;
    if (!s || *s < '0' || *s > '9')
        return -1;
    for (int i = 0; i < 3 && *s >= '0' && *s <= '9'; i++) {
        char *end;
        v[i] = strtol(s, &end, 10);
        s = end;
        if (*s != '.')
            break;
        s++;
    }
    return 0;
}

int kp_kube_version_compare(const char *a, const char *b, int *err)
{
    long va[3], vb[3];
    *err = 0;
    if (version_parts(a, va) < 0 || version_parts(b, vb) < 0) {
        *err = kp_error_set(KP_EINVALID, "not a Kubernetes version: \"%s\"", version_parts(a, va) < 0 ? a : b);
        return 0;
    }
    for (int i = 0; i < 3; i++)
        if (va[i] != vb[i])
            return va[i] < vb[i] ? -1 : 1;
    return 0;
}

static int server_version(kp_kube_client *kube, kp_cluster_facts *out)
{
    cJSON *v = NULL;
    kp_kube_request req = {"GET", "/version", NULL, NULL, NULL};
    int err = kp_kube_do(kube, &req, &v);
    if (err < 0)
        return kp_error_wrap(err, "reading the API server's /version");
    const char *git = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "gitVersion"));
    long parts[3];
    if (!git || version_parts(git, parts) < 0) {
        cJSON_Delete(v);
        return kp_error_set(KP_EINVALID, "the API server's /version has no usable gitVersion");
    }
    snprintf(out->git_version, sizeof(out->git_version), "%s", git);
    snprintf(out->version, sizeof(out->version), "%ld.%ld", parts[0], parts[1]);
    cJSON_Delete(v);
    return 0;
}

/* kube-dns's ClusterIP, of whichever family the cluster uses. */
static void dns_ip(kp_kube_client *kube, kp_cluster_facts *out)
{
    cJSON *svc = NULL;
    if (kp_kube_get(kube, KP_RES_SERVICE, "kube-system", "kube-dns", &svc) < 0)
        return;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(svc, "spec");
    const char *ip = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "clusterIP"));
    if (ip && *ip && strcmp(ip, "None") != 0)
        snprintf(out->dns_ip, sizeof(out->dns_ip), "%s", ip);
    cJSON_Delete(svc);
}

static int ca_bundle(const kp_kube_config *cfg, kp_cluster_facts *out)
{
    kp_buf pem = KP_BUF_INIT(1 << 20), b64 = KP_BUF_INIT(2 << 20);
    int err = 0;
    if (cfg->ca_data)
        err = kp_buf_append(&pem, cfg->ca_data, cfg->ca_len);
    else if (cfg->ca_file)
        err = kp_file_read(&pem, cfg->ca_file);
    if (!err && pem.len)
        err = kp_base64_append(&b64, pem.data, pem.len);
    if (!err && b64.len)
        out->ca_bundle = kp_xstrdup(kp_buf_cstr(&b64));
    kp_buf_free(&pem);
    kp_buf_free(&b64);
    return err < 0 ? kp_error_wrap(err, "the cluster CA") : 0;
}

int kp_cluster_discover(kp_kube_client *kube, const kp_kube_config *cfg, kp_cluster_facts *out)
{
    memset(out, 0, sizeof(*out));
    out->endpoint = cfg->server ? kp_xstrdup(cfg->server) : NULL;
    out->in_cluster = cfg->source && !strcmp(cfg->source, "in-cluster");
    int err = ca_bundle(cfg, out);
    if (!err)
        err = server_version(kube, out);
    if (!err)
        dns_ip(kube, out);
    return err;
}

void kp_cluster_facts_clear(kp_cluster_facts *f)
{
    free(f->endpoint);
    free(f->ca_bundle);
    memset(f, 0, sizeof(*f));
}
