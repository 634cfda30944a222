/*
 * CapacityBuffers on the cluster (Karpenter's capacitybuffer controller and
 * its provisioner's part, feature gate CapacityBuffer):
 *
 *   reconcile   per buffer: resolve its pod shape (its PodTemplate, or the
 *               template of the Deployment, StatefulSet or ReplicaSet its
 *               scalableRef names), work out the chunks, and write status
 *               (replicas, podTemplateRef and podTemplateGeneration,
 *               provisioningStrategy, ReadyForProvisioning); every 30 s and
 *               on every change; a ready buffer triggers the provisioner;
 *   the store   what ready buffers want, for every cluster view (view.c):
 *               their virtual pods join the pending pods, so provisioning
 *               launches room for them and disruption keeps it;
 *   record      after each provisioning batch, each buffer's Provisioning
 *               condition from where the plan put its virtual pods.
 *
 * The rules (chunks, virtual pods, conditions) are api/capacitybuffer.h's.
 */
#ifndef KP_CONTROLLER_CAPACITYBUFFER_CTRL_H
#define KP_CONTROLLER_CAPACITYBUFFER_CTRL_H

#include "api/objects.h"
#include "controller/ctrl.h"
#include "scheduling/solver.h"

typedef struct kp_buffers kp_buffers;

kp_buffers *kp_buffers_new(void);
kp_buffers *kp_buffers_free(kp_buffers *b);

/* kp_reconcile_fn for buffer "namespace/name"; `state` is the kp_buffers. */
int kp_buffer_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms);

/* A buffer was deleted: it wants nothing any more. */
void kp_buffers_forget(kp_buffers *b, const char *key);

/* The virtual pods of every ready buffer, in `arena` (at most
 * KP_BUFFERS_MAX_PODS in all: the rest are left out, and logged). */
#define KP_BUFFERS_MAX_PODS 100000
size_t kp_buffers_virtual_pods(kp_buffers *b, kp_arena *arena, const kp_pod ***out);

/* After a provisioning plan over `pods` (snapshot pod i is pods[i]; `plan`
 * NULL: nothing was planned): each cached buffer's Provisioning condition. */
void kp_buffers_record(kp_ctrl *c, const kp_pod *const *pods, const kp_plan *plan);

#endif
