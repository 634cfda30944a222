/*
 * String interning: an open-addressing hash table (linear probing, 64-bit
 * FNV-1a folded to 32 bits) of symbol ids over a dense array of entries. The
 * strings live in an arena the table owns. Each entry caches what the
 * requirement checks ask for most: the integer value (Go's strconv.Atoi
 * rules) and whether the string is a well-known label key.
 */
#include "api/symtab.h"

#include "api/wellknown.h"
#include "base/arena.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    SYM_FLAG_INT = 1 << 0,
    SYM_FLAG_WELL_KNOWN = 1 << 1,
    INITIAL_SLOTS = 256, /* a power of two */
};

struct sym_entry {
    const char *str;
    uint32_t len;
    uint32_t hash;
    int64_t ival;
    uint32_t flags;
};

struct kp_symtab {
    struct sym_entry *entries; /* indexed by symbol; entries[0] is KP_SYM_NONE */
    size_t n_entries;          /* including entries[0] */
    size_t cap_entries;
    uint32_t *slots; /* symbol ids, 0 = empty */
    size_t mask;     /* slot count - 1 */
    kp_arena *strings;
};

/* The fixed symbols, in enum kp_sym_fixed order (from KP_SYM_NODEPOOL). */
static const char *const fixed_symbols[] = {
    KP_LABEL_NODEPOOL, KP_LABEL_ZONE,         KP_LABEL_REGION,        KP_LABEL_INSTANCE_TYPE,
    KP_LABEL_ARCH,     KP_LABEL_OS,           KP_LABEL_CAPACITY_TYPE, KP_LABEL_HOSTNAME,
    KP_CAPACITY_SPOT,  KP_CAPACITY_ON_DEMAND, KP_CAPACITY_RESERVED,
};

_Static_assert(sizeof(fixed_symbols) / sizeof(fixed_symbols[0]) == KP_SYM_FIXED_COUNT - 1,
               "every fixed symbol needs its string");

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= UINT64_C(0x100000001b3);
    }
    return (uint32_t)(h ^ (h >> 32));
}

bool kp_sym_parse_int(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (!s || len == 0) return false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len) return false;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (limit - d) / 10) return false;
        v = v * 10 + d;
    }
    if (out) *out = neg ? (v == limit ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return true;
}

/* The slot holding `s`, or the empty slot where it would go. */
static size_t find_slot(const kp_symtab *symtab, const char *s, size_t len, uint32_t hash)
{
    size_t i = hash & symtab->mask;
    for (;;) {
        uint32_t sym = symtab->slots[i];
        if (sym == 0) return i;
        const struct sym_entry *e = &symtab->entries[sym];
        if (e->hash == hash && e->len == len && memcmp(e->str, s, len) == 0) return i;
        i = (i + 1) & symtab->mask;
    }
}

static void grow_slots(kp_symtab *symtab)
{
    size_t n = (symtab->mask + 1) * 2;
    uint32_t *slots = kp_xcalloc(n, sizeof(uint32_t));
    for (size_t sym = 1; sym < symtab->n_entries; sym++) {
        size_t i = symtab->entries[sym].hash & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = (uint32_t)sym;
    }
    free(symtab->slots);
    symtab->slots = slots;
    symtab->mask = n - 1;
}

kp_symtab *kp_symtab_new(void)
{
    kp_symtab *symtab = kp_xcalloc(1, sizeof(*symtab));
    symtab->strings = kp_arena_new();
    symtab->slots = kp_xcalloc(INITIAL_SLOTS, sizeof(uint32_t));
    symtab->mask = INITIAL_SLOTS - 1;
    symtab->cap_entries = INITIAL_SLOTS / 2;
    symtab->entries = kp_xcalloc(symtab->cap_entries, sizeof(struct sym_entry));
    symtab->entries[0].str = "";
    symtab->n_entries = 1;
    for (size_t i = 0; i < sizeof(fixed_symbols) / sizeof(fixed_symbols[0]); i++)
        kp_sym_intern(symtab, fixed_symbols[i]);
    return symtab;
}

kp_symtab *kp_symtab_free(kp_symtab *symtab)
{
    if (!symtab) return NULL;
    kp_arena_free(symtab->strings);
    free(symtab->slots);
    free(symtab->entries);
    free(symtab);
    return NULL;
}

static kp_sym add_entry(kp_symtab *symtab, size_t slot, const char *s, size_t len, uint32_t hash)
{
    if (symtab->n_entries > UINT32_MAX - 1 || len > UINT32_MAX) {
        fprintf(stderr, "fatal: symbol table overflow\n");
        abort();
    }
    symtab->entries = kp_xgrow(symtab->entries, &symtab->cap_entries, symtab->n_entries + 1,
                               sizeof(struct sym_entry));
    kp_sym sym = (kp_sym)symtab->n_entries++;
    struct sym_entry *e = &symtab->entries[sym];
    e->str = kp_arena_strndup(symtab->strings, s, len);
    e->len = (uint32_t)len;
    e->hash = hash;
    e->ival = 0;
    e->flags = 0;
    if (kp_sym_parse_int(e->str, len, &e->ival)) e->flags |= SYM_FLAG_INT;
    if (strlen(e->str) == len && kp_label_is_well_known(e->str)) e->flags |= SYM_FLAG_WELL_KNOWN;
    symtab->slots[slot] = sym;
    /* Keep the load at or under one half so probes stay short. */
    if ((symtab->n_entries - 1) * 2 > symtab->mask + 1) grow_slots(symtab);
    return sym;
}

kp_sym kp_sym_intern_n(kp_symtab *symtab, const char *s, size_t len)
{
    if (!symtab || (!s && len)) return KP_SYM_NONE;
    if (!s) s = "";
    uint32_t hash = hash_bytes(s, len);
    size_t slot = find_slot(symtab, s, len, hash);
    if (symtab->slots[slot]) return symtab->slots[slot];
    return add_entry(symtab, slot, s, len, hash);
}

kp_sym kp_sym_intern(kp_symtab *symtab, const char *s)
{
    if (!s) return KP_SYM_NONE;
    return kp_sym_intern_n(symtab, s, strlen(s));
}

kp_sym kp_sym_lookup(const kp_symtab *symtab, const char *s)
{
    if (!symtab || !s) return KP_SYM_NONE;
    size_t len = strlen(s);
    return symtab->slots[find_slot(symtab, s, len, hash_bytes(s, len))];
}

const char *kp_sym_str(const kp_symtab *symtab, kp_sym sym)
{
    if (!symtab || sym == KP_SYM_NONE || sym >= symtab->n_entries) return NULL;
    return symtab->entries[sym].str;
}

size_t kp_symtab_count(const kp_symtab *symtab)
{
    return symtab ? symtab->n_entries - 1 : 0;
}

bool kp_sym_int(const kp_symtab *symtab, kp_sym sym, int64_t *out)
{
    if (!symtab || sym >= symtab->n_entries) return false;
    const struct sym_entry *e = &symtab->entries[sym];
    if (!(e->flags & SYM_FLAG_INT)) return false;
    if (out) *out = e->ival;
    return true;
}

bool kp_sym_is_well_known(const kp_symtab *symtab, kp_sym sym)
{
    if (!symtab || sym >= symtab->n_entries) return false;
    return (symtab->entries[sym].flags & SYM_FLAG_WELL_KNOWN) != 0;
}

void kp_symtab_mark_well_known(kp_symtab *symtab, kp_sym sym)
{
    if (sym != KP_SYM_NONE && sym < symtab->n_entries)
        symtab->entries[sym].flags |= SYM_FLAG_WELL_KNOWN;
}
