/*
 * Arena allocator: allocate freely while decoding a batch, handling a request or
 * solving, then free everything at once. Allocation never fails (see xalloc.h).
 *
 * Built with KP_ARENA_DEBUG (the sanitizer build), every allocation is its own
 * malloc so AddressSanitizer sees each block's bounds, as libgit2's pool does.
 */
#ifndef KP_BASE_ARENA_H
#define KP_BASE_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct kp_arena kp_arena;

kp_arena *kp_arena_new(void);

/* Free every allocation and the arena itself. Accepts NULL; returns NULL. */
kp_arena *kp_arena_free(kp_arena *arena);

/* 16-byte aligned, uninitialised memory. */
void *kp_arena_alloc(kp_arena *arena, size_t size);
/* Zeroed memory for `count` elements of `size` (overflow-checked). */
void *kp_arena_calloc(kp_arena *arena, size_t count, size_t size);
/* Copy `old_count` elements into a new zero-padded block of `new_count`. */
void *kp_arena_grow(kp_arena *arena, const void *old, size_t old_count, size_t new_count,
                    size_t size);
void *kp_arena_memdup(kp_arena *arena, const void *src, size_t size);
char *kp_arena_strdup(kp_arena *arena, const char *s);
char *kp_arena_strndup(kp_arena *arena, const char *s, size_t n);
char *kp_arena_printf(kp_arena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *kp_arena_vprintf(kp_arena *arena, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* `n` strings with `sep` between them, as long as they are (nothing is cut). */
char *kp_arena_join(kp_arena *arena, const char *const *items, size_t n, const char *sep);

/* A point to return to: everything allocated after kp_arena_mark() is freed by
 * kp_arena_rewind(). The solver uses this for attempts that fail. */
typedef struct kp_arena_mark {
    void *head;
    void *current;
    size_t current_used;
    size_t handed_out;
} kp_arena_mark;

kp_arena_mark kp_arena_mark_get(const kp_arena *arena);
void kp_arena_rewind(kp_arena *arena, kp_arena_mark mark);

/* Bytes handed out so far (for memory figures in benchmarks). */
size_t kp_arena_used(const kp_arena *arena);

/* Convenience: a typed zeroed array. */
#define KP_ARENA_NEW(arena, type, count) ((type *)kp_arena_calloc((arena), (count), sizeof(type)))

#endif
