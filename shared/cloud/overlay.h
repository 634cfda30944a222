/*
 * NodeOverlays applied to instance types, as Karpenter's nodeoverlay store
 * does it: overlays are evaluated together against every NodePool's instance
 * types, and what they change is kept per NodePool, instance type and
 * offering, to be applied to the catalogs the cloud provider hands out (AWS,
 * kwok, a file) before solving and consolidating.
 *
 * Evaluation (kp_overlay_evaluate), in Karpenter's order (weight, then the
 * later name first):
 *   - an overlay that failed validation is not applied (RuntimeValidation);
 *   - it selects an instance type of a NodePool when its requirements are
 *     compatible with the type's requirements plus the NodePool's name and
 *     template labels, and an offering (zone, capacity type, reservation)
 *     when they are compatible with the offering's; capacity goes to every
 *     type with a selected offering, prices to the selected offerings only;
 *   - an overlay whose change meets one of an overlay of the same weight
 *     already applied (the same offering's price, or the same resource of the
 *     same type) conflicts and is applied nowhere (Conflict); a heavier one
 *     already applied simply wins.
 *
 * A store is immutable once evaluated and reference counted, so readers on
 * several threads may apply it while the controller publishes the next one.
 */
#ifndef KP_CLOUD_OVERLAY_H
#define KP_CLOUD_OVERLAY_H

#include "api/objects.h"
#include "cloud/instance_types.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kp_overlay_store kp_overlay_store;

enum kp_overlay_outcome {
    KP_OVERLAY_APPLIED = 0,
    KP_OVERLAY_INVALID,  /* reason RuntimeValidation */
    KP_OVERLAY_CONFLICT, /* reason Conflict */
};

/* Karpenter's condition reasons and message. */
#define KP_OVERLAY_REASON_INVALID "RuntimeValidation"
#define KP_OVERLAY_REASON_CONFLICT "Conflict"
#define KP_OVERLAY_CONFLICT_MESSAGE "conflict with another overlay"

typedef struct kp_overlay_verdict {
    const char *name;
    enum kp_overlay_outcome outcome;
    /* INVALID: the validation errors; CONFLICT: Karpenter's message and, after
     * a colon, the overlay it met and where; APPLIED: "". */
    const char *message;
    uint32_t n_types; /* (NodePool, instance type) pairs it changes */
} kp_overlay_verdict;

/* A NodePool and its instance types now; `catalog` NULL when the provider
 * could not say (the NodePool then stays unevaluated). */
typedef struct kp_overlay_pool {
    const kp_nodepool *pool;
    const kp_catalog *catalog;
} kp_overlay_pool;

/* Evaluate `overlays` (any order) against `pools`. The store copies what it
 * keeps: inputs may go once this returns. */
int kp_overlay_evaluate(const kp_nodeoverlay *const *overlays, size_t n_overlays, const kp_overlay_pool *pools,
                        size_t n_pools, kp_overlay_store **out);

/* The verdicts, one per overlay, in the order they were evaluated. */
size_t kp_overlay_store_verdicts(const kp_overlay_store *store, const kp_overlay_verdict **out);

/* The NodePool's instance types with the store's changes applied to `base`
 * (its catalog now, possibly newer than the one evaluated: changes follow
 * type names and offering zone, capacity type and reservation). *out is a new
 * catalog the caller frees, which borrows from `base` (free it first), or NULL
 * when nothing in `base` changes. KP_ENOTREADY when the NodePool was not
 * evaluated (Karpenter: awaiting evaluation, it is skipped). */
int kp_overlay_store_apply(const kp_overlay_store *store, const char *pool, const kp_catalog *base,
                           kp_catalog **out);

/* The catalogs one plan uses: each NodePool's, applied once and kept until
 * the set is freed (after the snapshot that reads them). Not thread-safe:
 * one per plan. */
typedef struct kp_overlay_catalogs kp_overlay_catalogs;

/* `store` (a reference is taken; NULL: nothing evaluated yet, every NodePool
 * awaits evaluation); `base` the catalog kp_overlay_catalogs_cluster_fn
 * applies it to. */
kp_overlay_catalogs *kp_overlay_catalogs_new(kp_overlay_store *store, const kp_catalog *base);
kp_overlay_catalogs *kp_overlay_catalogs_free(kp_overlay_catalogs *set);

/* NodePool `np`'s catalog: `base` with the store applied, or `base` itself
 * when nothing changes; NULL when `np` awaits evaluation (Karpenter skips
 * such a NodePool). The same NodePool gets the same catalog each time. */
const kp_catalog *kp_overlay_catalogs_get(kp_overlay_catalogs *set, const kp_nodepool *np,
                                          const kp_catalog *base);

/* The store the set applies (NULL when there is none). */
const kp_overlay_store *kp_overlay_catalogs_store(const kp_overlay_catalogs *set);

/* One line about a verdict, into buf: "NodeOverlay NAME: applied to N
 * instance types" or "NodeOverlay NAME: not applied (REASON): MESSAGE". */
const char *kp_overlay_verdict_text(const kp_overlay_verdict *v, char *buf, size_t size);

/* kp_cluster's catalog_for (scheduling/snapshot_build.h) over the set's base. */
const kp_catalog *kp_overlay_catalogs_cluster_fn(void *set, const kp_nodepool *np);

kp_overlay_store *kp_overlay_store_ref(kp_overlay_store *store);
/* Drop a reference; the last frees. Returns NULL. */
kp_overlay_store *kp_overlay_store_unref(kp_overlay_store *store);

#endif
