/*
 * The requirements algebra: node-selector requirements as value sets that may
 * be complements, with Karpenter's semantics (kubernetes-sigs/karpenter
 * pkg/scheduling/requirement.go and requirements.go):
 *
 *   In [a b]        -> {a, b}
 *   NotIn [a b]     -> complement of {a, b}          (the key may be absent)
 *   Exists          -> complement of {}
 *   DoesNotExist    -> {}
 *   Gt N / Gte N    -> complement of {} with lower bound N+1 / N (integers only)
 *   Lt N / Lte N    -> complement of {} with upper bound N-1 / N
 *   minValues       -> the smallest number of distinct values a NodeClaim must keep
 *
 * Keys and values are interned symbols (symtab.h); value sets are sorted
 * symbol arrays. Checks (has, intersects, compatible) never allocate: the
 * solver calls them millions of times. Operations that build a result
 * allocate it from the caller's arena, and never modify their inputs, so value
 * arrays may be shared between requirements: a result (an intersection, a
 * copy) may point at an input's values, so inputs must outlive their results.
 */
#ifndef KP_API_REQUIREMENTS_H
#define KP_API_REQUIREMENTS_H

#include "api/symtab.h"
#include "base/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kp_selector_op {
    KP_OP_IN = 0,
    KP_OP_NOT_IN,
    KP_OP_EXISTS,
    KP_OP_DOES_NOT_EXIST,
    KP_OP_GT,
    KP_OP_LT,
    KP_OP_GTE, /* Karpenter's extension */
    KP_OP_LTE, /* Karpenter's extension */
};

/* How many operators there are. Label selectors admit the first
 * KP_OP_GT of them (In, NotIn, Exists, DoesNotExist), node selectors the
 * first KP_OP_GTE (and Gt, Lt), Karpenter's requirements all. */
enum { KP_SELECTOR_OP_COUNT = KP_OP_LTE + 1 };

/* "In", "NotIn", ... ; -1 for an unknown name. */
int kp_selector_op_parse(const char *name);
const char *kp_selector_op_name(enum kp_selector_op op);
/* Every operator's name in enum order, NULL-terminated. */
const char *const *kp_selector_op_names(void);

typedef struct kp_requirement {
    kp_sym key;
    bool complement;
    bool has_gte;
    bool has_lte;
    int32_t min_values; /* 0 = not set (valid minValues are >= 1) */
    int64_t gte;        /* inclusive lower bound when has_gte */
    int64_t lte;        /* inclusive upper bound when has_lte */
    uint32_t n_values;
    const kp_sym *values; /* sorted ascending, unique */
} kp_requirement;

/* A set of requirements, at most one per key, sorted by key. */
typedef struct kp_requirements {
    kp_requirement *items;
    uint32_t count;
    uint32_t cap;
} kp_requirements;

/* Build from a selector term. Keys are normalised (kp_label_normalize) first.
 * Gt/Lt/Gte/Lte need exactly one integer value; In needs at least one value;
 * Exists/DoesNotExist take none; min_values is 0 (unset) or positive:
 * otherwise KP_EINVALID with a message. NotIn with no values is Exists, as in
 * Karpenter. Gt INT64_MAX and Lt INT64_MIN admit nothing (DoesNotExist). */
int kp_requirement_new(kp_requirement *out, kp_symtab *symtab, kp_arena *arena, const char *key,
                       enum kp_selector_op op, const char *const *values, size_t n_values,
                       int32_t min_values);

/* The operator this requirement prints as: only In, NotIn, Exists or
 * DoesNotExist (Karpenter's Operator(); bounds are Exists, or NotIn, with
 * bounds). */
enum kp_selector_op kp_requirement_operator(const kp_requirement *req);

/* Does the requirement allow `value`? */
bool kp_requirement_has(const kp_symtab *symtab, const kp_requirement *req, kp_sym value);

