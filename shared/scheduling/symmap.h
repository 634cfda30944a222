/*
 * A small open-addressing map from a symbol to a 32-bit value, with its
 * storage in an arena: topology domains, instance-type keys, name lookups
 * while building a snapshot.
 */
#ifndef KP_SCHEDULING_SYMMAP_H
#define KP_SCHEDULING_SYMMAP_H

#include "api/symtab.h"
#include "base/arena.h"

#include <stdint.h>

typedef struct kp_symmap {
    kp_sym *keys;
    uint32_t *vals;
    uint32_t cap; /* power of two, or 0 */
    uint32_t count;
} kp_symmap;

/* The value for `key`, or UINT32_MAX. */
uint32_t kp_symmap_get(const kp_symmap *map, kp_sym key);
void kp_symmap_put(kp_symmap *map, kp_arena *arena, kp_sym key, uint32_t val);

#endif
