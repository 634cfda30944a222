/*
 * `karpenter-controller run` options: flags with Karpenter's names, each with
 * the environment variable Karpenter's Helm chart sets as its fallback
 * (--batch-idle-duration or BATCH_IDLE_DURATION), so a Deployment written
 * for Karpenter configures this controller too. A flag wins over its
 * variable; a bad value names the flag or variable and what it expects.
 * Every setting Karpenter v1.14 documents (and every variable its Helm chart
 * sets) is either honoured, refused, or named in a start-up warning: none is
 * accepted and silently ignored.
 */
#ifndef KP_CONTROLLER_OPTIONS_H
#define KP_CONTROLLER_OPTIONS_H

#include "controller/ctrl.h"

#include <stdio.h>

/* Fill `o` from the environment (`getenv_fn` NULL: getenv) and then from
 * argv[1..] (argv[0] is "run"). KP_EINVALID with a message on a bad flag or
 * value; 1 when --help was asked for (usage printed to `help_out`). */
int kp_ctrl_opts_parse(kp_ctrl_opts *o, int argc, char **argv, const char *(*getenv_fn)(const char *),
                       FILE *help_out);

/* Check and resolve parsed options (kp_ctrl_opts_parse calls it): the
 * provider is required; values Karpenter accepts that this build cannot
 * honour and that would change decisions (a feature gate not implemented,
 * IGNORE_DRA_REQUESTS=false...) are refused with KP_EINVALID; settings that
 * have no effect with the chosen provider become warnings in o->warnings. */
int kp_ctrl_opts_check(kp_ctrl_opts *o);

#endif
