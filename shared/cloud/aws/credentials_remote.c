/* Credential sources that call out: STS web identity, the container endpoint
 * (EKS Pod Identity, ECS) and IMDS; and the parsers of their answers. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/aws_xml.h"
#include "cloud/aws/credentials_internal.h"
#include "cloud/aws/imds.h"

enum { TOKEN_FILE_MAX = 64 * 1024 };

static int parse_expiration(const char *text, int64_t *out, const char *source)
{
    if (!text || !*text) {
        *out = 0;
        return 0;
    }
    if (kp_time_parse_rfc3339(text, out) < 0)
        return kp_error_set(KP_EINVALID, "%s: unreadable Expiration '%s'", source, text);
    return 0;
}

int kp_aws_creds_parse_sts(kp_aws_creds *out, const char *xml, size_t len)
{
    xmlDoc *doc = NULL;
    int err = kp_aws_xml_parse(&doc, xml, len);
    if (err < 0)
        return kp_error_wrap(err, "STS answer");
    kp_arena *a = kp_arena_new();
    xmlNode *root = xmlDocGetRootElement(doc);
    xmlNode *c = kp_aws_xml_path(root, "AssumeRoleWithWebIdentityResult/Credentials");
    if (!c)
        c = kp_aws_xml_path(root, "AssumeRoleResult/Credentials");
    int64_t exp = 0;
    if (!c)
        err = kp_error_set(KP_EINVALID, "STS answer has no Credentials element");
    if (err == 0)
        err = parse_expiration(kp_aws_xml_text(a, c, "Expiration"), &exp, "web-identity");
    if (err == 0)
        err = kp_creds_set(out, kp_aws_xml_text(a, c, "AccessKeyId"),
                           kp_aws_xml_text(a, c, "SecretAccessKey"),
                           kp_aws_xml_text(a, c, "SessionToken"), exp, "web-identity");
    kp_arena_free(a);
    xmlFreeDoc(doc);
    return err;
}

static const char *json_string(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kp_aws_creds_parse_json(kp_aws_creds *out, const char *json, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return kp_error_set(KP_EINVALID, "credentials answer is not a JSON object");
    }
    int err = 0;
    const char *code = json_string(doc, "Code");
    if (code && strcmp(code, "Success") != 0)
        err = kp_error_set(KP_ERROR, "credentials endpoint answered Code %s: %s", code,
                           json_string(doc, "Message") ? json_string(doc, "Message") : "");
    int64_t exp = 0;
    if (err == 0)
        err = parse_expiration(json_string(doc, "Expiration"), &exp, "credentials endpoint");
    if (err == 0)
        err = kp_creds_set(out, json_string(doc, "AccessKeyId"),
                           json_string(doc, "SecretAccessKey"), json_string(doc, "Token"), exp,
                           "container");
    cJSON_Delete(doc);
    return err;
}

/* A token file's contents, trimmed, into `buf`. */
static int read_token_file(kp_buf *buf, const char *path, const char *what)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kp_error_set(KP_EIO, "%s: cannot read token file %s: %s", what, path,
                            strerror(errno));
    char chunk[4096];
    size_t n;
    int err = 0;
    while (err == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        err = kp_buf_append(buf, chunk, n);
    fclose(f);
    while (err == 0 && buf->len > 0 && isspace((unsigned char)buf->data[buf->len - 1]))
        buf->data[--buf->len] = '\0';
    if (err == 0 && buf->len == 0)
        err = kp_error_set(KP_EINVALID, "%s: token file %s is empty", what, path);
    return err;
}

static int sts_client(kp_aws_client **out, const kp_aws_credentials_options *opts)
{
    kp_aws_client_options co = KP_AWS_CLIENT_OPTIONS_INIT;
    kp_aws_endpoint ep = {"sts", opts ? opts->sts_endpoint : NULL};
    co.region = opts && opts->region ? opts->region : NULL;
    if (!co.region && !getenv("AWS_REGION") && !getenv("AWS_DEFAULT_REGION"))
        co.region = "us-east-1";
    co.anonymous = true; /* the web identity token is the proof */
    co.endpoints = &ep;
    co.n_endpoints = ep.url ? 1 : 0;
    co.backoff_base_ms = 200;
    co.clock = opts ? opts->clock : NULL;
    return kp_aws_client_new(out, &co);
}

static int web_identity_form(kp_buf *form, const char *role_arn, const char *session,
                             const char *token)
{
    int err = kp_aws_form_add(form, "Action", "AssumeRoleWithWebIdentity");
    if (err == 0)
        err = kp_aws_form_add(form, "Version", "2011-06-15");
    if (err == 0)
        err = kp_aws_form_add(form, "RoleArn", role_arn);
    if (err == 0)
        err = kp_aws_form_add(form, "RoleSessionName", session);
    if (err == 0)
        err = kp_aws_form_add(form, "WebIdentityToken", token);
    return err;
}

int kp_aws_creds_from_web_identity(kp_aws_creds *out, const kp_aws_credentials_options *opts,
                                   const char *role_arn, const char *token_file,
                                   const char *session_name)
{
    kp_buf token = KP_BUF_INIT(TOKEN_FILE_MAX), form = KP_BUF_INIT(TOKEN_FILE_MAX * 4);
    kp_buf answer = KP_BUF_INIT(1u << 20);
    char session[64];
    snprintf(session, sizeof(session), "%s",
             session_name && *session_name ? session_name : "karpenter");
    kp_aws_client *sts = NULL;
    int err = read_token_file(&token, token_file, "web identity");
    if (err == 0)
        err = web_identity_form(&form, role_arn, session, token.data);
    if (err == 0)
        err = sts_client(&sts, opts);
    if (err == 0) {
        kp_aws_request req = {"sts", "AssumeRoleWithWebIdentity", KP_AWS_QUERY, NULL,
                              form.data, form.len, NULL, 0, NULL, NULL};
        err = kp_aws_client_send(sts, &req, &answer);
    }
    if (err == 0)
        err = kp_aws_creds_parse_sts(out, answer.data, answer.len);
    kp_aws_client_free(sts);
    kp_buf_free(&answer);
    kp_buf_free(&form);
    kp_buf_free(&token);
    return err;
}

