/*
 * JSON Pointers (RFC 6901) and JSON Patches (RFC 6902) over cJSON trees, as
 * the admission webhook returns them: the defaulting code builds a patch of
 * add/replace operations; tests (and anyone checking a patch) apply it.
 *
 * Pointers escape '~' as "~0" and '/' as "~1", so a label key such as
 * "karpenter.sh/nodepool" becomes "/metadata/labels/karpenter.sh~1nodepool".
 *
 * Ownership: a patch is a plain cJSON array owned by the caller (cJSON_Delete).
 * The add functions take ownership of `value`. cJSON allocation failures
 * abort, as every allocation in this project does (base/xalloc.h).
 */
#ifndef KP_API_JSONPATCH_H
#define KP_API_JSONPATCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

enum { KP_JSONPOINTER_MAX = 1024, KP_JSONPOINTER_DEPTH = 32 };

/* A pointer being built while walking a document: push on the way down,
 * pop on the way up; no allocation. */
typedef struct kp_jsonpointer {
    char text[KP_JSONPOINTER_MAX];
    size_t len;
    size_t depth;
    size_t marks[KP_JSONPOINTER_DEPTH];
    bool truncated; /* a push did not fit: the pointer must not be used */
} kp_jsonpointer;

void kp_jsonpointer_init(kp_jsonpointer *ptr);
/* Append "/" and `token` escaped. */
void kp_jsonpointer_push(kp_jsonpointer *ptr, const char *token);
void kp_jsonpointer_push_index(kp_jsonpointer *ptr, size_t index);
void kp_jsonpointer_pop(kp_jsonpointer *ptr);
/* "" is the whole document. */
const char *kp_jsonpointer_cstr(const kp_jsonpointer *ptr);

/* Escape one reference token into `buf` (always NUL-terminated). Returns the
 * length the escaped token needs, like snprintf. */
size_t kp_jsonpointer_escape(const char *token, char *buf, size_t size);

/* The value `pointer` names in `doc`, or NULL when there is none (or the
 * pointer is malformed). */
cJSON *kp_jsonpointer_get(const cJSON *doc, const char *pointer);

/* Build patches. */
cJSON *kp_jsonpatch_new(void);
void kp_jsonpatch_add(cJSON *patch, const char *path, cJSON *value);
void kp_jsonpatch_replace(cJSON *patch, const char *path, cJSON *value);
void kp_jsonpatch_remove(cJSON *patch, const char *path);

/* Apply `patch` to `doc` in place, operation by operation: add, remove,
 * replace, move, copy and test. On failure returns KP_EINVALID with a message
 * naming the operation ("operation 2 (add /spec/x): parent does not exist")
 * and leaves `doc` with the operations before it applied, as RFC 6902 allows
 * (callers that need all-or-nothing apply to a copy). */
int kp_jsonpatch_apply(cJSON *doc, const cJSON *patch);

#endif