/* Is there any value both allow? (Karpenter's HasIntersection; no allocation.) */
bool kp_requirement_intersects(const kp_symtab *symtab, const kp_requirement *a,
                               const kp_requirement *b);

/* a AND b, into *out (allocated from arena). */
void kp_requirement_intersect(kp_requirement *out, const kp_symtab *symtab, kp_arena *arena,
                              const kp_requirement *a, const kp_requirement *b);

/* The number of allowed values for a finite set; SIZE_MAX for complements. */
size_t kp_requirement_len(const kp_requirement *req);

/* Karpenter's String(): `key In [a b c d e and 3 others]`, `key Exists >=3`,
 * `key DoesNotExist`, with ` minValues N`. */
char *kp_requirement_string(const kp_symtab *symtab, kp_arena *arena, const kp_requirement *req);

/* --- sets of requirements --- */

void kp_requirements_init(kp_requirements *reqs);
/* Deep enough copy that adding to the copy leaves the source unchanged. */
void kp_requirements_copy(kp_requirements *dst, kp_arena *arena, const kp_requirements *src);

/* Add one requirement; if its key is present, the two are intersected. */
void kp_requirements_add(kp_requirements *reqs, const kp_symtab *symtab, kp_arena *arena,
                         const kp_requirement *req);
/* Add every requirement of `more`. */
void kp_requirements_add_all(kp_requirements *reqs, const kp_symtab *symtab, kp_arena *arena,
                             const kp_requirements *more);

/* NULL when the key is absent (which behaves as Exists). */
const kp_requirement *kp_requirements_get(const kp_requirements *reqs, kp_sym key);

/* label -> In [value] for each pair (Karpenter's NewLabelRequirements). */
void kp_requirements_add_label(kp_requirements *reqs, kp_symtab *symtab, kp_arena *arena,
                               const char *key, const char *value);

/* Why two sets failed to match, filled only on failure. */
typedef struct kp_requirements_conflict {
    kp_sym key;
    /* The key is not defined by the node side (and was not allowed as an
     * undefined well-known key). */
    bool undefined;
    const kp_requirement *node; /* NULL when undefined */
    const kp_requirement *pod;
} kp_requirements_conflict;

/* Karpenter's Intersects: every key both define must intersect, except that
 * two requirements both NotIn/DoesNotExist never conflict. */
bool kp_requirements_intersects(const kp_symtab *symtab, const kp_requirements *node,
                                const kp_requirements *pod, kp_requirements_conflict *conflict);

enum kp_compat_flags {
    KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN = 1 << 0,
};

/* Karpenter's Compatible: each key of `pod` must be defined by `node` unless
 * its operator is NotIn/DoesNotExist or (with the flag) it is well known;
 * then Intersects. */
bool kp_requirements_compatible(const kp_symtab *symtab, const kp_requirements *node,
                                const kp_requirements *pod, unsigned flags,
                                kp_requirements_conflict *conflict);

/* A message for a conflict: `label "foo" does not have known values (typo of
 * "bar"?)` or `key k, k In [a] not in k In [b]`. */
char *kp_requirements_conflict_string(const kp_symtab *symtab, kp_arena *arena,
                                      const kp_requirements *node,
                                      const kp_requirements_conflict *conflict);
/* The same, given the flags the failed check ran with: the "typo of" hint
 * looks at the well-known keys only when undefined ones were allowed. (The
 * variant above infers the flag: set unless the undefined key is well known.) */
char *kp_requirements_conflict_string_flags(const kp_symtab *symtab, kp_arena *arena,
                                            const kp_requirements *node,
                                            const kp_requirements_conflict *conflict,
                                            unsigned flags);

/* The value when the requirement is In with exactly one value, else KP_SYM_NONE. */
kp_sym kp_requirement_single_value(const kp_requirement *req);

/* Sorted, comma-separated Karpenter String() of the set. */
char *kp_requirements_string(const kp_symtab *symtab, kp_arena *arena, const kp_requirements *reqs);

#endif
