/*
 * AWS credentials: the standard provider chain of the AWS SDKs, cached and
 * refreshed ahead of expiry.
 *
 * Chain, first source that applies wins:
 *   1. environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [, AWS_SESSION_TOKEN]
 *   2. web identity from the environment: AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE
 *      [+ AWS_ROLE_SESSION_NAME] -> STS AssumeRoleWithWebIdentity (IRSA)
 *   3. shared files (shared_config.h): keys of the profile, or the profile's
 *      role_arn + web_identity_token_file
 *   4. container: AWS_CONTAINER_CREDENTIALS_FULL_URI (EKS Pod Identity) or
 *      _RELATIVE_URI (ECS), with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or
 *      _TOKEN as the Authorization header
 *   5. IMDSv2 (imds.h): the instance profile role's credentials
 *
 * A source that does not apply answers KP_ENOTFOUND and the chain moves on; a
 * source that applies but fails (a malformed file, STS refusing the token)
 * stops the chain with its error, so a misconfiguration is not papered over by
 * a different identity.
 *
 * The provider is thread-safe (one mutex). Credentials with an expiry are
 * refreshed `refresh_before_ns` (default 5 minutes) before it; if a refresh
 * fails while the old ones are still valid, the old ones are kept. Nothing
 * here logs, and error messages never contain a secret or a token.
 */
#ifndef KP_CLOUD_AWS_CREDENTIALS_H
#define KP_CLOUD_AWS_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/clock.h"

typedef struct kp_aws_creds {
    char access_key_id[128];
    char secret_access_key[128];
    char session_token[4096]; /* "" for long-term keys */
    int64_t expires_ns;       /* 0: does not expire */
    const char *source;       /* static: "environment", "web-identity", "shared-files",
                                 "container", "imds", "static" */
} kp_aws_creds;

typedef struct kp_aws_credentials_options {
    const char *profile;       /* NULL: AWS_PROFILE, then "default" */
    const char *region;        /* for STS; NULL: AWS_REGION / AWS_DEFAULT_REGION / us-east-1 */
    const char *sts_endpoint;  /* NULL: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, regional STS */
    const char *imds_endpoint; /* NULL: AWS_EC2_METADATA_SERVICE_ENDPOINT, then 169.254.169.254 */
    long imds_timeout_ms;      /* per IMDS request; 0: 1000 */
    bool disable_imds;         /* also when AWS_EC2_METADATA_DISABLED=true */
    int64_t refresh_before_ns; /* 0: 5 minutes */
    const kp_clock *clock;     /* NULL: the system clock */
} kp_aws_credentials_options;

#define KP_AWS_CREDENTIALS_OPTIONS_INIT {0}

typedef struct kp_aws_credentials kp_aws_credentials;

/* The default chain. Nothing is resolved until the first get. */
int kp_aws_credentials_new(kp_aws_credentials **out, const kp_aws_credentials_options *opts);
/* A provider that always answers `creds` (tests, explicit keys). */
int kp_aws_credentials_new_static(kp_aws_credentials **out, const kp_aws_creds *creds);
kp_aws_credentials *kp_aws_credentials_free(kp_aws_credentials *provider);

/* Current credentials, resolving or refreshing as needed. KP_ENOTFOUND when
 * no source applies (the message lists why each was skipped). */
int kp_aws_credentials_get(kp_aws_credentials *provider, kp_aws_creds *out);
/* Forget the cached credentials (after the service answered ExpiredToken). */
void kp_aws_credentials_invalidate(kp_aws_credentials *provider);

/* The sources one by one; each KP_ENOTFOUND when it does not apply. */
int kp_aws_creds_from_env(kp_aws_creds *out);
int kp_aws_creds_from_files(kp_aws_creds *out, const kp_aws_credentials_options *opts);
int kp_aws_creds_from_web_identity(kp_aws_creds *out, const kp_aws_credentials_options *opts,
                                   const char *role_arn, const char *token_file,
                                   const char *session_name);
int kp_aws_creds_from_container(kp_aws_creds *out, long timeout_ms);
int kp_aws_creds_from_imds(kp_aws_creds *out, const kp_aws_credentials_options *opts);

/* Response parsers, shared by the sources and tested on recorded responses:
 * STS AssumeRoleWithWebIdentity XML, and the JSON document both the container
 * endpoint and IMDS answer ({AccessKeyId, SecretAccessKey, Token, Expiration}). */
int kp_aws_creds_parse_sts(kp_aws_creds *out, const char *xml, size_t len);
int kp_aws_creds_parse_json(kp_aws_creds *out, const char *json, size_t len);

#endif
