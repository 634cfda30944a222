/* Node and pod gauges from the caches (see state_metrics.h). */
#include "controller/state_metrics.h"
#include "api/quantity.h"
#include "controller/metrics_ctrl.h"
#include "controller/objutil.h"
#include "base/xalloc.h"
#include "kube/strmap.h"

#include <stdlib.h>

#include <string.h>

typedef struct pass {
    kp_ctrl *c;
    kp_strmap pools; /* node name -> its NodePool (strdup'd) */
} pass;

static void node_allocatable(void *ctx, const char *key, const cJSON *node)
{
    pass *p = ctx;
    kp_ctrl *c = p->c;
    const char *pool = kp_obj_label(node, "karpenter.sh/nodepool");
    if (!pool) return;
    free(kp_strmap_put(&p->pools, key, kp_xstrdup(pool)));
    const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "status"),
                                                          "allocatable");
    const cJSON *r;
    cJSON_ArrayForEach(r, alloc)
    {
        kp_quantity q;
        if (!cJSON_IsString(r) || kp_quantity_parse(r->valuestring, &q) < 0) continue;
        const char *labels[] = {key,
                                pool,
                                r->string,
                                kp_obj_label(node, "node.kubernetes.io/instance-type"),
                                kp_obj_label(node, "karpenter.sh/capacity-type"),
                                kp_obj_label(node, "topology.kubernetes.io/zone")};
        kp_ctrl_set(c->m->nodes_allocatable, labels, (double)kp_quantity_milli_value(q) / 1000.0);
    }
}

static void pod_state(void *ctx, const char *key, const cJSON *pod)
{
    (void)key;
    pass *p = ctx;
    const char *node = kp_obj_str(pod, "spec.nodeName");
    const char *phase = kp_obj_str(pod, "status.phase");
    const char *labels[] = {kp_obj_str(pod, "metadata.name"), kp_obj_str(pod, "metadata.namespace"), node,
                            node ? kp_strmap_get(&p->pools, node) : NULL,
                            kp_obj_str(pod, "metadata.deletionTimestamp") ? "Terminating" : phase};
    kp_ctrl_set(p->c->m->pods_state, labels, 1);
}

int kp_state_metrics_pass(kp_ctrl *c, void *state)
{
    (void)state;
    if (!c->m) return 0;
    pass p = {c, KP_STRMAP_INIT};
    kp_metric_reset(c->m->nodes_allocatable);
    kp_informer_foreach(c->informers[KP_CK_NODE], node_allocatable, &p);
    kp_metric_reset(c->m->pods_state);
    kp_informer_foreach(c->informers[KP_CK_POD], pod_state, &p);
    kp_strmap_clear(&p.pools, free);
    return 0;
}
