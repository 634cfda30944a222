/*
 * Internals shared by the solver's files (solver.c, topology.c, claim.c,
 * existing.c, podstate.c, finalize.c). Not part of the library interface.
 */
#ifndef KP_SCHEDULING_SOLVER_INTERNAL_H
#define KP_SCHEDULING_SOLVER_INTERNAL_H

#include "scheduling/solver.h"
#include "scheduling/symmap.h"

#include <stdbool.h>
#include <stddef.h>
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
    uint64_t hash; /* of the fields that make its identity */
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

/* A hash table of indices into some array (solver_util.c). */
typedef struct idx_slot {
    uint64_t hash;
    uint32_t idx; /* UINT32_MAX when empty */
} idx_slot;

typedef struct idx_table {
    idx_slot *slots;
    uint32_t cap, count;
} idx_table;

void idx_table_put(kp_arena *arena, idx_table *t, uint64_t hash, uint32_t idx);
/* The first index with this hash that `equal` accepts, or UINT32_MAX. */
uint32_t idx_table_find(const idx_table *t, uint64_t hash, bool (*equal)(const void *ctx, uint32_t idx),
                        const void *ctx);

typedef struct topology {
    idx_table tables[2]; /* groups, inverse */
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
    kp_limvec remaining; /* limits left, where limited */
    int64_t nodes_remaining;
    const uint32_t *its; /* the template's instance types, cheapest first */
    uint32_t n_its;
    kp_resvec largest;   /* the largest capacity among them */
    bool exhausted;      /* no type fits in what is left of the limits (for the rest of the queue) */
    const char *limits_text; /* the message saying so, once made */
} tstate;

/* --- a NodeClaim being planned --- */
typedef struct claim {
    uint32_t tmpl;
    kp_sym hostname;
    kp_requirements reqs;
    kp_resvec requests; /* pods only */
    uint32_t *its;      /* remaining options, cheapest first */
    uint32_t n_its;
    kp_resvec max_avail; /* >= max over its of allocatable minus daemon overhead */
    uint32_t witness;    /* an option known to hold the requests (see claims_settle) */
    kp_resvec charged;   /* the largest capacity among its first options: its share of the limits */
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
    const uint32_t *bound; /* pods already running there */
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
    uint32_t *order;    /* those nodes in the order they are tried (node_try_order) */
    tstate *ts; /* limits not applied */
    kp_symmap it_keys;
    bool tolerate_pns_available;
    domain_group *dgroups;
    uint32_t n_dgroups;
} solver_cache;

/* --- where a pod may go (place_index.c) --- */
typedef struct place_index place_index;

typedef struct pbits { /* a bitset over places, with one summary bit per word */
    uint64_t *w, *sum;
} pbits;

typedef struct place_term { /* OR of up to 8 bitsets, maybe negated */
    const pbits *any[8];
    uint32_t n;
    bool negate;
} place_term;

typedef struct place_query {
    place_index *ix;
    place_term terms[32]; /* ANDed */
    uint32_t n_terms;
    bool empty;
    uint32_t level, word;
    uint64_t pending;
} place_query;

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
    kp_arena *work;          /* what only the solve needs (indexes, memos); freed with it */
    struct type_memo *memo;  /* claim.c: instance-type verdicts by requirements */
    place_index *claim_ix;   /* planned NodeClaims; NULL for the plain scan */
    place_index *node_ix;    /* existing nodes; NULL for the plain scan */
    struct caps_state *caps; /* caps.c; NULL when no cap applies */
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

/* The condition a hostname topology group puts on a place's count (or one of these). */
enum { TOPO_HOST_ANY = -1, TOPO_HOST_SOME = -2, TOPO_HOST_NONE = -3 };
bool topo_selects(const tgroup *g, const kp_spod *p);
void topo_count_changed(solver *s, const tgroup *g, kp_sym domain); /* keeps the place indexes right */
int32_t topo_host_need(solver *s, const podstate *st, const tgroup *g);
uint32_t topo_pod_keys(solver *s, const podstate *st, kp_sym *keys, uint32_t max);
void topo_pinned_verdicts(solver *s, const podstate *st, kp_sym key, const kp_sym *values, uint32_t n, bool *ok);

/* place_index.c: `levelled` orders places by pod count (NodeClaims); capacity is fixed. */
place_index *place_index_new(kp_arena *arena, bool levelled, uint32_t capacity, uint32_t n_templates);
void place_index_add(const solver *s, place_index *ix, uint32_t slot, uint32_t level, uint32_t tmpl);
void place_index_changed(const solver *s, place_index *ix, uint32_t slot, uint32_t level);
void place_index_count_changed(const solver *s, place_index *ix, const tgroup *g, kp_sym host);
void place_query_init(solver *s, place_index *ix, const podstate *st, place_query *q);
int64_t place_query_next(place_query *q); /* the next candidate in order, or -1 */

/* template_state.c */
int cache_ensure(solver *s);

/* claim.c */
bool min_values_ok(solver *s, const kp_requirements *reqs, const uint32_t *its, uint32_t n);
/* Per template, what its requirements leave (enum kp_template_types), in
 * s->arena; call after claims_init. */
const uint8_t *templates_types(solver *s);
int claims_init(solver *s);
bool claim_try(solver *s, claim *c, podstate *st, bool fresh, const char **why);
bool claim_new(solver *s, uint32_t tmpl, podstate *st, const char **why);
/* Options are dropped lazily while only resources narrow them; this drops
 * the rest once the pods are placed. */
void claims_settle(solver *s);

