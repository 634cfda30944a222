#include "base/arena.h"
#include "base/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA_ALIGN = 16, ARENA_CHUNK = 64 * 1024 };

struct chunk {
    struct chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

/* Chunks are a list, newest first. `current` is the chunk being bump-allocated
 * from; blocks too big for it get chunks of their own, pushed at the head too,
 * so "everything newer than a mark" is always a prefix of the list. */
struct kp_arena {
    struct chunk *head;
    struct chunk *current;
    size_t handed_out;
};

kp_arena *kp_arena_new(void)
{
    return kp_xcalloc(1, sizeof(kp_arena));
}

kp_arena *kp_arena_free(kp_arena *arena)
{
    if (!arena)
        return NULL;
    struct chunk *c = arena->head;
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
    free(arena);
    return NULL;
}

static struct chunk *chunk_new(size_t size)
{
    struct chunk *c = kp_xmalloc(sizeof(struct chunk) + size);
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

static void push_chunk(kp_arena *arena, struct chunk *c)
{
    c->next = arena->head;
    arena->head = c;
}

#ifdef KP_ARENA_DEBUG
/* One exact-size chunk per allocation: an overflow hits ASan's redzone. */
void *kp_arena_alloc(kp_arena *arena, size_t size)
{
    struct chunk *c = chunk_new(size);
    c->used = size;
    push_chunk(arena, c);
    arena->handed_out += size;
    return c->data;
}
#else
void *kp_arena_alloc(kp_arena *arena, size_t size)
{
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    struct chunk *c = arena->current;
    if (rounded < size) {
        fprintf(stderr, "fatal: arena allocation of %zu bytes overflows\n", size);
        abort();
    }
    arena->handed_out += size;
    if (c && c->size - c->used >= rounded) {
        void *p = c->data + c->used;
        c->used += rounded;
        return p;
    }
    if (rounded > ARENA_CHUNK / 4) {
        /* A block of its own; the current chunk's free tail stays usable. */
        struct chunk *big = chunk_new(rounded);
        big->used = rounded;
        push_chunk(arena, big);
        return big->data;
    }
    c = chunk_new(ARENA_CHUNK);
    c->used = rounded;
    push_chunk(arena, c);
    arena->current = c;
    return c->data;
}
#endif

kp_arena_mark kp_arena_mark_get(const kp_arena *arena)
{
    kp_arena_mark m = {arena->head, arena->current, arena->current ? arena->current->used : 0,
                       arena->handed_out};
    return m;
}

void kp_arena_rewind(kp_arena *arena, kp_arena_mark mark)
{
    while (arena->head && arena->head != mark.head) {
        struct chunk *next = arena->head->next;
        free(arena->head);
        arena->head = next;
    }
    arena->current = mark.current;
    if (arena->current)
        arena->current->used = mark.current_used;
    arena->handed_out = mark.handed_out;
}

void *kp_arena_calloc(kp_arena *arena, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        fprintf(stderr, "fatal: arena allocation of %zu x %zu bytes overflows\n", count, size);
        abort();
    }
    void *p = kp_arena_alloc(arena, count * size);
    memset(p, 0, count * size);
    return p;
}

void *kp_arena_grow(kp_arena *arena, const void *old, size_t old_count, size_t new_count,
                    size_t size)
{
    void *p = kp_arena_calloc(arena, new_count, size);
    if (old && old_count)
        memcpy(p, old, (old_count < new_count ? old_count : new_count) * size);
    return p;
}

void *kp_arena_memdup(kp_arena *arena, const void *src, size_t size)
{
    void *p = kp_arena_alloc(arena, size);
    if (size)
        memcpy(p, src, size);
    return p;
}

char *kp_arena_strndup(kp_arena *arena, const char *s, size_t n)
{
    char *p = kp_arena_alloc(arena, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *kp_arena_strdup(kp_arena *arena, const char *s)
{
    return s ? kp_arena_strndup(arena, s, strlen(s)) : NULL;
}

char *kp_arena_join(kp_arena *arena, const char *const *items, size_t n, const char *sep)
{
    size_t sep_len = strlen(sep), len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(items[i]) + (i ? sep_len : 0);
    char *out = kp_arena_alloc(arena, len + 1), *p = out;
    for (size_t i = 0; i < n; i++) {
        if (i) {
            memcpy(p, sep, sep_len);
            p += sep_len;
        }
        size_t item_len = strlen(items[i]);
        memcpy(p, items[i], item_len);
        p += item_len;
    }
    *p = '\0';
    return out;
}

char *kp_arena_vprintf(kp_arena *arena, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return kp_arena_strdup(arena, "");
    char *p = kp_arena_alloc(arena, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *kp_arena_printf(kp_arena *arena, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = kp_arena_vprintf(arena, fmt, ap);
    va_end(ap);
    return p;
}

size_t kp_arena_used(const kp_arena *arena)
{
    return arena->handed_out;
}
