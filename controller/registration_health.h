/*
 * NodePool registration health, Karpenter's NodeRegistrationHealthy: the
 * last four launch/registration outcomes of each NodePool (by UID) are
 * kept; when at least half of them failed the pool is unhealthy and its
 * condition goes False (with the failed launch's reason, or
 * RegistrationFailed), a success that makes it healthy sets it True, and a
 * change to the NodePool or its node class resets it to Unknown. The
 * condition tells users that a misconfiguration (AMI, subnet, user data,
 * IAM) keeps nodes from joining; it does not stop provisioning.
 */
#ifndef KP_CONTROLLER_REGISTRATION_HEALTH_H
#define KP_CONTROLLER_REGISTRATION_HEALTH_H

#include "controller/ctrl.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

#define KP_REGHEALTH_WINDOW 4

enum kp_reghealth {
    KP_REGHEALTH_UNKNOWN, /* nothing recorded since the last reset */
    KP_REGHEALTH_HEALTHY,
    KP_REGHEALTH_UNHEALTHY,
};

/* The pool's status now, and what it would be after one more outcome. */
enum kp_reghealth kp_reghealth_status(kp_ctrl *c, const char *pool_uid);
enum kp_reghealth kp_reghealth_dry_run(kp_ctrl *c, const char *pool_uid, bool success);
void kp_reghealth_update(kp_ctrl *c, const char *pool_uid, bool success);
/* Replace the history with one that has `status` (UNKNOWN: empty). */
void kp_reghealth_set(kp_ctrl *c, const char *pool_uid, enum kp_reghealth status);
/* Free the state (kp_ctrl teardown). */
void kp_reghealth_clear(kp_ctrl *c);

/* A claim of this provider launched and registered (success) or timed out
 * launching or registering: record it for the NodePool that owns it and
 * write the pool's condition when the outcome changes it. */
int kp_reghealth_record(kp_ctrl *c, const cJSON *claim, bool success, int64_t now);

/* For the NodePool reconciler, on its desired object `want`: take the
 * condition as the history after a restart, reset it to Unknown when the
 * pool's generation or its node class's generation moved, and keep
 * status.nodeClassObservedGeneration. `node_class` may be NULL (kwok). */
void kp_reghealth_reconcile_pool(kp_ctrl *c, cJSON *want, const cJSON *node_class, int64_t now);

#endif
