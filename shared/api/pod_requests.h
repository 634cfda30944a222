/*
 * A pod's effective resource requests: what the scheduler reserves for it
 * (Kubernetes' component-helpers resource.PodRequests, including sidecars
 * from KEP-753 and pod-level resources from KEP-2837). For each resource:
 *
 *   max( sum(regular containers) + sum(restartable init containers),
 *        max over each other init container i of
 *            (init_i + restartable init containers declared before i) )
 *   + overhead
 *
 * Each container's limits stand in for requests it does not state, as the
 * API server defaults them on create; pod-level requests (spec.resources)
 * replace the container sum for cpu, memory and hugepages-*, with pod-level
 * limits standing in where neither states a request.
 *
 * The decoder stores the result in kp_pod.requests; call these directly only
 * for pods built in code.
 */
#ifndef KP_API_POD_REQUESTS_H
#define KP_API_POD_REQUESTS_H

#include "api/objects.h"
#include "base/arena.h"

/* Effective requests of `pod` into *out (sorted, from `arena`). KP_EOVERFLOW
 * when a sum does not fit a quantity. */
int kp_pod_requests(kp_arena *arena, const kp_pod *pod, kp_resource_list *out);

/* One container's requests with its limits filling the gaps. */
int kp_container_requests(kp_arena *arena, const kp_container *container, kp_resource_list *out);

#endif
