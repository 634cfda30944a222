/*
 * `karpenter-controller run`: connect to the cluster, fill the caches, serve
 * /metrics, /healthz and /readyz, win the leader election (unless it is
 * disabled), then run the controllers until SIGTERM or SIGINT. A replica
 * that loses its lease exits, so that its restart begins from fresh caches.
 */
#ifndef KP_CONTROLLER_RUN_H
#define KP_CONTROLLER_RUN_H

#include <stdio.h>

int kp_run_main(int argc, char **argv);
/* "PROGRAM VERSION (commit C, COMPILER, ARCH)" on `out` (--version). */
int kp_run_version(FILE *out, const char *program);

#endif
