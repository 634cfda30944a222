/* EKS DescribeCluster (see eks.h). */
#include "cloud/aws/eks.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "base/error.h"

enum { EKS_MAX_ANSWER = 1 << 20, EKS_NAME_MAX = 100 };

/* EKS cluster names: [0-9A-Za-z][A-Za-z0-9-_]*, at most 100 characters. */
static bool valid_name(const char *name)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = name ? strlen(name) : 0;
    return n > 0 && n <= EKS_NAME_MAX && strspn(name, ok) == n && name[0] != '-' &&
           name[0] != '_';
}

static const char *str_at(kp_arena *a, const cJSON *obj, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
    return s && *s ? kp_arena_strdup(a, s) : NULL;
}

int kp_eks_cluster_parse(kp_arena *a, const char *body, size_t len, kp_eks_cluster *out)
{
    cJSON *doc = cJSON_ParseWithLength(body ? body : "", len);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "cluster");
    if (!cJSON_IsObject(c)) {
        cJSON_Delete(doc);
        return kp_error_set(KP_EINVALID, "eks DescribeCluster: the answer has no cluster object");
    }
    const cJSON *net = cJSON_GetObjectItemCaseSensitive(c, "kubernetesNetworkConfig");
    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(c, "certificateAuthority");
    kp_eks_cluster r = {str_at(a, c, "name"),    str_at(a, c, "arn"),
                        str_at(a, c, "status"),  str_at(a, c, "version"),
                        str_at(a, c, "endpoint"), str_at(a, ca, "data"),
                        str_at(a, net, "serviceIpv4Cidr"), str_at(a, net, "serviceIpv6Cidr"),
                        str_at(a, net, "ipFamily")};
    cJSON_Delete(doc);
    if (!r.endpoint)
        return kp_error_set(KP_EINVALID, "eks DescribeCluster: cluster %s has no endpoint yet%s%s",
                            r.name ? r.name : "?", r.status ? " (status " : "",
                            r.status ? kp_arena_printf(a, "%s)", r.status) : "");
    *out = r;
    return 0;
}

int kp_eks_describe_cluster(kp_aws_client *client, kp_arena *arena, const char *name,
                            kp_eks_cluster *out)
{
    if (!valid_name(name))
        return kp_error_set(KP_EINVALID, "eks DescribeCluster: \"%s\" is not an EKS cluster name",
                            name ? name : "");
    kp_buf answer = KP_BUF_INIT(EKS_MAX_ANSWER);
    kp_aws_request req = {"eks", "DescribeCluster", KP_AWS_REST_JSON, NULL, NULL, 0, NULL, 0,
                          "GET", NULL};
    req.path = kp_arena_printf(arena, "/clusters/%s", name);
    int err = kp_aws_client_send(client, &req, &answer);
    if (err == 0) err = kp_eks_cluster_parse(arena, answer.data, answer.len, out);
    kp_buf_free(&answer);
    return err;
}

const char *kp_eks_service_cidr(const kp_eks_cluster *c)
{
    return c->service_ipv4_cidr ? c->service_ipv4_cidr : c->service_ipv6_cidr;
}
