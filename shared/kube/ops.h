/*
 * Typed helpers over the REST layer: the calls reconcilers make. Objects are
 * cJSON trees in the API's JSON shape (decode them with api/decode.h); trees
 * passed in are borrowed, trees handed out (*out) belong to the caller
 * (cJSON_Delete). Every `out` may be NULL when the answer is not wanted, and
 * is written only on success. Namespaces: NULL or "" for cluster-scoped kinds.
 *
 * Errors are rest.h's: KP_ENOTFOUND (404), KP_ECONFLICT (409: a stale
 * resourceVersion on update, or "already exists" on create), KP_EINVALID
 * (400/422), KP_ERETRY (429, 5xx: try later), ...
 */
#ifndef KP_KUBE_OPS_H
#define KP_KUBE_OPS_H

#include "kube/rest.h"
#include "kube/resources.h"

#include <cjson/cJSON.h>

/* Flag for update, modify and patch: act on the status subresource. */
#define KP_KUBE_STATUS 1u

int kp_kube_get(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                cJSON **out);

typedef struct kp_kube_list_opts {
    const char *namespace;      /* NULL: every namespace */
    const char *label_selector; /* NULL: everything */
    const char *field_selector;
    int limit;              /* page size (limit/continue); <= 0: one page */
    kp_kube_cancel *cancel; /* may be NULL */
} kp_kube_list_opts;

#define KP_KUBE_LIST_OPTS_INIT                                                                     \
    {                                                                                              \
        NULL, NULL, NULL, 500, NULL                                                                \
    }

/* Every page, gathered into one list object: {"apiVersion", "kind":
 * "<Kind>List", "metadata": {"resourceVersion"}, "items": [...]}, the
 * resourceVersion being the first page's (the snapshot the pages come from).
 * A continue token that expired between pages (410) starts over once,
 * without pagination, as client-go's pager does. A server that repeats the
 * continue token it was given is KP_EINVALID, and pages adding up to more
 * than the client's max_body (what one unpaged answer may hold) are
 * KP_ETOOLARGE: neither grows memory without bound. `opts` may be NULL. */
int kp_kube_list(kp_kube_client *c, enum kp_kube_res res, const kp_kube_list_opts *opts,
                 cJSON **out);

/* POST `obj` into `ns` (NULL: the object's metadata.namespace). A
 * metadata.generateName without a name lets the server pick the name. */
int kp_kube_create(kp_kube_client *c, enum kp_kube_res res, const char *ns, const cJSON *obj,
                   cJSON **out);

/* PUT `obj` (its metadata.namespace/name/resourceVersion say what and which
 * version); KP_ECONFLICT when the object changed since. `flags` KP_KUBE_STATUS:
 * the status subresource. */
int kp_kube_update(kp_kube_client *c, enum kp_kube_res res, const cJSON *obj, unsigned flags,
                   cJSON **out);

/* Re-applies a change to a fresh copy: returns 0 to write `obj`,
 * KP_KUBE_UNCHANGED to write nothing, or a negative KP_E* to give up. */
typedef int (*kp_kube_mutate_fn)(void *ctx, cJSON *obj);
#define KP_KUBE_UNCHANGED 1

/* Read-modify-write with conflicts retried (client-go's RetryOnConflict):
 * GET, mutate, PUT, and on KP_ECONFLICT again from a fresh GET, up to
 * `attempts` times (<= 0: 5). *out is the object as written (or as read when
 * unchanged). */
int kp_kube_modify(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                   unsigned flags, int attempts, kp_kube_mutate_fn fn, void *ctx, cJSON **out);

enum kp_kube_patch_type {
    KP_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    KP_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    KP_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
};

int kp_kube_patch(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                  enum kp_kube_patch_type type, const char *patch, unsigned flags, cJSON **out);

typedef struct kp_kube_delete_opts {
    const char *uid;              /* precondition: delete only this incarnation */
    const char *resource_version; /* precondition: only this version */
    const char *propagation;      /* "Background", "Foreground", "Orphan" or NULL */
    long grace_period_seconds;    /* < 0: the object's own */
} kp_kube_delete_opts;

#define KP_KUBE_DELETE_OPTS_INIT                                                                   \
    {                                                                                              \
        NULL, NULL, NULL, -1                                                                       \
    }

/* DELETE; a failed precondition is KP_ECONFLICT, a missing object
 * KP_ENOTFOUND. `opts` may be NULL. */
int kp_kube_delete(kp_kube_client *c, enum kp_kube_res res, const char *ns, const char *name,
                   const kp_kube_delete_opts *opts);

/* Evict a Pod through the Eviction subresource, so that the API server
 * enforces PodDisruptionBudgets: policy/v1, or policy/v1beta1 on servers
 * without it (discovery, see rest.h). KP_ERETRY (429) when a budget forbids
 * it now, KP_ENOTFOUND when the Pod is gone. `opts` (may be NULL) go in the
 * Eviction's deleteOptions. */
int kp_kube_evict(kp_kube_client *c, const char *ns, const char *name,
                  const kp_kube_delete_opts *opts);

/* "namespace/name", or "name" for objects without a namespace (client-go's
 * MetaNamespaceKeyFunc), into `buf`. KP_EINVALID without metadata.name,
 * KP_ETOOLARGE when it does not fit. */
int kp_kube_object_key(const cJSON *obj, char *buf, size_t size);
/* metadata.<field> as a string, or NULL. */
const char *kp_kube_meta(const cJSON *obj, const char *field);

#endif
