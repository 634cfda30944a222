/*
 * JSON-lines logging in Karpenter's shape ({"level","time","logger","message",
 * fields...}) so existing log queries keep working. Library code logs at debug
 * at most; programs log once, with context. The level is the one piece of
 * process-wide mutable state the conventions allow.
 */
#ifndef KP_BASE_LOG_H
#define KP_BASE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum kp_log_level { KP_LOG_DEBUG = 0, KP_LOG_INFO, KP_LOG_WARN, KP_LOG_ERROR, KP_LOG_OFF };

void kp_log_set_level(enum kp_log_level level);
/* "debug", "info", "warn", "error", "off" in any case (Karpenter's LOG_LEVEL
 * takes "INFO"); returns -1 for anything else. */
int kp_log_level_parse(const char *name);
void kp_log_set_output(FILE *out);
/* Write every line to each of `outs` (at most KP_LOG_MAX_OUTPUTS, borrowed)
 * and report lines that could not be written to `errors` (NULL: stderr), as
 * Karpenter's LOG_OUTPUT_PATHS and LOG_ERROR_OUTPUT_PATHS. Call once at
 * start-up, before other threads log. */
#define KP_LOG_MAX_OUTPUTS 4
void kp_log_set_outputs(FILE *const *outs, size_t n, FILE *errors);
bool kp_log_enabled(enum kp_log_level level);

/* Write one line. The variadic part is key/value string pairs ending with NULL. */
void kp_log_write(enum kp_log_level level, const char *logger, const char *message, ...);

/* Check the level before evaluating the arguments (redis serverLog). */
#define KP_LOG(level, logger, message, ...)                                                        \
    do {                                                                                           \
        if (kp_log_enabled(level))                                                                 \
            kp_log_write((level), (logger), (message), ##__VA_ARGS__, (const char *)0);             \
    } while (0)

#endif
