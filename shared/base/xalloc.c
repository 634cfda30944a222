#include "base/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t size)
{
    fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", size);
    abort();
}

void *kp_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *kp_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *kp_xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *kp_xgrow(void *ptr, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return ptr;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem_size)
            out_of_memory(SIZE_MAX);
        n *= 2;
    }
    ptr = kp_xrealloc(ptr, n * elem_size);
    *cap = n;
    return ptr;
}

char *kp_xstrdup(const char *s)
{
    return kp_xstrndup(s, strlen(s));
}

char *kp_xstrndup(const char *s, size_t n)
{
    char *p = kp_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
