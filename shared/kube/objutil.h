/*
 * Reading Kubernetes objects held as JSON (as the API server and the
 * informers give them): members by dotted path and status conditions, with
 * the rule for "condition is True" and "Node is Ready" in one place, for the
 * controllers and the kwok provider alike.
 */
#ifndef KP_KUBE_OBJUTIL_H
#define KP_KUBE_OBJUTIL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* The member at a dotted path ("status.conditions"), or NULL; "" is `obj`. */
const cJSON *kp_obj_get(const cJSON *obj, const char *path);
/* A string at a dotted path ("spec.providerID"), or NULL. */
const char *kp_obj_str(const cJSON *obj, const char *path);

/* The condition of `type` in status.conditions, or NULL. */
const cJSON *kp_obj_condition_get(const cJSON *obj, const char *type);
/* The status of condition `type` ("True", "False", "Unknown"), or NULL. */
const char *kp_obj_condition(const cJSON *obj, const char *type);
/* Whether condition `type` is there with status "True" (absent, "False",
 * "Unknown" or anything else is not). */
bool kp_obj_condition_is_true(const cJSON *obj, const char *type);
/* lastTransitionTime of condition `type` in ns, or 0. */
int64_t kp_obj_condition_since(const cJSON *obj, const char *type);

/* A Node whose Ready condition is True. */
bool kp_node_is_ready(const cJSON *node);

#endif
