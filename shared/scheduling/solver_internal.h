/*
 * Internals shared by the solver's files (solver.c, topology.c, claim.c,
 * existing.c, podstate.c, finalize.c). Not part of the library interface.
 */
#ifndef KP_SCHEDULING_SOLVER_INTERNAL_H
#define KP_SCHEDULING_SOLVER_INTERNAL_H

#include "scheduling/solver.h"
#include "scheduling/symmap.h"

#include <stdbool.h>
#include <stdint.h>

/* --- topology --- */
enum tg_type { TG_SPREAD = 0, TG_AFFINITY, TG_ANTI };

typedef struct tgroup {
    enum tg_type type;
    kp_sym key;
    int32_t max_skew;
    int32_t min_domains;
    const kp_sym *namespaces;
    uint32_t n_namespaces;
    const kp_selector *selector;
    /* node filter: spread constraints only */
    bool has_filter;
    bool honor_affinity;
    bool honor_taints;
    const kp_requirements *filter_terms; /* OR; each includes the pod's nodeSelector */
    uint32_t n_filter_terms;
    const kp_toleration *filter_tols;
    uint32_t n_filter_tols;
    /* domains: known ones, with the count of selected pods in each */
    kp_symmap index;
    kp_sym *domains;
    int32_t *counts;
    uint32_t n_domains, cap_domains;
    uint32_t n_nonempty;
    const char *canon; /* identity, for de-duplication */
    uint64_t hash;
} tgroup;

/* Every value a topology key can take, with the NodePools (by taints) that offer it. */
typedef struct domain_entry {
    kp_sym domain;
    bool untainted;            /* some NodePool without taints offers it */
    uint32_t *templates;       /* NodePools with taints that offer it */
    uint32_t n_templates, cap_templates;
} domain_entry;

typedef struct domain_group {
    kp_sym key;
    domain_entry *entries;
    uint32_t n, cap;
} domain_group;

typedef struct topology {
    tgroup *groups;
    uint32_t n_groups, cap_groups;
    tgroup *inverse;
    uint32_t n_inverse, cap_inverse;
    domain_group *dgroups;
    uint32_t n_dgroups, cap_dgroups;
} topology;

/* --- per pending pod --- */
typedef struct podstate {
    uint32_t pod;      /* snapshot index */
    uint32_t req_term; /* required node affinity term in use */
    uint32_t pref_node_removed;
    uint32_t pref_aff_removed;
    uint32_t pref_anti_removed;
    uint64_t spreads_removed; /* bit i: ScheduleAnyway spread i relaxed away */
    bool tolerate_pns;        /* tolerate PreferNoSchedule taints */
    kp_requirements reqs;     /* with preferences treated as required */
    kp_requirements strict;   /* required constraints only */
    uint32_t *groups;         /* topology groups this pod owns */
    uint32_t n_groups, cap_groups;
    uint32_t *inverse;        /* inverse anti-affinity groups this pod owns */
    uint32_t n_inverse, cap_inverse;
    uint32_t queue_mark;      /* queue length when last pushed back (staleness) */
    bool requeued;
    bool in_batch;
    const char *error;
} podstate;

/* --- DaemonSet overhead, grouped by the set of daemons that land on a type --- */
typedef struct dgroup {
    kp_resvec overhead;
    const kp_host_port *ports;
    uint32_t n_ports;
} dgroup;

typedef struct tstate { /* per template */
    dgroup *dgroups;
    uint32_t n_dgroups;
    int32_t *group_of; /* per snapshot instance type: its daemon group, or -1 */
    kp_resvec *room;   /* per snapshot instance type: allocatable minus its daemon overhead */
    kp_resvec remaining; /* limits left, where limited */
    int64_t nodes_remaining;
    const uint32_t *its; /* the template's instance types, cheapest first */
    uint32_t n_its;
} tstate;

/* --- a NodeClaim being planned --- */
typedef struct claim {
    uint32_t tmpl;
    kp_sym hostname;
    kp_requirements reqs;
    kp_resvec requests; /* pods only */
    uint32_t *its;      /* remaining options, cheapest first */
    uint32_t n_its;
    kp_resvec max_avail; /* max over its of allocatable minus daemon overhead */
    uint32_t *pods;
    uint32_t n_pods, cap_pods;
} claim;

/* --- an existing node (or in-flight NodeClaim) --- */
typedef struct enode {
    uint32_t node;
    const kp_snode *sn;
    kp_requirements reqs;
    kp_resvec remaining;
    uint32_t *pods;     /* pods planned onto it */
    uint32_t n_pods, cap_pods;
    uint32_t *bound;    /* pods already running there */
    uint32_t n_bound;
} enode;

