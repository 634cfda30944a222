/*
 * Events, written in the background. A provisioning batch of a thousand pods
 * has a thousand "Nominated" events to write; doing that inline would put a
 * thousand API calls between the decision and the next NodeClaim. Events go
 * into a bounded queue instead and one thread writes them through its own
 * client and rate limit (client-go's event broadcaster does the same). When
 * the queue is full, new events are dropped and counted: an event is never
 * worth slowing capacity down.
 */
#ifndef KP_CONTROLLER_EVENTQ_H
#define KP_CONTROLLER_EVENTQ_H

#include "kube/events.h"
#include "kube/resources.h"
#include "kube/rest.h"

#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct kp_eventq kp_eventq;

/* `client` is borrowed (give it its own rate limit); `capacity` events at most wait. */
kp_eventq *kp_eventq_start(kp_kube_client *client, const char *component, size_t capacity);
/* Writes what is queued for at most 5 seconds (the rest is dropped and
 * counted), then stops. NULL-safe. */
kp_eventq *kp_eventq_stop(kp_eventq *q);

/* Queue an event about `obj` (only its apiVersion, kind and metadata are
 * kept). Never blocks. The same reason and message about the same object
 * (uid) again within 2 minutes is dropped, as Karpenter's recorder does. */
void kp_eventq_post(kp_eventq *q, enum kp_kube_res res, const cJSON *obj, const char *type, const char *reason,
                    const char *message);
/* The same with Karpenter's DedupeValues / DedupeTimeout spelled out: an
 * event with `dedupe_key` posted less than `window_ns` ago is dropped
 * (dedupe_key NULL or window 0: always posted). */
void kp_eventq_post_dedupe(kp_eventq *q, enum kp_kube_res res, const cJSON *obj, const char *type, const char *reason,
                           const char *message, const char *dedupe_key, int64_t window_ns);

/* Events dropped because the queue was full, and events written. */
size_t kp_eventq_dropped(kp_eventq *q);
size_t kp_eventq_written(kp_eventq *q);
/* Events not queued because the same was posted within its window. */
size_t kp_eventq_deduped(kp_eventq *q);
/* Dedupe keys remembered now: those whose window has passed are forgotten
 * as new keys come, so this follows the objects events are about. */
size_t kp_eventq_remembered(kp_eventq *q);

#endif
