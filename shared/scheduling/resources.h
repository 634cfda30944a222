/*
 * Dense resource vectors for the solver. Every resource name a snapshot
 * mentions (cpu, memory, pods, ephemeral-storage, nvidia.com/gpu, ...) gets a
 * small index in a per-snapshot table; amounts are int64 milli-units (the
 * same unit as kp_quantity), so fit checks are a few integer compares.
 */
#ifndef KP_SCHEDULING_RESOURCES_H
#define KP_SCHEDULING_RESOURCES_H

#include "api/quantity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { KP_RES_MAX = 16 };
enum { KP_RES_CPU = 0, KP_RES_MEMORY = 1, KP_RES_PODS = 2, KP_RES_EPHEMERAL = 3, KP_RES_FIXED = 4 };

typedef struct kp_resvec {
    int64_t v[KP_RES_MAX];
} kp_resvec;

/* Resource name <-> index. The first four are fixed. */
typedef struct kp_restab {
    uint32_t count;
    const char *names[KP_RES_MAX];
} kp_restab;

void kp_restab_init(kp_restab *tab);
/* NodePool limits and what is left of them: wider than a kp_resvec, because
 * Kubernetes accepts limits such as 10000000Gi (1.07e19 milli-units), and
 * they must hold exactly. */
typedef struct kp_limvec {
    kp_milli128 v[KP_RES_MAX];
} kp_limvec;

/* l -= r (r's entries are int64: they never take a limit out of range). */
static inline void kp_limvec_sub(kp_limvec *l, const kp_resvec *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        l->v[i] -= r->v[i];
}

static inline void kp_limvec_add(kp_limvec *l, const kp_resvec *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        l->v[i] += r->v[i];
}

/* Index of `name`, adding it if new; -1 (with an error set) when the table is full. */
int kp_restab_index(kp_restab *tab, const char *name);
/* Index of `name` or -1 when the table does not know it. */
int kp_restab_find(const kp_restab *tab, const char *name);

static inline void kp_resvec_zero(kp_resvec *r)
{
    for (int i = 0; i < KP_RES_MAX; i++)
        r->v[i] = 0;
}

/* a += b, saturating (resource sums never wrap). */
void kp_resvec_add(kp_resvec *a, const kp_resvec *b, uint32_t n);
/* a -= b, saturating. */
void kp_resvec_sub(kp_resvec *a, const kp_resvec *b, uint32_t n);
/* a = max(a, b) element-wise (inline: the solver's filter calls it per
 * instance type; the fixed resources unroll, as in kp_resvec_fits). */
static inline void kp_resvec_max(kp_resvec *a, const kp_resvec *b, uint32_t n)
{
    for (uint32_t i = 0; i < KP_RES_FIXED; i++)
        a->v[i] = b->v[i] > a->v[i] ? b->v[i] : a->v[i];
    for (uint32_t i = KP_RES_FIXED; i < n; i++)
        if (b->v[i] > a->v[i])
            a->v[i] = b->v[i];
}

/* a = min(a, b) element-wise. */
static inline void kp_resvec_min(kp_resvec *a, const kp_resvec *b, uint32_t n)
{
    for (uint32_t i = 0; i < KP_RES_FIXED; i++)
        a->v[i] = b->v[i] < a->v[i] ? b->v[i] : a->v[i];
    for (uint32_t i = KP_RES_FIXED; i < n; i++)
        if (b->v[i] < a->v[i])
            a->v[i] = b->v[i];
}

/* Every requested amount fits in `avail`. Resources with a zero request always fit.
 * The four fixed resources are compared unconditionally (a constant trip count
 * the compiler unrolls); entries past `n` are zero in every vector. */
static inline bool kp_resvec_fits(const kp_resvec *req, const kp_resvec *avail, uint32_t n)
{
    bool ok = (req->v[0] <= avail->v[0]) & (req->v[1] <= avail->v[1]) & (req->v[2] <= avail->v[2]) &
              (req->v[3] <= avail->v[3]);
    for (uint32_t i = KP_RES_FIXED; i < n && ok; i++)
        ok = req->v[i] <= avail->v[i];
    return ok;
}

/* Index of the first resource that does not fit, or -1. */
int kp_resvec_first_misfit(const kp_resvec *req, const kp_resvec *avail, uint32_t n);

/* "cpu: 1500m, memory: 2Gi, pods: 3" — non-zero entries, for messages (arena-free, into buf). */
char *kp_resvec_format(const kp_restab *tab, const kp_resvec *r, char *buf, size_t size);

#endif