/* Derived from NodePools, instance types and DaemonSets only: built on the
 * first solve of a snapshot and shared by later ones (kp_snapshot.solver_cache). */
/* What a node contributes to every solve, whatever the pods do: its labels as
 * requirements, and the requests of the DaemonSets that would run on it. */
typedef struct node_static {
    kp_requirements reqs;
    kp_resvec daemon_want;
} node_static;

typedef struct solver_cache {
    kp_arena *arena;
    node_static *nodes; /* the snapshot's first n_nodes nodes */
    uint32_t n_nodes, cap_nodes;
    tstate *ts; /* limits not applied */
    kp_symmap it_keys;
    bool tolerate_pns_available;
    domain_group *dgroups;
    uint32_t n_dgroups;
} solver_cache;

typedef struct solver {
    kp_snapshot *snap;
    const kp_solve_opts *opts;
    kp_arena *arena;   /* lives as long as the plan */
    kp_arena *scratch; /* rewound after every attempt */
    kp_symtab *symtab;
    uint32_t n_res;
    topology topo;
    podstate *ps;       /* one per pending pod */
    uint32_t n_ps;
    int32_t *ps_of_pod; /* snapshot pod -> podstate index, or -1 */
    tstate *ts;         /* one per template */
    claim *claims;
    uint32_t n_claims, cap_claims;
    enode *enodes;
    uint32_t n_enodes;
    bool tolerate_pns_available; /* some NodePool has a PreferNoSchedule taint */
    uint32_t next_hostname;
    kp_symmap it_keys; /* label keys some instance type defines */
} solver;

/* podstate.c */
void ps_build_requirements(solver *s, podstate *st);
bool ps_relax(solver *s, podstate *st);
void ps_reset(solver *s, podstate *st);
bool ps_tolerates(const solver *s, const podstate *st, const kp_taint *taints, uint32_t n,
                  long *first_bad);
bool ps_spread_active(const podstate *st, uint32_t i);

/* topology.c */
void topo_build_universe(solver *s);
int topo_build(solver *s);
void topo_update(solver *s, podstate *st);
bool topo_add_requirements(solver *s, const podstate *st, const kp_requirements *node_reqs,
                           kp_requirements *domains, const char **why);
void topo_record(solver *s, const podstate *st, const kp_taint *taints, uint32_t n_taints,
                 const kp_requirements *reqs, unsigned compat);
void topo_register(solver *s, kp_sym key, kp_sym domain);
bool topo_filter_matches(solver *s, const tgroup *g, const kp_taint *taints, uint32_t n_taints,
                         const kp_requirements *reqs, unsigned compat);
bool topo_quick_rejects(solver *s, const podstate *st, const kp_requirements *node_reqs);
bool topo_blocks_every_node(solver *s, const podstate *st);

/* template_state.c */
int cache_ensure(solver *s);

/* claim.c */
bool min_values_ok(solver *s, const kp_requirements *reqs, const uint32_t *its, uint32_t n);
int claims_init(solver *s);
bool claim_try(solver *s, claim *c, podstate *st, bool fresh, const char **why);
bool claim_new(solver *s, uint32_t tmpl, podstate *st, const char **why);

/* existing.c */
int enodes_init(solver *s);
bool enode_try(solver *s, enode *e, podstate *st);

/* improve.c */
void improve_plan(solver *s);

/* finalize.c */
kp_plan *plan_new(solver *s);
int plan_finalize(solver *s, kp_plan *plan);

/* shared helpers */
kp_requirement req_single(kp_arena *arena, kp_sym key, kp_sym value);
kp_requirement req_none(kp_sym key);
bool ports_conflict(const kp_host_port *a, uint32_t na, const kp_host_port *b, uint32_t nb);
const char *conflict_text(solver *s, const kp_requirements *node, const kp_requirements_conflict *c);
void reqs_persist(kp_requirements *dst, kp_arena *arena, const kp_requirements *src);
bool daemon_term_matches(solver *s, const kp_spod *d, const kp_requirements *node, unsigned flags,
                         const kp_requirements *it_reqs);
bool offering_allowed(const solver *s, const kp_requirements *reqs, const kp_soffering *o);
bool reqs_equal(const kp_requirements *a, const kp_requirements *b);
double cheapest_price(const solver *s, const kp_requirements *reqs, const kp_sit *it);
double cheapest_price_in(const solver *s, const kp_requirement *zone, const kp_requirement *ct,
                         const kp_sit *it);
void sort_its_by_price(solver *s, const kp_requirements *reqs, uint32_t *its, uint32_t n);

#endif
