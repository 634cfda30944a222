/* Pod warnings in the webhook: the NodePools' informer and the warner (see pod_warnings.h). */
#include "pod_warnings.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/instance_types.h"
#include "kube/informer.h"
#include "webhook/pod_warning.h"

#include <stdlib.h>

struct kp_pod_warnings {
    kp_informer *pools;
    kp_catalog *catalog;
    kp_pod_warner *warner;
    kp_webhook_advisor advisor;
};

static bool pools_ready(void *ctx)
{
    return kp_informer_synced(ctx);
}

typedef struct visit_adapter {
    kp_pod_warning_visit visit;
    void *vctx;
} visit_adapter;

static void visit_cached(void *ctx, const char *key, const cJSON *obj)
{
    visit_adapter *a = ctx;
    (void)key;
    a->visit(a->vctx, obj);
}

static void pools_foreach(void *ctx, kp_pod_warning_visit visit, void *vctx)
{
    visit_adapter a = {visit, vctx};
    kp_informer_foreach(ctx, visit_cached, &a);
}

static int register_results(kp_metrics *metrics, kp_metric **out)
{
    static const char *const labels[] = {"result"};
    *out = NULL;
    if (!metrics)
        return 0;
    return kp_metrics_counter(out, metrics, "karpenter_webhook_pod_warnings_total",
                              "Pods checked on creation for a NodePool that can run them, by result ("
                              KP_POD_WARNING_RESULTS ").",
                              labels, 1);
}

static const char *advise(void *ctx, const cJSON *pod, const char *ns, kp_arena *arena)
{
    return kp_pod_warner_warn(ctx, pod, ns, arena);
}

int kp_pod_warnings_start(kp_kube_client *kube, const char *instance_types, int64_t budget_ms, kp_metrics *metrics,
                          kp_pod_warnings **out)
{
    kp_pod_warnings *w = kp_xcalloc(1, sizeof(*w));
    int err = kp_catalog_open(instance_types, &w->catalog);
    if (err < 0)
        err = kp_error_wrap(err, "--instance-types %s", instance_types);
    if (err == 0) {
        w->pools = kp_informer_new(kube, KP_RES_NODEPOOL, NULL);
        kp_pod_warner_opts o = KP_POD_WARNER_OPTS_INIT;
        o.source = (kp_pod_warning_source){pools_ready, pools_foreach, w->pools, w->catalog};
        o.budget_ms = budget_ms;
        err = register_results(metrics, &o.results);
        if (err == 0)
            err = kp_pod_warner_new(&o, &w->warner);
    }
    if (err == 0)
        err = kp_informer_start(w->pools);
    if (err < 0) {
        kp_pod_warnings_stop(w);
        return err;
    }
    w->advisor = (kp_webhook_advisor){advise, w->warner};
    *out = w;
    return 0;
}

const kp_webhook_advisor *kp_pod_warnings_advisor(kp_pod_warnings *w)
{
    return w ? &w->advisor : NULL;
}

kp_pod_warnings *kp_pod_warnings_stop(kp_pod_warnings *w)
{
    if (!w)
        return NULL;
    w->warner = kp_pod_warner_free(w->warner); /* its workers read the informer: first */
    w->pools = kp_informer_free(w->pools);
    kp_catalog_free(w->catalog);
    free(w);
    return NULL;
}
