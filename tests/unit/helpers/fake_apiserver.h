/*
 * A tiny in-process Kubernetes API server for unit tests of shared/kube:
 * HTTP/1.1 on a loopback port (plain sockets, a thread per connection), with
 *
 *   - a store of JSON objects with resourceVersions: get, list (limit and
 *     continue), create (generateName), update (409 on a stale
 *     resourceVersion), status subresource, merge and JSON patch, delete
 *     (preconditions), the pods/eviction subresource, discovery of
 *     /apis/policy/v1 (switchable, to play a 1.20 server);
 *   - watches fed by the store's changes: replay from a resourceVersion,
 *     410 Gone (ERROR event) for one older than the last compaction,
 *     bookmarks on demand, streams the test can end;
 *   - a hook that answers any request first (errors, odd bodies, streams cut
 *     in arbitrary chunks);
 *   - a log of every request for assertions.
 *
 * Not a real API server: no label or field selectors, no validation, no
 * defaulting. For tests only.
 */
#ifndef KP_TEST_FAKE_APISERVER_H
#define KP_TEST_FAKE_APISERVER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct fake_api fake_api;

typedef struct fake_req {
    const char *method;
    const char *path;  /* without the query */
    const char *query; /* after '?', "" when none */
    const char *body;  /* "" when none */
    const char *content_type;
    const char *authorization;
} fake_req;

/* What a hook answers. status 0: not handled, the store answers. `body` is
 * malloc'd (the server frees it). With `chunks`, the answer is a chunked
 * stream of those pieces (malloc'd, freed by the server), sent with a short
 * pause between them, and then ended. */
typedef struct fake_resp {
    int status;
    char *body;
    char **chunks;
    size_t nchunks;
} fake_resp;

typedef void (*fake_hook)(void *ctx, const fake_req *req, fake_resp *resp);

/* A server on 127.0.0.1 and a free port; NULL if it cannot listen. */
fake_api *fake_api_start(void);
/* Stop and free; ends open streams and connections. */
void fake_api_stop(fake_api *fa);
const char *fake_api_url(fake_api *fa);

void fake_api_set_hook(fake_api *fa, fake_hook hook, void *ctx);
/* Whether /apis/policy/v1 exists (default true). */
void fake_api_set_policy_v1(fake_api *fa, bool served);
/* Whether a merge patch naming metadata.resourceVersion is refused with 409
 * when the object has moved on, as a real API server does (default false:
 * the store applies every patch). */
void fake_api_set_patch_locks(fake_api *fa, bool enforced);
/* Answer 401 unless "Authorization: Bearer <token>"; NULL: no check. */
void fake_api_require_token(fake_api *fa, const char *token);

/* Store `json` in the collection at `collection` ("/api/v1/namespaces/a/pods"),
 * creating or replacing (a watch sees ADDED or MODIFIED). Returns its new
 * resourceVersion. */
long fake_api_put(fake_api *fa, const char *collection, const char *json);
/* Remove the object at `path` (a watch sees DELETED); false if absent. */
bool fake_api_remove(fake_api *fa, const char *path);
/* A copy of the object at `path`, or NULL. */
cJSON *fake_api_get(fake_api *fa, const char *path);
/* The current resourceVersion. */
long fake_api_rv(fake_api *fa);
/* Forget history: watches from an older resourceVersion get 410 Gone, and
 * continue tokens expire. */
void fake_api_compact(fake_api *fa);
/* Send a BOOKMARK at the current resourceVersion to watches that allow them. */
void fake_api_bookmark(fake_api *fa);
/* End every open watch stream (the clients see the server close it). */
void fake_api_close_watches(fake_api *fa);
/* Wait until at least `n` watch streams are open; false after `timeout_ms`. */
bool fake_api_wait_watches(fake_api *fa, int n, int timeout_ms);

/* TCP connections accepted so far (keep-alive makes this small). */
size_t fake_api_connections(fake_api *fa);

typedef struct fake_logged {
    const char *method;
    const char *target; /* path?query */
    const char *body;
    const char *content_type;
    const char *authorization;
} fake_logged;

/* Requests whose method matches (NULL: any) and whose target starts with
 * `prefix` (NULL: any). */
size_t fake_api_count(fake_api *fa, const char *method, const char *prefix);
/* The nth such request (0-based; negative counts from the end). The strings
 * live as long as the server. */
bool fake_api_find(fake_api *fa, const char *method, const char *prefix, long nth,
                   fake_logged *out);

#endif
