/*
 * The webhook's side of Pod warnings (shared/webhook/pod_warning.h): the
 * NodePools come from an informer (one LIST, then a WATCH, of
 * nodepools.karpenter.sh, with the Pod's service account or --kubeconfig),
 * the instance types from --instance-types, and the checks run on two worker
 * threads within --pod-warning-budget. Until the informer has synced, and
 * whenever the API server cannot be reached, Pods get no warning: admission
 * never waits for the API server.
 */
#ifndef KP_WEBHOOK_POD_WARNINGS_H
#define KP_WEBHOOK_POD_WARNINGS_H

#include "kube/rest.h"
#include "metrics/metrics.h"
#include "webhook/handler.h"

#include <stdint.h>

typedef struct kp_pod_warnings kp_pod_warnings;

/* Start the watch and the workers. `kube` is borrowed (it must outlive the
 * result). KP_EINVALID for a catalog that cannot be opened. */
int kp_pod_warnings_start(kp_kube_client *kube, const char *instance_types, int64_t budget_ms, kp_metrics *metrics,
                          kp_pod_warnings **out);
/* What the server passes to the handler. */
const kp_webhook_advisor *kp_pod_warnings_advisor(kp_pod_warnings *w);
/* Stop the watch and the workers. NULL-safe. */
kp_pod_warnings *kp_pod_warnings_stop(kp_pod_warnings *w);

#endif
