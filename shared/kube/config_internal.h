/*
 * Helpers shared by config.c and kubeconfig.c (not an interface for other
 * modules).
 */
#ifndef KP_KUBE_CONFIG_INTERNAL_H
#define KP_KUBE_CONFIG_INTERNAL_H

#include "kube/config.h"

#include <stddef.h>

/* Upper bound on any credential or kubeconfig file we read. */
#define KP_KUBE_MAX_FILE ((size_t)4 << 20)

/* Read a whole file (at most KP_KUBE_MAX_FILE bytes) into a NUL-terminated
 * buffer. KP_ENOTFOUND when it does not exist, KP_EIO otherwise. */
int kp_kube_read_file(char **out, size_t *out_len, const char *path);

/* `path` joined to `dir` unless absolute or dir is NULL; malloc'd. */
char *kp_kube_join_path(const char *dir, const char *path);

#endif
