/*
 * AWS Signature Version 4: the canonical request, the string to sign and the
 * Authorization header every AWS API call carries (HMAC-SHA256 over OpenSSL).
 *
 * Pure: no I/O, no clock (the signing time is an input), no globals. Every
 * string the signer builds lives in the caller's arena. The signer never logs;
 * callers must not log the secret key or the session token either.
 *
 * Canonicalisation follows the rules of the published SigV4 test suite:
 *   - path: dot segments removed and repeated slashes collapsed (unless
 *     `keep_path` is set, as S3 wants), then every byte outside the unreserved
 *     set (A-Z a-z 0-9 - . _ ~) percent-encoded, '/' kept. The path is given
 *     decoded; the services this project calls all use "/".
 *   - query: the wire query string is split on '&' and '=', each part
 *     percent-decoded then re-encoded strictly, and the pairs sorted by name,
 *     then value.
 *   - headers: names lower-cased; values trimmed with inner runs of whitespace
 *     folded to one space; repeated headers joined with ',' in order; sorted.
 */
#ifndef KP_CLOUD_AWS_SIGV4_H
#define KP_CLOUD_AWS_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

typedef struct kp_sigv4_header {
    const char *name;
    const char *value;
} kp_sigv4_header;

/* The request as it will be sent. `headers` must include Host. Headers named
 * authorization, x-amz-date, x-amz-security-token or x-amz-content-sha256 are
 * ignored: the signer supplies its own. */
typedef struct kp_sigv4_request {
    const char *method;  /* "POST" */
    const char *path;    /* decoded, "/" when empty or NULL */
    const char *query;   /* wire form without '?', NULL or "" for none */
    const kp_sigv4_header *headers;
    size_t n_headers;
    const void *body;
    size_t body_len;
} kp_sigv4_request;

typedef struct kp_sigv4_params {
    const char *access_key_id;
    const char *secret_access_key;
    const char *session_token; /* NULL or "" for long-term keys */
    const char *region;        /* "us-east-1" */
    const char *service;       /* signing name: "ec2", "sqs", "ssm", "pricing", "iam", "sts" */
    int64_t time_ns;           /* signing time, ns since the epoch (UTC) */
    bool keep_path;            /* do not normalise the path (S3) */
    bool add_content_sha256;   /* also sign and send x-amz-content-sha256 */
    bool token_unsigned;       /* send the session token but leave it out of the signature */
} kp_sigv4_params;

enum { KP_SIGV4_MAX_ADDED = 4 };

typedef struct kp_sigv4_result {
    const char *canonical_request;
    const char *string_to_sign;
    const char *signed_headers; /* "host;x-amz-date" */
    char signature[65];         /* lower-case hex */
    char amz_date[17];          /* "20150830T123600Z" */
    /* Headers the caller must add to the request, Authorization last. */
    kp_sigv4_header added[KP_SIGV4_MAX_ADDED];
    size_t n_added;
} kp_sigv4_result;

/* Sign `req`. KP_EINVALID if a required field is missing or the time is out of
 * range. The strings in `out` live in `arena`. */
int kp_sigv4_sign(kp_sigv4_result *out, kp_arena *arena, const kp_sigv4_request *req,
                  const kp_sigv4_params *params);

/* The pieces, exposed for tests and for callers that sign other things. */
char *kp_sigv4_canonical_uri(kp_arena *arena, const char *path, bool keep_path);
char *kp_sigv4_canonical_query(kp_arena *arena, const char *query);
/* Percent-encode every byte outside the unreserved set; '/' too unless keep_slash. */
char *kp_sigv4_uri_encode(kp_arena *arena, const char *s, size_t len, bool keep_slash);
void kp_sigv4_sha256_hex(const void *data, size_t len, char out[65]);
/* "20150830T123600Z" for `time_ns`; KP_EINVALID outside years 1970-9999. */
int kp_sigv4_amz_date(int64_t time_ns, char out[17]);

#endif
