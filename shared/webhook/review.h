/*
 * AdmissionReview (admission.k8s.io/v1) in and out: reading the review the
 * API server posts to a webhook, and writing the review it expects back.
 *
 * Reading is split in two on purpose. kp_review_parse() fails only when no
 * response can be addressed to the request (too large, not JSON, not an
 * AdmissionReview v1, no request.uid): the server answers those with an HTTP
 * 4xx. Everything else (an unknown kind or operation, a missing object) parses
 * and is refused by the handler as an AdmissionReview denial, which the user
 * then sees with its message.
 */
#ifndef KP_WEBHOOK_REVIEW_H
#define KP_WEBHOOK_REVIEW_H

#include "base/buf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The API server refuses request bodies over 3 MiB; so do we. */
#define KP_REVIEW_MAX_BYTES   ((size_t)3 << 20)
#define KP_REVIEW_API_VERSION "admission.k8s.io/v1"
/* Objects nest far less than this; the API server's own JSON limit is 10000. */
#define KP_REVIEW_MAX_DEPTH 256

enum kp_review_op {
    KP_REVIEW_OP_UNKNOWN = 0,
    KP_REVIEW_OP_CREATE,
    KP_REVIEW_OP_UPDATE,
    KP_REVIEW_OP_DELETE,
    KP_REVIEW_OP_CONNECT,
};

/* A parsed request. Every pointer points into `root`, which the review owns. */
typedef struct kp_review {
    cJSON *root;
    const char *uid;
    const char *group, *version, *kind; /* request.kind; NULL when absent */
    const char *operation;              /* as sent; NULL when absent */
    enum kp_review_op op;
    const char *name, *namespace_; /* may be NULL */
    const cJSON *object;           /* NULL when absent or null */
    const cJSON *old_object;       /* NULL when absent or null */
    bool dry_run;
} kp_review;

/* Parse `len` bytes of `body` (need not be NUL-terminated). KP_ETOOLARGE over
 * KP_REVIEW_MAX_BYTES; KP_EINVALID for anything that cannot be answered with
 * an AdmissionReview, with a message fit to send back. On success the caller
 * owns *out's tree (kp_review_clear). */
int kp_review_parse(kp_review *out, const char *body, size_t len);
void kp_review_clear(kp_review *review);

/* Why the object's metadata cannot be what the API server stores (not an
 * object; name, namespace... not strings; labels or annotations not maps of
 * strings), or NULL when it is fine or absent. */
const char *kp_review_metadata_problem(const cJSON *object);

/* "CREATE" -> KP_REVIEW_OP_CREATE ...; NULL or anything else -> UNKNOWN. */
enum kp_review_op kp_review_op_parse(const char *operation);

typedef struct kp_review_response {
    const char *uid;
    bool allowed;
    int code;           /* denials: the HTTP-like status code (400, 403) */
    const char *reason; /* denials: "BadRequest", "Forbidden" */
    const char *message;
    const char *const *warnings;
    size_t n_warnings;
    const cJSON *patch; /* a JSON Patch array, or NULL; sent only when allowed and non-empty */
} kp_review_response;

/* Append the response AdmissionReview as compact JSON. KP_ETOOLARGE at the
 * buffer's cap. */
int kp_review_response_write(kp_buf *out, const kp_review_response *resp);

/* A Kubernetes Status object ({"kind":"Status",...,"code":N}) as the body of
 * an HTTP error, for requests that cannot get an AdmissionReview back. */
int kp_review_status_write(kp_buf *out, int code, const char *reason, const char *message);


#endif
