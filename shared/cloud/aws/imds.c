#include "cloud/aws/imds.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/aws_http.h"

enum { IMDS_DEFAULT_TIMEOUT_MS = 1000, IMDS_TOKEN_MAX = 256 };

const char *kp_aws_imds_endpoint(const char *explicit_endpoint)
{
    if (explicit_endpoint && *explicit_endpoint)
        return explicit_endpoint;
    const char *env = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    return env && *env ? env : "http://169.254.169.254";
}

static int join_url(char *out, size_t size, const char *endpoint, const char *path)
{
    size_t len = strlen(endpoint);
    while (len > 0 && endpoint[len - 1] == '/')
        len--;
    int n = snprintf(out, size, "%.*s%s", (int)len, endpoint, path);
    return n < 0 || (size_t)n >= size ? kp_error_set(KP_EINVALID, "IMDS URL too long") : 0;
}

static int status_error(long status, const char *path)
{
    if (status == 404)
        return kp_error_set(KP_ENOTFOUND, "IMDS %s: not found", path);
    return kp_error_set(KP_ERROR, "IMDS %s: HTTP %ld", path, status);
}

static int fetch_token(char *token, size_t size, const char *endpoint, long timeout_ms)
{
    char url[512];
    int err = join_url(url, sizeof(url), endpoint, "/latest/api/token");
    if (err < 0)
        return err;
    const char *headers[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600"};
    kp_aws_plain_request req = {"PUT", url, headers, 1, timeout_ms};
    kp_buf body = KP_BUF_INIT(IMDS_TOKEN_MAX);
    long status = 0;
    err = kp_aws_http_plain(&req, &body, &status);
    if (err == 0 && status != 200)
        err = status_error(status, "/latest/api/token");
    if (err == 0 && (body.len == 0 || body.len >= size))
        err = kp_error_set(KP_ERROR, "IMDS answered an unusable token");
    if (err == 0)
        memcpy(token, body.data, body.len + 1);
    kp_buf_free(&body);
    return err;
}

int kp_aws_imds_get(kp_buf *out, const char *endpoint, long timeout_ms, const char *path)
{
    endpoint = kp_aws_imds_endpoint(endpoint);
    if (timeout_ms <= 0)
        timeout_ms = IMDS_DEFAULT_TIMEOUT_MS;
    char token[IMDS_TOKEN_MAX], url[512], header[IMDS_TOKEN_MAX + 64];
    int err = fetch_token(token, sizeof(token), endpoint, timeout_ms);
    if (err == 0)
        err = join_url(url, sizeof(url), endpoint, path);
    if (err < 0)
        return err;
    snprintf(header, sizeof(header), "X-aws-ec2-metadata-token: %s", token);
    const char *headers[] = {header};
    kp_aws_plain_request req = {"GET", url, headers, 1, timeout_ms};
    long status = 0;
    err = kp_aws_http_plain(&req, out, &status);
    if (err == 0 && status != 200)
        err = status_error(status, path);
    return err;
}

int kp_aws_imds_region(char *out, size_t size, const char *endpoint, long timeout_ms)
{
    kp_buf body = KP_BUF_INIT(256);
    int err = kp_aws_imds_get(&body, endpoint, timeout_ms, "/latest/meta-data/placement/region");
    size_t len = body.len;
    while (err == 0 && len > 0 && isspace((unsigned char)body.data[len - 1]))
        len--;
    if (err == 0 && (len == 0 || len >= size))
        err = kp_error_set(KP_ERROR, "IMDS answered an unusable region");
    if (err == 0)
        snprintf(out, size, "%.*s", (int)len, body.data);
    kp_buf_free(&body);
    return err;
}
