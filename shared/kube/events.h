/*
 * Events (core/v1) about objects, as `kubectl describe` shows them: type
 * (Normal or Warning), reason, message. A recorder de-duplicates like
 * client-go's: the same event about the same object again bumps `count` and
 * `lastTimestamp` of the Event already written (a merge patch) instead of
 * writing a new one; when that Event has expired (the API server drops
 * Events after an hour) a new one is created.
 *
 * Events of cluster-scoped objects (Nodes, NodeClaims, NodePools) go to the
 * "default" namespace, as client-go records them. The recorder is
 * thread-safe; it borrows the client.
 */
#ifndef KP_KUBE_EVENTS_H
#define KP_KUBE_EVENTS_H

#include "base/clock.h"
#include "kube/resources.h"
#include "kube/rest.h"

#include <cjson/cJSON.h>

typedef struct kp_kube_recorder kp_kube_recorder;

/* `component` is the source ("karpenter"); `clock` NULL: the system clock. */
kp_kube_recorder *kp_kube_recorder_new(kp_kube_client *client, const char *component,
                                       const kp_clock *clock);
kp_kube_recorder *kp_kube_recorder_free(kp_kube_recorder *r);

#define KP_EVENT_NORMAL  "Normal"
#define KP_EVENT_WARNING "Warning"

/* Record an event about `obj` (of kind `res`: that gives the involved
 * object's kind and apiVersion, which list items lack). Messages longer than
 * 1024 bytes are cut. */
int kp_kube_record(kp_kube_recorder *r, enum kp_kube_res res, const cJSON *obj, const char *type,
                   const char *reason, const char *message);

#endif
