/*
 * The set of controllers `run` starts when it leads: the provisioner, the
 * NodeClaim lifecycle, node termination, NodePool upkeep, disruption and
 * garbage collection. Creating the set wires their work queues and handlers
 * into the informers (which must not have started yet); starting it starts
 * their threads. Keys queue up while a replica waits for the lease and are
 * worked off once it leads.
 */
#ifndef KP_CONTROLLER_CONTROLLERS_H
#define KP_CONTROLLER_CONTROLLERS_H

#include "controller/ctrl.h"

typedef struct kp_controllers kp_controllers;

kp_controllers *kp_controllers_new(kp_ctrl *c);
int kp_controllers_start(kp_controllers *cs);
/* Stop every thread (work in progress finishes). */
void kp_controllers_stop(kp_controllers *cs);
kp_controllers *kp_controllers_free(kp_controllers *cs);

#endif
