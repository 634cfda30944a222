#include "cloud/instance_types.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

kp_catalog *kp_catalog_new(const char *description)
{
    kp_catalog *c = kp_xcalloc(1, sizeof(*c));
    c->arena = kp_arena_new();
    c->description = kp_arena_strdup(c->arena, description ? description : "");
    return c;
}

kp_catalog *kp_catalog_free(kp_catalog *catalog)
{
    if (!catalog)
        return NULL;
    kp_arena_free(catalog->arena);
    free(catalog->types);
    free(catalog);
    return NULL;
}

/* Grow an arena array by doubling; old blocks stay in the arena until it is freed. */
#define GROW(arena, ptr, n, cap)                                                                   \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            size_t new_cap_ = (cap) ? (size_t)(cap) * 2 : 4;                                       \
            (ptr) = kp_arena_grow((arena), (ptr), (n), new_cap_, sizeof(*(ptr)));                  \
            (cap) = (__typeof__(cap))new_cap_;                                                     \
        }                                                                                          \
    } while (0)

kp_instance_type *kp_catalog_add_type(kp_catalog *catalog, const char *name)
{
    if (catalog->count == catalog->cap) {
        size_t cap = catalog->cap ? catalog->cap * 2 : 64;
        catalog->types = kp_xrealloc(catalog->types, cap * sizeof(*catalog->types));
        catalog->cap = cap;
    }
    kp_instance_type *it = &catalog->types[catalog->count++];
    memset(it, 0, sizeof(*it));
    it->name = kp_arena_strdup(catalog->arena, name);
    return it;
}

void kp_catalog_add_well_known(kp_catalog *catalog, const char *key)
{
    GROW(catalog->arena, catalog->well_known, catalog->n_well_known, catalog->cap_well_known);
    catalog->well_known[catalog->n_well_known++] = kp_arena_strdup(catalog->arena, key);
}

void kp_it_add_req(kp_catalog *catalog, kp_instance_type *it, const char *key,
                   enum kp_selector_op op, const char *const *values, uint32_t n_values)
{
    GROW(catalog->arena, it->reqs, it->n_reqs, it->cap_reqs);
    kp_it_requirement *r = &it->reqs[it->n_reqs++];
    r->key = kp_arena_strdup(catalog->arena, key);
    r->op = op;
    r->n_values = n_values;
    r->values = n_values ? KP_ARENA_NEW(catalog->arena, const char *, n_values) : NULL;
    for (uint32_t i = 0; i < n_values; i++)
        r->values[i] = kp_arena_strdup(catalog->arena, values[i]);
}

void kp_it_add_label(kp_catalog *catalog, kp_instance_type *it, const char *key, const char *value)
{
    kp_it_add_req(catalog, it, key, KP_OP_IN, &value, 1);
}

static void set_resource(kp_catalog *catalog, kp_it_resource **list, uint32_t *n, uint32_t *cap,
                         const char *resource, int64_t milli)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (strcmp((*list)[i].name, resource) == 0) {
            (*list)[i].milli = milli;
            return;
        }
    }
    GROW(catalog->arena, *list, *n, *cap);
    (*list)[*n].name = kp_arena_strdup(catalog->arena, resource);
    (*list)[*n].milli = milli;
    (*n)++;
}

void kp_it_set_capacity(kp_catalog *catalog, kp_instance_type *it, const char *resource, int64_t milli)
{
    set_resource(catalog, &it->capacity, &it->n_capacity, &it->cap_capacity, resource, milli);
}

void kp_it_set_overhead(kp_catalog *catalog, kp_instance_type *it, const char *resource, int64_t milli)
{
    set_resource(catalog, &it->overhead, &it->n_overhead, &it->cap_overhead, resource, milli);
}

void kp_it_add_offering(kp_catalog *catalog, kp_instance_type *it, const char *zone,
                        const char *capacity_type, double price, bool available)
{
    GROW(catalog->arena, it->offerings, it->n_offerings, it->cap_offerings);
    kp_offering *o = &it->offerings[it->n_offerings++];
    o->zone = kp_arena_strdup(catalog->arena, zone);
    o->capacity_type = kp_arena_strdup(catalog->arena, capacity_type);
    o->reservation_id = NULL;
    o->reservation_capacity = 0;
    o->price = price;
    o->available = available;
}

const kp_instance_type *kp_catalog_find(const kp_catalog *catalog, const char *name)
{
    for (size_t i = 0; i < catalog->count; i++)
        if (strcmp(catalog->types[i].name, name) == 0)
            return &catalog->types[i];
    return NULL;
}

static int64_t lookup(const kp_it_resource *list, uint32_t n, const char *resource)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(list[i].name, resource) == 0)
            return list[i].milli;
    return 0;
}

int64_t kp_it_capacity(const kp_instance_type *it, const char *resource)
{
    return lookup(it->capacity, it->n_capacity, resource);
}

int64_t kp_it_overhead(const kp_instance_type *it, const char *resource)
{
    return lookup(it->overhead, it->n_overhead, resource);
}
