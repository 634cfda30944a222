/*
 * Kubernetes' name and label syntax, with its exact limits and messages
 * (k8s.io/apimachinery/pkg/util/validation): qualified names (label and
 * annotation keys), label values, DNS-1123 labels and subdomains.
 *
 * Each check appends the same messages Kubernetes would produce to `msgs` and
 * returns how many it added (0 = valid). Messages live at least as long as the
 * msgs' arena (fixed ones are static strings). `msgs` may be NULL to only
 * count, which allocates nothing.
 *
 * Kubernetes words its length limits two ways and users see both: the label
 * key and value checks (and a label key's prefix) say "must be no more than N
 * bytes", the DNS-1123 label and subdomain checks "N characters".
 */
#ifndef KP_API_NAMES_H
#define KP_API_NAMES_H

#include "api/field_errors.h"
#include "base/arena.h"

#include <stdbool.h>
#include <stddef.h>

enum {
    KP_DNS1123_LABEL_MAX = 63,
    KP_DNS1123_SUBDOMAIN_MAX = 253,
    KP_QUALIFIED_NAME_MAX = 63,
    KP_LABEL_VALUE_MAX = 63,
    KP_ANNOTATIONS_TOTAL_MAX = 256 * 1024,
};

/* A list of messages, as Kubernetes' validation helpers return []string. */
typedef struct kp_msgs {
    kp_arena *arena;
    const char **items;
    size_t count;
    size_t cap;
} kp_msgs;

void kp_msgs_init(kp_msgs *msgs, kp_arena *arena);

/* Label / annotation keys: an optional DNS-1123 subdomain prefix and '/', and
 * a name part (IsQualifiedName, which is IsLabelKey). */
size_t kp_is_qualified_name(const char *value, kp_msgs *msgs);
size_t kp_is_valid_label_value(const char *value, kp_msgs *msgs);
size_t kp_is_dns1123_label(const char *value, kp_msgs *msgs);
size_t kp_is_dns1123_subdomain(const char *value, kp_msgs *msgs);

/* Field-error forms used by validators: each message becomes an Invalid error
 * on `path` with the value quoted. Returns true when valid. */
bool kp_validate_label_key(kp_field_errors *errs, const char *path, const char *key);
bool kp_validate_label_value(kp_field_errors *errs, const char *path, const char *value);
/* Annotation keys are qualified names checked case-insensitively (lowered
 * first, as Kubernetes' ValidateAnnotations does); the error shows the key as given. */
bool kp_validate_annotation_key(kp_field_errors *errs, const char *path, const char *key);

/* A whole label map, e.g. metadata.labels: every key and every value, errors
 * on `path` itself as Kubernetes' ValidateLabels reports them. */
bool kp_validate_labels(kp_field_errors *errs, const char *path, const char *const *keys,
                        const char *const *values, size_t n);
/* A whole annotation map: every key, and the total size of keys plus values
 * at most KP_ANNOTATIONS_TOTAL_MAX bytes (a "Too long" error on `path`). */
bool kp_validate_annotations(kp_field_errors *errs, const char *path, const char *const *keys,
                             const char *const *values, size_t n);

#endif
