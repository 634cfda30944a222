/*
 * String interning for the scheduling hot path. Label keys and values become
 * dense 32-bit ids, so requirement checks compare integers instead of
 * strings. A symbol table lives as long as one cluster snapshot (or one
 * catalog); it owns its strings. Interning is not thread-safe; lookups are
 * (they never write).
 */
#ifndef KP_API_SYMTAB_H
#define KP_API_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t kp_sym; /* 0 means "no symbol" */
typedef struct kp_symtab kp_symtab;

/* Well-known label keys get fixed ids in every table, so code can switch on
 * them without a lookup. */
enum kp_sym_fixed {
    KP_SYM_NONE = 0,
    KP_SYM_NODEPOOL,      /* karpenter.sh/nodepool */
    KP_SYM_ZONE,          /* topology.kubernetes.io/zone */
    KP_SYM_REGION,        /* topology.kubernetes.io/region */
    KP_SYM_INSTANCE_TYPE, /* node.kubernetes.io/instance-type */
    KP_SYM_ARCH,          /* kubernetes.io/arch */
    KP_SYM_OS,            /* kubernetes.io/os */
    KP_SYM_CAPACITY_TYPE, /* karpenter.sh/capacity-type */
    KP_SYM_HOSTNAME,      /* kubernetes.io/hostname */
    KP_SYM_SPOT,          /* "spot" */
    KP_SYM_ON_DEMAND,     /* "on-demand" */
    KP_SYM_RESERVED,      /* "reserved" */
    KP_SYM_FIXED_COUNT
};

kp_symtab *kp_symtab_new(void);
kp_symtab *kp_symtab_free(kp_symtab *symtab); /* accepts NULL, returns NULL */

kp_sym kp_sym_intern(kp_symtab *symtab, const char *s);
kp_sym kp_sym_intern_n(kp_symtab *symtab, const char *s, size_t len);
/* KP_SYM_NONE when `s` was never interned. */
kp_sym kp_sym_lookup(const kp_symtab *symtab, const char *s);
/* The interned string (owned by the table); NULL for KP_SYM_NONE or an id the
 * table never handed out. */
const char *kp_sym_str(const kp_symtab *symtab, kp_sym sym);
/* Symbols interned so far, the fixed ones included. */
size_t kp_symtab_count(const kp_symtab *symtab);

/* The value as Go's strconv.Atoi would read it (optional sign, decimal digits,
 * int64 range); false when it is not an integer. Parsed once, at interning. */
bool kp_sym_int(const kp_symtab *symtab, kp_sym sym, int64_t *out);

/* The same rules on `len` bytes of `s`, without interning. */
bool kp_sym_parse_int(const char *s, size_t len, int64_t *out);

/* Karpenter's WellKnownLabels (see wellknown.h), flagged at interning. */
bool kp_sym_is_well_known(const kp_symtab *symtab, kp_sym sym);

/* Add a key to the well-known set of this table only: catalogs whose provider
 * defines more well-known labels (the synthetic catalog's "size", "special",
 * "integer") mark them in the snapshot's table. */
void kp_symtab_mark_well_known(kp_symtab *symtab, kp_sym sym);

#endif
