/*
 * A cluster snapshot: everything the solver and the disruption planner read,
 * compiled into the solver's model (model.h). It owns an arena and a symbol
 * table. Built by snapshot_build.c from decoded objects (simulate, the
 * controller's informer cache) or directly by tests and benchmarks.
 */
#ifndef KP_SCHEDULING_SNAPSHOT_H
#define KP_SCHEDULING_SNAPSHOT_H

#include "scheduling/model.h"
#include "base/arena.h"

typedef struct kp_snapshot {
    kp_arena *arena;
    kp_symtab *symtab;
    kp_restab restab;

    kp_spod *pods; /* pending and bound */
    uint32_t n_pods, cap_pods;
    kp_snode *nodes;
    uint32_t n_nodes, cap_nodes;
    kp_template *templates; /* by weight, heaviest first, then the later name first */
    uint32_t n_templates, cap_templates;
    kp_sit *its;
    uint32_t n_its, cap_its;
    kp_spod *daemons; /* one pod template per DaemonSet */
    uint32_t n_daemons, cap_daemons;
    const kp_pdb *const *pdbs; /* borrowed from the builder's input */
    uint32_t n_pdbs;
    /* What the solver derives from NodePools, instance types and DaemonSets
     * alone (price order, DaemonSet overhead groups, topology domains), kept
     * across solves of the same snapshot; adding any of those drops it. */
    void *solver_cache;
    void (*solver_cache_free)(void *cache);
} kp_snapshot;

/* Drop the solver's cached derivations (done by every add that changes them). */
void kp_snapshot_invalidate(kp_snapshot *snapshot);

kp_snapshot *kp_snapshot_new(void);
kp_snapshot *kp_snapshot_free(kp_snapshot *snapshot);

/* Slots to fill (zeroed; the caller sets the fields). Pointers stay valid
 * only until the next add of the same kind. */
kp_spod *kp_snapshot_add_pod(kp_snapshot *snapshot);
kp_snode *kp_snapshot_add_node(kp_snapshot *snapshot);
kp_template *kp_snapshot_add_template(kp_snapshot *snapshot);
kp_spod *kp_snapshot_add_daemon(kp_snapshot *snapshot);

/* Compile a catalog's instance types into the snapshot; returns the index of
 * the first one added (they are contiguous) or a negative error. The catalog
 * must outlive the snapshot. */
int kp_snapshot_add_catalog(kp_snapshot *snapshot, const kp_catalog *catalog);

/* Put templates in Karpenter's order (weight, then the later name first); call once after adding them. */
void kp_snapshot_sort_templates(kp_snapshot *snapshot);

/* Give template `t` every instance type in [first, first+count) whose
 * requirements intersect the template's (Karpenter's pre-filter). */
void kp_snapshot_template_use_its(kp_snapshot *snapshot, uint32_t t, uint32_t first, uint32_t count);

/* Helpers for builders: interned label sets and selectors from strings. */
kp_symlabels kp_snapshot_labels(kp_snapshot *snapshot, const char *const *keys,
                                const char *const *values, uint32_t count);

#endif
