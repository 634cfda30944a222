/*
 * A field path being walked, rendered the way Kubernetes names fields in its
 * errors: `spec.template.spec.requirements[2].values`, `metadata.labels[app]`.
 * Push on the way down, pop on the way up; no allocation.
 */
#ifndef KP_BASE_PATH_H
#define KP_BASE_PATH_H

#include <stddef.h>

enum { KP_PATH_MAX = 512, KP_PATH_DEPTH = 32 };

typedef struct kp_path {
    char text[KP_PATH_MAX];
    size_t len;
    size_t depth;
    size_t marks[KP_PATH_DEPTH];
    int truncated; /* set if a push did not fit; the text ends in "..." */
} kp_path;

void kp_path_init(kp_path *path, const char *root);
/* `.name` (or `name` at the root). */
void kp_path_push_field(kp_path *path, const char *name);
/* `[index]` */
void kp_path_push_index(kp_path *path, size_t index);
/* `[key]` for map entries. */
void kp_path_push_key(kp_path *path, const char *key);
void kp_path_pop(kp_path *path);
const char *kp_path_cstr(const kp_path *path);

#endif
