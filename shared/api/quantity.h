/*
 * Kubernetes resource.Quantity: parsing with its exact grammar, exact integer
 * arithmetic on milli-units, comparison, and the canonical string Kubernetes
 * prints. Values are held as signed 64-bit milli-units, which covers ±9.2e15
 * whole units (8 PiB of memory, 9.2 billion cores); anything larger is
 * KP_EOVERFLOW rather than silently rounded. Precision finer than a milli-unit
 * rounds up to the next milli-unit, as Kubernetes does ("0.0001" is 1m).
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

typedef struct kp_quantity {
    int64_t milli;
    enum kp_quantity_format format;
} kp_quantity;

/* Longest canonical string plus NUL. */
enum { KP_QUANTITY_STRLEN = 32 };

/* Parse `text` (whole string, no surrounding spaces). Accepts exactly what
 * Kubernetes' ParseQuantity accepts, including the suffixes "n" and "u" and the
 * spellings it reads as zero ("+", "-", ".", "e3", "Ki"). On error returns
 * KP_EINVALID with a message naming the offending character's 0-based position
 * ("quantity \"12x\": unexpected character 'x' at position 2", or "unexpected
 * end of input at position 2" for "1e"), or KP_EOVERFLOW when the magnitude
 * exceeds 9223372036854775807m. A binary-suffixed value below 1 gets
 * KP_QUANTITY_DECIMAL_SI, as in Kubernetes. */
int kp_quantity_parse(const char *text, kp_quantity *out);

/* Constructors. kp_quantity_from_int saturates at the int64 milli-unit range
 * (|units| up to 9223372036854775); use kp_quantity_mul to detect overflow. */
kp_quantity kp_quantity_from_milli(int64_t milli, enum kp_quantity_format format);
kp_quantity kp_quantity_from_int(int64_t units, enum kp_quantity_format format);

/* Arithmetic; KP_EOVERFLOW on overflow with *out untouched. The result keeps
 * `a`'s format, except that a zero `a` takes `b`'s (Kubernetes' Add/Sub). */
int kp_quantity_add(kp_quantity a, kp_quantity b, kp_quantity *out);
int kp_quantity_sub(kp_quantity a, kp_quantity b, kp_quantity *out);
/* Multiply by an integer factor (e.g. per-node overhead x nodes). */
int kp_quantity_mul(kp_quantity a, int64_t factor, kp_quantity *out);

/* -1, 0, 1 */
int kp_quantity_cmp(kp_quantity a, kp_quantity b);
bool kp_quantity_is_zero(kp_quantity q);

/* Whole units, rounded up in magnitude (Kubernetes' Value(): 1.5 -> 2,
 * -1.5 -> -2), and milli-units (MilliValue()). */
int64_t kp_quantity_value(kp_quantity q);
int64_t kp_quantity_milli_value(kp_quantity q);

/* The canonical string Kubernetes' Quantity.String() prints for this value and
 * format, into buf of size >= KP_QUANTITY_STRLEN (shorter buffers truncate).
 * Returns buf. Kubernetes' String() echoes some parsed spellings verbatim
 * ("+5", "1.G"); this always prints the canonical form ("5", "1G"). */
char *kp_quantity_format(kp_quantity q, char *buf, size_t size);

#endif
