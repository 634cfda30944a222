/* An open-addressing map from symbol to index (linear probing, 3/4 load). */
#include "scheduling/symmap.h"

static uint32_t sym_hash(kp_sym key)
{
    uint32_t h = key * 2654435761u;
    return h ^ (h >> 16);
}

uint32_t kp_symmap_get(const kp_symmap *map, kp_sym key)
{
    if (map->cap == 0)
        return UINT32_MAX;
    uint32_t mask = map->cap - 1;
    for (uint32_t i = sym_hash(key) & mask;; i = (i + 1) & mask) {
        if (map->keys[i] == key)
            return map->vals[i];
        if (map->keys[i] == KP_SYM_NONE)
            return UINT32_MAX;
    }
}

static void symmap_grow(kp_symmap *map, kp_arena *arena)
{
    kp_symmap bigger = {0};
    bigger.cap = map->cap ? map->cap * 2 : 16;
    bigger.keys = KP_ARENA_NEW(arena, kp_sym, bigger.cap);
    bigger.vals = KP_ARENA_NEW(arena, uint32_t, bigger.cap);
    for (uint32_t i = 0; i < map->cap; i++)
        if (map->keys[i] != KP_SYM_NONE)
            kp_symmap_put(&bigger, arena, map->keys[i], map->vals[i]);
    *map = bigger;
}

void kp_symmap_put(kp_symmap *map, kp_arena *arena, kp_sym key, uint32_t val)
{
    if ((map->count + 1) * 4 > map->cap * 3)
        symmap_grow(map, arena);
    uint32_t mask = map->cap - 1;
    for (uint32_t i = sym_hash(key) & mask;; i = (i + 1) & mask) {
        if (map->keys[i] == key) {
            map->vals[i] = val;
            return;
        }
        if (map->keys[i] == KP_SYM_NONE) {
            map->keys[i] = key;
            map->vals[i] = val;
            map->count++;
            return;
        }
    }
}

