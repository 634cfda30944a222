/*
 * Text from the user quoted for an error message the way Go's time package
 * quotes it (Kubernetes' duration and quantity errors print it so): bytes
 * outside printable ASCII as \xNN, quote and backslash escaped, so any input
 * is safe in a message or a log line. Input past KP_QUOTE_MAX_INPUT bytes is
 * cut and marked "...", so the rest of the message stays readable.
 */
#ifndef KP_BASE_QUOTE_H
#define KP_BASE_QUOTE_H

#include <stddef.h>

enum { KP_QUOTE_MAX_INPUT = 128, KP_QUOTE_SIZE = KP_QUOTE_MAX_INPUT * 4 + 8 };

/* `len` bytes of `s`, quoted into `dst` (KP_QUOTE_SIZE fits any input). */
void kp_quote_go(char *dst, size_t size, const char *s, size_t len);

#endif
