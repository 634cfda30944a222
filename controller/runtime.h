/*
 * The assembled controller process, without main(): the Kubernetes clients,
 * the cloud provider, the informers and their indexes, the controllers, the
 * HTTP endpoints and the leader election. run.c drives it from flags; tests
 * drive it against a real API server.
 */
#ifndef KP_CONTROLLER_RUNTIME_H
#define KP_CONTROLLER_RUNTIME_H

#include "controller/ctrl.h"

#include <stdbool.h>

typedef struct kp_runtime kp_runtime;

/* Connect and build everything (nothing runs yet). */
int kp_runtime_new(const kp_ctrl_opts *opts, kp_runtime **out);
/* Start the informers and wait for them to sync (up to a minute), start the
 * HTTP endpoints, then lead: at once without leader election, else once the
 * lease is won (from its elector thread). `interrupted` (may be NULL) is
 * polled while waiting: when it says true, the start fails at once. */
int kp_runtime_start(kp_runtime *rt, bool (*interrupted)(void));
/* True once this replica lost the lease it held: the process should exit. */
bool kp_runtime_failed(kp_runtime *rt);
/* True while this replica runs the controllers. */
bool kp_runtime_leading(kp_runtime *rt);
kp_ctrl *kp_runtime_ctrl(kp_runtime *rt);
/* Stop everything in order and free. NULL-safe. */
kp_runtime *kp_runtime_free(kp_runtime *rt);

#endif
