/*
 * The AWS request layer on libcurl: endpoint and region resolution, SigV4
 * signing, retries, and AWS's own error codes kept for the caller.
 *
 * A client owns one curl easy handle (kept alive between calls), so a client
 * belongs to one thread at a time; create one per thread. The credentials
 * provider may be shared between clients (it is thread-safe).
 *
 * Region: the option, else AWS_REGION, else AWS_DEFAULT_REGION, else the
 * profile's `region` in the shared config file.
 * Endpoint of a service: a per-service option, else the all-services option,
 * else AWS_ENDPOINT_URL_<SERVICE> (EC2, SQS, SSM, PRICING, IAM, STS, EKS), else
 * AWS_ENDPOINT_URL, else the public regional endpoint. Tests point these at
 * moto or at an in-process double.
 *
 * Retries follow the SDKs' standard retryer: up to 3 attempts; throttling
 * (RequestLimitExceeded, Throttling, ThrottlingException, TooManyRequests,
 * HTTP 429 ...), HTTP 5xx and transport failures are retried after a full-jitter
 * exponential backoff (random in [0, min(max, base * 2^attempt))).
 *
 * REST-JSON services (EKS) name the operation by method and path; their
 * error code comes from the x-amzn-ErrorType header when the body lacks it.
 *
 * Errors: a failed call returns a KP_E* code (kp_aws_error_class) with a
 * message naming the service, action, AWS code and message; the full AWS error
 * stays readable through kp_aws_client_error until the next call.
 */
#ifndef KP_CLOUD_AWS_HTTP_H
#define KP_CLOUD_AWS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/clock.h"
#include "cloud/aws/credentials.h"

typedef struct kp_aws_error {
    long http_status;     /* 0 when no HTTP answer came (transport failure) */
    char code[128];       /* AWS error code ("InvalidSubnetID.NotFound"); "" when none */
    char message[1024];   /* AWS's message, or curl's for transport failures */
    char request_id[128]; /* for AWS support; "" when none */
    int attempts;         /* how many attempts the call took */
} kp_aws_error;

enum kp_aws_protocol {
    KP_AWS_QUERY = 0, /* EC2 Query and AWS Query: form POST, XML answer */
    KP_AWS_JSON_1_0,  /* SQS */
    KP_AWS_JSON_1_1,  /* SSM, Pricing */
    KP_AWS_REST_JSON, /* EKS: method and path name the operation, JSON answer */
};

typedef struct kp_aws_endpoint {
    const char *service; /* "ec2" */
    const char *url;     /* "http://127.0.0.1:5000" */
} kp_aws_endpoint;

typedef struct kp_aws_client_options {
    const char *region;
    const char *endpoint_url;           /* every service */
    const kp_aws_endpoint *endpoints;   /* per service; wins over endpoint_url */
    size_t n_endpoints;
    kp_aws_credentials *credentials;    /* borrowed; NULL: the default chain, owned */
    bool anonymous;                     /* send requests unsigned */
    int max_attempts;                   /* 0: 3 */
    long backoff_base_ms;               /* 0: 1000 */
    long backoff_max_ms;                /* 0: 20000 */
    long timeout_ms;                    /* per attempt; 0: 60000 */
    long connect_timeout_ms;            /* 0: 10000 */
    size_t max_response_bytes;          /* 0: 64 MiB */
    const kp_clock *clock;              /* signing time; NULL: the system clock */
} kp_aws_client_options;

#define KP_AWS_CLIENT_OPTIONS_INIT {0}

typedef struct kp_aws_client kp_aws_client;

/* KP_EINVALID when no region can be found. */
int kp_aws_client_new(kp_aws_client **out, const kp_aws_client_options *opts);
kp_aws_client *kp_aws_client_free(kp_aws_client *client);
const char *kp_aws_client_region(const kp_aws_client *client);
/* The error of the last call; all zero after a call that succeeded. */
const kp_aws_error *kp_aws_client_error(const kp_aws_client *client);

/* The base URL for `service` in `region` (NULL: the client's), no trailing '/'. */
int kp_aws_client_endpoint(const kp_aws_client *client, const char *service, const char *region,
                           char *out, size_t size);

typedef struct kp_aws_request {
    const char *service;       /* signing name and endpoint key: "ec2", "sqs" ... */
    const char *action;        /* "DescribeSubnets": JSON target suffix, and messages */
    enum kp_aws_protocol protocol;
    const char *target_prefix; /* JSON: "AmazonSQS" -> X-Amz-Target: AmazonSQS.<action> */
    const char *body;
    size_t body_len;
    const char *region;        /* NULL: the client's (Pricing and IAM use their own) */
    long timeout_ms;           /* 0: the client's (SQS long polls need more) */
    /* REST-JSON only: "GET" (no body) or "POST", and the path after the
     * endpoint ("/clusters/prod"), already percent-encoded. */
    const char *method;
    const char *path;
} kp_aws_request;

/* Send with retries. On success `response` holds the body (appended). */
int kp_aws_client_send(kp_aws_client *client, const kp_aws_request *req, kp_buf *response);

/* The KP_E* class of an AWS error: KP_ERETRY (throttling, 5xx, transport),
 * KP_ENOTFOUND (the not-found codes Karpenter acts on), KP_EFORBIDDEN,
 * KP_EUNAUTHORIZED, KP_EINSUFFICIENT_CAPACITY, KP_EINVALID (other 4xx). */
int kp_aws_error_class(const kp_aws_error *error);
bool kp_aws_code_is_throttle(const char *code);
bool kp_aws_code_is_not_found(const char *code);
/* The capacity codes CreateFleet reports per override (InsufficientInstanceCapacity ...). */
bool kp_aws_code_is_insufficient_capacity(const char *code);

/* Fill `error` from an error body: EC2 <Response><Errors>, AWS Query
 * <ErrorResponse>, or JSON {"__type", "message"}. */
void kp_aws_error_parse(kp_aws_error *error, enum kp_aws_protocol protocol, const char *body,
                        size_t len);

/* Plain HTTP for the metadata endpoints (IMDS, container credentials): no
 * signing, no retries. `headers` are "Name: value" strings. */
typedef struct kp_aws_plain_request {
    const char *method; /* "GET", "PUT" */
    const char *url;
    const char *const *headers;
    size_t n_headers;
    long timeout_ms;
} kp_aws_plain_request;

/* 0 when an HTTP answer arrived (any status, in *status); KP_EIO otherwise. */
int kp_aws_http_plain(const kp_aws_plain_request *req, kp_buf *response, long *status);

/* Append `key=value` to a form body, percent-encoding both; '&' between pairs. */
int kp_aws_form_add(kp_buf *form, const char *key, const char *value);
int kp_aws_form_addf(kp_buf *form, const char *value, const char *key_fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
