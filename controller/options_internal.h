/*
 * What the two halves of `run`'s option handling share: options.c reads
 * flags and variables into kp_ctrl_opts; options_check.c parses the feature
 * gates, then checks and resolves the result (refusing what cannot be
 * honoured, warning about what has no effect).
 */
#ifndef KP_CONTROLLER_OPTIONS_INTERNAL_H
#define KP_CONTROLLER_OPTIONS_INTERNAL_H

#include "controller/ctrl.h"

#include <stdbool.h>

/* strconv.ParseBool's spellings, and "" for a bare flag; -1 otherwise. */
int kp_ctrl_parse_bool(const char *v, bool *out);

/* FEATURE_GATES / AWS_FEATURE_GATES ("A=true,B=false"); `source` names the
 * flag or variable in errors and warnings. */
int kp_ctrl_parse_gates(kp_ctrl_opts *o, const char *v, const char *source);
int kp_ctrl_parse_aws_gates(kp_ctrl_opts *o, const char *v, const char *source);

/* Add a start-up warning (printf-style); silently dropped past the cap. */
void kp_ctrl_opts_warn(kp_ctrl_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
