/*
 * The store's insides, shared by overlay.c (evaluation) and overlay_apply.c
 * (applying a store to a catalog); not an interface for other modules.
 */
#ifndef KP_CLOUD_OVERLAY_INTERNAL_H
#define KP_CLOUD_OVERLAY_INTERNAL_H

#include "api/nodeoverlay.h"
#include "cloud/overlay.h"

#include <stdatomic.h>

/* An offering's new price. `weight` is Karpenter's lowestWeight: the
 * lightest overlay that selected the offering so far (the next one conflicts
 * when it weighs the same). */
typedef struct ov_price {
    const char *zone, *capacity_type, *reservation_id; /* "" when none */
    kp_price_change change;
    int32_t weight;
    const char *last; /* the overlay that weighed `weight` (messages) */
} ov_price;

typedef struct ov_resource {
    const char *name;
    int64_t milli;
} ov_resource;

typedef struct ov_type {
    const char *name;
    ov_price *prices;
    uint32_t n_prices, cap_prices;
    ov_resource *capacity; /* merged: the heaviest overlay's amount per resource */
    uint32_t n_capacity, cap_capacity;
    /* The lightest capacity overlay so far, its weight and resources
     * (evaluation only: the resources point into the input overlay). */
    bool has_capacity;
    int32_t capacity_weight;
    const kp_resource_list *capacity_last;
    const char *capacity_owner;
} ov_type;

typedef struct ov_pool {
    const char *name;
    bool evaluated;
    ov_type *types; /* sorted by name */
    uint32_t n_types;
} ov_pool;

struct kp_overlay_store {
    atomic_int refs;
    kp_arena *arena;
    ov_pool *pools; /* sorted by name */
    size_t n_pools;
    kp_overlay_verdict *verdicts;
    size_t n_verdicts;
};

/* "" for NULL, for the offering keys. */
static inline const char *ov_str(const char *s)
{
    return s ? s : "";
}

/* The new price of offering `of` (its zone, capacity type and reservation),
 * or NULL (overlay_apply.c). */
ov_price *ov_price_find(const ov_type *u, const kp_offering *of);

#endif