/* caps.c (scheduling/caps.h): what is left of the caps, per solve */
int caps_init(solver *s);
/* Whether NodePool tmpl may add a NodeClaim (the node cap, a bad annotation). */
bool caps_node_allowed(solver *s, uint32_t tmpl, const char **why);
/* Keep the options whose capacity fits in what is left of the cores and
 * memory caps; *note (when asked) names the caps that removed some. */
uint32_t caps_filter(solver *s, uint32_t tmpl, uint32_t *its, uint32_t n, const char **note);
/* The same for the dollar caps, with the options' worst launch price under
 * `reqs` (a new claim's, its first pod's included). */
uint32_t caps_cost_filter(solver *s, uint32_t tmpl, const kp_requirements *reqs, uint32_t *its, uint32_t n,
                          const char **note);
void caps_charge(solver *s, const claim *c);
/* Whether a cap applies to NodePool tmpl's NodeClaims. */
bool caps_bind(const solver *s, uint32_t tmpl);

/* existing.c */
int enodes_init(solver *s);
/* The caller's kp_solve_base when it fits the snapshot, else NULL. */
const kp_solve_base *solve_base(const solver *s);
/* <0, 0, >0: node a is tried before, as, after node b. */
int node_try_order(const kp_snapshot *snap, uint32_t a, uint32_t b);
bool enode_try(solver *s, enode *e, podstate *st);
/* The pod's CSI volumes stay within the node's attach limits (volume_limits.c). */
bool volumes_fit(solver *s, const enode *e, const kp_spod *p);
/* Keep the options of NodeClaim `c` whose instance type can attach the EBS
 * volumes of its pods and `p` (*need of them); returns how many are left. */
uint32_t volumes_keep_types(solver *s, const claim *c, const kp_spod *p, uint32_t *its, uint32_t n,
                            uint32_t *need);

/* type_memo.c: bit i set when snapshot instance type i (one of NodePool
 * tmpl's) meets `reqs` on the keys types define and has an available offering
 * in its zones and capacity types; NULL when the memo is full. */
const uint64_t *type_verdicts(solver *s, uint32_t tmpl, const kp_requirements *reqs);

/* type_memo.c: the options a new NodeClaim of NodePool tmpl keeps for a
 * first pod, by the requirements on keys types define and the requests (for
 * pods without host ports, when no limit narrows the NodePool's types). */
typedef struct fresh_options {
    const uint32_t *its;
    uint32_t n;
    kp_resvec max, charge;
    uint32_t witness;
} fresh_options;
const fresh_options *fresh_find(solver *s, uint32_t tmpl, const kp_requirements *reqs, const kp_resvec *requests);
void fresh_put(solver *s, uint32_t tmpl, const kp_requirements *reqs, const kp_resvec *requests,
               const fresh_options *options);

/* improve.c */
void improve_plan(solver *s);

/* finalize.c */
kp_plan *plan_new(solver *s);
int plan_finalize(solver *s, kp_plan *plan);

/* shared helpers */
typedef struct fnv { /* FNV-1a, for identities built from fields */
    uint64_t h;
} fnv;
#define FNV_INIT {1469598103934665603ull}
void fnv_bytes(fnv *f, const void *data, size_t n);
void fnv_u64(fnv *f, uint64_t v);
void fnv_str(fnv *f, const char *str);
void fnv_requirements(fnv *f, const kp_requirements *r);
kp_requirement req_single(kp_arena *arena, kp_sym key, kp_sym value);
kp_requirement req_none(kp_sym key);
bool ports_conflict(const kp_host_port *a, uint32_t na, const kp_host_port *b, uint32_t nb);
const char *conflict_text(solver *s, const kp_requirements *node, const kp_requirements_conflict *c);
void reqs_persist(kp_requirements *dst, kp_arena *arena, const kp_requirements *src);
bool daemon_term_matches(solver *s, const kp_spod *d, const kp_requirements *node, unsigned flags,
                         const kp_requirements *it_reqs);
/* An available offering in the zones and capacity types some requirements allow. */
typedef struct offer_filter {
    const kp_requirement *zone, *ct;
} offer_filter;
offer_filter offer_filter_of(const kp_requirements *reqs);
bool offer_ok(const solver *s, const offer_filter *f, const kp_soffering *o);
bool reqs_equal(const kp_requirements *a, const kp_requirements *b);
double cheapest_price(const solver *s, const kp_requirements *reqs, const kp_sit *it);
double cheapest_price_in(const solver *s, const kp_requirement *zone, const kp_requirement *ct,
                         const kp_sit *it);
void sort_its_by_price(solver *s, const kp_requirements *reqs, uint32_t *its, uint32_t n);

/* reservations.c: the places left in each capacity reservation as one
 * solve's NodeClaims take them (Karpenter's ReservationManager). */
typedef struct reservations {
    kp_sym *ids;
    int32_t *left; /* per id: places no NodeClaim of this solve holds */
    uint32_t n;    /* 0: no reserved offering carries a count; nothing is tracked */
    kp_sym key;    /* the reservation-id label */
} reservations;
void reservations_build(solver *s, reservations *r);
/* Whether `of` may still be planned onto: not reserved, or its reservation
 * has a place left and the requirements allow its id. */
bool reservation_open(const solver *s, const reservations *r, const kp_requirements *reqs,
                      const kp_soffering *of);
/* A claim launching reserved holds a place in the cheapest reservation it
 * could use, is pinned to its id and priced at its offering; false when
 * none has a place left. */
bool reservations_take(solver *s, reservations *r, kp_plan_claim *pc);

#endif
