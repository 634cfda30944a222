/*
 * Effective pod requests (see pod_requests.h). Resource lists here are tiny
 * (a handful of names), so the accumulator is a sorted array with insertion.
 */
#include "api/pod_requests.h"

#include <string.h>

typedef struct acc {
    kp_arena *arena;
    kp_resource *items;
    size_t count;
    size_t cap;
} acc;

static void acc_init(acc *a, kp_arena *arena)
{
    memset(a, 0, sizeof(*a));
    a->arena = arena;
}

/* The entry for `name`, inserted (zero, sorted) when missing; *fresh says so. */
static kp_resource *acc_slot(acc *a, const char *name, bool *fresh)
{
    size_t lo = 0, hi = a->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(a->items[mid].name, name);
        if (c == 0) {
            *fresh = false;
            return &a->items[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (a->count == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        a->items = kp_arena_grow(a->arena, a->items, a->count, cap, sizeof(kp_resource));
        a->cap = cap;
    }
    memmove(&a->items[lo + 1], &a->items[lo], (a->count - lo) * sizeof(kp_resource));
    a->count++;
    a->items[lo].name = name;
    a->items[lo].quantity = kp_quantity_from_milli(0, KP_QUANTITY_DECIMAL_SI);
    *fresh = true;
    return &a->items[lo];
}

static int acc_add(acc *a, const char *name, kp_quantity q)
{
    bool fresh;
    kp_resource *r = acc_slot(a, name, &fresh);
    if (fresh) {
        r->quantity = q;
        return 0;
    }
    return kp_quantity_add(r->quantity, q, &r->quantity);
}

static void acc_max(acc *a, const char *name, kp_quantity q)
{
    bool fresh;
    kp_resource *r = acc_slot(a, name, &fresh);
    if (fresh || kp_quantity_cmp(q, r->quantity) > 0) r->quantity = q;
}

static void acc_set(acc *a, const char *name, kp_quantity q)
{
    bool fresh;
    acc_slot(a, name, &fresh)->quantity = q;
}

static int acc_add_all(acc *a, const kp_resource *items, size_t n)
{
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++)
        err = acc_add(a, items[i].name, items[i].quantity);
    return err;
}

static void acc_max_all(acc *a, const acc *other)
{
    for (size_t i = 0; i < other->count; i++)
        acc_max(a, other->items[i].name, other->items[i].quantity);
}

static void acc_copy(acc *dst, const acc *src)
{
    acc_init(dst, src->arena);
    for (size_t i = 0; i < src->count; i++)
        acc_set(dst, src->items[i].name, src->items[i].quantity);
}

static kp_resource_list acc_list(const acc *a)
{
    return (kp_resource_list){a->count ? a->items : NULL, a->count};
}

/* Requests, then each limit whose resource has no request. */
static void spec_effective(acc *a, const kp_container *c)
{
    for (size_t i = 0; i < c->requests.count; i++)
        acc_set(a, c->requests.items[i].name, c->requests.items[i].quantity);
    for (size_t i = 0; i < c->limits.count; i++) {
        if (!kp_resource_list_get(&c->requests, c->limits.items[i].name))
            acc_set(a, c->limits.items[i].name, c->limits.items[i].quantity);
    }
}

static void max_list(acc *a, const kp_resource_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        acc_max(a, l->items[i].name, l->items[i].quantity);
}

/* In-place resize (the scheduler's UseStatusResources, which Karpenter's
 * Ceiling uses): while a resize is in progress the kubelet may hold more
 * than the spec asks, so a container with a status counts the most of the
 * spec, what it runs with and what is allocated; a resize the kubelet
 * cannot do leaves the spec out, since it will not be applied. */
static void container_effective(acc *a, const kp_container *c, bool resize_infeasible)
{
    if (!c->has_status || !resize_infeasible) spec_effective(a, c);
    if (c->has_status) {
        max_list(a, &c->status_requests);
        max_list(a, &c->allocated);
    }
}

int kp_container_requests(kp_arena *arena, const kp_container *container, kp_resource_list *out)
{
    acc a;
    acc_init(&a, arena);
    spec_effective(&a, container);
    *out = acc_list(&a);
    return 0;
}

static int add_container(acc *sum, const kp_container *c, bool resize_infeasible)
{
    acc e;
    acc_init(&e, sum->arena);
    container_effective(&e, c, resize_infeasible);
    return acc_add_all(sum, e.items, e.count);
}

/* The init containers' phase: sidecars add to `sum` and keep running; each
 * other init container needs itself plus the sidecars started before it. */
static int add_init_containers(acc *sum, const kp_pod *pod)
{
    acc sidecars, peak;
    int err = 0;
    acc_init(&sidecars, sum->arena);
    acc_init(&peak, sum->arena);
    for (size_t i = 0; i < pod->n_init_containers && err == 0; i++) {
        const kp_container *c = &pod->init_containers[i];
        acc use;
        if (c->restart_always) {
            if ((err = add_container(sum, c, pod->resize_infeasible)) < 0 ||
                (err = add_container(&sidecars, c, pod->resize_infeasible)) < 0)
                break;
            acc_copy(&use, &sidecars);
        } else {
            acc_copy(&use, &sidecars);
            err = add_container(&use, c, pod->resize_infeasible);
        }
        acc_max_all(&peak, &use);
    }
    if (err == 0) acc_max_all(sum, &peak);
    return err;
}

static bool pod_level_supported(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
           strncmp(name, "hugepages-", 10) == 0;
}

/* Pod-level requests replace the container sum; pod-level limits stand in
 * where no request exists (hugepages are not overcommitted, so a limit
 * there wins over the containers' sum too). */
static void apply_pod_level(acc *sum, const kp_pod *pod)
{
    const kp_resource_list *reqs = &pod->pod_level_requests, *lims = &pod->pod_level_limits;
    for (size_t i = 0; i < lims->count; i++) {
        const char *name = lims->items[i].name;
        bool fresh;
        if (!pod_level_supported(name) || kp_resource_list_get(reqs, name)) continue;
        kp_resource *r = acc_slot(sum, name, &fresh);
        if (fresh || strncmp(name, "hugepages-", 10) == 0) r->quantity = lims->items[i].quantity;
    }
    for (size_t i = 0; i < reqs->count; i++) {
        if (pod_level_supported(reqs->items[i].name))
            acc_set(sum, reqs->items[i].name, reqs->items[i].quantity);
    }
}

int kp_pod_requests(kp_arena *arena, const kp_pod *pod, kp_resource_list *out)
{
    acc sum;
    int err = 0;
    acc_init(&sum, arena);
    for (size_t i = 0; i < pod->n_containers && err == 0; i++)
        err = add_container(&sum, &pod->containers[i], pod->resize_infeasible);
    if (err == 0) err = add_init_containers(&sum, pod);
    if (err == 0) {
        apply_pod_level(&sum, pod);
        err = acc_add_all(&sum, pod->overhead.items, pod->overhead.count);
    }
    if (err == 0) *out = acc_list(&sum);
    return err;
}