/* Plain HTTP only to the addresses the container agents listen on, so a
 * mistaken URI cannot send the authorization token across a network. */
static bool container_host_allowed(const char *url)
{
    if (strncmp(url, "https://", 8) == 0)
        return true;
    if (strncmp(url, "http://", 7) != 0)
        return false;
    static const char *const hosts[] = {"localhost", "[::1]", "169.254.170.2", "169.254.170.23",
                                        "[fd00:ec2::23]"};
    const char *h = url + 7;
    size_t len = strcspn(h, "/?#");
    if (len == 0 || memchr(h, '@', len))
        return false;
    const char *colon = h[0] == '[' ? strstr(h, "]:") : memchr(h, ':', len);
    size_t host_len = colon && colon < h + len ? (size_t)(colon - h) + (h[0] == '[') : len;
    if (host_len > 4 && strncmp(h, "127.", 4) == 0 && strspn(h, "0123456789.") >= host_len)
        return true;
    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++)
        if (host_len == strlen(hosts[i]) && strncmp(h, hosts[i], host_len) == 0)
            return true;
    return false;
}

static int container_auth_header(kp_buf *header)
{
    const char *file = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *value = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    if (file && *file) {
        kp_buf token = KP_BUF_INIT(TOKEN_FILE_MAX);
        int err = read_token_file(&token, file, "container credentials");
        if (err == 0)
            err = kp_buf_printf(header, "Authorization: %s", token.data);
        kp_buf_free(&token);
        return err;
    }
    return value && *value ? kp_buf_printf(header, "Authorization: %s", value) : 0;
}

static int container_url(char *out, size_t size)
{
    const char *full = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    if (full && *full)
        snprintf(out, size, "%s", full);
    else if (rel && *rel)
        snprintf(out, size, "http://169.254.170.2%s", rel);
    else
        return kp_error_set(KP_ENOTFOUND, "container: AWS_CONTAINER_CREDENTIALS_FULL_URI "
                                          "not set");
    if (!container_host_allowed(out))
        return kp_error_set(KP_EINVALID, "container: %s is neither https nor a loopback or "
                                         "container-agent address",
                            out);
    return 0;
}

int kp_aws_creds_from_container(kp_aws_creds *out, long timeout_ms)
{
    char url[1024];
    int err = container_url(url, sizeof(url));
    if (err < 0)
        return err;
    kp_buf header = KP_BUF_INIT(TOKEN_FILE_MAX + 64), answer = KP_BUF_INIT(1u << 20);
    err = container_auth_header(&header);
    const char *headers[] = {kp_buf_cstr(&header)};
    kp_aws_plain_request req = {"GET", url, headers, header.len ? 1 : 0, timeout_ms};
    long status = 0;
    if (err == 0)
        err = kp_aws_http_plain(&req, &answer, &status);
    if (err == 0 && status != 200)
        err = kp_error_set(KP_ERROR, "container credentials endpoint answered HTTP %ld", status);
    if (err == 0)
        err = kp_aws_creds_parse_json(out, answer.data, answer.len);
    kp_buf_free(&answer);
    kp_buf_free(&header);
    return err;
}

static bool imds_disabled(const kp_aws_credentials_options *opts)
{
    const char *v = getenv("AWS_EC2_METADATA_DISABLED");
    return (opts && opts->disable_imds) || (v && strcasecmp(v, "true") == 0);
}

/* The instance profile's role name: the first line of the listing. */
static int imds_role(char *out, size_t size, const char *endpoint, long timeout_ms)
{
    kp_buf list = KP_BUF_INIT(4096);
    int err = kp_aws_imds_get(&list, endpoint, timeout_ms,
                              "/latest/meta-data/iam/security-credentials/");
    size_t len = err == 0 ? strcspn(kp_buf_cstr(&list), "\r\n") : 0;
    if (err == 0 && (len == 0 || len >= size))
        err = kp_error_set(KP_ENOTFOUND, "imds: the instance has no IAM role");
    if (err == 0)
        snprintf(out, size, "%.*s", (int)len, list.data);
    kp_buf_free(&list);
    return err;
}

int kp_aws_creds_from_imds(kp_aws_creds *out, const kp_aws_credentials_options *opts)
{
    if (imds_disabled(opts))
        return kp_error_set(KP_ENOTFOUND, "imds: disabled");
    const char *endpoint = kp_aws_imds_endpoint(opts ? opts->imds_endpoint : NULL);
    long timeout = opts && opts->imds_timeout_ms > 0 ? opts->imds_timeout_ms : 1000;
    char role[256], path[512];
    int err = imds_role(role, sizeof(role), endpoint, timeout);
    if (err == KP_EIO)
        return kp_error_set(KP_ENOTFOUND, "imds: no metadata service at %s", endpoint);
    if (err < 0)
        return err;
    snprintf(path, sizeof(path), "/latest/meta-data/iam/security-credentials/%s", role);
    kp_buf answer = KP_BUF_INIT(1u << 20);
    err = kp_aws_imds_get(&answer, endpoint, timeout, path);
    if (err == 0)
        err = kp_aws_creds_parse_json(out, answer.data, answer.len);
    if (err == 0)
        out->source = "imds";
    kp_buf_free(&answer);
    return err;
}
