/*
 * Allocation that cannot fail. Running out of memory is fatal for both
 * programs (the kubelet OOM-kills a Pod long before malloc returns NULL under
 * overcommit), so checking every allocation would add error paths that never
 * run. These print one line and abort instead.
 */
#ifndef KP_BASE_XALLOC_H
#define KP_BASE_XALLOC_H

#include <stddef.h>

void *kp_xmalloc(size_t size);
void *kp_xcalloc(size_t count, size_t size);
void *kp_xrealloc(void *ptr, size_t size);
/* Grow an array to hold at least `need` elements; doubles, so pushes are amortised O(1). */
void *kp_xgrow(void *ptr, size_t *cap, size_t need, size_t elem_size);
char *kp_xstrdup(const char *s);
char *kp_xstrndup(const char *s, size_t n);

#endif
