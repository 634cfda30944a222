/*
 * Kubernetes resource.Quantity: parsing with its exact grammar, exact integer
 * arithmetic on milli-units, comparison, and the canonical string Kubernetes
 * prints. Kubernetes holds any magnitude (arbitrary precision, BinarySI
 * capped at 2^63-1 units); so do we, up to ±(2^127-1) milli-units (1.7e35
 * whole units) and saturating beyond, which no resource reaches. `milli` is
 * the value saturated to int64 milli-units (exact within ±9.2e15 whole units:
 * 8 PiB of memory, 9.2 billion cores), what resource vectors hold; `exact`
 * keeps the rest, so comparisons, sums and printing stay exact ("10000000Gi",
 * Karpenter's benchmark limit, is 1.07e19 milli-units). Precision finer than
 * a milli-unit rounds up to the next milli-unit, as Kubernetes does ("0.0001"
 * is 1m).
 */
#ifndef KP_API_QUANTITY_H
#define KP_API_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The suffix family a quantity was written in; it decides how it is printed. */
enum kp_quantity_format {
    KP_QUANTITY_DECIMAL_SI = 0, /* m, "", k, M, G, T, P, E */
    KP_QUANTITY_BINARY_SI,      /* Ki, Mi, Gi, Ti, Pi, Ei */
    KP_QUANTITY_DECIMAL_EXP,    /* e3, E-3 */
};

/* Milli-units in 128 bits (GCC and Clang's __int128). */
__extension__ typedef __int128 kp_milli128;

typedef struct kp_quantity {
    int64_t milli; /* saturated at INT64_MIN / INT64_MAX */
    enum kp_quantity_format format;
    kp_milli128 exact; /* the exact value when `milli` saturates (0 in a {milli, format} literal) */
} kp_quantity;

/* Longest canonical string plus NUL. */
enum { KP_QUANTITY_STRLEN = 48 };

/* Parse `text` (whole string, no surrounding spaces). Accepts exactly what
 * Kubernetes' ParseQuantity accepts, including the suffixes "n" and "u", the
 * spellings it reads as zero ("+", "-", ".", "e3", "Ki") and any magnitude
 * ("10000000Gi", "12E", "1e30"; BinarySI capped at 2^63-1 units, as there).
 * On error returns KP_EINVALID with a message naming the offending
 * character's 0-based position ("quantity \"12x\": unexpected character 'x'
 * at position 2", or "unexpected end of input at position 2" for "1e"). A
 * binary-suffixed value below 1 gets KP_QUANTITY_DECIMAL_SI, as in Kubernetes. */
int kp_quantity_parse(const char *text, kp_quantity *out);

/* Constructors (exact; `milli` saturates past the int64 range). */
kp_quantity kp_quantity_from_milli(int64_t milli, enum kp_quantity_format format);
kp_quantity kp_quantity_from_int(int64_t units, enum kp_quantity_format format);
kp_quantity kp_quantity_from_milli128(kp_milli128 milli, enum kp_quantity_format format);

/* The exact value in milli-units. */
kp_milli128 kp_quantity_milli128(kp_quantity q);

/* Arithmetic, exact; KP_EOVERFLOW past ±(2^127-1) milli-units with *out
 * untouched. The result keeps `a`'s format, except that a zero `a` takes
 * `b`'s (Kubernetes' Add/Sub). */
int kp_quantity_add(kp_quantity a, kp_quantity b, kp_quantity *out);
int kp_quantity_sub(kp_quantity a, kp_quantity b, kp_quantity *out);
/* Multiply by an integer factor (e.g. per-node overhead x nodes). */
int kp_quantity_mul(kp_quantity a, int64_t factor, kp_quantity *out);

/* -1, 0, 1 */
int kp_quantity_cmp(kp_quantity a, kp_quantity b);
bool kp_quantity_is_zero(kp_quantity q);

/* Whole units, rounded up in magnitude (Kubernetes' Value(): 1.5 -> 2,
 * -1.5 -> -2), and milli-units (MilliValue()), both saturated to int64. */
int64_t kp_quantity_value(kp_quantity q);
int64_t kp_quantity_milli_value(kp_quantity q);

/* The canonical string Kubernetes' Quantity.String() prints for this value and
 * format, into buf of size >= KP_QUANTITY_STRLEN (shorter buffers truncate).
 * Returns buf. Kubernetes' String() echoes some parsed spellings verbatim
 * ("+5", "1.G"); this always prints the canonical form ("5", "1G"). */
char *kp_quantity_format(kp_quantity q, char *buf, size_t size);

#endif
